"""The drama page: the GM's pool, balances, recent moves, narrative activations (H23, H24)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.exceptions import PermissionDenied, ValidationError
from django.urls import reverse
from django.utils import timezone

from sheets.models import SheetEvent
from systems.hitos.activations import services as activations
from systems.hitos.campaign import gm_pool
from systems.hitos.models import Activation, HitosEvent
from tests.conftest import client_for
from tests.factories import UserFactory, play_character


def drama_url(play) -> str:
    return reverse("hitos:drama", args=[play.campaign.slug])


def refresh(*objects):
    for obj in objects:
        obj.refresh_from_db()


def test_members_see_balances_and_recent_moves(play):
    activations.narrative_activation(
        campaign=play.campaign, user=play.ana, character_or_gm=play.ines, aspect_text="Ágil como una gata", note="Salto"
    )
    for user in (play.gm, play.ana, play.reader):
        response = client_for(user).get(drama_url(play))
        assert response.status_code == 200
        html = response.content.decode()
        assert "Reserva de la dirección: 5" in html
        assert (
            f'<tr id="drama-ch{play.ines.pk}"><td>Inés Salcedo</td><td>Ana</td><td class="text-end">2</td></tr>' in html
        )
        assert "3 → 2" in html and "Salto" in html
    gm_page = client_for(play.gm).get(drama_url(play)).content.decode()
    assert "Fijar la reserva" in gm_page
    reader_page = client_for(play.reader).get(drama_url(play)).content.decode()
    assert "Fijar la reserva" not in reader_page
    assert "Activación narrativa" not in reader_page


def test_the_fragment_has_no_page_chrome(play):
    response = client_for(play.ana).get(drama_url(play), HTTP_HX_REQUEST="true")
    html = response.content.decode()
    assert response.status_code == 200
    assert "<html" not in html
    assert html.strip().startswith('<section id="drama-balances"')


def test_outsiders_are_refused(play, private_play):
    assert client_for(play.outsider).get(drama_url(play)).status_code == 403
    assert client_for(private_play.outsider).get(drama_url(private_play)).status_code == 404
    assert client_for(play.ana).post(drama_url(play)).status_code == 405


def test_the_page_costs_the_same_queries_whatever_its_length(play, django_assert_max_num_queries):
    play.campaign.game_state = {"gm_pool": 99}
    play.campaign.save(update_fields=["game_state"])
    for n in range(5):
        activations.narrative_activation(
            campaign=play.campaign, user=play.gm, character_or_gm=None, aspect_text=f"Niebla {n}", note="Se espesa"
        )
        activations.narrative_activation(
            campaign=play.campaign,
            user=play.gm,
            character_or_gm=None,
            aspect_text=f"Eco {n}",
            note="Un ruido",
            affected=play.tomas if n == 0 else None,
        )
    client = client_for(play.gm)
    with django_assert_max_num_queries(12) as captured:
        client.get(drama_url(play))
    few = len(captured)
    for n in range(5):
        activations.narrative_activation(
            campaign=play.campaign, user=play.gm, character_or_gm=None, aspect_text=f"Más {n}", note="Otro"
        )
        activations.narrative_activation(
            campaign=play.campaign,
            user=play.gm,
            character_or_gm=None,
            aspect_text=f"Pendiente {n}",
            note="Daña",
            affected=play.ines,
        )
        # More characters too: each one's drama points come with the list.
        play_character(play.campaign, UserFactory(), f"Invitado {n}")
    with django_assert_max_num_queries(few):
        client.get(drama_url(play))


def test_the_gm_sets_the_pool_with_a_reason(play):
    url = reverse("hitos:drama-pool-set", args=[play.campaign.slug])
    response = client_for(play.gm).post(url, {"value": "8", "reason": "Nueva sesión"})
    assert response.status_code == 302
    refresh(play.campaign)
    assert gm_pool(play.campaign) == 8
    event = SheetEvent.objects.get(character=None, kind=HitosEvent.DRAMA)
    assert (event.before, event.after, event.reason) == ({"gm_drama_points": 5}, {"gm_drama_points": 8}, "Nueva sesión")
    # Without a reason the form comes back with what was typed.
    response = client_for(play.gm).post(url, {"value": "3", "reason": ""})
    assert response.status_code == 200
    assert 'value="3"' in response.content.decode()
    refresh(play.campaign)
    assert gm_pool(play.campaign) == 8
    assert client_for(play.ana).post(url, {"value": "50", "reason": "¡Ja!"}).status_code == 403
    assert client_for(play.outsider).post(url, {"value": "50", "reason": "x"}).status_code == 403


def test_narrative_activation_without_harm(play):
    # H23 — «introducing a narrative element costs 1 point»
    activation = activations.narrative_activation(
        campaign=play.campaign,
        user=play.ana,
        character_or_gm=play.ines,
        aspect_text="Conoce la mansión",
        note="Hay un pasadizo tras el tapiz",
    )
    refresh(play.ines)
    assert play.ines.hitos.drama_points == 2
    assert activation.status == Activation.Status.DONE
    assert SheetEvent.objects.get(character=play.ines).reason.endswith("Hay un pasadizo tras el tapiz")


def test_narrative_harm_accepted_gives_the_point(play):
    # H23 — «el punto dramático que gastas lo gana el personaje afectado»
    activation = activations.narrative_activation(
        campaign=play.campaign,
        user=play.ana,
        character_or_gm=play.ines,
        aspect_text="Torpe",
        note="La lámpara cae junto a Tomás",
        affected=play.tomas,
    )
    assert activation.status == Activation.Status.PENDING
    with pytest.raises(PermissionDenied):
        activations.answer_narrative(activation=activation, user=play.ana, accept=True)
    activations.answer_narrative(activation=activation, user=play.bruno, accept=True)
    refresh(play.ines, play.tomas)
    assert (play.ines.hitos.drama_points, play.tomas.hitos.drama_points) == (2, 4)


def test_narrative_harm_refused_through_the_page(play):
    # H23 — «puede rechazar tu elemento narrativo pagándote un punto dramático»;
    # K15 — the literal reading: the GM gets the point back, Tomás pays nothing.
    response = client_for(play.gm).post(
        reverse("hitos:drama-narrative", args=[play.campaign.slug]),
        {"activator": "", "aspect_text": "Tormenta", "note": "Un rayo cae cerca", "affected": str(play.tomas.pk)},
    )
    assert response.status_code == 302
    activation = Activation.objects.get()
    refresh(play.campaign)
    assert gm_pool(play.campaign) == 4
    page = client_for(play.bruno).get(drama_url(play)).content.decode()
    assert "Rechazar (el punto vuelve a quien lo gastó)" in page
    answer = reverse("hitos:activation-answer", args=[activation.pk])
    response = client_for(play.bruno).post(answer, {"respuesta": "cancelar"})
    assert response.status_code == 302
    refresh(play.campaign, play.tomas, activation)
    assert (gm_pool(play.campaign), play.tomas.hitos.drama_points) == (5, 3)
    assert activation.status == Activation.Status.CANCELLED


def test_narrative_form_errors_and_rights(play):
    url = reverse("hitos:drama-narrative", args=[play.campaign.slug])
    response = client_for(play.ana).post(url, {"activator": str(play.ines.pk), "aspect_text": "Ágil", "note": ""})
    assert response.status_code == 200
    assert 'value="Ágil"' in response.content.decode()
    # A player may not spend the GM's pool nor another player's character.
    assert client_for(play.ana).post(url, {"activator": "", "aspect_text": "x", "note": "y"}).status_code == 403
    response = client_for(play.ana).post(url, {"activator": str(play.tomas.pk), "aspect_text": "x", "note": "y"})
    assert response.status_code == 200
    refresh(play.tomas)
    assert play.tomas.hitos.drama_points == 3
    assert client_for(play.reader).post(url, {"activator": "", "aspect_text": "x", "note": "y"}).status_code == 403
    with pytest.raises(ValidationError):
        activations.narrative_activation(
            campaign=play.campaign,
            user=play.ana,
            character_or_gm=play.ines,
            aspect_text="x",
            note="y",
            affected=play.ines,
        )


def test_narrative_without_points_changes_nothing(play):
    play.ines.hitos.drama_points = 0
    play.ines.hitos.save(update_fields=["drama_points"])
    with pytest.raises(ValidationError, match="no tiene puntos"):
        activations.narrative_activation(
            campaign=play.campaign, user=play.ana, character_or_gm=play.ines, aspect_text="x", note="y"
        )
    assert not Activation.objects.exists()
    assert not SheetEvent.objects.exists()


def test_the_gm_settles_an_unanswered_narrative_after_the_deadline(play, monkeypatch):
    activation = activations.narrative_activation(
        campaign=play.campaign, user=play.gm, character_or_gm=None, aspect_text="x", note="y", affected=play.ines
    )
    settle = reverse("hitos:activation-settle", args=[activation.pk])
    client_for(play.gm).post(settle)
    refresh(activation)
    assert activation.status == Activation.Status.PENDING
    later = timezone.now() + timedelta(hours=49)
    monkeypatch.setattr(timezone, "now", lambda: later)
    assert "Resolver (plazo vencido)" in client_for(play.gm).get(drama_url(play)).content.decode()
    client_for(play.gm).post(settle)
    refresh(activation, play.ines)
    assert activation.status == Activation.Status.ACCEPTED
    assert play.ines.hitos.drama_points == 4


def test_narrative_harm_notifies_the_affected_player(play):
    from campaigns.models import Notification

    activations.narrative_activation(
        campaign=play.campaign,
        user=play.ana,
        character_or_gm=play.ines,
        aspect_text="Torpe",
        note="La lámpara cae junto a Tomás",
        affected=play.tomas,
    )
    notification = Notification.objects.get(kind=Notification.Kind.ANSWER)
    assert notification.user == play.bruno
    assert "Tomás Ferrer" in notification.text and "Torpe" in notification.text
    assert notification.url.endswith(f"/partidas/{play.campaign.slug}/drama/")
