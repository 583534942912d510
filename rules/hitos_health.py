"""HITOS health and sanity in play: states and penalties (H53–H55, H83),
painkillers (H66), massive damage and trauma (H52, H77), dying and madness
(H56–H58, H84–H86), healing and mental recovery (H67–H70, H88) and horror
(H78–H81). Meters are ``rules.meters.Meter``; tests are ``CheckResult``s."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum, StrEnum

from rules.hitos import CheckResult, HitosRoll, Reading, check
from rules.hitos_codes import code_value
from rules.hitos_options import DEFAULT_OPTIONS, HitosOptions
from rules.meters import Meter

MASS_DAMAGE_DIFFICULTY = 12  # H52
TRAUMA_DIFFICULTY = 12  # H77
DYING_DIFFICULTY = 15  # H56
MADNESS_DIFFICULTY = 15  # H84
# H85 — mental stabilisation by another: Entereza 15; Voluntad + Interacción 12
# if emotionally close; an Oficio of therapy, difficulty not stated [ENGINE DEFAULT 15].
MENTAL_STABILISE_DIFFICULTY = {"entereza": 15, "cercano": 12, "terapia": 15}


class HealthState(StrEnum):
    SANO = "sano"
    HERIDO = "herido"
    INCAPACITADO = "incapacitado"
    MORIBUNDO = "moribundo"


class MentalState(StrEnum):
    CUERDO = "cuerdo"
    ALTERADO = "alterado"
    TRASTORNADO = "trastornado"
    ENLOQUECIDO = "enloquecido"


# H54, H55, H83 — penalties to every action and to Defensa. Moribundo cannot act
# and Enloquecido is out of the player's control (H56, H84); they keep −5.
PENALTIES: dict[str, int] = {
    HealthState.SANO: 0,
    HealthState.HERIDO: -2,
    HealthState.INCAPACITADO: -5,
    HealthState.MORIBUNDO: -5,
    MentalState.CUERDO: 0,
    MentalState.ALTERADO: -2,
    MentalState.TRASTORNADO: -5,
    MentalState.ENLOQUECIDO: -5,
}

STATE_LABELS: dict[str, str] = {
    "sano": "Sano",
    "herido": "Herido",
    "incapacitado": "Incapacitado",
    "moribundo": "Moribundo",
    "cuerdo": "Cuerdo",
    "alterado": "Alterado",
    "trastornado": "Trastornado",
    "enloquecido": "Enloquecido",
}


def _threshold(value: int, name: str) -> int:
    if value.__class__ is not int or value < 1:
        raise ValueError(f"{name} debe ser un número entero positivo, no {value!r}.")
    return value


def health_state(meter: Meter, aguante: int) -> HealthState:
    _threshold(aguante, "El Aguante")
    if meter.empty == 0:
        return HealthState.MORIBUNDO  # H56 — all points lost
    if meter.lost >= 2 * aguante:
        return HealthState.INCAPACITADO  # H55 — 2×Aguante or more, points left
    if meter.lost >= aguante:
        return HealthState.HERIDO  # H54 — "mayor o igual que su Aguante"
    return HealthState.SANO  # H53


def mental_state(meter: Meter, entereza: int, options: HitosOptions = DEFAULT_OPTIONS) -> MentalState:
    _threshold(entereza, "La Entereza")
    if meter.empty == 0:
        return MentalState.ENLOQUECIDO  # H83 — everything lost
    if meter.lost >= 2 * entereza:
        return MentalState.TRASTORNADO  # H83 — "al menos tantos … como el doble"
    # K11 — the texts say "más puntos … que su Entereza"; the default reads ≥.
    if options.alterado_boundary == "at_least":
        altered = meter.lost >= entereza
    else:
        altered = meter.lost > entereza
    return MentalState.ALTERADO if altered else MentalState.CUERDO


class Painkiller(Enum):
    # H66 — mild drugs cancel 2 penalty points; strong ones cancel 5 and give
    # the temporary aspect «Bajo el efecto de las drogas».
    NINGUNO = 0
    SUAVE = 2
    FUERTE = 5


def state_penalty(
    health: HealthState | None = None,
    mental: MentalState | None = None,
    painkiller: Painkiller = Painkiller.NINGUNO,
) -> int:
    """The penalty to every action and to Defensa. Physical and mental penalties
    add up (the texts give them separately and never say otherwise); painkillers
    cancel up to 2 or 5 points of it (H66), never turning it into a bonus."""
    penalty = (PENALTIES[health] if health else 0) + (PENALTIES[mental] if mental else 0)
    return min(0, penalty + painkiller.value)


_ORDER = {state: i for i, state in enumerate([*HealthState, *MentalState])}
_SECUELA_FROM = {HealthState: HealthState.INCAPACITADO, MentalState: MentalState.TRASTORNADO}
_SECUELA_UNTIL = {HealthState: HealthState.SANO, MentalState: MentalState.CUERDO}


def temporary_secuela_change(before: HealthState | MentalState, after: HealthState | MentalState) -> str | None:
    """H65 — reaching Incapacitado gives a temporary secuela, lost on returning
    to Sano; H89 — reaching Trastornado gives a temporary disorder, lost on
    returning to Cuerdo. Returns "gana", "pierde" (if the character has one) or None."""
    kind = type(before)
    if type(after) is not kind:
        raise ValueError("Los dos estados deben ser ambos físicos o ambos mentales.")
    threshold = _ORDER[_SECUELA_FROM[kind]]
    if _ORDER[before] < threshold <= _ORDER[after]:
        return "gana"
    if _ORDER[before] > _ORDER[_SECUELA_UNTIL[kind]] and after is _SECUELA_UNTIL[kind]:
        return "pierde"
    return None


@dataclass(frozen=True, slots=True)
class LossOutcome:
    before: Meter
    after: Meter
    amount: int
    test_due: bool  # H52/H77: amount ≥ Aguante / Entereza
    test_passed: bool | None  # None when no test was due


def massive_test_due(amount: int, threshold: int) -> bool:
    """H52/H77 — a test is due when the damage taken (after RD, Q5) or the
    imbalance is at least Aguante or Entereza."""
    return amount > 0 and amount >= threshold


def _take(meter: Meter, amount: int, threshold: int, test: CheckResult | None, what: str) -> LossOutcome:
    if amount.__class__ is not int or amount < 0:
        raise ValueError(f"{what} debe ser un número entero no negativo, no {amount!r}.")
    due = massive_test_due(amount, threshold)
    if not due:
        return LossOutcome(meter, meter.mark(amount), amount, False, None)
    if test is None:
        raise ValueError(f"{what} ({amount}) alcanza el umbral ({threshold}): hace falta la tirada a dificultad 12.")
    if test.success:
        return LossOutcome(meter, meter.mark(amount), amount, True, True)
    # H52/H60, H77 — a failed test slashes every box left; Q5: overflow beyond
    # the empty boxes still consolidates, as marking the damage itself would.
    return LossOutcome(meter, meter.mark(max(amount, meter.empty)), amount, True, False)


def take_damage(meter: Meter, damage: int, *, aguante: int, mass_test: CheckResult | None = None) -> LossOutcome:
    """Mark physical damage (after RD). When ``massive_test_due`` the caller rolls
    Aguante at ``MASS_DAMAGE_DIFFICULTY`` (see ``aguante_test``) and passes it."""
    _threshold(aguante, "El Aguante")
    return _take(meter, damage, aguante, mass_test, "El daño")


def take_imbalance(
    meter: Meter, imbalance: int, *, entereza: int, trauma_test: CheckResult | None = None
) -> LossOutcome:
    """Mark mental imbalance; a failed trauma test (H77) loses every point left."""
    _threshold(entereza, "La Entereza")
    return _take(meter, imbalance, entereza, trauma_test, "El desequilibrio")


def aguante_test(
    roll: HitosRoll, aguante: int, difficulty: int, modifier: int = 0, options: HitosOptions = DEFAULT_OPTIONS
) -> CheckResult:
    """A test of Aguante (or Entereza): the roll's value + the score + modifiers."""
    return check(roll, aguante + modifier, difficulty, options)


class TurnOutcome(StrEnum):
    DIES = "muere"  # H56 — a failed dying test; H84 — the mind disconnects for ever
    STABILISED = "estabilizado"  # H56 — a critical stabilises; H84 — unconscious and Trastornado
    CONTINUES = "sigue"  # roll again next turn


def dying_turn(test: CheckResult) -> TurnOutcome:
    """H56 — each turn Moribundo (the first included), Aguante at difficulty 15:
    failure kills, a critical stabilises. H84 — each turn Enloquecido, Entereza
    at 15 with the same three outcomes (Trastornado on a critical)."""
    if test.critical:
        return TurnOutcome.STABILISED
    return TurnOutcome.CONTINUES if test.success else TurnOutcome.DIES


madness_turn = dying_turn


@dataclass(frozen=True, slots=True)
class StabiliseOutcome:
    success: bool
    after: Meter
    recovered: int
    state: str  # the state the character is treated as (Q13): incapacitado / trastornado
    permanent_secuela: bool


def stabilise(meter: Meter, test: CheckResult, options: HitosOptions = DEFAULT_OPTIONS) -> StabiliseOutcome:
    """H57/H58 — another character stabilises a dying one (Intelecto + a medical
    skill at ``options.stabilise_difficulty``, K3; ``test`` must use it).

    Success erases min(m, slashes) slashes and the character counts as
    Incapacitado (Q13); if all the damage was crosses, exactly 1 point (a cross)
    is recovered. A permanent secuela follows (K8: always, or only with crosses).
    """
    if test.difficulty != options.stabilise_difficulty:
        raise ValueError(
            f"La tirada para estabilizar debe ser a dificultad {options.stabilise_difficulty}, no {test.difficulty}."
        )
    return _stabilise(meter, test, HealthState.INCAPACITADO, options.permanent_secuela == "always")


def stabilise_mind(meter: Meter, test: CheckResult) -> StabiliseOutcome:
    """H85 — another character brings one back from Enloquecido (difficulties in
    ``MENTAL_STABILISE_DIFFICULTY``): recover min(m, slashes), or 1 point if all
    was consolidated, and become Trastornado. H89 — reaching Enloquecido with
    consolidated imbalance leaves a permanent mental secuela."""
    return _stabilise(meter, test, MentalState.TRASTORNADO, False)


# A failed stabilisation leaves the character as they were.
_STATE_ON_FAILURE = {HealthState.INCAPACITADO: HealthState.MORIBUNDO, MentalState.TRASTORNADO: MentalState.ENLOQUECIDO}


def _stabilise(meter: Meter, test: CheckResult, state: str, secuela_always: bool) -> StabiliseOutcome:
    consolidated = meter.crosses > 0
    if not test.success:
        return StabiliseOutcome(False, meter, 0, _STATE_ON_FAILURE[state], False)
    if meter.slashes:
        recovered = min(test.roll.m, meter.slashes)
        after = meter.stabilise(recovered)
    else:
        recovered = min(1, meter.crosses)
        after = meter.heal(recovered)
    return StabiliseOutcome(True, after, recovered, state, secuela_always or consolidated)


class Aspect(StrEnum):
    """An aspect activated on a horror exposure test: it shifts the level,
    it does not re-roll (H81, Q11). On a healing or recovery roll an aspect is
    an ordinary activation instead (K16): the roll's reading says it."""

    POSITIVE = "positive"
    NEGATIVE = "negative"


@dataclass(frozen=True, slots=True)
class RecoveryRule:
    difficulty: int
    # Codes of the roll for: success, success with a positive aspect or a
    # critical, success with a negative aspect. "0" = nothing.
    success: str
    better: str
    worse: str
    # On failure without rest (H70/H88) the roll loses points instead.
    loses_on_failure: bool = False


# H68/H69/H70 — weekly healing by health state (with rest / without rest).
HEALING_RULES: dict[str, RecoveryRule | None] = {
    HealthState.HERIDO: RecoveryRule(10, "C", "M", "m"),
    HealthState.INCAPACITADO: RecoveryRule(15, "m", "C", "0"),
}
# H70 — an Incapacitado who keeps up normal activity: success keeps the points,
# failure loses C (positive aspect m, negative M).
UNRESTED_WORST = RecoveryRule(15, "0", "0", "0", loses_on_failure=True)
_UNRESTED_LOSS = ("C", "m", "M")  # normal, positive, negative
_READING_INDEX = {Reading.NORMAL: 0, Reading.POSITIVE: 1, Reading.NEGATIVE: 2}

# H88 — monthly mental recovery by mental state.
RECOVERY_RULES: dict[str, RecoveryRule | None] = {
    MentalState.ALTERADO: RecoveryRule(10, "C", "M", "m"),
    MentalState.TRASTORNADO: RecoveryRule(15, "m", "C", "0"),
}

_WORSE = {
    HealthState.SANO: HealthState.HERIDO,
    HealthState.HERIDO: HealthState.INCAPACITADO,
    MentalState.CUERDO: MentalState.ALTERADO,
    MentalState.ALTERADO: MentalState.TRASTORNADO,
}


def recovery_rule(state: HealthState | MentalState, *, rested: bool = True) -> RecoveryRule | None:
    """The periodic test for a state, or None when no roll is made: Sano heals
    fully after 8 h of sleep (H67), Cuerdo after a quiet week (H88), Moribundo
    and Enloquecido follow the dying / madness rules. Without enough rest
    (under 75 % of the period, H70) the character recovers one grade worse."""
    if state in (HealthState.MORIBUNDO, MentalState.ENLOQUECIDO):
        return None
    if not rested:
        if state in (HealthState.INCAPACITADO, MentalState.TRASTORNADO):
            return UNRESTED_WORST
        state = _WORSE[state]
    rules = HEALING_RULES if isinstance(state, HealthState) else RECOVERY_RULES
    return rules.get(state)


@dataclass(frozen=True, slots=True)
class RecoveryOutcome:
    after: Meter
    recovered: int
    lost: int
    test: CheckResult | None


def _recovered(rule: RecoveryRule, test: CheckResult, low: int, mid: int, high: int) -> int:
    """What a successful periodic roll recovers. K16: after an activation
    (H14) the activated value is the amount, as it decided the success — M or
    the pair/triple sum (H15) after a positive one, m or the negative value
    (H19) after a negative one, never below 0. Without one, the state's code
    (H68, H69, H88), a critical's better code; a critical read negatively
    recovers the plain code: the two cancel out (K18)."""
    reading = test.roll.reading
    if reading == Reading.NEGATIVE and test.critical:
        return code_value(rule.success, low, mid, high)
    if reading != Reading.NORMAL:
        return max(0, test.value)
    return code_value(rule.better if test.critical else rule.success, low, mid, high)


def recover(
    meter: Meter,
    state: HealthState | MentalState,
    test: CheckResult | None = None,
    *,
    rested: bool = True,
    options: HitosOptions = DEFAULT_OPTIONS,
) -> RecoveryOutcome:
    """Apply one healing period (H67–H70) or mental recovery period (H88).

    ``test`` is the Aguante (Entereza) test at ``recovery_rule(...).difficulty``,
    read as it stands after any activation (K16: ``_recovered``); it is not
    needed for Sano / Cuerdo with rest, who recover everything. Recovery
    erases crosses first (Q12). A fumble loses M points (H68, H88), marked as
    crosses by default (K9). Without rest, an Incapacitado's (Trastornado's)
    failure loses C, m after a positive activation, M after a negative one (H70).
    """
    if rested and state in (HealthState.SANO, MentalState.CUERDO):
        after = meter.cleared()
        return RecoveryOutcome(after, meter.lost, 0, test)
    rule = recovery_rule(state, rested=rested)
    if rule is None:
        raise ValueError(f"El estado {STATE_LABELS[state]} no se recupera con tiradas periódicas.")
    if test is None:
        raise ValueError(f"Hace falta la tirada a dificultad {rule.difficulty}.")
    if test.difficulty != rule.difficulty:
        raise ValueError(f"La tirada de recuperación debe ser a dificultad {rule.difficulty}, no {test.difficulty}.")
    low, mid, high = test.roll.sorted
    if test.fumble:
        lost = high
    elif rule.loses_on_failure:
        if test.success:
            return RecoveryOutcome(meter, 0, 0, test)
        lost = code_value(_UNRESTED_LOSS[_READING_INDEX[test.roll.reading]], low, mid, high)
    elif not test.success:
        return RecoveryOutcome(meter, 0, 0, test)
    else:
        after = meter.heal(_recovered(rule, test, low, mid, high))
        return RecoveryOutcome(after, meter.lost - after.lost, 0, test)
    if options.healing_fumble_marks == "crosses":
        after = meter.mark_consolidated(lost)
    else:
        after = meter.mark(lost)
    return RecoveryOutcome(after, 0, lost, test)


@dataclass(frozen=True, slots=True)
class HorrorLevel:
    key: str
    label: str
    difficulty: int
    success_loss: str
    failure_loss: str


# H79 — (difficulty // loss on success ó loss on failure); §4.1 maps the words
# to numbers: Fácil 10, Media 15, Difícil 20, Muy difícil 25.
HORROR_LEVELS: tuple[HorrorLevel, ...] = (
    HorrorLevel("desasosiego", "Desasosiego", 10, "0", "1"),
    HorrorLevel("estupor", "Estupor", 15, "1", "m"),
    HorrorLevel("miedo", "Miedo", 15, "m", "M"),
    HorrorLevel("panico", "Pánico", 20, "C", "CM"),
    HorrorLevel("horror", "Horror", 25, "M", "mCM"),
)
_HORROR_INDEX = {level.key: i for i, level in enumerate(HORROR_LEVELS)}


def horror_level(key: str | HorrorLevel) -> HorrorLevel:
    if isinstance(key, HorrorLevel):
        return key
    try:
        return HORROR_LEVELS[_HORROR_INDEX[key]]
    except KeyError:
        keys = ", ".join(_HORROR_INDEX)
        raise ValueError(f"Nivel de horror desconocido: {key!r}. Se esperaba uno de: {keys}.") from None


def shift_horror(level: str | HorrorLevel, steps: int) -> HorrorLevel:
    """H81 / Q11 — aspects move the exposure one level per step, within the table."""
    index = _HORROR_INDEX[horror_level(level).key] + steps
    return HORROR_LEVELS[min(max(index, 0), len(HORROR_LEVELS) - 1)]


def horror_test_due(level: str | HorrorLevel, degeneracion: int) -> bool:
    # H80 — Degeneración 1 or more makes no Desasosiego tests.
    return not (horror_level(level).key == "desasosiego" and degeneracion >= 1)


@dataclass(frozen=True, slots=True)
class HorrorOutcome:
    level: HorrorLevel
    test: CheckResult | None  # None when exempt (H80)
    code: str
    loss: int


def horror(
    level: str | HorrorLevel,
    roll: HitosRoll | None,
    *,
    entereza: int,
    degeneracion: int = 0,
    shift: int = 0,
    modifier: int = 0,
    options: HitosOptions = DEFAULT_OPTIONS,
) -> HorrorOutcome:
    """H78/H79 — an Entereza exposure test; the loss code of the outcome is read
    from the same roll (§4.6). ``shift`` is the net level change from aspects
    (Q11). The loss then goes through ``take_imbalance`` (trauma test, H77)."""
    effective = shift_horror(level, shift)
    if not horror_test_due(effective, degeneracion):
        return HorrorOutcome(effective, None, "0", 0)
    if roll is None:
        raise ValueError("Hace falta la tirada de Entereza.")
    if roll.reading is not Reading.NORMAL:
        # Q11 — aspects shift the level instead of re-rolling an exposure test.
        raise ValueError("En una prueba de exposición los aspectos cambian el nivel, no repiten dados.")
    result = check(roll, entereza + modifier, effective.difficulty, options)
    code = effective.success_loss if result.success else effective.failure_loss
    low, mid, high = roll.sorted
    return HorrorOutcome(effective, result, code, code_value(code, low, mid, high))
