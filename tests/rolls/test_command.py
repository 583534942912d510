"""manage.py verify_rolls: re-verifies the stored logs and names every failing entry."""

import json
import logging
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.db import connection

from rolls import audit, services
from tests.factories import plain_read, roll
from tests.rolls.conftest import make_table


def _run(*args) -> str:
    out = StringIO()
    call_command("verify_rolls", *args, stdout=out, no_color=True)
    return out.getvalue()


@pytest.fixture
def tampering(db):
    """Raw SQL on a roll row, as a DB-level attacker would; PostgreSQL's trigger is lifted for it."""
    postgres = connection.vendor == "postgresql"

    def tamper(sql: str, params: list) -> None:
        with connection.cursor() as cursor:
            if postgres:
                # ALTER TABLE waits for no deferred foreign-key checks; run them now.
                cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
                cursor.execute("ALTER TABLE rolls_rollentry DISABLE TRIGGER rolls_rollentry_append_only")
            cursor.execute(sql, params)
            if postgres:
                cursor.execute("ALTER TABLE rolls_rollentry ENABLE TRIGGER rolls_rollentry_append_only")

    return tamper


def test_a_clean_log_verifies(table):
    original = roll(table)
    services.reroll_append(parent=original, user=table.player, positions=[0], purpose="Aspecto", read=plain_read)
    other = make_table()
    assert (
        _run()
        == f"OK  {table.campaign.slug}: 3 entradas verificadas\nOK  {other.campaign.slug}: 1 entradas verificadas\n"
    )
    assert _run("--campaign", other.campaign.slug) == f"OK  {other.campaign.slug}: 1 entradas verificadas\n"


def test_an_unknown_campaign_is_an_error(db):
    with pytest.raises(CommandError, match="^No hay ninguna partida con registro de tiradas y dirección «nada».$"):
        _run("--campaign", "nada")


def test_edited_bytes_are_named_by_seq_and_permalink(table, tampering):
    roll(table)
    victim = roll(table, purpose="Honrada")
    third = roll(table)
    tampering(
        "UPDATE rolls_rollentry SET entry_bytes = %s WHERE id = %s",
        [bytes(victim.entry_bytes).replace(b"Honrada", b"Amanada"), victim.pk],
    )
    out = StringIO()
    with pytest.raises(CommandError, match=r"^1 partida\(s\) con entradas que no superan la verificación.$"):
        call_command("verify_rolls", stdout=out, no_color=True)
    lines = out.getvalue().splitlines()
    # The forged entry fails its signature; the next one then points at bytes
    # the audit could not trust (its prev, its seed slot and its seen).
    assert lines == [
        f"MAL {table.campaign.slug}: 5 problemas en 4 entradas",
        f"    FAIL entrada #2 ({victim.permalink}) [bad_signature]: La firma no es válida con la clave pública fijada.",
        f"    FAIL entrada #3 ({third.permalink}) [prev_mismatch]: prev no es el hash de la entrada anterior.",
        f"    FAIL entrada #3 ({third.permalink}) [slot_out_of_order]: "
        "Usa la ranura 3; tocaba la 2 (ni saltos ni repeticiones).",
        f"    FAIL entrada #3 ({third.permalink}) [seen_invalid]: "
        "seen no nombra una entrada anterior posterior a la apertura de la época.",
        f"    FAIL entrada #2 ({victim.permalink}) [copy_mismatch]: "
        "las columnas copiadas no coinciden con los bytes firmados.",
    ]


def test_an_edited_copy_column_is_named_too(table, tampering):
    victim = roll(table)
    tampering("UPDATE rolls_rollentry SET dice = %s WHERE id = %s", [json.dumps([10, 10, 10]), victim.pk])
    out = StringIO()
    with pytest.raises(CommandError):
        call_command("verify_rolls", "--campaign", table.campaign.slug, stdout=out, no_color=True)
    assert out.getvalue().splitlines()[1:] == [
        f"    FAIL entrada #1 ({victim.permalink}) [copy_mismatch]: "
        "las columnas copiadas no coinciden con los bytes firmados."
    ]


def test_a_deleted_entry_leaves_a_gap_that_is_named(table, tampering):
    roll(table)
    gone = roll(table)
    after = roll(table)
    tampering("DELETE FROM rolls_rollentry WHERE id = %s", [gone.pk])
    out = StringIO()
    with pytest.raises(CommandError):
        call_command("verify_rolls", stdout=out, no_color=True)
    lines = out.getvalue().splitlines()
    assert f"    FAIL entrada #3 ({after.permalink}) [seq_gap]: Faltan entradas: seq 2." in lines
    assert (
        f"    FAIL entrada #3 ({after.permalink}) [prev_mismatch]: prev no es el hash de la entrada anterior." in lines
    )


def test_the_demo_rolls_verify_and_include_a_reroll_chain(table):
    from demo.table import rolls_demo_load
    from rolls.models import RollEntry
    from sheets.models import Character
    from systems.hitos.models import HitosSheet

    tomas = Character.objects.create(campaign=table.campaign, owner=table.other, name="Tomás", status="approved")
    HitosSheet.objects.create(character=tomas)
    args = {
        "campaign": table.campaign,
        "players": (table.player, table.other),
        "characters": (table.character, tomas),
        "scene": table.scene,
    }
    rolls_demo_load(**args)
    rolls_demo_load(**args)  # idempotent
    entries = RollEntry.objects.filter(campaign=table.campaign).rolls().order_by("seq")
    assert [(e.kind, e.entry["game"]["system"]) for e in entries] == [
        ("roll", "hitos"),
        ("reroll", "hitos"),
        ("roll", "hitos"),
        ("roll", "free"),
    ]
    assert entries[1].parent == entries[0]
    assert entries[1].entry["game"]["reading"] == "positive"
    assert _run("--campaign", table.campaign.slug) == f"OK  {table.campaign.slug}: 5 entradas verificadas\n"


# --- the nightly audit on the task worker -------------------------------------------------


def test_the_nightly_audit_is_quiet_on_clean_logs(table, mailoutbox):
    roll(table)
    assert audit.audit_logs.call() == 0
    assert mailoutbox == []


def test_the_nightly_audit_logs_and_mails_the_admins_a_tampered_log(table, tampering, settings, caplog, mailoutbox):
    settings.ADMINS = ["auditor@example.org"]
    roll(table)
    victim = roll(table, purpose="Honrada")
    tampering(
        "UPDATE rolls_rollentry SET entry_bytes = %s WHERE id = %s",
        [bytes(victim.entry_bytes).replace(b"Honrada", b"Trucada"), victim.pk],
    )
    with caplog.at_level(logging.ERROR, logger="rolls.audit"):
        assert audit.audit_logs.call() == 1
    assert f"Roll log audit: {table.campaign.slug} has" in caplog.text
    assert [m.to for m in mailoutbox] == [["auditor@example.org"]]
    assert f"#{victim.seq} ({victim.permalink})" in mailoutbox[0].body
