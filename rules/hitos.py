"""HITOS core: reading a 3d10 roll, checks, activations, opposed and extended rolls.

Rule ids (H1 …, K1 …, Q1 …) refer to ``rules-spec.md``. The rest of HITOS lives
in sibling modules: ``hitos_options`` (campaign options), ``hitos_codes``
(damage codes), ``hitos_scores`` (derived scores, creation), ``hitos_combat``
(attack, damage, armour, initiative), ``hitos_health`` (states, meters in play,
healing, horror), ``hitos_hazards`` (fire, poison, arcane skills) and
``hitos_drama`` (drama points and Degeneración). ``meters`` holds the
slash/cross meter and ``probability`` the exact chances. See docs/rules.md.

Which dice a roll's value comes from (``HitosRoll.counting``) and why a check
came out as it did (``CheckResult.reason``, ``outcome_reason``) are decided by
the same code as the value and the success, for the roll card to name.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import NamedTuple

from rules.dice import DiceSource, check_die, reroll_positions, roll_dice
from rules.hitos_options import DEFAULT_OPTIONS, HitosOptions

FACES = 10
DICE = 3

# H4 — the GM's default difficulty, "la dificultad intermedia (15)".
DEFAULT_DIFFICULTY = 15

# §4.1 — the named difficulty scale (La Mirada del Centinela), with its bands.
DIFFICULTY_SCALE: tuple[tuple[str, int], ...] = (
    ("Fácil", 10),
    ("Media", 15),
    ("Difícil", 20),
    ("Muy difícil", 25),
    ("Extremadamente difícil", 30),
    ("Casi imposible", 35),
)
_DIFFICULTY_BY_KEY = {name.casefold(): value for name, value in DIFFICULTY_SCALE}


class Reading(StrEnum):
    """Which value a roll is worth: C normally, M-or-pair after a positive
    activation (H15), m-or-negative after a negative one (H19)."""

    NORMAL = "normal"
    POSITIVE = "positive"
    NEGATIVE = "negative"


class Counting(StrEnum):
    """The rule that picked the dice a roll's value comes from. The values are
    the letters and words the roll card reads (``systems.hitos.cards``)."""

    # H2 — normally the middle die C.
    CENTRAL = "C"
    # H15 — after a positive activation the highest die M, or a pair or a
    # triple summed into one value when that is higher.
    HIGHEST = "M"
    PAIR_SUM = "pair_sum"
    TRIPLE_SUM = "triple_sum"
    # H19 / Q9 — after a negative activation the lowest die m, or a pair or a
    # triple as one value, its face in negative.
    LOWEST = "m"
    PAIR_NEGATIVE = "pair_negative"
    TRIPLE_NEGATIVE = "triple_negative"


# The single die each reading keeps when no pair or triple takes its place
# (H2, H15, H19).
KEPT_DIE: dict[Reading, Counting] = {
    Reading.NORMAL: Counting.CENTRAL,
    Reading.POSITIVE: Counting.HIGHEST,
    Reading.NEGATIVE: Counting.LOWEST,
}

# Where each kept letter sits among the dice sorted low to high (H1).
_RANK = {Counting.LOWEST: 0, Counting.CENTRAL: 1, Counting.HIGHEST: 2}


class Counted(NamedTuple):
    """Which dice a roll's value comes from: the rule that picked them, their
    positions (0-based, in draw order, ascending) and the value they give."""

    rule: Counting
    positions: tuple[int, ...]
    value: int


def difficulty_value(difficulty: int | str) -> int:
    """A difficulty as a number: an int is kept, a scale word is looked up (§4.1)."""
    if isinstance(difficulty, bool):
        raise ValueError(f"Dificultad no válida: {difficulty!r}.")
    if isinstance(difficulty, int):
        return difficulty
    if isinstance(difficulty, str):
        text = difficulty.strip()
        if text.lstrip("+-").isdigit():
            return int(text)
        try:
            return _DIFFICULTY_BY_KEY[text.casefold()]
        except KeyError:
            names = ", ".join(name for name, _ in DIFFICULTY_SCALE)
            raise ValueError(
                f"Dificultad desconocida: {difficulty!r}. Se esperaba un número o una de: {names}."
            ) from None
    raise ValueError(f"Dificultad no válida: {difficulty!r}.")


def difficulty_name(value: int) -> str | None:
    """The scale word whose band (value ± 2, §4.1 "Rango") holds ``value``."""
    for name, centre in DIFFICULTY_SCALE:
        if centre - 2 <= value <= centre + 2:
            return name
    return None


class _RollFields(NamedTuple):
    dice: tuple[int, int, int]
    reading: Reading


class HitosRoll(_RollFields):
    """Three d10 in the order they were drawn, plus how the roll is read.

    Sorting is a reading: ``m``, ``C`` and ``M`` never reorder ``dice``. An
    immutable tuple (not a dataclass) because checks are made by the hundred
    thousand for the probability tools; the constructor validates the dice.
    """

    __slots__ = ()

    def __new__(cls, dice: Iterable[int], reading: Reading | str = Reading.NORMAL) -> HitosRoll:
        if dice.__class__ is not tuple:
            dice = tuple(dice)
        if len(dice) != DICE:
            raise ValueError(f"Una tirada de HITOS tiene 3 dados, no {len(dice)}.")
        for value in dice:
            if value.__class__ is not int or not 1 <= value <= FACES:
                check_die(value, FACES)
        if reading.__class__ is not Reading:
            reading = Reading(reading)
        return tuple.__new__(cls, (dice, reading))

    # H1 — sort the dice: m = lowest, C = middle, M = highest.
    @property
    def sorted(self) -> tuple[int, int, int]:
        a, b, c = self.dice
        if a > b:
            a, b = b, a
        if b > c:
            b, c = c, b
            if a > b:
                a, b = b, a
        return (a, b, c)

    @property
    def m(self) -> int:
        return min(self.dice)

    @property
    def C(self) -> int:
        return self.sorted[1]

    @property
    def M(self) -> int:
        return max(self.dice)

    @property
    def labels(self) -> tuple[str, str, str]:
        """The letter of each raw die, for the roll card: ``(5, 4, 5)`` is
        ``("C", "m", "M")``. Among equal dice the earlier takes the lower letter."""
        order = self._order()
        labels = ["", "", ""]
        for letter, position in zip(("m", "C", "M"), order, strict=True):
            labels[position] = letter
        return (labels[0], labels[1], labels[2])

    def _order(self) -> list[int]:
        """The positions of the dice from the lowest to the highest; among
        equal dice the earlier comes first (so it takes the lower letter)."""
        return sorted(range(DICE), key=self.dice.__getitem__)

    def counting(self) -> Counted:
        """The dice the roll's value comes from and the rule that picked them,
        worked out by the same reading as ``value`` (H2, H15, H19). A single
        kept die is the one ``labels`` names with its letter; a pair or a
        triple that counts counts with all its dice."""
        low, mid, high = self.sorted
        rule, value = _kept(low, mid, high, self.reading)
        rank = _RANK.get(rule)
        if rank is not None:
            return Counted(rule, (self._order()[rank],), value)
        # A pair or a triple always shares the middle die's face.
        return Counted(rule, tuple(position for position, die in enumerate(self.dice) if die == mid), value)

    @property
    def tens(self) -> int:
        return self.dice.count(10)

    @property
    def ones(self) -> int:
        return self.dice.count(1)

    # H5 — a double or triple 10 is a critical: 2 or 3, else 0.
    @property
    def critical_level(self) -> int:
        tens = self.dice.count(10)
        return tens if tens >= 2 else 0

    # H6 — a double or triple 1 is a fumble: 2 or 3, else 0.
    @property
    def fumble_level(self) -> int:
        ones = self.dice.count(1)
        return ones if ones >= 2 else 0

    @property
    def critical(self) -> bool:
        return self.dice.count(10) >= 2

    @property
    def fumble(self) -> bool:
        return self.dice.count(1) >= 2

    @property
    def group(self) -> tuple[int, int] | None:
        """The repeated face and how many times it shows, if any: (v, 2) or (v, 3)."""
        a, b, c = self.sorted
        if a == c:
            return (a, 3)
        if a == b:
            return (a, 2)
        if b == c:
            return (b, 2)
        return None

    @property
    def value(self) -> int:
        return roll_value(self.dice, self.reading)


def roll_value(dice: Sequence[int], reading: Reading = Reading.NORMAL) -> int:
    """The value a roll is worth under ``reading`` (H2, H15, H19)."""
    a, b, c = dice
    if a > b:
        a, b = b, a
    if b > c:
        b, c = c, b
        if a > b:
            a, b = b, a
    return _kept(a, b, c, reading)[1]


# The rules as plain names: ``_kept`` runs for every check (the probability
# tools make them by the hundred thousand).
_CENTRAL = Counting.CENTRAL
_HIGHEST = Counting.HIGHEST
_PAIR_SUM = Counting.PAIR_SUM
_TRIPLE_SUM = Counting.TRIPLE_SUM
_LOWEST = Counting.LOWEST
_PAIR_NEGATIVE = Counting.PAIR_NEGATIVE
_TRIPLE_NEGATIVE = Counting.TRIPLE_NEGATIVE


def _kept(a: int, b: int, c: int, reading: Reading | str) -> tuple[Counting, int]:
    """The rule that picks the value of the dice ``a ≤ b ≤ c`` under
    ``reading``, and that value: the one place a roll's value is decided
    (``roll_value``, ``check`` and ``HitosRoll.counting`` all ask it)."""
    if reading is Reading.NORMAL or reading == "normal":
        # H2 — the normal result uses the middle die C.
        return (_CENTRAL, b)
    if reading is Reading.POSITIVE or reading == "positive":
        # H15 — value = max(M, 2v or 3v): a pair or triple is summed into one
        # value that replaces M only when it is higher.
        if a == c:
            return (_TRIPLE_SUM, 3 * a)
        if a == b:
            return (_PAIR_SUM, 2 * a) if 2 * a > c else (_HIGHEST, c)
        if b == c:
            return (_PAIR_SUM, 2 * c)
        return (_HIGHEST, c)
    # H19 / Q9 — a pair or triple is one negative value −v (never −2v); else m.
    if a == c:
        return (_TRIPLE_NEGATIVE, -b)
    if a == b or b == c:
        return (_PAIR_NEGATIVE, -b)
    return (_LOWEST, a)


def read_roll(dice: Iterable[int], reading: Reading | str = Reading.NORMAL) -> HitosRoll:
    return HitosRoll(tuple(dice), Reading(reading))


def roll_3d10(source: DiceSource) -> HitosRoll:
    """Draw a fresh HITOS roll from ``source``, dice in draw order."""
    return HitosRoll(roll_dice(source, DICE, FACES))


def reroll(roll: HitosRoll, positions: Iterable[int], new_values: Sequence[int], reading: Reading | str) -> HitosRoll:
    """Replace the dice at ``positions`` (0-based, raw order) with ``new_values``.

    ``new_values`` are in the order of the sorted unique positions, as
    ``rules.dice.reroll_positions`` draws them and the roll log records them.
    """
    chosen = sorted(set(positions))
    if not chosen:
        raise ValueError("Hay que elegir al menos un dado para repetir.")
    for p in chosen:
        if not isinstance(p, int) or isinstance(p, bool) or not 0 <= p < DICE:
            raise ValueError(f"La posición {p!r} no existe: una tirada de HITOS tiene los dados 0, 1 y 2.")
    if len(new_values) != len(chosen):
        raise ValueError(f"Se repiten {len(chosen)} dados pero llegaron {len(new_values)} valores nuevos.")
    dice = list(roll.dice)
    for p, v in zip(chosen, new_values, strict=True):
        dice[p] = check_die(v, FACES)
    return HitosRoll(tuple(dice), Reading(reading))


def activate_positive(roll: HitosRoll, source: DiceSource, positions: Iterable[int]) -> HitosRoll:
    """H14 — re-roll any one, two or three dice and keep what comes; the roll is then
    read positively (H15). Paying for it is ``hitos_drama.positive_activation``."""
    dice, _ = reroll_positions(source, roll.dice, positions, FACES)
    return HitosRoll(dice, Reading.POSITIVE)


def activate_negative(roll: HitosRoll, source: DiceSource, positions: Iterable[int]) -> HitosRoll:
    """H18 / K14 — the activator chooses the dice the target re-rolls; the roll is
    then read negatively (H19)."""
    dice, _ = reroll_positions(source, roll.dice, positions, FACES)
    return HitosRoll(dice, Reading.NEGATIVE)


class Outcome(StrEnum):
    """Why a check succeeded or failed. The values are the words the roll
    card reads (``systems.hitos.cards``)."""

    # H5, H16, H20 — a double or triple 10 succeeds whatever the difficulty.
    CRITICAL = "critical"
    # H6, H16, H21 — a double or triple 1 fails even if the total beats the difficulty.
    FUMBLE = "fumble"
    # H3 — the total is above the difficulty.
    BEATS = "beats"
    # H3 / K1 — the total equals the difficulty, and equalling it is enough.
    EQUALS = "equals"
    # K1 option — the total equals the difficulty, but the campaign asks to beat it.
    EQUALS_NOT_ENOUGH = "equals_not_enough"
    # H3 — the total is below the difficulty.
    SHORT = "short"

    @property
    def success(self) -> bool:
        return _succeeds(self)


_CRITICAL = Outcome.CRITICAL
_FUMBLE = Outcome.FUMBLE
_BEATS = Outcome.BEATS
_EQUALS = Outcome.EQUALS
_EQUALS_NOT_ENOUGH = Outcome.EQUALS_NOT_ENOUGH
_SHORT = Outcome.SHORT


def _outcome(critical_level: int, fumble_level: int, margin: int, ties_succeed: bool) -> Outcome:
    """Why a check with these dice and this margin (total − difficulty) comes
    out as it does: the one place success is decided (``check`` and
    ``outcome_reason`` both ask it)."""
    # H5, H6 — the dice decide before the total does (a roll cannot be both).
    if critical_level:
        return _CRITICAL
    if fumble_level:
        return _FUMBLE
    if margin > 0:
        return _BEATS
    if margin < 0:
        return _SHORT
    # H3 / K1 — a tie succeeds unless the campaign asks to beat the difficulty.
    return _EQUALS if ties_succeed else _EQUALS_NOT_ENOUGH


def _succeeds(outcome: Outcome) -> bool:
    return outcome is _CRITICAL or outcome is _BEATS or outcome is _EQUALS


class OutcomeReason(NamedTuple):
    """Why a check came out as it did: the ``outcome``, how many points the
    total beat or missed the difficulty ``by`` (0 on a tie, a critical or a
    fumble, where the points do not decide) and the ``level`` of a critical
    or fumble (2 or 3 dice; 0 otherwise)."""

    outcome: Outcome
    by: int
    level: int

    @property
    def success(self) -> bool:
        return _succeeds(self.outcome)


def outcome_reason(
    *, critical_level: int, fumble_level: int, margin: int | None, success: bool | None
) -> OutcomeReason | None:
    """Why a check recorded with these fields came out as it did, from the same
    reasoning ``check`` decides success by. ``fumble_level`` is the one the
    check kept (H21's option may have dropped it); ``margin`` is None when the
    reader may not know the difficulty, and then only a critical or a fumble
    explains the outcome (None otherwise). ``success`` is the recorded
    verdict: on a tie it says whether the campaign let it succeed (K1); when
    unknown the tie reads as H3's default."""
    if margin is None:
        if not critical_level and not fumble_level:
            return None
        margin = 0
    return _reason(critical_level, fumble_level, margin, success is not False)


def _reason(critical_level: int, fumble_level: int, margin: int, ties_succeed: bool) -> OutcomeReason:
    outcome = _outcome(critical_level, fumble_level, margin, ties_succeed)
    if outcome is _CRITICAL:
        return OutcomeReason(outcome, 0, critical_level)
    if outcome is _FUMBLE:
        return OutcomeReason(outcome, 0, fumble_level)
    return OutcomeReason(outcome, abs(margin), 0)


class CheckResult(NamedTuple):
    """The outcome of a check (a NamedTuple for speed, like HitosRoll)."""

    roll: HitosRoll
    value: int
    modifier: int
    total: int
    difficulty: int
    success: bool
    critical_level: int
    fumble_level: int

    @property
    def margin(self) -> int:
        return self.total - self.difficulty

    @property
    def critical(self) -> bool:
        return self.critical_level > 0

    @property
    def fumble(self) -> bool:
        return self.fumble_level > 0

    @property
    def reason(self) -> OutcomeReason:
        """Why the check succeeded or failed (``outcome_reason``); on a tie the
        check's own success says whether the campaign let it succeed (K1)."""
        return _reason(self.critical_level, self.fumble_level, self.margin, self.success)

    def to_dict(self) -> dict[str, object]:
        """Plain JSON-ready data for the roll card and the roll log."""
        roll = self.roll
        low, mid, high = roll.sorted
        return {
            "dice": list(roll.dice),
            "labels": list(roll.labels),
            "reading": roll.reading.value,
            "m": low,
            "C": mid,
            "M": high,
            "value": self.value,
            "modifier": self.modifier,
            "total": self.total,
            "difficulty": self.difficulty,
            "margin": self.margin,
            "success": self.success,
            "critical_level": self.critical_level,
            "fumble_level": self.fumble_level,
        }


# Building the result tuple directly skips NamedTuple's argument parsing; a
# check is the hot path of the probability tools and the benchmark.
_new_tuple = tuple.__new__


def check(
    roll: HitosRoll,
    modifier: int = 0,
    difficulty: int = DEFAULT_DIFFICULTY,
    options: HitosOptions = DEFAULT_OPTIONS,
) -> CheckResult:
    """A check: the roll's value + ``modifier`` (characteristic + skill + situation)
    against ``difficulty`` (an int; use ``difficulty_value`` for scale words)."""
    dice = roll.dice
    value = roll_value(dice, roll.reading)
    total = value + modifier
    tens = dice.count(10)
    ones = dice.count(1)
    critical_level = tens if tens >= 2 else 0
    fumble_level = ones if ones >= 2 else 0
    # H21 / Q8 — a double 1 in a negative re-roll is a fumble unless the campaign says not.
    if fumble_level and roll.reading is Reading.NEGATIVE and not options.negative_double_one_fumbles:
        fumble_level = 0
    # H3 / K1 — "igual o mayor que la dificultad", unless the campaign takes
    # S002's "mayor a la dificultad"; criticals and fumbles decide first.
    outcome = _outcome(critical_level, fumble_level, total - difficulty, not options.strict_success)
    success = _succeeds(outcome)
    return _new_tuple(CheckResult, (roll, value, modifier, total, difficulty, success, critical_level, fumble_level))


class Opposed(StrEnum):
    FIRST = "first"
    SECOND = "second"
    TIE = "tie"
    REROLL = "reroll"


def opposed(first: int | CheckResult, second: int | CheckResult, *, tie_allowed: bool) -> Opposed:
    """H9 — the higher result wins; a tie stands only if the action allows one,
    otherwise both sides roll again. Criticals and fumbles do not change the
    comparison (the texts only compare results)."""
    a = first.total if isinstance(first, CheckResult) else first
    b = second.total if isinstance(second, CheckResult) else second
    if a > b:
        return Opposed.FIRST
    if b > a:
        return Opposed.SECOND
    return Opposed.TIE if tie_allowed else Opposed.REROLL


@dataclass(frozen=True, slots=True)
class ExtendedProgress:
    successes: int
    needed: int
    rolls: int

    @property
    def complete(self) -> bool:
        return self.successes >= self.needed

    @property
    def remaining(self) -> int:
        return max(0, self.needed - self.successes)


def extended_progress(results: Iterable[CheckResult | bool], needed: int) -> ExtendedProgress:
    """H10 — an extended action needs ``needed`` successful rolls at the GM's
    difficulty, one roll per interval. Rolls after completion are not counted."""
    if needed < 1:
        raise ValueError(f"Una acción prolongada necesita al menos un éxito, no {needed}.")
    successes = rolls = 0
    for result in results:
        if successes >= needed:
            break
        rolls += 1
        ok = result.success if isinstance(result, CheckResult) else bool(result)
        successes += ok
    return ExtendedProgress(successes, needed, rolls)
