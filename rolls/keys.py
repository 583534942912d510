"""The roll log's secrets: the Ed25519 signing key and the Fernet key that
encrypts each epoch's seed root. Both come from the environment (or a
``*_FILE``); in development they are generated once under ``var/``.

Settings call :func:`load_keys` at start-up, so a missing or malformed key
stops the site with a message naming the variable instead of signing with
something else.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from pathlib import Path

from cryptography.fernet import Fernet
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from django.core.exceptions import ImproperlyConfigured

from hitos_site.env import env_secret
from rolls.rollog import RollogError, load_signing_key, public_key_hex


@dataclass(frozen=True)
class RollKeys:
    signing_key: Ed25519PrivateKey
    fernet: Fernet

    @property
    def public_key_hex(self) -> str:
        return public_key_hex(self.signing_key.public_key())


def load_keys(*, dev_dir: Path | None, environ=None) -> RollKeys:
    signing_hex = env_secret(
        "ROLLOG_SIGNING_KEY",
        dev_file=dev_dir / "rollog_signing_key.txt" if dev_dir else None,
        generate=lambda: secrets.token_hex(32),
        environ=environ,
    )
    try:
        signing_key = load_signing_key(signing_hex)
    except RollogError:
        raise ImproperlyConfigured(
            "ROLLOG_SIGNING_KEY must be the 32-byte Ed25519 private key seed as 64 hex digits."
        ) from None
    fernet_key = env_secret(
        "ROLLOG_SEED_KEY",
        dev_file=dev_dir / "rollog_seed_key.txt" if dev_dir else None,
        generate=lambda: Fernet.generate_key().decode("ascii"),
        environ=environ,
    )
    try:
        fernet = Fernet(fernet_key.encode("ascii"))
    except (ValueError, UnicodeEncodeError):
        raise ImproperlyConfigured("ROLLOG_SEED_KEY must be a Fernet key (32 url-safe base64-encoded bytes).") from None
    return RollKeys(signing_key, fernet)
