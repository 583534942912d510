"""K17 — a narrative element (H23) paid by exhausting the activator's own aspect
instead of a drama point (H13, H27), and what the affected character's answer
does then: K15's net 0 for both, with the aspect instead of the point."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.exceptions import PermissionDenied, ValidationError
from django.urls import reverse
from django.utils import timezone

from sheets.models import SheetEvent
from systems.hitos.activations import services as activations
from systems.hitos.campaign import gm_pool
from systems.hitos.models import Activation, Aspect, HitosEvent
from tests.conftest import client_for


def refresh(*objects):
    for obj in objects:
        obj.refresh_from_db()


def drama_url(play) -> str:
    return reverse("hitos:drama", args=[play.campaign.slug])


def narrative_url(play) -> str:
    return reverse("hitos:drama-narrative", args=[play.campaign.slug])


def counts() -> tuple[int, int, list]:
    return (
        Activation.objects.count(),
        SheetEvent.objects.count(),
        list(Aspect.objects.order_by("pk").values_list("pk", "exhausted_until")),
    )


def exhaust_element(play, *, affected=None, aspect_text=""):
    return activations.narrative_activation(
        campaign=play.campaign,
        user=play.ana,
        character_or_gm=play.ines,
        aspect_text=aspect_text,
        note="Salta al tejado de la cochera",
        affected=affected,
        exhaust_aspect_id=play.ines_aspect.pk,
    )


def test_k17_a_narrative_element_paid_by_exhausting_an_own_aspect(play):
    # K17 — «debe agotarse dicho aspecto»: no point, even with none left.
    play.ines.hitos.drama_points = 0
    play.ines.hitos.save(update_fields=["drama_points"])
    activation = exhaust_element(play)
    refresh(play.ines, play.ines_aspect)
    assert play.ines.hitos.drama_points == 0
    # The same exhaustion as a positive activation's: until the next session.
    assert play.ines_aspect.exhausted_until == Aspect.Duration.SESSION
    assert (activation.payment, activation.aspect, activation.status) == (
        Activation.Payment.EXHAUST,
        play.ines_aspect,
        Activation.Status.DONE,
    )
    # The aspect activated is the one exhausted.
    assert activation.aspect_text == "Ágil como una gata"
    event = SheetEvent.objects.get(character=play.ines)
    assert event.kind == HitosEvent.ASPECT and event.actor == play.ana
    assert "Ágil como una gata" in event.reason and event.reason.endswith("Salta al tejado de la cochera")
    assert not SheetEvent.objects.filter(kind=HitosEvent.DRAMA).exists()
    # H27 — exhausted, it cannot pay again until it recovers.
    with pytest.raises(ValidationError, match="ya está agotado"):
        exhaust_element(play)


def test_k17_the_typed_aspect_must_be_the_exhausted_one(play):
    # Written the same way (spaces, capitals): accepted, the sheet's phrase is stored.
    activation = exhaust_element(play, aspect_text="  ágil como  una GATA ")
    assert activation.aspect_text == "Ágil como una gata"
    play.tomas_aspect.character = play.ines
    play.tomas_aspect.save(update_fields=["character"])
    before = counts()
    with pytest.raises(ValidationError, match="deja vacío el campo «Aspecto» o escribe esa frase"):
        activations.narrative_activation(
            campaign=play.campaign,
            user=play.ana,
            character_or_gm=play.ines,
            aspect_text="Conoce la mansión",
            note="Hay un pasadizo",
            exhaust_aspect_id=play.tomas_aspect.pk,
        )
    assert counts() == before


def test_k17_h27_only_a_player_exhausts_and_only_their_own_aspect(play):
    before = counts()
    # Another character's aspect.
    with pytest.raises(ValidationError, match="propio personaje"):
        activations.narrative_activation(
            campaign=play.campaign,
            user=play.ana,
            character_or_gm=play.ines,
            aspect_text="",
            note="y",
            exhaust_aspect_id=play.tomas_aspect.pk,
        )
    assert counts() == before
    # The GM's pool and an NPC pay points, never an aspect.
    npc_aspect = Aspect.objects.create(character=play.npc, kind=Aspect.Kind.HITO, phrase="Sabe demasiado")
    before = counts()
    for activator, aspect in ((None, play.ines_aspect), (play.npc, npc_aspect)):
        with pytest.raises(ValidationError, match="propio personaje"):
            activations.narrative_activation(
                campaign=play.campaign,
                user=play.gm,
                character_or_gm=activator,
                aspect_text="x",
                note="y",
                exhaust_aspect_id=aspect.pk,
            )
    assert counts() == before
    # An aspect no longer on the sheet.
    play.ines_aspect.ended_at = timezone.now()
    play.ines_aspect.save(update_fields=["ended_at"])
    before = counts()
    with pytest.raises(ValidationError, match="ya no está en la ficha"):
        exhaust_element(play)
    assert counts() == before
    # Still only with one's own approved character.
    with pytest.raises(PermissionDenied):
        activations.narrative_activation(
            campaign=play.campaign,
            user=play.bruno,
            character_or_gm=play.ines,
            aspect_text="",
            note="y",
            exhaust_aspect_id=play.ines_aspect.pk,
        )
    refresh(play.campaign, play.ines)
    assert (gm_pool(play.campaign), play.ines.hitos.drama_points) == (5, 3)


def test_k17_k15_accepting_an_exhausted_element_gains_no_point(play, monkeypatch):
    # K17 + H23 — «el punto dramático que gastas lo gana el personaje afectado»: no point was spent,
    # so Tomás gains nothing; the aspect stays exhausted.
    activation = exhaust_element(play, affected=play.tomas)
    assert activation.status == Activation.Status.PENDING
    activations.answer_narrative(activation=activation, user=play.bruno, accept=True)
    refresh(activation, play.ines, play.tomas, play.ines_aspect)
    assert activation.status == Activation.Status.ACCEPTED
    assert (play.ines.hitos.drama_points, play.tomas.hitos.drama_points) == (3, 3)
    assert play.ines_aspect.exhausted
    assert not SheetEvent.objects.filter(kind=HitosEvent.DRAMA).exists()
    # Settled by the GM after the deadline (as accepted): the same, nothing moves.
    play.ines_aspect.exhausted_until = ""
    play.ines_aspect.save(update_fields=["exhausted_until"])
    pending = exhaust_element(play, affected=play.tomas)
    later = timezone.now() + timedelta(hours=49)
    monkeypatch.setattr(timezone, "now", lambda: later)
    activations.settle_negative(activation=pending, user=play.gm)
    refresh(pending, play.tomas, play.ines_aspect)
    assert (pending.status, play.tomas.hitos.drama_points, play.ines_aspect.exhausted) == (
        Activation.Status.ACCEPTED,
        3,
        True,
    )


def test_k17_k15_refusing_an_exhausted_element_gives_the_aspect_back(play):
    # K15 — «Net: activator 0, affected 0»: Tomás pays nothing (he has no points),
    # Inés gets her aspect back, the element does not happen.
    play.tomas.hitos.drama_points = 0
    play.tomas.hitos.save(update_fields=["drama_points"])
    response = client_for(play.ana).post(
        narrative_url(play),
        {
            "activator": str(play.ines.pk),
            "aspect_text": "",
            "note": "Empuja la escalera hacia Tomás",
            "affected": str(play.tomas.pk),
            "payment": f"a{play.ines_aspect.pk}",
        },
    )
    assert response.status_code == 302
    activation = Activation.objects.get()
    page = client_for(play.bruno).get(drama_url(play)).content.decode()
    assert "Rechazar (el aspecto agotado vuelve a quien lo agotó)" in page
    assert "Aceptar (+1 punto)" not in page
    answer = reverse("hitos:activation-answer", args=[activation.pk])
    assert client_for(play.bruno).post(answer, {"respuesta": "cancelar"}).status_code == 302
    refresh(activation, play.ines, play.tomas, play.ines_aspect)
    assert activation.status == Activation.Status.CANCELLED
    assert (play.ines.hitos.drama_points, play.tomas.hitos.drama_points) == (3, 0)
    assert not play.ines_aspect.exhausted
    recovered = SheetEvent.objects.filter(character=play.ines, kind=HitosEvent.ASPECT).order_by("pk").last()
    assert recovered.actor == play.bruno
    assert "recupera «Ágil como una gata»" in recovered.summary
    assert "rechaza el elemento narrativo" in recovered.reason
    assert not SheetEvent.objects.filter(kind=HitosEvent.DRAMA).exists()


def test_k17_a_refusal_after_the_aspect_recovered_changes_nothing_more(play):
    activation = exhaust_element(play, affected=play.tomas)
    play.ines_aspect.exhausted_until = ""
    play.ines_aspect.save(update_fields=["exhausted_until"])  # a new session came first
    events = SheetEvent.objects.count()
    activations.answer_narrative(activation=activation, user=play.bruno, accept=False)
    refresh(activation, play.ines_aspect)
    assert activation.status == Activation.Status.CANCELLED
    assert not play.ines_aspect.exhausted
    assert SheetEvent.objects.count() == events


def test_k17_the_drama_page_offers_exhausting_only_to_a_player(play):
    play.tomas_aspect.exhausted_until = Aspect.Duration.SESSION
    play.tomas_aspect.save(update_fields=["exhausted_until"])
    ana_page = client_for(play.ana).get(drama_url(play)).content.decode()
    assert "Cómo pagas" in ana_page
    assert "Agotar «Ágil como una gata» (Inés Salcedo)" in ana_page
    assert "Fuerte como un roble" not in ana_page
    # Bruno's only aspect is exhausted: nothing to exhaust, a point it is.
    bruno_page = client_for(play.bruno).get(drama_url(play)).content.decode()
    assert "Cómo pagas" not in bruno_page and "Activar (1 punto)" in bruno_page
    # H24 — the GM's pool and the NPCs pay points.
    Aspect.objects.create(character=play.npc, kind=Aspect.Kind.HITO, phrase="Sabe demasiado")
    gm_page = client_for(play.gm).get(drama_url(play)).content.decode()
    assert "Cómo pagas" not in gm_page and "Sabe demasiado" not in gm_page


def test_k17_form_errors_keep_what_was_typed(play):
    before = counts()
    # Paying a point needs the aspect written.
    response = client_for(play.ana).post(
        narrative_url(play),
        {"activator": str(play.ines.pk), "aspect_text": "", "note": "Un salto imposible", "payment": "point"},
    )
    html = response.content.decode()
    assert response.status_code == 200
    assert "Escribe el aspecto que activas." in html and "Un salto imposible" in html
    # Exhausting one aspect while writing another.
    response = client_for(play.ana).post(
        narrative_url(play),
        {
            "activator": str(play.ines.pk),
            "aspect_text": "Conoce la mansión",
            "note": "Hay un pasadizo",
            "payment": f"a{play.ines_aspect.pk}",
        },
    )
    html = response.content.decode()
    assert response.status_code == 200
    assert "deja vacío el campo «Aspecto» o escribe esa frase" in html
    assert 'value="Conoce la mansión"' in html and "Hay un pasadizo" in html
    assert f'value="a{play.ines_aspect.pk}" selected' in html
    # Another character's aspect is not even a choice.
    response = client_for(play.ana).post(
        narrative_url(play),
        {"activator": str(play.ines.pk), "aspect_text": "", "note": "y", "payment": f"a{play.tomas_aspect.pk}"},
    )
    assert response.status_code == 200
    assert counts() == before


def test_k17_with_two_characters_the_aspect_is_the_activators(play):
    from tests.factories import play_character

    second = play_character(play.campaign, play.ana, "Berta Ruiz")
    own = Aspect.objects.create(character=second, kind=Aspect.Kind.CONCEPT, phrase="Periodista tenaz")
    page = client_for(play.ana).get(drama_url(play)).content.decode()
    assert "Agotar «Periodista tenaz» (Berta Ruiz)" in page
    before = counts()
    response = client_for(play.ana).post(
        narrative_url(play),
        {"activator": str(play.ines.pk), "aspect_text": "", "note": "Pregunta", "payment": f"a{own.pk}"},
    )
    assert response.status_code == 200
    assert (
        "Ese aspecto no es de quien activa: elige uno de sus aspectos o paga con un punto." in response.content.decode()
    )
    assert counts() == before
    response = client_for(play.ana).post(
        narrative_url(play),
        {"activator": str(second.pk), "aspect_text": "", "note": "Pregunta", "payment": f"a{own.pk}"},
    )
    assert response.status_code == 302
    refresh(own)
    assert own.exhausted
