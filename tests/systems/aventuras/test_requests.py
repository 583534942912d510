"""The GM's roll requests in Hora de Aventuras (issue 16, item 2): the GM
names the attribute and the difficulty (A1, A8; the seed's only words, A10),
maybe hidden; the player's next post answers with exactly that roll, read
with the sheet's dice (A2) against the request's difficulty."""

from __future__ import annotations

import pytest
from django.urls import reverse
from pytest_django.asserts import assertContains, assertNotContains

from campaigns.models import Post
from table.models import RollRequest, TableRoll
from tests.conftest import client_for
from tests.factories import client_seed

pytestmark = pytest.mark.django_db


def _ask_url(world) -> str:
    return reverse("table:request-create", args=[world.campaign.slug, world.scene.pk])


def _ask(world, *, hidden=False, attribute="majo", difficulty=2, character=None):
    data = {
        "character": (character or world.pc).pk,
        "attribute": attribute,
        "difficulty": str(difficulty),
        "purpose": "Resolver el acertijo de la puerta",
    }
    if hidden:
        data["difficulty_hidden"] = "on"
    return client_for(world.gm).post(_ask_url(world), data)


def _answer(world, request: RollRequest):
    data = {
        "voice": f"character:{world.pc.pk}",
        "body": "Palomita piensa en voz alta.",
        "recipients": "all",
        "submission_key": client_seed(),
        "answers": str(request.pk),
        "answer_seed": client_seed(),
    }
    url = reverse("table:post-create", args=[world.campaign.slug, world.scene.pk])
    return client_for(world.player).post(url, data)


def test_the_request_form_names_attribute_and_difficulty_with_the_seeds_words(aventuras_world):
    world = aventuras_world
    page = client_for(world.gm).get(_ask_url(world))
    assert page.status_code == 200
    assertContains(page, "<html")
    for name in ("character", "attribute", "difficulty", "difficulty_hidden", "purpose"):
        assertContains(page, f'name="{name}"')
    assertContains(page, "2 — dificililla")
    fragment = client_for(world.gm).get(_ask_url(world), headers={"HX-Request": "true"})
    assertNotContains(fragment, "<html")
    assertContains(fragment, 'id="peticion"')


def test_the_gm_asks_and_the_next_post_answers_with_exactly_that_roll(aventuras_world):
    """A1, A2, A8 — Majo highlighted (4 dice) against difficulty 2."""
    world = aventuras_world
    response = _ask(world)
    assert response.status_code == 302
    request = RollRequest.objects.get()
    assert request.facts == {"attribute": "majo"} and request.difficulty == 2
    scene = client_for(world.player).get(world.scene.get_absolute_url())
    assertContains(scene, "La dirección te pide:")
    assertContains(scene, "Majo, dificultad 2")
    response = _answer(world, request)
    assert response.status_code == 302
    table_roll = TableRoll.objects.get(post=Post.objects.latest("pk"))
    request.refresh_from_db()
    assert request.answer == table_roll
    game = table_roll.first.signed_game
    assert table_roll.first.entry["spec"] == "4d6"
    assert game["system"] == "aventuras" and game["attribute"] == "majo" and game["difficulty"] == 2
    assert table_roll.first.entry["purpose"] == "Resolver el acertijo de la puerta"


def test_a_hidden_difficulty_is_signed_hidden_and_kept_for_the_gm(aventuras_world):
    world = aventuras_world
    _ask(world, hidden=True, difficulty=3)
    request = RollRequest.objects.get()
    player = client_for(world.player).get(world.scene.get_absolute_url())
    assertContains(player, "dificultad oculta")
    assertNotContains(player, "dificultad 3")
    assertContains(client_for(world.gm).get(world.scene.get_absolute_url()), "dificultad 3 (oculta)")
    _answer(world, request)
    table_roll = TableRoll.objects.get()
    game = table_roll.first.signed_game
    assert game["difficulty"] is None and game["difficulty_hidden"] is True
    assert table_roll.difficulty == 3 and table_roll.difficulty_hidden
    # The outcome is read against the real difficulty.
    assert game["succeeded"] is (game["successes"] > 3)


def test_bad_requests_are_refused_in_spanish_and_keep_what_was_typed(aventuras_world):
    world = aventuras_world
    response = client_for(world.gm).post(
        _ask_url(world),
        {"character": world.pc.pk, "attribute": "volar", "difficulty": "99", "purpose": "Volar lejos"},
        headers={"HX-Request": "true"},
    )
    assert response.status_code == 200
    assertContains(response, "La dificultad va de 0 a 10.")
    assertContains(response, 'value="Volar lejos"')
    assert not RollRequest.objects.exists()


def test_only_the_gm_asks(aventuras_world):
    world = aventuras_world
    assert client_for(world.player).get(_ask_url(world)).status_code == 403
    assert client_for(world.reader).get(_ask_url(world)).status_code == 403
    world.campaign.visibility = "private"
    world.campaign.save()
    assert client_for(world.outsider).get(_ask_url(world)).status_code == 404
