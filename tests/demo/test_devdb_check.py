"""``make run`` on a development database from before the migrations were
made again (issue 12): said plainly, and the old SQLite file put aside."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.db import connection

from demo.management.commands.devdb_check import stale_migrations

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.django_db
def test_a_current_database_has_no_stale_migrations():
    assert stale_migrations() == []


@pytest.mark.django_db
def test_an_applied_migration_no_longer_on_disk_is_found(monkeypatch):
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO django_migrations (app, name, applied) VALUES ('campaigns', '0005_table_play', CURRENT_TIMESTAMP)"
        )
    assert stale_migrations() == [("campaigns", "0005_table_play")]
    monkeypatch.setitem(connection.settings_dict, "ENGINE", "django.db.backends.postgresql")
    with pytest.raises(CommandError, match="Hay que crearla de nuevo"):
        call_command("devdb_check")


def _manage(var_dir: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "HITOS_VAR_DIR": str(var_dir), "DEBUG": "1"}
    env.pop("DATABASE_URL", None)
    env.pop("DJANGO_SETTINGS_MODULE", None)
    return subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True, check=True
    )


def test_an_old_sqlite_file_is_put_aside_and_a_fresh_one_made(tmp_path):
    # A database from before the migrations were made anew: what the check
    # reads of it is its migration table, which names one no longer on disk.
    database = tmp_path / "hitos.sqlite3"
    db = sqlite3.connect(database)
    try:
        with db:
            db.execute(
                "CREATE TABLE django_migrations (id integer NOT NULL PRIMARY KEY AUTOINCREMENT, "
                "app varchar(255) NOT NULL, name varchar(255) NOT NULL, applied datetime NOT NULL)"
            )
            db.execute(
                "INSERT INTO django_migrations (app, name, applied) VALUES ('rolls', '0006_sealed_entries', '2026-11-30')"
            )
    finally:
        db.close()
    told = _manage(tmp_path, "devdb_check").stdout
    assert "versión anterior del esquema" in told and "rolls.0006_sealed_entries" in told
    kept = list(tmp_path.glob("hitos-anterior-*.sqlite3"))
    assert len(kept) == 1 and not database.exists()
    _manage(tmp_path, "migrate", "--noinput")
    assert _manage(tmp_path, "devdb_check").stdout == ""
