"""Small typed readers for settings taken from the environment.

Each raises ``ImproperlyConfigured`` naming the variable and the value it did
not understand, so that a bad deployment stops at start-up with one clear line
instead of running with a setting it misread (a string "False" is not true).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def env_str(name: str, default: str | None = None, *, environ: Mapping[str, str] | None = None) -> str:
    environ = os.environ if environ is None else environ
    value = environ.get(name)
    if value is None:
        if default is None:
            raise ImproperlyConfigured(f"{name} is required but not set.")
        return default
    return value


def env_bool(name: str, default: bool, *, environ: Mapping[str, str] | None = None) -> bool:
    environ = os.environ if environ is None else environ
    raw = environ.get(name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ImproperlyConfigured(f"{name} must be one of 1/0, true/false, yes/no, on/off; got {raw!r}.")


def env_int(
    name: str,
    default: int,
    *,
    minimum: int | None = None,
    environ: Mapping[str, str] | None = None,
) -> int:
    environ = os.environ if environ is None else environ
    raw = environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = int(raw.strip())
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be a whole number; got {raw!r}.") from None
    if minimum is not None and value < minimum:
        raise ImproperlyConfigured(f"{name} must be at least {minimum}; got {value}.")
    return value


def env_list(name: str, default: list[str], *, environ: Mapping[str, str] | None = None) -> list[str]:
    """A comma-separated list; blanks around items are ignored."""
    environ = os.environ if environ is None else environ
    raw = environ.get(name)
    if raw is None:
        return list(default)
    return [item.strip() for item in raw.split(",") if item.strip()]


def env_choice(name: str, default: str, choices: set[str], *, environ: Mapping[str, str] | None = None) -> str:
    value = env_str(name, default, environ=environ).strip()
    if value not in choices:
        raise ImproperlyConfigured(f"{name} must be one of {', '.join(sorted(choices))}; got {value!r}.")
    return value


def env_secret(
    name: str,
    *,
    dev_file: Path | None,
    generate,
    environ: Mapping[str, str] | None = None,
) -> str:
    """A secret from ``NAME``, or from the file named by ``NAME_FILE``.

    When neither is set and ``dev_file`` is given (development only), the
    secret is generated once with ``generate()`` into that untracked file and
    read back on later starts. With ``dev_file=None`` a missing secret is an
    error naming both variables.
    """
    environ = os.environ if environ is None else environ
    value = environ.get(name)
    if value:
        return value
    file_var = f"{name}_FILE"
    path = environ.get(file_var)
    if path:
        try:
            value = Path(path).read_text(encoding="utf-8").strip()
        except OSError as exc:
            raise ImproperlyConfigured(f"{file_var} names a file that cannot be read: {exc}.") from None
        if not value:
            raise ImproperlyConfigured(f"{file_var} names an empty file: {path}.")
        return value
    if dev_file is None:
        raise ImproperlyConfigured(f"{name} (or {file_var}) is required when DEBUG is off.")
    if not dev_file.exists():
        dev_file.parent.mkdir(parents=True, exist_ok=True)
        dev_file.write_text(generate(), encoding="utf-8")
        dev_file.chmod(0o600)
    return dev_file.read_text(encoding="utf-8").strip()
