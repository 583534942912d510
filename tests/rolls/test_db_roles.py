"""The site's own database role can append to the roll log and cannot rewrite it.

docs/deploy.md («The two database roles») sets up an owner that migrates and
a role the site connects with. These tests run that page's grants for a
throw-away role, switch to it with SET ROLE inside the test transaction and
try what a compromised site could try. The triggers of rolls 0003
also refuse TRUNCATE, UPDATE and DELETE to the owner itself.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from django.db import DatabaseError, connection, transaction

from rolls import services, verify_log
from rolls.models import CampaignLog, RollEntry, SeedEpoch
from tests.conftest import World
from tests.factories import client_seed, plain_read, roll
from tests.rolls.conftest import make_table, public_key

pytestmark = pytest.mark.skipif(connection.vendor != "postgresql", reason="needs PostgreSQL roles and triggers")

DEPLOY_DOC = Path(__file__).resolve().parents[2] / "docs" / "deploy.md"
LOG_TABLES = ["rolls_rollentry", "rolls_seedepoch", "rolls_checkpoint", "rolls_campaignlog"]

# Every (table, operation) that a BEFORE trigger of the roll log refuses.
REFUSED_BY_TRIGGERS = """
SELECT c.relname, ops.op, t.tgenabled
FROM pg_trigger t
JOIN pg_class c ON c.oid = t.tgrelid
CROSS JOIN (VALUES (8, 'DELETE'), (16, 'UPDATE'), (32, 'TRUNCATE')) AS ops (bit, op)
WHERE NOT t.tgisinternal AND t.tgtype & 2 <> 0 AND t.tgtype & ops.bit <> 0
  AND t.tgfoid = 'rollog_refuse_change'::regproc
ORDER BY 1, 2
"""


def _execute(sql: str, params: list | None = None) -> list[tuple]:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall() if cursor.description else []


def _grants(*, app: str, owner: str) -> str:
    """The SQL that docs/deploy.md runs for the site's role, for ``app`` and ``owner``."""
    blocks = re.findall(r"```sql\n(.*?)```", DEPLOY_DOC.read_text(encoding="utf-8"), flags=re.DOTALL)
    [grants] = [block for block in blocks if "ALTER DEFAULT PRIVILEGES" in block]
    grants = re.sub(r"\bhitos_app\b", app, grants)
    return re.sub(r"\bhitos_owner\b", owner, grants)


def _transaction_failed() -> bool:
    from psycopg.pq import TransactionStatus

    return connection.connection.info.transaction_status == TransactionStatus.INERROR


@pytest.fixture
def app_role(db) -> Iterator[str]:
    """A role with the site's grants, unique to this run.

    Roles belong to the whole cluster, not to the test database, hence the
    unique name. CREATE ROLE is transactional: the test transaction's rollback
    removes the role even if the cleanup below cannot run.
    """
    quote = connection.ops.quote_name
    role = f"hitos_app_test_{uuid.uuid4().hex[:12]}"
    [(owner,)] = _execute("SELECT current_user")
    _execute(f"CREATE ROLE {quote(role)} NOLOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE")
    try:
        _execute(_grants(app=quote(role), owner=quote(owner)))
        yield role
    finally:
        if not _transaction_failed():
            _execute("RESET ROLE")
            _execute(f"DROP OWNED BY {quote(role)}")
            _execute(f"DROP ROLE {quote(role)}")


@contextmanager
def acting_as(role: str) -> Iterator[None]:
    _execute(f"SET ROLE {connection.ops.quote_name(role)}")
    try:
        yield
    finally:
        if not _transaction_failed():
            _execute("RESET ROLE")


def _refused(sql: str, message: str) -> None:
    """``sql`` fails with ``message``, in a savepoint so the test goes on."""
    # The site's transactions have committed, and so checked their deferred
    # foreign keys, before any later statement; PostgreSQL refuses to
    # TRUNCATE a table whose checks are still pending in this transaction.
    _execute("SET CONSTRAINTS ALL IMMEDIATE")
    with pytest.raises(DatabaseError, match=message), transaction.atomic():
        _execute(sql)
    # Back to checking at the commit, as the site's transactions do: an append
    # inserts its entry before it moves the head (rolls 0005).
    _execute("SET CONSTRAINTS ALL DEFERRED")


def _audit_ok(table: World) -> list[RollEntry]:
    entries = list(RollEntry.objects.filter(campaign=table.campaign).order_by("seq"))
    report = verify_log.audit_log([e.signed.ref() for e in entries], public_key())
    assert report.ok, report.problems
    return entries


# --- The owner: the triggers themselves -----------------------------------------------


# CASCADE: without it PostgreSQL refuses first because other tables refer to these.
@pytest.mark.parametrize("sql", [*(f"TRUNCATE {t} CASCADE" for t in LOG_TABLES), "TRUNCATE campaigns_campaign CASCADE"])
def test_truncating_the_log_is_refused_even_to_the_tables_owner(table, sql):
    roll(table)
    _refused(sql, r"^rolls_\w+ is append-only: TRUNCATE refused")
    assert RollEntry.objects.filter(campaign=table.campaign).count() == 2
    assert SeedEpoch.objects.filter(campaign=table.campaign).count() == 1
    assert CampaignLog.objects.filter(campaign=table.campaign).count() == 1


@pytest.mark.parametrize(
    ("sql", "message"),
    [
        ("UPDATE rolls_seedepoch SET anchor = repeat('0', 64)", "rolls_seedepoch is append-only: UPDATE refused"),
        ("DELETE FROM rolls_seedepoch", "rolls_seedepoch is append-only: DELETE refused"),
        ("DELETE FROM rolls_campaignlog", "rolls_campaignlog is append-only: DELETE refused"),
    ],
)
def test_seed_epochs_and_log_heads_refuse_the_owners_raw_changes(table, sql, message):
    anchor = SeedEpoch.objects.get(campaign=table.campaign).anchor
    _refused(sql, f"^{message}")
    assert SeedEpoch.objects.get(campaign=table.campaign).anchor == anchor
    assert CampaignLog.objects.filter(campaign=table.campaign).exists()


# --- The site's role ---------------------------------------------------------------------


def test_the_sites_role_opens_a_log_and_appends_rolls_rerolls_and_epochs(app_role, monkeypatch):
    # Epochs of two slots: using an epoch's last slot opens the next epoch (a
    # SeedEpoch insert and the head's epoch moving), as the site does every
    # 10 000 rolls.
    monkeypatch.setattr(services, "EPOCH_LENGTH", 2)
    with acting_as(app_role):
        assert _execute("SELECT current_user") == [(app_role,)]
        table = make_table()
        first = roll(table)
        roll(table)
        roll(table)
        services.reroll_append(
            parent=first,
            user=table.player,
            positions=[0],
            purpose="Otra vez",
            read=plain_read,
            client_seed=client_seed(),
        )
        # The checks made at the commit pass (rolls 0005: each append left the head on its last entry).
        _execute("SET CONSTRAINTS ALL IMMEDIATE")
        entries = _audit_ok(table)
    assert [e.kind for e in entries] == ["epoch_open", "roll", "roll", "epoch_open", "roll", "reroll", "epoch_open"]
    assert SeedEpoch.objects.filter(campaign=table.campaign).count() == 3
    assert CampaignLog.objects.get(campaign=table.campaign).seq == 6


@pytest.mark.parametrize(
    ("sql", "message"),
    [
        ("UPDATE rolls_rollentry SET purpose = 'amañada'", "permission denied for table rolls_rollentry"),
        ("DELETE FROM rolls_rollentry", "permission denied for table rolls_rollentry"),
        ("TRUNCATE rolls_rollentry", "permission denied for table rolls_rollentry"),
        ("UPDATE rolls_seedepoch SET length = 1", "permission denied for table rolls_seedepoch"),
        ("DELETE FROM rolls_seedepoch", "permission denied for table rolls_seedepoch"),
        ("TRUNCATE rolls_seedepoch", "permission denied for table rolls_seedepoch"),
        ("DELETE FROM rolls_campaignlog", "permission denied for table rolls_campaignlog"),
        ("TRUNCATE rolls_campaignlog", "permission denied for table rolls_campaignlog"),
        ("TRUNCATE campaigns_campaign CASCADE", "permission denied for table campaigns_campaign"),
        ("ALTER TABLE rolls_rollentry DISABLE TRIGGER ALL", "must be owner of table rolls_rollentry"),
        ("ALTER TABLE rolls_rollentry DISABLE TRIGGER USER", "must be owner of table rolls_rollentry"),
        (
            "ALTER TABLE rolls_rollentry DISABLE TRIGGER rolls_rollentry_append_only",
            "must be owner of table rolls_rollentry",
        ),
        (
            "ALTER TABLE rolls_rollentry DISABLE TRIGGER rolls_rollentry_no_truncate",
            "must be owner of table rolls_rollentry",
        ),
        ("DROP TRIGGER rolls_rollentry_append_only ON rolls_rollentry", "must be owner of relation rolls_rollentry"),
        ("DROP TRIGGER rolls_rollentry_no_truncate ON rolls_rollentry", "must be owner of relation rolls_rollentry"),
        ("DROP TRIGGER rolls_seedepoch_no_truncate ON rolls_seedepoch", "must be owner of relation rolls_seedepoch"),
        ("DROP FUNCTION rollog_refuse_change() CASCADE", "must be owner of function rollog_refuse_change"),
        ("ALTER TABLE rolls_rollentry OWNER TO CURRENT_USER", "must be owner of table rolls_rollentry"),
        # The switch that turns triggers off for a session is a superuser's.
        ("SET session_replication_role = replica", 'permission denied to set parameter "session_replication_role"'),
    ],
)
def test_the_sites_role_cannot_rewrite_the_log_or_switch_off_its_triggers(app_role, table, sql, message):
    roll(table)
    with acting_as(app_role):
        _refused(sql, message)
        # The transaction goes on, and the role still appends.
        roll(table)
    entries = _audit_ok(table)
    assert [e.purpose for e in entries] == ["", "Tirada", "Tirada"]
    assert _execute("SELECT tgenabled FROM pg_trigger WHERE tgname = 'rolls_rollentry_append_only'") == [("O",)]


def test_the_sites_role_is_neither_a_superuser_nor_a_member_of_the_owner(app_role):
    # A member of the owner could SET ROLE to it and switch the triggers off.
    [(owner,)] = _execute("SELECT current_user")
    assert _execute(
        "SELECT rolsuper, rolcreaterole, pg_has_role(%s, %s, 'MEMBER') FROM pg_roles WHERE rolname = %s",
        [app_role, owner, app_role],
    ) == [(False, False, False)]


def test_every_change_a_log_trigger_refuses_is_also_revoked_from_the_sites_role(app_role):
    # A table added to the log later (with its triggers) must be added to the
    # REVOKE lines of docs/deploy.md as well, or this test fails.
    refused = _execute(REFUSED_BY_TRIGGERS)
    assert {(t, op) for t, op, _ in refused} >= {
        (table, op) for table in LOG_TABLES for op in ("DELETE", "UPDATE", "TRUNCATE")
    } - {("rolls_campaignlog", "UPDATE")}
    assert {enabled for _, _, enabled in refused} == {"O"}
    allowed = [
        (table, op)
        for table, op, _ in refused
        if _execute("SELECT has_table_privilege(%s, %s, %s)", [app_role, table, op]) == [(True,)]
    ]
    assert allowed == []
    granted = [(table, op) for table in LOG_TABLES for op in ("SELECT", "INSERT")] + [("rolls_campaignlog", "UPDATE")]
    for table, op in granted:
        assert _execute("SELECT has_table_privilege(%s, %s, %s)", [app_role, table, op]) == [(True,)], (table, op)
