"""The roll log's keys: from the environment or a file, generated only in development,
and a missing or malformed key stops start-up with one line naming the variable."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from cryptography.fernet import Fernet
from django.core.exceptions import ImproperlyConfigured

from rolls.keys import load_keys

ROOT = Path(__file__).resolve().parents[2]

SIGNING_KEY = "926dbd9be4fd765f70f300bbd4c8af5064df9a13c60e19ea7e3a44ed13ac1f2e"
SEED_KEY = "rb4THRWJnhBXzLZJG7R5At2Gg3oEb18o2LeA4UiNCyA="
PRODUCTION_ENV = {
    "DEBUG": "0",
    "SECRET_KEY": "x7Qv9-production-secret-key-for-the-deploy-check-0123456789abcdef",
    "ALLOWED_HOSTS": "hitos.example.org",
    "DATABASE_URL": "sqlite:////tmp/x.sqlite3",
    "EMAIL_HOST": "smtp.example.org",
    "ROLLOG_SIGNING_KEY": SIGNING_KEY,
    "ROLLOG_SEED_KEY": SEED_KEY,
}
SIGNING_MALFORMED = "ROLLOG_SIGNING_KEY must be the 32-byte Ed25519 private key seed as 64 hex digits."
SEED_MALFORMED = "ROLLOG_SEED_KEY must be a Fernet key (32 url-safe base64-encoded bytes)."


def _check(env: dict[str, str]) -> subprocess.CompletedProcess:
    clean = {
        k: v
        for k, v in os.environ.items()
        if k not in {"DEBUG", "SECRET_KEY", "DJANGO_SETTINGS_MODULE"} and not k.startswith("ROLLOG_")
    }
    clean.update(env, DJANGO_SETTINGS_MODULE="hitos_site.settings")
    return subprocess.run(
        [sys.executable, "manage.py", "check"], cwd=ROOT, env=clean, capture_output=True, text=True, timeout=120
    )


def test_start_up_succeeds_with_valid_roll_log_keys():
    result = _check(PRODUCTION_ENV)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "System check identified no issues (0 silenced)."


def test_a_missing_signing_key_stops_start_up_naming_the_variable():
    env = {k: v for k, v in PRODUCTION_ENV.items() if k != "ROLLOG_SIGNING_KEY"}
    result = _check(env)
    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr.strip() == (
        "Configuration error: ROLLOG_SIGNING_KEY (or ROLLOG_SIGNING_KEY_FILE) is required when DEBUG is off."
    )


def test_a_malformed_signing_key_stops_start_up_naming_the_variable():
    result = _check({**PRODUCTION_ENV, "ROLLOG_SIGNING_KEY": "not-a-key"})
    assert result.returncode == 1
    assert result.stderr.strip() == f"Configuration error: {SIGNING_MALFORMED}"


# In-process: the same rules, without starting a Python per case.


def test_keys_come_from_the_environment():
    keys = load_keys(dev_dir=None, environ={"ROLLOG_SIGNING_KEY": SIGNING_KEY.upper(), "ROLLOG_SEED_KEY": SEED_KEY})
    # Upper-case hex is read as the same key.
    assert keys.public_key_hex == "ff6cefe97f7b0d0d21859f32a016d7840b6b99cb82d4641d200bb70b960d3770"
    assert keys.fernet.decrypt(Fernet(SEED_KEY.encode()).encrypt(b"raiz")) == b"raiz"


def test_keys_come_from_files_named_by_the_file_variables(tmp_path):
    (tmp_path / "signing").write_text(SIGNING_KEY + "\n", encoding="utf-8")
    (tmp_path / "seed").write_text(SEED_KEY + "\n", encoding="utf-8")
    from_files = load_keys(
        dev_dir=None,
        environ={"ROLLOG_SIGNING_KEY_FILE": str(tmp_path / "signing"), "ROLLOG_SEED_KEY_FILE": str(tmp_path / "seed")},
    )
    direct = load_keys(dev_dir=None, environ={"ROLLOG_SIGNING_KEY": SIGNING_KEY, "ROLLOG_SEED_KEY": SEED_KEY})
    assert from_files.public_key_hex == direct.public_key_hex


@pytest.mark.parametrize(
    ("environ", "message"),
    [
        (
            {"ROLLOG_SEED_KEY": SEED_KEY},
            "ROLLOG_SIGNING_KEY (or ROLLOG_SIGNING_KEY_FILE) is required when DEBUG is off.",
        ),
        (
            {"ROLLOG_SIGNING_KEY": SIGNING_KEY},
            "ROLLOG_SEED_KEY (or ROLLOG_SEED_KEY_FILE) is required when DEBUG is off.",
        ),
        ({"ROLLOG_SIGNING_KEY": SIGNING_KEY[:-2], "ROLLOG_SEED_KEY": SEED_KEY}, SIGNING_MALFORMED),
        ({"ROLLOG_SIGNING_KEY": SIGNING_KEY + "00", "ROLLOG_SEED_KEY": SEED_KEY}, SIGNING_MALFORMED),
        ({"ROLLOG_SIGNING_KEY": "g" * 64, "ROLLOG_SEED_KEY": SEED_KEY}, SIGNING_MALFORMED),
        ({"ROLLOG_SIGNING_KEY": SIGNING_KEY, "ROLLOG_SEED_KEY": "corta"}, SEED_MALFORMED),
        ({"ROLLOG_SIGNING_KEY": SIGNING_KEY, "ROLLOG_SEED_KEY": "ñ" * 44}, SEED_MALFORMED),
        (
            {"ROLLOG_SIGNING_KEY_FILE": "/nonexistent/rollog", "ROLLOG_SEED_KEY": SEED_KEY},
            "ROLLOG_SIGNING_KEY_FILE names a file that cannot be read",
        ),
    ],
)
def test_a_missing_or_malformed_key_is_named(environ, message):
    with pytest.raises(ImproperlyConfigured) as excinfo:
        load_keys(dev_dir=None, environ=environ)
    assert str(excinfo.value).startswith(message)


def test_development_generates_the_keys_once_into_private_files(tmp_path):
    first = load_keys(dev_dir=tmp_path, environ={})
    again = load_keys(dev_dir=tmp_path, environ={})
    assert first.public_key_hex == again.public_key_hex
    token = first.fernet.encrypt(b"raiz")
    assert again.fernet.decrypt(token) == b"raiz"
    for name in ("rollog_signing_key.txt", "rollog_seed_key.txt"):
        assert (tmp_path / name).stat().st_mode & 0o777 == 0o600
    assert len((tmp_path / "rollog_signing_key.txt").read_text(encoding="utf-8")) == 64


def test_the_environment_wins_over_the_development_files(tmp_path):
    load_keys(dev_dir=tmp_path, environ={})
    keys = load_keys(dev_dir=tmp_path, environ={"ROLLOG_SIGNING_KEY": SIGNING_KEY, "ROLLOG_SEED_KEY": SEED_KEY})
    direct = load_keys(dev_dir=None, environ={"ROLLOG_SIGNING_KEY": SIGNING_KEY, "ROLLOG_SEED_KEY": SEED_KEY})
    assert keys.public_key_hex == direct.public_key_hex
