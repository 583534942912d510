"""The campaign's Vaesen options (``Campaign.rules_options``) and its two
critical injury tables (V13).

The seed names the physical and mental tables without giving them
(rules-spec Q16: data, not code), so each campaign keeps its own, written by
its GM as rows "d66 value(s) → name, effect, time limit". This module reads
and writes those rows; it knows no view.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.core.exceptions import ValidationError
from django.utils.translation import gettext as _

from rules.vaesen import FACES, ConditionKind, InitiativeMode, NpcPenalty
from systems.vaesen.sheet.permissions import PLAYERS_MARK_OWN

NPC_PENALTY = "npc_penalty"
INITIATIVE_MODE = "initiative_mode"
INJURY_TABLES = {ConditionKind.PHYSICAL: "injuries_physical", ConditionKind.MENTAL: "injuries_mental"}
MAX_ROWS = 36

# The d66 values, 11–66, in order (V13: the first die the tens, the second the units).
D66_VALUES = tuple(tens * 10 + units for tens in range(1, FACES + 1) for units in range(1, FACES + 1))


@dataclass(frozen=True)
class InjuryRow:
    """One row of a critical injury table: the d66 values it covers (from,
    to), the injury's name, its effect and its time limit for treatment."""

    low: int
    high: int
    name: str
    effect: str = ""
    time_limit: str = ""

    def covers(self, value: int) -> bool:
        return self.low <= value <= self.high

    @property
    def values(self) -> str:
        return str(self.low) if self.low == self.high else f"{self.low}-{self.high}"

    def to_list(self) -> list:
        return [self.low, self.high, self.name, self.effect, self.time_limit]


def _options(campaign) -> dict:
    return campaign.rules_options or {}


def players_mark_own(campaign) -> bool:
    return bool(_options(campaign).get(PLAYERS_MARK_OWN, False))


def npc_penalty(campaign) -> NpcPenalty:
    try:
        return NpcPenalty(_options(campaign).get(NPC_PENALTY, NpcPenalty.EVERY_TEST))
    except ValueError:
        return NpcPenalty.EVERY_TEST


def initiative_mode(campaign) -> InitiativeMode:
    try:
        return InitiativeMode(_options(campaign).get(INITIATIVE_MODE, InitiativeMode.D10))
    except ValueError:
        return InitiativeMode.D10


def injury_table(campaign, kind) -> list[InjuryRow]:
    """The campaign's table of ``kind`` (empty by default)."""
    rows = _options(campaign).get(INJURY_TABLES[ConditionKind(kind)]) or []
    table = []
    for row in rows:
        try:
            low, high, name, effect, limit = row
            table.append(InjuryRow(int(low), int(high), str(name), str(effect), str(limit)))
        except (TypeError, ValueError):
            continue
    return table


def injury_for(campaign, kind, value: int) -> InjuryRow | None:
    """The row of the campaign's table that covers the rolled d66, if any."""
    return next((row for row in injury_table(campaign, kind) if row.covers(value)), None)


def _d66(text: str, line: int) -> int:
    text = text.strip()
    if not text.isdigit() or int(text) not in D66_VALUES:
        raise ValidationError(
            _("Línea %(line)s: «%(value)s» no es un resultado de d66 (11 a 66, cada cifra de 1 a 6).")
            % {"line": line, "value": text}
        )
    return int(text)


def parse_table(text: str) -> list[InjuryRow]:
    """The rows of a table typed as lines "11-16 | Nombre | Efecto | Plazo"
    (effect and time limit may be left out). Refused in Spanish, line by
    line: a value that is no d66, a range the wrong way round, a row without
    a name, two rows covering the same value, too many rows."""
    rows: list[InjuryRow] = []
    errors: list[str] = []
    for number, line in enumerate((text or "").splitlines(), start=1):
        if not line.strip():
            continue
        parts = [part.strip() for part in line.split("|")]
        try:
            if len(parts) < 2 or len(parts) > 4:
                raise ValidationError(
                    _("Línea %(line)s: escribe «valores | nombre | efecto | plazo».") % {"line": number}
                )
            values, name, *rest = parts
            effect, limit = (rest + ["", ""])[:2]
            low_text, _sep, high_text = values.replace("–", "-").partition("-")
            low = _d66(low_text, number)
            high = _d66(high_text, number) if high_text.strip() else low
            if high < low:
                raise ValidationError(
                    _("Línea %(line)s: el intervalo %(values)s va al revés.") % {"line": number, "values": values}
                )
            if not name:
                raise ValidationError(_("Línea %(line)s: falta el nombre de la herida.") % {"line": number})
            if len(name) > 120 or len(limit) > 80 or len(effect) > 2000:
                raise ValidationError(
                    _("Línea %(line)s: el nombre (120), el efecto (2000) o el plazo (80) son demasiado largos.")
                    % {"line": number}
                )
            row = InjuryRow(low, high, name, effect, limit)
            clash = next((r for r in rows if r.low <= row.high and row.low <= r.high), None)
            if clash is not None:
                raise ValidationError(
                    _("Línea %(line)s: %(values)s se solapa con %(other)s.")
                    % {"line": number, "values": row.values, "other": clash.values}
                )
            rows.append(row)
        except ValidationError as exc:
            errors.extend(exc.messages)
    if len(rows) > MAX_ROWS:
        errors.append(_("Una tabla tiene como mucho %(max)s filas.") % {"max": MAX_ROWS})
    if errors:
        raise ValidationError(errors)
    return sorted(rows, key=lambda r: r.low)


def table_text(rows: list[InjuryRow]) -> str:
    """The rows as the form's textarea shows them."""
    return "\n".join(" | ".join([row.values, row.name, row.effect, row.time_limit]).rstrip(" |") for row in rows)
