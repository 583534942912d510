"""The log head the browser witness asks for (``rolls:log-head``, rollog/v1 §3.8)."""

from __future__ import annotations

import json

import pytest
from django.conf import settings
from django.urls import reverse

from campaigns import services
from campaigns.models import Visibility
from rolls.models import CampaignLog, RollEntry
from rolls.views import key_fingerprint
from tests.conftest import client_for, make_world
from tests.factories import CampaignFactory, roll

# Who asks                  public  private
MATRIX = """
anonymous                   200     404
outsider                    200     404
reader                      200     200
player                      200     200
gm                          200     200
"""
ROWS = [line.split() for line in MATRIX.strip().splitlines()]
CASES = [
    (who, visibility, int(code))
    for who, *codes in ROWS
    for visibility, code in zip((Visibility.PUBLIC, Visibility.PRIVATE), codes, strict=True)
]


def _head(world, user, *, method: str = "get"):
    client = client_for(user)
    return getattr(client, method)(reverse("rolls:log-head", args=[world.campaign.slug]))


def test_the_address():
    assert reverse("rolls:log-head", args=["la-mansion"]) == "/partidas/la-mansion/tiradas/cabeza.json"


@pytest.mark.django_db
@pytest.mark.parametrize(("who", "visibility", "status"), CASES)
def test_who_may_see_the_head_is_who_may_export_the_log(who, visibility, status):
    world = make_world(visibility)
    response = _head(world, world.user(who))
    assert response.status_code == status
    export = client_for(world.user(who)).get(reverse("rolls:log-export", args=[world.campaign.slug]))
    assert export.status_code == status


def test_the_matrix_covers_every_standing_twice():
    assert len(CASES) == 10


@pytest.mark.django_db
def test_the_head_is_the_last_entry_and_moves_with_every_roll():
    world = make_world(Visibility.PRIVATE)
    log = CampaignLog.objects.get(campaign=world.campaign)
    response = _head(world, world.player)
    assert response["Content-Type"] == "application/json"
    assert response["Cache-Control"] == "private, no-store"
    # The key the witness pins on first sight, and its fingerprint as the keys page shows it.
    key = settings.ROLLOG_KEYS.public_key_hex
    signer = {"public_key": key, "fingerprint": key_fingerprint(key)}
    assert json.loads(response.content) == {"campaign": log.log_id, "seq": 0, "head": log.head_hash, **signer}
    assert RollEntry.objects.get(campaign=world.campaign, seq=0).entry_hash == log.head_hash
    assert RollEntry.objects.get(campaign=world.campaign, seq=0).signed.entry["key"] == key

    entry = roll(world)
    document = json.loads(_head(world, world.player).content)
    assert document == {"campaign": log.log_id, "seq": entry.seq, "head": entry.entry_hash, **signer}
    assert entry.seq == 1


@pytest.mark.django_db
def test_a_campaign_whose_log_is_not_open_has_no_head_yet():
    campaign = CampaignFactory(visibility=Visibility.PUBLIC)
    response = client_for(None).get(reverse("rolls:log-head", args=[campaign.slug]))
    assert response.status_code == 200
    assert json.loads(response.content) == {
        "campaign": None,
        "seq": None,
        "head": None,
        "public_key": settings.ROLLOG_KEYS.public_key_hex,
        "fingerprint": key_fingerprint(settings.ROLLOG_KEYS.public_key_hex),
    }


@pytest.mark.django_db
def test_unknown_campaigns_and_writes_are_refused():
    world = make_world(Visibility.PUBLIC)
    assert client_for(world.gm).get(reverse("rolls:log-head", args=["no-existe"])).status_code == 404
    assert _head(world, world.gm, method="post").status_code == 405
    assert _head(world, world.gm, method="head").status_code == 200


@pytest.mark.django_db
@pytest.mark.parametrize(("who", "queries"), [("anonymous", 2), ("player", 5), ("gm", 4)])
def test_the_head_costs_a_fixed_few_queries(who, queries, django_assert_max_num_queries):
    world = make_world(Visibility.PRIVATE if who != "anonymous" else Visibility.PUBLIC)
    client = client_for(world.user(who))
    url = reverse("rolls:log-head", args=[world.campaign.slug])
    for _ in range(3):
        roll(world)
    # Session and user (signed in), the campaign with its GM, the membership
    # (members but the GM), the head row: however long the log.
    with django_assert_max_num_queries(queries):
        assert client.get(url).status_code == 200


# --- The witness element in base.html --------------------------------------------------------


def _witness_html(response) -> str:
    html = response.content.decode()
    start = html.find("data-rollog-witness")
    return "" if start < 0 else html[html.rfind("<div", 0, start) : html.find("</main>")]


@pytest.mark.django_db
@pytest.mark.parametrize("who", ["player", "reader", "gm"])
def test_a_members_campaign_pages_carry_the_witness_and_its_hidden_warning(who):
    world = make_world(Visibility.PRIVATE)
    slug = world.campaign.slug
    for url in (world.campaign.get_absolute_url(), reverse("table:scene-detail", args=[slug, world.scene.pk])):
        witness = _witness_html(client_for(world.user(who)).get(url))
        assert f'data-head-url="/partidas/{slug}/tiradas/cabeza.json"' in witness
        assert f'data-export-url="/partidas/{slug}/tiradas/registro.json"' in witness
        assert f'data-campaign="{slug}" data-campaign-id="{world.campaign.pk}"' in witness
        assert 'class="alert alert-danger" role="alert" data-witness-warning hidden' in witness
        # What a browser that cannot check Ed25519 says, hidden until it finds so.
        assert "data-witness-unsigned hidden>Este navegador no sabe comprobar las firmas Ed25519" in witness
        assert "{date}" in witness and "{seq}" in witness and "{head}" in witness
        assert f'href="/partidas/{slug}/tiradas/registro.json?desde=0" data-witness-export download' in witness


@pytest.mark.django_db
def test_anyone_reading_a_public_campaign_gets_the_witness():
    world = make_world(Visibility.PUBLIC)
    assert _witness_html(client_for(None).get(world.campaign.get_absolute_url()))
    assert _witness_html(client_for(world.outsider).get(world.campaign.get_absolute_url()))


@pytest.mark.django_db
def test_pages_without_a_readable_campaign_have_no_witness():
    world = make_world(Visibility.PRIVATE)
    assert _witness_html(client_for(world.player).get(reverse("home"))) == ""
    # An invitation shows the private campaign to somebody who may not read its log yet.
    invitation = services.invitation_create(campaign=world.campaign, actor=world.gm, role="player", days=7, max_uses=1)
    response = client_for(world.outsider).get(invitation.get_absolute_url())
    assert response.status_code == 200
    assert world.campaign.title in response.content.decode()
    assert _witness_html(response) == ""
