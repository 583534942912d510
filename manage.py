#!/usr/bin/env python
import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "hitos_site.settings")
    # manage.py is the development entry point: without DEBUG set it runs in
    # development mode (generated keys under var/). The WSGI and ASGI entry
    # points default to DEBUG=0; production sets DEBUG=0 for commands too.
    os.environ.setdefault("DEBUG", "1")
    from django.core.exceptions import ImproperlyConfigured
    from django.core.management import execute_from_command_line

    try:
        execute_from_command_line(sys.argv)
    except ImproperlyConfigured as exc:
        # A bad environment variable: one clear line, not a traceback.
        sys.exit(f"Configuration error: {exc}")


if __name__ == "__main__":
    main()
