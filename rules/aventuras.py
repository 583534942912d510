"""Hora de Aventuras (rules A1–A30 of rules-spec.md, seed S004).

A roll is a frozen :class:`AventurasRoll` that keeps the raw dice in the order
they were drawn. Converting an "éxito chachi", re-rolling with a hero point or
adding dice each return a new roll, so the steps chain and the roll log can
record each one.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from enum import StrEnum
from fractions import Fraction
from functools import cache
from math import comb

from rules.dice import DiceSource, check_dice, check_die, reroll_positions, roll_dice

FACES = 6
CHACHI = 6
CONVERTED_VALUE = 5
NORMAL_THRESHOLD = 4
EASIEST_THRESHOLD = 3
HARDEST_THRESHOLD = 5
UNHIGHLIGHTED_SCORE = 2
STARTING_HERO_POINTS = 5
HERO_EXTRA_DICE = 2
EXPERIENCE_PER_HERO_POINT = 2
MAX_PROBABILITY_DICE = 100

# A1 — the attributes S004 names («Cachas», «Majo», «Espabilado», and
# «Cerebrito» for «ciencia» and «curar»); the acting attribute is the GM's call.
ATTRIBUTES = ("cachas", "cerebrito", "espabilado", "majo")
# A1 — every action is physical, mental or social (S004 «Las acciones pueden ser de tres tipos»).
ACTION_KINDS = ("física", "mental", "social")
# A8/A10 — S004 has no difficulty guide; these are the only words it gives:
# «Las acciones más fáciles tendrán dificultad 0» and «La dificultad es 2.
# ¡Esta acción es dificililla!». Other difficulties have no word.
DIFFICULTY_WORDS = {0: "de las más fáciles", 2: "dificililla"}


class Outcome(StrEnum):
    FAILURE = "fallo"
    SUCCESS = "éxito"
    CHACHI = "éxito chachi"


class ReactionOrder(StrEnum):
    # A17 — the defender's normal successes are applied first (default) or its
    # chachis first; both give the same result whenever the action succeeds.
    NORMALS_FIRST = "normales_primero"
    CHACHIS_FIRST = "chachis_primero"


class CompetitionCount(StrEnum):
    # A13 [ENGINE DEFAULT] — compare the successes left after the difficulty.
    AFTER_DIFFICULTY = "tras_dificultad"
    # Alternative: compare the successes rolled, before the difficulty cancels any.
    AS_ROLLED = "tirados"


class HeroSpend(StrEnum):
    # A22–A23 — the five ways to spend a hero point.
    ADD_DICE = "añadir_dados"
    REROLL = "repetir_dados"
    IGNORE_STATE = "ignorar_estado"
    RECOVER = "recuperarse"
    FEAT = "activar_proeza"


class HeroGain(StrEnum):
    # A25–A27 — ways to earn a point (A28, buying with experience, is separate).
    FACE_FLAW = "enfrentarse_al_defecto"
    SACRIFICE = "sacrificio"
    STATE_FOR_FREE = "estado_por_el_morro"


def _natural(value: int, name: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ValueError(f"{name} debe ser un número entero no negativo, no {value!r}.")
    return value


def attribute_score(score: int, highlighted: bool) -> int:
    # A2/A20 — a highlighted attribute counts its score, any other attribute 2.
    return _natural(score, "La puntuación") if highlighted else UNHIGHLIGHTED_SCORE


def dice_count(score: int, highlighted: bool, modifier: int = 0, *, min_dice: int = 0) -> int:
    """Dice to roll (A2, A3).

    A penalty can take the pool to zero dice, which the seed does not cover
    (Q17). By default (``min_dice=0``) zero dice is an automatic failure: the
    roll has no dice and no successes. ``min_dice=1`` always rolls one die.
    """
    # A3 — +n / −n add or remove dice before rolling.
    return max(attribute_score(score, highlighted) + modifier, min_dice, 0)


def success_threshold(easier: int = 0, harder: int = 0) -> int:
    """The lowest face that succeeds given how many effects ease or harden it (A7).

    Opposite effects cancel one for one, and what is left in one direction
    moves the threshold one step only (no stacking), within 3+ and 5+.
    """
    net = _natural(harder, "Los efectos") - _natural(easier, "Los efectos")
    return NORMAL_THRESHOLD + (net > 0) - (net < 0)


def die_outcome(value: int, threshold: int = NORMAL_THRESHOLD) -> Outcome:
    # A4 — 1–3 failure, 4–5 success, 6 éxito chachi; A7 moves 4+ to 3+ or 5+.
    if not EASIEST_THRESHOLD <= threshold <= HARDEST_THRESHOLD:
        raise ValueError(f"El umbral de éxito va de 3+ a 5+, no {threshold}+.")
    if check_die(value, FACES) == CHACHI:
        return Outcome.CHACHI
    return Outcome.SUCCESS if value >= threshold else Outcome.FAILURE


@dataclass(frozen=True)
class Tally:
    normals: int = 0
    chachis: int = 0

    @property
    def successes(self) -> int:
        return self.normals + self.chachis

    def __add__(self, other: Tally) -> Tally:
        return Tally(self.normals + other.normals, self.chachis + other.chachis)


@dataclass(frozen=True)
class AventurasRoll:
    """Raw dice in draw order, and the positions of the 6s counted as a 5 (A5)."""

    dice: tuple[int, ...]
    converted: frozenset[int] = frozenset()
    threshold: int = NORMAL_THRESHOLD

    def __post_init__(self) -> None:
        object.__setattr__(self, "dice", check_dice(self.dice, FACES))
        object.__setattr__(self, "converted", frozenset(self.converted))
        die_outcome(CHACHI, self.threshold)
        for p in self.converted:
            if not 0 <= p < len(self.dice) or self.dice[p] != CHACHI:
                raise ValueError(f"La posición {p} no es un 6 que se pueda convertir.")

    @property
    def values(self) -> tuple[int, ...]:
        """The dice as read: each converted 6 reads as a 5."""
        return tuple(CONVERTED_VALUE if i in self.converted else d for i, d in enumerate(self.dice))

    @property
    def outcomes(self) -> tuple[Outcome, ...]:
        return tuple(die_outcome(v, self.threshold) for v in self.values)

    @property
    def tally(self) -> Tally:
        out = self.outcomes
        return Tally(out.count(Outcome.SUCCESS), out.count(Outcome.CHACHI))

    @property
    def chachi_positions(self) -> tuple[int, ...]:
        """Positions of the 6s that can still be converted."""
        return tuple(i for i, v in enumerate(self.values) if v == CHACHI)


def roll(source: DiceSource, count: int, *, threshold: int = NORMAL_THRESHOLD) -> AventurasRoll:
    # A3 [ENGINE DEFAULT] — zero dice is an empty roll: no successes, a failure.
    return AventurasRoll(roll_dice(source, _natural(count, "Los dados"), FACES), threshold=threshold)


def convert_chachi(state: AventurasRoll, position: int, source: DiceSource) -> AventurasRoll:
    """Count the 6 at ``position`` as a 5 and append one new die (A5)."""
    # A5 — «puede convertir un resultado de 6 en un 5 y añadir otro dado», and a
    # chachi on the added die can be converted again.
    if position not in state.chachi_positions:
        raise ValueError(f"La posición {position!r} no es un éxito chachi sin convertir.")
    extra = roll_dice(source, 1, FACES)
    return replace(state, dice=state.dice + extra, converted=state.converted | {position})


def add_dice(state: AventurasRoll, count: int, source: DiceSource) -> AventurasRoll:
    # A22/A29 — extra dice (a hero point's two, a tool's bonus) join the roll.
    return replace(state, dice=state.dice + roll_dice(source, _natural(count, "Los dados"), FACES))


def reroll(state: AventurasRoll, positions: Iterable[int], source: DiceSource) -> AventurasRoll:
    # A22 — a hero point re-rolls any dice of the roll; a re-rolled die loses its
    # conversion (it is a new die).
    chosen = set(positions)
    dice, _ = reroll_positions(source, state.dice, chosen, FACES)
    return replace(state, dice=dice, converted=state.converted - chosen)


# --- Difficulty, reactions, competitions, cooperation ---------------------


def cancel_by_difficulty(tally: Tally, difficulty: int) -> Tally:
    # A9 — the difficulty cancels normal successes first, chachis only after.
    _natural(difficulty, "La dificultad")
    normals = max(tally.normals - difficulty, 0)
    left = max(difficulty - tally.normals, 0)
    return Tally(normals, max(tally.chachis - left, 0))


@dataclass(frozen=True)
class Resolution:
    succeeded: bool
    rolled: Tally
    remaining: Tally

    @property
    def chachis(self) -> int:
        # A6 — chachis only matter if the action succeeds.
        return self.remaining.chachis if self.succeeded else 0


def resolve(tally: Tally, difficulty: int = 0) -> Resolution:
    # A8 — the action needs more successes than the difficulty.
    remaining = cancel_by_difficulty(tally, difficulty)
    return Resolution(tally.successes > difficulty, tally, remaining)


def spend_on_narrative(tally: Tally, spent: int) -> Tally:
    """A12 — ``spent`` chachis used on a narrative effect: each still counts as
    a success for the resolution, but no longer as a chachi for the action's
    effects, so it counts as a normal success (and the difficulty cancels it
    as one, A9)."""
    _natural(spent, "Los chachis gastados")
    if spent > tally.chachis:
        raise ValueError("No se pueden gastar más éxitos chachis de los que hay.")
    return Tally(tally.normals + spent, tally.chachis - spent)


def _cancel_normals_first(tally: Tally, count: int) -> Tally:
    normals = max(tally.normals - count, 0)
    return Tally(normals, max(tally.chachis - (count - (tally.normals - normals)), 0))


def _cancel_chachis_first(tally: Tally, count: int) -> Tally:
    chachis = max(tally.chachis - count, 0)
    return Tally(max(tally.normals - (count - (tally.chachis - chachis)), 0), chachis)


def cancel_by_reaction(action: Tally, reaction: Tally, order: ReactionOrder = ReactionOrder.NORMALS_FIRST) -> Tally:
    # A17 — the defender's normals cancel normals first, then chachis; its chachis
    # cancel chachis first, then normals.
    if ReactionOrder(order) is ReactionOrder.NORMALS_FIRST:
        left = _cancel_normals_first(action, reaction.normals)
        return _cancel_chachis_first(left, reaction.chachis)
    left = _cancel_chachis_first(action, reaction.chachis)
    return _cancel_normals_first(left, reaction.normals)


@dataclass(frozen=True)
class ReactionResult:
    succeeded: bool
    blocked: bool
    remaining: Tally
    defender_margin: int

    @property
    def chachis(self) -> int:
        return self.remaining.chachis if self.succeeded else 0


def resolve_reaction(
    action: Tally,
    reaction: Tally | None,
    difficulty: int = 0,
    *,
    order: ReactionOrder = ReactionOrder.NORMALS_FIRST,
) -> ReactionResult:
    """Resolve an action against one defender's reaction (A14–A17).

    ``reaction=None`` means the defender chose not to react (A14). The
    reaction's successes replace the difficulty only when they are more (A15);
    ``defender_margin`` is how many successes the reaction has over the action,
    for feats such as a counter-attack.
    """
    defended = reaction.successes if reaction else 0
    margin = defended - action.successes
    # A16 — a reaction with more successes blocks the action completely.
    blocked = margin > 0
    if reaction is None or defended <= difficulty:
        res = resolve(action, difficulty)
        return ReactionResult(res.succeeded, blocked, res.remaining, margin)
    # A15 — the action must beat the reaction's successes; a tie fails (A8).
    remaining = cancel_by_reaction(action, reaction, order)
    return ReactionResult(margin < 0, blocked, remaining, margin)


def competition_winners(
    results: Sequence[Resolution],
    count: CompetitionCount = CompetitionCount.AFTER_DIFFICULTY,
) -> tuple[int, ...]:
    """Indices of the winners of a competition (A13).

    Only sides that succeed can win; among them, more chachis wins, then more
    normal successes. Several indices mean a tie; none means nobody succeeded.
    """

    after = CompetitionCount(count) is CompetitionCount.AFTER_DIFFICULTY

    def key(r: Resolution) -> tuple[int, int]:
        t = r.remaining if after else r.rolled
        return (t.chachis, t.normals)

    contenders = [i for i, r in enumerate(results) if r.succeeded]
    if not contenders:
        return ()
    best = max(key(results[i]) for i in contenders)
    return tuple(i for i in contenders if key(results[i]) == best)


def cooperation_difficulty(difficulty: int, helpers: int) -> int:
    # A19 — +1 difficulty per extra character who joins in.
    return _natural(difficulty, "La dificultad") + _natural(helpers, "Los ayudantes")


def cooperate(tallies: Sequence[Tally], difficulty: int) -> Resolution:
    # A19 — everyone rolls, successes and chachis are pooled, then resolved.
    if not tallies:
        raise ValueError("Una cooperación necesita al menos un personaje.")
    pooled = sum(tallies, Tally())
    return resolve(pooled, cooperation_difficulty(difficulty, len(tallies) - 1))


# --- Initiative --------------------------------------------------------------


@dataclass(frozen=True)
class Combatant:
    name: str
    espabilado: int
    cachas: int
    hero_points: int | None = None

    @property
    def is_player(self) -> bool:
        # A20 — GM characters have no hero points.
        return self.hero_points is not None


def initiative_order(
    combatants: Sequence[Combatant],
) -> tuple[tuple[Combatant, ...], ...]:
    """Groups of combatants in acting order (A20).

    Pass the effective scores (:func:`attribute_score`). A group with more than
    one member is a full tie that the players settle by agreement or a die.
    """

    # A20 — higher Espabilado, then higher Cachas, then more hero points; a player
    # character goes before a GM character even with 0 points.
    def key(c: Combatant) -> tuple[int, int, int, int]:
        return (
            -c.espabilado,
            -c.cachas,
            0 if c.is_player else 1,
            -(c.hero_points or 0),
        )

    groups: list[list[Combatant]] = []
    for c in sorted(combatants, key=key):
        if groups and key(groups[-1][0]) == key(c):
            groups[-1].append(c)
        else:
            groups.append([c])
    return tuple(tuple(g) for g in groups)


# --- Hero points -------------------------------------------------------------


@dataclass(frozen=True)
class HeroPoints:
    """A hero's points and the uses already paid for this turn (A21–A24)."""

    points: int = STARTING_HERO_POINTS
    used_this_turn: frozenset[HeroSpend] = frozenset()

    def __post_init__(self) -> None:
        _natural(self.points, "Los puntos de Héroe")


def new_adventure() -> HeroPoints:
    # A21 — «cada héroe comienza el juego con cinco puntos de Héroe», whatever
    # happened before.
    return HeroPoints()


def new_turn(hero: HeroPoints) -> HeroPoints:
    return replace(hero, used_this_turn=frozenset())


def _check_use(hero: HeroPoints, use: HeroSpend) -> None:
    # A24 — any number of points per turn, but each on a different use.
    if use in hero.used_this_turn:
        raise ValueError(f"Ya se ha gastado un punto de Héroe en «{use}» este turno.")


def spend(hero: HeroPoints, use: HeroSpend) -> HeroPoints:
    use = HeroSpend(use)
    _check_use(hero, use)
    if hero.points < 1:
        raise ValueError("No quedan puntos de Héroe.")
    return HeroPoints(hero.points - 1, hero.used_this_turn | {use})


def gain(hero: HeroPoints, reason: HeroGain, points: int = 1) -> HeroPoints:
    # A21 — no cap; A25 flaw or sacrifice, A27 a state "por el morro": +1 each.
    HeroGain(reason)
    return replace(hero, points=hero.points + _natural(points, "Los puntos"))


def give(giver: HeroPoints, receiver: HeroPoints) -> tuple[HeroPoints, HeroPoints]:
    # A26 — the helped player may give one of THEIR points (with the GM's approval).
    if giver.points < 1:
        raise ValueError("Quien da el punto de Héroe no tiene ninguno.")
    return replace(giver, points=giver.points - 1), replace(receiver, points=receiver.points + 1)


def spend_experience(hero: HeroPoints, experience: int, use: HeroSpend) -> tuple[HeroPoints, int]:
    """Buy an instant hero point with 2 XP and spend it at once (A28).

    Returns the hero (same points, the use marked for this turn) and the
    experience left.
    """
    use = HeroSpend(use)
    _check_use(hero, use)
    if _natural(experience, "La experiencia") < EXPERIENCE_PER_HERO_POINT:
        raise ValueError("Hacen falta dos puntos de Experiencia para un punto de Héroe.")
    return (
        replace(hero, used_this_turn=hero.used_this_turn | {use}),
        experience - EXPERIENCE_PER_HERO_POINT,
    )


# --- Exact probabilities -----------------------------------------------------


def _face_probabilities(threshold: int) -> tuple[Fraction, Fraction, Fraction]:
    """(failure, normal success, chachi) for one die."""
    die_outcome(CHACHI, threshold)
    fail = Fraction(threshold - 1, FACES)
    chachi = Fraction(1, FACES)
    return fail, 1 - fail - chachi, chachi


@cache
def _chain(threshold: int, limit: int) -> tuple[Fraction, ...]:
    """P(one die and the dice its converted chachis add give exactly j successes)."""
    # A5 — every 6 is converted: one success plus a new die, for as long as 6s come.
    fail, normal, chachi = _face_probabilities(threshold)
    # j successes: j − 1 sixes then a normal, or j sixes then a failure.
    return tuple(chachi**j * fail + (chachi ** (j - 1) * normal if j else 0) for j in range(limit + 1))


@cache
def successes_distribution(
    dice: int,
    threshold: int = NORMAL_THRESHOLD,
    convert_chachis: bool = False,
    cap: int | None = None,
) -> tuple[Fraction, ...]:
    """P(exactly j successes) for j = 0, 1, …

    Without conversion the support is 0..dice. Converting every chachi makes
    it unbounded, so ``cap`` is required then: the last entry is P(≥ cap).
    """
    if _natural(dice, "El número de dados") > MAX_PROBABILITY_DICE:
        raise ValueError(f"Como mucho se calculan {MAX_PROBABILITY_DICE} dados, no {dice}.")
    if convert_chachis and cap is None:
        raise ValueError("Convirtiendo chachis hace falta un tope para la distribución.")
    if not convert_chachis:
        fail, _, _ = _face_probabilities(threshold)
        p = 1 - fail
        dist = [comb(dice, j) * p**j * fail ** (dice - j) for j in range(dice + 1)]
    else:
        one = _chain(threshold, cap)
        dist = [Fraction(1)] + [Fraction(0)] * cap
        for _ in range(dice):
            dist = [sum((dist[i] * one[j - i] for i in range(j + 1)), Fraction(0)) for j in range(cap + 1)]
    if cap is not None and cap < len(dist) - 1 or convert_chachis:
        head = dist[:cap]
        return tuple(head) + (1 - sum(head, Fraction(0)),)
    return tuple(dist)


def success_probability(
    dice: int,
    difficulty: int = 0,
    *,
    threshold: int = NORMAL_THRESHOLD,
    convert_chachis: bool = False,
) -> Fraction:
    """P(more successes than the difficulty), converting every chachi or none (A5, A8)."""
    if _natural(difficulty, "La dificultad") > MAX_PROBABILITY_DICE:
        raise ValueError(f"Como mucho se calcula una dificultad de {MAX_PROBABILITY_DICE}, no {difficulty}.")
    dist = successes_distribution(dice, threshold, convert_chachis, difficulty + 1 if convert_chachis else None)
    return 1 - sum(dist[: difficulty + 1], Fraction(0))
