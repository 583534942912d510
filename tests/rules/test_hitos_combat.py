"""HITOS combat: Defensa in play, attack, damage codes, criticals, armour, initiative."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rules.hitos import Reading, check, read_roll
from rules.hitos_codes import DamageCode, code_value, parse_damage_code, shift_code
from rules.hitos_combat import (
    DEFAULT_FALL_TABLE,
    DEFAULT_WEAPONS,
    WEAPONS_VERIFIED,
    InitiativeEntry,
    Weapon,
    attack,
    attack_damage,
    best_rd,
    critical_effect,
    defence_difficulty,
    fall_code,
    initiative_order,
    initiative_total,
    weapons_from_data,
    weapons_to_data,
)
from rules.hitos_options import DEFAULT_DAMAGE_LADDER, HitosOptions


# H38 — «Un personaje desprevenido tiene un –2 a su defensa»
def test_h38_unprepared_is_minus_two():
    breakdown = defence_difficulty(12, unprepared=True)
    assert breakdown.total == 10
    assert breakdown.parts == (("desprevenido", -2),)


# K2 — S001 «Desprevenido (-3 a su defensa)»
def test_k2_unprepared_minus_three_option():
    assert defence_difficulty(12, unprepared=True, options=HitosOptions(unprepared_penalty=3)).total == 9


# H43 — «La dificultad de atacar a una persona indefensa es 5»
# H43 — «Si un personaje opta por dedicar el asalto solo a defenderse recibe un +4 a su Defensa»
def test_h43_defenceless_and_all_out_defence():
    assert defence_difficulty(14, defenceless=True).total == 5
    assert defence_difficulty(14, all_out_defence=True).total == 18
    # H54 — «así como su Defensa tienen una penalización de –2»
    assert defence_difficulty(14, all_out_defence=True, unprepared=True, state_penalty=-2).total == 14


# H42 — «usando siempre Reflejos más combate, pero la dificultad será el valor de Defensa del personaje objetivo»
def test_h42_attack_is_reflejos_plus_combate_against_defensa():
    hit = attack(read_roll([3, 6, 8]), reflejos=4, combate=3, target_defence=13)
    assert (hit.total, hit.difficulty, hit.success) == (13, 13, True)
    miss = attack(read_roll([3, 6, 8]), reflejos=4, combate=3, target_defence=14)
    assert miss.success is False


# H44 — «El daño es la suma de uno o varios resultados de los dados de la tirada de ataque»
@pytest.mark.parametrize(
    ("code", "damage"),
    [("m", 2), ("C", 5), ("M", 9), ("mC", 7), ("mM", 11), ("CM", 14), ("mCM", 16), ("0", 0), ("1", 1)],
)
def test_h44_damage_codes_sum_the_sorted_dice(code, damage):
    assert attack_damage(read_roll([9, 2, 5]), code).total == damage


# H44 — the dice are read after any re-roll (§4.2): the positive reading does not change m/C/M.
def test_h44_damage_uses_the_dice_after_a_reroll():
    rerolled = read_roll([9, 9, 5], Reading.POSITIVE)
    assert attack_damage(rerolled, "CM").total == 18


# H45 — «sumando el bonificador de daño correspondiente del personaje atacante»
# H50 — «Resta la RD de cualquier resultado de daño que afecte al personaje»
def test_h45_h50_bonus_added_and_rd_subtracted_never_below_zero():
    result = attack_damage(read_roll([4, 7, 2]), "C", bonus=2, rd=3)
    assert (result.dice_damage, result.bonus, result.rd, result.total) == (4, 2, 3, 3)
    assert attack_damage(read_roll([4, 7, 2]), "m", bonus=0, rd=5).total == 0


# H50 — «solo tendrá en cuenta el efecto de aquella que le dé un mayor valor de RD. En ningún caso se sumarán»
def test_h50_armours_do_not_stack():
    assert best_rd([2, 4, 1]) == 4
    assert best_rd([]) == 0
    with pytest.raises(ValueError, match="RD"):
        best_rd([-1])


# H46 — «Modifica el tipo de daño un nivel arriba o abajo»
def test_h46_shift_moves_one_step_on_the_ladder():
    assert DEFAULT_DAMAGE_LADDER == ("m", "C", "M", "mM", "CM", "mCM")
    assert shift_code("M", 1, DEFAULT_DAMAGE_LADDER).text == "mM"
    assert shift_code("M", -1, DEFAULT_DAMAGE_LADDER).text == "C"
    assert attack_damage(read_roll([9, 2, 5]), "C", shift=1).total == 9
    assert attack_damage(read_roll([9, 2, 5]), "C", shift=1).code == DamageCode("M")


def test_mc_off_the_default_ladder_is_placed_by_expected_value():
    assert shift_code("mC", 1, DEFAULT_DAMAGE_LADDER).text == "mM"
    assert shift_code("mC", -1, DEFAULT_DAMAGE_LADDER).text == "M"
    ladder = ("m", "C", "M", "mC", "mM", "CM", "mCM")
    assert shift_code("M", 1, ladder).text == "mC"


# H51 — «partir del daño mCM de la tirada correspondiente y añadir tantos dados adicionales de daño directo»
def test_h51_above_mcm_adds_extra_dice_and_below_m_is_zero():
    assert shift_code("mCM", 2, DEFAULT_DAMAGE_LADDER).text == "mCM+2d10"
    assert shift_code("mCM+2d10", -1, DEFAULT_DAMAGE_LADDER).text == "mCM+1d10"
    assert shift_code("m", -1, DEFAULT_DAMAGE_LADDER).text == "0"
    assert shift_code("0", 1, DEFAULT_DAMAGE_LADDER).text == "m"
    result = attack_damage(read_roll([9, 2, 5]), "CM", shift=2, extra_dice=[7])
    assert (result.code.text, result.dice_damage) == ("mCM+1d10", 23)
    with pytest.raises(ValueError, match="necesita 1 dados adicionales, no 0"):
        attack_damage(read_roll([9, 2, 5]), "CM", shift=2)


# H47 — S001 «un doble 10 causa el doble del daño del arma empleada y un triple 10 causa el triple del daño del arma empleada»
def test_h47_k4_critical_multiplies_the_weapon_dice_by_default():
    double = attack_damage(read_roll([10, 3, 10]), "C", bonus=2, rd=1)
    assert (double.multiplier, double.total) == (2, 10 * 2 + 2 - 1)
    triple = attack_damage(read_roll([10, 10, 10]), "mM", bonus=1, rd=0)
    assert (triple.multiplier, triple.total) == (3, 20 * 3 + 1)


# K4 — S000 «si el crítico es un doble 10, el objetivo recibe el doble de daño de lo normal»
def test_k4_total_option_multiplies_dice_and_bonus():
    options = HitosOptions(critical_damage="total")
    assert attack_damage(read_roll([10, 3, 10]), "C", bonus=2, rd=1, options=options).total == (10 + 2) * 2 - 1


# H48 — «Si fue un crítico de doble 10 durará una escena»; H49 — «supone ganar un aspecto temporal negativo»
def test_h48_h49_critical_and_fumble_effects():
    crit = critical_effect(check(read_roll([10, 10, 4]), 0, 20), is_attack=True)
    assert (crit.kind, crit.duration) == ("secuela temporal", "escena")
    fumble = critical_effect(check(read_roll([1, 1, 1]), 20, 10), is_attack=True)
    assert (fumble.kind, fumble.duration) == ("aspecto negativo", "sesión")
    # K7 — a triple 1 lasts a session even though S001 says «de triple 1 (una escena/capítulo)».
    assert critical_effect(check(read_roll([1, 1, 1]), 0, 10)).duration == "sesión"
    assert critical_effect(check(read_roll([4, 5, 6]), 0, 10)) is None


def test_unknown_damage_code_is_a_clear_error():
    for bad in ("X", "Mm", "mCM+", "CM+1d10", "mm", "", 3):
        with pytest.raises(ValueError, match="Código de daño desconocido"):
            parse_damage_code(bad)
    assert parse_damage_code("mCM+2d") == DamageCode("mCM", 2)


# H40 — «En caso de empate, el personaje con mayor puntuación en Iniciativa gana»
def test_h40_k5_initiative_ties_by_score_then_roll_off():
    a, b, c, d = (
        InitiativeEntry("a", 14, 6),
        InitiativeEntry("b", 14, 8),
        InitiativeEntry("c", 10, 5),
        InitiativeEntry("d", 14, 6),
    )
    order = initiative_order([a, b, c, d])
    assert [[e.id for e in group] for group in order] == [["b"], ["a", "d"], ["c"]]


# H40 — S001 «Se realiza una única tirada de iniciativa para todo el combate»
def test_h40_initiative_total_is_c_plus_iniciativa():
    assert initiative_total(read_roll([2, 9, 6]), 7) == 13
    assert initiative_total(read_roll([2, 9, 6]), 7, modifier=-2) == 11


# H40 — S001 «en caso de empate entre varios combatientes se realiza una nueva prueba solo entre ellos»
def test_h40_k5_reroll_only_option():
    entries = [InitiativeEntry("a", 14, 6), InitiativeEntry("b", 14, 8)]
    order = initiative_order(entries, HitosOptions(initiative_ties="reroll"))
    assert [[e.id for e in group] for group in order] == [["a", "b"]]


def test_weapons_are_editable_unverified_data():
    assert WEAPONS_VERIFIED is False
    data = weapons_to_data(DEFAULT_WEAPONS)
    assert weapons_from_data(data) == DEFAULT_WEAPONS
    assert weapons_from_data([{"name": "Bastón", "code": "C"}]) == (Weapon("Bastón", "C"),)
    with pytest.raises(ValueError, match="Código de daño desconocido"):
        weapons_from_data([{"name": "Rayo", "code": "XYZ"}])
    with pytest.raises(ValueError, match="Falta el campo 'code'"):
        weapons_from_data([{"name": "Rayo"}])


# H72 — «puede reducir el efecto de la caída en tres metros»
def test_h72_fall_table_is_data_and_an_aspect_reduces_three_metres():
    assert DEFAULT_FALL_TABLE[0] == (3, "m")
    assert fall_code(7).text == "M"
    assert fall_code(7, aspect=True).text == "C"
    assert fall_code(2, aspect=True).text == "0"
    assert fall_code(22).text == "mCM+2d10"


@settings(max_examples=200, deadline=None)
@given(
    st.tuples(*[st.integers(1, 10)] * 3),
    st.sampled_from(["m", "C", "M", "mC", "mM", "CM", "mCM"]),
    st.integers(0, 5),
    st.integers(0, 8),
)
def test_damage_is_never_negative_and_matches_the_code(dice, code, bonus, rd):
    roll = read_roll(dice)
    result = attack_damage(roll, code, bonus=bonus, rd=rd)
    low, mid, high = roll.sorted
    assert result.dice_damage == code_value(code, low, mid, high)
    assert result.total == max(0, result.dice_damage * (roll.critical_level or 1) + bonus - rd)
