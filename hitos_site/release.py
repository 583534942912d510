"""The release's fingerprint: a short hash of the site's code, templates and
compiled translations.

Cached HTML outlives the processes that rendered it when the cache is shared
(Redis): without this, a page cached by the old release would be served by
the new one until it expired. The shared cache's keys carry the fingerprint,
so each release reads and writes its own (the old keys expire on their own).
``RELEASE`` in the environment names the release instead, when the
deployment has a name for it.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

SOURCES = ("accounts", "campaigns", "sheets", "rolls", "table", "systems", "demo", "hitos_site", "templates", "locale")
SUFFIXES = {".py", ".html", ".txt", ".mo"}


def fingerprint(base: Path) -> str:
    digest = hashlib.blake2b(digest_size=6)
    for folder in SOURCES:
        for path in sorted((base / folder).rglob("*")):
            if path.suffix in SUFFIXES and path.is_file():
                digest.update(path.relative_to(base).as_posix().encode())
                digest.update(path.read_bytes())
    return digest.hexdigest()
