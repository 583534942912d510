"""Issue 17 — a GM roll request with a deadline: given from the request
form in the campaign's time zone, withdrawn when the request is answered or
cancelled, settled «Cerrar sin respuesta» once it passes, and listed among
what the scene waits for."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse
from django.utils import timezone
from pytest_django.asserts import assertContains, assertNotContains

from accounts.models import TakeoverConsent
from campaigns import extensions
from campaigns.models import Deadline, Membership, Scene
from campaigns.permissions import campaign_access
from systems.hitos.system import request_facts
from table.models import RollRequest
from table.roll_requests import services as roll_requests
from table.roll_requests import waiting
from tests.conftest import client_for, make_world
from tests.factories import client_seed

HTMX = {"HTTP_HX_REQUEST": "true"}


def _ask_url(play) -> str:
    return reverse("table:request-create", args=[play.campaign.slug, play.scene.pk])


def _form(play, **extra) -> dict:
    return {
        "character": play.ines.pk,
        "characteristic": "reflejos",
        "skill": "Sigilo",
        "modifier": "0",
        "difficulty": "Difícil",
        "purpose": "Que no te oigan",
        **extra,
    }


def _ask(play, *, due_at=None, hidden=False, character=None) -> RollRequest:
    return roll_requests.request_create(
        access=campaign_access(play.gm, play.campaign),
        scene=play.scene,
        character=character or play.ines,
        facts=request_facts(characteristic="reflejos", skill="Sigilo"),
        difficulty=18,
        difficulty_hidden=hidden,
        purpose="Que no te oigan",
        **({"due_at": due_at} if due_at else {}),
    )


def _soon() -> datetime:
    return timezone.now() + timedelta(days=2)


# --- the form -------------------------------------------------------------------------------


def test_the_request_form_gives_a_deadline_in_the_campaigns_time_zone(play):
    response = client_for(play.gm).post(_ask_url(play), _form(play, plazo="2030-01-15T20:00", recordar="7200"))
    assert response.status_code == 302
    request = RollRequest.objects.get()
    deadline = Deadline.objects.get()
    # 20:00 in Madrid in winter is 19:00 UTC.
    assert (deadline.kind, deadline.target_id, deadline.scene, deadline.created_by) == (
        "request",
        request.pk,
        play.scene,
        play.gm,
    )
    assert deadline.due_at == datetime(2030, 1, 15, 19, 0, tzinfo=UTC)
    assert deadline.remind_before == timedelta(hours=2)


def test_a_request_without_a_deadline_has_none(play):
    assert client_for(play.gm).post(_ask_url(play), _form(play)).status_code == 302
    assert RollRequest.objects.count() == 1 and not Deadline.objects.exists()


def test_a_deadline_in_the_past_is_refused_in_spanish_keeping_what_was_typed(play):
    response = client_for(play.gm).post(_ask_url(play), _form(play, plazo="2020-01-15T20:00"), **HTMX)
    assert response.status_code == 200
    assertContains(response, "El plazo tiene que ser en el futuro.")
    assertContains(response, 'value="Que no te oigan"')
    assertContains(response, 'value="2020-01-15T20:00"')
    assertNotContains(response, "<html")
    assert not RollRequest.objects.exists() and not Deadline.objects.exists()


def test_a_time_the_clocks_skip_is_refused(play):
    # Europe/Madrid goes from 02:00 to 03:00 on 31 March 2030.
    response = client_for(play.gm).post(_ask_url(play), _form(play, plazo="2030-03-31T02:30"))
    assert response.status_code == 200
    assertContains(response, "Esa hora no existe ese día en Europe/Madrid")
    assertContains(response, "<html")
    assert not RollRequest.objects.exists()


def test_the_form_offers_the_deadline_fields(play):
    page = client_for(play.gm).get(_ask_url(play))
    assertContains(page, 'name="plazo"')
    assertContains(page, 'type="datetime-local"')
    assertContains(page, 'name="recordar"')
    assertContains(page, "Europe/Madrid")


# --- withdrawn when answered or cancelled ---------------------------------------------------------


def test_cancelling_the_request_withdraws_its_deadline(play):
    request = _ask(play, due_at=_soon())
    roll_requests.request_cancel(access=campaign_access(play.gm, play.campaign), request=request)
    deadline = Deadline.objects.get()
    assert deadline.cancelled_at is not None and not deadline.is_open


def test_answering_the_request_withdraws_its_deadline(play):
    request = _ask(play, due_at=_soon())
    data = {
        "voice": f"character:{play.ines.pk}",
        "body": "Contengo la respiración.",
        "recipients": "all",
        "submission_key": client_seed(),
        "answers": str(request.pk),
        "answer_seed": client_seed(),
    }
    response = client_for(play.ana).post(reverse("table:post-create", args=[play.campaign.slug, play.scene.pk]), data)
    assert response.status_code == 302
    request.refresh_from_db()
    assert not request.is_open
    assert Deadline.objects.get().cancelled_at is not None


def test_the_gm_and_the_player_get_the_requests_with_their_deadlines(play):
    with_deadline = _ask(play, due_at=_soon())
    without = _ask(play, character=play.tomas)
    listed = {r.pk: r.deadline for r in roll_requests.scene_requests(scene=play.scene)}
    assert listed[with_deadline.pk] == Deadline.objects.get() and listed[without.pk] is None
    (mine,) = roll_requests.open_requests(scene=play.scene, user=play.ana)
    assert mine.deadline.target_id == with_deadline.pk


# --- the deadline kind ---------------------------------------------------------------------------


def test_the_request_kind_awaits_the_characters_player_until_it_is_answered(play):
    kind = extensions.deadline_kind("request")
    request = _ask(play, due_at=_soon())
    deadline = Deadline.objects.get()
    assert str(kind.label()) == "petición de tirada"
    assert kind.awaited(deadline) == [play.ana]
    assert kind.url(deadline) == play.scene.get_absolute_url() + "#escribir"
    assert kind.options(deadline, play.gm) == [("close", "Cerrar sin respuesta")]
    roll_requests.request_cancel(access=campaign_access(play.gm, play.campaign), request=request)
    assert kind.awaited(deadline) == [] and kind.options(deadline, play.gm) == []


def test_settling_closes_the_request_unanswered_and_says_who(play):
    kind = extensions.deadline_kind("request")
    request = _ask(play, due_at=_soon())
    deadline = Deadline.objects.get()
    sentence = kind.settle(deadline, "close", play.gm)
    assert sentence == (
        "La Directora cerró sin respuesta la petición de tirada a Inés Salcedo («Que no te oigan»): venció el plazo."
    )
    request.refresh_from_db()
    assert request.cancelled_at is not None and request.answer is None
    # The deadline itself is left for the caller to record as settled, not withdrawn.
    deadline.refresh_from_db()
    assert deadline.cancelled_at is None
    with pytest.raises(ValidationError, match="ya está contestada o anulada"):
        kind.settle(deadline, "close", play.gm)


def test_an_unknown_option_is_refused(play):
    _ask(play, due_at=_soon())
    with pytest.raises(ValidationError, match="Esa opción no existe"):
        extensions.deadline_kind("request").settle(Deadline.objects.get(), "roll", play.gm)


def test_nothing_rolls_for_the_character_even_when_its_player_lets_others_play_it(play):
    # An answer is a post in the character's words, which a deadline cannot
    # write; only closing is offered.
    Membership.objects.filter(campaign=play.campaign, user=play.ana).update(
        takeover_consent=TakeoverConsent.GM_AND_NAMED
    )
    _ask(play, due_at=_soon())
    assert extensions.deadline_kind("request").options(Deadline.objects.get(), play.gm) == [
        ("close", "Cerrar sin respuesta")
    ]


# --- whose turn -----------------------------------------------------------------------------------


def test_the_provider_lists_open_requests_with_their_deadlines(play):
    hidden = _ask(play, due_at=_soon(), hidden=True)
    shown = _ask(play, character=play.tomas)
    items = waiting.waiting([play.campaign], None, None)
    assert [(i.user_id, i.scene_id, i.kind, i.character, i.private) for i in items] == [
        (play.ana.pk, play.scene.pk, "request", "Inés Salcedo", True),
        (play.bruno.pk, play.scene.pk, "request", "Tomás Ferrer", False),
    ]
    assert items[0].text == "Tirada de Inés Salcedo pedida por la dirección: Que no te oigan"
    assert items[0].url == play.scene.get_absolute_url() + "#escribir"
    assert items[0].deadline.target_id == hidden.pk and items[1].deadline is None
    assert [i.user_id for i in waiting.waiting([play.campaign], None, play.bruno.pk)] == [play.bruno.pk]
    assert waiting.waiting([play.campaign], [play.scene.pk + 1000], None) == []
    roll_requests.request_cancel(access=campaign_access(play.gm, play.campaign), request=shown)
    assert [i.user_id for i in waiting.waiting([play.campaign], [play.scene.pk], None)] == [play.ana.pk]


def test_a_closed_scene_waits_for_nothing(play):
    _ask(play)
    Scene.objects.filter(pk=play.scene.pk).update(status=Scene.Status.LOCKED)
    assert waiting.waiting([play.campaign], None, None) == []


def test_the_provider_is_registered():
    assert waiting.waiting in extensions.waiting_providers()


def test_the_provider_asks_two_queries_whatever_the_number_of_campaigns(db, django_assert_max_num_queries):
    worlds = [make_world() for _ in range(5)]
    for world in worlds:
        _ask(world, due_at=_soon())
    with django_assert_max_num_queries(2):
        assert len(waiting.waiting([worlds[0].campaign], None, None)) == 1
    with django_assert_max_num_queries(2):
        items = waiting.waiting([w.campaign for w in worlds], None, None)
    assert len(items) == 5 and all(item.deadline is not None for item in items)
    with django_assert_max_num_queries(0):
        # The deadlines come with their campaign, for the deadline line.
        assert {item.deadline.campaign.slug for item in items} == {w.campaign.slug for w in worlds}


def test_the_provider_gives_others_a_neutral_text(play):
    _ask(play)
    (item,) = waiting.waiting([play.campaign], None, None)
    assert item.public_text == "Tirada pedida por la dirección"
    assert "Que no te oigan" not in item.public_text


@pytest.mark.parametrize(
    ("standing", "sees_purpose"),
    [("ana", True), ("gm", True), ("bruno", False), ("reader", False)],
)
def test_only_the_asked_player_and_the_direction_read_the_purpose_in_the_scene_status(play, standing, sees_purpose):
    _ask(play)
    url = reverse("campaigns:scene-status", args=[play.campaign.slug, play.scene.pk])
    client = client_for(getattr(play, standing))
    for extra in ({}, HTMX):
        response = client.get(url, **extra)
        assert response.status_code == 200
        if sees_purpose:
            assertContains(response, "Tirada de Inés Salcedo pedida por la dirección: Que no te oigan")
        else:
            assertContains(response, "Tirada pedida por la dirección")
            assertNotContains(response, "Que no te oigan")
