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
from django.db import connection
from django.urls import reverse
from pytest_django.asserts import assertContains, assertNotContains, assertTemplateUsed

from campaigns.models import Post
from rolls import services
from rolls.models import CampaignLog, LogHeadMismatch, RollEntry
from table.models import TableRoll
from tests.conftest import client_for
from tests.factories import CampaignFactory, client_seed, roll
from tests.rolls.test_db_roles import DEPLOY_DOC, _audit_ok, _execute, _refused, acting_as, app_role  # noqa: F401 - a fixture

PAGE_TITLE = "El registro de tiradas de esta partida no cuadra"
TRIGGER = "rolls_campaignlog_moves_forward"
REFUSAL = "rolls_campaignlog: the head of a campaign's roll log moves only to the entry appended after it"
needs_postgresql = pytest.mark.skipif(
    connection.vendor != "postgresql", reason="the head's trigger exists only on PostgreSQL (SQLite has no triggers)"
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
        reverse("rolls:roll-json", args=[first.permalink]),
        reverse("rolls:roll-badge", args=[first.permalink]),
        reverse("rolls:roll-log", args=[table.campaign.slug]),
    ):
        response = gm.get(url)
        _the_clear_page(response, table)
        assertTemplateUsed(response, "rolls/log_head_mismatch.html")
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


def test_htmx_requests_are_sent_to_the_page_that_explains(table):
    roll(table)
    corrupt_head(table.campaign, seq=0)
    log_url = reverse("rolls:roll-log", args=[table.campaign.slug])
    for response in (
        client_for(table.gm).get(table.scene.get_absolute_url(), headers={"HX-Request": "true"}),
        client_for(table.gm).get(log_url, headers={"HX-Request": "true"}),
        client_for(table.ana).post(
            reverse("table:post-create", args=[table.campaign.slug, table.scene.pk]),
            _post_form(table),
            headers={"HX-Request": "true"},
        ),
    ):
        # htmx swaps no error status: it loads the whole page instead, as a normal visit.
        assert response.status_code == 503
        assert response["HX-Redirect"] == log_url


def test_the_append_service_refuses_a_head_that_is_not_the_last_entry(table):
    roll(table)
    corrupt_head(table.campaign, seq=0)
    with pytest.raises(LogHeadMismatch) as excinfo:
        roll(table)
    assert excinfo.value.campaign == table.campaign
    assert RollEntry.objects.filter(campaign=table.campaign).count() == 2


def test_a_head_row_lost_while_its_entries_remain_is_refused_too(table):
    roll(table)
    if connection.vendor == "postgresql":
        _execute("SET CONSTRAINTS ALL IMMEDIATE")
        _execute("ALTER TABLE rolls_campaignlog DISABLE TRIGGER rolls_campaignlog_no_delete")
    CampaignLog.objects.filter(campaign=table.campaign).delete()
    with pytest.raises(LogHeadMismatch):
        roll(table)


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
