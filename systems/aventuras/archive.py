"""Hora de Aventuras sheets in the campaign archive (``campaigns.archive``):
the ``sheets`` part of a Hora de Aventuras campaign (``sheets.archive``),
registered in ``apps.py``. An archived sheet is read back through the sheet
form and its formsets exactly as an uploaded sheet file is
(``views.import_forms``).

A Hora de Aventuras campaign has no rules options page: an archived campaign
brings none (``OPTIONS_PART``).
"""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from campaigns.extensions import options_part
from sheets.archive import SheetsArchive, sheet_problem
from systems.aventuras.apps import AventurasConfig
from systems.aventuras.sheet import services
from systems.aventuras.sheet.forms import import_play_state
from systems.aventuras.sheet.views import import_forms, import_problems

SHEETS_PART = SheetsArchive(
    system=AventurasConfig.system_key,
    export_format=services.EXPORT_FORMAT,
    not_this_game=gettext_lazy("Ficha «%(name)s»: no es una ficha de Hora de Aventuras."),
    sheet_export=services.sheet_export,
    forms=lambda data, npc: import_forms(data, npc=npc, is_gm=True),
    invalid=lambda name, sheet_form, formsets: sheet_problem(name, import_problems(sheet_form, *formsets)),
    play_state=import_play_state,
    sheet_create=services.sheet_create,
    select_related=("owner", "aventuras"),
    prefetch_related=("aventuras__feats", "aventuras__tools", "aventuras__states"),
    filters={"aventuras__isnull": False},
).part()


def _options_problems(stored: dict[str, Any]) -> list[str]:
    """Nothing: this game has no options for a GM to choose."""
    if stored:
        return [_("Las opciones de reglas de la partida no son las que permite su página de opciones.")]
    return []


OPTIONS_PART = options_part(AventurasConfig.system_key, _options_problems)
