"""HITOS sheets in the campaign archive (``campaigns.archive``): the
``sheets`` part of a HITOS campaign (``sheets.archive``), registered in
``apps.py``. An archived sheet is read back through the sheet form (or the NPC
form) and its formsets exactly as an uploaded sheet file is
(``forms.import_form_data``); an NPC's sheet has no weapons.

The archived campaign's rules options are held to what the options page lets
a GM choose (``OPTIONS_PART``): a value the rules engine or the table would
refuse is refused before anything is written, rather than breaking the new
campaign's pages.
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from campaigns.extensions import options_part
from rules.hitos_options import HitosOptions
from sheets.archive import SheetsArchive
from systems.hitos.apps import HitosConfig
from systems.hitos.campaign import TABLE_DEFAULTS
from systems.hitos.options.forms import CampaignOptionsForm
from systems.hitos.sheet import services
from systems.hitos.sheet.forms import (
    NpcForm,
    SheetForm,
    SkillFormSet,
    WeaponFormSet,
    import_form_data,
    import_play_state,
)


def _forms(data: dict[str, Any], npc: bool):
    post = import_form_data(data)
    sheet_form = NpcForm(post) if npc else SheetForm(post, is_gm=True, creating=True)
    return sheet_form, SkillFormSet(post, prefix="skills"), WeaponFormSet(post, prefix="weapons")


def _invalid(name: str, sheet_form, formsets) -> str:
    wrong = [f"{sheet_form.fields[n].label if n in sheet_form.fields else n}" for n in sheet_form.errors]
    for formset in formsets:
        wrong += [f"{formset.prefix} {i + 1}" for i, errors in enumerate(formset.errors) if errors]
    return _("Ficha «%(name)s»: no es válida (%(fields)s).") % {"name": name, "fields": ", ".join(wrong)}


def _sheet_data(npc: bool, sheet_form, formsets):
    skills, weapons = formsets
    return sheet_form.sheet_data(skills.rows()) if npc else sheet_form.sheet_data(skills.rows(), weapons.rows())


SHEETS_PART = SheetsArchive(
    system=HitosConfig.system_key,
    export_format=services.EXPORT_FORMAT,
    not_this_game=gettext_lazy("Ficha «%(name)s»: no es una ficha de HITOS."),
    sheet_export=services.sheet_export,
    forms=_forms,
    invalid=_invalid,
    play_state=import_play_state,
    sheet_create=services.sheet_create,
    select_related=("owner", "hitos"),
    prefetch_related=("skills", "weapons", "aspects"),
    sheet_data=_sheet_data,
).part()


def _options_problems(stored: dict[str, Any]) -> list[str]:
    """The archived campaign's rules options (``campaign.rules_options``), as
    the rules engine and the options form take them."""
    hours = CampaignOptionsForm.base_fields["activation_deadline_hours"]
    try:
        HitosOptions.from_dict({k: v for k, v in stored.items() if k not in TABLE_DEFAULTS})
        if not isinstance(stored.get("players_mark_own_meters", False), bool):
            raise ValueError("players_mark_own_meters")
        if type(stored.get("activation_deadline_hours", 1)) is not int:
            raise ValueError("activation_deadline_hours")
        hours.clean(stored.get("activation_deadline_hours", 1))
    except (ValueError, TypeError, AttributeError, ValidationError):
        return [_("Las opciones de reglas de la partida no son las que permite su página de opciones.")]
    return []


OPTIONS_PART = options_part(HitosConfig.system_key, _options_problems)
