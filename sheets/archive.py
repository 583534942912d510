"""A game system's sheets in the campaign archive (``campaigns.archive``): the
``sheets`` part, built the same way for every system that has sheets; each
system registers the one it builds (``SheetsArchive(...).part()``) from its
``apps.py``.

Export: the sheets the reader may open whole (``sheets.permissions.
can_see_private``: the GM every one, a player their own), each as the sheet's
own export file (the system's ``sheet_export``, the GM notes only for the GM),
with its archive id, owner and review status.

Import: each sheet goes through the system's sheet form and its formsets
exactly as an uploaded sheet file does (``forms``), then the system's
``sheet_create`` with the play state read back (``play_state``); its owner is
the user of the same username here when the archive proves it
(``imported.users``), or else the GM, who is told the owner's archived name.
A sheet the original GM had approved comes back approved (the posts voiced by
it need that); any other comes back a draft.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from django.core.exceptions import ValidationError
from django.utils.translation import gettext as _

from campaigns.archive import names_list
from campaigns.extensions import ArchivePart
from campaigns.permissions import Access
from sheets.models import Character
from sheets.permissions import can_see_private

KEY = "sheets"
MAX_SHEETS = 500


def sheet_problem(name: str, problem: str) -> str:
    """A problem of the archive's sheet ``name``, in Spanish."""
    return _("Ficha «%(name)s»: %(problem)s") % {"name": name, "problem": problem}


def _all_rows(npc: bool, sheet_form, formsets: tuple) -> Any:
    return sheet_form.sheet_data(*(formset.rows() for formset in formsets))


@dataclass(frozen=True)
class SheetsArchive:
    """What differs between the systems' ``sheets`` parts.

    ``forms(data, npc)``: the sheet form and its formsets bound to an archived
    sheet (``(sheet_form, *formsets)``). ``invalid(name, sheet_form, formsets)``:
    the Spanish problem of a sheet those forms refuse. ``sheet_data(npc,
    sheet_form, formsets)``: what ``sheet_create`` gets from the valid forms
    (every formset's rows by default). ``not_this_game``: the message, with
    ``%(name)s``, of a sheet of another game (a lazy translation)."""

    system: str
    export_format: str
    not_this_game: Any
    sheet_export: Callable[..., dict[str, Any]]
    forms: Callable[[dict[str, Any], bool], tuple]
    invalid: Callable[[str, Any, tuple], str]
    play_state: Callable[[dict[str, Any]], Any]
    sheet_create: Callable[..., Character]
    select_related: tuple[str, ...] = ()
    prefetch_related: tuple[str, ...] = ()
    filters: Mapping[str, Any] = field(default_factory=dict)
    sheet_data: Callable[[bool, Any, tuple], Any] = _all_rows

    def export(self, access: Access, posts: set[int]) -> list[dict[str, Any]]:
        characters = (
            Character.objects.filter(campaign=access.campaign, **self.filters)
            .select_related(*self.select_related)
            .prefetch_related(*self.prefetch_related)
            .order_by("pk")
        )
        return [
            {
                "id": c.pk,
                "owner": c.owner.username,
                "owner_name": c.owner.public_name,
                "sheet": self.sheet_export(c, include_gm_notes=access.is_gm),
            }
            for c in characters
            if can_see_private(access, c)
        ]

    def _forms(self, data: dict[str, Any]) -> tuple[bool, Any, tuple]:
        npc = data.get("kind") == Character.Kind.NPC
        sheet_form, *formsets = self.forms(data, npc)
        return npc, sheet_form, tuple(formsets)

    def _problems(self, item: Any) -> list[str]:
        if (
            not isinstance(item, dict)
            or not isinstance(item.get("sheet"), dict)
            or type(item.get("id")) is not int
            or not isinstance(item.get("owner"), str)
        ):
            return [_("Una ficha del archivo no tiene el formato esperado.")]
        data = item["sheet"]
        name = str(data.get("name", "?"))
        if data.get("format") != self.export_format:
            return [self.not_this_game % {"name": name}]
        _npc, sheet_form, formsets = self._forms(data)
        if not all([sheet_form.is_valid(), *(formset.is_valid() for formset in formsets)]):
            return [self.invalid(name, sheet_form, formsets)]
        try:
            self.play_state(data)
        except ValidationError as exc:
            return [sheet_problem(name, " ".join(exc.messages))]
        return []

    def check(self, data: Any) -> list[str]:
        if not isinstance(data, list):
            return [_("Las fichas del archivo no tienen el formato esperado.")]
        if len(data) > MAX_SHEETS:
            return [_("El archivo tiene más de %(n)s fichas.") % {"n": MAX_SHEETS}]
        return [problem for item in data for problem in self._problems(item)]

    def load(self, campaign, data: list[dict[str, Any]], imported) -> None:
        gm = campaign.gm
        kept: list[str] = []
        for item in data:
            sheet = item["sheet"]
            npc, sheet_form, formsets = self._forms(sheet)
            sheet_form.is_valid()
            for formset in formsets:
                formset.is_valid()
            owner = gm if npc else imported.users.get(item.get("owner"), gm)
            if not npc and owner == gm and item.get("owner") != gm.username:
                # Nothing links the sheet to its archived owner's account here.
                name = imported.archived_name(str(item.get("owner_name") or item.get("owner")), limit=200)
                kept.append(_("«%(sheet)s», de %(name)s") % {"sheet": str(sheet.get("name", "?")), "name": name})
            character = self.sheet_create(
                campaign=campaign,
                owner=owner,
                actor=gm,
                data=self.sheet_data(npc, sheet_form, formsets),
                imported=True,
                kind=Character.Kind.NPC if npc else Character.Kind.PC,
                play=self.play_state(sheet),
            )
            if not npc and sheet.get("status") == Character.Status.APPROVED:
                # The original GM approved it; the posts voiced by it need it so.
                Character.objects.filter(pk=character.pk).update(status=Character.Status.APPROVED)
                character.status = Character.Status.APPROVED
            imported.characters[item["id"]] = character
        if kept:
            imported.notes.append(_("Fichas que quedan a tu nombre: %(sheets)s.") % {"sheets": names_list(kept)})

    def part(self) -> ArchivePart:
        """The ``sheets`` part of the archive of this system's campaigns."""
        return ArchivePart(
            key=KEY,
            export=self.export,
            load=self.load,
            check=self.check,
            system=self.system,
            before_posts=True,
        )
