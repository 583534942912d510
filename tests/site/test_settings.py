import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from hitos_site.env import env_bool, env_int, env_list, env_secret, env_str

ROOT = Path(__file__).resolve().parents[2]

PRODUCTION_ENV = {
    "DEBUG": "0",
    "SECRET_KEY": "x7Qv9-production-secret-key-for-the-deploy-check-0123456789abcdef",
    "ALLOWED_HOSTS": "hitos.example.org",
    "EMAIL_HOST": "smtp.example.org",
    "DATABASE_URL": "sqlite:////tmp/hitos-deploy-check.sqlite3",
    "ROLLOG_SIGNING_KEY": "00" * 32,
    "ROLLOG_SEED_KEY": "MDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDA=",
    "REDIS_URL": "redis://127.0.0.1:6379/15",
}


def _manage(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if k not in {"DEBUG", "SECRET_KEY", "DJANGO_SETTINGS_MODULE"}}
    clean.update(env)
    clean["DJANGO_SETTINGS_MODULE"] = "hitos_site.settings"
    return subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=clean, capture_output=True, text=True, timeout=120
    )


def test_check_deploy_is_clean_with_the_documented_production_variables():
    result = _manage("check", "--deploy", "--fail-level", "DEBUG", env=PRODUCTION_ENV)
    assert result.returncode == 0, result.stderr
    assert "System check identified no issues (0 silenced)." in result.stdout


def test_check_deploy_warns_that_a_per_process_cache_suits_one_process_only():
    env = {k: v for k, v in PRODUCTION_ENV.items() if k != "REDIS_URL"}
    result = _manage("check", "--deploy", env=env)
    assert result.returncode == 0, result.stderr
    assert "(campaigns.W001) The cache is per process (REDIS_URL is not set)." in result.stderr
    assert "gunicorn --workers 1 --threads 8" in result.stderr


@pytest.mark.parametrize(
    ("variable", "value", "message"),
    [
        ("DEBUG", "maybe", "DEBUG must be one of 1/0, true/false, yes/no, on/off; got 'maybe'."),
        ("CONN_MAX_AGE", "soon", "CONN_MAX_AGE must be a whole number; got 'soon'."),
        ("CONN_MAX_AGE", "-5", "CONN_MAX_AGE must be at least 0; got -5."),
        ("DATABASE_URL", "nosuchdb://x", "DATABASE_URL is not a database URL this site understands"),
        ("EMAIL_PORT", "veinticinco", "EMAIL_PORT must be a whole number; got 'veinticinco'."),
    ],
)
def test_bad_environment_values_stop_start_up_with_one_line(variable, value, message):
    env = {**PRODUCTION_ENV, variable: value}
    if variable == "EMAIL_PORT":
        env["EMAIL_HOST"] = "smtp.example.org"
    result = _manage("check", env=env)
    assert result.returncode == 1
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("Configuration error: ")
    assert message in lines[0]


def test_missing_secret_key_in_production_is_named():
    env = {k: v for k, v in PRODUCTION_ENV.items() if k != "SECRET_KEY"}
    result = _manage("check", env=env)
    assert result.returncode == 1
    assert (
        result.stderr.strip() == "Configuration error: SECRET_KEY (or SECRET_KEY_FILE) is required when DEBUG is off."
    )


def test_env_bool_reads_false_strings_as_false():
    assert env_bool("X", True, environ={"X": "False"}) is False
    assert env_bool("X", False, environ={"X": " yes "}) is True
    assert env_bool("X", True, environ={}) is True


def test_env_helpers_parse_and_default():
    assert env_int("N", 7, environ={}) == 7
    assert env_int("N", 7, environ={"N": " 42 "}) == 42
    assert env_list("H", ["a"], environ={"H": "a.example, b.example ,,"}) == ["a.example", "b.example"]
    assert env_str("S", "d", environ={}) == "d"
    with pytest.raises(ImproperlyConfigured, match="^S is required but not set.$"):
        env_str("S", environ={})


def test_secret_is_generated_once_in_development(tmp_path):
    dev_file = tmp_path / "var" / "key.txt"
    first = env_secret("K", dev_file=dev_file, generate=lambda: "generated-1", environ={})
    second = env_secret("K", dev_file=dev_file, generate=lambda: "generated-2", environ={})
    assert first == second == "generated-1"
    assert oct(dev_file.stat().st_mode & 0o777) == "0o600"


def test_secret_can_come_from_a_file(tmp_path):
    secret_file = tmp_path / "secret"
    secret_file.write_text("from-file\n")
    assert env_secret("K", dev_file=None, generate=str, environ={"K_FILE": str(secret_file)}) == "from-file"
    with pytest.raises(ImproperlyConfigured, match="K_FILE names a file that cannot be read"):
        env_secret("K", dev_file=None, generate=str, environ={"K_FILE": str(tmp_path / "missing")})


def test_the_server_entry_point_defaults_to_production_and_manage_py_to_development():
    clean = {k: v for k, v in os.environ.items() if k not in {"DEBUG", "SECRET_KEY", "DJANGO_SETTINGS_MODULE"}}
    server = subprocess.run(
        [sys.executable, "-c", "import hitos_site.wsgi"],
        cwd=ROOT,
        env=clean,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert server.returncode != 0
    assert "SECRET_KEY (or SECRET_KEY_FILE) is required when DEBUG is off." in server.stderr
    command = subprocess.run(
        [sys.executable, "manage.py", "check"], cwd=ROOT, env=clean, capture_output=True, text=True, timeout=120
    )
    assert command.returncode == 0, command.stderr
