"""Campaign-choosable HITOS options, each defaulting to the spec's engine default.

Where the seeds disagree (K1–K14) or leave a gap, the default is the majority
or [ENGINE DEFAULT] reading and the alternative is an option here. The Django
side stores ``options.to_dict()`` as JSON and rebuilds with ``from_dict``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any

from rules.hitos_codes import parse_damage_code

DEFAULT_DAMAGE_LADDER: tuple[str, ...] = ("m", "C", "M", "mM", "CM", "mCM")

_CHOICES: dict[str, tuple[Any, ...]] = {
    "unprepared_penalty": (2, 3),
    "stabilise_difficulty": (12, 15),
    "critical_damage": ("weapon_dice", "total"),
    "initiative_ties": ("score_then_reroll", "reroll"),
    "npc_drama": ("gm_pool", "affected_player"),
    "permanent_secuela": ("always", "if_consolidated"),
    "healing_fumble_marks": ("crosses", "slashes"),
    "rounding": ("floor", "nearest"),
    "alterado_boundary": ("at_least", "more_than"),
}


@dataclass(frozen=True, slots=True)
class HitosOptions:
    # K1 — success on total ≥ difficulty; True for S002's strictly greater.
    strict_success: bool = False
    # K2 — desprevenido: −2 Defensa (S000, S002); 3 for S001's −3.
    unprepared_penalty: int = 2
    # K3 — another character stabilises a dying one at 12 (S001, S002); 15 for S000.
    stabilise_difficulty: int = 12
    # K4 — a critical multiplies the weapon dice ("weapon_dice", S001) or the
    # dice plus the damage bonus ("total", S000); RD is subtracted afterwards.
    critical_damage: str = "weapon_dice"
    # K5 — initiative ties: higher Iniciativa score then a roll-off (S000 first),
    # or a roll-off among the tied only ("reroll", S001/S002).
    initiative_ties: str = "score_then_reroll"
    # K6 — NPC drama points come from and go to the GM's pool (S000, S002), or
    # "affected_player": the GM gives a point to the player most affected (S001).
    npc_drama: str = "gm_pool"
    # K8 — permanent secuela for anyone who recovers from Moribundo (S000, S002),
    # or "if_consolidated": only if the dying character had crosses (S001).
    permanent_secuela: str = "always"
    # K9 — a fumbled healing or recovery roll marks its loss as crosses (S001's
    # "daño consolidado"), or as slashes.
    healing_fumble_marks: str = "crosses"
    # K10 / Q6 — halves and quarters are floored; "nearest" rounds half up (Roll20).
    rounding: str = "floor"
    # K11 / Q7 — Alterado from lost ≥ Entereza; "more_than" is the texts' literal
    # lost > Entereza, which leaves lost == Entereza Cuerdo.
    alterado_boundary: str = "at_least"
    # H21 / Q8 — a double or triple 1 in a negative re-roll is a fumble.
    negative_double_one_fumbles: bool = True
    # §4.2 [UNVERIFIED] — the damage categories from lowest to highest.
    damage_ladder: tuple[str, ...] = DEFAULT_DAMAGE_LADDER

    def __post_init__(self) -> None:
        for name in ("strict_success", "negative_double_one_fumbles"):
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"La opción {name} debe ser verdadero o falso.")
        for name, allowed in _CHOICES.items():
            value = getattr(self, name)
            if isinstance(value, bool) or value not in allowed:
                shown = ", ".join(repr(a) for a in allowed)
                raise ValueError(f"Valor no válido para {name}: {value!r}. Se esperaba uno de: {shown}.")
        ladder = self.damage_ladder
        if isinstance(ladder, list):
            ladder = tuple(ladder)
            object.__setattr__(self, "damage_ladder", ladder)
        if not isinstance(ladder, tuple) or not ladder:
            raise ValueError("La escala de daño debe ser una lista no vacía de códigos.")
        for code in ladder:
            parse_damage_code(code)
        if len(set(ladder)) != len(ladder):
            raise ValueError("La escala de daño no puede repetir códigos.")

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["damage_ladder"] = list(self.damage_ladder)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> HitosOptions:
        """Build options from stored JSON; missing keys take their default."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"Opciones de HITOS desconocidas: {', '.join(unknown)}.")
        values = dict(data)
        if "damage_ladder" in values and isinstance(values["damage_ladder"], list):
            values["damage_ladder"] = tuple(values["damage_ladder"])
        return cls(**values)


DEFAULT_OPTIONS = HitosOptions()
