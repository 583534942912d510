"""Combat services: initiative (H38, H40, H41), attacks (H42, H43), damage
(H44–H52) and the effects of criticals and fumbles (H48, H49)."""

from __future__ import annotations

import pytest
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction

from campaigns.models import Notification
from campaigns.permissions import campaign_access
from rolls.models import RollEntry
from rules import hitos
from rules.hitos_combat import attack_damage
from sheets.models import Character, SheetEvent
from systems.hitos.campaign import gm_pool
from systems.hitos.checks.services import lock_table_roll, table_reroll
from systems.hitos.combat import services as combat_services
from systems.hitos.models import Aspect, Combatant, HitosEvent, TableRollKind


def access(play, user):
    return campaign_access(user, play.campaign)


def start(play, *characters):
    return combat_services.combat_start(
        scene=play.scene, access=access(play, play.gm), characters=characters or [play.ines, play.tomas, play.npc]
    )


def combatant(combat, character) -> Combatant:
    return Combatant.objects.select_related("character", "combat").get(combat=combat, character=character)


def attack(play, combat, attacker, target, *, user=None, weapon=None, **kwargs):
    a = combatant(combat, attacker)
    return combat_services.attack_make(
        combat=combat,
        access=access(play, user or play.gm),
        attacker=a,
        target=combatant(combat, target),
        weapon=weapon if weapon is not None else attacker.weapons.get(),
        **kwargs,
    )


# --- the tracker -------------------------------------------------------------------------


def test_initiative_is_c_plus_iniciativa_rolled_through_the_log_and_ordered_high_to_low(play, dice):
    combat = start(play)
    # Everyone's Iniciativa is Reflejos 6 + Intelecto 5 ÷ 2 = 8.
    dice.extend([[2, 5, 9], [3, 3, 3], [8, 8, 9]])
    ordered = combat_services.initiative_roll(combat=combat, access=access(play, play.gm))
    assert [c.character for c in ordered] == [play.npc, play.ines, play.tomas]
    rows = list(combat.combatants.select_related("initiative__first").order_by("order"))
    # H40 — «C + Iniciativa»: 8 + 8, 5 + 8, 3 + 8.
    assert [(c.order, c.initiative_total) for c in rows] == [(0, 16), (1, 13), (2, 11)]
    assert all(c.initiative.kind == TableRollKind.INITIATIVE for c in rows)
    assert rows[0].initiative.first.signed_game["breakdown"] == [["Iniciativa", 8]]
    # H38 — everyone starts unprepared.
    assert not any(c.has_acted for c in rows)


def test_a_higher_iniciativa_score_breaks_a_tie_without_a_roll_off(play, dice):
    play.ines.hitos.intelecto = 7  # Iniciativa 6 + 7 ÷ 2 = 9, Tomás 8
    play.ines.hitos.save()
    combat = start(play, play.ines, play.tomas)
    dice.extend([[1, 4, 9], [2, 5, 9]])  # 4 + 9 = 13 and 5 + 8 = 13
    ordered = combat_services.initiative_roll(combat=combat, access=access(play, play.gm))
    assert [c.character for c in ordered] == [play.ines, play.tomas]
    assert not RollEntry.objects.filter(purpose__startswith="Desempate").exists()


def test_tied_characters_roll_off_among_themselves_until_untied(play, dice):
    combat = start(play)
    # Inés and Tomás tie at 13 with the same score; the NPC is not involved.
    dice.extend([[4, 5, 6], [4, 5, 6], [1, 2, 3]])
    # First roll-off ties again (C 6 and 6), the second decides (C 2 against 8).
    dice.extend([[6, 6, 7], [5, 6, 9], [1, 2, 3], [7, 8, 9]])
    ordered = combat_services.initiative_roll(combat=combat, access=access(play, play.gm))
    assert [c.character for c in ordered] == [play.tomas, play.ines, play.npc]
    roll_offs = RollEntry.objects.filter(purpose__startswith="Desempate de iniciativa").order_by("seq")
    assert [e.character_id for e in roll_offs] == [play.ines.pk, play.tomas.pk, play.ines.pk, play.tomas.pk]
    # The first initiative rolls keep their totals; the order records the roll-off.
    assert [c.initiative_total for c in ordered] == [13, 13, 10]


def test_a_second_open_combat_in_the_scene_is_refused(play):
    start(play)
    with pytest.raises(ValidationError, match="Ya hay un combate en curso"):
        start(play)


def test_only_the_gm_starts_a_combat(play):
    with pytest.raises(PermissionDenied):
        combat_services.combat_start(scene=play.scene, access=access(play, play.ana), characters=[play.ines])


def test_delaying_makes_the_acting_position_the_new_place_in_the_order(play, dice):
    combat = start(play)
    dice.extend([[2, 5, 9], [3, 3, 3], [8, 8, 9]])
    combat_services.initiative_roll(combat=combat, access=access(play, play.gm))
    npc = combatant(combat, play.npc)
    combat_services.combatant_delay(combatant=npc, access=access(play, play.gm))
    assert Combatant.objects.get(pk=npc.pk).delaying
    combat_services.combatant_delay(combatant=npc, access=access(play, play.gm), position=2)
    rows = list(combat.combatants.order_by("order"))
    assert [c.character_id for c in rows] == [play.ines.pk, play.tomas.pk, play.npc.pk]
    assert rows[2].has_acted and not rows[2].delaying


def test_next_round_ends_total_defence(play):
    combat = start(play)
    npc = combatant(combat, play.npc)
    combat_services.combatant_set(
        combatant=npc, access=access(play, play.gm), all_out_defence=True, defenceless=False, out_of_combat=False
    )
    combat_services.next_round(combat=combat, access=access(play, play.gm))
    combat.refresh_from_db()
    assert combat.round == 2
    assert not Combatant.objects.get(pk=npc.pk).all_out_defence


# --- attacks -----------------------------------------------------------------------------


def test_an_unprepared_target_has_two_less_defensa_until_it_acts(play, dice):
    combat = start(play)
    dice.extend([[2, 5, 9], [2, 5, 9]])
    first = attack(play, combat, play.ines, play.npc)
    # NPC Defensa: Reflejos 6 + Combate 4 + 5 = 15; H38 — desprevenido −2.
    assert first.defence == {"base": 15, "parts": [["desprevenido", -2]], "total": 13}
    assert first.table_roll.difficulty == 13
    assert first.table_roll.kind == TableRollKind.ATTACK
    assert combatant(combat, play.ines).has_acted
    combat_services.combatant_act(combatant=combatant(combat, play.npc), access=access(play, play.gm))
    second = attack(play, combat, play.ines, play.npc)
    assert second.defence == {"base": 15, "parts": [], "total": 15}


def test_the_attack_is_reflejos_plus_combate_with_the_attackers_state_penalty(play, dice):
    play.ines.hitos.health_slashes = 8
    play.ines.hitos.save()
    penalty = Character.objects.get(pk=play.ines.pk).hitos.health_penalty
    assert penalty < 0
    combat = start(play)
    dice.append([2, 5, 9])
    made = attack(play, combat, play.ines, play.npc, extra=[("Posición elevada", 1)])
    breakdown = made.table_roll.first.signed_game["breakdown"]
    assert breakdown[:3] == [["Reflejos", 6], ["Combate", 4], ["Posición elevada", 1]]
    assert breakdown[3][0].startswith("Salud") and breakdown[3][1] == penalty
    assert made.table_roll.facts["modifier"] == 11 + penalty


def test_a_wounded_target_has_its_defensa_lowered(play, dice):
    play.tomas.hitos.health_slashes = 8
    play.tomas.hitos.save()
    penalty = Character.objects.get(pk=play.tomas.pk).hitos.penalty
    combat = start(play)
    made = attack(play, combat, play.npc, play.tomas, weapon=combat_services.NPC_ATTACK)
    assert made.defence["parts"] == [["desprevenido", -2], ["estado", penalty]]
    assert made.defence["total"] == 15 - 2 + penalty


def test_all_out_defence_and_defenceless_change_the_difficulty(play):
    combat = start(play)
    made = attack(play, combat, play.ines, play.npc, all_out_defence=True)
    assert made.defence["total"] == 15 - 2 + 4
    made = attack(play, combat, play.ines, play.npc, defenceless=True)
    assert made.defence["total"] == 5


def test_a_player_attacks_with_their_own_character_only(play):
    combat = start(play)
    attack(play, combat, play.ines, play.npc, user=play.ana)
    with pytest.raises(PermissionDenied):
        attack(play, combat, play.tomas, play.npc, user=play.ana)


def test_a_weapon_of_another_character_is_refused(play):
    combat = start(play)
    with pytest.raises(ValidationError):
        attack(play, combat, play.ines, play.npc, weapon=play.tomas.weapons.get())


def test_the_same_client_seed_twice_makes_one_attack(play):
    from tests.factories import client_seed

    combat = start(play)
    seed = client_seed()
    first = attack(play, combat, play.ines, play.npc, client_seed=seed)
    again = attack(play, combat, play.ines, play.npc, client_seed=seed)
    assert first.pk == again.pk


# --- damage ------------------------------------------------------------------------------


def test_damage_is_the_weapons_code_read_from_the_same_dice_plus_bonus_minus_rd(play, dice):
    play.npc.hitos.rd = 3
    play.npc.hitos.save()
    combat = start(play)
    dice.append([9, 3, 7])  # C 7: 10 + 7 = 17 against 13
    made = attack(play, combat, play.ines, play.npc)
    damage = combat_services.attack_damage_for(made)
    # H44 — the Cuchillo's code C is the middle die, 7; H45 — bonus (5 + 4) ÷ 4 = 2; H50 — RD 3.
    assert (damage.dice_damage, damage.bonus, damage.rd, damage.total) == (7, 2, 3, 6)
    expected = attack_damage(hitos.HitosRoll(tuple(made.table_roll.latest.entry["dice"])), "C", bonus=2, rd=3)
    assert damage == expected


def test_a_miss_does_no_damage(play, dice):
    combat = start(play)
    dice.append([2, 2, 3])  # 10 + 2 = 12 against 13
    made = attack(play, combat, play.ines, play.npc)
    assert combat_services.attack_damage_for(made) is None
    with pytest.raises(ValidationError, match="falló"):
        combat_services.damage_apply(attack=made, access=access(play, play.gm))


def test_a_double_ten_hits_multiplies_the_weapon_dice_and_proposes_a_secuela(play, dice):
    play.npc.hitos.reflejos = 10  # Defensa 19: only the critical hits
    play.npc.hitos.save()
    combat = start(play)
    dice.append([10, 4, 10])
    made = attack(play, combat, play.ines, play.npc)
    damage = combat_services.attack_damage_for(made)
    # H47 — ×2 the weapon dice (K4 default), then the bonus: 10 × 2 + 2.
    assert (damage.multiplier, damage.total) == (2, 22)
    effect = combat_services.attack_effect_for(made)
    assert (effect.kind, effect.duration) == ("secuela temporal", "escena")
    combat_services.critical_effect_confirm(
        attack=made, access=access(play, play.gm), confirm=True, phrase="Brazo roto"
    )
    aspect = play.npc.aspects.get(kind=Aspect.Kind.TEMPORARY)
    assert (aspect.phrase, aspect.duration) == ("Brazo roto", Aspect.Duration.SCENE)
    made.refresh_from_db()
    assert made.effect_decided
    assert combat_services.attack_effect_for(made) is None
    with pytest.raises(ValidationError):
        combat_services.critical_effect_confirm(attack=made, access=access(play, play.gm), confirm=False)


def test_a_fumble_misses_and_proposes_a_negative_aspect_for_the_attacker(play, dice):
    combat = start(play)
    dice.append([1, 9, 1])
    made = attack(play, combat, play.ines, play.npc)
    assert combat_services.attack_damage_for(made) is None
    effect = combat_services.attack_effect_for(made)
    assert (effect.kind, effect.duration) == ("aspecto negativo", "escena")
    with pytest.raises(PermissionDenied):
        combat_services.critical_effect_confirm(attack=made, access=access(play, play.ana), confirm=True, phrase="x")
    combat_services.critical_effect_confirm(attack=made, access=access(play, play.gm), confirm=True, phrase="Desarmada")
    assert play.ines.aspects.get(kind=Aspect.Kind.TEMPORARY).phrase == "Desarmada"
    event = SheetEvent.objects.filter(character=play.ines, kind=HitosEvent.ASPECT).get()
    assert event.actor == play.gm


def test_a_dismissed_effect_adds_nothing(play, dice):
    combat = start(play)
    dice.append([1, 9, 1])
    made = attack(play, combat, play.ines, play.npc)
    combat_services.critical_effect_confirm(attack=made, access=access(play, play.gm), confirm=False)
    assert not play.ines.aspects.filter(kind=Aspect.Kind.TEMPORARY).exists()


def test_damage_is_read_from_the_latest_version_after_a_re_roll(play, dice):
    combat = start(play)
    dice.append([9, 3, 7])
    made = attack(play, combat, play.ines, play.npc)
    with transaction.atomic():
        table_roll = lock_table_roll(made.table_roll)
        table_reroll(table_roll, user=play.ana, positions=[0, 1, 2], reading=hitos.Reading.NORMAL)
    made.refresh_from_db()
    latest = made.table_roll.latest
    assert latest.parent_id == made.table_roll.first_id
    damage = combat_services.attack_damage_for(made)
    roll = hitos.HitosRoll(tuple(latest.entry["dice"]))
    if hitos.check(roll, made.table_roll.facts["modifier"], 13).success:
        assert damage == attack_damage(roll, "C", bonus=2)
    else:
        assert damage is None


def test_an_aspect_shifts_the_damage_code_for_a_drama_point(play, dice):
    combat = start(play)
    dice.append([9, 3, 7])
    made = attack(play, combat, play.ines, play.npc, user=play.ana)
    combat_services.attack_shift(attack=made, access=access(play, play.ana), steps=1, aspect="Ágil como una gata")
    made.refresh_from_db()
    # H46 — C one step up the ladder is M: 9 + 2.
    assert made.shift == 1
    damage = combat_services.attack_damage_for(made)
    assert (damage.code.text, damage.total) == ("M", 11)
    play.ines.refresh_from_db()
    assert play.ines.hitos.drama_points == 2
    event = SheetEvent.objects.get(character=play.ines, kind=HitosEvent.DRAMA)
    assert "Ágil como una gata" in event.reason and event.roll_id == made.table_roll.latest_id


def test_the_npc_side_pays_a_shift_down_from_the_gm_pool(play, dice):
    play.campaign.game_state = {"gm_pool": 2}
    play.campaign.save(update_fields=["game_state"])
    combat = start(play)
    dice.append([9, 3, 7])
    made = attack(play, combat, play.ines, play.npc)
    combat_services.attack_shift(attack=made, access=access(play, play.gm), steps=-1, aspect="Chaqueta de cuero")
    play.campaign.refresh_from_db()
    assert gm_pool(play.campaign) == 1
    assert combat_services.attack_damage_for(Attack_get(made)).code.text == "m"


def Attack_get(attack):
    return type(attack).objects.get(pk=attack.pk)


def test_a_player_shifts_only_for_their_own_side(play, dice):
    combat = start(play)
    dice.append([9, 3, 7])
    made = attack(play, combat, play.ines, play.tomas)
    with pytest.raises(PermissionDenied):
        combat_services.attack_shift(attack=made, access=access(play, play.bruno), steps=1, aspect="Fuerte")
    combat_services.attack_shift(attack=made, access=access(play, play.bruno), steps=-1, aspect="Fuerte")
    play.tomas.refresh_from_db()
    assert play.tomas.hitos.drama_points == 2


def test_without_drama_points_the_shift_is_refused_and_nothing_changes(play, dice):
    play.ines.hitos.drama_points = 0
    play.ines.hitos.save()
    combat = start(play)
    dice.append([9, 3, 7])
    made = attack(play, combat, play.ines, play.npc)
    with pytest.raises(ValidationError):
        combat_services.attack_shift(attack=made, access=access(play, play.ana), steps=1, aspect="Ágil")
    assert Attack_get(made).shift == 0


def test_applying_damage_marks_the_targets_meter_and_tells_its_player(play, dice):
    play.tomas.hitos.rd = 6
    play.tomas.hitos.save()
    combat = start(play)
    dice.append([9, 3, 7])  # 7 + 2 − 6 = 3, below Aguante 7: no mass-damage test
    made = attack(play, combat, play.ines, play.tomas)
    before = RollEntry.objects.count()
    combat_services.damage_apply(attack=made, access=access(play, play.gm))
    assert RollEntry.objects.count() == before
    play.tomas.refresh_from_db()
    assert play.tomas.hitos.health_slashes + play.tomas.hitos.health_crosses == 3
    event = SheetEvent.objects.get(character=play.tomas, kind=HitosEvent.DAMAGE)
    assert (event.actor, event.summary, event.roll_id) == (play.gm, "3", made.table_roll.latest_id)
    made.refresh_from_db()
    assert (made.damage_applied, made.applied_by) == (3, play.gm)
    note = Notification.objects.get(user=play.bruno, kind=Notification.Kind.CHARACTER)
    assert note.text == "Tomás Ferrer recibe 3 de daño."
    assert note.url.endswith(f"/combate/#attack-{made.pk}")
    with pytest.raises(ValidationError, match="ya está aplicado"):
        combat_services.damage_apply(attack=made, access=access(play, play.gm))


def test_damage_reaching_aguante_rolls_the_mass_damage_test(play, dice):
    combat = start(play)
    dice.extend([[9, 3, 7], [5, 6, 7]])  # 9 damage ≥ Aguante 7; then the test
    made = attack(play, combat, play.ines, play.tomas)
    combat_services.damage_apply(attack=made, access=access(play, play.gm))
    test = RollEntry.objects.get(purpose__startswith="Prueba de daño masivo")
    assert test.character_id == play.tomas.pk
    event = SheetEvent.objects.get(character=play.tomas, kind=HitosEvent.DAMAGE)
    assert event.roll_id == test.pk


def test_only_the_gm_applies_damage(play, dice):
    combat = start(play)
    dice.append([9, 3, 7])
    made = attack(play, combat, play.ines, play.tomas, user=play.ana)
    with pytest.raises(PermissionDenied):
        combat_services.damage_apply(attack=made, access=access(play, play.ana))
    assert not SheetEvent.objects.filter(kind=HitosEvent.DAMAGE).exists()


def test_codes_above_mcm_are_accepted_and_too_many_extra_dice_refused(play):
    # H51 — the extra dice are drawn when the damage is applied
    # (tests/systems/hitos/test_combat_extra_dice.py).
    weapon = play.ines.weapons.create(name="Cañón", damage_code="mCM+2d10", melee=False)
    combat = start(play)
    assert attack(play, combat, play.ines, play.npc, weapon=weapon).damage_code == "mCM+2d10"
    # A roll of the log has at most 100 dice: 3d10 and 97 extra ones.
    weapon = play.ines.weapons.create(name="Lluvia de meteoritos", damage_code="mCM+98d10", melee=False)
    with pytest.raises(ValidationError, match="Demasiados dados adicionales"):
        attack(play, combat, play.ines, play.npc, weapon=weapon)


def test_an_ended_combat_takes_no_more_attacks(play):
    combat = start(play)
    combat_services.combat_end(combat=combat, access=access(play, play.gm))
    with pytest.raises(ValidationError, match="terminado"):
        attack(play, combat, play.ines, play.npc)
    # The scene may then have a new one.
    start(play)


def test_an_attack_whose_damage_is_applied_cannot_be_rerolled(play, dice):
    from systems.hitos.activations import services as activations

    fight = start(play)
    dice.extend([[9, 9, 8]])
    made = attack(play, fight, play.tomas, play.npc)
    combat_services.damage_apply(attack=made, access=access(play, play.gm))
    with pytest.raises(ValidationError, match="ya está resuelto"):
        activations.activate_positive(
            table_roll=made.table_roll,
            user=play.bruno,
            aspect_choice=f"a{play.tomas_aspect.pk}",
            positions=[0],
            payment="point",
        )
    play.tomas.refresh_from_db()
    assert play.tomas.hitos.drama_points == 3


def test_initiative_rolls_are_not_rerolled_by_aspects(play):
    from systems.hitos.activations import services as activations

    fight = start(play)
    combat_services.initiative_roll(combat=fight, access=access(play, play.gm))
    initiative = combatant(fight, play.ines).initiative
    with pytest.raises(ValidationError, match="iniciativa"):
        activations.activate_negative(
            table_roll=initiative, user=play.bruno, aspect_choice=f"s{play.scene_aspect.pk}", positions=[0]
        )


def test_a_late_arrival_keeps_the_delayed_order_of_the_others(play, dice):
    gm = access(play, play.gm)
    fight = start(play, play.ines, play.npc)
    dice.extend([[9, 9, 9], [1, 1, 2]])  # Inés acts first, the NPC second
    combat_services.initiative_roll(combat=fight, access=gm)
    ines = combatant(fight, play.ines)
    assert ines.order == 0
    combat_services.combatant_delay(combatant=ines, access=gm, position=1)  # H41: after the NPC
    combat_services.combatant_add(combat=fight, access=gm, character=play.tomas)
    dice.extend([[1, 1, 1]])  # Tomás: the lowest total
    combat_services.initiative_roll(combat=fight, access=gm)
    order = list(fight.combatants.order_by("order").values_list("character__name", flat=True))
    assert order == [play.npc.name, play.ines.name, play.tomas.name]


def test_damage_absorbed_by_armour_tells_nobody(play, dice):
    play.tomas.hitos.rd = 20
    play.tomas.hitos.save()
    fight = start(play)
    dice.append([9, 3, 7])
    made = attack(play, fight, play.ines, play.tomas)
    combat_services.damage_apply(attack=made, access=access(play, play.gm))
    made.refresh_from_db()
    assert made.damage_applied == 0
    assert not Notification.objects.filter(kind=Notification.Kind.CHARACTER).exists()


def test_an_attack_the_gm_rolls_for_a_player_character_is_answered_by_its_player(play, dice):
    from systems.hitos.activations import services as activations

    fight = start(play)
    dice.append([5, 6, 7])
    made = attack(play, fight, play.tomas, play.npc)
    table_roll = made.table_roll
    assert table_roll.first.user == play.gm and table_roll.owner == play.bruno
    # The GM may now push back on it, and Bruno answers.
    pending = activations.activate_negative(
        table_roll=table_roll, user=play.gm, aspect_choice=f"s{play.scene_aspect.pk}", positions=[0]
    )
    activations.answer_negative(activation=pending, user=play.bruno, accept=True)
    play.tomas.refresh_from_db()
    assert play.tomas.hitos.drama_points == 4


def test_damage_waits_while_an_activation_on_the_attack_is_pending(play, dice):
    from systems.hitos.activations import services as activations

    fight = start(play)
    dice.extend([[9, 9, 8]])
    made = attack(play, fight, play.tomas, play.npc)
    pending = activations.activate_negative(
        table_roll=made.table_roll, user=play.gm, aspect_choice=f"s{play.scene_aspect.pk}", positions=[0]
    )
    with pytest.raises(ValidationError, match="activación pendiente"):
        combat_services.damage_apply(attack=made, access=access(play, play.gm))
    made.refresh_from_db()
    assert made.damage_applied is None
    # Once answered, the damage is read from the roll as it ended.
    activations.answer_negative(activation=pending, user=play.bruno, accept=True)
    made.refresh_from_db()
    expected = combat_services.attack_damage_for(made)
    if expected is not None:
        combat_services.damage_apply(attack=made, access=access(play, play.gm))
        made.refresh_from_db()
        assert made.damage_applied == expected.total


def test_reroll_refusals_reads_many_attacks_in_one_query(play, dice, django_assert_num_queries):
    from systems.hitos.checks.services import reroll_refusals

    fight = start(play)
    dice.extend([[9, 9, 8], [9, 8, 7], [9, 7, 6]])
    made = [attack(play, fight, play.tomas, play.npc) for _ in range(3)]
    combat_services.damage_apply(attack=made[1], access=access(play, play.gm))
    rolls = [a.table_roll for a in made]
    with django_assert_num_queries(1):
        refusals = reroll_refusals(rolls)
    assert refusals[rolls[0].pk] is None and refusals[rolls[2].pk] is None
    assert "ya está resuelto" in refusals[rolls[1].pk]
