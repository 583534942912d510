"""The test suite's settings: the development defaults, nothing else.

Tests run with ``DEBUG=1`` semantics at import time (a generated secret key
under var/, no HTTPS redirects) unless the environment says otherwise;
``DATABASE_URL`` still chooses the database. pytest-django then turns DEBUG
off while tests run, as it always does.
"""

import os

os.environ.setdefault("DEBUG", "1")

from hitos_site.settings import *  # noqa: E402, F403
