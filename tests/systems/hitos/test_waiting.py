"""Issue 17 in HITOS: whose turn it is in a combat and the round's deadline
(«Retrasa su acción», H41; «Se dedica a defenderse», H43), the pending
negative activations and their deadline (settled as accepted, H22), and the
absences beside the names in the combat order."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pytest
from django.core.cache import cache
from django.core.exceptions import ValidationError
from django.urls import reverse
from django.utils import timezone
from pytest_django.asserts import assertContains, assertNotContains

from campaigns import extensions
from campaigns.models import Absence, Deadline, Post
from campaigns.permissions import campaign_access
from systems.hitos.activations import services as activations
from systems.hitos.activations import waiting as activation_waiting
from systems.hitos.checks.services import check_setup, table_check
from systems.hitos.combat import services as combat_services
from systems.hitos.combat import turns
from systems.hitos.models import Activation, Combat, Combatant, HitosSheet
from tests.conftest import client_for, make_world
from tests.factories import client_seed

HTMX = {"HTTP_HX_REQUEST": "true"}


def gm(play):
    return campaign_access(play.gm, play.campaign)


def started(play) -> Combat:
    combat = combat_services.combat_start(
        scene=play.scene, access=gm(play), characters=[play.ines, play.tomas, play.npc]
    )
    combat.campaign = play.campaign
    combat.scene = play.scene
    return combat


def combatant(combat, character) -> Combatant:
    found = Combatant.objects.select_related("combat__campaign", "combat__scene", "character").get(
        combat=combat, character=character
    )
    return found


def deadline_url(play, combat) -> str:
    return reverse("hitos:combat-deadline", args=[play.campaign.slug, play.scene.pk, combat.pk])


def combat_url(play) -> str:
    return reverse("hitos:combat", args=[play.campaign.slug, play.scene.pk])


def give_round_deadline(play, combat, due_at=None) -> Deadline:
    return turns.round_deadline_set(
        combat=combat,
        access=gm(play),
        due_at=due_at or timezone.now() + timedelta(days=1),
        remind_before=timedelta(hours=2),
    )


# --- whose turn --------------------------------------------------------------------------


def test_the_turn_is_the_first_player_character_that_has_not_acted(play):
    combat = started(play)
    (item,) = turns.waiting([play.campaign], None, None)
    assert (item.user_id, item.scene_id, item.kind, item.character, item.private) == (
        play.ana.pk,
        play.scene.pk,
        "combat",
        "Inés Salcedo",
        False,
    )
    assert item.text == "Turno de Inés Salcedo en el combate (asalto 1)"
    assert item.url == combat_url(play) and item.deadline is None
    combat_services.combatant_act(combatant=combatant(combat, play.ines), access=gm(play))
    assert [i.character for i in turns.waiting([play.campaign], None, None)] == ["Tomás Ferrer"]
    # A character holding its action (H41) is not waited for; the NPC's turn is the direction's.
    combat_services.combatant_delay(combatant=combatant(combat, play.tomas), access=gm(play))
    assert turns.waiting([play.campaign], None, None) == []


def test_each_new_round_waits_again_for_those_who_acted_in_the_last(play):
    combat = started(play)
    for character in (play.ines, play.tomas):
        combat_services.combatant_act(combatant=combatant(combat, character), access=gm(play))
    assert turns.waiting([play.campaign], None, None) == []
    combat_services.next_round(combat=combat, access=gm(play))
    (item,) = turns.waiting([play.campaign], None, None)
    assert (item.character, item.text) == ("Inés Salcedo", "Turno de Inés Salcedo en el combate (asalto 2)")
    # Still no longer unprepared (H38): having acted once is kept apart from this round's turn.
    assert combatant(combat, play.ines).has_acted


def test_the_turn_filters_by_user_and_scene_and_skips_ended_combats(play):
    combat = started(play)
    assert turns.waiting([play.campaign], None, play.bruno.pk) == []
    assert len(turns.waiting([play.campaign], [play.scene.pk], play.ana.pk)) == 1
    assert turns.waiting([play.campaign], [play.scene.pk + 1000], None) == []
    combat_services.combat_end(combat=combat, access=gm(play))
    assert turns.waiting([play.campaign], None, None) == []


def test_only_hitos_campaigns_give_turns(play):
    started(play)
    play.campaign.system = "vaesen"
    assert turns.waiting([play.campaign], None, None) == []


def test_the_combat_provider_asks_two_queries_for_any_number_of_campaigns(db, django_assert_max_num_queries):
    worlds = [make_world() for _ in range(5)]
    for world in worlds:
        give_round_deadline(world, started(world))
    with django_assert_max_num_queries(2):
        assert len(turns.waiting([worlds[0].campaign], None, None)) == 1
    with django_assert_max_num_queries(2):
        items = turns.waiting([w.campaign for w in worlds], None, None)
    assert len(items) == 5 and all(i.deadline is not None for i in items)


# --- the round's deadline --------------------------------------------------------------------


def test_the_gm_gives_the_round_a_deadline_from_the_combat_page(play):
    combat = started(play)
    response = client_for(play.gm).post(deadline_url(play, combat), {"plazo": "2030-01-15T20:00", "recordar": "7200"})
    assert response.status_code == 302 and response.url == combat_url(play)
    deadline = Deadline.objects.get()
    assert (deadline.kind, deadline.target_id, deadline.scene_id) == ("round", combat.pk, play.scene.pk)
    assert deadline.due_at == datetime(2030, 1, 15, 19, 0, tzinfo=UTC)
    page = client_for(play.ana).get(combat_url(play))
    assertContains(page, "Plazo:")
    assertContains(page, "Se espera a Inés Salcedo.")
    assertContains(page, "su turno")


def test_the_round_deadline_answers_htmx_with_the_tracker(play):
    combat = started(play)
    response = client_for(play.gm).post(deadline_url(play, combat), {"plazo": "2030-01-15T20:00"}, **HTMX)
    assert response.status_code == 200
    assertNotContains(response, "<html")
    assertContains(response, 'id="combat-tracker"')
    assertContains(response, "Mover el plazo")


def test_a_past_deadline_is_refused_in_spanish(play):
    combat = started(play)
    response = client_for(play.gm).post(deadline_url(play, combat), {"plazo": "2020-01-15T20:00"}, **HTMX)
    assert response.status_code == 200
    assertContains(response, "El plazo tiene que ser en el futuro.")
    assertContains(response, 'value="2020-01-15T20:00"')
    assert not Deadline.objects.exists()
    page = client_for(play.gm).post(deadline_url(play, combat), {"plazo": ""})
    assertContains(page, "<html")
    assertContains(page, "Indica el plazo")


def test_only_the_gm_gives_the_round_a_deadline(play, private_play):
    combat = started(play)
    data = {"plazo": "2030-01-15T20:00"}
    assert client_for(None).post(deadline_url(play, combat), data).status_code == 302
    assert client_for(play.outsider).post(deadline_url(play, combat), data).status_code == 403
    assert client_for(play.reader).post(deadline_url(play, combat), data).status_code == 403
    assert client_for(play.ana).post(deadline_url(play, combat), data).status_code == 403
    assert client_for(play.gm).get(deadline_url(play, combat)).status_code == 405
    private_combat = started(private_play)
    assert client_for(private_play.outsider).post(deadline_url(private_play, private_combat), data).status_code == 404
    assert not Deadline.objects.exists()


def test_the_round_kind_offers_delay_or_defence_for_the_character_waited_for(play):
    combat = started(play)
    deadline = give_round_deadline(play, combat)
    kind = extensions.deadline_kind("round")
    ines = combatant(combat, play.ines)
    assert kind.awaited(deadline) == [play.ana]
    assert kind.url(deadline) == combat_url(play)
    assert kind.options(deadline, play.gm) == [
        (f"delay:{ines.pk}", "Inés Salcedo retrasa su acción (H41)"),
        (f"defend:{ines.pk}", "Inés Salcedo se dedica a defenderse (H43, +4 Defensa)"),
    ]


def test_settling_the_round_delays_the_character(play):
    combat = started(play)
    deadline = give_round_deadline(play, combat)
    ines = combatant(combat, play.ines)
    sentence = extensions.deadline_kind("round").settle(deadline, f"delay:{ines.pk}", play.gm)
    assert sentence == "La Directora: Inés Salcedo retrasa su acción en el asalto 1 (venció el plazo sin respuesta)."
    ines.refresh_from_db()
    assert ines.delaying and not ines.has_acted
    deadline.refresh_from_db()
    assert deadline.cancelled_at is None


def test_settling_the_round_puts_the_character_on_total_defence(play):
    combat = started(play)
    deadline = give_round_deadline(play, combat)
    ines = combatant(combat, play.ines)
    sentence = extensions.deadline_kind("round").settle(deadline, f"defend:{ines.pk}", play.gm)
    assert "se dedica a defenderse en el asalto 1" in sentence
    ines.refresh_from_db()
    assert ines.all_out_defence and ines.has_acted
    deadline.refresh_from_db()
    assert deadline.cancelled_at is None


def test_settling_for_a_character_no_longer_waited_for_is_refused(play):
    combat = started(play)
    deadline = give_round_deadline(play, combat)
    tomas = combatant(combat, play.tomas)
    with pytest.raises(ValidationError, match="ya no es a quien espera"):
        extensions.deadline_kind("round").settle(deadline, f"delay:{tomas.pk}", play.gm)


def test_the_round_deadline_is_withdrawn_by_the_next_round_or_the_end(play):
    combat = started(play)
    give_round_deadline(play, combat)
    combat_services.next_round(combat=combat, access=gm(play))
    assert Deadline.objects.get().cancelled_at is not None
    give_round_deadline(play, combat)
    combat_services.combat_end(combat=combat, access=gm(play))
    assert Deadline.objects.get().cancelled_at is not None


def test_the_round_deadline_is_withdrawn_once_nobody_is_waited_for(play):
    combat = started(play)
    give_round_deadline(play, combat)
    combat_services.combatant_act(combatant=combatant(combat, play.ines), access=gm(play))
    assert Deadline.objects.get().is_open
    combat_services.combatant_act(combatant=combatant(combat, play.tomas), access=gm(play))
    assert Deadline.objects.get().cancelled_at is not None


# --- absences in the combat order --------------------------------------------------------------


def test_the_combat_order_shows_who_is_away(play):
    started(play)
    today = timezone.localdate()
    Absence.objects.create(
        campaign=play.campaign, user=play.ana, starts_on=today, ends_on=today + timedelta(days=3), note="de viaje"
    )
    page = client_for(play.bruno).get(combat_url(play))
    assertContains(page, "ausente hasta el", count=1)
    assertContains(page, "de viaje")
    fragment = client_for(play.bruno).get(combat_url(play), **HTMX)
    assertNotContains(fragment, "<html")
    assertContains(fragment, "ausente hasta el", count=1)


def test_a_past_absence_shows_no_badge(play):
    started(play)
    Absence.objects.create(campaign=play.campaign, user=play.ana, starts_on=date(2020, 1, 1), ends_on=date(2020, 1, 2))
    assertNotContains(client_for(play.gm).get(combat_url(play)), "ausente hasta el")


def test_the_badges_cost_one_query_however_many_are_away(play, django_assert_max_num_queries):
    combat = started(play)
    today = timezone.localdate()
    Absence.objects.create(campaign=play.campaign, user=play.ana, starts_on=today, ends_on=today)
    client = client_for(play.gm)
    cache.clear()
    with django_assert_max_num_queries(40) as one:
        client.get(combat_url(play))
    Absence.objects.create(campaign=play.campaign, user=play.bruno, starts_on=today, ends_on=today)
    for n in range(3):
        extra = play.npc.__class__.objects.create(
            campaign=play.campaign, owner=play.gm, name=f"Sicario {n}", kind="npc"
        )
        HitosSheet.objects.create(character=extra, damage_code="C")
        combat_services.combatant_add(combat=combat, access=gm(play), character=extra)
    cache.clear()
    with django_assert_max_num_queries(len(one)):
        page = client.get(combat_url(play))
    assertContains(page, "ausente hasta el", count=2)


# --- pending negative activations ----------------------------------------------------------------


def roll_of(play, *, post=None):
    return table_check(
        campaign=play.campaign,
        user=play.ana,
        setup=check_setup(play.ines, characteristic="reflejos", skill="Sigilo"),
        purpose="Cruzar el vestíbulo sin ruido",
        difficulty=15,
        character=play.ines,
        scene=play.scene,
        post=post or play.post,
        client_seed=client_seed(),
    )


def negative(play, roll) -> Activation:
    return activations.activate_negative(
        table_roll=roll, user=play.gm, aspect_choice=f"a{play.ines_aspect.pk}", positions=[0]
    )


def test_a_negative_activation_gets_the_campaigns_deadline(play):
    activation = negative(play, roll_of(play))
    deadline = Deadline.objects.get()
    assert (deadline.kind, deadline.target_id, deadline.scene_id, deadline.created_by) == (
        "activation",
        activation.pk,
        play.scene.pk,
        play.gm,
    )
    assert deadline.due_at == activation.deadline
    assert deadline.remind_before == timedelta(hours=24)


def test_answering_withdraws_the_activations_deadline(play):
    activation = negative(play, roll_of(play))
    activations.answer_negative(activation=activation, user=play.ana, accept=False)
    assert Deadline.objects.get().cancelled_at is not None


def test_the_activation_kind_settles_it_as_accepted_once_passed(play, monkeypatch):
    activation = negative(play, roll_of(play))
    deadline = Deadline.objects.get()
    kind = extensions.deadline_kind("activation")
    assert kind.awaited(deadline) == [play.ana]
    assert kind.options(deadline, play.gm) == [
        ("accept", "Darla por aceptada: se repite la tirada y el personaje gana el punto (H22)")
    ]
    with pytest.raises(ValidationError, match="aún no ha vencido"):
        kind.settle(deadline, "accept", play.gm)
    later = timezone.now() + timedelta(hours=49)
    monkeypatch.setattr(timezone, "now", lambda: later)
    sentence = kind.settle(deadline, "accept", play.gm)
    assert sentence == (
        "La Directora dio por aceptada la activación en contra «Ágil como una gata» de Inés Salcedo: "
        "venció el plazo sin respuesta."
    )
    activation.refresh_from_db()
    assert activation.status == Activation.Status.ACCEPTED and activation.reroll is not None
    assert kind.awaited(deadline) == [] and kind.options(deadline, play.gm) == []


def test_settling_from_the_card_records_the_campaigns_deadline(play, monkeypatch):
    activation = negative(play, roll_of(play))
    later = timezone.now() + timedelta(hours=49)
    monkeypatch.setattr(timezone, "now", lambda: later)
    activations.settle_negative(activation=activation, user=play.gm)
    deadline = Deadline.objects.get()
    assert deadline.settled_by == play.gm and deadline.settled_at == later and deadline.cancelled_at is None
    assert "dio por aceptada" in deadline.settlement


def test_the_activation_provider_lists_the_pending_ones(play):
    activation = negative(play, roll_of(play))
    (item,) = activation_waiting.waiting([play.campaign], None, None)
    assert (item.user_id, item.scene_id, item.kind, item.private) == (play.ana.pk, play.scene.pk, "activation", False)
    assert item.text == "Responder a la activación en contra «Ágil como una gata» sobre la tirada de Inés Salcedo"
    assert item.deadline.target_id == activation.pk
    assert activation_waiting.waiting([play.campaign], None, play.bruno.pk) == []
    activations.answer_negative(activation=activation, user=play.ana, accept=True)
    assert activation_waiting.waiting([play.campaign], None, None) == []


def test_an_activation_on_a_whispered_roll_is_private(play):
    whisper = Post.objects.create(
        scene=play.scene, author=play.ana, character=play.ines, body="x", body_html="<p>x</p>", recipients="gm"
    )
    negative(play, roll_of(play, post=whisper))
    (item,) = activation_waiting.waiting([play.campaign], None, None)
    assert item.private


def test_the_activation_provider_asks_two_queries_for_any_number_of_campaigns(db, django_assert_max_num_queries):
    worlds = [make_world() for _ in range(5)]
    for world in worlds:
        negative(world, roll_of(world))
    with django_assert_max_num_queries(2):
        assert len(activation_waiting.waiting([worlds[0].campaign], None, None)) == 1
    with django_assert_max_num_queries(2):
        assert len(activation_waiting.waiting([w.campaign for w in worlds], None, None)) == 5


def test_the_providers_and_kinds_are_registered():
    providers = extensions.waiting_providers()
    assert turns.waiting in providers and activation_waiting.waiting in providers
    assert extensions.deadline_kind("round") is turns.ROUND_KIND
    assert extensions.deadline_kind("activation") is activation_waiting.ACTIVATION_KIND


def test_no_round_deadline_when_no_player_is_waited_for(play):
    combat = started(play)
    for character in (play.ines, play.tomas):
        combat_services.combatant_act(combatant=combatant(combat, character), access=gm(play))
    assertNotContains(client_for(play.gm).get(combat_url(play)), "Dar un plazo al asalto")
    response = client_for(play.gm).post(deadline_url(play, combat), {"plazo": "2030-01-15T20:00"}, **HTMX)
    assertContains(response, "No se espera a ningún jugador en este asalto: no hace falta un plazo.")
    assert not Deadline.objects.exists()


# --- issue 17's fix round ------------------------------------------------------------------------


def test_settling_from_the_card_writes_the_moderation_log_and_tells_the_player(play, monkeypatch):
    from campaigns.models import ModerationAction, ModerationLog, Notification

    activation = negative(play, roll_of(play))
    later = timezone.now() + timedelta(hours=49)
    monkeypatch.setattr(timezone, "now", lambda: later)
    Notification.objects.all().delete()
    activations.settle_negative(activation=activation, user=play.gm)
    log = ModerationLog.objects.get(action=ModerationAction.DEADLINE_SETTLED)
    assert log.actor == play.gm and log.scene_id == play.scene.pk and "dio por aceptada" in log.reason
    assert Notification.objects.filter(kind="deadline", user=play.ana).exists()


def test_more_time_on_an_activations_deadline_moves_the_activations_own_date(play, monkeypatch):
    from campaigns import deadlines

    activation = negative(play, roll_of(play))
    deadline = Deadline.objects.get()
    later = timezone.now() + timedelta(hours=49)
    monkeypatch.setattr(timezone, "now", lambda: later)
    activation.refresh_from_db()
    assert activations.is_overdue(activation)
    new_date = later + timedelta(days=2)
    deadlines.deadline_extend(deadline=deadline, due_at=new_date, actor=play.gm)
    activation.refresh_from_db()
    # One date: the card no longer offers to settle, and settling is refused.
    assert activation.deadline == new_date and not activations.is_overdue(activation)
    with pytest.raises(ValidationError, match="aún no ha vencido"):
        activations.settle_negative(activation=activation, user=play.gm)
    # Once the new date passes, the card's settling works.
    monkeypatch.setattr(timezone, "now", lambda: new_date + timedelta(minutes=1))
    assert activations.is_overdue(activation)
    activations.settle_negative(activation=activation, user=play.gm)
    activation.refresh_from_db()
    assert activation.status == Activation.Status.ACCEPTED


def test_settling_a_round_for_one_character_keeps_it_open_for_the_next(play, monkeypatch):
    from campaigns import deadlines

    combat = started(play)
    deadline = give_round_deadline(play, combat)
    later = timezone.now() + timedelta(days=2)
    monkeypatch.setattr(timezone, "now", lambda: later)
    Deadline.objects.filter(pk=deadline.pk).update(passed_at=later)
    ines, tomas = combatant(combat, play.ines), combatant(combat, play.tomas)
    deadlines.deadline_settle(deadline=deadline, key=f"delay:{ines.pk}", actor=play.gm)
    deadline.refresh_from_db()
    # Tomás still owes his action: the deadline stays, and the GM is told again.
    assert deadline.is_open and deadline.passed_at is None and deadline.settled_at is None
    kind = extensions.deadline_kind("round")
    assert kind.awaited(deadline) == [tomas.character.owner]
    assert [key for key, _label in kind.options(deadline, play.gm)] == [f"delay:{tomas.pk}", f"defend:{tomas.pk}"]
    deadlines.deadline_settle(deadline=deadline, key=f"defend:{tomas.pk}", actor=play.gm)
    deadline.refresh_from_db()
    assert deadline.settled_at == later and not deadline.is_open


def test_the_hitos_kinds_give_their_urls_in_one_query_each(play, django_assert_num_queries):
    from campaigns import deadlines

    combat = started(play)
    round_deadline = give_round_deadline(play, combat)
    activation = negative(play, roll_of(play))
    found = list(Deadline.objects.select_related("campaign", "scene"))
    with django_assert_num_queries(2):
        urls = deadlines.target_urls(found)
    activation_deadline = next(d for d in found if d.kind == "activation")
    assert urls[round_deadline.pk] == combat_url(play)
    assert urls[activation_deadline.pk] == activation.table_roll.latest.get_absolute_url()


def test_the_dashboards_deadlines_cost_the_same_queries_for_one_or_ten_of_mixed_kinds(play):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from campaigns import deadlines
    from tests.factories import make_scene

    def scene_deadline(scene):
        deadlines.set_deadline(
            campaign=play.campaign,
            scene=scene,
            kind=deadlines.SCENE,
            target_id=scene.pk,
            due_at=timezone.now() + timedelta(days=1),
            actor=play.gm,
        )

    client = client_for(play.gm)
    url = reverse("campaigns:dashboard", args=[play.campaign.slug])
    scene_deadline(play.scene)
    client.get(url)
    with CaptureQueriesContext(connection) as one:
        assert client.get(url).status_code == 200
    combat = started(play)
    give_round_deadline(play, combat)
    negative(play, roll_of(play))
    negative(play, roll_of(play))
    for n in range(6):
        scene_deadline(make_scene(play.campaign, title=f"Escena {n}"))
    assert Deadline.objects.open().count() == 10
    client.get(url)
    with CaptureQueriesContext(connection) as ten:
        response = client.get(url)
    assert response.status_code == 200 and "Escena 5" in response.content.decode()
    # The two HITOS kinds' urls: one query each, whatever their number.
    assert len(ten) <= len(one) + 2, [q["sql"] for q in ten.captured_queries]
