"""The sheet form's pages of a game system whose sheet is one form and its
formsets (create a sheet, create an NPC, edit a sheet), built the same way for
each such system from its forms and services (``SheetFormPages``).

The system's views keep what is theirs: the decorators, the access check (its
own helpers: 404 for outsiders, 403 without the right) and the campaign or
sheet it loads; then they hand over to ``create`` or ``edit``. A form that
fails comes back with what was typed, every form checked so each shows its
own errors; a saved one redirects to the sheet (Post/Redirect/Get).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _

from campaigns.models import Campaign
from campaigns.permissions import Access
from sheets.models import Character


def all_valid(form, *formsets) -> bool:
    """Every form is checked, so each shows its own errors."""
    return all([form.is_valid(), *(formset.is_valid() for formset in formsets)])


@dataclass(frozen=True)
class SheetFormPages:
    """A system's sheet form pages.

    ``sheet_form``: the sheet form class (``initial_for(character)``,
    ``sheet_data(*rows)``; it takes ``npc``, ``is_gm`` and ``asks_reason``).
    ``initial``: a new sheet's starting values. ``formsets``: ``(prefix,
    FormSet, initial_for)`` each, its prefix also its name in the template's
    context. ``sheet_create`` and ``sheet_update``: the system's services."""

    template: str
    sheet_form: type
    initial: dict[str, Any]
    formsets: tuple[tuple[str, type, Callable[[Character], Any]], ...]
    sheet_create: Callable[..., Character]
    sheet_update: Callable[..., Character]

    def forms(self, request: HttpRequest, access: Access, *, character=None, npc=False) -> tuple:
        """The sheet form (blank, or ``character``'s) and its formsets, bound
        to the POST when there is one."""
        data = request.POST if request.method == "POST" else None
        initial = self.sheet_form.initial_for(character) if character else dict(self.initial)
        # A change by someone other than the owner says why (the history shows it).
        asks_reason = character is not None and character.owner_id != request.user.pk
        form = self.sheet_form(data, initial=initial, npc=npc, is_gm=access.is_gm, asks_reason=asks_reason)
        formsets = tuple(
            formset(data, prefix=prefix, initial=initial_for(character) if character else None)
            for prefix, formset, initial_for in self.formsets
        )
        return form, formsets

    def _data(self, form, formsets) -> Any:
        return form.sheet_data(*(formset.rows() for formset in formsets))

    def create(self, request: HttpRequest, campaign: Campaign, access: Access, *, npc: bool = False) -> HttpResponse:
        """A new sheet (a draft of the user's) or, with ``npc``, a new NPC."""
        form, formsets = self.forms(request, access, npc=npc)
        context = {"campaign": campaign, "form": form, **_by_prefix(formsets), "creating": True}
        if npc:
            context["npc"] = True
        if request.method == "POST" and all_valid(form, *formsets):
            kind = {"kind": Character.Kind.NPC} if npc else {}
            character = self.sheet_create(
                campaign=campaign, owner=request.user, actor=request.user, **kind, data=self._data(form, formsets)
            )
            if npc:
                messages.success(request, _("PNJ creado."))
            else:
                messages.success(request, _("Ficha creada como borrador. Envíala a la dirección cuando esté lista."))
            return redirect(character)
        return render(request, self.template, context)

    def edit(self, request: HttpRequest, character: Character, access: Access) -> HttpResponse:
        """``character``'s sheet (or NPC) changed."""
        form, formsets = self.forms(request, access, character=character, npc=character.is_npc)
        context = {
            "campaign": character.campaign,
            "character": character,
            "form": form,
            **_by_prefix(formsets),
            "npc": character.is_npc,
        }
        if request.method == "POST" and all_valid(form, *formsets):
            self.sheet_update(
                character=character,
                actor=request.user,
                data=self._data(form, formsets),
                reason=form.cleaned_data.get("reason", ""),
            )
            messages.success(request, _("PNJ guardado.") if character.is_npc else _("Ficha guardada."))
            return redirect(character)
        return render(request, self.template, context)


def _by_prefix(formsets) -> dict[str, Any]:
    return {formset.prefix: formset for formset in formsets}
