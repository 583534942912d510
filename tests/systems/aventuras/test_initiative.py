"""The initiative order (A20), shown to all; a die only for a tie left at the end.

S004: «El personaje más rápido es el que tiene la puntuación de Espabilado
más alta […] Si dos personajes tienen la misma puntuación de Espabilado,
actúa antes el que tenga la puntuación más alta en Cachas. Si siguen
empatados (¡qué mala pata!), actúa primero el que tenga más puntos de
Héroe»; «los personajes de los jugadores siempre actúan antes, ¡incluso si
han gastado todos sus puntos de Héroe!»; «tirad un dado y dejad que el azar decida».
"""

from __future__ import annotations

import pytest
from django.core.exceptions import PermissionDenied, ValidationError

from campaigns.permissions import campaign_access
from rolls.models import RollEntry
from sheets.models import Character
from systems.aventuras.contests import services
from systems.aventuras.models import AventurasInitiative
from tests.factories import CampaignFactory, UserFactory
from tests.systems.aventuras.conftest import aventuras_character
from tests.systems.aventuras.test_contests import queue_d6


@pytest.fixture
def d6(monkeypatch):
    return queue_d6(monkeypatch)


def access_of(world, who):
    return campaign_access(getattr(world, who), world.campaign)


def order_of(scene):
    initiative = AventurasInitiative.objects.get(scene=scene)
    return services.initiative_order(initiative)


def names(order):
    return [[m["character"].name for m in group["members"]] for group in order]


def test_a20_espabilado_first_two_if_not_highlighted(aventuras_world):
    world = aventuras_world
    services.initiative_set(
        scene=world.scene, access=access_of(world, "gm"), characters=[world.pc, world.other_pc, world.npc]
    )
    # Tarta Dulce Espabilado 4 (highlighted), the Profesor 3, Palomita 2 (not highlighted).
    assert names(order_of(world.scene)) == [["Tarta Dulce"], ["Profesor Cacahuete"], ["Palomita"]]


def test_a20_then_cachas_then_hero_points_and_players_before_the_gm(aventuras_world):
    world = aventuras_world
    campaign = world.campaign
    strong = aventuras_character(campaign, world.other, "Finn", cachas=4, highlighted=["cachas"])
    rich = aventuras_character(campaign, world.other, "Jake", hero_points=7)
    broke = aventuras_character(campaign, world.other, "BMO", hero_points=0)
    npc = aventuras_character(campaign, world.gm, "Gunter", kind=Character.Kind.NPC)
    services.initiative_set(scene=world.scene, access=access_of(world, "gm"), characters=[npc, broke, rich, strong])
    # All Espabilado 2: Cachas 4 first; then Cachas 2 by hero points; the GM's
    # character last even against 0 points.
    assert names(order_of(world.scene)) == [["Finn"], ["Jake"], ["BMO"], ["Gunter"]]


def test_a20_a_tie_left_at_the_end_is_settled_by_a_die(aventuras_world, d6):
    world = aventuras_world
    finn = aventuras_character(world.campaign, world.player, "Finn")
    jake = aventuras_character(world.campaign, world.other, "Jake")
    services.initiative_set(scene=world.scene, access=access_of(world, "gm"), characters=[finn, jake, world.npc])
    order = order_of(world.scene)
    # The Profesor (Espabilado 3) first; Finn and Jake tied in everything (A20).
    assert order[0]["members"][0]["character"] == world.npc
    assert order[1]["tied"] and {m["character"].name for m in order[1]["members"]} == {"Finn", "Jake"}
    # Each player rolls only for the tied character they control, signed as them.
    d6.extend([[3], [3]])
    (finn_die,) = services.initiative_tiebreak(scene=world.scene, access=access_of(world, "player"))
    assert (finn_die.character, finn_die.owner, finn_die.facts["die"]) == (finn, world.player, 3)
    # Jake has not rolled: still tied (a die alone decides nothing), and the player may not roll again.
    waiting = order_of(world.scene)[1]
    assert waiting["tied"] and {m["character"].name: m["needs_die"] for m in waiting["members"]} == {
        "Finn": False,
        "Jake": True,
    }
    with pytest.raises(ValidationError, match="falta que tiren los demás"):
        services.initiative_tiebreak(scene=world.scene, access=access_of(world, "player"))
    (jake_die,) = services.initiative_tiebreak(scene=world.scene, access=access_of(world, "other"))
    assert (jake_die.character, jake_die.owner) == (jake, world.other)
    made = [finn_die, jake_die]
    assert all(RollEntry.objects.get(pk=tr.latest_id).entry["dice"] == [3] for tr in made)
    # Equal dice: still tied, roll again.
    assert order_of(world.scene)[1]["tied"]
    d6.extend([[2], [5]])
    second = services.initiative_tiebreak(scene=world.scene, access=access_of(world, "gm"))
    by_die = {tr.character.name: tr.facts["die"] for tr in second}
    first_name = max(by_die, key=by_die.get)
    order = order_of(world.scene)
    assert not any(group["tied"] for group in order)
    assert [g["members"][0]["character"].name for g in order] == [
        "Profesor Cacahuete",
        first_name,
        ({"Finn", "Jake"} - {first_name}).pop(),
    ]
    assert sorted(by_die.values()) == [2, 5]
    # No tie left: nothing to roll.
    with pytest.raises(ValidationError, match="No hay empates"):
        services.initiative_tiebreak(scene=world.scene, access=access_of(world, "gm"))


def test_a20_the_gm_rolls_for_npcs_and_players_only_for_theirs(aventuras_world, d6):
    world = aventuras_world
    finn = aventuras_character(world.campaign, world.player, "Finn")
    # Gunter and the Profesor (both GM characters, Espabilado 3 highlighted, Cachas 2) tie.
    gunter = aventuras_character(
        world.campaign, world.gm, "Gunter", kind=Character.Kind.NPC, espabilado=3, cachas=2, highlighted=["espabilado"]
    )
    services.initiative_set(scene=world.scene, access=access_of(world, "gm"), characters=[gunter, world.npc, finn])
    tied = [g for g in order_of(world.scene) if g["tied"]]
    assert [sorted(m["character"].name for m in g["members"]) for g in tied] == [["Gunter", "Profesor Cacahuete"]]
    # The player controls neither tied character: refused, nothing rolled.
    with pytest.raises(PermissionDenied):
        services.initiative_tiebreak(scene=world.scene, access=access_of(world, "player"))
    d6.extend([[4], [1]])
    made = services.initiative_tiebreak(scene=world.scene, access=access_of(world, "gm"))
    assert {tr.character for tr in made} == {gunter, world.npc} and all(tr.owner == world.gm for tr in made)


def test_a20_the_gm_may_set_an_agreed_order_without_dice(aventuras_world):
    """S004 A20: «se pongan de acuerdo» — the GM records the order agreed for a tie."""
    world = aventuras_world
    finn = aventuras_character(world.campaign, world.player, "Finn")
    jake = aventuras_character(world.campaign, world.other, "Jake")
    services.initiative_set(scene=world.scene, access=access_of(world, "gm"), characters=[finn, jake, world.npc])
    with pytest.raises(PermissionDenied):
        services.initiative_agree(scene=world.scene, access=access_of(world, "player"), order=[finn.pk, jake.pk])
    for bad in ([finn.pk], [finn.pk, finn.pk], [finn.pk, world.npc.pk], ["x", "y"]):
        with pytest.raises(ValidationError, match="mismo empate"):
            services.initiative_agree(scene=world.scene, access=access_of(world, "gm"), order=bad)
    assert services.AGREED not in AventurasInitiative.objects.get(scene=world.scene).tiebreaks
    services.initiative_agree(scene=world.scene, access=access_of(world, "gm"), order=[str(jake.pk), str(finn.pk)])
    order = order_of(world.scene)
    assert names(order) == [["Profesor Cacahuete"], ["Jake"], ["Finn"]]
    assert [g["agreed"] for g in order] == [False, True, True] and not any(g["tied"] for g in order)
    assert AventurasInitiative.objects.get(scene=world.scene).tiebreaks == {services.AGREED: [[jake.pk, finn.pk]]}
    with pytest.raises(ValidationError, match="No hay empates"):
        services.initiative_agree(scene=world.scene, access=access_of(world, "gm"), order=[finn.pk, jake.pk])


def test_who_may_set_and_break_ties(aventuras_world):
    world = aventuras_world
    with pytest.raises(PermissionDenied):
        services.initiative_set(scene=world.scene, access=access_of(world, "player"), characters=[world.pc])
    finn = aventuras_character(world.campaign, world.gm, "Finn")
    jake = aventuras_character(world.campaign, world.gm, "Jake")
    services.initiative_set(scene=world.scene, access=access_of(world, "gm"), characters=[finn, jake])
    # Neither tied character is the player's: only the GM or their players roll.
    with pytest.raises(PermissionDenied):
        services.initiative_tiebreak(scene=world.scene, access=access_of(world, "player"))
    assert AventurasInitiative.objects.get(scene=world.scene).tiebreaks == {}


def test_setting_the_fight_again_starts_the_dice_again(aventuras_world, d6):
    world = aventuras_world
    finn = aventuras_character(world.campaign, world.player, "Finn")
    jake = aventuras_character(world.campaign, world.other, "Jake")
    services.initiative_set(scene=world.scene, access=access_of(world, "gm"), characters=[finn, jake])
    d6.extend([[1], [6]])
    services.initiative_tiebreak(scene=world.scene, access=access_of(world, "gm"))
    services.initiative_set(scene=world.scene, access=access_of(world, "gm"), characters=[finn, jake, world.pc])
    initiative = AventurasInitiative.objects.get(scene=world.scene)
    assert initiative.tiebreaks == {}
    assert order_of(world.scene)[-1]["tied"]


def test_bad_choices_are_refused(aventuras_world):
    world = aventuras_world
    stranger = aventuras_character(CampaignFactory(system="aventuras"), UserFactory(), "Rey Hielo")
    with pytest.raises(ValidationError, match="no está en la partida"):
        services.initiative_set(scene=world.scene, access=access_of(world, "gm"), characters=[world.pc, stranger])
    with pytest.raises(ValidationError, match="al menos un personaje"):
        services.initiative_set(scene=world.scene, access=access_of(world, "gm"), characters=[])
    assert not AventurasInitiative.objects.exists()
    with pytest.raises(ValidationError, match="no tiene orden"):
        services.initiative_tiebreak(scene=world.scene, access=access_of(world, "gm"))
