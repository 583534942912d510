"""HITOS core: reading a roll, checks, activations, opposed and extended rolls."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rules.dice import FixedDice
from rules.hitos import (
    DEFAULT_DIFFICULTY,
    DIFFICULTY_SCALE,
    HitosRoll,
    Opposed,
    Reading,
    activate_negative,
    activate_positive,
    check,
    difficulty_name,
    difficulty_value,
    extended_progress,
    opposed,
    read_roll,
    reroll,
    roll_3d10,
)
from rules.hitos_options import HitosOptions

d10 = st.integers(min_value=1, max_value=10)
three_d10 = st.tuples(d10, d10, d10)


# H1 — «En otra tirada se obtiene 4, 5, 5, así que m será 4, C será 5 y M será 5»
def test_h1_sorting_is_a_reading_and_ties_are_allowed():
    roll = read_roll([5, 4, 5])
    assert (roll.m, roll.C, roll.M) == (4, 5, 5)
    assert roll.dice == (5, 4, 5)  # raw order kept
    assert read_roll([7, 3, 6]).sorted == (3, 6, 7)
    assert (read_roll([6, 6, 6]).m, read_roll([6, 6, 6]).C, read_roll([6, 6, 6]).M) == (6, 6, 6)


def test_labels_name_each_raw_die_for_the_roll_card():
    assert read_roll([5, 4, 5]).labels == ("C", "m", "M")
    assert read_roll([9, 1, 5]).labels == ("M", "m", "C")
    assert read_roll([6, 6, 6]).labels == ("m", "C", "M")


def test_roll_3d10_draws_in_order_from_the_source():
    roll = roll_3d10(FixedDice([9, 1, 5]))
    assert roll.dice == (9, 1, 5)
    assert roll.reading is Reading.NORMAL
    assert roll.C == 5


# H2 — «se escoge el resultado del dado C y se añaden los rasgos apropiados»
# Worked example (S000): «Lanza los dados y obtiene 1, 5, 9. Su resultado es pues: 5 (el dado C) + 6 (Reflejos) + 5»
def test_h2_jeremy_picks_the_lock():
    result = check(read_roll([1, 5, 9]), 6 + 5, 15)
    assert result.value == 5
    assert result.total == 16
    assert result.success is True
    assert result.margin == 1


def test_check_result_as_plain_data():
    assert check(read_roll([9, 1, 5]), 11, 15).to_dict() == {
        "dice": [9, 1, 5],
        "labels": ["M", "m", "C"],
        "reading": "normal",
        "m": 1,
        "C": 5,
        "M": 9,
        "value": 5,
        "modifier": 11,
        "total": 16,
        "difficulty": 15,
        "margin": 1,
        "success": True,
        "critical_level": 0,
        "fumble_level": 0,
    }


# H3 — «Si el resultado de la tirada es igual o mayor que la dificultad la acción tiene éxito»
def test_h3_equal_to_the_difficulty_succeeds_by_default():
    assert check(read_roll([2, 5, 8]), 10, 15).success is True
    assert check(read_roll([2, 5, 8]), 9, 15).success is False


# K1 — S002 «La suma final debe ser mayor a la dificultad»
def test_k1_strict_option_needs_more_than_the_difficulty():
    strict = HitosOptions(strict_success=True)
    assert check(read_roll([2, 5, 8]), 10, 15, strict).success is False
    assert check(read_roll([2, 5, 8]), 11, 15, strict).success is True


# H4 — «utilizad la dificultad intermedia (15) como dificultad por defecto»
def test_h4_default_difficulty_is_15():
    assert DEFAULT_DIFFICULTY == 15
    assert check(read_roll([3, 3, 3]), 12).difficulty == 15


def test_named_difficulty_scale():
    assert DIFFICULTY_SCALE == (
        ("Fácil", 10),
        ("Media", 15),
        ("Difícil", 20),
        ("Muy difícil", 25),
        ("Extremadamente difícil", 30),
        ("Casi imposible", 35),
    )
    assert difficulty_value("muy difícil") == 25
    assert difficulty_value(" Casi imposible ") == 35
    assert difficulty_value("12") == 12
    assert difficulty_value(18) == 18
    assert difficulty_name(13) == "Media"
    assert difficulty_name(22) == "Difícil"
    assert difficulty_name(5) is None


def test_unknown_difficulty_word_is_a_clear_error():
    with pytest.raises(ValueError, match="Dificultad desconocida: 'Imposible'"):
        difficulty_value("Imposible")


# H5 — «Si durante una tirada se obtiene un doble o triple 10 el resultado es un crítico»
# H5 — «es un éxito automático independientemente de la dificultad de la tirada»
def test_h5_double_and_triple_ten_are_criticals_that_always_succeed():
    double = check(read_roll([10, 2, 10]), 0, 40)
    assert (double.success, double.critical, double.critical_level) == (True, True, 2)
    triple = check(read_roll([10, 10, 10]), -20, 40)
    assert (triple.success, triple.critical_level) == (True, 3)
    assert check(read_roll([10, 9, 2]), 0, 40).critical is False


# H6 — «la tirada se considera un fracaso automáticamente, incluso si se ha superado la dificultad»
def test_h6_double_and_triple_one_are_fumbles_that_always_fail():
    double = check(read_roll([1, 9, 1]), 30, 5)
    assert (double.success, double.fumble, double.fumble_level) == (False, True, 2)
    assert check(read_roll([1, 1, 1]), 30, 5).fumble_level == 3
    assert check(read_roll([1, 9, 2]), 30, 5).fumble is False


# H14 — «permite repetir uno, dos o los tres dados de una tirada teniendo que quedarse con lo que salga»
def test_h14_positive_activation_rerolls_the_chosen_positions_only():
    roll = read_roll([1, 5, 9])
    after = activate_positive(roll, FixedDice([8, 2]), [2, 0])
    assert after.dice == (8, 5, 2)  # position 0 ← 8, position 2 ← 2 (sorted positions)
    assert after.reading is Reading.POSITIVE
    assert after.value == 8  # M, not C


# H15 — «los resultados dobles se suman y escoges el dado mayor o la suma de los dobles, lo que dé un resultado más alto»
@pytest.mark.parametrize(
    ("dice", "value"),
    [
        ((3, 6, 7), 7),  # no pair: M
        ((4, 4, 9), 9),  # pair 8 < M 9
        ((6, 6, 9), 12),  # pair 12 > M 9
        ((9, 2, 9), 18),  # pair of the highest
        ((5, 5, 5), 15),  # triple
        ((10, 10, 10), 30),  # Q10 — a triple 10 crits with value 30
    ],
)
def test_h15_positive_value_is_max_of_m_and_the_pair_or_triple(dice, value):
    assert read_roll(dice, Reading.POSITIVE).value == value


# H16 — «Ahora bien, ten en cuenta que un doble o triple 1 continúa siendo una pifia»
def test_h16_double_one_after_positive_activation_is_still_a_fumble():
    result = check(read_roll([1, 1, 9], Reading.POSITIVE), 20, 10)
    assert result.value == 9
    assert result.success is False
    assert result.fumble is True


# H18 — «Obligas a un jugador a repetir tantos dados de su tirada como quieras»
def test_h18_negative_activation_rerolls_the_positions_the_activator_chose():
    after = activate_negative(read_roll([7, 8, 9]), FixedDice([3]), [1])
    assert after.dice == (7, 3, 9)
    assert after.reading is Reading.NEGATIVE
    assert after.value == 3  # m


# H19 — «dos seises equivaldrían a –6, tres cuatros equivaldrían a –4»
# H19 — «debe escogerse el resultado del dado menor (m) o el valor negativo si lo hubiera»
@pytest.mark.parametrize(
    ("dice", "value"),
    [((6, 6, 2), -6), ((4, 4, 4), -4), ((2, 5, 8), 2), ((9, 3, 9), -9)],
)
def test_h19_negative_pairs_and_triples_are_minus_the_face(dice, value):
    assert read_roll(dice, Reading.NEGATIVE).value == value


# H20 — «La única excepción es que un doble o triple 10 continúa siendo un crítico»
def test_h20_double_ten_after_negative_activation_is_still_a_critical():
    result = check(read_roll([10, 10, 3], Reading.NEGATIVE), 5, 15)
    assert result.value == -10
    assert result.success is True
    assert result.critical_level == 2


# H21 / Q8 — engine default: «si durante una tirada se obtiene un doble o triple 1 el resultado es una pifia»
def test_h21_double_one_in_a_negative_reroll_is_minus_one_and_a_fumble():
    result = check(read_roll([1, 1, 7], Reading.NEGATIVE), 30, 10)
    assert result.value == -1
    assert (result.success, result.fumble) == (False, True)
    lenient = HitosOptions(negative_double_one_fumbles=False)
    assert check(read_roll([1, 1, 7], Reading.NEGATIVE), 30, 10, lenient).success is True


def test_reroll_with_values_from_the_log_and_bad_positions():
    roll = read_roll([2, 4, 6])
    assert reroll(roll, [2, 1], [9, 9], Reading.POSITIVE).dice == (2, 9, 9)
    with pytest.raises(ValueError, match="La posición 3 no existe"):
        reroll(roll, [3], [5], Reading.POSITIVE)
    with pytest.raises(ValueError, match="al menos un dado"):
        reroll(roll, [], [], Reading.POSITIVE)
    with pytest.raises(ValueError, match="llegaron 1 valores"):
        reroll(roll, [0, 1], [5], Reading.POSITIVE)


def test_a_die_outside_its_faces_is_a_clear_error():
    with pytest.raises(ValueError, match="Un d10 no puede sacar 11"):
        read_roll([11, 2, 3])
    with pytest.raises(ValueError, match="Un d10 no puede sacar 0"):
        read_roll([0, 2, 3])
    with pytest.raises(ValueError, match="3 dados, no 2"):
        read_roll([2, 3])
    with pytest.raises(ValueError, match="Un d10 no puede sacar 12"):
        reroll(read_roll([1, 2, 3]), [0], [12], Reading.POSITIVE)
    with pytest.raises(ValueError):
        read_roll([1, 2, 3], "sideways")


# H9 — «Aquel que consigue el resultado más alto gana»
# Worked example (S000): «Al tirar los dados saca 2, 7, 9. El resultado de la prueba es: 7 (el dado C) + 2 (Reflejos) + 4 () = 13»
# and the bookseller: «obteniendo: 3, 3, 6. Su resultado final es: 3 (dado C) + 4 (Intelecto) + 7 () = 14»
def test_h9_paul_loses_to_the_bookseller():
    paul = check(read_roll([2, 7, 9]), 2 + 4)
    bookseller = check(read_roll([3, 3, 6]), 4 + 7)
    assert (paul.total, bookseller.total) == (13, 14)
    assert opposed(paul, bookseller, tie_allowed=False) is Opposed.SECOND


# H9 — «si la acción no lo permite vuelve a repetir las tiradas y utiliza el nuevo resultado»
def test_h9_ties_stand_only_when_the_action_allows_them():
    assert opposed(14, 14, tie_allowed=True) is Opposed.TIE
    assert opposed(14, 14, tie_allowed=False) is Opposed.REROLL
    assert opposed(15, 14, tie_allowed=False) is Opposed.FIRST


# H10 — «el número de tiradas exitosas para completar la acción y cada cuánto tiempo de trabajo»
def test_h10_extended_action_counts_successes_until_complete():
    results = [check(read_roll(d), 8, 15) for d in [(2, 3, 4), (5, 7, 9), (9, 9, 2), (8, 8, 8)]]
    progress = extended_progress(results, 2)
    assert (progress.successes, progress.rolls, progress.complete) == (2, 3, True)
    halfway = extended_progress([True, False], 3)
    assert (halfway.successes, halfway.remaining, halfway.complete) == (1, 2, False)
    with pytest.raises(ValueError):
        extended_progress([], 0)


@settings(max_examples=150, deadline=None)
@given(three_d10)
def test_positive_value_is_never_below_m_big(dice):
    roll = read_roll(dice, Reading.POSITIVE)
    assert roll.value >= roll.M
    assert roll.value in (roll.M, 2 * roll.C, 3 * roll.C)


@settings(max_examples=150, deadline=None)
@given(three_d10)
def test_negative_value_is_never_above_m(dice):
    roll = read_roll(dice, Reading.NEGATIVE)
    assert roll.value <= roll.m
    assert roll.value == roll.m or roll.value == -roll.C


@settings(max_examples=200, deadline=None)
@given(three_d10, st.integers(-10, 30), st.integers(0, 40))
def test_a_roll_is_never_both_critical_and_fumble_and_dice_keep_their_order(dice, modifier, difficulty):
    result = check(HitosRoll(dice), modifier, difficulty)
    assert not (result.critical and result.fumble)
    assert result.roll.dice == dice
    assert result.success == (result.critical or (not result.fumble and result.total >= difficulty))
