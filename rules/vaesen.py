"""The Vaesen-style d6 pool (rules V1–V31 of rules-spec.md, seed S003).

A test rolls attribute + skill d6s and every 6 is a success. Rolls are frozen
values that keep their dice in raw order; pushing returns a new roll.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, replace
from enum import StrEnum
from fractions import Fraction
from functools import cache
from math import comb

from rules.dice import DiceSource, check_dice, check_die, reroll_positions, roll_dice

FACES = 6
SUCCESS_FACE = 6
MAX_HELP = 3
MAX_FEAR_COMPANIONS = 3
CONDITIONS_PER_KIND = 3
HEALED_PER_SUCCESS = 3
INITIATIVE_FACES = 10
MAX_PROBABILITY_DICE = 100


class ConditionKind(StrEnum):
    PHYSICAL = "físico"
    MENTAL = "mental"


# V8 — the three conditions of each kind, in the order the text lists them.
CONDITION_NAMES: dict[ConditionKind, tuple[str, ...]] = {
    ConditionKind.PHYSICAL: ("Exhausto", "Magullado", "Herido"),
    ConditionKind.MENTAL: ("Irritado", "Asustado", "Desesperado"),
}

# V7 — Físico and Precisión are physical, Lógica and Empatía mental.
ATTRIBUTE_KINDS: dict[str, ConditionKind] = {
    "físico": ConditionKind.PHYSICAL,
    "precisión": ConditionKind.PHYSICAL,
    "lógica": ConditionKind.MENTAL,
    "empatía": ConditionKind.MENTAL,
}

# The four attributes, their range on a sheet, and the skills that hang from
# each. S003 names only some skills (Sigilo with Precisión, Agilidad, Fuerza,
# Combate cuerpo a cuerpo, Combate a distancia, Vigilancia, Medicina,
# Inspiración) and no ranges: the rest of the list and the ranges are those of
# the original game (attributes 2–5, skills 0–5), which the seed summarises.
ATTRIBUTES: tuple[str, ...] = ("físico", "precisión", "lógica", "empatía")
ATTRIBUTE_RANGE = (2, 5)
SKILL_RANGE = (0, 5)
SKILLS: dict[str, tuple[str, ...]] = {
    "físico": ("Agilidad", "Combate cuerpo a cuerpo", "Fuerza"),
    "precisión": ("Combate a distancia", "Medicina", "Sigilo"),
    "lógica": ("Erudición", "Investigación", "Vigilancia"),
    "empatía": ("Inspiración", "Manipulación", "Observación"),
}
SKILL_ATTRIBUTE: dict[str, str] = {skill: attribute for attribute, skills in SKILLS.items() for skill in skills}


class InitiativeMode(StrEnum):
    # Q18 default: S003's d10, ties re-rolled among the tied.
    D10 = "d10"
    # The original game's initiative cards 1–10 (§4.7): no ties possible.
    CARDS = "cartas"


class NpcPenalty(StrEnum):
    # Q18 default: −1 die per Resistencia point lost, on every test.
    EVERY_TEST = "cada_prueba"
    # The literal reading of S003: the dice are lost "en la siguiente prueba".
    NEXT_TEST = "siguiente_prueba"


class Opposed(StrEnum):
    FIRST = "primero"
    SECOND = "segundo"
    TIE = "empate"


def _natural(value: int, name: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ValueError(f"{name} debe ser un número entero no negativo, no {value!r}.")
    return value


def attribute_kind(attribute: str) -> ConditionKind:
    """The kind of condition a push costs with this attribute (V7)."""
    try:
        return ATTRIBUTE_KINDS[attribute.strip().lower()]
    except KeyError:
        raise ValueError(
            f"Atributo desconocido: {attribute!r}; se esperaba Físico, Precisión, Lógica o Empatía."
        ) from None


def help_bonus(helpers: int) -> int:
    # V15 — +1 die per helper, up to +3.
    return min(_natural(helpers, "El número de ayudantes"), MAX_HELP)


def pool_size(
    attribute: int,
    skill: int = 0,
    *,
    modifier: int = 0,
    conditions: int = 0,
    helpers: int = 0,
) -> int:
    """Dice to roll: attribute + skill + modifier + help − conditions, never below one."""
    _natural(attribute, "El atributo")
    _natural(skill, "La habilidad")
    _natural(conditions, "El número de estados")
    # V1 attribute + skill; V4 a skill of 0 adds nothing; V5/V16 modifiers are dice;
    # V15 help; V9 one die less per condition of the roll's kind, but at least one die.
    size = attribute + skill + modifier + help_bonus(helpers) - conditions
    return max(size, 1)


def count_successes(dice: Sequence[int]) -> int:
    # V2 — every 6 is a success.
    return sum(1 for d in check_dice(dice, FACES) if d == SUCCESS_FACE)


@dataclass(frozen=True)
class PoolRoll:
    """One test. ``pushed`` marks a roll that has already been pushed (V6)."""

    dice: tuple[int, ...]
    needed: int = 1
    kind: ConditionKind | None = None
    pushed: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "dice", check_dice(self.dice, FACES))
        _natural(self.needed, "Los éxitos necesarios")

    @property
    def successes(self) -> int:
        return count_successes(self.dice)

    @property
    def succeeded(self) -> bool:
        # V2/V3 — at least the needed number of 6s.
        return self.successes >= self.needed

    @property
    def extra_successes(self) -> int:
        # V3 — each success beyond the needed ones buys one effect.
        return max(self.successes - self.needed, 0)

    @property
    def can_push(self) -> bool:
        # V6 — once per action, only right after a failure, and something to re-roll.
        return not self.pushed and not self.succeeded and self.successes < len(self.dice)


def roll(source: DiceSource, pool: int, *, needed: int = 1, kind: ConditionKind | None = None) -> PoolRoll:
    if pool < 1:
        raise ValueError(f"Una tirada necesita al menos un dado, no {pool}.")
    return PoolRoll(roll_dice(source, pool, FACES), needed=needed, kind=kind)


@dataclass(frozen=True)
class Push:
    roll: PoolRoll
    rerolled: tuple[int, ...]
    condition: ConditionKind


def push(previous: PoolRoll, source: DiceSource, kind: ConditionKind | None = None) -> Push:
    """Push a failed roll: re-roll every die that is not a 6 (V6).

    ``rerolled`` lists the re-rolled positions in raw order; ``condition`` is the
    kind of condition the character suffers for pushing (V7).
    """
    cost = kind or previous.kind
    if cost is None:
        raise ValueError("Hay que saber si la tirada es física o mental para forzarla.")
    if previous.pushed:
        raise ValueError("Una tirada solo se puede forzar una vez por acción.")
    if previous.succeeded:
        raise ValueError("Solo se puede forzar una tirada fallida.")
    positions = tuple(i for i, d in enumerate(previous.dice) if d != SUCCESS_FACE)
    if not positions:
        raise ValueError("No queda ningún dado que no sea un 6 para repetir.")
    dice, _ = reroll_positions(source, previous.dice, positions, FACES)
    new = replace(previous, dice=dice, pushed=True, kind=cost)
    return Push(new, positions, cost)


# --- Conditions and Broken -------------------------------------------------


@dataclass(frozen=True)
class Conditions:
    physical: frozenset[str] = frozenset()
    mental: frozenset[str] = frozenset()
    broken_physical: bool = False
    broken_mental: bool = False

    def __post_init__(self) -> None:
        for kind in ConditionKind:
            unknown = self.of(kind) - set(CONDITION_NAMES[kind])
            if unknown:
                raise ValueError(f"Estados {kind} desconocidos: {sorted(unknown)}.")

    def of(self, kind: ConditionKind) -> frozenset[str]:
        kind = ConditionKind(kind)
        return self.physical if kind is ConditionKind.PHYSICAL else self.mental

    def broken(self, kind: ConditionKind) -> bool:
        kind = ConditionKind(kind)
        return self.broken_physical if kind is ConditionKind.PHYSICAL else self.broken_mental

    def penalty(self, kind: ConditionKind) -> int:
        # V9 — one die less per condition of the roll's kind.
        return len(self.of(kind))

    @property
    def fails_every_test(self) -> bool:
        # V11 — Broken by physical harm: every test fails automatically.
        return self.broken_physical

    @property
    def may_attack(self) -> bool:
        # V10/V12 — a Broken character cannot attack (mentally Broken may still flee,
        # parry and dodge).
        return not (self.broken_physical or self.broken_mental)


@dataclass(frozen=True)
class Suffered:
    conditions: Conditions
    taken: tuple[str, ...]
    became_broken: bool
    critical_injuries: int


def suffer(
    conditions: Conditions,
    kind: ConditionKind,
    count: int = 1,
    *,
    choices: Sequence[str] = (),
) -> Suffered:
    """Mark ``count`` conditions of ``kind``.

    Each condition taken is a different one (the player's ``choices`` first, then
    the text's order). With all three marked, the next one makes the character
    Broken with one critical injury (V10) and further points of the same blow
    add nothing. A physical blow on a character already physically Broken causes
    one more critical injury (V11).
    """
    kind = ConditionKind(kind)
    _natural(count, "El número de estados")
    if count == 0:
        return Suffered(conditions, (), False, 0)
    if conditions.broken(kind):
        return Suffered(conditions, (), False, 1 if kind is ConditionKind.PHYSICAL else 0)
    bad = [c for c in choices if c not in CONDITION_NAMES[kind]]
    if bad:
        raise ValueError(f"{bad[0]!r} no es un estado {kind}.")
    marked = set(conditions.of(kind))
    order = list(dict.fromkeys(choices))
    order += [c for c in CONDITION_NAMES[kind] if c not in order]
    taken: list[str] = []
    broken = False
    for _ in range(count):
        free = [c for c in order if c not in marked]
        if not free:
            broken = True
            break
        marked.add(free[0])
        taken.append(free[0])
    field = "physical" if kind is ConditionKind.PHYSICAL else "mental"
    new = replace(conditions, **{field: frozenset(marked)})
    if broken:
        new = replace(new, **{f"broken_{field}": True})
    return Suffered(new, tuple(taken), broken, 1 if broken else 0)


def heal(
    conditions: Conditions,
    kind: ConditionKind,
    names: Collection[str] = (),
    *,
    broken: bool = False,
) -> Conditions:
    """Remove the named conditions of ``kind`` and, if asked, the Broken state."""
    kind = ConditionKind(kind)
    current = conditions.of(kind)
    missing = set(names) - current
    if missing:
        raise ValueError(f"El personaje no tiene los estados {sorted(missing)}.")
    field = "physical" if kind is ConditionKind.PHYSICAL else "mental"
    new = replace(conditions, **{field: current - set(names)})
    if broken:
        new = replace(new, **{f"broken_{field}": False})
    return new


def conditions_healed(successes: int) -> int:
    # V29 — a success heals three conditions, each extra success three more.
    return HEALED_PER_SUCCESS * _natural(successes, "Los éxitos")


def treat_critical_injury(successes: int) -> tuple[bool, int]:
    """(ends Broken, extra conditions healed) for a Medicina/Inspiración test (V28)."""
    _natural(successes, "Los éxitos")
    # V28 — success ends Broken; each extra success heals one more condition.
    return successes >= 1, max(successes - 1, 0)


def critical_injury_roll(source: DiceSource) -> int:
    # V13 — 2d6 "desglosados": the first die is the tens, the second the units (11–66).
    tens, units = roll_dice(source, 2, FACES)
    return tens * 10 + units


# --- Opposed rolls, reactions, combat --------------------------------------


def opposed(first_successes: int, second_successes: int) -> Opposed:
    # V14 — more successes wins; on a tie either side may push.
    if first_successes > second_successes:
        return Opposed.FIRST
    if second_successes > first_successes:
        return Opposed.SECOND
    return Opposed.TIE


def after_reaction(attack_successes: int, reaction_successes: int) -> int:
    # V21/V24 — each success of the dodge, parry or blocking reaction removes one of
    # the action's; at 0 the action fails.
    return max(attack_successes - reaction_successes, 0)


def reaction_may_swap_initiative(attack_successes: int, reaction_successes: int) -> bool:
    # V21 — more successes than needed to cancel the attack: may swap initiative.
    return reaction_successes > attack_successes


def breaks_free(held_successes: int, holder_successes: int | None) -> bool:
    # V23 — the held person needs more successes than the holder; a tie changes
    # nothing. Without a holding reaction (None) one success is enough.
    if holder_successes is None:
        return held_successes >= 1
    return held_successes > holder_successes


def armour_roll(source: DiceSource, protection: int) -> PoolRoll:
    # V22 — roll as many dice as the armour's Protection.
    return PoolRoll(roll_dice(source, _natural(protection, "La protección"), FACES))


def damage_after_armour(damage: int, armour_successes: int) -> int:
    # V22 — each armour success reduces the damage by 1.
    return max(_natural(damage, "El daño") - _natural(armour_successes, "Los éxitos"), 0)


def take_damage(conditions: Conditions, damage: int, armour_successes: int = 0) -> Suffered:
    # V19/V22 — the weapon's damage, less armour, is the number of physical conditions.
    return suffer(
        conditions,
        ConditionKind.PHYSICAL,
        damage_after_armour(damage, armour_successes),
    )


def npc_dice_penalty(
    points_lost: int,
    damage_since_last_test: int,
    mode: NpcPenalty = NpcPenalty.EVERY_TEST,
) -> int:
    # V20 — NPCs lose Resistencia instead of taking conditions, and dice with it.
    if NpcPenalty(mode) is NpcPenalty.EVERY_TEST:
        return _natural(points_lost, "Los puntos perdidos")
    return _natural(damage_since_last_test, "El daño reciente")


# --- Fear ------------------------------------------------------------------


def fear_pool(attribute: int, companions: int, mental_conditions: int, *, modifier: int = 0) -> int:
    """Dice for a fear test with Lógica or Empatía (V26).

    ``companions`` counts the other player characters in the scene who are
    neither Broken nor Terrified (the caller filters them).
    """
    # V26 — +1 die per companion, at most +3; mental conditions penalise the roll.
    bonus = min(_natural(companions, "Los compañeros"), MAX_FEAR_COMPANIONS)
    return pool_size(attribute, modifier=modifier + bonus, conditions=mental_conditions)


@dataclass(frozen=True)
class FearOutcome:
    passed: bool
    mental_conditions: int
    terrified_rounds: int | None


def fear_outcome(successes: int, fear: int, source: DiceSource | None = None) -> FearOutcome:
    """Resolve a (possibly pushed) fear test; a failure rolls 1d6 rounds from ``source``."""
    _natural(successes, "Los éxitos")
    _natural(fear, "El valor de Miedo")
    # V26 — as many successes as the Fear value; extra successes do nothing.
    if successes >= fear:
        return FearOutcome(True, 0, None)
    if source is None:
        raise ValueError("Una prueba de Miedo fallida necesita dados para los asaltos.")
    # V27 — Terrified for 1d6 rounds, with Fear − successes mental conditions.
    rounds = roll_dice(source, 1, FACES)[0]
    return FearOutcome(False, fear - successes, rounds)


# --- Initiative, ambush, equipment ---------------------------------------


def initiative(
    source: DiceSource,
    names: Sequence[str],
    *,
    twice: Collection[str] = (),
    mode: InitiativeMode = InitiativeMode.D10,
) -> tuple[tuple[str, int], ...]:
    """Initiative order, highest first, as (name, initiative) pairs (V17, V25).

    Those in ``twice`` (a successful ambush) roll twice and keep the best. With
    d10s, a tie is broken by re-rolling among the tied (Q18); the re-roll only
    orders them. With cards, each draws from the deck 1–10 without replacement
    and the card not kept goes back into the deck.
    """
    mode = InitiativeMode(mode)
    if len(set(names)) != len(names):
        raise ValueError("Los nombres de la iniciativa deben ser distintos.")
    if mode is InitiativeMode.CARDS:
        deck = list(range(1, INITIATIVE_FACES + 1))
        if len(names) + (1 if twice else 0) > len(deck):
            raise ValueError("No hay cartas de iniciativa para tantos personajes.")

        def draw() -> int:
            i = source.roll(len(deck)) - 1 if len(deck) > 1 else 0
            return deck.pop(i)

        values: dict[str, int] = {}
        for name in names:
            card = draw()
            if name in twice:
                other = draw()
                card, back = max(card, other), min(card, other)
                deck.append(back)
                deck.sort()
            values[name] = card
        return tuple(sorted(values.items(), key=lambda item: -item[1]))

    def d10(name: str) -> int:
        first = roll_dice(source, 1, INITIATIVE_FACES)[0]
        return max(first, roll_dice(source, 1, INITIATIVE_FACES)[0]) if name in twice else first

    values = {name: d10(name) for name in names}
    return tuple((name, values[name]) for name in _order_ties(source, list(names), values))


def _order_ties(source: DiceSource, names: list[str], values: dict[str, int]) -> list[str]:
    ordered: list[str] = []
    for value in sorted({values[n] for n in names}, reverse=True):
        tied = [n for n in names if values[n] == value]
        if len(tied) == 1:
            ordered += tied
        else:
            again = {n: roll_dice(source, 1, INITIATIVE_FACES)[0] for n in tied}
            ordered += _order_ties(source, tied, again)
    return ordered


def ambush_first_action_bonus(extra_successes: int) -> int:
    # V25 — each extra Sigilo success adds +1 to the first action of the round.
    return _natural(extra_successes, "Los éxitos adicionales")


def can_buy(successes: int, availability: int) -> bool:
    # V31 — availability 1–5; buying needs successes ≥ availability.
    if not 1 <= availability <= 5:
        raise ValueError(f"La disponibilidad va de 1 a 5, no {availability}.")
    return _natural(successes, "Los éxitos") >= availability


def recovery_pool(first: int, second: int) -> int:
    # V30 — Físico + Precisión (physical) or Lógica + Empatía (mental).
    return _natural(first, "El atributo") + _natural(second, "El atributo")


# --- Exact probabilities ---------------------------------------------------


@cache
def successes_distribution(dice: int) -> tuple[Fraction, ...]:
    """P(exactly j successes) for j = 0..dice, without a push (V2)."""
    if _natural(dice, "El número de dados") > MAX_PROBABILITY_DICE:
        raise ValueError(f"Como mucho se calculan {MAX_PROBABILITY_DICE} dados, no {dice}.")
    p, q = Fraction(1, 6), Fraction(5, 6)
    return tuple(comb(dice, j) * p**j * q ** (dice - j) for j in range(dice + 1))


@cache
def pushed_distribution(dice: int, needed: int = 1) -> tuple[Fraction, ...]:
    """P(exactly j successes at the end) when every failure is pushed once (V6)."""
    _natural(needed, "Los éxitos necesarios")
    first = successes_distribution(dice)
    final = [Fraction(0)] * (dice + 1)
    for s, p in enumerate(first):
        if s >= needed or s == dice:
            final[s] += p
            continue
        for j, r in enumerate(successes_distribution(dice - s)):
            final[s + j] += p * r
    return tuple(final)


def success_probability(dice: int, needed: int = 1, *, push: bool = False) -> Fraction:
    """P(at least ``needed`` successes) with ``dice`` d6s, pushing after a failure or not."""
    dist = pushed_distribution(dice, needed) if push else successes_distribution(dice)
    return sum(dist[needed:], Fraction(0))


# --- Combat in posts (V17–V25): the small readings the table's combat asks ---

SLOW_ACTIONS_PER_TURN = 1
ACTIONS_PER_TURN = 2


def may_take_action(slow_used: int, fast_used: int, *, slow: bool) -> bool:
    # V18 — one slow and one fast action, or two fast: two in all, at most one slow.
    # Reactions are fast actions and count against the same round's two.
    _natural(slow_used, "Las acciones lentas")
    _natural(fast_used, "Las acciones rápidas")
    if slow_used + fast_used >= ACTIONS_PER_TURN:
        return False
    return not (slow and slow_used >= SLOW_ACTIONS_PER_TURN)


def initiative_kept(dice: Sequence[int]) -> int:
    # V17 — 1d10; V25 — an ambush rolls twice and keeps the best.
    values = check_dice(dice, INITIATIVE_FACES)
    if not values:
        raise ValueError("La iniciativa necesita al menos un dado.")
    return max(values)


def initiative_groups(values: dict[str, int]) -> list[list[str]]:
    """The names grouped by initiative, highest first, each group in the
    given order (V17). A group of more than one is a tie to re-roll among
    its members only (Q18)."""
    return [[n for n in values if values[n] == value] for value in sorted(set(values.values()), reverse=True)]


def ambush_outcome(sigilo_successes: int, vigilancia_successes: int) -> tuple[bool, int]:
    """(the ambush works, extra successes) for Sigilo against Vigilancia (V25).

    It works with more successes than the watcher's (V14; a tie is read as
    not getting past the watch, so the watcher gets the double initiative).
    The extra successes are those beyond the one that beats the watch; each
    gives +1 on the ambusher's first action.
    """
    _natural(sigilo_successes, "Los éxitos de Sigilo")
    _natural(vigilancia_successes, "Los éxitos de Vigilancia")
    if opposed(sigilo_successes, vigilancia_successes) is not Opposed.FIRST:
        return False, 0
    return True, sigilo_successes - vigilancia_successes - 1


def attack_lands(attack_successes: int, reaction_successes: int = 0) -> bool:
    # V19 — one success hits; V21 — after the dodge or parry has removed its own.
    return after_reaction(attack_successes, reaction_successes) >= 1


def grapple_silences(attack_successes: int, reaction_successes: int = 0) -> bool:
    # V23 — silencing the held person costs one success more than holding them.
    return after_reaction(attack_successes, reaction_successes) >= 2


def flees(flee_successes: int, stopper_successes: int = 0) -> bool:
    # V24 — each success of the enemy's Agilidad removes one of the fleeing
    # character's; at 0 they stay in the fight.
    return after_reaction(flee_successes, stopper_successes) >= 1


# --- Initiative cards drawn through a log of dice (InitiativeMode.CARDS) -----

INITIATIVE_DECK: tuple[int, ...] = tuple(range(1, INITIATIVE_FACES + 1))


def initiative_deck(held: Collection[int]) -> tuple[int, ...]:
    """The initiative cards still in the deck: 1–10 without those ``held``
    by the combatants already placed (no two hold the same card)."""
    return tuple(card for card in INITIATIVE_DECK if card not in set(held))


def initiative_card_faces(cards_left: int, *, twice: bool = False) -> tuple[int, ...]:
    """The dice that draw one combatant's card (two after a successful
    ambush, V25) from a deck of ``cards_left``: a d``n`` picks one of the
    ``n`` cards left, lowest first. The deck's last card needs no die."""
    _natural(cards_left, "Las cartas que quedan")
    if cards_left == 0:
        raise ValueError("No quedan cartas de iniciativa en la baraja.")
    draws = min(2 if twice else 1, cards_left)
    return tuple(cards_left - i for i in range(draws) if cards_left - i >= 2)


def draw_initiative_cards(deck: Sequence[int], dice: Sequence[int], *, twice: bool = False) -> tuple[int, ...]:
    """The cards ``dice`` draw from ``deck`` without replacement (each die
    the position among the cards left, lowest first; the last card is drawn
    without one): one card, two after a successful ambush (V25)."""
    left = sorted(deck)
    faces = initiative_card_faces(len(left), twice=twice)
    values = list(dice)
    if len(values) != len(faces):
        raise ValueError(f"Hacen falta {len(faces)} dados para sacar las cartas, no {len(values)}.")
    drawn: list[int] = []
    for _draw in range(min(2 if twice else 1, len(left))):
        if len(left) == 1:
            drawn.append(left.pop())
            continue
        die = check_die(values.pop(0), len(left))
        drawn.append(left.pop(die - 1))
    return tuple(drawn)


def initiative_card_kept(cards: Sequence[int]) -> int:
    # V17 — one card; V25 — after an ambush two are drawn and the best kept
    # (the other goes back into the deck).
    if not cards:
        raise ValueError("La iniciativa necesita al menos una carta.")
    return max(cards)
