"""The Aventuras roll's own page and its htmx answers (issue 16, second
review): who closed a roll when the GM closes it («Cerrar la tirada»), the
queries of the roll page, the roll log and the permalink as chains grow, a
refused re-roll that keeps the dice ticked, the badge's short line, the
confirmations of the irreversible buttons and the dice named «Dado 3: 5»."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse
from pytest_django.asserts import assertContains, assertNotContains

from campaigns.models import Post
from systems.aventuras import cards
from systems.aventuras.rolls import services
from tests.conftest import client_for
from tests.factories import client_seed, make_post
from tests.systems.aventuras.test_contests import queue_d6

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}
# A5 — one open 6 to convert, nothing else.
ONE_SIX = (6, 1, 1, 1, 1, 1)
# No chachi, 2 successes: still open for a hero point re-roll (A22).
PLAIN = (1, 4, 5, 2, 3, 1)


@pytest.fixture
def d6(monkeypatch):
    return queue_d6(monkeypatch)


def a_roll(world, d6, dice=ONE_SIX, *, difficulty=0, difficulty_hidden=False, character=None, user=None):
    """One roll with these dice (queued) in a new post of Palomita's player (or ``user``'s)."""
    character = character or world.pc
    user = user or world.player
    d6.append(list(dice))
    post = make_post(world.scene, user, voice=Post.Voice.CHARACTER, character=character)
    base = character.aventuras.dice_for("majo")
    setup = services.roll_setup(character, attribute="majo", modifier=len(dice) - base, difficulty=difficulty)
    table_roll = services.make_roll(
        campaign=world.campaign,
        user=user,
        setup=setup,
        purpose="Cantar al dragón",
        character=character,
        scene=world.scene,
        post=post,
        client_seed=client_seed(),
        difficulty_hidden=difficulty_hidden,
    )
    assert table_roll.first.entry["dice"] == list(dice)
    return table_roll


def a_chain(world, d6, conversions: int):
    """A roll whose 6 is converted ``conversions`` times (A5: «Mientras sigas
    obteniendo éxitos chachis puedes convertirlos»), each added die a 6 again:
    still open, one 6 left to decide."""
    table_roll = a_roll(world, d6)
    position = 0
    for _ in range(conversions):
        d6.append([6])
        table_roll.refresh_from_db()
        entry = services.convert(table_roll=table_roll, user=world.player, position=position, client_seed=client_seed())
        position = len(entry.entry["dice"]) - 1
    table_roll.refresh_from_db()
    assert not services.is_final(table_roll) and services.open_chachis(table_roll.facts) == [position]
    return table_roll


# --- who closed the roll ------------------------------------------------------------------------


def test_the_gm_closing_a_players_roll_is_recorded_and_shown(aventuras_world, d6):
    """The GM's «Cerrar la tirada» on a player's roll: who and when, on the card."""
    world = aventuras_world
    table_roll = a_roll(world, d6)
    response = client_for(world.gm).post(reverse("aventuras:settle", args=[table_roll.pk]), **HTMX)
    assert response.status_code == 200
    table_roll.refresh_from_db()
    facts = table_roll.facts
    assert facts["final"] is True
    assert facts["settled_by"] == world.gm.pk and facts["settled_by_name"] == str(world.gm)
    assert re.match(r"\d{4}-\d\d-\d\dT\d\d:\d\d", facts["settled_at"])
    assertContains(response, "Cerrada por la dirección el ")
    page = client_for(world.player).get(reverse("aventuras:roll", args=[table_roll.pk]))
    assertContains(page, "Cerrada por la dirección el ")


def test_a_roll_closed_by_its_roller_or_by_itself_says_nothing_more(aventuras_world, d6):
    world = aventuras_world
    own = a_roll(world, d6)
    response = client_for(world.player).post(reverse("aventuras:settle", args=[own.pk]), **HTMX)
    assertContains(response, "Tirada cerrada")
    assertNotContains(response, "Cerrada por la dirección")
    own.refresh_from_db()
    assert own.facts["final"] and "settled_by" not in own.facts and "settled_at" not in own.facts
    # The GM closing an NPC's roll closes their own roll: no record either.
    npc = a_roll(world, d6, character=world.npc, user=world.gm)
    if not services.is_final(npc):
        response = client_for(world.gm).post(reverse("aventuras:settle", args=[npc.pk]), **HTMX)
        assertNotContains(response, "Cerrada por la dirección")
    npc.refresh_from_db()
    assert npc.facts["final"] and "settled_by" not in npc.facts
    # Nothing left to decide (A5: no 6; the re-roll already paid): final at once, no record.
    world.pc.aventuras.hero_points = 0
    world.pc.aventuras.experience = 0
    world.pc.aventuras.save(update_fields=["hero_points", "experience"])
    automatic = a_roll(world, d6, PLAIN)
    assert services.is_final(automatic) and "settled_by" not in automatic.facts
    page = client_for(world.gm).get(reverse("aventuras:roll", args=[automatic.pk]))
    assertContains(page, "Tirada cerrada")
    assertNotContains(page, "Cerrada por la dirección")


# --- queries, constant as chains grow -----------------------------------------------------------

# Measured, then pinned: the roll page reads the roll, its versions at once
# (``table.cards.card_versions``), the reader's hero points and re-rolls paid
# (``cards.page_actions``) and the reactions; the same with 1 or 5 conversions.
ROLL_PAGE = {("player", False): 10, ("player", True): 9, ("gm", False): 9, ("gm", True): 8}


@pytest.mark.parametrize("conversions", [1, 5])
def test_the_roll_page_and_its_fragment_cost_the_same_whatever_the_chain(
    aventuras_world, d6, django_assert_max_num_queries, conversions
):
    world = aventuras_world
    table_roll = a_chain(world, d6, conversions)
    url = reverse("aventuras:roll", args=[table_roll.pk])
    for (who, htmx), bound in ROLL_PAGE.items():
        client = world.client(who)
        with django_assert_max_num_queries(bound):
            response = client.get(url, **(HTMX if htmx else {}))
        assert response.status_code == 200
        assert response.content.decode().count("roll-chain-version") == conversions + 1


@pytest.mark.parametrize("conversions", [1, 5])
def test_an_htmx_action_answers_in_the_same_queries_whatever_the_chain(
    aventuras_world, d6, django_assert_max_num_queries, conversions
):
    """A refused step answers with the card: its cost does not grow with the chain."""
    world = aventuras_world
    table_roll = a_chain(world, d6, conversions)
    client = client_for(world.player)
    with django_assert_max_num_queries(15):
        response = client.post(reverse("aventuras:convert", args=[table_roll.pk]), {"position": 2}, **HTMX)
    assertContains(response, "Solo se puede convertir un 6")


@pytest.mark.parametrize("conversions", [1, 5])
def test_the_roll_log_and_the_permalink_cost_the_same_whatever_the_chain(
    aventuras_world, d6, django_assert_max_num_queries, conversions
):
    world = aventuras_world
    for _ in range(2):
        table_roll = a_chain(world, d6, conversions)
    log = reverse("rolls:roll-log", args=[world.campaign.slug])
    for who, bound in {"player": 11, "other": 11}.items():
        client = world.client(who)
        with django_assert_max_num_queries(bound):
            response = client.get(log)
        assert response.content.decode().count("roll-card-compact") == 2 * (conversions + 1)
    for who, bound in {"player": 18, "other": 17}.items():
        client = world.client(who)
        with django_assert_max_num_queries(bound):
            response = client.get(table_roll.latest.get_absolute_url())
        assert response.status_code == 200
        assert response.content.decode().count("roll-chain-version") == conversions + 1


# --- a refused re-roll keeps the dice ticked ----------------------------------------------------


def _ticked(html: str, table_roll) -> set[int]:
    return {
        int(n)
        for n in re.findall(rf'<input class="btn-check" [^>]*id="repetir-{table_roll.pk}-(\d+)"[^>]*checked', html)
    }


def test_a_refused_reroll_keeps_the_dice_ticked(aventuras_world, d6):
    """A28 — 2 XP for an instant hero point, without the XP: refused in
    Spanish, the card comes back with the dice the player ticked."""
    world = aventuras_world
    table_roll = a_roll(world, d6, PLAIN)
    sheet = world.pc.aventuras
    sheet.hero_points, sheet.experience = 1, 0
    sheet.save(update_fields=["hero_points", "experience"])
    url = reverse("aventuras:reroll", args=[table_roll.pk])
    client = client_for(world.player)
    response = client.post(
        url, {"positions": ["2", "5"], "with_experience": "on", "client_seed": client_seed()}, **HTMX
    )
    assertContains(response, "Experiencia")
    assert _ticked(response.content.decode(), table_roll) == {2, 5}
    table_roll.refresh_from_db()
    assert table_roll.latest_id == table_roll.first_id
    # Ticking nothing is refused too; nothing is ticked back.
    response = client.post(url, {"client_seed": client_seed()}, **HTMX)
    assertContains(response, "Elige al menos un dado que repetir.")
    assert _ticked(response.content.decode(), table_roll) == set()


def test_a_refused_reroll_keeps_the_ticked_dice_on_the_card_and_the_page(aventuras_world, d6, monkeypatch):
    world = aventuras_world
    table_roll = a_roll(world, d6, PLAIN)
    url = reverse("aventuras:reroll", args=[table_roll.pk])
    client = client_for(world.player)

    def refuse(**kwargs):
        raise services.ValidationError("No te quedan puntos de Héroe (ni 2 PX para uno instantáneo).")

    monkeypatch.setattr(services, "hero_reroll", refuse)
    response = client.post(url, {"positions": ["2", "5"], "client_seed": client_seed()}, **HTMX)
    assertContains(response, "No te quedan puntos de Héroe")
    assert _ticked(response.content.decode(), table_roll) == {2, 5}
    page = client.post(url, {"positions": ["3"], "client_seed": client_seed()})
    assert page.status_code == 400
    assertContains(page, "No te quedan puntos de Héroe", status_code=400)
    assert _ticked(page.content.decode(), table_roll) == {3}
    # A card not answering a refusal ticks nothing.
    fresh = client.get(reverse("aventuras:roll", args=[table_roll.pk]))
    assert _ticked(fresh.content.decode(), table_roll) == set()


# --- the badge's line ----------------------------------------------------------------------------

# The badge is a 300 px SVG (``templates/rolls/badge.svg``): its line fits about 45 characters.
BADGE_LINE = 45


@pytest.mark.parametrize(
    "dice, difficulty, hidden, line",
    [
        ((6, 4, 5, 5, 4, 1), 2, False, "5 éxitos (1 chachi), dif. 2: éxito"),
        ((1, 4, 5, 2, 3, 1), 0, False, "2 éxitos, dif. 0: éxito"),
        ((1, 4, 1, 2, 3, 1), 1, True, "1 éxito, dif. oculta: fallo"),
        ((6,) * 30, 10, True, "30 éxitos (30 chachis), dif. oculta: éxito"),
    ],
)
def test_the_badge_line_is_short_and_says_the_result_in_words(aventuras_world, d6, dice, difficulty, hidden, line):
    """A4, A8 — successes, chachis, the difficulty (a hidden one shows no
    number) and the outcome; no dice and no unexplained marks."""
    world = aventuras_world
    table_roll = a_roll(world, d6, dice, difficulty=difficulty, difficulty_hidden=hidden)
    entry = table_roll.first
    shown = cards.badge_line(entry.signed_game, entry.entry)
    assert shown == line
    assert len(shown) <= BADGE_LINE and "*" not in shown
    badge = client_for(world.other).get(reverse("rolls:roll-badge", args=[entry.permalink]))
    assertContains(badge, line)
    if hidden:
        assert str(difficulty) not in shown.split("dif.")[1]


# --- the buttons: confirmations, spacing, the dice named alike -----------------------------------


def test_irreversible_buttons_ask_first_and_stand_apart(aventuras_world, d6):
    """«¡Ya está!», «Convertir» and «Gastar en un efecto» ask in Spanish
    before sending (htmx's hx-confirm); «¡Ya está!» stands on its own line."""
    world = aventuras_world
    table_roll = a_roll(world, d6)
    html = client_for(world.player).get(reverse("aventuras:roll", args=[table_roll.pk])).content.decode()
    forms = re.findall(r"<form [^>]*>", html)
    by_action = {
        name: [f for f in forms if reverse(f"aventuras:{name}", args=[table_roll.pk]) in f]
        for name in (
            "convert",
            "effect",
            "settle",
        )
    }
    assert 'data-hx-confirm="¿Convertir el 6 del dado 1 en un 5 y añadir un dado?' in by_action["convert"][0]
    assert 'data-hx-confirm="¿Gastar el 6 del dado 1 en un efecto narrativo?' in by_action["effect"][0]
    assert 'data-hx-confirm="¿Cerrar la tirada? Su resultado quedará definitivo' in by_action["settle"][0]
    # Not inline next to the others: a block of its own, set apart.
    assert "d-inline" not in by_action["settle"][0] and "mt-3" in by_action["settle"][0]
    assert "gap-3" in html
    # The GM's «Cerrar la tirada» on a player's roll asks too.
    gm = client_for(world.gm).get(reverse("aventuras:roll", args=[table_roll.pk])).content.decode()
    confirm = 'data-hx-confirm="¿Cerrar la tirada de otra persona?'
    assert confirm in gm and "Cerrar la tirada</button>" in gm


def test_the_reroll_boxes_and_the_dice_are_named_alike(aventuras_world, d6):
    """A22 — each re-roll box is a tap-sized button «Dado 3: 5»; the card's
    dice carry the same numbers (visible, and «Dado 3» for screen readers)."""
    world = aventuras_world
    table_roll = a_roll(world, d6, PLAIN)
    html = client_for(world.player).get(reverse("aventuras:roll", args=[table_roll.pk])).content.decode()
    for position, value in enumerate(PLAIN, start=1):
        box = f"repetir-{table_roll.pk}-{position}"
        assert re.search(
            rf'<input class="btn-check" type="checkbox" name="positions" value="{position}" id="{box}"', html
        )
        assert (
            f'<label class="btn btn-outline-primary roll-reroll-die me-1 mb-1" for="{box}">Dado {position}: {value}</label>'
            in html
        )
        assert (
            f'<span class="visually-hidden">Dado </span>{position}:</span> <span class="roll-die-value">{value}</span>'
            in html
        )
    assert 'class="form-check-input" type="checkbox" name="positions"' not in html
