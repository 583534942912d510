"""Exact HITOS probabilities from the 1000 outcomes of 3d10.

For each reading (normal, positive or negative with all three dice re-rolled)
the outcomes are counted once by value, split into criticals, fumbles and the
rest; every query is then a cumulative sum. Results are ``fractions.Fraction``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import cache
from itertools import product

from rules.hitos import HitosRoll, Reading, check, roll_value
from rules.hitos_options import HitosOptions

OUTCOMES = 1000
_FRACTIONS = tuple(Fraction(k, OUTCOMES) for k in range(OUTCOMES + 1))

# The modifiers and difficulties of the full table (``probability_table``).
TABLE_MODIFIERS: tuple[int, ...] = tuple(range(-10, 31))
TABLE_DIFFICULTIES: tuple[int, ...] = tuple(range(5, 41))


@dataclass(frozen=True, slots=True)
class _Counts:
    critical: int  # outcomes with two or three 10s (always succeed, H5)
    fumble: int  # outcomes with two or three 1s (always fail, H6/H21)
    low: int  # the smallest value an ordinary outcome can have
    ordinary: tuple[int, ...]  # ordinary[i]: ordinary outcomes of value low + i
    at_least: tuple[int, ...]  # at_least[i]: ordinary outcomes of value ≥ low + i
    every: dict[int, int]  # all outcomes by value, for opposed rolls


@cache
def _counts(reading: Reading) -> _Counts:
    critical = fumble = 0
    ordinary: dict[int, int] = {}
    every: dict[int, int] = {}
    for dice in product(range(1, 11), repeat=3):
        value = roll_value(dice, reading)
        every[value] = every.get(value, 0) + 1
        if dice.count(10) >= 2:
            critical += 1
        elif dice.count(1) >= 2:
            fumble += 1
        else:
            ordinary[value] = ordinary.get(value, 0) + 1
    low, high = min(ordinary), max(ordinary)
    counts = tuple(ordinary.get(v, 0) for v in range(low, high + 1))
    at_least = [0] * (len(counts) + 1)
    for i in range(len(counts) - 1, -1, -1):
        at_least[i] = at_least[i + 1] + counts[i]
    return _Counts(critical, fumble, low, counts, tuple(at_least), dict(sorted(every.items())))


def _success_count(modifier: int, difficulty: int, counts: _Counts, strict: bool) -> int:
    # Ordinary outcomes succeed when value + modifier ≥ difficulty (or > with K1's option).
    need = difficulty - modifier + (1 if strict else 0)
    index = need - counts.low
    if index <= 0:
        ordinary = counts.at_least[0]
    elif index >= len(counts.ordinary):
        ordinary = 0
    else:
        ordinary = counts.at_least[index]
    return counts.critical + ordinary


def success_probability(
    modifier: int,
    difficulty: int,
    reading: Reading | str = Reading.NORMAL,
    strict: bool = False,
) -> Fraction:
    """P(success) of a check with ``modifier`` against ``difficulty``; for the
    positive and negative readings, all three dice are (re-)rolled."""
    return _FRACTIONS[_success_count(modifier, difficulty, _counts(Reading(reading)), strict)]


@dataclass(frozen=True, slots=True)
class Distribution:
    values: dict[int, Fraction]  # value → probability, criticals and fumbles included
    critical: Fraction
    fumble: Fraction


def value_distribution(reading: Reading | str = Reading.NORMAL) -> Distribution:
    counts = _counts(Reading(reading))
    return Distribution(
        {v: _FRACTIONS[n] for v, n in counts.every.items()},
        _FRACTIONS[counts.critical],
        _FRACTIONS[counts.fumble],
    )


@dataclass(frozen=True, slots=True)
class OpposedOdds:
    first: Fraction
    tie: Fraction
    second: Fraction


def opposed_probabilities(
    first_modifier: int,
    second_modifier: int,
    first_reading: Reading | str = Reading.NORMAL,
    second_reading: Reading | str = Reading.NORMAL,
) -> OpposedOdds:
    """H9 — P(first wins), P(tie), P(second wins) comparing totals."""
    a = _counts(Reading(first_reading)).every
    b = _counts(Reading(second_reading)).every
    wins = ties = 0
    for va, na in a.items():
        total_a = va + first_modifier
        for vb, nb in b.items():
            total_b = vb + second_modifier
            if total_a > total_b:
                wins += na * nb
            elif total_a == total_b:
                ties += na * nb
    whole = OUTCOMES * OUTCOMES
    return OpposedOdds(Fraction(wins, whole), Fraction(ties, whole), Fraction(whole - wins - ties, whole))


def reroll_success_probability(
    dice: Sequence[int],
    positions: Iterable[int],
    reading: Reading | str,
    modifier: int,
    difficulty: int,
    strict: bool = False,
) -> Fraction:
    """P(success) after re-rolling the dice at ``positions`` and reading the roll
    as ``reading`` — the chance a player sees before choosing which dice to
    re-roll (H14, H18). Enumerates at most 1000 outcomes."""
    roll = HitosRoll(tuple(dice))
    chosen = sorted(set(positions))
    if not chosen or any(not 0 <= p < 3 for p in chosen):
        raise ValueError("Hay que elegir entre uno y tres dados de las posiciones 0, 1 y 2.")
    options = HitosOptions(strict_success=strict)
    mode = Reading(reading)
    hits = 0
    for values in product(range(1, 11), repeat=len(chosen)):
        new = list(roll.dice)
        for p, v in zip(chosen, values, strict=True):
            new[p] = v
        hits += check(HitosRoll(tuple(new), mode), modifier, difficulty, options).success
    return Fraction(hits, 10 ** len(chosen))


def probability_table(
    modifiers: Iterable[int] = TABLE_MODIFIERS,
    difficulties: Iterable[int] = TABLE_DIFFICULTIES,
) -> dict[tuple[str, bool, int, int], Fraction]:
    """P(success) for every (reading, strict, modifier, difficulty)."""
    mods = tuple(modifiers)
    difs = tuple(difficulties)
    table: dict[tuple[str, bool, int, int], Fraction] = {}
    for reading in Reading:
        counts = _counts(reading)
        for strict in (False, True):
            for modifier in mods:
                for difficulty in difs:
                    table[(reading.value, strict, modifier, difficulty)] = _FRACTIONS[
                        _success_count(modifier, difficulty, counts, strict)
                    ]
    return table
