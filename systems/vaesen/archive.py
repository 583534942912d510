"""Vaesen sheets in the campaign archive (``campaigns.archive``): the
``sheets`` part of a Vaesen campaign (``sheets.archive``), registered in
``apps.py``. An archived sheet is read back through the sheet form and its
formsets exactly as an uploaded sheet file is (``views.import_forms``).
"""

from __future__ import annotations

from django.utils.translation import gettext_lazy

from sheets.archive import SheetsArchive, sheet_problem
from systems.vaesen.apps import VaesenConfig
from systems.vaesen.sheet import services
from systems.vaesen.sheet.forms import import_play_state
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
