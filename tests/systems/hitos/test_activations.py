"""Aspect activations at the table (H13–H27, H92): services and views."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.exceptions import PermissionDenied, ValidationError
from django.urls import reverse
from django.utils import timezone

from campaigns.models import Notification
from rolls.models import RollEntry
from sheets.models import SheetEvent
from systems.hitos.activations import services as activations
from systems.hitos.campaign import gm_pool
from systems.hitos.checks.services import check_setup, table_check
from systems.hitos.models import Activation, Aspect, HitosEvent, Skill, TableRollKind
from table.models import TableRoll
from tests.conftest import client_for
from tests.factories import client_seed


def roll_for(play, character=None, user=None, **extra) -> TableRoll:
    character = character or play.ines
    return table_check(
        campaign=play.campaign,
        user=user or character.owner,
        setup=check_setup(character, characteristic="reflejos", skill=extra.pop("skill", "Sigilo")),
        purpose="Cruzar el vestíbulo sin ruido",
        difficulty=15,
        character=character,
        scene=play.scene,
        post=play.post,
        client_seed=client_seed(),
        **extra,
    )


def refresh(*objects):
    for obj in objects:
        obj.refresh_from_db()


def counts() -> tuple[int, int, int]:
    return RollEntry.objects.count(), SheetEvent.objects.count(), Activation.objects.count()


@pytest.fixture
def roll(play) -> TableRoll:
    return roll_for(play)


# --- Positive activation (H13–H16) -------------------------------------------------------


def test_owner_pays_one_point_and_the_reroll_reads_positively(play, roll):
    # H14 — «Gasta un punto dramático y repite cuantos dados quieras de la tirada»
    first = roll.latest
    activation = activations.activate_positive(
        table_roll=roll, user=play.ana, aspect_choice=f"a{play.ines_aspect.pk}", positions=[0, 2], payment="point"
    )
    refresh(play.ines, roll)
    assert play.ines.hitos.drama_points == 2
    assert activation.status == Activation.Status.DONE
    assert activation.payment == Activation.Payment.POINT
    assert activation.reroll == roll.latest
    assert activation.against == first
    assert roll.latest.parent_id == first.pk
    signed = roll.latest.entry
    assert signed["kind"] == "reroll"
    assert signed["rerolled"] == [0, 2]
    assert signed["dice"][1] == first.entry["dice"][1]
    assert signed["activation"] == "positive"
    assert signed["aspect"] == "Ágil como una gata"
    assert signed["payment"] == "point"
    assert signed["game"]["reading"] == "positive"
    event = SheetEvent.objects.get(character=play.ines, kind=HitosEvent.DRAMA)
    assert (event.before, event.after, event.actor) == ({"drama_points": 3}, {"drama_points": 2}, play.ana)
    assert "Ágil como una gata" in event.reason


def test_exhausting_an_own_aspect_costs_no_point(play, roll):
    # H27 — «Un jugador solo puede agotar los aspectos de su personaje»
    activations.activate_positive(
        table_roll=roll, user=play.ana, aspect_choice=f"a{play.ines_aspect.pk}", positions=[1], payment="exhaust"
    )
    refresh(play.ines, play.ines_aspect)
    assert play.ines.hitos.drama_points == 3
    assert play.ines_aspect.exhausted_until == Aspect.Duration.SESSION
    assert roll.latest.entry["payment"] == "exhaust"
    assert SheetEvent.objects.filter(character=play.ines, kind=HitosEvent.ASPECT).count() == 1
    # An exhausted aspect cannot be used again by its own player.
    second = roll_for(play)
    with pytest.raises(ValidationError):
        activations.activate_positive(
            table_roll=second, user=play.ana, aspect_choice=f"a{play.ines_aspect.pk}", positions=[1], payment="point"
        )


def test_another_characters_aspect_cannot_be_exhausted(play, roll):
    before = counts()
    with pytest.raises(ValidationError, match="propio personaje"):
        activations.activate_positive(
            table_roll=roll, user=play.ana, aspect_choice=f"a{play.tomas_aspect.pk}", positions=[0], payment="exhaust"
        )
    assert counts() == before


def test_a_helper_pays_with_their_own_character(play, roll):
    # H11 — «aspecto ajeno»: Bruno helps Inés with Tomás's point.
    activations.activate_positive(
        table_roll=roll, user=play.bruno, aspect_choice=f"a{play.tomas_aspect.pk}", positions=[0], payment="point"
    )
    refresh(play.ines, play.tomas, roll)
    assert (play.ines.hitos.drama_points, play.tomas.hitos.drama_points) == (3, 2)
    assert roll.latest.entry["target_user"] == f"u{play.ana.pk}"
    assert roll.latest.entry["paid_by"] == f"u{play.bruno.pk}"


def test_a_scene_aspect_can_be_activated(play, roll):
    activation = activations.activate_positive(
        table_roll=roll, user=play.ana, aspect_choice=f"s{play.scene_aspect.pk}", positions=[2], payment="point"
    )
    assert activation.scene_aspect == play.scene_aspect
    assert activation.aspect_text == "Oscuridad casi total"


def test_no_points_and_nothing_to_exhaust_changes_nothing(play, roll):
    play.ines.hitos.drama_points = 0
    play.ines.hitos.save(update_fields=["drama_points"])
    before = counts()
    with pytest.raises(ValidationError) as info:
        activations.activate_positive(
            table_roll=roll, user=play.ana, aspect_choice=f"s{play.scene_aspect.pk}", positions=[0], payment="point"
        )
    assert "no tiene puntos dramáticos" in info.value.messages[0]
    assert counts() == before
    refresh(play.ines, roll)
    assert play.ines.hitos.drama_points == 0
    assert roll.latest == roll.first


def test_the_gm_activates_for_an_npc_from_the_pool(play):
    # H24 — «cualquier punto que gasten proviene del director de juego»
    npc_roll = roll_for(play, character=play.npc, user=play.gm)
    activations.activate_positive(
        table_roll=npc_roll, user=play.gm, aspect_choice=f"s{play.scene_aspect.pk}", positions=[0], payment="point"
    )
    refresh(play.campaign)
    assert gm_pool(play.campaign) == 4
    assert Activation.objects.get().payment == Activation.Payment.GM_POOL


def test_arcane_action_may_take_degeneracion_instead(play):
    # H92 — «ganar un punto de Degeneración en lugar de gastar un punto dramático»
    Skill.objects.create(character=play.ines, name="Hechicería", category="arcana", value=2)
    arcane = roll_for(play, skill="Hechicería")
    assert arcane.facts["arcane"]
    activations.activate_positive(
        table_roll=arcane, user=play.ana, aspect_choice=f"a{play.ines_aspect.pk}", positions=[0], payment="degeneracion"
    )
    refresh(play.ines)
    assert (play.ines.hitos.drama_points, play.ines.hitos.degeneracion) == (3, 1)
    assert Activation.objects.get().payment == Activation.Payment.DEGENERACION


def test_degeneracion_is_refused_without_an_arcane_skill(play, roll):
    with pytest.raises(ValidationError):
        activations.activate_positive(
            table_roll=roll,
            user=play.ana,
            aspect_choice=f"a{play.ines_aspect.pk}",
            positions=[0],
            payment="degeneracion",
        )


def test_horror_rolls_are_not_rerolled_by_aspects(play):
    # Q11 — aspects shift the horror level instead.
    horror = roll_for(play, kind=TableRollKind.HORROR)
    with pytest.raises(ValidationError, match="horror"):
        activations.activate_positive(
            table_roll=horror, user=play.ana, aspect_choice=f"a{play.ines_aspect.pk}", positions=[0], payment="point"
        )


def test_readers_and_players_without_a_character_cannot_activate(play, roll):
    with pytest.raises(PermissionDenied):
        activations.activate_positive(
            table_roll=roll, user=play.reader, aspect_choice=f"s{play.scene_aspect.pk}", positions=[0], payment="point"
        )
    play.tomas.status = "draft"
    play.tomas.save(update_fields=["status"])
    with pytest.raises(PermissionDenied):
        activations.activate_positive(
            table_roll=roll, user=play.bruno, aspect_choice=f"s{play.scene_aspect.pk}", positions=[0], payment="point"
        )


# --- Negative activation (H18–H25) -------------------------------------------------------


def negative_by_gm(play, roll, positions=(0, 1)) -> Activation:
    return activations.activate_negative(
        table_roll=roll, user=play.gm, aspect_choice=f"a{play.ines_aspect.pk}", positions=list(positions)
    )


def test_gm_negative_pays_from_the_pool_and_notifies_the_owner(play, roll, monkeypatch):
    # H18 — «Obligas a un jugador a repetir tantos dados de su tirada como quieras»
    moment = timezone.now()
    monkeypatch.setattr(timezone, "now", lambda: moment)
    activation = negative_by_gm(play, roll)
    refresh(play.campaign, play.ines)
    assert gm_pool(play.campaign) == 4
    assert play.ines.hitos.drama_points == 3
    assert activation.status == Activation.Status.PENDING
    assert activation.positions == [0, 1]
    assert activation.deadline == moment + timedelta(hours=48)
    notification = Notification.objects.get(user=play.ana, kind=Notification.Kind.ANSWER)
    assert "Ágil como una gata" in notification.text
    assert RollEntry.objects.filter(kind="reroll").count() == 0


def test_accepting_rerolls_negatively_and_gains_a_point(play, roll):
    # H22 — «aceptar la repetición y ganar un dado de drama»
    activation = negative_by_gm(play, roll)
    activations.answer_negative(activation=activation, user=play.ana, accept=True)
    refresh(play.campaign, play.ines, roll, activation)
    assert (gm_pool(play.campaign), play.ines.hitos.drama_points) == (4, 4)
    assert activation.status == Activation.Status.ACCEPTED
    assert activation.reroll == roll.latest
    assert roll.latest.entry["game"]["reading"] == "negative"
    assert roll.latest.entry["rerolled"] == [0, 1]
    assert roll.latest.entry["activation"] == "negative"
    assert roll.latest.entry["user"] == f"u{play.ana.pk}"


def test_cancelling_costs_the_owner_a_point_and_pays_the_gm_two(play, roll):
    # H22 — «recuperará el punto que había gastado y, además, recibe el punto»
    activation = negative_by_gm(play, roll)
    activations.answer_negative(activation=activation, user=play.ana, accept=False)
    refresh(play.campaign, play.ines, roll, activation)
    assert (gm_pool(play.campaign), play.ines.hitos.drama_points) == (6, 2)
    assert activation.status == Activation.Status.CANCELLED
    assert roll.latest == roll.first


def test_cancelling_without_points_is_refused_and_changes_nothing(play, roll):
    activation = negative_by_gm(play, roll)
    play.ines.hitos.drama_points = 0
    play.ines.hitos.save(update_fields=["drama_points"])
    before = counts()
    with pytest.raises(ValidationError, match="para cancelar"):
        activations.answer_negative(activation=activation, user=play.ana, accept=False)
    assert counts() == before
    refresh(activation, play.campaign)
    assert activation.status == Activation.Status.PENDING
    assert gm_pool(play.campaign) == 4


def test_a_player_negative_activation(play, roll):
    activation = activations.activate_negative(
        table_roll=roll, user=play.bruno, aspect_choice=f"a{play.tomas_aspect.pk}", positions=[2]
    )
    refresh(play.tomas)
    assert play.tomas.hitos.drama_points == 2
    assert activation.activator_character == play.tomas
    activations.answer_negative(activation=activation, user=play.ana, accept=False)
    refresh(play.tomas, play.ines)
    assert (play.tomas.hitos.drama_points, play.ines.hitos.drama_points) == (4, 2)


def test_nobody_activates_against_their_own_roll(play, roll):
    with pytest.raises(PermissionDenied):
        activations.activate_negative(
            table_roll=roll, user=play.ana, aspect_choice=f"a{play.ines_aspect.pk}", positions=[0]
        )


def test_the_gm_may_use_exhausted_aspects_and_free_text(play, roll):
    # H27 — «puede ser activado por otros jugadores o por el director de juego en contra»
    play.ines_aspect.exhausted_until = Aspect.Duration.SESSION
    play.ines_aspect.save(update_fields=["exhausted_until"])
    options = activations.aspect_options(table_roll=roll, activator=None, negative=True, is_gm=True)
    assert f"a{play.ines_aspect.pk}" in [o.value for o in options]
    assert f"a{play.tomas_aspect.pk}" not in [o.value for o in options]
    activation = activations.activate_negative(
        table_roll=roll, user=play.gm, aspect_choice="t:Una tormenta repentina", positions=[0]
    )
    assert activation.aspect_text == "Una tormenta repentina"


def test_players_cannot_use_free_text(play, roll):
    with pytest.raises(ValidationError):
        activations.activate_negative(table_roll=roll, user=play.bruno, aspect_choice="t:Lo que sea", positions=[0])


def test_one_pending_activation_per_roll(play, roll):
    negative_by_gm(play, roll)
    with pytest.raises(ValidationError, match="espera respuesta"):
        activations.activate_negative(
            table_roll=roll, user=play.bruno, aspect_choice=f"a{play.tomas_aspect.pk}", positions=[0]
        )
    with pytest.raises(ValidationError, match="espera respuesta"):
        activations.activate_positive(
            table_roll=roll, user=play.ana, aspect_choice=f"a{play.ines_aspect.pk}", positions=[0], payment="point"
        )


def test_answering_twice_is_refused(play, roll):
    activation = negative_by_gm(play, roll)
    activations.answer_negative(activation=activation, user=play.ana, accept=True)
    with pytest.raises(ValidationError, match="ya tiene respuesta"):
        activations.answer_negative(activation=activation, user=play.ana, accept=False)


def test_only_the_owner_answers(play, roll):
    activation = negative_by_gm(play, roll)
    for user in (play.bruno, play.gm):
        with pytest.raises(PermissionDenied):
            activations.answer_negative(activation=activation, user=user, accept=True)


def test_the_gm_settles_only_after_the_deadline(play, roll, monkeypatch):
    activation = negative_by_gm(play, roll)
    with pytest.raises(ValidationError, match="plazo"):
        activations.settle_negative(activation=activation, user=play.gm)
    later = timezone.now() + timedelta(hours=49)
    monkeypatch.setattr(timezone, "now", lambda: later)
    with pytest.raises(PermissionDenied):
        activations.settle_negative(activation=activation, user=play.bruno)
    activations.settle_negative(activation=activation, user=play.gm)
    refresh(activation, play.ines)
    assert activation.status == Activation.Status.ACCEPTED
    assert activation.decided_by == play.gm
    assert play.ines.hitos.drama_points == 4


def test_a_negative_activation_against_an_npc_is_answered_by_the_gm(play):
    npc_roll = roll_for(play, character=play.npc, user=play.gm)
    activation = activations.activate_negative(
        table_roll=npc_roll, user=play.ana, aspect_choice=f"s{play.scene_aspect.pk}", positions=[0]
    )
    activations.answer_negative(activation=activation, user=play.gm, accept=True)
    refresh(play.campaign, play.ines)
    # H24 — the NPC's point goes to the GM's pool.
    assert (play.ines.hitos.drama_points, gm_pool(play.campaign)) == (2, 6)


# --- Views ---------------------------------------------------------------------------------


def positive_url(roll) -> str:
    return reverse("hitos:activation-positive", args=[roll.pk])


def negative_url(roll) -> str:
    return reverse("hitos:activation-negative", args=[roll.pk])


def test_positive_form_page_and_fragment(play, roll):
    client = client_for(play.ana)
    page = client.get(positive_url(roll))
    assert page.status_code == 200
    html = page.content.decode()
    assert "<html" in html
    assert 'name="dice" value="0"' in html
    assert "Ágil como una gata (Inés Salcedo)" in html
    assert "Oscuridad casi total (situación)" in html
    fragment = client.get(positive_url(roll), HTTP_HX_REQUEST="true")
    text = fragment.content.decode()
    assert fragment.status_code == 200
    assert "<html" not in text
    assert f'id="activacion-{roll.pk}"' in text
    assert "Probabilidad de éxito" in text


def test_positive_post_with_htmx_returns_the_updated_card(play, roll):
    response = client_for(play.ana).post(
        positive_url(roll),
        {"aspect": f"a{play.ines_aspect.pk}", "payment": "point", "dice": ["0", "1", "2"]},
        HTTP_HX_REQUEST="true",
    )
    assert response.status_code == 200
    refresh(roll, play.ines)
    assert play.ines.hitos.drama_points == 2
    html = response.content.decode()
    assert "<html" not in html
    assert f'id="tirada-{roll.pk}"' in html
    for die in roll.latest.entry["dice"]:
        assert f'<span class="roll-die-value">{die}</span>' in html
    # The scene page's drama points follow, out of band.
    assert f'id="puntos-ch{play.ines.pk}"' in html and 'hx-swap-oob="true"' in html
    assert "Inés Salcedo: 2 puntos dramáticos" in html


def test_the_gm_sees_the_pool_drop_after_a_negative_activation(play, roll):
    response = client_for(play.gm).post(
        reverse("hitos:activation-negative", args=[roll.pk]),
        {"aspect": f"s{play.scene_aspect.pk}", "dice": ["0"]},
        HTTP_HX_REQUEST="true",
    )
    assert response.status_code == 200
    html = response.content.decode()
    assert 'id="puntos-dj"' in html and "Reserva de la dirección: 4 puntos" in html


def test_positive_post_without_htmx_redirects_to_the_post(play, roll):
    response = client_for(play.ana).post(
        positive_url(roll), {"aspect": f"a{play.ines_aspect.pk}", "payment": "exhaust", "dice": ["1"]}
    )
    assert response.status_code == 302
    assert response.url == play.post.get_absolute_url()


def test_no_points_shows_the_message_and_changes_nothing(play, roll):
    play.ines.hitos.drama_points = 0
    play.ines.hitos.save(update_fields=["drama_points"])
    before = counts()
    response = client_for(play.ana).post(
        positive_url(roll),
        {"aspect": f"s{play.scene_aspect.pk}", "payment": "point", "dice": ["0"]},
        HTTP_HX_REQUEST="true",
    )
    assert response.status_code == 200
    assert response["HX-Retarget"] == f"#activacion-{roll.pk}"
    assert "no tiene puntos dramáticos" in response.content.decode()
    assert counts() == before


@pytest.mark.parametrize("dice", [[], ["3"], ["x"], ["-1"]])
def test_bad_dice_positions_are_a_bad_request(play, roll, dice):
    before = counts()
    response = client_for(play.ana).post(
        positive_url(roll), {"aspect": f"a{play.ines_aspect.pk}", "payment": "point", "dice": dice}
    )
    assert response.status_code == 400
    assert counts() == before
    response = client_for(play.gm).post(negative_url(roll), {"aspect": f"a{play.ines_aspect.pk}", "dice": dice})
    assert response.status_code == 400


def test_access_matrix(play, private_play):
    roll = roll_for(play)
    # A player without an approved character may not help.
    play.tomas.status = "draft"
    play.tomas.save(update_fields=["status"])
    assert client_for(play.bruno).get(positive_url(roll)).status_code == 403
    assert client_for(play.reader).get(positive_url(roll)).status_code == 403
    assert client_for(play.outsider).get(positive_url(roll)).status_code == 403  # public campaign
    assert client_for(play.ana).get(negative_url(roll)).status_code == 403  # own roll
    assert client_for(play.gm).get(negative_url(roll)).status_code == 200
    assert client_for(None).get(positive_url(roll)).status_code == 302
    hidden = roll_for(private_play)
    assert client_for(private_play.outsider).get(positive_url(hidden)).status_code == 404
    assert client_for(play.ana).get(positive_url(hidden)).status_code == 404


def test_rolls_in_scenes_the_user_cannot_see_are_not_found(play, roll):
    play.scene.everyone = False
    play.scene.save(update_fields=["everyone"])
    play.scene.participants.add(play.ana)
    assert client_for(play.bruno).get(positive_url(roll)).status_code == 404
    assert client_for(play.ana).get(positive_url(roll)).status_code == 200


def test_wrong_methods(play, roll):
    activation = negative_by_gm(play, roll)
    client = client_for(play.ana)
    assert client.put(positive_url(roll)).status_code == 405
    assert client.get(reverse("hitos:activation-answer", args=[activation.pk])).status_code == 405
    assert client.get(reverse("hitos:activation-settle", args=[activation.pk])).status_code == 405


def test_negative_then_accept_through_the_views(play, roll):
    response = client_for(play.gm).post(
        negative_url(roll),
        {"aspect": f"a{play.ines_aspect.pk}", "dice": ["0", "2"], "note": "Te oyen"},
        HTTP_HX_REQUEST="true",
    )
    assert response.status_code == 200
    html = response.content.decode()
    assert "La dirección activa «Ágil como una gata» en contra: repetir los dados 1, 3." in html
    assert "Aceptar (+1 punto)" not in html  # the GM is not the owner
    activation = Activation.objects.get()
    answer = reverse("hitos:activation-answer", args=[activation.pk])
    # Bruno sees the roll but may not answer for Ana.
    assert client_for(play.bruno).post(answer, {"respuesta": "aceptar"}).status_code == 403
    assert client_for(play.ana).post(answer, {"respuesta": "quizá"}).status_code == 400
    response = client_for(play.ana).post(answer, {"respuesta": "aceptar"}, HTTP_HX_REQUEST="true")
    assert response.status_code == 200
    refresh(roll, play.ines)
    assert play.ines.hitos.drama_points == 4
    assert roll.latest.entry["game"]["reading"] == "negative"
    assert f'id="tirada-{roll.pk}"' in response.content.decode()
    # Answering again: the card comes back with the message, nothing changes.
    again = client_for(play.ana).post(answer, {"respuesta": "cancelar"}, HTTP_HX_REQUEST="true")
    assert "ya tiene respuesta" in again.content.decode()
    refresh(play.ines)
    assert play.ines.hitos.drama_points == 4


def test_the_owner_sees_the_answer_buttons_on_the_card(play, roll):
    negative_by_gm(play, roll)
    response = client_for(play.ana).get(positive_url(roll))
    # The form page links back; the card itself is rendered by the scene page.
    assert response.status_code == 200
    html = _actions_html(play, play.ana, [roll])[0]
    assert "Aceptar (+1 punto)" in html and "Cancelar (−1 punto)" in html
    assert "Activar aspecto" not in html


def test_settle_view_before_and_after_the_deadline(play, roll, monkeypatch):
    activation = negative_by_gm(play, roll)
    settle = reverse("hitos:activation-settle", args=[activation.pk])
    assert client_for(play.ana).post(settle).status_code == 403
    response = client_for(play.gm).post(settle)
    assert response.status_code == 302
    refresh(activation)
    assert activation.status == Activation.Status.PENDING
    later = timezone.now() + timedelta(hours=49)
    monkeypatch.setattr(timezone, "now", lambda: later)
    response = client_for(play.gm).post(settle, HTTP_HX_REQUEST="true")
    assert response.status_code == 200
    refresh(activation)
    assert activation.status == Activation.Status.ACCEPTED


def _loaded(rolls):
    """The rolls as a page loads them for ``cards_for``."""
    from systems.hitos.cards import activations_prefetch

    return list(
        TableRoll.objects.filter(pk__in=[r.pk for r in rolls])
        .select_related("character", "owner", "first__user", "latest__user")
        .prefetch_related(activations_prefetch())
        .order_by("pk")
    )


def _actions_html(play, user, rolls) -> list[str]:
    """Each roll's actions, rendered through ``cards_for`` as the pages do."""
    from django.template.loader import render_to_string

    from campaigns.permissions import campaign_access
    from table.cards import cards_for

    cards = cards_for(_loaded(rolls), access=campaign_access(user, play.campaign))
    return [render_to_string("hitos/_roll_actions.html", {"card": cards[r.pk]}) for r in rolls]


@pytest.mark.parametrize("pending", [True, False], ids=["pending", "idle"])
def test_actions_partial_makes_no_queries_beyond_the_prefetch(play, pending, django_assert_num_queries):
    from django.template.loader import render_to_string

    from campaigns.permissions import campaign_access
    from table.cards import cards_for

    rolls = [roll_for(play) for _ in range(3)]
    if pending:
        for one in rolls:
            negative_by_gm(play, one)
    loaded = _loaded(rolls)
    access = campaign_access(play.gm, play.campaign)
    # The GM needs no approved character: the cards and their actions cost nothing more.
    with django_assert_num_queries(0):
        cards = cards_for(loaded, access=access)
        for one in loaded:
            html = render_to_string("hitos/_roll_actions.html", {"card": cards[one.pk]})
            if pending:
                assert "La dirección activa" in html and "Activar en contra" not in html
            else:
                assert "La dirección activa" not in html and "Activar en contra" in html
                # The GM does not activate in favour of a player's roll.
                assert "Activar aspecto" not in html


def test_a_page_of_cards_looks_up_a_players_characters_once(play, django_assert_num_queries):
    from campaigns.permissions import campaign_access
    from table.cards import cards_for

    # Inés's rolls, seen by Bruno: helping or acting against needs his approved character.
    loaded = _loaded([roll_for(play) for _ in range(3)])
    access = campaign_access(play.bruno, play.campaign)
    with django_assert_num_queries(1):
        cards = cards_for(loaded, access=access)
    assert all(c["can_activate_positive"] and c["can_activate_negative"] for c in cards.values())
    # A page that already knows (the post form loads the player's characters) is believed.
    with django_assert_num_queries(0):
        cards = cards_for(loaded, access=access, has_character=False)
    assert not any(c["can_activate_positive"] or c["can_activate_negative"] for c in cards.values())


def test_players_get_no_positive_button_on_an_npc_roll(play):
    from django.template.loader import render_to_string

    from campaigns.permissions import campaign_access
    from systems.hitos.checks import services as table_services
    from table.cards import card

    npc_roll = table_services.table_check(
        campaign=play.campaign,
        user=play.gm,
        setup=table_services.check_setup(play.npc, characteristic="fortaleza"),
        purpose="El mayordomo empuja la puerta",
        difficulty=15,
        character=play.npc,
        scene=play.scene,
        client_seed=client_seed(),
    )
    context = card(npc_roll.latest, access=campaign_access(play.ana, play.campaign), table_roll=npc_roll)
    html = render_to_string("table/_roll_card.html", {"card": context})
    assert "Activar aspecto" not in html and "Activar en contra" in html


def test_h92_the_gm_forces_degeneracion_and_the_player_gains_a_point(play):
    play.ines.skills.create(name="Hechicería", category="arcana", value=2)
    arcane = roll_for(play, skill="Hechicería")
    activation = activations.activate_positive(
        table_roll=arcane, user=play.ana, aspect_choice=f"a{play.ines_aspect.pk}", positions=[0], payment="point"
    )
    refresh(play.ines)
    assert play.ines.hitos.drama_points == 2
    # The card offers the GM the choice, not the player.
    arcane.refresh_from_db()
    url = reverse("table:scene-detail", args=[play.campaign.slug, play.scene.pk])
    force_url = reverse("hitos:activation-force", args=[activation.pk])
    assert force_url in client_for(play.gm).get(url).content.decode()
    assert force_url not in client_for(play.ana).get(url).content.decode()
    assert client_for(play.ana).post(force_url).status_code == 403
    response = client_for(play.gm).post(force_url, HTTP_HX_REQUEST="true")
    assert response.status_code == 200 and f'id="tirada-{arcane.pk}"' in response.content.decode()
    refresh(play.ines, activation)
    # «…el jugador recibe un punto dramático adicional»: the point back, and one more.
    assert (play.ines.hitos.drama_points, play.ines.hitos.degeneracion) == (4, 1)
    assert activation.payment == Activation.Payment.FORCED
    assert SheetEvent.objects.filter(character=play.ines, reason__contains="H92").count() == 2
    # Once only.
    with pytest.raises(ValidationError, match="acción arcana"):
        activations.force_degeneracion(activation=activation, user=play.gm)


def test_forcing_degeneracion_needs_an_arcane_action(play, roll):
    activation = activations.activate_positive(
        table_roll=roll, user=play.ana, aspect_choice=f"a{play.ines_aspect.pk}", positions=[0], payment="point"
    )
    with pytest.raises(ValidationError, match="acción arcana"):
        activations.force_degeneracion(activation=activation, user=play.gm)
    refresh(play.ines)
    assert (play.ines.hitos.drama_points, play.ines.hitos.degeneracion) == (2, 0)
