"""The Vaesen combat page and its actions (issue 15, item 5): who may see and
do what (outsiders 404, members without the right 403), the full page and
the htmx board of each view, Spanish refusals that change nothing, and the
page's queries pinned with 2 and 6 combatants (V17–V25)."""

from __future__ import annotations

import pytest
from django.core.cache import cache
from django.urls import reverse

from campaigns.models import Visibility
from campaigns.permissions import campaign_access
from sheets.models import Character
from systems.vaesen.combat import services
from systems.vaesen.models import VaesenAction, VaesenCombat, VaesenCombatant, VaesenSheet, VaesenWeapon
from tests.conftest import client_for
from tests.factories import make_scene
from tests.systems.vaesen.conftest import vaesen_character
from tests.systems.vaesen.test_combat import fighter, queued_dice, ready, snapshot, start

pytestmark = pytest.mark.django_db


@pytest.fixture
def d6():
    with queued_dice() as queue:
        yield queue


@pytest.fixture
def scene(vaesen_campaign):
    return make_scene(vaesen_campaign, title="El molino en llamas")


HTMX = {"HTTP_HX_REQUEST": "true"}
Kind = VaesenAction.Kind
Reaction = VaesenAction.Reaction


def url(world, scene, name, *args):
    return reverse(f"vaesen:{name}", args=[world.campaign.slug, scene.pk, *args])


def gm(world):
    return campaign_access(world.gm, world.campaign)


# --- the page ------------------------------------------------------------------------------


def test_the_gm_sees_the_start_form_and_a_player_that_there_is_none(vaesen_world, scene):
    world = vaesen_world
    html = client_for(world.gm).get(url(world, scene, "combat")).content.decode()
    assert "Empezar un combate" in html and "El molinero" in html and "<html" in html
    html = client_for(world.player).get(url(world, scene, "combat")).content.decode()
    assert "No hay ningún combate en esta escena." in html and "Empezar un combate" not in html


def test_outsiders_get_404_and_the_page_is_get_only(vaesen_world, scene):
    world = vaesen_world
    world.campaign.visibility = Visibility.PRIVATE
    world.campaign.save()
    assert client_for(world.outsider).get(url(world, scene, "combat")).status_code == 404
    assert client_for(None).get(url(world, scene, "combat")).status_code == 404
    assert client_for(world.gm).post(url(world, scene, "combat")).status_code == 405


def test_the_page_and_its_htmx_board(vaesen_world, scene, d6):
    world = vaesen_world
    combat = ready(world, scene, d6, (9, 5, 2))
    client = client_for(world.player)
    full = client.get(url(world, scene, "combat")).content.decode()
    assert "<html" in full and "Turno de Elsa" in full and "Declarar la acción" in full
    board = client.get(url(world, scene, "combat"), **HTMX).content.decode()
    assert "<html" not in board and board.lstrip().startswith('<div id="combat-board">')
    # The reader watches, without forms.
    html = client_for(world.reader).get(url(world, scene, "combat")).content.decode()
    assert "Turno de Elsa" in html and "Declarar la acción" not in html and "Tirar iniciativa" not in html
    assert combat.pk


@pytest.mark.parametrize("size", [2, 6])
def test_the_page_queries_are_pinned_with_2_and_6_combatants(
    vaesen_world, scene, d6, size, django_assert_max_num_queries
):
    world = vaesen_world
    characters = [world.pc, world.npc]
    for n in range(size - 2):
        extra = vaesen_character(world.campaign, world.gm, f"Sicario {n}", kind=Character.Kind.NPC, resistance=2)
        VaesenWeapon.objects.create(sheet=extra.vaesen, name="Porra", skill="Fuerza", damage=1)
        characters.append(extra)
    combat = ready(world, scene, d6, tuple(range(10, 10 - size, -1)), *characters)
    # One resolved attack per combatant after the first, each with its cards.
    for _ in range(size):
        acting = services.current(combat, list(combat.combatants.order_by("order")))
        target = fighter(combat, world.npc) if acting.character_id != world.npc.pk else fighter(combat, world.pc)
        action = services.declare(combat=combat, access=gm(world), actor=acting, kind=Kind.ATTACK, target=target)
        services.react(action=action, access=gm(world), reaction=Reaction.NONE)
        services.next_turn(combat=combat, access=gm(world))
        combat.refresh_from_db()
    for who in (world.gm, world.player):
        client = client_for(who)
        cache.clear()
        # 10 when the page is made (the cache keeps it afterwards), whatever the size.
        with django_assert_max_num_queries(10):
            response = client.get(url(world, scene, "combat"))
        assert response.status_code == 200
        assert response.content.decode().count('id="combatant-') == size


def test_the_cached_page_moves_with_the_combat(vaesen_world, scene, d6):
    world = vaesen_world
    combat = ready(world, scene, d6, (9, 5, 2))
    client = client_for(world.reader)
    assert "Turno de Elsa" in client.get(url(world, scene, "combat")).content.decode()
    services.next_turn(combat=combat, access=gm(world))
    assert "Turno de El molinero" in client.get(url(world, scene, "combat")).content.decode()


# --- the GM's panel ------------------------------------------------------------------------


def test_the_gm_starts_rolls_initiative_and_passes_turns(vaesen_world, scene):
    world = vaesen_world
    client = client_for(world.gm)
    data = {"characters": [world.pc.pk, world.npc.pk]}
    response = client.post(url(world, scene, "combat-start"), data, **HTMX)
    assert response.status_code == 200 and "<html" not in response.content.decode()
    combat = VaesenCombat.objects.get()
    response = client.post(url(world, scene, "combat-initiative", combat.pk))
    assert response.status_code == 302
    assert not VaesenCombatant.objects.filter(initiative_value__isnull=True).exists()
    response = client.post(url(world, scene, "combat-turn", combat.pk), **HTMX)
    assert response.status_code == 200
    combat.refresh_from_db()
    assert combat.acting is not None


def test_a_start_without_participants_keeps_the_form_with_a_spanish_error(vaesen_world, scene):
    world = vaesen_world
    response = client_for(world.gm).post(url(world, scene, "combat-start"), {}, **HTMX)
    assert "Elige al menos un participante." in response.content.decode()
    assert not VaesenCombat.objects.exists()


@pytest.mark.parametrize(
    "name",
    ["combat-initiative", "combat-turn", "combat-end", "combat-ambush", "combat-swap", "combat-combatant-add"],
)
def test_players_get_403_on_the_gm_panel_and_nothing_changes(vaesen_world, scene, name):
    world = vaesen_world
    combat = start(world, scene)
    before = snapshot()
    assert client_for(world.player).post(url(world, scene, name, combat.pk), {}).status_code == 403
    # Anyone may read a public campaign: an outsider is a member without the right.
    assert client_for(world.outsider).post(url(world, scene, name, combat.pk), {}).status_code == 403
    world.campaign.visibility = Visibility.PRIVATE
    world.campaign.save()
    assert client_for(world.outsider).post(url(world, scene, name, combat.pk), {}).status_code == 404
    assert snapshot() == before


def test_the_gm_refusals_are_in_spanish_and_change_nothing(vaesen_world, scene, d6):
    world = vaesen_world
    combat = ready(world, scene, d6, (9, 5, 2))
    before = snapshot()
    response = client_for(world.gm).post(url(world, scene, "combat-initiative", combat.pk), **HTMX)
    assert "queda fija para todo el combate" in response.content.decode()
    elsa, miller = fighter(combat, world.pc), fighter(combat, world.npc)
    response = client_for(world.gm).post(
        url(world, scene, "combat-swap", combat.pk), {"first": elsa.pk, "second": miller.pk}, **HTMX
    )
    assert "Escoja una opción válida" in response.content.decode() or "válid" in response.content.decode()
    assert snapshot() == before


def test_the_ambush_form_rolls_sigilo_against_vigilancia(vaesen_world, scene):
    world = vaesen_world
    combat = start(world, scene)
    elsa, miller = fighter(combat, world.pc), fighter(combat, world.npc)
    response = client_for(world.gm).post(
        url(world, scene, "combat-ambush", combat.pk),
        {"roller": elsa.pk, "watcher": miller.pk, "ambushers": [elsa.pk]},
        **HTMX,
    )
    assert response.status_code == 200
    combat.refresh_from_db()
    assert combat.ambush_roll is not None and combat.ambush_succeeded is not None
    assert "Emboscada" in response.content.decode()


# --- the players' answers ------------------------------------------------------------------


def test_a_player_declares_the_gm_answers_and_the_card_shows(vaesen_world, scene, d6):
    world = vaesen_world
    combat = ready(world, scene, d6, (9, 5, 2))
    elsa, miller = fighter(combat, world.pc), fighter(combat, world.npc)
    knife = world.pc.vaesen.weapons.get()
    data = {"actor": elsa.pk, "kind": Kind.ATTACK, "target": miller.pk, "weapon": f"w{knife.pk}"}
    response = client_for(world.player).post(url(world, scene, "combat-declare", combat.pk), data, **HTMX)
    html = response.content.decode()
    assert "Esperando la reacción" in html
    action = VaesenAction.objects.get()
    assert action.weapon == "Cuchillo" and action.roll is None
    # The player cannot answer for the miller; the GM can.
    assert "Esquivar" not in html
    d6.extend([[6, 1, 1], [1, 1, 1, 1, 1, 1]])
    response = client_for(world.gm).post(
        url(world, scene, "combat-react", action.pk), {"reaction": Reaction.PARRY_STRENGTH}, **HTMX
    )
    html = response.content.decode()
    assert 'class="roll-card card"' in html and "Lo consigue" in html
    world.npc.vaesen.refresh_from_db()
    assert world.npc.vaesen.resistance_lost == 1


def test_a_player_answers_an_attack_on_their_character(vaesen_world, scene, d6):
    world = vaesen_world
    combat = ready(world, scene, d6, (2, 9, 5))
    elsa, miller = fighter(combat, world.pc), fighter(combat, world.npc)
    action = services.declare(combat=combat, access=gm(world), actor=miller, kind=Kind.ATTACK, target=elsa)
    client = client_for(world.player)
    html = client.get(url(world, scene, "combat")).content.decode()
    assert "Esquivar (Agilidad)" in html and "Parar (Fuerza)" in html
    # Another player: 403, nothing changed.
    before = snapshot()
    response = client_for(world.other).post(url(world, scene, "combat-react", action.pk), {"reaction": Reaction.DODGE})
    assert response.status_code == 403 and snapshot() == before
    # A reader: 403.
    response = client_for(world.reader).post(url(world, scene, "combat-react", action.pk), {"reaction": Reaction.DODGE})
    assert response.status_code == 403 and snapshot() == before
    response = client.post(url(world, scene, "combat-react", action.pk), {"reaction": Reaction.DODGE})
    assert response.status_code == 302 and response.url.endswith(f"#accion-{action.pk}")
    action.refresh_from_db()
    assert action.reaction == Reaction.DODGE and action.reaction_roll is not None


def test_refused_actions_say_why_in_spanish_and_change_nothing(vaesen_world, scene, d6):
    world = vaesen_world
    combat = ready(world, scene, d6, (2, 9, 5))  # the miller acts first
    elsa, miller = fighter(combat, world.pc), fighter(combat, world.npc)
    before = snapshot()
    data = {"actor": elsa.pk, "kind": Kind.ATTACK, "target": miller.pk, "weapon": "sin_armas"}
    response = client_for(world.player).post(url(world, scene, "combat-declare", combat.pk), data, **HTMX)
    html = response.content.decode()
    assert "No es el turno de Elsa." in html
    # What was typed comes back.
    assert f'value="{miller.pk}" selected' in html
    assert snapshot() == before
    # A weapon of someone else.
    axe = VaesenWeapon.objects.create(sheet=world.npc.vaesen, name="Hacha", skill="Fuerza", damage=2)
    before = snapshot()
    data["weapon"] = f"w{axe.pk}"
    response = client_for(world.player).post(url(world, scene, "combat-declare", combat.pk), data, **HTMX)
    assert "Escoja una opción válida" in response.content.decode() or "válid" in response.content.decode()
    assert snapshot() == before
    # A reader has no character: 403.
    assert client_for(world.reader).post(url(world, scene, "combat-declare", combat.pk), data).status_code == 403
    # Not HTMX: the whole page with the message and what was typed.
    data["weapon"] = "sin_armas"
    response = client_for(world.player).post(url(world, scene, "combat-declare", combat.pk), data)
    html = response.content.decode()
    assert response.status_code == 200 and "<html" in html and "No es el turno de Elsa." in html
    assert f'value="{miller.pk}" selected' in html
    assert snapshot() == before


def test_an_answer_to_an_action_already_resolved_is_refused(vaesen_world, scene, d6):
    world = vaesen_world
    combat = ready(world, scene, d6, (2, 9, 5))
    elsa, miller = fighter(combat, world.pc), fighter(combat, world.npc)
    action = services.declare(combat=combat, access=gm(world), actor=miller, kind=Kind.ATTACK, target=elsa)
    services.react(action=action, access=gm(world), reaction=Reaction.NONE)
    before = snapshot()
    response = client_for(world.player).post(
        url(world, scene, "combat-react", action.pk), {"reaction": Reaction.DODGE}, **HTMX
    )
    assert "Esta acción ya se resolvió." in response.content.decode()
    assert snapshot() == before
    response = client_for(world.player).post(
        url(world, scene, "combat-react", action.pk), {"reaction": "volar"}, **HTMX
    )
    assert "válid" in response.content.decode()


def test_release_cancel_and_swap_views(vaesen_world, scene, d6):
    world = vaesen_world
    combat = ready(world, scene, d6, (2, 9, 5))
    elsa, miller = fighter(combat, world.pc), fighter(combat, world.npc)
    action = services.declare(combat=combat, access=gm(world), actor=miller, kind=Kind.GRAPPLE, target=elsa)
    # Only the GM cancels.
    assert client_for(world.player).post(url(world, scene, "combat-cancel", action.pk)).status_code == 403
    d6.append([6, 1, 1, 1, 1, 1])
    services.react(action=action, access=gm(world), reaction=Reaction.NONE)
    assert fighter(combat, world.pc).held_by_id == miller.pk
    # The held player cannot let herself go; the GM (the holder's) can.
    assert client_for(world.player).post(url(world, scene, "combat-release", elsa.pk)).status_code == 403
    response = client_for(world.gm).post(url(world, scene, "combat-release", elsa.pk), **HTMX)
    assert response.status_code == 200 and fighter(combat, world.pc).held_by_id is None
    # No swap offered by that grapple.
    response = client_for(world.player).post(url(world, scene, "combat-action-swap", action.pk), **HTMX)
    assert "no permite intercambiar la iniciativa" in response.content.decode()


def test_a_combatant_of_another_scene_is_404(vaesen_world, scene, d6):
    world = vaesen_world
    other = make_scene(world.campaign, title="Otra escena")
    combat = ready(world, scene, d6)
    elsa = fighter(combat, world.pc)
    assert client_for(world.gm).post(url(world, other, "combat-release", elsa.pk)).status_code == 404
    assert client_for(world.gm).post(url(world, other, "combat-turn", combat.pk)).status_code == 404


def test_the_sheet_kind_of_an_npc_shows_resistance(vaesen_world, scene, d6):
    world = vaesen_world
    ready(world, scene, d6)
    html = client_for(world.gm).get(url(world, scene, "combat")).content.decode()
    assert "Resistencia 3/3" in html
    assert VaesenSheet.objects.count() == 3


def test_the_scene_tool_links_to_the_combat(vaesen_world, scene):
    """vaesen/_combat_tool.html: the link the scene's tools include (``vaesen_combat_tool``)."""
    from django.template.loader import render_to_string

    html = render_to_string("vaesen/_combat_tool.html", {"campaign": vaesen_world.campaign, "scene": scene})
    assert f'href="{url(vaesen_world, scene, "combat")}"' in html and "Combate" in html
