"""HITOS sheets in the campaign archive (``campaigns.archive``): the ``sheets``
part, registered in ``apps.py``.

Export: the sheets the reader may open whole (``sheets.permissions.
can_see_private``: the GM every one, a player their own), each as the sheet's
own export file (``services.sheet_export``, the GM notes only for the GM),
with its archive id, owner and review status.

Import: each sheet goes through the sheet form and its formsets exactly as an
uploaded sheet file does (``forms.import_form_data``), then
``services.sheet_create``; its owner is the user of the same username here,
or the GM when there is none. A sheet the original GM had approved comes back
approved (the posts voiced by it need that); any other comes back a draft.
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError
from django.utils.translation import gettext as _

from campaigns.extensions import ArchivePart
from campaigns.permissions import Access
from sheets.models import Character
from sheets.permissions import can_see_private
from systems.hitos.apps import HitosConfig
from systems.hitos.sheet import services
from systems.hitos.sheet.forms import (
    NpcForm,
    SheetForm,
    SkillFormSet,
    WeaponFormSet,
    import_form_data,
    import_play_state,
)

KEY = "sheets"
MAX_SHEETS = 500


def sheets_export(access: Access, posts: set[int]) -> list[dict[str, Any]]:
    characters = (
        Character.objects.filter(campaign=access.campaign)
        .select_related("owner", "hitos")
        .prefetch_related("skills", "weapons", "aspects")
        .order_by("pk")
    )
    return [
        {
            "id": c.pk,
            "owner": c.owner.username,
            "owner_name": c.owner.public_name,
            "sheet": services.sheet_export(c, include_gm_notes=access.is_gm),
        }
        for c in characters
        if can_see_private(access, c)
    ]


def _forms(data: dict[str, Any]):
    post = import_form_data(data)
    npc = data.get("kind") == Character.Kind.NPC
    sheet_form = NpcForm(post) if npc else SheetForm(post, is_gm=True, creating=True)
    return npc, sheet_form, SkillFormSet(post, prefix="skills"), WeaponFormSet(post, prefix="weapons")


def _problems(item: Any) -> list[str]:
    if (
        not isinstance(item, dict)
        or not isinstance(item.get("sheet"), dict)
        or type(item.get("id")) is not int
        or not isinstance(item.get("owner"), str)
    ):
        return [_("Una ficha del archivo no tiene el formato esperado.")]
    data = item["sheet"]
    name = str(data.get("name", "?"))
    if data.get("format") != services.EXPORT_FORMAT:
        return [_("Ficha «%(name)s»: no es una ficha de HITOS.") % {"name": name}]
    npc, sheet_form, skills, weapons = _forms(data)
    if not (sheet_form.is_valid() and skills.is_valid() and weapons.is_valid()):
        wrong = [f"{sheet_form.fields[n].label if n in sheet_form.fields else n}" for n in sheet_form.errors]
        for formset in (skills, weapons):
            wrong += [f"{formset.prefix} {i + 1}" for i, errors in enumerate(formset.errors) if errors]
        return [_("Ficha «%(name)s»: no es válida (%(fields)s).") % {"name": name, "fields": ", ".join(wrong)}]
    try:
        import_play_state(data)
    except ValidationError as exc:
        return [_("Ficha «%(name)s»: %(problem)s") % {"name": name, "problem": " ".join(exc.messages)}]
    return []


def sheets_check(data: Any) -> list[str]:
    if not isinstance(data, list):
        return [_("Las fichas del archivo no tienen el formato esperado.")]
    if len(data) > MAX_SHEETS:
        return [_("El archivo tiene más de %(n)s fichas.") % {"n": MAX_SHEETS}]
    return [problem for item in data for problem in _problems(item)]


def sheets_load(campaign, data: list[dict[str, Any]], imported) -> None:
    gm = campaign.gm
    for item in data:
        sheet = item["sheet"]
        npc, sheet_form, skills, weapons = _forms(sheet)
        sheet_form.is_valid(), skills.is_valid(), weapons.is_valid()
        rows = (skills.rows(),) if npc else (skills.rows(), weapons.rows())
        owner = gm if npc else imported.users.get(item.get("owner"), gm)
        character = services.sheet_create(
            campaign=campaign,
            owner=owner,
            actor=gm,
            data=sheet_form.sheet_data(*rows),
            imported=True,
            kind=Character.Kind.NPC if npc else Character.Kind.PC,
            play=import_play_state(sheet),
        )
        if not npc and sheet.get("status") == Character.Status.APPROVED:
            # The original GM approved it; the posts voiced by it need it so.
            Character.objects.filter(pk=character.pk).update(status=Character.Status.APPROVED)
            character.status = Character.Status.APPROVED
        imported.characters[item["id"]] = character


SHEETS_PART = ArchivePart(
    key=KEY,
    export=sheets_export,
    load=sheets_load,
    check=sheets_check,
    system=HitosConfig.system_key,
    before_posts=True,
)
