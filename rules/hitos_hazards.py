"""HITOS hazards and arcane arithmetic: medical supervision (H71), poison (H73),
asphyxia (H74), explosions (H75), fire (H76, §4.4), resisting arcane skills
(H95) and arcane damage codes (H96)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rules.hitos import CheckResult
from rules.hitos_codes import parse_damage_code
from rules.hitos_health import HealthState

# H71 / K13 — S002: «fácil si está sano, media si está herido o difícil si está incapacitado».
MEDICAL_SUPERVISION_DIFFICULTY: dict[str, int] = {
    HealthState.SANO: 10,
    HealthState.HERIDO: 15,
    HealthState.INCAPACITADO: 20,
}
MEDICAL_SUPERVISION_ASPECT = "Bajo supervisión médica"


def _non_negative(value: int, what: str) -> int:
    if value.__class__ is not int or value < 0:
        raise ValueError(f"{what} debe ser un número entero no negativo, no {value!r}.")
    return value


def poison_damage(lower: int, higher: int, test: CheckResult) -> int:
    """H73 — resisted with Aguante: the lower damage on success, the higher on failure."""
    _non_negative(lower, "El daño menor del veneno")
    _non_negative(higher, "El daño mayor del veneno")
    if lower > higher:
        raise ValueError("El daño menor de un veneno no puede superar al mayor.")
    return lower if test.success else higher


def breath_turns(aguante: int, *, deep_breath: bool = False) -> int:
    """H74 — turns a character holds their breath: 2 × Aguante, 4 × after a deep breath."""
    _non_negative(aguante, "El Aguante")
    return (4 if deep_breath else 2) * aguante


def asphyxia_difficulty(test_number: int) -> int:
    """H74 — each further turn, Aguante at 10, +1 per such test after the first
    (``test_number`` counts from 1). Failure: unconscious, all Resistencia lost."""
    if test_number.__class__ is not int or test_number < 1:
        raise ValueError(f"El número de tirada de asfixia empieza en 1, no {test_number!r}.")
    return 10 + test_number - 1


def explosion_damage(full: int, partial: int, *, protected: bool = False, periphery: bool = False) -> int:
    """H75 — full damage, or partial damage when protected; at the periphery
    at most the partial damage (the GM may rule none with cover)."""
    _non_negative(full, "El daño completo")
    _non_negative(partial, "El daño parcial")
    return partial if protected or periphery else full


@dataclass(frozen=True, slots=True)
class FireLevel:
    key: str
    label: str
    success_code: str  # the lower damage, when the extinguish test succeeds
    failure_code: str  # the higher damage, when it fails

    def __post_init__(self) -> None:
        parse_damage_code(self.success_code)
        parse_damage_code(self.failure_code)


# §4.4 [UNVERIFIED] — the fire table was not found; GM-editable placeholders.
FIRE_LEVELS_VERIFIED = False
DEFAULT_FIRE_LEVELS: tuple[FireLevel, ...] = (
    FireLevel("menor", "Exposición menor", "m", "C"),
    FireLevel("media", "Exposición media", "C", "M"),
    FireLevel("mayor", "Exposición mayor", "M", "CM"),
)


@dataclass(frozen=True, slots=True)
class FireTurn:
    code: str  # the damage code this turn ("0" once extinguished)
    next_level: int | None  # index into the levels, None when the fire is out


def fire_turn(
    level: int,
    test: CheckResult,
    *,
    extinguishing_aspect: bool = False,
    levels: Sequence[FireLevel] = DEFAULT_FIRE_LEVELS,
) -> FireTurn:
    """H76 — one turn in the fire at ``levels[level]``: the lower code and one
    level down on success, the higher code on failure; a critical puts the fire
    out, a fumble raises the exposure; an aspect such as «Hay un extintor»
    puts it out directly."""
    if level.__class__ is not int or not 0 <= level < len(levels):
        raise ValueError(f"Nivel de exposición al fuego no válido: {level!r}.")
    if extinguishing_aspect:
        return FireTurn("0", None)
    current = levels[level]
    if test.critical:
        return FireTurn(current.success_code, None)
    if test.success:
        return FireTurn(current.success_code, level - 1 if level > 0 else None)
    if test.fumble:
        return FireTurn(current.failure_code, min(level + 1, len(levels) - 1))
    return FireTurn(current.failure_code, level)


def arcane_difficulty(difficulty: int, target_voluntad: int = 0) -> int:
    """H95 — a target resisting an arcane skill adds their Voluntad to the
    difficulty; several targets are each compared against the same roll."""
    _non_negative(target_voluntad, "La Voluntad del objetivo")
    return difficulty + target_voluntad


# H96 — damage or imbalance codes of arcane skills by use and reach.
ARCANE_EFFECT_CODES: dict[str, tuple[tuple[str, str], ...]] = {
    "menor": (("a la vista", "m"), ("en contacto", "M")),
    "intermedio": (("a la vista", "mM"), ("en contacto", "CM"), ("hasta diez a la vista", "C")),
    "mayor": (
        ("a la vista", "CM"),
        ("en contacto", "mCM"),
        ("hasta diez a la vista", "M"),
        ("todos los visibles", "m"),
        ("a distancia con vínculo", "m"),
    ),
}
