"""The Aventuras roll card (issue 16, items 2, 3 and 6): the dice with their
faces as read (a converted 6 shows as 5, marked), failures, successes and
chachis (A4), the threshold if moved (A7), the difficulty and what it
cancelled, normals first (A9), the result in words (A8), the chain; after
«¡Ya está!» who narrates (A11) and the chachis left (A6); the permalink,
the roll log, the badge and the export; the scene page's queries, constant
as rolls grow."""

from __future__ import annotations

import base64
import json

import pytest
from django.template.loader import render_to_string
from django.urls import reverse
from pytest_django.asserts import assertContains, assertNotContains

from campaigns.models import Post
from campaigns.permissions import campaign_access
from rules import aventuras
from systems.aventuras import cards
from systems.aventuras.rolls import services
from table.cards import frame, log_cards
from table.models import TableRoll
from tests.conftest import client_for
from tests.factories import client_seed, make_post
from tests.systems.aventuras.test_contests import queue_d6

pytestmark = pytest.mark.django_db

# Palomita's Majo, highlighted (A2): the dice of a roll without modifier.
MAJO = 4
# A roll with nothing to convert nor cancel: 2 normal successes, no chachi.
PLAIN = (1, 4, 5, 2, 3, 1)


@pytest.fixture
def d6(monkeypatch):
    return queue_d6(monkeypatch)


def a_roll(world, d6, dice=PLAIN, *, difficulty=0, post=None, easier=0, difficulty_hidden=False):
    """One roll of Palomita's Majo in a new post (or ``post``) with these
    dice, queued: one post, one roll, the same every run."""
    d6.append(list(dice))
    roll_post = post or make_post(world.scene, world.player, voice=Post.Voice.CHARACTER, character=world.pc)
    setup = services.roll_setup(
        world.pc, attribute="majo", modifier=len(dice) - MAJO, difficulty=difficulty, easier=easier
    )
    table_roll = services.make_roll(
        campaign=world.campaign,
        user=world.player,
        setup=setup,
        purpose="Cantar al dragón",
        character=world.pc,
        scene=world.scene,
        post=roll_post,
        client_seed=client_seed(),
        difficulty_hidden=difficulty_hidden,
    )
    assert table_roll.first.entry["dice"] == list(dice)
    return table_roll


def with_chachi(tr) -> bool:
    return bool(services.open_chachis(tr.facts))


def test_the_card_counts_failures_successes_and_chachis_and_says_the_result(aventuras_world, d6):
    """A4, A8 — each die with its outcome; the counts and «¡Éxito!»/«Fallo»."""
    world = aventuras_world
    table_roll = a_roll(world, d6, (1, 4, 6, 2, 5, 6), difficulty=1)
    dice = table_roll.first.entry["dice"]
    state = aventuras.AventurasRoll(tuple(dice))
    resolution = aventuras.resolve(state.tally, 1)
    html = client_for(world.reader).get(world.scene.get_absolute_url()).content.decode()
    assert html.count('class="list-inline-item roll-die') == len(dice)
    failures = len(dice) - state.tally.successes
    assert (f"{failures} fallo<" if failures == 1 else f"{failures} fallos<") in html
    normals = state.tally.normals
    assert (f"{normals} éxito<" if normals == 1 else f"{normals} éxitos<") in html
    chachis = state.tally.chachis
    assert (f"{chachis} éxito chachi<" if chachis == 1 else f"{chachis} éxitos chachis<") in html
    assert ("¡Éxito!" if resolution.succeeded else "Fallo") in html
    assert "Dificultad 1." in html


def test_the_difficulty_cancels_normals_first(aventuras_world, d6):
    """A9 — «la dificultad siempre anula primero los éxitos normales y solo
    anula los chachis cuando no quedan éxitos normales que anular»: one
    normal and two chachis against difficulty 2 leave one chachi. Fixed dice,
    one post: the page read is the roll's."""
    world = aventuras_world
    table_roll = a_roll(world, d6, (4, 6, 6, 1, 2, 3, 1, 2), difficulty=2)
    html = client_for(world.reader).get(table_roll.post.get_absolute_url(), follow=True).content.decode()
    assert "Anula 1 éxito normal y 1 chachi." in html
    assert table_roll.first.signed_game["remaining"] == [0, 1]


def test_a_moved_threshold_shows_on_the_card(aventuras_world, d6):
    """A7 — «éxito con 3 o más»."""
    world = aventuras_world
    table_roll = a_roll(world, d6, easier=1)
    assert table_roll.first.signed_game["threshold"] == 3
    assertContains(client_for(world.reader).get(world.scene.get_absolute_url()), "éxito con 3 o más")


def test_a_converted_6_shows_as_a_5_and_the_chain_has_each_version(aventuras_world, d6):
    """A5 — the converted 6 reads 5, marked; the chain: roll → extension."""
    world = aventuras_world
    table_roll = a_roll(world, d6, (1, 6, 2, 3, 1, 2))
    position = services.open_chachis(table_roll.facts)[0]
    assert position == 1
    d6.append([2])
    entry = services.convert(table_roll=table_roll, user=world.player, position=position)
    response = client_for(world.other).get(entry.get_absolute_url())
    assertContains(response, "(era un 6)")
    assertContains(response, "tirada:")
    assertContains(response, f"convierte el 6 del dado {position + 1} en un 5 y añade un dado")
    assertContains(response, table_roll.first.get_absolute_url())
    # The first version's own page shows it as it was: no converted die.
    assertNotContains(client_for(world.other).get(table_roll.first.get_absolute_url()), "(era un 6)")


def test_the_reroll_shows_in_the_chain(aventuras_world, d6):
    world = aventuras_world
    table_roll = a_roll(world, d6)
    d6.append([2, 3])
    services.hero_reroll(table_roll=table_roll, user=world.player, positions=[0, 1])
    html = client_for(world.other).get(world.scene.get_absolute_url()).content.decode()
    assert "punto de Héroe: repite los dados 1, 2" in html
    assert html.count("roll-chain-old") == 1


def test_after_ya_esta_the_gm_narrates_a_failure(aventuras_world, d6):
    """A11 — «Los fallos, en cambio, los narra siempre el director de juego»."""
    world = aventuras_world
    table_roll = a_roll(world, d6, (6, 5, 4, 1), difficulty=10)
    services.settle(table_roll, by=world.player)
    response = client_for(world.reader).get(world.scene.get_absolute_url())
    assertContains(response, "Tirada cerrada")
    assertContains(response, "El director narra el fallo.")
    assertNotContains(response, "Convertir este 6")


def test_after_ya_esta_a_success_lists_its_chachis_for_the_player(aventuras_world, d6):
    """A6 — the chachis only matter when the action succeeds."""
    world = aventuras_world
    table_roll = a_roll(world, d6, (6, 4, 1, 1, 2, 3))
    services.settle(table_roll, by=world.player)
    response = client_for(world.reader).get(world.scene.get_absolute_url())
    assertContains(response, "Quien tiró narra el éxito y tiene 1 éxito chachi para sus efectos.")


def test_the_roller_sees_the_actions_and_the_others_only_wait(aventuras_world, d6):
    world = aventuras_world
    a_roll(world, d6, (6, 4, 1, 1, 2, 3))
    mine = client_for(world.player).get(world.scene.get_absolute_url())
    for text in ("Convertir este 6", "Gastar en un efecto", "Repetir dados con un punto de Héroe", "¡Ya está!"):
        assertContains(mine, text)
    # roll-verification "Not fixed here": an extended roll cannot be re-rolled; said before converting.
    assertContains(mine, "Después de convertirlo ya no podrás repetir los dados con un punto de Héroe.")
    theirs = client_for(world.other).get(world.scene.get_absolute_url())
    assertNotContains(theirs, "Convertir este 6")
    assertContains(theirs, "Quien tiró aún puede convertir 6s o repetir dados.")
    gm = client_for(world.gm).get(world.scene.get_absolute_url())
    assertNotContains(gm, "Convertir este 6")
    assertContains(gm, "Cerrar la tirada")


def test_no_reroll_is_offered_after_a_conversion_and_it_says_why(aventuras_world, d6):
    world = aventuras_world
    table_roll = a_roll(world, d6, (6, 6, 1, 1, 2, 3))
    d6.append([1])
    services.convert(table_roll=table_roll, user=world.player, position=0)
    response = client_for(world.player).get(reverse("aventuras:roll", args=[table_roll.pk]), HTTP_HX_REQUEST="true")
    assertContains(response, "una tirada ampliada no se puede repetir")
    assertNotContains(response, 'name="positions"')
    # The other 6 may still be converted; there is no re-roll left to warn about.
    assertContains(response, "Convertir este 6 (dado 2)")
    assertNotContains(response, "ya no podrás repetir los dados")


def test_a_hidden_difficulty_is_the_gms(aventuras_world, d6):
    world = aventuras_world
    table_roll = a_roll(world, d6, difficulty=3, difficulty_hidden=True)
    assert table_roll.first.signed_game["difficulty"] is None
    player = client_for(world.player).get(world.scene.get_absolute_url())
    assertContains(player, "Dificultad oculta.")
    assertNotContains(player, "Dificultad 3")
    gm = client_for(world.gm).get(world.scene.get_absolute_url())
    assertContains(gm, "Dificultad 3 (oculta para el jugador).")


@pytest.mark.parametrize(
    ("dice", "difficulty", "succeeded"),
    [
        # 1 normal, no chachi against 3: a failure; the remaining [0, 0] would say «3 or more».
        ((4, 1, 1, 1, 2, 3), 3, False),
        # 3 normals, 1 chachi against 2: a success; the remaining [1, 1] would say «exactly 2».
        ((4, 5, 4, 6, 2, 3), 2, True),
    ],
)
def test_a_hidden_difficulty_cannot_be_worked_out_by_the_players(aventuras_world, d6, dice, difficulty, succeeded):
    """A8, A9 — a hidden difficulty: the signed entry (read by anyone with
    its permalink), the permalink and the player's card say whether the
    action succeeds and (A6) the chachis left when it does, never the
    difficulty nor what it cancelled or left; the table roll keeps the
    real remaining and the GM's card shows them."""
    world = aventuras_world
    table_roll = a_roll(world, d6, dice, difficulty=difficulty, difficulty_hidden=True)
    game = table_roll.first.signed_game
    assert game["difficulty"] is None and game["succeeded"] is succeeded
    assert "remaining" not in game
    assert set(game) & {"cancelled", "remaining"} == set()
    if succeeded:
        assert game["chachis_left"] == 1
    else:
        assert "chachis_left" not in game
    remaining = aventuras.resolve(aventuras.AventurasRoll(dice).tally, difficulty).remaining
    assert table_roll.facts["remaining"] == [remaining.normals, remaining.chachis]
    services.settle(table_roll, by=world.player)
    cancelled = f"Anula {difficulty} éxitos normales"
    for page in (world.scene.get_absolute_url(), table_roll.first.get_absolute_url()):
        player = client_for(world.player).get(page).content.decode()
        assert "Dificultad oculta." in player
        assert f"Dificultad {difficulty}" not in player and "Anula" not in player
        assert '"remaining"' not in player and "&quot;remaining&quot;" not in player
    gm = client_for(world.gm).get(world.scene.get_absolute_url())
    assertContains(gm, f"Dificultad {difficulty} (oculta para el jugador).")
    assertContains(gm, cancelled if succeeded else "Anula 1 éxito normal.")


def test_a_chachi_spent_on_an_effect_is_counted_once_on_the_card(aventuras_world, d6):
    """A12 — «el éxito chachi así utilizado seguirá contando como un éxito
    para la resolución, pero no podrá utilizarse para los efectos
    habituales»: two 6s against difficulty 1, one spent on an effect: it
    counts as a normal success, the difficulty cancels it (A9) and one
    chachi is left (A6), the same in the body, the actions and the service."""
    world = aventuras_world
    table_roll = a_roll(world, d6, (6, 6, 1, 1, 2, 3), difficulty=1)
    services.spend_on_effect(table_roll=table_roll, user=world.player, position=0)
    table_roll = services.settle(table_roll, by=world.player)
    assert services.chachis_left(table_roll) == 1
    assert services.roll_tally(table_roll) == aventuras.Tally(1, 1)
    html = client_for(world.reader).get(world.scene.get_absolute_url()).content.decode()
    assert "Le queda 1 éxito chachi." in html
    assert "Quien tiró narra el éxito y tiene 1 éxito chachi para sus efectos." in html


def test_the_roll_log_lists_aventuras_rolls_in_compact_cards(aventuras_world, d6):
    world = aventuras_world
    table_roll = a_roll(world, d6)
    services.hero_reroll(table_roll=table_roll, user=world.player, positions=[0])
    response = client_for(world.other).get(reverse("rolls:roll-log", args=[world.campaign.slug]))
    assert response.status_code == 200
    html = response.content.decode()
    assert html.count("roll-card-compact") == 2
    # The log is for reading: no chain actions in it.
    assert reverse("aventuras:convert", args=[table_roll.pk]) not in html


def test_the_frame_of_a_log_entry_gets_the_aventuras_body(aventuras_world, d6):
    world = aventuras_world
    entry = a_roll(world, d6).first
    shown = log_cards([entry], access=campaign_access(world.reader, world.campaign))
    assert shown[entry.pk]["body_template"] == "aventuras/rolls/_card_body.html"
    assert shown[entry.pk]["roll"]["successes"] == entry.signed_game["successes"]
    assert frame(entry, compact=True)["game"]["system"] == "aventuras"


def test_the_badge_json_and_export_carry_the_signed_roll(aventuras_world, d6):
    world = aventuras_world
    table_roll = a_roll(world, d6, difficulty=1)
    entry = table_roll.first
    client = client_for(world.other)
    badge = client.get(reverse("rolls:roll-badge", args=[entry.permalink]))
    assert badge.status_code == 200
    game = entry.signed_game
    assertContains(badge, "dif. 1: " + ("éxito" if game["succeeded"] else "fallo"))
    assert cards.badge_line(game, entry.entry) == "2 éxitos, dif. 1: éxito"
    export = client.get(reverse("rolls:log-export", args=[world.campaign.slug]))
    body = b"".join(export.streaming_content) if export.streaming else export.content
    games = [
        json.loads(base64.b64decode(ref["entry_b64"])).get("game", {}).get("system")
        for ref in json.loads(body).get("entries", [])
    ]
    assert games.count("aventuras") == 1


def test_cards_for_and_the_roll_body_show_a_roll_without_a_post(aventuras_world, d6):
    """For the contests: a roll made without a post, its body and its actions."""
    world = aventuras_world
    d6.append([6, 4, 1, 1, 2, 3])
    setup = services.roll_setup(world.pc, attribute="majo", modifier=2)
    table_roll = services.make_roll(
        campaign=world.campaign,
        user=world.player,
        setup=setup,
        purpose="Carrera",
        character=world.pc,
        scene=world.scene,
        client_seed=client_seed(),
    )
    assert with_chachi(table_roll)
    rolls = TableRoll.objects.filter(pk=table_roll.pk).select_related("character", "scene")
    shown = cards.cards_for(rolls, access=campaign_access(world.player, world.campaign))
    card = shown[table_roll.pk]
    assert card["may_act"] and card["open_chachis"] and card["reactions"] is None
    html = render_to_string("aventuras/rolls/_roll_body.html", {"card": card, "csrf_token": "x"})
    assert "Convertir este 6" in html and f'id="tirada-{table_roll.pk}"' in html


# --- the scene page's queries ---------------------------------------------------------------


def _posts_with_rolls(world, d6, n: int) -> None:
    """``n`` posts of Palomita's with two rolls each, one re-rolled."""
    for i in range(n):
        post = make_post(world.scene, world.player, voice=Post.Voice.CHARACTER, character=world.pc, body=f"Mensaje {i}")
        first = a_roll(world, d6, post=post)
        a_roll(world, d6, (6, 4, 1, 1, 2, 3), post=post)
        services.hero_reroll(table_roll=first, user=world.player, positions=[0])
        world.pc.aventuras.hero_points = 5
        world.pc.aventuras.save(update_fields=["hero_points"])


# Measured, then pinned: the same whatever the number of posts and cards.
# The first visit reads the page's posts, table rolls and versions; a writer
# also pays for their characters with their tools and states, and for each
# of the post form's three rows the campaign's characters (the «objetivos»,
# A18). The owner of open rolls pays two queries more for the hero points
# and the re-rolls paid this turn (``systems.aventuras.cards.page_actions``);
# the scene's hero points and contests panels (``heroes.panel``,
# ``contests.panel``) have their own.
# Re-measured with fixed dice (each post: a roll without a chachi, re-rolled,
# and one with an open chachi).
FIRST_VISIT = {"gm": 35, "player": 38, "other": 36, "reader": 17, "anonymous": 7}
STEADY = {"gm": 10, "player": 14, "other": 12, "reader": 8, "anonymous": 2}


@pytest.mark.parametrize("n", [2, 7])
def test_the_scene_page_query_count_is_constant_as_aventuras_cards_grow(
    aventuras_world, d6, django_assert_max_num_queries, n
):
    world = aventuras_world
    _posts_with_rolls(world, d6, n)
    for who, bound in FIRST_VISIT.items():
        client = world.client(who)
        with django_assert_max_num_queries(bound):
            response = client.get(world.scene.get_absolute_url())
        with django_assert_max_num_queries(STEADY[who]):
            again = client.get(world.scene.get_absolute_url())
        for html in (response.content.decode(), again.content.decode()):
            assert html.count('class="roll-card card') == 2 * n, who
            assert html.count("roll-chain-old") == n
