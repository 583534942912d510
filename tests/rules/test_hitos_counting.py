"""Which dice count and why a check succeeded or failed (``HitosRoll.counting``,
``outcome_reason``): decided by the same code that gives a roll its value and
a check its success, so that the roll card's explanation cannot drift from
the rules."""

from itertools import product

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rules.hitos import (
    KEPT_DIE,
    Counted,
    Counting,
    HitosRoll,
    Outcome,
    OutcomeReason,
    Reading,
    check,
    outcome_reason,
    read_roll,
    roll_value,
)
from rules.hitos_options import HitosOptions

d10 = st.integers(min_value=1, max_value=10)
three_d10 = st.tuples(d10, d10, d10)
readings = st.sampled_from(list(Reading))
options = st.builds(HitosOptions, strict_success=st.booleans(), negative_double_one_fumbles=st.booleans())

SINGLE_DIE = {Counting.LOWEST: "m", Counting.CENTRAL: "C", Counting.HIGHEST: "M"}


def value_of_counted_dice(roll: HitosRoll, counted: Counted) -> int:
    """The value the counted dice give under their rule, worked out from the
    dice alone: one die is its face, a pair or triple summed is the sum
    (H15), a pair or triple in negative is minus its face (H19)."""
    faces = [roll.dice[position] for position in counted.positions]
    if counted.rule in SINGLE_DIE:
        (face,) = faces
        return face
    if counted.rule in (Counting.PAIR_SUM, Counting.TRIPLE_SUM):
        return sum(faces)
    return -faces[0]


def assert_counting_explains_the_value(roll: HitosRoll) -> None:
    counted = roll.counting()
    assert counted.value == roll.value == roll_value(roll.dice, roll.reading) == check(roll).value
    assert value_of_counted_dice(roll, counted) == roll.value
    assert list(counted.positions) == sorted(set(counted.positions))
    if counted.rule in SINGLE_DIE:
        # The die that counts is the one the card labels with the rule's letter.
        (position,) = counted.positions
        assert roll.labels[position] == SINGLE_DIE[counted.rule]
        assert counted.rule is KEPT_DIE[roll.reading]
    else:
        # A pair or a triple counts with all its dice, and only with them.
        face, count = roll.group
        assert len(counted.positions) == count
        assert [roll.dice[p] for p in counted.positions] == [face] * count


# H2 — «se escoge el resultado del dado C y se añaden los rasgos apropiados»
@pytest.mark.parametrize(
    ("dice", "positions", "value"),
    [
        ((1, 5, 9), (1,), 5),  # S000's Jeremy: «5 (el dado C)»
        ((9, 1, 5), (2,), 5),
        ((5, 4, 5), (0,), 5),  # of two equal dice the earlier is C (H1)
        ((3, 3, 3), (1,), 3),
        ((10, 10, 4), (0,), 10),
    ],
)
def test_h2_the_normal_reading_counts_the_central_die(dice, positions, value):
    assert read_roll(dice).counting() == Counted(Counting.CENTRAL, positions, value)


# H15 — «los resultados dobles se suman y escoges el dado mayor o la suma de los dobles, lo que dé un resultado más alto»
@pytest.mark.parametrize(
    ("dice", "rule", "positions", "value"),
    [
        ((3, 6, 7), Counting.HIGHEST, (2,), 7),  # no pair: M
        ((4, 4, 9), Counting.HIGHEST, (2,), 9),  # the pair's 8 is less than M
        ((3, 3, 6), Counting.HIGHEST, (2,), 6),  # the pair's 6 only equals M: it does not replace it
        ((6, 9, 6), Counting.PAIR_SUM, (0, 2), 12),  # the pair's 12 is more than M
        ((9, 2, 9), Counting.PAIR_SUM, (0, 2), 18),  # a pair of the highest
        ((5, 5, 5), Counting.TRIPLE_SUM, (0, 1, 2), 15),
        ((10, 10, 10), Counting.TRIPLE_SUM, (0, 1, 2), 30),  # Q10
    ],
)
def test_h15_a_positive_reading_counts_m_or_the_pair_or_triple_summed(dice, rule, positions, value):
    assert read_roll(dice, Reading.POSITIVE).counting() == Counted(rule, positions, value)


# H19 — «debe escogerse el resultado del dado menor (m) o el valor negativo si lo hubiera»
# H19 — «dos seises equivaldrían a –6, tres cuatros equivaldrían a –4»
@pytest.mark.parametrize(
    ("dice", "rule", "positions", "value"),
    [
        ((8, 5, 2), Counting.LOWEST, (2,), 2),
        ((6, 2, 6), Counting.PAIR_NEGATIVE, (0, 2), -6),
        ((4, 4, 4), Counting.TRIPLE_NEGATIVE, (0, 1, 2), -4),
        ((2, 9, 9), Counting.PAIR_NEGATIVE, (1, 2), -9),  # Q9 — −v, never −2v
        ((1, 1, 7), Counting.PAIR_NEGATIVE, (0, 1), -1),  # H21 — a double 1 is worth −1
        ((10, 3, 10), Counting.PAIR_NEGATIVE, (0, 2), -10),  # H20's critical still counts −10
    ],
)
def test_h19_a_negative_reading_counts_m_or_the_pair_or_triple_in_negative(dice, rule, positions, value):
    assert read_roll(dice, Reading.NEGATIVE).counting() == Counted(rule, positions, value)


# H2, H15, H19 — the single die each reading keeps when no pair or triple takes its place.
def test_each_reading_keeps_its_letter():
    assert KEPT_DIE == {Reading.NORMAL: "C", Reading.POSITIVE: "M", Reading.NEGATIVE: "m"}
    assert KEPT_DIE["positive"] is Counting.HIGHEST  # the signed log stores readings as words


def test_every_roll_under_every_reading_is_explained_by_its_counted_dice():
    for dice, reading in product(product(range(1, 11), repeat=3), Reading):
        assert_counting_explains_the_value(HitosRoll(dice, reading))


@settings(max_examples=300, deadline=None)
@given(three_d10, readings)
def test_the_counted_dice_always_give_the_value_the_rules_compute(dice, reading):
    assert_counting_explains_the_value(HitosRoll(dice, reading))


# H3 — «Si el resultado de la tirada es igual o mayor que la dificultad la acción tiene éxito»
def test_h3_the_outcome_says_by_how_much_the_total_beats_or_misses():
    assert check(read_roll([2, 5, 8]), 12, 15).reason == OutcomeReason(Outcome.BEATS, 2, 0)
    assert check(read_roll([2, 5, 8]), 6, 15).reason == OutcomeReason(Outcome.SHORT, 4, 0)
    tie = check(read_roll([2, 5, 8]), 10, 15)
    assert (tie.reason, tie.success) == (OutcomeReason(Outcome.EQUALS, 0, 0), True)


# K1 — S002 «La suma final debe ser mayor a la dificultad»
def test_k1_in_a_strict_campaign_a_tie_is_not_enough():
    tie = check(read_roll([2, 5, 8]), 10, 15, HitosOptions(strict_success=True))
    assert (tie.reason, tie.success) == (OutcomeReason(Outcome.EQUALS_NOT_ENOUGH, 0, 0), False)


# H5 — «es un éxito automático independientemente de la dificultad de la tirada»
def test_h5_a_critical_succeeds_whatever_the_total_and_keeps_its_level():
    assert check(read_roll([10, 2, 10]), 0, 40).reason == OutcomeReason(Outcome.CRITICAL, 0, 2)
    assert check(read_roll([10, 10, 10]), -20, 40).reason == OutcomeReason(Outcome.CRITICAL, 0, 3)


# H6 — «la tirada se considera un fracaso automáticamente, incluso si se ha superado la dificultad»
def test_h6_a_fumble_fails_whatever_the_total_and_keeps_its_level():
    assert check(read_roll([1, 9, 1]), 30, 5).reason == OutcomeReason(Outcome.FUMBLE, 0, 2)
    assert check(read_roll([1, 1, 1]), 30, 5).reason == OutcomeReason(Outcome.FUMBLE, 0, 3)


# H16 — «Ahora bien, ten en cuenta que un doble o triple 1 continúa siendo una pifia»
# H20 — «La única excepción es que un doble o triple 10 continúa siendo un crítico»
def test_h16_h20_activations_keep_fumbles_and_criticals():
    assert check(read_roll([1, 1, 9], Reading.POSITIVE), 20, 10).reason.outcome is Outcome.FUMBLE
    assert check(read_roll([10, 10, 3], Reading.NEGATIVE), 5, 15).reason.outcome is Outcome.CRITICAL


# H21 / Q8 — engine default: «si durante una tirada se obtiene un doble o triple 1 el resultado es una pifia»
def test_h21_a_campaign_without_the_negative_double_one_fumble_reads_the_total():
    roll = read_roll([1, 1, 7], Reading.NEGATIVE)
    assert check(roll, 30, 10).reason == OutcomeReason(Outcome.FUMBLE, 0, 2)
    lenient = check(roll, 30, 10, HitosOptions(negative_double_one_fumbles=False))
    assert (lenient.reason, lenient.success) == (OutcomeReason(Outcome.BEATS, 19, 0), True)


# H5, H6 — «independientemente de la dificultad»: without the difficulty only the dice explain the outcome.
def test_without_the_difficulty_only_a_critical_or_a_fumble_explains_the_outcome():
    assert outcome_reason(critical_level=0, fumble_level=0, margin=None, success=True) is None
    assert outcome_reason(critical_level=3, fumble_level=0, margin=None, success=True) == OutcomeReason(
        Outcome.CRITICAL, 0, 3
    )
    assert outcome_reason(critical_level=0, fumble_level=2, margin=None, success=False) == OutcomeReason(
        Outcome.FUMBLE, 0, 2
    )


# H3 / K1 — a tie whose verdict was not recorded reads as the default «igual o mayor».
def test_a_tie_without_a_recorded_verdict_reads_as_the_default():
    assert outcome_reason(critical_level=0, fumble_level=0, margin=0, success=None).outcome is Outcome.EQUALS
    assert outcome_reason(critical_level=0, fumble_level=0, margin=0, success=False).outcome is (
        Outcome.EQUALS_NOT_ENOUGH
    )


@settings(max_examples=400, deadline=None)
@given(three_d10, readings, st.integers(-10, 30), st.integers(0, 40), options)
def test_the_reason_always_agrees_with_the_checks_success(dice, reading, modifier, difficulty, campaign):
    result = check(HitosRoll(dice, reading), modifier, difficulty, campaign)
    reason = result.reason
    assert reason.success is result.success is reason.outcome.success
    if result.critical:
        assert (reason.outcome, reason.level) == (Outcome.CRITICAL, result.critical_level)
    elif result.fumble:
        assert (reason.outcome, reason.level) == (Outcome.FUMBLE, result.fumble_level)
    else:
        assert reason.level == 0
        assert reason.by == abs(result.margin)
        if result.margin > 0:
            assert reason.outcome is Outcome.BEATS
        elif result.margin < 0:
            assert reason.outcome is Outcome.SHORT
        elif campaign.strict_success:
            assert reason.outcome is Outcome.EQUALS_NOT_ENOUGH
        else:
            assert reason.outcome is Outcome.EQUALS
    # The roll log keeps the check as plain data; its fields explain it the same way.
    data = result.to_dict()
    assert reason == outcome_reason(
        critical_level=data["critical_level"],
        fumble_level=data["fumble_level"],
        margin=data["margin"],
        success=data["success"],
    )
