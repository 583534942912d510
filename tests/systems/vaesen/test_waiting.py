"""Issue 17 in Vaesen: whose turn it is in a combat (V17, ``acting``), the
turn's deadline (settled by passing the turn: V18 obliges no action), and
who is away beside the names in the combat order."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.core.cache import cache
from django.core.exceptions import ValidationError
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone
from pytest_django.asserts import assertContains, assertNotContains

from campaigns import deadlines, extensions, waiting
from campaigns.models import Absence, Deadline, ModerationAction, ModerationLog, Role, Scene, Visibility
from campaigns.permissions import campaign_access
from systems.vaesen.combat import reactions, services, turns, views
from systems.vaesen.models import VaesenAction
from tests.conftest import client_for
from tests.factories import add_member, make_scene
from tests.systems.vaesen.test_combat import fighter, queued_dice, ready, start

pytestmark = pytest.mark.django_db
HTMX = {"HTTP_HX_REQUEST": "true"}
Kind = VaesenAction.Kind
Reaction = VaesenAction.Reaction


@pytest.fixture
def d6():
    with queued_dice() as queue:
        yield queue


@pytest.fixture
def scene(vaesen_campaign):
    return make_scene(vaesen_campaign, title="El molino en llamas")


def gm(world):
    return campaign_access(world.gm, world.campaign)


def url(world, scene, name, *args):
    return reverse(f"vaesen:{name}", args=[world.campaign.slug, scene.pk, *args])


def give_deadline(world, combat) -> Deadline:
    combat.campaign = world.campaign
    return turns.turn_deadline_set(
        combat=combat, access=gm(world), due_at=timezone.now() + timedelta(days=1), remind_before=timedelta(hours=2)
    )


def test_the_players_turn_is_waited_for(vaesen_world, scene, d6):
    world = vaesen_world
    combat = ready(world, scene, d6)
    (item,) = turns.waiting([world.campaign], None, None)
    assert (item.user_id, item.scene_id, item.kind, item.character, item.private) == (
        world.player.pk,
        scene.pk,
        "combat",
        "Elsa",
        False,
    )
    assert item.text == "Turno de Elsa en el combate (asalto 1)"
    assert item.url == url(world, scene, "combat")
    assert turns.waiting([world.campaign], None, world.other.pk) == []
    assert turns.waiting([world.campaign], [scene.pk + 1000], None) == []
    # The NPC's turn is the direction's: nobody is waited for.
    services.next_turn(combat=combat, access=gm(world))
    assert turns.waiting([world.campaign], None, None) == []


def test_nobody_is_waited_for_before_the_initiative_or_in_another_game(vaesen_world, scene, d6):
    world = vaesen_world
    start(world, scene)
    assert turns.waiting([world.campaign], None, None) == []
    world.campaign.system = "hitos"
    assert turns.waiting([world.campaign], None, None) == []


def test_the_provider_asks_two_queries_whatever_the_number_of_combats(vaesen_world, d6, django_assert_max_num_queries):
    world = vaesen_world
    combats = [ready(world, make_scene(world.campaign, title=f"Escena {n}"), d6) for n in range(5)]
    give_deadline(world, combats[0])
    with django_assert_max_num_queries(2):
        items = turns.waiting([world.campaign], None, None)
    assert len(items) == 5 and items[0].deadline is not None
    with django_assert_max_num_queries(2):
        assert len(turns.waiting([world.campaign], [combats[0].scene_id], None)) == 1


def test_the_gm_gives_the_turn_a_deadline(vaesen_world, scene, d6):
    world = vaesen_world
    combat = ready(world, scene, d6)
    deadline_url = url(world, scene, "combat-deadline", combat.pk)
    response = client_for(world.gm).post(deadline_url, {"plazo": "2030-01-15T20:00", "recordar": "7200"})
    assert response.status_code == 302
    deadline = Deadline.objects.get()
    assert (deadline.kind, deadline.target_id, deadline.due_at) == (
        "vaesen-turn",
        combat.pk,
        datetime(2030, 1, 15, 19, 0, tzinfo=UTC),
    )
    page = client_for(world.player).get(url(world, scene, "combat"))
    assertContains(page, "Plazo:")
    board = client_for(world.gm).post(deadline_url, {"plazo": "2030-01-16T20:00"}, **HTMX)
    assertNotContains(board, "<html")
    assertContains(board, 'id="combat-board"')
    assertContains(board, "Mover el plazo")


def test_a_bad_deadline_is_refused_in_spanish(vaesen_world, scene, d6):
    world = vaesen_world
    combat = ready(world, scene, d6)
    deadline_url = url(world, scene, "combat-deadline", combat.pk)
    response = client_for(world.gm).post(deadline_url, {"plazo": "2030-03-31T02:30"}, **HTMX)
    assertContains(response, "Esa hora no existe ese día en Europe/Madrid")
    assertContains(response, 'value="2030-03-31T02:30"')
    assert not Deadline.objects.exists()


def test_only_the_gm_gives_a_deadline(vaesen_world, scene, d6):
    world = vaesen_world
    combat = ready(world, scene, d6)
    deadline_url = url(world, scene, "combat-deadline", combat.pk)
    data = {"plazo": "2030-01-15T20:00"}
    assert client_for(None).post(deadline_url, data).status_code == 302
    assert client_for(world.outsider).post(deadline_url, data).status_code == 403
    assert client_for(world.reader).post(deadline_url, data).status_code == 403
    assert client_for(world.player).post(deadline_url, data).status_code == 403
    assert client_for(world.gm).get(deadline_url).status_code == 405
    world.campaign.visibility = Visibility.PRIVATE
    world.campaign.save()
    assert client_for(world.outsider).post(deadline_url, data).status_code == 404
    assert not Deadline.objects.exists()


def test_the_turn_kind_passes_the_turn_once_the_deadline_passed(vaesen_world, scene, d6):
    world = vaesen_world
    combat = ready(world, scene, d6)
    deadline = give_deadline(world, combat)
    kind = extensions.deadline_kind("vaesen-turn")
    assert kind.awaited(deadline) == [world.player]
    assert kind.options(deadline, world.gm) == [("pass", "Elsa no hace nada este turno: pasa el turno")]
    sentence = kind.settle(deadline, "pass", world.gm)
    assert sentence == (
        f"{world.gm.public_name}: Elsa no hace nada en el asalto 1 y pasa el turno (venció el plazo sin respuesta)."
    )
    combat.refresh_from_db()
    assert combat.acting.character == world.npc
    deadline.refresh_from_db()
    assert deadline.cancelled_at is None
    assert kind.awaited(deadline) == [] and kind.options(deadline, world.gm) == []
    with pytest.raises(ValidationError, match="ya no espera"):
        kind.settle(deadline, "pass", world.gm)


def test_passing_the_turn_or_ending_withdraws_the_deadline(vaesen_world, scene, d6):
    world = vaesen_world
    combat = ready(world, scene, d6)
    give_deadline(world, combat)
    services.next_turn(combat=combat, access=gm(world))
    assert Deadline.objects.get().cancelled_at is not None
    give_deadline(world, combat)
    services.combat_end(combat=combat, access=gm(world))
    assert Deadline.objects.get().cancelled_at is not None


def test_the_combat_order_shows_who_is_away(vaesen_world, scene, d6, django_assert_max_num_queries):
    world = vaesen_world
    ready(world, scene, d6)
    client = client_for(world.gm)
    cache.clear()
    with django_assert_max_num_queries(60) as nobody_away:
        assertNotContains(client.get(url(world, scene, "combat")), "ausente hasta el")
    today = timezone.localdate()
    Absence.objects.create(campaign=world.campaign, user=world.player, starts_on=today, ends_on=today, note="de viaje")
    cache.clear()
    # One query for the absences, however many combatants.
    with django_assert_max_num_queries(len(nobody_away) + 1):
        page = client.get(url(world, scene, "combat"))
    assertContains(page, "ausente hasta el", count=1)
    assertContains(page, "de viaje")
    board = client_for(world.other).get(url(world, scene, "combat"), **HTMX)
    assertNotContains(board, "<html")
    assertContains(board, "ausente hasta el", count=1)


def test_the_turn_kind_is_registered():
    assert extensions.deadline_kind("vaesen-turn") is turns.TURN_KIND
    assert turns.waiting in extensions.waiting_providers()


def test_no_deadline_on_an_npcs_turn(vaesen_world, scene, d6):
    world = vaesen_world
    combat = ready(world, scene, d6)
    services.next_turn(combat=combat, access=gm(world))
    combat.refresh_from_db()
    with pytest.raises(ValidationError, match="No es el turno de ningún jugador"):
        give_deadline(world, combat)
    assertNotContains(client_for(world.gm).get(url(world, scene, "combat")), "Dar un plazo al turno")


# --- the reactions a combat waits for (V18) ---------------------------------------------------

MISS = [1, 1, 1, 1, 1, 1]  # the miller's unarmed attack: Físico 4 + Fuerza 2 = 6 dice, no 6


def npc_attacks(world, scene, d6):
    """The miller (first in the order) attacks Elsa: the combat waits for her reaction."""
    combat = ready(world, scene, d6, (2, 9, 5))
    miller, elsa = fighter(combat, world.npc), fighter(combat, world.pc)
    action = services.declare(combat=combat, access=gm(world), actor=miller, kind=Kind.ATTACK, target=elsa)
    return combat, action


def give_reaction_deadline(world, action, *, days=1) -> Deadline:
    return reactions.reaction_deadline_set(
        action=action,
        access=gm(world),
        due_at=timezone.now() + timedelta(days=days),
        remind_before=timedelta(hours=2),
    )


def test_an_npcs_attack_waits_for_the_players_reaction(vaesen_world, scene, d6):
    world = vaesen_world
    combat, action = npc_attacks(world, scene, d6)
    # Nobody's turn is waited for (the miller's is the direction's): only the reaction.
    assert turns.waiting([world.campaign], None, None) == []
    (item,) = reactions.waiting([world.campaign], None, None)
    assert (item.user_id, item.scene_id, item.kind, item.character, item.private, item.deadline) == (
        world.player.pk,
        scene.pk,
        "reaction",
        "Elsa",
        False,
        None,
    )
    assert item.text == "Reacción de Elsa a «Ataque» de El molinero: declararla (o ninguna)"
    assert item.url == url(world, scene, "combat") + f"#accion-{action.pk}"
    assert reactions.waiting([world.campaign], None, world.player.pk) == [item]
    assert reactions.waiting([world.campaign], None, world.other.pk) == []
    assert reactions.waiting([world.campaign], [scene.pk + 1000], None) == []
    world.campaign.system = "hitos"
    assert reactions.waiting([world.campaign], None, None) == []
    world.campaign.system = "vaesen"
    # The player answers: nothing is waited for any more.
    d6.append(MISS)
    services.react(action=action, access=campaign_access(world.player, world.campaign), reaction=Reaction.NONE)
    assert reactions.waiting([world.campaign], None, None) == []


def test_an_action_against_an_npc_or_in_a_closed_scene_waits_for_nobody(vaesen_world, scene, d6):
    world = vaesen_world
    combat = ready(world, scene, d6)  # Elsa first
    elsa, miller = fighter(combat, world.pc), fighter(combat, world.npc)
    at_npc = services.declare(
        combat=combat, access=campaign_access(world.player, world.campaign), actor=elsa, kind=Kind.ATTACK, target=miller
    )
    # The NPC's reaction is the direction's own.
    assert reactions.waiting([world.campaign], None, None) == []
    other_scene = make_scene(world.campaign, title="El puente")
    _combat, action = npc_attacks(world, other_scene, d6)
    assert len(reactions.waiting([world.campaign], None, None)) == 1
    other_scene.status = Scene.Status.LOCKED
    other_scene.save()
    assert reactions.waiting([world.campaign], None, None) == []
    with pytest.raises(ValidationError, match="no espera la reacción de ningún jugador"):
        reactions.reaction_deadline_set(
            action=at_npc,
            access=gm(world),
            due_at=timezone.now() + timedelta(days=1),
            remind_before=timedelta(hours=2),
        )
    assert not Deadline.objects.exists()


def test_the_reactions_provider_asks_the_same_queries_for_one_combat_or_five(
    vaesen_world, d6, django_assert_num_queries
):
    world = vaesen_world
    _combat, first = npc_attacks(world, make_scene(world.campaign, title="Escena 0"), d6)
    give_reaction_deadline(world, first)
    with CaptureQueriesContext(connection) as one:
        assert len(reactions.waiting([world.campaign], None, None)) == 1
    assert len(one) == 2
    for n in range(1, 5):
        npc_attacks(world, make_scene(world.campaign, title=f"Escena {n}"), d6)
    with django_assert_num_queries(len(one)):
        items = reactions.waiting([world.campaign], None, None)
    assert len(items) == 5 and [item.deadline is not None for item in items] == [True, False, False, False, False]
    assert items[0].deadline.campaign is world.campaign


def test_the_reaction_shows_to_whoever_reads_the_scene(vaesen_world, scene, d6):
    world = vaesen_world
    npc_attacks(world, scene, d6)
    # The combat page shows every action to the scene's readers: the item is not private.
    for member in (world.other, world.reader, world.gm):
        items = waiting.waiting_in(
            [world.campaign], scene_ids=[scene.pk], viewer_access=campaign_access(member, world.campaign)
        )
        assert [(item.kind, item.user_id) for item in items] == [("reaction", world.player.pk)]
    assertContains(client_for(world.other).get(url(world, scene, "combat")), "Esperando la reacción")


def test_the_reaction_kind_settles_as_no_reaction_once_its_deadline_passed(vaesen_world, scene, d6):
    world = vaesen_world
    combat, action = npc_attacks(world, scene, d6)
    deadline = give_reaction_deadline(world, action)
    kind = extensions.deadline_kind("vaesen-reaction")
    assert kind is reactions.REACTION_KIND and reactions.waiting in extensions.waiting_providers()
    assert kind.label() == "reacción en combate"
    assert kind.awaited(deadline) == [world.player]
    assert kind.url(deadline) == url(world, scene, "combat") + f"#accion-{action.pk}"
    assert kind.options(deadline, world.gm) == [
        ("ninguna", "Elsa no reacciona (V18: las reacciones son opcionales); se tira la acción")
    ]
    # The turn cannot pass while the reaction is waited for.
    with pytest.raises(ValidationError, match="esperando su reacción"):
        services.next_turn(combat=combat, access=gm(world))
    d6.append(MISS)
    settled = deadlines.deadline_settle(
        deadline=deadline, key="ninguna", actor=world.gm, now=deadline.due_at + timedelta(minutes=1)
    )
    assert settled.settlement == (
        f"{world.gm.public_name}: Elsa no reacciona a «Ataque» de El molinero (venció el plazo sin respuesta). "
        "El ataque falla."
    )
    deadline.refresh_from_db()
    assert (deadline.settled_by, deadline.cancelled_at) == (world.gm, None)
    action.refresh_from_db()
    assert (action.reaction, action.reaction_by, action.pending) == (Reaction.NONE, world.gm, False)
    assert ModerationLog.objects.filter(action=ModerationAction.DEADLINE_SETTLED, actor=world.gm).count() == 1
    assert kind.awaited(deadline) == [] and kind.options(deadline, world.gm) == []
    assert kind.url(deadline) == scene.get_absolute_url()
    with pytest.raises(ValidationError, match="ya no espera ninguna reacción"):
        kind.settle(deadline, "ninguna", world.gm)
    # Answered, the turn passes again.
    services.next_turn(combat=combat, access=gm(world))


def test_reacting_cancelling_or_removing_withdraws_the_reactions_deadline(vaesen_world, scene, d6):
    world = vaesen_world
    combat, action = npc_attacks(world, scene, d6)
    give_reaction_deadline(world, action)
    # Físico 3 + Agilidad 2 = 5 dice for the dodge.
    d6.extend([MISS, [1, 1, 1, 1, 1]])
    services.react(action=action, access=campaign_access(world.player, world.campaign), reaction=Reaction.DODGE)
    assert Deadline.objects.get(target_id=action.pk).cancelled_at is not None
    services.next_turn(combat=combat, access=gm(world))
    services.next_turn(combat=combat, access=gm(world))
    services.next_turn(combat=combat, access=gm(world))  # round 2: the miller again
    miller, elsa = fighter(combat, world.npc), fighter(combat, world.pc)
    again = services.declare(combat=combat, access=gm(world), actor=miller, kind=Kind.ATTACK, target=elsa)
    give_reaction_deadline(world, again)
    services.cancel(action=again, access=gm(world))
    assert Deadline.objects.get(target_id=again.pk).cancelled_at is not None
    third = services.declare(combat=combat, access=gm(world), actor=miller, kind=Kind.ATTACK, target=elsa)
    give_reaction_deadline(world, third)
    services.combatant_remove(combatant=miller, access=gm(world))
    assert Deadline.objects.get(target_id=third.pk).cancelled_at is not None
    assert Deadline.objects.open().count() == 0


def test_only_the_gm_gives_a_reaction_a_deadline(vaesen_world, scene, d6):
    world = vaesen_world
    _combat, action = npc_attacks(world, scene, d6)
    deadline_url = url(world, scene, "combat-action-deadline", action.pk)
    data = {"plazo": "2030-01-15T20:00", "recordar": "7200"}
    anonymous = client_for(None).post(deadline_url, data)
    assert anonymous.status_code == 302 and anonymous.url.startswith(reverse("accounts:login"))
    assert client_for(world.outsider).post(deadline_url, data).status_code == 403
    assert client_for(world.reader).post(deadline_url, data).status_code == 403
    assert client_for(world.player).post(deadline_url, data).status_code == 403
    assert client_for(world.other).post(deadline_url, data).status_code == 403
    assert client_for(world.gm).get(deadline_url).status_code == 405
    world.campaign.visibility = Visibility.PRIVATE
    world.campaign.save()
    assert client_for(world.outsider).post(deadline_url, data).status_code == 404
    assert not Deadline.objects.exists()
    cogm = add_member(world.campaign, Role.COGM)
    assert client_for(cogm).post(deadline_url, data).status_code == 302
    assert Deadline.objects.get().created_by == cogm


def test_the_gm_gives_the_reaction_a_deadline_from_the_combat_page(vaesen_world, scene, d6):
    world = vaesen_world
    _combat, action = npc_attacks(world, scene, d6)
    page = client_for(world.gm).get(url(world, scene, "combat"))
    assertContains(page, "Dar un plazo a la reacción")
    assertContains(page, f'id="id_reaccion_{action.pk}_plazo"')
    assertNotContains(client_for(world.player).get(url(world, scene, "combat")), "Dar un plazo a la reacción")
    deadline_url = url(world, scene, "combat-action-deadline", action.pk)
    response = client_for(world.gm).post(deadline_url, {"plazo": "2030-01-15T20:00", "recordar": "7200"})
    assert response.status_code == 302
    assert response.url == url(world, scene, "combat") + f"#accion-{action.pk}"
    deadline = Deadline.objects.get()
    assert (deadline.kind, deadline.target_id, deadline.due_at, deadline.remind_before) == (
        "vaesen-reaction",
        action.pk,
        datetime(2030, 1, 15, 19, 0, tzinfo=UTC),
        timedelta(hours=2),
    )
    # The player sees the deadline beside the action, on the page and on the board.
    page = client_for(world.player).get(url(world, scene, "combat"))
    assertContains(page, "Plazo:")
    assertContains(page, "<html")
    board = client_for(world.player).get(url(world, scene, "combat"), **HTMX)
    assertNotContains(board, "<html")
    assertContains(board, "Plazo:")
    # Moving it, with htmx: the board back.
    board = client_for(world.gm).post(deadline_url, {"plazo": "2030-01-16T20:00"}, **HTMX)
    assertNotContains(board, "<html")
    assertContains(board, 'id="combat-board"')
    assertContains(board, "Mover el plazo de la reacción")
    assert Deadline.objects.get().due_at == datetime(2030, 1, 16, 19, 0, tzinfo=UTC)


def test_a_bad_reaction_deadline_is_refused_in_spanish_with_what_was_typed(vaesen_world, scene, d6):
    world = vaesen_world
    _combat, action = npc_attacks(world, scene, d6)
    deadline_url = url(world, scene, "combat-action-deadline", action.pk)
    board = client_for(world.gm).post(deadline_url, {"plazo": "2030-03-31T02:30"}, **HTMX)
    assertNotContains(board, "<html")
    assertContains(board, "Esa hora no existe ese día en Europe/Madrid")
    assertContains(board, 'value="2030-03-31T02:30"')
    page = client_for(world.gm).post(deadline_url, {"plazo": "2001-01-01T10:00"})
    assertContains(page, "<html")
    assertContains(page, "El plazo tiene que ser en el futuro.")
    assertContains(page, 'value="2001-01-01T10:00"')
    assertContains(client_for(world.gm).post(deadline_url, {}, **HTMX), "Indica el plazo: una fecha y una hora.")
    assert not Deadline.objects.exists()
    # Once answered there is nothing to give a deadline to.
    d6.append(MISS)
    services.react(action=action, access=gm(world), reaction=Reaction.NONE)
    board = client_for(world.gm).post(deadline_url, {"plazo": "2030-01-15T20:00"}, **HTMX)
    assertContains(board, "no espera la reacción de ningún jugador")
    assert not Deadline.objects.exists()


def test_the_combat_page_asks_the_same_queries_for_one_waiting_reaction_or_five(
    vaesen_world, scene, d6, django_assert_max_num_queries
):
    world = vaesen_world
    combat, action = npc_attacks(world, scene, d6)
    give_reaction_deadline(world, action)
    client = client_for(world.gm)
    cache.clear()
    with CaptureQueriesContext(connection) as one:
        assertContains(client.get(url(world, scene, "combat")), "Plazo:", count=1)
    miller, elsa = fighter(combat, world.npc), fighter(combat, world.pc)
    for _n in range(4):
        more = VaesenAction.objects.create(
            combat=combat, kind=Kind.ATTACK, round=1, actor=miller, target=elsa, skill="Fuerza", declared_by=world.gm
        )
        give_reaction_deadline(world, more, days=2)
    cache.clear()
    with django_assert_max_num_queries(len(one)):
        assertContains(client.get(url(world, scene, "combat")), "Plazo:", count=5)


def test_the_cached_page_is_kept_until_a_reactions_time_left_changes(vaesen_world, scene, d6, rf):
    world = vaesen_world
    _combat, action = npc_attacks(world, scene, d6)
    deadline = give_reaction_deadline(world, action)
    request = rf.get(url(world, scene, "combat"))
    request.user = world.gm
    page = views._page(request, scene, gm(world), "combat-board")
    # About a day: the «queda 1 día» of the line changes then, not sooner or later.
    assert abs(page["seconds"] - deadlines.seconds_until_left_changes(deadline)) < 2
