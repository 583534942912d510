"""A campaign's log head (rolls.CampaignLog) only ever moves to the entry
appended after it (issue 29, item 4).

On PostgreSQL a trigger (rolls 0005) refuses any other change of a head row,
to every role, the site's own (docs/deploy.md) included. Wherever a roll of a
campaign is read or appended and its head still does not name its last entry
(changed with the trigger switched off, or on SQLite), the site answers a
clear Spanish page with status 503, never a 500, and writes nothing.
"""

from __future__ import annotations

import re

import pytest
from django.conf import settings
from django.db import DatabaseError, connection, transaction
from django.db.models import F
from django.urls import reverse
from pytest_django.asserts import assertContains, assertNotContains, assertTemplateUsed

from campaigns.models import Post
from rolls import audit, checkpoints, services, verify_roll
from rolls.models import CampaignLog, LogHeadMismatch, RollEntry
from table.models import TableRoll
from tests.conftest import client_for
from tests.factories import CampaignFactory, client_seed, roll
from tests.rolls.conftest import make_table
from tests.rolls.test_db_roles import DEPLOY_DOC, _audit_ok, _execute, _refused, acting_as, app_role  # noqa: F401 - a fixture

PAGE_TITLE = "El registro de tiradas de esta partida no cuadra"
TRIGGER = "rolls_campaignlog_moves_forward"
REFUSAL = "rolls_campaignlog: the head of a campaign's roll log moves only to the entry appended after it"
ENTRY_TRIGGER = "rolls_rollentry_behind_head"
ENTRY_REFUSAL = "rolls_rollentry: an entry is kept only when its campaign's log head names the last entry"
needs_postgresql = pytest.mark.skipif(
    connection.vendor != "postgresql",
    reason="rolls 0005 installs the head's triggers only on PostgreSQL (on SQLite none is installed)",
)


def corrupt_head(campaign, **fields) -> None:
    """Change the head row as an attacker with the owner's rights would: on
    PostgreSQL with the trigger switched off for this one statement (inside
    the test's transaction, when it has one), on SQLite directly."""
    if connection.vendor == "postgresql":
        # PostgreSQL alters no table with foreign-key checks still pending in the transaction.
        _execute("SET CONSTRAINTS ALL IMMEDIATE")
        _execute(f"ALTER TABLE rolls_campaignlog DISABLE TRIGGER {TRIGGER}")
    CampaignLog.objects.filter(campaign=campaign).update(**fields)
    if connection.vendor == "postgresql":
        _execute(f"ALTER TABLE rolls_campaignlog ENABLE TRIGGER {TRIGGER}")
        # Back to checking at the commit, as the site's transactions do (an append moves the head after its entry).
        _execute("SET CONSTRAINTS ALL DEFERRED")


def lose_head(campaign) -> None:
    """Delete the head row, its entries left (as the table's owner could with the trigger off)."""
    if connection.vendor == "postgresql":
        _execute("SET CONSTRAINTS ALL IMMEDIATE")
        _execute("ALTER TABLE rolls_campaignlog DISABLE TRIGGER rolls_campaignlog_no_delete")
    CampaignLog.objects.filter(campaign=campaign).delete()
    if connection.vendor == "postgresql":
        _execute("ALTER TABLE rolls_campaignlog ENABLE TRIGGER rolls_campaignlog_no_delete")
        _execute("SET CONSTRAINTS ALL DEFERRED")


def _post_form(table) -> dict[str, str]:
    return {
        "voice": f"character:{table.ines.pk}",
        "body": "Salto la tapia.",
        "recipients": "all",
        "submission_key": client_seed(),
        "tirada-0-characteristic": "reflejos",
        "tirada-0-purpose": "Saltar la tapia",
        "tirada-0-client_seed": client_seed(),
    }


def _the_clear_page(response, table) -> None:
    assert response.status_code == 503
    assertContains(response, PAGE_TITLE, status_code=503)
    # A roll's link reaches it without access to the campaign: it names none.
    assertNotContains(response, table.campaign.title, status_code=503)
    assertContains(response, "Avisa a quien administra este sitio", status_code=503)
    assert response["Cache-Control"] == "no-store"


CORRUPTIONS = {
    # Back to an earlier entry: the next roll would reuse its seq (a 500 before).
    "seq moved back": lambda entries: {"seq": entries[1].seq},
    # Past the last entry: the bundle's head entry does not exist (a 500 before).
    "seq moved forward": lambda entries: {"seq": entries[-1].seq + 5},
    # The right seq with another hash: the next roll would chain to nothing.
    "hash changed": lambda entries: {"head_hash": "0" * 64},
    # A slot used already: the next roll would collide with it (a 500 before).
    "next slot back": lambda entries: {"next_index": F("next_index") - 1},
    # A slot skipped: the next roll would silently leave a gap in its epoch.
    "next slot ahead": lambda entries: {"next_index": F("next_index") + 1},
    # A time in the future: every later roll would have to be later still.
    "time in 2099": lambda entries: {"head_time": "2099-01-01T00:00:00Z"},
}


@pytest.mark.parametrize("change", CORRUPTIONS.values(), ids=CORRUPTIONS.keys())
def test_a_corrupted_head_gets_the_clear_page_wherever_a_roll_is_read_or_appended(table, change):
    first = roll(table, post=table.post, purpose="Abrir el arcón")
    roll(table)
    entries = list(RollEntry.objects.filter(campaign=table.campaign).order_by("seq"))
    corrupt_head(table.campaign, **change(entries))
    gm = client_for(table.gm)
    for url in (
        table.scene.get_absolute_url(),
        first.get_absolute_url(),
        reverse("rolls:roll-log", args=[table.campaign.slug]),
        reverse("campaigns:campaign-export", args=[table.campaign.slug]),
    ):
        response = gm.get(url)
        _the_clear_page(response, table)
        assertTemplateUsed(response, "rolls/log_head_mismatch.html")
    _documents_say_so(gm, first)
    # Anonymous readers of the public campaign get it too.
    _the_clear_page(client_for(None).get(first.get_absolute_url()), table)
    # A post with a roll: refused whole, nothing written.
    posts = Post.objects.count()
    response = client_for(table.ana).post(
        reverse("table:post-create", args=[table.campaign.slug, table.scene.pk]), _post_form(table)
    )
    _the_clear_page(response, table)
    assertContains(response, "No se ha guardado nada de lo que acabas de enviar.", status_code=503)
    assert Post.objects.count() == posts and not TableRoll.objects.exists()
    assert list(RollEntry.objects.filter(campaign=table.campaign).order_by("seq")) == entries


def _documents_say_so(client, entry) -> None:
    """A roll's bundle and badge answer 503 as the documents they are, with
    the cross-origin headers of their normal answer (a script or a forum
    elsewhere reads them)."""
    bundle = client.get(reverse("rolls:roll-json", args=[entry.permalink]))
    assert bundle.status_code == 503 and bundle["Content-Type"] == "application/json; charset=utf-8"
    assert bundle["Access-Control-Allow-Origin"] == "*" and bundle["Cache-Control"] == "no-store"
    assert bundle.json()["error"] == "log_head_mismatch"
    assert "Avisa a quien administra este sitio" in bundle.json()["message"]
    badge = client.get(reverse("rolls:roll-badge", args=[entry.permalink]))
    assert badge.status_code == 503 and badge["Content-Type"] == "text/plain; charset=utf-8"
    assert badge["Cross-Origin-Resource-Policy"] == "cross-origin"
    assert "no cuadra" in badge.content.decode()


def _explained_in_place(response, *, sent: bool = False) -> None:
    """An htmx answer: the explanation, and the page it came from stays
    (no redirect); a form sent gets it at the top of the page, so that the
    form is not replaced, a region asking for its update in its place."""
    assert response.status_code == 200  # htmx swaps no error status
    if sent:
        assert response["HX-Retarget"] == "#contenido" and response["HX-Reswap"] == "afterbegin"
    else:
        assert "HX-Retarget" not in response and "HX-Reswap" not in response
    assert "HX-Redirect" not in response and "HX-Location" not in response and "HX-Refresh" not in response
    assertContains(response, PAGE_TITLE)
    assertContains(response, 'role="alert"')
    assertNotContains(response, "<html")


def test_htmx_requests_get_the_explanation_where_they_came_from(table):
    roll(table)
    corrupt_head(table.campaign, seq=0)
    log_url = reverse("rolls:roll-log", args=[table.campaign.slug])
    for response in (
        client_for(table.gm).get(table.scene.get_absolute_url(), headers={"HX-Request": "true"}),
        client_for(table.gm).get(log_url, headers={"HX-Request": "true"}),
    ):
        _explained_in_place(response)
    # A post with a roll: nothing written, and the form with what was typed stays on the page.
    posts = Post.objects.count()
    response = client_for(table.ana).post(
        reverse("table:post-create", args=[table.campaign.slug, table.scene.pk]),
        _post_form(table),
        headers={"HX-Request": "true"},
    )
    _explained_in_place(response, sent=True)
    assertContains(response, "lo que escribiste sigue en el formulario")
    assert Post.objects.count() == posts and not TableRoll.objects.exists()


def test_an_htmx_request_by_a_rolls_link_names_no_campaign(private_table):
    first = roll(private_table, user=private_table.gm, secret=True)
    corrupt_head(private_table.campaign, seq=0)
    response = client_for(None).get(first.get_absolute_url(), headers={"HX-Request": "true"})
    _explained_in_place(response)
    campaign = private_table.campaign
    answer = response.content.decode() + "".join(f"{name}: {value}\n" for name, value in response.items())
    assert campaign.slug not in answer and campaign.title not in answer


@pytest.mark.parametrize("change", CORRUPTIONS.values(), ids=CORRUPTIONS.keys())
def test_the_append_service_refuses_a_head_that_is_not_the_last_entry(table, change):
    roll(table)
    roll(table)
    entries = list(RollEntry.objects.filter(campaign=table.campaign).order_by("seq"))
    corrupt_head(table.campaign, **change(entries))
    with pytest.raises(LogHeadMismatch) as excinfo:
        roll(table)
    assert excinfo.value.campaign == table.campaign
    assert list(RollEntry.objects.filter(campaign=table.campaign).order_by("seq")) == entries


@pytest.mark.parametrize("change", CORRUPTIONS.values(), ids=CORRUPTIONS.keys())
def test_verify_rolls_reports_a_head_that_is_not_the_last_entry(table, change):
    roll(table)
    roll(table)
    entries = list(RollEntry.objects.filter(campaign=table.campaign).order_by("seq"))
    key = verify_roll.parse_public_key(settings.ROLLOG_KEYS.public_key_hex)
    assert audit.campaign_problems(table.campaign, key) == []
    corrupt_head(table.campaign, **change(entries))
    [problem] = audit.campaign_problems(table.campaign, key)
    assert problem.startswith("FAIL cabeza [head_mismatch]")


def test_the_witness_is_given_no_broken_head_to_keep(table):
    roll(table)
    head_url = reverse("rolls:log-head", args=[table.campaign.slug])
    kept = client_for(table.gm).get(head_url).json()
    assert kept["seq"] == 1
    assert checkpoints.log_heads([table.campaign.pk]) == {table.campaign.pk: (kept["seq"], kept["head"])}
    corrupt_head(table.campaign, head_time="2099-01-01T00:00:00Z")
    response = client_for(table.gm).get(head_url)
    assert response.status_code == 503 and response["Content-Type"] == "application/json; charset=utf-8"
    assert response.json()["error"] == "log_head_mismatch" and "head" not in response.json()
    # Nor the feeds and e-mails that name heads.
    assert checkpoints.log_heads([table.campaign.pk]) == {}
    lose_head(table.campaign)
    assert client_for(table.gm).get(head_url).status_code == 503


def test_a_campaign_with_no_log_yet_has_a_null_head_for_the_witness(db):
    campaign = CampaignFactory()
    response = client_for(campaign.gm).get(reverse("rolls:log-head", args=[campaign.slug]))
    assert response.status_code == 200 and response.json()["seq"] is None


def test_a_head_row_lost_while_its_entries_remain_is_refused_too(table):
    first = roll(table, post=table.post)
    lose_head(table.campaign)
    with pytest.raises(LogHeadMismatch):
        roll(table)
    gm = client_for(table.gm)
    for url in (first.get_absolute_url(), table.scene.get_absolute_url()):
        _the_clear_page(gm.get(url), table)
    _documents_say_so(gm, first)
    key = verify_roll.parse_public_key(settings.ROLLOG_KEYS.public_key_hex)
    [result] = [result for result in audit.audit(audit.audited_campaigns()) if result.campaign == table.campaign]
    assert result.problems == ["FAIL cabeza [head_mismatch]: no hay cabeza guardada."]
    assert audit.campaign_problems(table.campaign, key) == result.problems


def test_a_campaign_whose_head_is_intact_reads_and_rolls_as_before(table):
    first = roll(table, post=table.post)
    gm = client_for(table.gm)
    assert gm.get(first.get_absolute_url()).status_code == 200
    assert gm.get(table.scene.get_absolute_url()).status_code == 200
    assert gm.get(reverse("rolls:roll-log", args=[table.campaign.slug])).status_code == 200
    roll(table)
    log = CampaignLog.objects.get(campaign=table.campaign)
    assert log.seq == 2


# --- The trigger (PostgreSQL), as the site's own role --------------------------------------


@needs_postgresql
@pytest.mark.parametrize(
    "change",
    [
        "seq = seq - 1",
        "seq = 0",
        "seq = seq + 1",
        "head_hash = repeat('0', 64)",
        "head_time = '2099-01-01T00:00:00Z'",
        "next_index = next_index - 1",
        "next_index = next_index + 1",
        "epoch = epoch + 1",
        "log_id = 'otra'",
    ],
)
def test_the_sites_role_cannot_move_a_head_anywhere_but_to_its_next_entry(app_role, table, change):  # noqa: F811
    roll(table)
    roll(table)
    before = CampaignLog.objects.filter(campaign=table.campaign).values().get()
    with acting_as(app_role):
        _refused(
            f"UPDATE rolls_campaignlog SET {change} WHERE campaign_id = {table.campaign.pk}",
            REFUSAL,
        )
        # The role still appends afterwards.
        roll(table)
    assert CampaignLog.objects.get(campaign=table.campaign).seq == before["seq"] + 1
    _audit_ok(table)


@needs_postgresql
def test_a_temporary_table_cannot_stand_in_for_the_entries(app_role, table):  # noqa: F811
    # pg_temp comes first in a session's search_path: the trigger must read the real entries.
    roll(table)
    head = CampaignLog.objects.get(campaign=table.campaign)
    with acting_as(app_role):
        _execute(
            "CREATE TEMP TABLE rolls_rollentry"
            " (campaign_id bigint, seq bigint, entry_hash text, time text, kind text, epoch int, epoch_index int)"
        )
        _execute(
            "INSERT INTO pg_temp.rolls_rollentry VALUES (%s, %s, repeat('f', 64), %s, 'roll', %s, %s)",
            [table.campaign.pk, head.seq + 1, head.head_time, head.epoch, head.next_index],
        )
        _refused(
            "UPDATE rolls_campaignlog SET seq = seq + 1, head_hash = repeat('f', 64), next_index = next_index + 1"
            f" WHERE campaign_id = {table.campaign.pk}",
            REFUSAL,
        )
        _execute("DROP TABLE pg_temp.rolls_rollentry")
    assert CampaignLog.objects.get(campaign=table.campaign).seq == head.seq


@needs_postgresql
def test_docs_deploy_takes_temporary_tables_from_the_sites_role(app_role):  # noqa: F811
    blocks = re.findall(r"```sql\n(.*?)```", DEPLOY_DOC.read_text(encoding="utf-8"), flags=re.DOTALL)
    [revoke] = [block for block in blocks if "REVOKE TEMPORARY" in block]
    [(database,)] = _execute("SELECT current_database()")
    _execute(revoke.replace("ON DATABASE hitos", f"ON DATABASE {connection.ops.quote_name(database)}"))
    with acting_as(app_role):
        _refused("CREATE TEMP TABLE rolls_rollentry (seq bigint)", "permission denied to create temporary tables")


STRAY_ENTRY = """
INSERT INTO rolls_rollentry (campaign_id, seq, kind, entry_bytes, signature, audience, opening, entry_hash,
    permalink, epoch, epoch_index, client_seed, parent_id, user_id, character_id, scene_id, post_id, spec, purpose,
    dice, game, time, created_at)
SELECT campaign_id, 999999, kind, entry_bytes, signature, audience, opening, repeat('f', 64),
    'strayentrystrayentrystra', epoch, 999999, NULL, NULL, user_id, character_id, scene_id, post_id, spec, purpose,
    dice, game, time, created_at
FROM rolls_rollentry WHERE campaign_id = %s AND seq = 1
"""


@needs_postgresql
def test_the_sites_role_cannot_leave_an_entry_the_head_does_not_lead_to(app_role, table):  # noqa: F811
    roll(table)
    with acting_as(app_role):
        # Checked at the commit (SET CONSTRAINTS … IMMEDIATE stands for it inside the test's transaction).
        with pytest.raises(DatabaseError, match=ENTRY_REFUSAL), transaction.atomic():
            _execute(STRAY_ENTRY, [table.campaign.pk])
            _execute("SET CONSTRAINTS ALL IMMEDIATE")
        _execute("SET CONSTRAINTS ALL DEFERRED")
        roll(table)
        _execute("SET CONSTRAINTS ALL IMMEDIATE")
    assert client_for(table.gm).get(table.scene.get_absolute_url()).status_code == 200
    _audit_ok(table)


@needs_postgresql
def test_every_way_the_site_appends_commits_past_the_entries_check(app_role, monkeypatch):  # noqa: F811
    # Opening a log, rolls (a sealed one among them) and epochs rolling over
    # (re-rolls: test_db_roles): each inserts its entries before it moves the
    # head, in one transaction; at the commit the head names the last entry.
    monkeypatch.setattr(services, "EPOCH_LENGTH", 2)
    with acting_as(app_role):
        table = make_table()
        roll(table)
        roll(table, user=table.gm, secret=True)
        roll(table)
    _execute("SET CONSTRAINTS ALL IMMEDIATE")
    kinds = list(RollEntry.objects.filter(campaign=table.campaign).order_by("seq").values_list("kind", flat=True))
    assert kinds == ["epoch_open", "roll", "roll", "epoch_open", "roll"]
    assert RollEntry.objects.filter(campaign=table.campaign, audience="gm").exists()
    # Deferred to the commit: an append's entry comes before its head moves.
    assert _execute("SELECT tgdeferrable, tginitdeferred FROM pg_trigger WHERE tgname = %s", [ENTRY_TRIGGER]) == [
        (True, True)
    ]


@needs_postgresql
def test_the_trigger_refuses_the_tables_owner_too(table):
    roll(table)
    _refused(
        f"UPDATE rolls_campaignlog SET seq = 0 WHERE campaign_id = {table.campaign.pk}",
        REFUSAL,
    )
    assert CampaignLog.objects.get(campaign=table.campaign).seq == 1


@needs_postgresql
@pytest.mark.parametrize("seq", [0, 3])
def test_a_head_is_inserted_only_at_its_campaigns_last_entry(app_role, seq):  # noqa: F811
    # A campaign whose log never opened: no entry for a head to name.
    campaign = CampaignFactory()
    with acting_as(app_role):
        _refused(
            "INSERT INTO rolls_campaignlog (campaign_id, log_id, seq, head_hash, head_time, epoch, next_index)"
            f" VALUES ({campaign.pk}, 'falsa', {seq}, repeat('a', 64), '2031-03-14T18:00:00Z', 1, 1)",
            REFUSAL,
        )
        # Opened through the site, the log gets its head.
        services.log_open(campaign=campaign)
    assert CampaignLog.objects.get(campaign=campaign).seq == 0


@needs_postgresql
def test_the_repair_in_docs_deploy_puts_the_head_back_on_the_last_entry(table):
    first = roll(table, post=table.post)
    roll(table)
    intact = CampaignLog.objects.filter(campaign=table.campaign).values().get()
    corrupt_head(table.campaign, seq=0, head_hash="0" * 64, next_index=7)
    assert client_for(table.gm).get(first.get_absolute_url()).status_code == 503
    blocks = re.findall(r"```sql\n(.*?)```", DEPLOY_DOC.read_text(encoding="utf-8"), flags=re.DOTALL)
    [repair] = [block for block in blocks if f"DISABLE TRIGGER {TRIGGER}" in block]
    # The test's own transaction stands for the page's BEGIN … COMMIT.
    statements = [line for line in repair.splitlines() if line not in ("BEGIN;", "COMMIT;")]
    _execute("SET CONSTRAINTS ALL IMMEDIATE")
    _execute("\n".join(statements).replace("'SLUG'", "%s"), [table.campaign.slug])
    assert CampaignLog.objects.filter(campaign=table.campaign).values().get() == intact
    assert client_for(table.gm).get(first.get_absolute_url()).status_code == 200
    assert _execute("SELECT tgenabled FROM pg_trigger WHERE tgname = %s", [TRIGGER]) == [("O",)]


def test_outsiders_of_a_private_campaign_still_get_404_not_the_page(private_table):
    roll(private_table)
    corrupt_head(private_table.campaign, seq=0)
    outsider = client_for(private_table.outsider)
    for url in (private_table.scene.get_absolute_url(), reverse("rolls:roll-log", args=[private_table.campaign.slug])):
        assert outsider.get(url).status_code == 404
    assert client_for(private_table.reader).get(private_table.scene.get_absolute_url()).status_code == 503
