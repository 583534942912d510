"""Issue 17 in Hora de Aventuras: the open reactions of players' characters
in "whose turn is it", and the deadline the direction gives one, settled as
«No reacciona» (A14: «Las reacciones son gratis […] pero son opcionales»)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse
from django.utils import timezone
from pytest_django.asserts import assertContains, assertNotContains

from campaigns import deadlines, extensions
from campaigns.models import Deadline, Post, Visibility
from campaigns.permissions import campaign_access
from systems.aventuras.contests import reactions, waiting
from systems.aventuras.rolls import services as rolls
from tests.conftest import client_for
from tests.factories import make_post, make_scene
from tests.systems.aventuras.test_contests import queue_d6

HTMX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture
def d6(monkeypatch):
    return queue_d6(monkeypatch)


def npc_action(world, d6, *targets, post=None, scene=None):
    """The GM's NPC acts against ``targets`` (each may react, A18): Cachas 2, two dice."""
    d6.extend([[4, 4]])
    action = rolls.make_roll(
        campaign=world.campaign,
        user=world.gm,
        setup=rolls.roll_setup(world.npc, attribute="cachas", difficulty=0),
        purpose="Atizar a los héroes",
        character=world.npc,
        scene=scene or world.scene,
        post=post,
    )
    return reactions.open_reactions(action, list(targets) or [world.pc], by=world.gm)


def deadline_url(world, reaction) -> str:
    return reverse("aventuras:reaction-deadline", args=[world.campaign.slug, reaction.pk])


def give_deadline(world, reaction) -> Deadline:
    return deadlines.set_deadline(
        campaign=world.campaign,
        scene=world.scene,
        kind="reaction",
        target_id=reaction.pk,
        due_at=timezone.now() + timedelta(days=1),
        actor=world.gm,
    )


# --- whose turn ---------------------------------------------------------------------------------


def test_open_reactions_of_players_characters_are_waited_for(aventuras_world, d6):
    world = aventuras_world
    first, second = npc_action(world, d6, world.pc, world.other_pc)
    give_deadline(world, first)
    items = waiting.waiting([world.campaign], None, None)
    assert [(i.user_id, i.scene_id, i.kind, i.character, i.private) for i in items] == [
        (world.player.pk, world.scene.pk, "reaction", "Palomita", False),
        (world.other.pk, world.scene.pk, "reaction", "Tarta Dulce", False),
    ]
    assert items[0].text == "Reacción de Palomita a Profesor Cacahuete: tirarla o no reaccionar"
    assert items[0].deadline.target_id == first.pk and items[1].deadline is None
    assert [i.character for i in waiting.waiting([world.campaign], None, world.other.pk)] == ["Tarta Dulce"]
    reactions.decline(reaction=second, access=campaign_access(world.other, world.campaign))
    assert [i.character for i in waiting.waiting([world.campaign], [world.scene.pk], None)] == ["Palomita"]
    assert waiting.waiting([world.campaign], [world.scene.pk + 1000], None) == []


def test_an_npcs_reaction_is_the_directions_and_not_listed(aventuras_world, d6):
    world = aventuras_world
    d6.extend([[4, 4, 1]])
    action = rolls.make_roll(
        campaign=world.campaign,
        user=world.player,
        setup=rolls.roll_setup(world.pc, attribute="cachas", difficulty=0),
        purpose="Atizar al profesor",
        character=world.pc,
        scene=world.scene,
    )
    reactions.open_reactions(action, [world.npc], by=world.player)
    assert waiting.waiting([world.campaign], None, None) == []


def test_an_action_the_target_cannot_read_waits_for_nobody(aventuras_world, d6):
    world = aventuras_world
    to_gm = make_post(world.scene, world.gm, recipients=Post.Recipients.GM)
    npc_action(world, d6, world.pc, post=to_gm)
    assert waiting.waiting([world.campaign], None, None) == []


def test_an_action_in_a_whisper_to_the_target_is_private(aventuras_world, d6):
    world = aventuras_world
    whisper = make_post(world.scene, world.gm, recipients=Post.Recipients.CHOSEN, chosen=[world.player])
    npc_action(world, d6, world.pc, post=whisper)
    (item,) = waiting.waiting([world.campaign], None, None)
    assert item.user_id == world.player.pk and item.private


def test_only_aventuras_campaigns_give_reactions(aventuras_world, d6):
    world = aventuras_world
    npc_action(world, d6)
    world.campaign.system = "hitos"
    assert waiting.waiting([world.campaign], None, None) == []


def test_the_provider_asks_two_queries_whatever_the_number(aventuras_world, d6, django_assert_max_num_queries):
    world = aventuras_world
    for n in range(5):
        (reaction,) = npc_action(world, d6, scene=make_scene(world.campaign, title=f"Escena {n}"))
        give_deadline(world, reaction)
    with django_assert_max_num_queries(2):
        items = waiting.waiting([world.campaign], None, None)
    assert len(items) == 5 and all(i.deadline is not None for i in items)
    with django_assert_max_num_queries(2):
        assert len(waiting.waiting([world.campaign], None, world.player.pk)) == 5


# --- the deadline ----------------------------------------------------------------------------------


def test_the_gm_gives_a_reaction_a_deadline(aventuras_world, d6):
    world = aventuras_world
    (reaction,) = npc_action(world, d6)
    page = client_for(world.gm).get(deadline_url(world, reaction))
    assertContains(page, "<html")
    assertContains(page, "Plazo para la reacción de Palomita")
    fragment = client_for(world.gm).get(deadline_url(world, reaction), **HTMX)
    assertNotContains(fragment, "<html")
    assertContains(fragment, 'id="plazo-reaccion"')
    response = client_for(world.gm).post(deadline_url(world, reaction), {"plazo": "2030-01-15T20:00"})
    assert response.status_code == 302
    deadline = Deadline.objects.get()
    assert (deadline.kind, deadline.target_id, deadline.scene_id, deadline.due_at) == (
        "reaction",
        reaction.pk,
        world.scene.pk,
        datetime(2030, 1, 15, 19, 0, tzinfo=UTC),
    )
    assertContains(client_for(world.gm).get(deadline_url(world, reaction)), "Mover el plazo")


def test_a_past_deadline_is_refused_in_spanish(aventuras_world, d6):
    world = aventuras_world
    (reaction,) = npc_action(world, d6)
    response = client_for(world.gm).post(deadline_url(world, reaction), {"plazo": "2020-01-15T20:00"}, **HTMX)
    assert response.status_code == 200
    assertContains(response, "El plazo tiene que ser en el futuro.")
    assertContains(response, 'value="2020-01-15T20:00"')
    assert not Deadline.objects.exists()


def test_only_the_gm_gives_a_reaction_a_deadline(aventuras_world, d6):
    world = aventuras_world
    (reaction,) = npc_action(world, d6)
    target = deadline_url(world, reaction)
    data = {"plazo": "2030-01-15T20:00"}
    assert client_for(None).post(target, data).status_code == 302
    assert client_for(world.outsider).post(target, data).status_code == 403
    assert client_for(world.reader).post(target, data).status_code == 403
    assert client_for(world.player).post(target, data).status_code == 403
    assert client_for(world.gm).put(target, data).status_code == 405
    world.campaign.visibility = Visibility.PRIVATE
    world.campaign.save()
    assert client_for(world.outsider).post(target, data).status_code == 404
    assert not Deadline.objects.exists()


def test_the_card_offers_the_gm_a_deadline_for_a_waiting_reaction(aventuras_world, d6):
    world = aventuras_world
    (reaction,) = npc_action(world, d6)
    action = reaction.action
    action.campaign = world.campaign
    gm_part = reactions.card_reactions([action], access=campaign_access(world.gm, world.campaign))
    assert gm_part[action.pk]["rows"][0]["deadline_url"] == deadline_url(world, reaction)
    player_part = reactions.card_reactions([action], access=campaign_access(world.player, world.campaign))
    assert "deadline_url" not in player_part[action.pk]["rows"][0]


def test_the_reaction_kind_settles_as_no_reaction(aventuras_world, d6):
    world = aventuras_world
    (reaction,) = npc_action(world, d6)
    deadline = give_deadline(world, reaction)
    kind = extensions.deadline_kind("reaction")
    assert kind.awaited(deadline) == [world.player]
    assert kind.options(deadline, world.gm) == [
        ("decline", "Palomita no reacciona (A14: las reacciones son opcionales)")
    ]
    sentence = kind.settle(deadline, "decline", world.gm)
    assert sentence == (
        f"{world.gm.public_name}: Palomita no reacciona a «Atizar a los héroes» (venció el plazo sin respuesta)."
    )
    reaction.refresh_from_db()
    assert reaction.declined_at is not None and reaction.declined_by == world.gm and reaction.roll is None
    assert kind.awaited(deadline) == [] and kind.options(deadline, world.gm) == []
    with pytest.raises(ValidationError, match="decidido no reaccionar"):
        kind.settle(deadline, "decline", world.gm)


def test_answering_or_declining_withdraws_the_deadline(aventuras_world, d6):
    world = aventuras_world
    first, second = npc_action(world, d6, world.pc, world.other_pc)
    give_deadline(world, first)
    give_deadline(world, second)
    reactions.decline(reaction=first, access=campaign_access(world.player, world.campaign))
    d6.extend([[5, 5, 5, 5]])
    reactions.react(reaction=second, access=campaign_access(world.other, world.campaign), attribute="espabilado")
    assert [d.cancelled_at is not None for d in Deadline.objects.order_by("target_id")] == [True, True]


def test_the_reaction_kind_is_registered():
    assert extensions.deadline_kind("reaction") is waiting.REACTION_KIND
    assert waiting.waiting in extensions.waiting_providers()
