"""The Vaesen roll card everywhere a roll is read (issue 15, items 2 and 6):
in a post, on its permalink (the chain original → pushed), in the roll log,
its badge, its JSON and the log's export; built from the signed game alone
(V2, V3, V6, V7); and the scene page's queries with Vaesen cards pinned."""

from __future__ import annotations

import base64
import json

import pytest
from django.conf import settings
from django.urls import reverse
from pytest_django.asserts import assertContains

from campaigns.models import Post
from campaigns.permissions import campaign_access
from rolls.verify_roll import parse_public_key, verify_bundle
from rules import vaesen
from systems.vaesen.rolls import services
from table.cards import frame, log_cards
from tests.conftest import client_for
from tests.factories import client_seed, make_post, make_scene

pytestmark = pytest.mark.django_db

TRIES = 60


@pytest.fixture
def scene(vaesen_campaign):
    return make_scene(vaesen_campaign, title="La orilla")


def _roll(world, scene, *, want, attribute="precisión", skill="Sigilo", needed=1, post=None, free_pool=None):
    """A test in a post (Elsa's, or the GM's free pool), retried with new dice
    until ``want`` holds of its signed game."""
    for _ in range(TRIES):
        if free_pool is None:
            roll_post = post or make_post(scene, world.player, voice=Post.Voice.CHARACTER, character=world.pc)
            setup = services.pool_setup(world.pc, attribute=attribute, skill=skill, needed=needed)
            character, user = world.pc, world.player
        else:
            roll_post = post or make_post(scene, world.gm)
            setup = services.pool_setup(None, free_pool=free_pool, needed=needed)
            character, user = None, world.gm
        table_roll = services.table_test(
            campaign=world.campaign,
            user=user,
            setup=setup,
            purpose="Vadear el río",
            character=character,
            scene=scene,
            post=roll_post,
            client_seed=client_seed(),
        )
        if want(table_roll.first.signed_game):
            return table_roll
    raise AssertionError("no roll as wanted")


def test_a_success_with_extra_successes_says_so_in_words(vaesen_world, scene):
    """V2, V3 — each 6 a success; those beyond the needed one are extra successes."""
    table_roll = _roll(vaesen_world, scene, free_pool=20, want=lambda g: g["extra_successes"] >= 1)
    game = table_roll.first.signed_game
    extra = game["extra_successes"]
    html = client_for(vaesen_world.player).get(scene.get_absolute_url()).content.decode()
    assert f"{game['successes']} éxitos" in html and "(hace falta 1)" in html
    assert "text-bg-success" in html
    if extra == 1:
        assert "1 éxito mejorado: compra un efecto." in html
    else:
        assert f"{extra} éxitos mejorados: compran un efecto cada uno." in html


def test_a_failure_says_how_many_successes_were_missing(vaesen_world, scene):
    table_roll = _roll(vaesen_world, scene, needed=3, want=lambda g: g["successes"] == 0)
    html = client_for(vaesen_world.player).get(scene.get_absolute_url()).content.decode()
    assert "0 éxitos" in html and "(hacen falta 3)" in html
    assert "Faltan 3 éxitos." in html and "text-bg-danger" in html
    assert "Precisión 4, Sigilo +3" in html
    assert table_roll.first.signed_game["success"] is False


def test_the_card_reads_the_signed_game_only(vaesen_world, scene):
    """The card's body comes from the signed entry: the table roll's facts
    (which the table may change) play no part in what it says."""
    table_roll = _roll(vaesen_world, scene, needed=10, want=lambda g: True)
    table_roll.facts = {"kind": "físico", "success": True, "can_push": False}
    table_roll.save()
    html = client_for(vaesen_world.reader).get(scene.get_absolute_url()).content.decode()
    assert "text-bg-danger" in html and "(hacen falta 10)" in html


def test_the_permalink_shows_the_chain_original_to_pushed(vaesen_world, scene):
    """V6, V7 — the pushed version's page shows both versions and what the push cost."""
    world = vaesen_world
    table_roll = _roll(world, scene, needed=10, want=lambda g: g["successes"] < g["pool"])
    pushed = services.push(table_roll=table_roll, user=world.player, condition="Magullado")
    response = client_for(world.other).get(pushed.get_absolute_url())
    assertContains(response, "original:")
    assertContains(response, "forzada: repite los dados")
    assertContains(response, "cuesta «Magullado»")
    assertContains(response, table_roll.first.get_absolute_url())
    # The original's own page shows it as it was.
    assertContains(client_for(world.other).get(table_roll.first.get_absolute_url()), "(hacen falta 10)")


def test_the_roll_log_lists_vaesen_tests_in_compact_cards(vaesen_world, scene):
    world = vaesen_world
    table_roll = _roll(world, scene, needed=10, want=lambda g: g["successes"] < g["pool"])
    services.push(table_roll=table_roll, user=world.player, condition="Herido")
    response = client_for(world.other).get(reverse("rolls:roll-log", args=[world.campaign.slug]))
    assert response.status_code == 200
    html = response.content.decode()
    assert html.count("roll-card-compact") == 2
    assert "Forzada" in html and "(hacen falta 10)" in html
    # The log is for reading: no push form in it.
    assert reverse("vaesen:push", args=[table_roll.pk]) not in html


def test_the_badge_json_and_export_carry_the_signed_test(vaesen_world, scene):
    """Issue 15, item 6 — every roll verifiable offline: the export's entries
    check with the standalone verifier, and the badge says the verdict."""
    world = vaesen_world
    table_roll = _roll(world, scene, needed=10, want=lambda g: g["successes"] < g["pool"])
    pushed = services.push(table_roll=table_roll, user=world.player, condition="Exhausto")
    client = client_for(world.other)
    badge = client.get(reverse("rolls:roll-badge", args=[pushed.permalink]))
    assert badge.status_code == 200
    test = vaesen.PoolRoll(tuple(pushed.entry["dice"]), needed=10, pushed=True)
    assertContains(badge, "/ 10 (forzada) fallo")
    assertContains(badge, f"{test.successes} éxito")
    bundle = json.loads(client.get(reverse("rolls:roll-json", args=[pushed.permalink])).content)
    # The standalone verifier checks the pushed version against its parent offline.
    proof = verify_bundle(bundle, parse_public_key(settings.ROLLOG_KEYS.public_key_hex))
    assert proof.content is not None
    assert proof.content.entry["game"]["system"] == "vaesen" and proof.content.entry["game"]["pushed"] is True
    assert proof.content.entry["dice"] == pushed.entry["dice"]
    export = client.get(reverse("rolls:log-export", args=[world.campaign.slug]))
    assert export.status_code == 200
    body = b"".join(export.streaming_content) if export.streaming else export.content
    exported = json.loads(body)
    games = [
        json.loads(base64.b64decode(ref["entry_b64"])).get("game", {}).get("system")
        for ref in exported.get("entries", [])
    ]
    assert games.count("vaesen") == 2


def test_the_frame_of_a_log_entry_gets_the_vaesen_body(vaesen_world, scene):
    table_roll = _roll(vaesen_world, scene, needed=1, want=lambda g: True)
    entry = table_roll.first
    cards = log_cards([entry], access=campaign_access(vaesen_world.reader, vaesen_world.campaign))
    assert cards[entry.pk]["body_template"] == "vaesen/_card_body.html"
    assert cards[entry.pk]["test"]["successes"] == entry.signed_game["successes"]
    assert frame(entry, compact=True)["game"]["system"] == "vaesen"


# --- the scene page's queries ---------------------------------------------------------------


def _posts_with_rolls(world, scene, n: int) -> None:
    """``n`` posts of Elsa's with two failed tests each (pushable), one of
    them pushed."""
    for i in range(n):
        post = make_post(scene, world.player, voice=Post.Voice.CHARACTER, character=world.pc, body=f"Mensaje {i}")
        first = _roll(world, scene, needed=10, post=post, want=lambda g: g["successes"] < g["pool"])
        _roll(world, scene, needed=10, post=post, want=lambda g: g["successes"] < g["pool"])
        services.push(table_roll=first, user=world.player, condition="Exhausto")
        world.pc.vaesen.physical_conditions = []
        world.pc.vaesen.save()


# Measured, then pinned: the same whatever the number of posts and cards.
# The first visit reads the page's posts (their columns for the facts, then
# the posts to render), table rolls and versions (the GM's
# visit, first, keeps the page's facts for the others); a writer also pays for
# their characters and their equipment (the post form's rows). The steady
# page after it comes from the cache. The owner of pushable rolls pays one
# query more for the sheets' conditions (``systems.vaesen.cards.page_sheets``).
FIRST_VISIT = {"gm": 21, "player": 18, "other": 16, "reader": 14, "anonymous": 4}
STEADY = {"gm": 5, "player": 6, "other": 5, "reader": 5, "anonymous": 2}


@pytest.mark.parametrize("n", [2, 7])
def test_the_scene_page_query_count_is_constant_as_vaesen_cards_grow(
    vaesen_world, scene, django_assert_max_num_queries, n
):
    world = vaesen_world
    _posts_with_rolls(world, scene, n)
    for who, bound in FIRST_VISIT.items():
        client = world.client(who)
        with django_assert_max_num_queries(bound):
            response = client.get(scene.get_absolute_url())
        with django_assert_max_num_queries(STEADY[who]):
            again = client.get(scene.get_absolute_url())
        for html in (response.content.decode(), again.content.decode()):
            assert html.count('class="roll-card card') == 2 * n, who
            assert html.count("roll-chain-old") == n
            # Only the owner is offered the push of the n tests not pushed yet.
            assert html.count("roll-push-form") == (n if who == "player" else 0), who
