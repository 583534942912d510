"""Vaesen combat played in posts (issue 15, item 5), its services: the
initiative through the log (V17, Q18), the actions per turn (V18), attacks
and their damage (V19, V20), reactions declared before the roll (V21),
armour (V22), grapple (V23), fleeing (V24), ambush (V25) and Broken (V10–V12).
Every refusal is in Spanish and changes nothing."""

from __future__ import annotations

from contextlib import contextmanager

import pytest
from django.core.exceptions import PermissionDenied, ValidationError

from campaigns.permissions import campaign_access
from rolls import rollog
from rolls.models import RollEntry
from rules import vaesen
from sheets.models import SheetEvent
from systems.vaesen.combat import services
from systems.vaesen.models import VaesenAction, VaesenCombat, VaesenCombatant, VaesenEvent, VaesenInjury
from table.models import TableRoll
from tests.factories import make_scene

pytestmark = pytest.mark.django_db

Kind = VaesenAction.Kind
Reaction = VaesenAction.Reaction


@contextmanager
def queued_dice():
    """While open, each roll the log draws takes the next dice of the queue
    (whatever its spec: the test queues the right count), then random again."""
    queue: list[list[int]] = []
    drawn: dict = {}
    real = rollog.dice_for_spec

    def draw(seed, message, spec):
        # The log asks twice for one roll's dice (to read them, to sign them).
        key = (seed, message)
        if key not in drawn:
            drawn[key] = list(queue.pop(0)) if queue else real(seed, message, spec)
        return list(drawn[key])

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(rollog, "dice_for_spec", draw)
        yield queue


@pytest.fixture
def d6():
    with queued_dice() as queue:
        yield queue


@pytest.fixture
def scene(vaesen_campaign):
    return make_scene(vaesen_campaign, title="El molino en llamas")


def gm_access(world):
    return campaign_access(world.gm, world.campaign)


def player_access(world, who="player"):
    return campaign_access(getattr(world, who), world.campaign)


def start(world, scene, *characters) -> VaesenCombat:
    return services.combat_start(
        scene=scene, access=gm_access(world), characters=characters or [world.pc, world.npc, world.creature]
    )


def fighter(combat, character) -> VaesenCombatant:
    return VaesenCombatant.objects.select_related("character__vaesen").get(combat=combat, character=character)


def ready(world, scene, d6, values=(9, 5, 2), *characters) -> VaesenCombat:
    """A combat with its initiative rolled (``values`` in the fighters' order)."""
    combat = start(world, scene, *characters)
    d6.extend([[v] for v in values])
    services.initiative_roll(combat=combat, access=gm_access(world))
    combat.refresh_from_db()
    return combat


def snapshot():
    return (
        RollEntry.objects.count(),
        TableRoll.objects.count(),
        SheetEvent.objects.count(),
        VaesenAction.objects.count(),
        sorted(
            VaesenCombatant.objects.values_list(
                "pk", "order", "initiative_value", "slow_used", "fast_used", "held_by", "fled", "first_action_bonus"
            )
        ),
    )


def refused(call, text: str, *, error=ValidationError):
    before = snapshot()
    with pytest.raises(error) as caught:
        call()
    messages = " ".join(caught.value.messages) if isinstance(caught.value, ValidationError) else str(caught.value)
    assert text in messages
    assert snapshot() == before


# --- initiative (V17, Q18) -------------------------------------------------------------------


def test_v17_initiative_is_a_d10_per_combatant_through_the_log_highest_first(vaesen_world, scene, d6):
    world = vaesen_world
    combat = ready(world, scene, d6, (4, 9, 1))
    order = list(combat.combatants.order_by("order").values_list("character__name", "initiative_value"))
    assert order == [("El molinero", 9), ("Elsa", 4), ("El Näcken", 1)]
    entries = RollEntry.objects.filter(purpose__startswith="Iniciativa de")
    assert entries.count() == 3
    for entry in entries:
        game = entry.signed_game
        assert game["system"] == "vaesen" and game["test"] == "initiative"
        assert entry.entry["spec"] == "1d10" and game["initiative"] == entry.entry["dice"][0]
    # Fixed for the whole combat: rolling again is refused.
    refused(
        lambda: services.initiative_roll(combat=combat, access=gm_access(world)),
        "queda fija para todo el combate",
    )


def test_q18_ties_are_rerolled_among_the_tied_only(vaesen_world, scene, d6):
    world = vaesen_world
    combat = start(world, scene)
    # Elsa 7, the miller 7, the Näcken 3; the tie: Elsa 2, the miller 8.
    d6.extend([[7], [7], [3], [2], [8]])
    services.initiative_roll(combat=combat, access=gm_access(world))
    names = list(combat.combatants.order_by("order").values_list("character__name", flat=True))
    assert names == ["El molinero", "Elsa", "El Näcken"]
    ties = RollEntry.objects.filter(purpose__startswith="Desempate de iniciativa")
    assert ties.count() == 2
    assert {e.signed_game["tie_break"] for e in ties} == {True}
    # The re-roll only orders them: the values stay.
    assert fighter(combat, world.pc).initiative_value == 7


def test_a_late_arrival_is_placed_after_equals(vaesen_world, scene, d6):
    world = vaesen_world
    combat = ready(world, scene, d6, (9, 5), world.pc, world.npc)
    services.combatant_add(combat=combat, access=gm_access(world), character=world.creature)
    d6.append([5])
    services.initiative_roll(combat=combat, access=gm_access(world))
    names = list(combat.combatants.order_by("order").values_list("character__name", flat=True))
    assert names == ["Elsa", "El molinero", "El Näcken"]


def test_v17_pcs_swap_initiative_only_at_the_start_of_a_round(vaesen_world, scene, d6, vaesen_campaign):
    world = vaesen_world
    from tests.systems.vaesen.conftest import vaesen_character

    other_pc = vaesen_character(vaesen_campaign, world.other, "Olof", skills={"Fuerza": 2})
    combat = ready(world, scene, d6, (9, 5, 2), world.pc, world.npc, other_pc)
    elsa, olof, miller = fighter(combat, world.pc), fighter(combat, other_pc), fighter(combat, world.npc)
    refused(
        lambda: services.initiative_swap(combat=combat, access=gm_access(world), first=elsa, second=miller),
        "Solo los personajes jugadores",
    )
    refused(
        lambda: services.initiative_swap(combat=combat, access=player_access(world), first=elsa, second=olof),
        "dirección",
        error=PermissionDenied,
    )
    services.initiative_swap(combat=combat, access=gm_access(world), first=elsa, second=olof)
    names = list(combat.combatants.order_by("order").values_list("character__name", "initiative_value"))
    assert names == [("Olof", 9), ("El molinero", 5), ("Elsa", 2)]
    # Once someone has acted, the round has started.
    services.declare(combat=combat, access=player_access(world, "other"), actor=olof, kind=Kind.FLEE)
    refused(
        lambda: services.initiative_swap(combat=combat, access=gm_access(world), first=elsa, second=olof),
        "al principio del asalto",
    )


# --- turns and actions (V18) -----------------------------------------------------------------


def test_v18_attacks_are_slow_actions_on_ones_turn_and_two_actions_per_round(vaesen_world, scene, d6):
    world = vaesen_world
    combat = ready(world, scene, d6, (9, 5, 2))
    elsa, miller = fighter(combat, world.pc), fighter(combat, world.npc)
    refused(
        lambda: services.declare(combat=combat, access=gm_access(world), actor=miller, kind=Kind.ATTACK, target=elsa),
        "No es el turno de El molinero",
    )
    services.declare(combat=combat, access=player_access(world), actor=elsa, kind=Kind.ATTACK, target=miller)
    # A second attack in the same turn: one slow action per turn.
    refused(
        lambda: services.declare(
            combat=combat, access=player_access(world), actor=elsa, kind=Kind.ATTACK, target=miller
        ),
        "ya ha hecho su acción lenta",
    )
    assert fighter(combat, world.pc).slow_used == 1
    # The turn does not move while the attack waits for its reaction.
    refused(lambda: services.next_turn(combat=combat, access=gm_access(world)), "esperando su reacción")


def test_v18_a_new_round_gives_the_actions_back(vaesen_world, scene, d6):
    world = vaesen_world
    combat = ready(world, scene, d6, (9, 5, 2))
    elsa, miller = fighter(combat, world.pc), fighter(combat, world.npc)
    action = services.declare(combat=combat, access=player_access(world), actor=elsa, kind=Kind.ATTACK, target=miller)
    d6.extend([[1, 1, 1]])
    services.react(action=action, access=gm_access(world), reaction=Reaction.NONE)
    for _ in range(3):
        services.next_turn(combat=combat, access=gm_access(world))
    combat.refresh_from_db()
    assert combat.round == 2 and combat.acting == elsa
    assert fighter(combat, world.pc).slow_used == 0


def test_players_act_only_with_their_own_character(vaesen_world, scene, d6):
    world = vaesen_world
    combat = ready(world, scene, d6, (9, 5, 2))
    elsa, miller = fighter(combat, world.pc), fighter(combat, world.npc)
    refused(
        lambda: services.declare(
            combat=combat, access=player_access(world, "other"), actor=elsa, kind=Kind.ATTACK, target=miller
        ),
        "tu propio personaje",
        error=PermissionDenied,
    )


# --- attacks, reactions, armour, damage (V19–V22, V10, V11) ---------------------------------


def test_v19_one_success_hits_and_the_weapon_damage_becomes_physical_conditions(vaesen_world, scene, d6):
    world = vaesen_world
    combat = ready(world, scene, d6, (2, 9, 5))  # the miller first
    miller, elsa = fighter(combat, world.npc), fighter(combat, world.pc)
    from systems.vaesen.models import VaesenWeapon

    axe = VaesenWeapon.objects.create(sheet=world.npc.vaesen, name="Hacha", skill="Fuerza", damage=2)
    action = services.declare(
        combat=combat, access=gm_access(world), actor=miller, kind=Kind.ATTACK, target=elsa, weapon=axe
    )
    assert action.roll is None  # V21 — nothing rolled before the reaction is declared
    # Físico 4 + Fuerza 2 = 6 dice, one 6.
    d6.append([6, 1, 2, 3, 4, 5])
    services.react(action=action, access=player_access(world), reaction=Reaction.NONE)
    action.refresh_from_db()
    game = action.roll.latest.signed_game
    assert game["system"] == "vaesen" and game["test"] == "attack" and game["successes"] == 1
    assert action.succeeded and action.damage_taken == 2
    world.pc.vaesen.refresh_from_db()
    assert world.pc.vaesen.physical_conditions == ["Exhausto", "Magullado"]
    event = SheetEvent.objects.get(character=world.pc, kind=VaesenEvent.CONDITION)
    assert event.roll_id == action.roll.latest_id and event.actor == world.player


def test_v21_each_reaction_success_removes_one_and_more_may_swap(vaesen_world, scene, d6):
    world = vaesen_world
    combat = ready(world, scene, d6, (2, 9, 5))
    miller, elsa = fighter(combat, world.npc), fighter(combat, world.pc)
    action = services.declare(combat=combat, access=gm_access(world), actor=miller, kind=Kind.ATTACK, target=elsa)
    # Attack: Físico 4 + Fuerza 2 = 6 dice with one 6; dodge: Físico 3 + Agilidad 2 = 5 dice with two 6s.
    d6.extend([[6, 1, 1, 1, 1, 1], [6, 6, 1, 1, 1]])
    services.react(action=action, access=player_access(world), reaction=Reaction.DODGE)
    action.refresh_from_db()
    assert action.reaction_roll.latest.signed_game["test"] == "reaction"
    assert action.successes_left == 0 and not action.succeeded and action.may_swap
    assert fighter(combat, world.pc).fast_used == 1
    world.pc.vaesen.refresh_from_db()
    assert world.pc.vaesen.physical_conditions == []
    services.swap_after_reaction(action=action, access=player_access(world))
    names = list(combat.combatants.order_by("order").values_list("character__name", flat=True))
    assert names == ["Elsa", "El Näcken", "El molinero"]
    refused(lambda: services.swap_after_reaction(action=action, access=player_access(world)), "ya se intercambió")


def test_v21_a_ranged_attack_cannot_be_parried(vaesen_world, scene, d6):
    world = vaesen_world
    combat = ready(world, scene, d6, (2, 9, 5))
    from systems.vaesen.models import VaesenWeapon

    gun = VaesenWeapon.objects.create(sheet=world.npc.vaesen, name="Escopeta", skill="Combate a distancia", damage=2)
    miller, elsa = fighter(combat, world.npc), fighter(combat, world.pc)
    action = services.declare(
        combat=combat, access=gm_access(world), actor=miller, kind=Kind.ATTACK, target=elsa, weapon=gun
    )
    refused(
        lambda: services.react(action=action, access=player_access(world), reaction=Reaction.PARRY_STRENGTH),
        "solo se esquiva",
    )
    refused(
        lambda: services.react(action=action, access=player_access(world, "other"), reaction=Reaction.DODGE),
        "responde",
        error=PermissionDenied,
    )


def test_v22_armour_dice_reduce_the_damage(vaesen_world, scene, d6):
    world = vaesen_world
    sheet = world.pc.vaesen
    sheet.armour, sheet.armour_protection = "Abrigo de cuero", 2
    sheet.save()
    combat = ready(world, scene, d6, (2, 9, 5))
    miller, elsa = fighter(combat, world.npc), fighter(combat, world.pc)
    action = services.declare(combat=combat, access=gm_access(world), actor=miller, kind=Kind.ATTACK, target=elsa)
    # Unarmed: Fuerza, 1 damage; the armour's two dice with one 6 stop it.
    d6.extend([[6, 6, 1, 1, 1, 1], [6, 2]])
    services.react(action=action, access=gm_access(world), reaction=Reaction.NONE)
    action.refresh_from_db()
    assert action.armour_roll.latest.signed_game["test"] == "armour"
    assert action.armour_roll.latest.entry["spec"] == "2d6"
    assert action.damage_taken == 0 and "armadura" in action.outcome
    sheet.refresh_from_db()
    assert sheet.physical_conditions == []


def test_v20_npcs_lose_resistencia_points(vaesen_world, scene, d6):
    world = vaesen_world
    combat = ready(world, scene, d6, (9, 5, 2))
    elsa, miller = fighter(combat, world.pc), fighter(combat, world.npc)
    knife = world.pc.vaesen.weapons.get()
    action = services.declare(
        combat=combat, access=player_access(world), actor=elsa, kind=Kind.ATTACK, target=miller, weapon=knife
    )
    # Físico 3 + Combate cuerpo a cuerpo 0 = 3 dice.
    d6.append([6, 1, 1])
    services.react(action=action, access=gm_access(world), reaction=Reaction.NONE)
    world.npc.vaesen.refresh_from_db()
    assert world.npc.vaesen.resistance_lost == 1
    event = SheetEvent.objects.get(character=world.npc, kind=VaesenEvent.RESISTANCE)
    assert event.roll_id == VaesenAction.objects.get().roll.latest_id


def test_v10_v11_the_blow_that_breaks_and_the_next_one_are_critical_injuries(vaesen_world, scene, d6):
    world = vaesen_world
    sheet = world.pc.vaesen
    sheet.physical_conditions = ["Exhausto", "Magullado", "Herido"]
    sheet.save()
    combat = ready(world, scene, d6, (2, 9, 5))
    miller, elsa = fighter(combat, world.npc), fighter(combat, world.pc)
    action = services.declare(combat=combat, access=gm_access(world), actor=miller, kind=Kind.ATTACK, target=elsa)
    d6.extend([[6, 1, 1, 1, 1, 1], [3, 4]])
    services.react(action=action, access=gm_access(world), reaction=Reaction.NONE)
    sheet.refresh_from_db()
    assert sheet.broken_physical
    injury = VaesenInjury.objects.get(sheet=sheet)
    assert injury.roll == 34
    action.refresh_from_db()
    assert action.injury_roll.latest.signed_game["d66"] == 34
    # V11 — hit again while Broken: one more critical injury.
    for _ in range(3):
        services.next_turn(combat=combat, access=gm_access(world))
    action = services.declare(combat=combat, access=gm_access(world), actor=miller, kind=Kind.ATTACK, target=elsa)
    d6.extend([[6, 1, 1, 1, 1, 1], [5, 1]])
    services.react(action=action, access=gm_access(world), reaction=Reaction.NONE)
    assert VaesenInjury.objects.filter(sheet=sheet).count() == 2


def test_v10_v12_broken_cannot_attack_but_mentally_broken_may_flee_and_dodge(vaesen_world, scene, d6):
    world = vaesen_world
    sheet = world.pc.vaesen
    sheet.broken_mental = True
    sheet.save()
    combat = ready(world, scene, d6, (9, 5, 2))
    elsa, miller = fighter(combat, world.pc), fighter(combat, world.npc)
    refused(
        lambda: services.declare(
            combat=combat, access=player_access(world), actor=elsa, kind=Kind.ATTACK, target=miller
        ),
        "no puede atacar",
    )
    services.declare(combat=combat, access=player_access(world), actor=elsa, kind=Kind.FLEE)


def test_v11_physically_broken_cannot_react(vaesen_world, scene, d6):
    world = vaesen_world
    combat = ready(world, scene, d6, (2, 9, 5))
    miller, elsa = fighter(combat, world.npc), fighter(combat, world.pc)
    action = services.declare(combat=combat, access=gm_access(world), actor=miller, kind=Kind.ATTACK, target=elsa)
    sheet = world.pc.vaesen
    sheet.broken_physical = True
    sheet.save()
    refused(
        lambda: services.react(action=action, access=player_access(world), reaction=Reaction.DODGE),
        "falla automáticamente",
    )


# --- grapple, breaking free, fleeing (V23, V24) --------------------------------------------


def test_v23_grapple_holds_silences_with_an_extra_success_and_breaking_free(vaesen_world, scene, d6):
    world = vaesen_world
    combat = ready(world, scene, d6, (2, 9, 5))
    miller, elsa = fighter(combat, world.npc), fighter(combat, world.pc)
    action = services.declare(
        combat=combat, access=gm_access(world), actor=miller, kind=Kind.GRAPPLE, target=elsa, silence=True
    )
    d6.append([6, 6, 1, 1, 1, 1])
    services.react(action=action, access=player_access(world), reaction=Reaction.NONE)
    elsa = fighter(combat, world.pc)
    assert elsa.held_by_id == miller.pk and elsa.silenced
    # Held: no attack, no fleeing.
    refused(
        lambda: services.declare(combat=combat, access=player_access(world), actor=elsa, kind=Kind.FLEE),
        "no puede huir",
    )
    # Breaking free (a fast action, any time): the holder holds with Fuerza; a tie changes nothing.
    attempt = services.declare(combat=combat, access=player_access(world), actor=elsa, kind=Kind.BREAK_FREE)
    refused(
        lambda: services.declare(combat=combat, access=player_access(world), actor=elsa, kind=Kind.BREAK_FREE),
        "una vez por turno",
    )
    d6.extend([[6, 1, 1], [6, 1, 1, 1, 1, 1]])
    services.react(action=attempt, access=gm_access(world), reaction=Reaction.HOLD)
    assert fighter(combat, world.pc).held_by_id == miller.pk
    # Next round, without a holding reaction one success frees her.
    for _ in range(3):
        services.next_turn(combat=combat, access=gm_access(world))
    attempt = services.declare(combat=combat, access=player_access(world), actor=elsa, kind=Kind.BREAK_FREE)
    d6.append([6, 1, 1])
    services.react(action=attempt, access=gm_access(world), reaction=Reaction.NONE)
    elsa = fighter(combat, world.pc)
    assert elsa.held_by_id is None and not elsa.silenced


def test_v24_fleeing_with_agilidad_and_an_enemy_stopping_it(vaesen_world, scene, d6):
    world = vaesen_world
    combat = ready(world, scene, d6, (9, 5, 2))
    elsa, miller = fighter(combat, world.pc), fighter(combat, world.npc)
    action = services.declare(combat=combat, access=player_access(world), actor=elsa, kind=Kind.FLEE)
    # Only the GM says nobody stops it; a player cannot answer for the miller.
    refused(
        lambda: services.react(action=action, access=player_access(world), reaction=Reaction.STOP, reactor=miller),
        "responde",
        error=PermissionDenied,
    )
    # Flee: Físico 3 + Agilidad 2 = 5 dice, one 6; the miller's Agilidad: 4 dice, one 6.
    d6.extend([[6, 1, 1, 1, 1], [6, 1, 1, 1]])
    services.react(action=action, access=gm_access(world), reaction=Reaction.STOP, reactor=miller)
    action.refresh_from_db()
    assert action.target == miller and not action.succeeded
    assert not fighter(combat, world.pc).fled
    for _ in range(3):
        services.next_turn(combat=combat, access=gm_access(world))
    action = services.declare(combat=combat, access=player_access(world), actor=elsa, kind=Kind.FLEE)
    d6.append([6, 1, 1, 1, 1])
    services.react(action=action, access=gm_access(world), reaction=Reaction.NONE)
    assert fighter(combat, world.pc).fled
    # Out of the order: the miller acts next.
    services.next_turn(combat=combat, access=gm_access(world))
    combat.refresh_from_db()
    assert combat.acting == miller


# --- ambush (V25) ------------------------------------------------------------------------


def test_v25_a_successful_ambush_rolls_initiative_twice_and_adds_to_the_first_action(vaesen_world, scene, d6):
    world = vaesen_world
    combat = start(world, scene)
    elsa, miller = fighter(combat, world.pc), fighter(combat, world.npc)
    # Sigilo: Precisión 4 + Sigilo 3 = 7 dice, three 6s; Vigilancia: Lógica 3 = 3 dice, one 6.
    d6.extend([[6, 6, 6, 1, 1, 1, 1], [6, 1, 1]])
    worked = services.ambush(combat=combat, access=gm_access(world), roller=elsa, watcher=miller, ambushers=[elsa])
    assert worked
    elsa = fighter(combat, world.pc)
    assert elsa.rolls_twice and elsa.first_action_bonus == 1
    # Twice, keep the best.
    d6.extend([[3, 8], [5], [2]])
    services.initiative_roll(combat=combat, access=gm_access(world))
    elsa = fighter(combat, world.pc)
    assert elsa.initiative_value == 8 and elsa.initiative.latest.entry["spec"] == "2d10"
    refused(
        lambda: services.ambush(combat=combat, access=gm_access(world), roller=elsa, watcher=miller, ambushers=[elsa]),
        "ya se tiró",
    )
    # The first action has the extra die, once.
    action = services.declare(combat=combat, access=player_access(world), actor=elsa, kind=Kind.ATTACK, target=miller)
    assert action.ambush_bonus == 1 and fighter(combat, world.pc).first_action_bonus == 0
    d6.append([1, 1, 1, 1])
    services.react(action=action, access=gm_access(world), reaction=Reaction.NONE)
    action.refresh_from_db()
    game = action.roll.latest.signed_game
    assert game["pool"] == 4 and ["Emboscada", 1] in game["breakdown"]


def test_v25_a_failed_ambush_gives_the_watcher_the_double_roll(vaesen_world, scene, d6):
    world = vaesen_world
    combat = start(world, scene)
    elsa, miller = fighter(combat, world.pc), fighter(combat, world.npc)
    d6.extend([[6, 1, 1, 1, 1, 1, 1], [6, 1, 1]])
    assert not services.ambush(combat=combat, access=gm_access(world), roller=elsa, watcher=miller, ambushers=[elsa])
    assert fighter(combat, world.npc).rolls_twice and not fighter(combat, world.pc).rolls_twice


def test_the_ambush_goes_before_the_initiative(vaesen_world, scene, d6):
    world = vaesen_world
    combat = ready(world, scene, d6)
    elsa, miller = fighter(combat, world.pc), fighter(combat, world.npc)
    refused(
        lambda: services.ambush(combat=combat, access=gm_access(world), roller=elsa, watcher=miller, ambushers=[elsa]),
        "antes que la iniciativa",
    )


# --- the GM runs the tracker -----------------------------------------------------------------


def test_one_open_combat_per_scene_and_only_the_gm_runs_it(vaesen_world, scene):
    world = vaesen_world
    combat = start(world, scene)
    refused(lambda: start(world, scene), "Ya hay un combate en curso")
    refused(
        lambda: services.next_turn(combat=combat, access=player_access(world)),
        "dirección",
        error=PermissionDenied,
    )
    refused(lambda: services.next_turn(combat=combat, access=gm_access(world)), "Primero hay que tirar la iniciativa")
    services.combat_end(combat=combat, access=gm_access(world))
    refused(lambda: services.initiative_roll(combat=combat, access=gm_access(world)), "ya ha terminado")


def test_cancelling_a_pending_action_gives_the_action_back(vaesen_world, scene, d6):
    world = vaesen_world
    combat = ready(world, scene, d6)
    elsa, miller = fighter(combat, world.pc), fighter(combat, world.npc)
    action = services.declare(combat=combat, access=player_access(world), actor=elsa, kind=Kind.ATTACK, target=miller)
    services.cancel(action=action, access=gm_access(world))
    assert not VaesenAction.objects.exists()
    assert fighter(combat, world.pc).slow_used == 0


def test_rules_reading_matches_the_stored_outcome(vaesen_world, scene, d6):
    """The stored successes are what rules.vaesen reads of the signed dice."""
    world = vaesen_world
    combat = ready(world, scene, d6)
    elsa, miller = fighter(combat, world.pc), fighter(combat, world.npc)
    action = services.declare(combat=combat, access=player_access(world), actor=elsa, kind=Kind.ATTACK, target=miller)
    services.react(action=action, access=gm_access(world), reaction=Reaction.PARRY_STRENGTH)
    action.refresh_from_db()
    made = vaesen.count_successes(action.roll.latest.entry["dice"])
    answered = vaesen.count_successes(action.reaction_roll.latest.entry["dice"])
    assert action.successes_left == vaesen.after_reaction(made, answered)
    assert action.succeeded == (made - answered >= 1)


def test_every_combat_roll_is_signed_vaesen_verifies_offline_and_shows_on_the_roll_log(vaesen_world, scene):
    """V17–V25 through the signed log: initiative, ambush, attack, reaction
    (and armour when there is some) are entries whose ``game`` says
    ``"system": "vaesen"`` and what they were; ``verify_rolls`` accepts them."""
    from io import StringIO

    from django.core.management import call_command
    from django.urls import reverse

    from tests.conftest import client_for

    world = vaesen_world
    world.pc.vaesen.armour_protection = 1
    world.pc.vaesen.save()
    combat = start(world, scene, world.pc, world.npc)
    elsa, miller = fighter(combat, world.pc), fighter(combat, world.npc)
    services.ambush(combat=combat, access=gm_access(world), roller=miller, watcher=elsa, ambushers=[miller])
    services.initiative_roll(combat=combat, access=gm_access(world))
    combat.refresh_from_db()
    acting = services.current(combat, list(combat.combatants.select_related("character").order_by("order")))
    target = elsa if acting.pk == miller.pk else miller
    action = services.declare(combat=combat, access=gm_access(world), actor=acting, kind=Kind.ATTACK, target=target)
    action = services.react(action=action, access=gm_access(world), reaction=Reaction.DODGE)
    tests = {entry.signed_game.get("test") for entry in RollEntry.objects.filter(campaign=world.campaign)}
    assert {"ambush", "ambush_watch", "initiative", "attack", "reaction"} <= tests
    assert {
        entry.signed_game["system"] for entry in RollEntry.objects.filter(campaign=world.campaign, kind="roll")
    } == {"vaesen"}
    out = StringIO()
    call_command("verify_rolls", "--campaign", world.campaign.slug, stdout=out, no_color=True)
    assert out.getvalue().startswith(f"OK  {world.campaign.slug}:")
    html = client_for(world.player).get(reverse("rolls:roll-log", args=[world.campaign.slug])).content.decode()
    assert action.roll.first.purpose in html.replace("&#x27;", "'")


def test_the_player_is_told_an_action_waits_for_their_reaction(vaesen_world, scene, d6):
    """V21 — the reaction is declared before the roll: the target's player is asked, with the link."""
    from campaigns.models import Notification

    world = vaesen_world
    combat = ready(world, scene, d6, (2, 9, 5))
    miller, elsa = fighter(combat, world.npc), fighter(combat, world.pc)
    action = services.declare(combat=combat, access=gm_access(world), actor=miller, kind=Kind.ATTACK, target=elsa)
    note = Notification.objects.get(user=world.player)
    assert "Ataque de El molinero contra Elsa" in note.text and note.url.endswith(f"#accion-{action.pk}")
    # Nobody is told about an NPC's.
    services.react(action=action, access=gm_access(world), reaction=Reaction.NONE)
    assert Notification.objects.filter(user=world.gm).count() == 0
