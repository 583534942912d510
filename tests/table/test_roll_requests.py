"""GM roll requests (issue 7, item 5): asked by the GM, answered by the
player's next post with exactly one roll, never twice."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError
from django.db import transaction
from django.urls import reverse
from pytest_django.asserts import assertContains, assertNotContains

from campaigns.models import Notification, Post
from campaigns.permissions import campaign_access
from systems.hitos.system import request_facts
from table.models import RollRequest, TableRoll
from table.roll_requests import services as roll_requests
from tests.conftest import World, client_for
from tests.factories import client_seed


def _ask_url(play: World) -> str:
    return reverse("table:request-create", args=[play.campaign.slug, play.scene.pk])


def _ask(play: World, *, hidden=False, **fields) -> RollRequest:
    return roll_requests.request_create(
        access=campaign_access(play.gm, play.campaign),
        scene=play.scene,
        character=fields.pop("character", play.ines),
        facts=request_facts(characteristic="reflejos", skill="Sigilo", modifier=fields.pop("modifier", -1)),
        difficulty=18,
        difficulty_hidden=hidden,
        purpose="Que no te oigan",
    )


def _answer(play: World, request: RollRequest, *, user=None, character=None, **extra):
    character = character or play.ines
    data = {
        "voice": f"character:{character.pk}",
        "body": "Contengo la respiración.",
        "recipients": "all",
        "submission_key": client_seed(),
        "answers": str(request.pk),
        "answer_seed": client_seed(),
        **extra,
    }
    url = reverse("table:post-create", args=[play.campaign.slug, play.scene.pk])
    return client_for(user or play.ana).post(url, data)


def test_the_gm_asks_for_a_roll_and_the_player_is_told(play):
    data = {
        "character": play.ines.pk,
        "characteristic": "reflejos",
        "skill": "Sigilo",
        "modifier": "-1",
        "difficulty": "Difícil",
        "difficulty_hidden": "on",
        "purpose": "Que no te oigan",
    }
    response = client_for(play.gm).post(_ask_url(play), data)
    assert response.status_code == 302 and response.url == play.scene.get_absolute_url()
    request = RollRequest.objects.get()
    assert (request.character, request.facts["skill"], request.facts["modifier"], request.difficulty) == (
        play.ines,
        "Sigilo",
        -1,
        20,
    )
    assert request.difficulty_hidden and request.requested_by == play.gm and request.is_open
    notification = Notification.objects.get(kind=Notification.Kind.REQUEST)
    assert notification.user == play.ana
    assert notification.text == "La dirección pide una tirada a Inés Salcedo: Que no te oigan."


def test_the_request_form_is_a_page_and_an_htmx_fragment(play):
    page = client_for(play.gm).get(_ask_url(play))
    assertContains(page, "<html")
    assertContains(page, "Pedir la tirada")
    fragment = client_for(play.gm).get(_ask_url(play), headers={"HX-Request": "true"})
    assertNotContains(fragment, "<html")
    assertContains(fragment, 'id="peticion"')


def test_a_request_for_a_skill_the_sheet_lacks_is_refused(play):
    data = {"character": play.ines.pk, "characteristic": "reflejos", "skill": "Volar", "purpose": "Huir"}
    response = client_for(play.gm).post(_ask_url(play), data, headers={"HX-Request": "true"})
    assert response.status_code == 200
    assertContains(response, "no tiene la habilidad «Volar»")
    assertContains(response, 'value="Huir"')
    assert not RollRequest.objects.exists()


def test_only_the_gm_asks_for_rolls(play, private_play):
    assert client_for(play.ana).get(_ask_url(play)).status_code == 403
    assert client_for(play.reader).get(_ask_url(play)).status_code == 403
    assert client_for(private_play.outsider).get(_ask_url(private_play)).status_code == 404
    assert client_for(None).get(_ask_url(play)).status_code == 302
    assert client_for(play.gm).put(_ask_url(play)).status_code == 405


def test_the_player_sees_the_request_in_the_post_form_and_the_gm_in_the_scene(play):
    _ask(play, hidden=True)
    ana = client_for(play.ana).get(play.scene.get_absolute_url())
    assertContains(ana, "La dirección te pide:")
    assertContains(ana, "Que no te oigan")
    assertContains(ana, "dificultad oculta")
    assertNotContains(ana, "dificultad 18")
    bruno = client_for(play.bruno).get(play.scene.get_absolute_url())
    assertNotContains(bruno, "La dirección te pide:")
    gm = client_for(play.gm).get(play.scene.get_absolute_url())
    assertContains(gm, "dificultad 18 (oculta)")
    assertContains(gm, "Anular")


def test_the_next_post_answers_with_exactly_the_requested_roll(play):
    request = _ask(play)
    response = _answer(play, request, **{"tirada-0-characteristic": "", "tirada-0-purpose": ""})
    assert response.status_code == 302
    post = Post.objects.latest("pk")
    table_roll = TableRoll.objects.get(post=post)
    request.refresh_from_db()
    assert request.answer == table_roll and request.answered_at is not None and not request.is_open
    # Reflejos 6 + Sigilo 3 − 1 from the GM, against the request's difficulty.
    assert (table_roll.facts["modifier"], table_roll.difficulty, table_roll.character) == (8, 18, play.ines)
    breakdown = table_roll.latest.signed_game["breakdown"]
    assert breakdown == [["Reflejos", 6], ["Sigilo", 3], ["Modificador de la dirección", -1]]
    assert table_roll.latest.entry["purpose"] == "Que no te oigan"
    assert table_roll.latest.entry["client_seed_source"] == "browser"


def test_answering_twice_is_refused(play):
    request = _ask(play)
    assert _answer(play, request).status_code == 302
    # The second post (a new form, the same request) is refused and nothing is published.
    response = _answer(play, request)
    assert response.status_code == 200
    assert Post.objects.count() == 2 and TableRoll.objects.count() == 1
    assertContains(response, "Esta petición de tirada ya está contestada.")
    with pytest.raises(ValidationError, match="ya está contestada"), transaction.atomic():
        roll_requests.request_lock_open(request_id=request.pk, character=play.ines)


def test_another_player_cannot_answer(play):
    request = _ask(play)
    response = _answer(play, request, user=play.bruno, character=play.tomas)
    assert response.status_code == 200
    assertContains(response, "Esa petición de tirada no es para este personaje.")
    assert not TableRoll.objects.exists() and RollRequest.objects.get().is_open
    with pytest.raises(ValidationError, match="no es para este personaje"), transaction.atomic():
        roll_requests.request_lock_open(request_id=request.pk, character=play.tomas)


def test_an_answer_carries_no_other_roll(play):
    request = _ask(play)
    response = _answer(play, request, **{"tirada-0-characteristic": "fortaleza", "tirada-0-purpose": "Y empujo"})
    assertContains(response, "Al contestar a una petición de la dirección, el mensaje lleva solo esa tirada.")
    assert not TableRoll.objects.exists() and RollRequest.objects.get().is_open


def test_with_a_hidden_difficulty_the_player_sees_only_the_outcome(play):
    request = _ask(play, hidden=True)
    _answer(play, request)
    table_roll = TableRoll.objects.get()
    total = table_roll.latest.signed_game["total"]
    ana = client_for(play.ana).get(play.scene.get_absolute_url()).content.decode()
    card = ana.split(f'id="tirada-{table_roll.pk}"')[1].split("roll-signature")[0]
    assert "dificultad oculta" in card and "margen" not in card and "dificultad 18" not in card
    assert ("Éxito" in card) or ("Fallo" in card)
    gm = client_for(play.gm).get(play.scene.get_absolute_url())
    assertContains(gm, "dificultad 18 (oculta a los jugadores)")
    assertContains(gm, f"margen {total - 18:+d}")


def test_the_gm_cancels_an_open_request(play):
    request = _ask(play)
    url = reverse("table:request-cancel", args=[request.pk])
    assert client_for(play.ana).post(url).status_code == 403
    assert client_for(play.gm).get(url).status_code == 405
    response = client_for(play.gm).post(url, headers={"HX-Request": "true"})
    assert response["HX-Redirect"] == play.scene.get_absolute_url()
    request.refresh_from_db()
    assert request.cancelled_at is not None and not request.is_open
    # Cancelled: the player's post cannot answer it any more.
    assertContains(_answer(play, request), "La dirección ha anulado esta petición de tirada.")
    assert not TableRoll.objects.exists()


def test_a_request_is_answered_only_in_its_own_scene(play):
    from campaigns.models import Scene
    from table import services as table_services

    other = Scene.objects.create(campaign=play.campaign, title="El desván")
    request = roll_requests.request_create(
        access=campaign_access(play.gm, play.campaign),
        scene=other,
        character=play.ines,
        facts=request_facts(characteristic="reflejos", skill="Sigilo"),
        difficulty=15,
        difficulty_hidden=False,
        purpose="Subir sin ruido",
    )
    with pytest.raises(ValidationError, match="se contesta en su escena"):
        table_services.post_with_rolls_create(
            access=campaign_access(play.ana, play.campaign),
            scene=play.scene,
            voice=Post.Voice.CHARACTER,
            character=play.ines,
            body="Subo.",
            answers=request.pk,
        )
    request.refresh_from_db()
    assert request.is_open and not TableRoll.objects.exists()
