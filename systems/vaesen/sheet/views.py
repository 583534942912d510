"""Vaesen sheet pages: the list, creation and review, the sheet with its
conditions, critical injuries and Resistencia, NPCs and creatures, print,
export and import.

The pages at the shared sheet addresses (``PAGES``) are served through
``sheets.views.system_page``, which passes the campaign; the sheet's own
actions in play (conditions, injuries, Resistencia) have their own addresses
in the ``vaesen`` namespace. Every view loads its objects through the access
helpers at the top: outsiders (and members who may not see a sheet) get 404,
members without the right get 403. The actions in play are small forms that
redirect (Post/Redirect/Get); with htmx they answer with the sheet's
"in play" fragment, a refusal shown in it.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.db.models import Prefetch
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.template.loader import render_to_string
from django.utils.text import slugify
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods, require_POST, require_safe

from accounts.limits import refusal_message
from campaigns import fragments
from campaigns.models import Campaign
from campaigns.permissions import Access, campaign_access, can_view_campaign
from hitos_site.htmx import HtmxHttpRequest, page_or_fragment
from rules.vaesen import CONDITION_NAMES, ConditionKind, NpcPenalty, npc_dice_penalty
from sheets import permissions as perms
from sheets import services as core
from sheets.form_pages import SheetFormPages, all_valid
from sheets.models import CampaignSheetOptions, Character
from sheets.views import cached_sheet_page, sheet_campaign, sheet_list_context
from systems.vaesen.models import VaesenInjury, VaesenSheet
from systems.vaesen.options.tables import npc_penalty
from systems.vaesen.rolls.forms import InjuryForm as InjuryRollForm
from systems.vaesen.rolls.services import roll_sheet_injury
from systems.vaesen.sheet import services
from systems.vaesen.sheet.forms import (
    SHEET_INITIAL,
    ConditionForm,
    ImportForm,
    InjuryForm,
    ItemFormSet,
    NotesForm,
    ResistanceForm,
    ReviewForm,
    SheetForm,
    TerrorEndForm,
    TreatedForm,
    WeaponFormSet,
    import_form_data,
    items_initial,
    weapons_initial,
)
from systems.vaesen.sheet.permissions import can_mark

SYSTEM = "vaesen"
SHEET_RELATED = ("owner", "vaesen")
# The injury form's ids, apart from the other forms on the sheet.
INJURY_IDS = "herida-%s"


def _sheet_prefetch() -> tuple:
    return (
        Prefetch("vaesen__items"),
        Prefetch("vaesen__weapons"),
        Prefetch("vaesen__injuries", queryset=VaesenInjury.objects.order_by("created_at", "id")),
    )


# --- access helpers -------------------------------------------------------------


def _access_for(
    request: HttpRequest, campaign: Campaign, *, need: Callable[[Access], bool] | None = None
) -> tuple[Access, CampaignSheetOptions]:
    """The user's access to a Vaesen campaign they may read (404 otherwise);
    403 without ``need``."""
    if campaign.system != SYSTEM:
        raise Http404
    access = campaign_access(request.user, campaign)
    if not can_view_campaign(access):
        raise Http404
    if need is not None and not need(access):
        raise PermissionDenied(_("No puedes hacer esto en las fichas de esta partida."))
    return access, perms.sheet_options(campaign)


def _sheet_for(
    request: HttpRequest,
    campaign: Campaign | str,
    character_id: int,
    *,
    need: Callable[[Access, Character], bool] | None = None,
    access: Access | None = None,
) -> tuple[Character, Access, CampaignSheetOptions]:
    """A sheet the user may see (404 otherwise); 403 when ``need`` says no
    (``access``: the user's, when the caller has checked it already)."""
    if isinstance(campaign, str):
        campaign = sheet_campaign(campaign)
    if access is None:
        access, options = _access_for(request, campaign)
    else:
        options = perms.sheet_options(campaign)
    character = get_object_or_404(
        Character.objects.filter(campaign=campaign, vaesen__isnull=False)
        .select_related(*SHEET_RELATED)
        .prefetch_related(*_sheet_prefetch()),
        pk=character_id,
    )
    character.campaign = campaign
    if not perms.can_see_sheet(access, character, options):
        raise Http404
    if need is not None and not need(access, character):
        raise PermissionDenied(_("No puedes hacer esto con esta ficha."))
    return character, access, options


def _reload(character: Character) -> Character:
    fresh = Character.objects.select_related(*SHEET_RELATED).prefetch_related(*_sheet_prefetch()).get(pk=character.pk)
    fresh.campaign = character.campaign
    return fresh


# --- context builders ---------------------------------------------------------------


def _condition_rows(sheet: VaesenSheet) -> list[dict]:
    """Each kind of condition (V8) with its ticks, the dice they take from the
    rolls of that kind (V9) and whether the character is Broken by it (V10)."""
    conditions = sheet.conditions()
    rows = []
    for kind in ConditionKind:
        physical = kind is ConditionKind.PHYSICAL
        rows.append(
            {
                "kind": kind.value,
                "title": _("Estados físicos") if physical else _("Estados mentales"),
                "effect": _("−1 dado a las tiradas físicas") if physical else _("−1 dado a las tiradas mentales"),
                "ticks": [(name, name in conditions.of(kind)) for name in CONDITION_NAMES[kind]],
                "penalty": conditions.penalty(kind),
                "broken": conditions.broken(kind),
                # V10 — the critical injury the sheet's «Sufrir» owes, for the GM to roll.
                "injury_pending": kind.value in sheet.pending_injuries,
                "broken_label": _("Derrotado físicamente") if physical else _("Derrotado mentalmente"),
                "broken_effect": (
                    _(
                        "Falla automáticamente todas las pruebas; solo puede hablar brevemente y quizá arrastrarse (V11)."
                    )
                    if physical
                    else _("Puede huir, parar y esquivar, pero no atacar ni hacer rituales (V12).")
                ),
            }
        )
    return rows


def _npc_penalty(campaign: Campaign, sheet: VaesenSheet) -> dict:
    """V20 — the dice a human NPC's or an animal's Resistencia lost takes:
    from every test (Q18 default) or from its next test only (the campaign's option)."""
    if not sheet.uses_resistance:
        return {"npc_penalty": 0, "npc_penalty_next_test": False}
    mode = npc_penalty(campaign)
    return {
        "npc_penalty": npc_dice_penalty(sheet.resistance_lost, sheet.resistance_unspent, mode),
        "npc_penalty_next_test": mode is NpcPenalty.NEXT_TEST,
    }


def _detail_context(access: Access, character: Character, options: CampaignSheetOptions, **extra) -> dict:
    campaign = character.campaign
    sheet = character.vaesen
    private = perms.can_see_private(access, character)
    may_mark = can_mark(access, character)
    context = {
        "campaign": campaign,
        "access": access,
        "character": character,
        "sheet": sheet,
        "private": private,
        "can_mark": may_mark,
        "can_edit": perms.can_edit_sheet(access, character),
        "can_notes": perms.can_edit_notes(access, character),
        "can_submit": perms.can_submit(access, character),
        "can_review": perms.can_review(access) and character.status == Character.Status.SUBMITTED,
        "can_gm_notes": perms.can_see_gm_notes(access),
        "attributes": sheet.attribute_rows(),
        "condition_rows": [] if sheet.uses_resistance else _condition_rows(sheet),
        **_npc_penalty(campaign, sheet),
        "injuries": list(sheet.injuries.all()),
        # V27 — Aterrorizado after a failed fear test, in words; the GM ends it.
        "terror": services.terror_text(sheet.terrified_rounds, sheet.terror_reaction) if sheet.terrified_rounds else "",
        "can_end_terror": access.is_gm,
        "play_error": extra.get("play_error"),
    }
    if may_mark:
        context["injury_form"] = extra.get("injury_form") or InjuryForm(auto_id=INJURY_IDS)
    if context["can_review"]:
        context["review_form"] = extra.get("review_form") or ReviewForm()
    return context


# --- list --------------------------------------------------------------------------


@require_safe
def sheet_list(request: HtmxHttpRequest, campaign: Campaign) -> HttpResponse:
    access, options = _access_for(request, campaign)
    context = sheet_list_context(
        request, campaign, access, options, lambda characters: characters.select_related(*SHEET_RELATED)
    )
    return page_or_fragment(request, "vaesen/sheet/sheet_list.html", "sheet-table", context)


# --- creation and editing ----------------------------------------------------------


FORM_PAGES = SheetFormPages(
    template="vaesen/sheet/sheet_form.html",
    sheet_form=SheetForm,
    initial=SHEET_INITIAL,
    formsets=(("items", ItemFormSet, items_initial), ("weapons", WeaponFormSet, weapons_initial)),
    sheet_create=services.sheet_create,
    sheet_update=services.sheet_update,
)


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def sheet_create(request: HtmxHttpRequest, campaign: Campaign) -> HttpResponse:
    access, _options = _access_for(request, campaign, need=perms.can_create_sheet)
    return FORM_PAGES.create(request, campaign, access)


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def npc_create(request: HtmxHttpRequest, campaign: Campaign) -> HttpResponse:
    access, _options = _access_for(request, campaign, need=perms.can_manage_sheets)
    return FORM_PAGES.create(request, campaign, access, npc=True)


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def sheet_edit(request: HtmxHttpRequest, campaign: Campaign, character_id: int) -> HttpResponse:
    character, access, _options = _sheet_for(request, campaign, character_id, need=perms.can_edit_sheet)
    return FORM_PAGES.edit(request, character, access)


# --- the sheet -------------------------------------------------------------------


def _sheet_page(request: HtmxHttpRequest, campaign: Campaign, character_id: int, part: str, access: Access) -> dict:
    """The sheet (``part``: the whole page's content or, for htmx, its part
    in play) as the reader of ``access`` sees it: ``{"html", "title"}``."""
    character, access, options = _sheet_for(request, campaign, character_id, access=access)
    context = _detail_context(access, character, options)
    if part == "sheet-page" and context["can_notes"]:
        context["notes_form"] = NotesForm(
            initial={f: getattr(character, f) for f in ("private_notes", "public_description", "gm_notes")},
            is_gm=access.is_gm,
            description_allowed=options.players_edit_description,
        )
    html = render_to_string(
        f"vaesen/sheet/sheet_detail.html#{part}", {**context, **fragments.csrf_context()}, request=request
    )
    return {"html": html, "title": character.name}


@require_safe
def sheet_detail(request: HtmxHttpRequest, campaign: Campaign, character_id: int) -> HttpResponse:
    """The sheet, as the cache keeps it for this reader (``campaigns.fragments``)
    until anything it shows changes. Who may see it is decided when it is
    made: the key holds the reader and everything the decision reads."""
    if campaign.system != SYSTEM:
        raise Http404
    return cached_sheet_page(
        request,
        campaign,
        character_id,
        name="vaesen-",
        in_play="sheet-play",
        template="vaesen/sheet/sheet_detail.html",
        build=lambda part, access: _sheet_page(request, campaign, character_id, part, access),
    )


@login_required
@require_POST
def sheet_notes(request: HtmxHttpRequest, campaign: Campaign, character_id: int) -> HttpResponse:
    character, access, options = _sheet_for(request, campaign, character_id, need=perms.can_edit_notes)
    form = NotesForm(request.POST, is_gm=access.is_gm, description_allowed=options.players_edit_description)
    if form.is_valid():
        core.sheet_update_notes(character=character, actor=request.user, values=form.cleaned_data)
        messages.success(request, _("Notas guardadas."))
        return redirect(character)
    context = _detail_context(access, character, options)
    context["notes_form"] = form
    return render(request, "vaesen/sheet/sheet_detail.html", context)


@login_required
@require_POST
def sheet_submit(request: HtmxHttpRequest, campaign: Campaign, character_id: int) -> HttpResponse:
    character, _access, _options = _sheet_for(request, campaign, character_id, need=perms.can_submit)
    core.sheet_submit(character=character, actor=request.user)
    messages.success(request, _("Ficha enviada a la dirección."))
    return redirect(character)


@login_required
@require_POST
def sheet_review(request: HtmxHttpRequest, campaign: Campaign, character_id: int) -> HttpResponse:
    character, access, options = _sheet_for(request, campaign, character_id, need=lambda a, c: perms.can_review(a))
    if character.status != Character.Status.SUBMITTED:
        raise PermissionDenied(_("Solo se revisan las fichas enviadas."))
    form = ReviewForm(request.POST)
    if form.is_valid():
        approve = form.cleaned_data["decision"] == "approve"
        try:
            core.sheet_review(
                character=character, actor=request.user, approve=approve, comment=form.cleaned_data["comment"]
            )
        except ValidationError as exc:
            form.add_error(None, exc)
        else:
            messages.success(request, _("Ficha aprobada.") if approve else _("Ficha devuelta con tus comentarios."))
            return redirect(character)
    context = _detail_context(access, character, options, review_form=form)
    return render(request, "vaesen/sheet/sheet_detail.html", context)


# --- in play: conditions, injuries, Resistencia ----------------------------------------


def _play_response(request: HtmxHttpRequest, access, character, options, *, error: str = "", **extra) -> HttpResponse:
    """After an action in play: with htmx the sheet's part in play (with the
    refusal, if any); without, a redirect to the sheet (the refusal as a
    message), or the page again when a form needs what was typed."""
    form = extra.get("injury_form")
    if not request.htmx and not (form is not None and form.errors):
        if error:
            messages.error(request, error)
        return redirect(character)
    context = _detail_context(access, _reload(character), options, play_error=error, **extra)
    return page_or_fragment(request, "vaesen/sheet/sheet_detail.html", "sheet-play", context)


@login_required
@require_POST
def condition_update(request: HtmxHttpRequest, slug: str, character_id: int) -> HttpResponse:
    """Tick or untick a condition, suffer the next one (the fourth of a kind
    makes the character Broken, V10) or recover from Broken (V28)."""
    character, access, options = _sheet_for(request, slug, character_id, need=can_mark)
    form = ConditionForm(request.POST)
    error = ""
    if form.is_valid():
        data = form.cleaned_data
        try:
            services.condition_change(
                character=character,
                actor=request.user,
                kind=data["kind"],
                action=data["action"],
                name=data["name"],
                reason=data["reason"],
            )
        except ValidationError as exc:
            error = " ".join(exc.messages)
    else:
        error = refusal_message(form, missing=_("Acción desconocida para los estados."))
    return _play_response(request, access, character, options, error=error)


@login_required
@require_POST
def resistance_update(request: HtmxHttpRequest, slug: str, character_id: int) -> HttpResponse:
    """The − / + buttons of a human NPC's or an animal's Resistencia (V20)."""
    character, access, options = _sheet_for(request, slug, character_id, need=can_mark)
    form = ResistanceForm(request.POST)
    error = ""
    if form.is_valid():
        try:
            services.resistance_change(
                character=character,
                actor=request.user,
                change=form.cleaned_data["change"],
                reason=form.cleaned_data["reason"],
            )
        except ValidationError as exc:
            error = " ".join(exc.messages)
    else:
        error = refusal_message(form, missing=_("Indica si pierde o recupera un punto de Resistencia."))
    return _play_response(request, access, character, options, error=error)


def _is_gm(access: Access, character: Character) -> bool:
    return access.is_gm


@login_required
@require_POST
def terror_update(request: HtmxHttpRequest, slug: str, character_id: int) -> HttpResponse:
    """V27 — the GM ends the Aterrorizado state once its rounds are over."""
    character, access, options = _sheet_for(request, slug, character_id, need=_is_gm)
    form = TerrorEndForm(request.POST)
    error = ""
    if form.is_valid():
        try:
            services.terror_end(character=character, actor=request.user, reason=form.cleaned_data["reason"])
        except ValidationError as exc:
            error = " ".join(exc.messages)
    else:
        error = refusal_message(form, missing=_("Indica el motivo."))
    return _play_response(request, access, character, options, error=error)


@login_required
@require_POST
def injury_create(request: HtmxHttpRequest, slug: str, character_id: int) -> HttpResponse:
    """A critical injury written by hand (V13), with its time limit (V28)."""
    character, access, options = _sheet_for(request, slug, character_id, need=can_mark)
    form = InjuryForm(request.POST, auto_id=INJURY_IDS)
    if form.is_valid():
        data = form.cleaned_data
        services.add_injury(
            character,
            kind=data["kind"],
            roll_value=data["roll"],
            name=data["name"],
            effect=data["effect"],
            time_limit=data["time_limit"],
            actor=request.user,
            reason=data["reason"],
            # V10 — written by hand, it is the one the sheet's «Sufrir» owed, if any.
            settles_pending=True,
        )
        form = None
    return _play_response(request, access, character, options, injury_form=form)


@login_required
@require_POST
def injury_roll(request: HtmxHttpRequest, slug: str, character_id: int) -> HttpResponse:
    """V10, V13 — the GM rolls through the log the critical injury a
    character Broken by the sheet's «Sufrir» suffers (2d6 desglosados, named
    by the campaign's table); the card is in the roll log."""
    character, access, options = _sheet_for(request, slug, character_id, need=_is_gm)
    # One button per kind: its value is "físico" or "mental", nothing typed.
    kind = request.POST.get("kind", "")
    # The browser's seed (empty without JavaScript: the server's).
    form = InjuryRollForm(request.POST)
    error = ""
    if not form.is_valid():
        error = " ".join(message for messages_ in form.errors.values() for message in messages_)
    elif kind in VaesenInjury.Kind.values:
        try:
            roll_sheet_injury(
                character=character,
                kind=kind,
                user=request.user,
                is_gm=access.is_gm,
                client_seed=form.cleaned_data["client_seed"] or None,
            )
        except ValidationError as exc:
            error = " ".join(exc.messages)
    else:
        error = _("Indica si la herida crítica es física o mental.")
    return _play_response(request, access, character, options, error=error)


@login_required
@require_POST
def injury_update(request: HtmxHttpRequest, slug: str, character_id: int, injury_id: int) -> HttpResponse:
    """The "tratada" toggle of a critical injury (V28)."""
    character, access, options = _sheet_for(request, slug, character_id, need=can_mark)
    form = TreatedForm(request.POST)
    error = ""
    if form.is_valid():
        try:
            services.injury_treated(
                character=character,
                actor=request.user,
                injury_id=injury_id,
                treated=form.cleaned_data["treated"],
                reason=form.cleaned_data["reason"],
            )
        except ValidationError as exc:
            error = " ".join(exc.messages)
    else:
        error = refusal_message(form, missing=_("Indica si la herida está tratada."))
    return _play_response(request, access, character, options, error=error)


# --- print, export, import --------------------------------------------------------


@login_required
@require_safe
def sheet_print(request: HtmxHttpRequest, campaign: Campaign, character_id: int) -> HttpResponse:
    character, access, options = _sheet_for(request, campaign, character_id, need=perms.can_see_private)
    return render(request, "vaesen/sheet/sheet_print.html", _detail_context(access, character, options))


@login_required
@require_safe
def sheet_export(request: HtmxHttpRequest, campaign: Campaign, character_id: int) -> HttpResponse:
    character, access, _options = _sheet_for(request, campaign, character_id, need=perms.can_see_private)
    data = services.sheet_export(character, include_gm_notes=access.is_gm)
    response = HttpResponse(
        json.dumps(data, ensure_ascii=False, indent=2), content_type="application/json; charset=utf-8"
    )
    filename = slugify(character.name) or "ficha"
    response["Content-Disposition"] = f'attachment; filename="{filename}.json"'
    return response


def import_forms(data: dict, *, npc: bool, is_gm: bool):
    """The sheet in the file as the POST of the sheet form and its formsets,
    so it is validated exactly like a typed one."""
    post = import_form_data(data)
    return (
        SheetForm(post, npc=npc, is_gm=is_gm),
        ItemFormSet(post, prefix="items"),
        WeaponFormSet(post, prefix="weapons"),
    )


def _problems(form, where: str = "") -> list[str]:
    """A form's errors as people read them: «Arma 1, Arma: …», each field by
    its label (the form's own errors without one)."""
    problems = []
    for name, errors in form.errors.items():
        field = form.fields.get(name)
        parts = [part for part in (where, str(field.label) if field is not None else "") if part]
        text = " ".join(errors)
        problems.append(f"{', '.join(parts)}: {text}" if parts else text)
    return problems


def import_problems(sheet_form, items, weapons) -> str:
    """Why an imported file's sheet was refused, in Spanish: the sheet's
    fields by their labels, and each equipment or weapon row by its number
    («Objeto 2, Bonificación: …»)."""
    problems = _problems(sheet_form)
    for formset, group, row in ((items, _("Equipo"), _("Objeto %(n)s")), (weapons, _("Armas"), _("Arma %(n)s"))):
        problems += [f"{group}: {error}" for error in formset.non_form_errors()]
        for number, form in enumerate(formset.forms, start=1):
            problems += _problems(form, row % {"n": number})
    return _("La ficha del archivo no es válida: %(problems)s") % {"problems": "; ".join(problems)}


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def sheet_import(request: HtmxHttpRequest, campaign: Campaign) -> HttpResponse:
    access, _options = _access_for(request, campaign, need=perms.can_create_sheet)
    form = ImportForm(request.POST or None, request.FILES or None)
    context = {"campaign": campaign, "form": form}
    if request.method == "POST" and form.is_valid():
        data, play = form.cleaned_data["file"], form.cleaned_data["play"]
        npc = data.get("kind") == Character.Kind.NPC
        if npc and not access.is_gm:
            form.add_error("file", _("Solo la dirección puede importar PNJ."))
            return render(request, "vaesen/sheet/sheet_import.html", context)
        sheet_form, items, weapons = import_forms(data, npc=npc, is_gm=access.is_gm)
        if not all_valid(sheet_form, items, weapons):
            form.add_error("file", import_problems(sheet_form, items, weapons))
            return render(request, "vaesen/sheet/sheet_import.html", context)
        try:
            character = services.sheet_create(
                campaign=campaign,
                owner=request.user,
                actor=request.user,
                data=sheet_form.sheet_data(items.rows(), weapons.rows()),
                imported=True,
                kind=Character.Kind.NPC if npc else Character.Kind.PC,
                play=play,
            )
        except ValidationError as exc:
            form.add_error("file", exc.messages)
        else:
            notes = [_("PNJ importado.") if npc else _("Ficha importada como borrador.")]
            if not access.is_gm and isinstance(data.get("gm_notes"), str) and data["gm_notes"].strip():
                notes.append(
                    _("Las notas de la dirección del archivo no se importan: solo la dirección puede importarlas.")
                )
            messages.success(request, " ".join(notes))
            return redirect(character)
    return render(request, "vaesen/sheet/sheet_import.html", context)


# The pages at the shared sheet addresses (``sheets.kinds``).
PAGES = {
    "list": sheet_list,
    "create": sheet_create,
    "npc-create": npc_create,
    "import": sheet_import,
    "detail": sheet_detail,
    "edit": sheet_edit,
    "notes": sheet_notes,
    "submit": sheet_submit,
    "review": sheet_review,
    "print": sheet_print,
    "export": sheet_export,
}
