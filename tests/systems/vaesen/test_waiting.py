"""Issue 17 in Vaesen: whose turn it is in a combat (V17, ``acting``), the
turn's deadline (settled by passing the turn: V18 obliges no action), and
who is away beside the names in the combat order."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.core.cache import cache
from django.core.exceptions import ValidationError
from django.urls import reverse
from django.utils import timezone
from pytest_django.asserts import assertContains, assertNotContains

from campaigns import extensions
from campaigns.models import Absence, Deadline, Visibility
from campaigns.permissions import campaign_access
from systems.vaesen.combat import services, turns
from tests.conftest import client_for
from tests.factories import make_scene
from tests.systems.vaesen.test_combat import queued_dice, ready, start

pytestmark = pytest.mark.django_db
HTMX = {"HTTP_HX_REQUEST": "true"}


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
