"""Vaesen sheets in the campaign archive (``campaigns.archive``): the
``sheets`` part of a Vaesen campaign (``sheets.archive``), registered in
``apps.py``. An archived sheet is read back through the sheet form and its
formsets exactly as an uploaded sheet file is (``views.import_forms``).

The archived campaign's rules options are held to what the options page lets
a GM choose (``OPTIONS_PART``): a value the pages would trip over (an injury
table that is no list of rows, an initiative that is no choice) is refused
before anything is written.
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from campaigns.extensions import options_part
from rules.vaesen import InitiativeMode, NpcPenalty
from sheets.archive import SheetsArchive, sheet_problem
from systems.vaesen.apps import VaesenConfig
from systems.vaesen.options import tables
from systems.vaesen.sheet import services
from systems.vaesen.sheet.forms import import_play_state
from systems.vaesen.sheet.permissions import PLAYERS_MARK_OWN
from systems.vaesen.sheet.views import import_forms, import_problems

SHEETS_PART = SheetsArchive(
    system=VaesenConfig.system_key,
    export_format=services.EXPORT_FORMAT,
    not_this_game=gettext_lazy("Ficha «%(name)s»: no es una ficha de Vaesen."),
    sheet_export=services.sheet_export,
    forms=lambda data, npc: import_forms(data, npc=npc, is_gm=True),
    invalid=lambda name, sheet_form, formsets: sheet_problem(name, import_problems(sheet_form, *formsets)),
    play_state=import_play_state,
    sheet_create=services.sheet_create,
    select_related=("owner", "vaesen"),
    prefetch_related=("vaesen__items", "vaesen__weapons", "vaesen__injuries"),
).part()


def _table_ok(rows: Any) -> bool:
    """A critical injury table as the options page stores it: rows
    ``[low, high, name, effect, time limit]`` that the page would read back
    the same from its own text."""
    if not isinstance(rows, list) or not all(
        isinstance(row, list)
        and len(row) == 5
        and all(type(v) is int for v in row[:2])
        and all(isinstance(v, str) for v in row[2:])
        for row in rows
    ):
        return False
    typed = [tables.InjuryRow(*row) for row in rows]
    try:
        return sorted(typed, key=lambda r: r.low) == tables.parse_table(tables.table_text(typed))
    except ValidationError:
        return False


def _options_problems(stored: dict[str, Any]) -> list[str]:
    """The archived campaign's rules options, as the options page writes them."""
    choices = {
        tables.NPC_PENALTY: {p.value for p in NpcPenalty},
        tables.INITIATIVE_MODE: {m.value for m in InitiativeMode},
    }
    known = {PLAYERS_MARK_OWN, *choices, *tables.INJURY_TABLES.values()}
    if (
        set(stored) - known
        or not isinstance(stored.get(PLAYERS_MARK_OWN, False), bool)
        or any(name in stored and str(stored[name]) not in values for name, values in choices.items())
        or not all(isinstance(stored.get(name, ""), str) for name in choices)
        or not all(_table_ok(stored.get(name, [])) for name in tables.INJURY_TABLES.values())
    ):
        return [_("Las opciones de reglas de la partida no son las que permite su página de opciones.")]
    return []


OPTIONS_PART = options_part(VaesenConfig.system_key, _options_problems)
