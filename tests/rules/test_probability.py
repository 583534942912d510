"""Exact HITOS probabilities from the 1000 outcomes of 3d10."""

from fractions import Fraction
from itertools import product

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rules.hitos import HitosRoll, Reading, check
from rules.hitos_options import HitosOptions
from rules.probability import (
    TABLE_DIFFICULTIES,
    TABLE_MODIFIERS,
    opposed_probabilities,
    probability_table,
    reroll_success_probability,
    success_probability,
    value_distribution,
)


def brute_force(modifier, difficulty, reading, strict):
    options = HitosOptions(strict_success=strict)
    hits = sum(
        check(HitosRoll(dice, reading), modifier, difficulty, options).success
        for dice in product(range(1, 11), repeat=3)
    )
    return Fraction(hits, 1000)


# H2/H3 — Jeremy's check: C + 11 ≥ 15 needs C ≥ 4: 1 − P(C ≤ 3) = 1 − 216/1000.
def test_jeremy_chance_is_exact():
    assert success_probability(11, 15) == Fraction(784, 1000)
    # K1 — strictly greater needs C ≥ 5.
    assert success_probability(11, 15, strict=True) == Fraction(648, 1000)


# H5 — «es un éxito automático independientemente de la dificultad de la tirada»
# H6 — two or three 1s: 3·9 + 1 = 28 of the 1000 outcomes, the same count as criticals.
def test_criticals_and_fumbles_bound_every_chance():
    assert success_probability(0, 40) == Fraction(28, 1000)
    assert success_probability(30, 5) == Fraction(972, 1000)
    for reading in Reading:
        distribution = value_distribution(reading)
        assert distribution.critical == distribution.fumble == Fraction(28, 1000)


def test_normal_value_distribution_is_the_middle_die():
    values = value_distribution(Reading.NORMAL).values
    assert values[1] == Fraction(28, 1000)
    assert values[5] == values[6] == Fraction(148, 1000)
    assert values[10] == Fraction(28, 1000)


def test_positive_and_negative_extremes():
    positive = value_distribution(Reading.POSITIVE).values
    negative = value_distribution(Reading.NEGATIVE).values
    assert positive[30] == Fraction(1, 1000)  # triple 10
    assert positive[20] == Fraction(27, 1000)  # exactly two 10s: 3 positions × 9 other faces
    assert max(positive) == 30 and min(positive) == 2  # 1, 1, 2 → max(2, 1 + 1)
    assert negative[-10] == Fraction(28, 1000)
    assert max(negative) == 8 and min(negative) == -10


@pytest.mark.parametrize("reading", list(Reading))
def test_every_distribution_sums_to_one(reading):
    distribution = value_distribution(reading)
    assert sum(distribution.values.values()) == 1


@settings(max_examples=25, deadline=None)
@given(st.integers(-10, 30), st.integers(0, 45), st.sampled_from(list(Reading)), st.booleans())
def test_success_probability_matches_brute_force(modifier, difficulty, reading, strict):
    assert success_probability(modifier, difficulty, reading, strict) == brute_force(
        modifier, difficulty, reading, strict
    )


# H9 — «Aquel que consigue el resultado más alto gana»
@settings(max_examples=40, deadline=None)
@given(st.integers(-5, 15), st.integers(-5, 15), st.sampled_from(list(Reading)), st.sampled_from(list(Reading)))
def test_opposed_odds_sum_to_one_and_are_symmetric(a, b, reading_a, reading_b):
    odds = opposed_probabilities(a, b, reading_a, reading_b)
    assert odds.first + odds.tie + odds.second == 1
    mirror = opposed_probabilities(b, a, reading_b, reading_a)
    assert (mirror.first, mirror.tie, mirror.second) == (odds.second, odds.tie, odds.first)


def test_opposed_paul_against_the_bookseller():
    odds = opposed_probabilities(6, 11)
    assert odds == opposed_probabilities(6, 11, "normal", "normal")
    assert odds.first == Fraction(652, 15625)
    assert odds.tie == Fraction(1297, 31250)
    even = opposed_probabilities(5, 5)
    assert even.first == even.second


# H14 — «permite repetir uno, dos o los tres dados de una tirada»
def test_reroll_chance_for_chosen_dice():
    # Keep 9, re-roll the 1: the positive value is at least M = 9 ≥ 15 − 6 unless a fumble, impossible now.
    assert reroll_success_probability([1, 5, 9], [0], Reading.POSITIVE, 6, 15) == 1
    # Re-roll everything: the same as the full positive distribution.
    assert reroll_success_probability([1, 5, 9], [0, 1, 2], Reading.POSITIVE, 6, 15) == success_probability(
        6, 15, Reading.POSITIVE
    )
    with pytest.raises(ValueError):
        reroll_success_probability([1, 5, 9], [], Reading.POSITIVE, 6, 15)


def test_full_table_covers_every_combination_and_agrees():
    table = probability_table()
    assert len(table) == 3 * 2 * len(TABLE_MODIFIERS) * len(TABLE_DIFFICULTIES)
    assert table[("normal", False, 11, 15)] == Fraction(784, 1000)
    assert table[("positive", True, 6, 15)] == success_probability(6, 15, "positive", strict=True)
    assert all(0 <= p <= 1 for p in table.values())
    # More modifier never lowers the chance.
    for reading in Reading:
        for difficulty in TABLE_DIFFICULTIES:
            chances = [table[(reading.value, False, m, difficulty)] for m in TABLE_MODIFIERS]
            assert chances == sorted(chances)
