"""Hora de Aventuras sheets in the campaign archive (``campaigns.archive``):
the ``sheets`` part of a Hora de Aventuras campaign, registered in ``apps.py``.

Export: the sheets the reader may open whole (``sheets.permissions.
can_see_private``: the GM every one, a player their own), each as the sheet's
own export file (``services.sheet_export``, the GM notes only for the GM),
with its archive id, owner and review status.

Import: each sheet goes through the sheet form and its formsets exactly as an
uploaded sheet file does (``views.import_forms``), then
``services.sheet_create``; its owner is the user of the same username here,
or the GM when there is none. A sheet the original GM had approved comes back
approved; any other comes back a draft.
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError
from django.utils.translation import gettext as _

from campaigns.extensions import ArchivePart
from campaigns.permissions import Access
from sheets.models import Character
from sheets.permissions import can_see_private
from systems.aventuras.apps import AventurasConfig
from systems.aventuras.sheet import services
from systems.aventuras.sheet.forms import import_play_state
from systems.aventuras.sheet.views import import_forms, import_problems

KEY = "sheets"
MAX_SHEETS = 500


def sheets_export(access: Access, posts: set[int]) -> list[dict[str, Any]]:
    characters = (
        Character.objects.filter(campaign=access.campaign, aventuras__isnull=False)
        .select_related("owner", "aventuras")
        .prefetch_related("aventuras__feats", "aventuras__tools", "aventuras__states")
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
    npc = data.get("kind") == Character.Kind.NPC
    return (npc, *import_forms(data, npc=npc, is_gm=True))


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
        return [_("Ficha «%(name)s»: no es una ficha de Hora de Aventuras.") % {"name": name}]
    _npc, sheet_form, feats, tools = _forms(data)
    if not all([sheet_form.is_valid(), feats.is_valid(), tools.is_valid()]):
        return [
            _("Ficha «%(name)s»: %(problem)s") % {"name": name, "problem": import_problems(sheet_form, feats, tools)}
        ]
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
        npc, sheet_form, feats, tools = _forms(sheet)
        sheet_form.is_valid(), feats.is_valid(), tools.is_valid()
        owner = gm if npc else imported.users.get(item.get("owner"), gm)
        character = services.sheet_create(
            campaign=campaign,
            owner=owner,
            actor=gm,
            data=sheet_form.sheet_data(feats.rows(), tools.rows()),
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
    system=AventurasConfig.system_key,
    before_posts=True,
)
