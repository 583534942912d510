"""HITOS combat: Defensa in play (H38, H43), attack (H42), damage from the attack
roll (H44–H51), armour (H50), initiative order (H40, K5) and weapon data (§4.2)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from rules.hitos import CheckResult, HitosRoll, check
from rules.hitos_codes import DamageCode, code_value, parse_damage_code, shift_code
from rules.hitos_options import DEFAULT_OPTIONS, HitosOptions

# H43 — "La dificultad de atacar a una persona indefensa es 5".
DEFENCELESS_DIFFICULTY = 5
# H43 — "Si un personaje opta por dedicar el asalto solo a defenderse recibe un +4".
ALL_OUT_DEFENCE_BONUS = 4


@dataclass(frozen=True, slots=True)
class Breakdown:
    """A number and the named steps that made it, for the roll card."""

    base: int
    parts: tuple[tuple[str, int], ...]
    total: int


def defence_difficulty(
    defensa: int,
    *,
    unprepared: bool = False,
    all_out_defence: bool = False,
    defenceless: bool = False,
    state_penalty: int = 0,
    options: HitosOptions = DEFAULT_OPTIONS,
) -> Breakdown:
    """The difficulty to hit a target. ``state_penalty`` is the (negative) health
    and mental penalty, which also applies to Defensa (H54, H55, H83)."""
    if defenceless:
        # H43 — a defenceless target is difficulty 5, whatever its Defensa.
        return Breakdown(defensa, (("indefenso", DEFENCELESS_DIFFICULTY - defensa),), DEFENCELESS_DIFFICULTY)
    parts: list[tuple[str, int]] = []
    if unprepared:
        # H38 / K2 — desprevenido: −2 (or −3 by option) until the character first acts.
        parts.append(("desprevenido", -options.unprepared_penalty))
    if all_out_defence:
        parts.append(("defensa total", ALL_OUT_DEFENCE_BONUS))
    if state_penalty:
        parts.append(("estado", state_penalty))
    return Breakdown(defensa, tuple(parts), defensa + sum(delta for _, delta in parts))


def attack(
    roll: HitosRoll,
    *,
    reflejos: int,
    combate: int,
    target_defence: int,
    modifier: int = 0,
    options: HitosOptions = DEFAULT_OPTIONS,
) -> CheckResult:
    """H42 — Reflejos + Combate (+ modifiers) against the target's Defensa.
    A critical always hits (H47) and a fumble always misses (H49): see ``check``."""
    return check(roll, reflejos + combate + modifier, target_defence, options)


def best_rd(armours: Iterable[int]) -> int:
    """H50 — armours never stack: only the highest RD counts."""
    best = 0
    for rd in armours:
        if rd.__class__ is not int or rd < 0:
            raise ValueError(f"La RD de una armadura debe ser un número entero no negativo, no {rd!r}.")
        best = max(best, rd)
    return best


@dataclass(frozen=True, slots=True)
class DamageResult:
    code: DamageCode  # after any shift
    dice_damage: int  # the dice the code names, plus extra dice
    multiplier: int  # 1, or 2 / 3 for a double / triple 10
    bonus: int
    rd: int
    total: int  # never below 0


def attack_damage(
    roll: HitosRoll,
    code: str | DamageCode,
    *,
    bonus: int = 0,
    rd: int = 0,
    shift: int = 0,
    extra_dice: Sequence[int] = (),
    options: HitosOptions = DEFAULT_OPTIONS,
) -> DamageResult:
    """Damage of a hit, read from the attack roll after any re-roll (H44).

    ``shift`` moves the code up or down the campaign's ladder (H46);
    ``extra_dice`` are the values of the extra d10s a code above mCM needs (H51).
    A double or triple 10 multiplies by 2 or 3 (H47): the weapon dice by default,
    the dice plus the bonus with ``critical_damage="total"`` (K4). The damage
    bonus (H45) is added and RD subtracted last (H50).
    """
    if rd.__class__ is not int or rd < 0:
        raise ValueError(f"La RD debe ser un número entero no negativo, no {rd!r}.")
    used = shift_code(code, shift, options.damage_ladder) if shift else parse_damage_code(code)
    low, mid, high = roll.sorted
    dice_damage = code_value(used, low, mid, high, extra_dice)
    multiplier = roll.critical_level or 1
    if options.critical_damage == "total":
        raw = (dice_damage + bonus) * multiplier
    else:
        raw = dice_damage * multiplier + bonus
    return DamageResult(used, dice_damage, multiplier, bonus, rd, max(0, raw - rd))


@dataclass(frozen=True, slots=True)
class CriticalEffect:
    """What a critical or fumble proposes for the GM to confirm (H7, H8, H48, H49, K7)."""

    kind: str  # "aspecto beneficioso", "aspecto perjudicial", "secuela temporal", "aspecto negativo"
    duration: str  # "escena" or "sesión"


def critical_effect(result: CheckResult, *, is_attack: bool = False) -> CriticalEffect | None:
    # H7/H8/H28 — double: one scene; triple: one session (K7: triple 1 = session).
    if result.critical_level:
        duration = "escena" if result.critical_level == 2 else "sesión"
        # H48 — an attack's critical gives the target a temporary secuela.
        return CriticalEffect("secuela temporal" if is_attack else "aspecto beneficioso", duration)
    if result.fumble_level:
        duration = "escena" if result.fumble_level == 2 else "sesión"
        # H49 — a fumbled attack gives the attacker a negative temporary aspect.
        return CriticalEffect("aspecto negativo" if is_attack else "aspecto perjudicial", duration)
    return None


def initiative_total(roll: HitosRoll, iniciativa: int, modifier: int = 0) -> int:
    """H40 — an initiative roll is C + Iniciativa (+ modifiers), once per combat."""
    return roll.C + iniciativa + modifier


@dataclass(frozen=True, slots=True)
class InitiativeEntry:
    id: str
    total: int  # C + Iniciativa (H40)
    score: int  # the Iniciativa score, for S000's tie-break


def initiative_order(
    entries: Iterable[InitiativeEntry], options: HitosOptions = DEFAULT_OPTIONS
) -> list[tuple[InitiativeEntry, ...]]:
    """H40 — act from the highest total down. Returns groups in acting order; a
    group of more than one is still tied and needs a roll-off among its members
    only. K5 default: a higher Iniciativa score breaks the tie first (S000)."""
    by_score = options.initiative_ties == "score_then_reroll"

    def key(entry: InitiativeEntry) -> tuple[int, ...]:
        return (entry.total, entry.score) if by_score else (entry.total,)

    ordered = sorted(entries, key=key, reverse=True)
    groups: list[tuple[InitiativeEntry, ...]] = []
    for entry in ordered:
        if groups and key(groups[-1][0]) == key(entry):
            groups[-1] = (*groups[-1], entry)
        else:
            groups.append((entry,))
    return groups


@dataclass(frozen=True, slots=True)
class Weapon:
    name: str
    code: str
    melee: bool = True
    notes: str = ""

    def __post_init__(self) -> None:
        if not self.name.strip():
            raise ValueError("Un arma necesita un nombre.")
        parse_damage_code(self.code)


# §4.2 [UNVERIFIED] — the book's weapon table was not found. These are
# placeholders for a GM to edit; nothing in the engine depends on them.
WEAPONS_VERIFIED = False
DEFAULT_WEAPONS: tuple[Weapon, ...] = (
    Weapon("Sin armas", "m", True, "Sin verificar"),
    Weapon("Cuchillo", "C", True, "Sin verificar"),
    Weapon("Porra", "C", True, "Sin verificar"),
    Weapon("Hacha o espada", "M", True, "Sin verificar"),
    Weapon("Pistola", "mM", False, "Sin verificar"),
    Weapon("Escopeta", "CM", False, "Sin verificar"),
    Weapon("Fusil", "CM", False, "Sin verificar"),
    Weapon("Explosivo", "mCM", False, "Sin verificar"),
)


def weapons_to_data(weapons: Iterable[Weapon]) -> list[dict[str, Any]]:
    return [{"name": w.name, "code": w.code, "melee": w.melee, "notes": w.notes} for w in weapons]


def weapons_from_data(data: Iterable[dict[str, Any]]) -> tuple[Weapon, ...]:
    weapons = []
    for row in data:
        try:
            weapons.append(
                Weapon(str(row["name"]), str(row["code"]), bool(row.get("melee", True)), str(row.get("notes", "")))
            )
        except KeyError as missing:
            raise ValueError(f"Falta el campo {missing} en un arma.") from None
    return tuple(weapons)


# §4.3 [UNVERIFIED] — falls: a GM-editable {max height in metres: code} table in
# 3 m bands; above the last band, mCM plus one extra die per further band (H51).
DEFAULT_FALL_TABLE: tuple[tuple[int, str], ...] = (
    (3, "m"),
    (6, "C"),
    (9, "M"),
    (12, "mM"),
    (15, "CM"),
    (18, "mCM"),
)


def fall_code(
    height: int, *, aspect: bool = False, table: Sequence[tuple[int, str]] = DEFAULT_FALL_TABLE
) -> DamageCode:
    """H72 — the damage code of a fall; an aspect reduces the fall by 3 m."""
    if height.__class__ is not int or height < 0:
        raise ValueError(f"La altura de una caída debe ser un número entero de metros, no {height!r}.")
    metres = max(0, height - 3) if aspect else height
    if metres == 0:
        return DamageCode(constant=0)
    for limit, code in table:
        if metres <= limit:
            return parse_damage_code(code)
    last_limit, last_code = table[-1]
    extra = -(-(metres - last_limit) // 3)
    return shift_code(last_code, extra, [c for _, c in table])
