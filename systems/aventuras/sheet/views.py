"""Hora de Aventuras sheet pages: the list, creation and review, the sheet
with its health levels, states and experience, the GM's characters, print,
export and import.

The pages at the shared sheet addresses (``PAGES``) are served through
``sheets.views.system_page``, which passes the campaign; the sheet's own
actions in play (health, states, experience) have their own addresses in the
``aventuras`` namespace. Every view loads its objects through the access
helpers at the top: outsiders (and members who may not see a sheet) get 404,
members without the right get 403. The actions in play are small forms that
redirect (Post/Redirect/Get); with htmx they answer with the sheet's "in
play" fragment, a refusal shown in it. Hero points are shown, never changed,
here: they move only through the ledger (``heroes``), whose panel the page
includes.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.db.models import Prefetch
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.template.loader import render_to_string
from django.utils.text import slugify
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from django.views.decorators.http import require_http_methods, require_POST, require_safe

from campaigns import fragments
from campaigns.models import Campaign
from campaigns.permissions import Access, campaign_access, can_view_campaign, seen_scene_ids
from hitos_site.htmx import HtmxHttpRequest, page_or_fragment
from rules.aventuras import STARTING_HERO_POINTS
from sheets import permissions as perms
from sheets import services as core
from sheets.form_pages import SheetFormPages, all_valid
from sheets.models import CampaignSheetOptions, Character
from sheets.views import cached_sheet_page, sheet_campaign, sheet_list_context
from systems.aventuras.heroes.panel import sheet_panel
from systems.aventuras.models import ACTION_KIND_LABELS, AventurasState
from systems.aventuras.sheet import services
from systems.aventuras.sheet.forms import (
    SHEET_INITIAL,
    ExperienceForm,
    FeatFormSet,
    HealthForm,
    ImportForm,
    NotesForm,
    ReviewForm,
    SheetForm,
    StateForm,
    StateRemoveForm,
    ToolFormSet,
    feats_initial,
    import_form_data,
    tools_initial,
)
from systems.aventuras.sheet.permissions import can_mark, can_set_experience

SYSTEM = "aventuras"
SHEET_RELATED = ("owner", "aventuras")
# The state form's ids, apart from the other forms on the sheet.
STATE_IDS = "estado-%s"


def _sheet_prefetch() -> tuple:
    return (
        Prefetch("aventuras__feats"),
        Prefetch("aventuras__tools"),
        Prefetch("aventuras__states", queryset=AventurasState.objects.select_related("scene").order_by("id")),
    )


# --- access helpers -------------------------------------------------------------


def _access_for(
    request: HttpRequest, campaign: Campaign, *, need: Callable[[Access], bool] | None = None
) -> tuple[Access, CampaignSheetOptions]:
    """The user's access to a Hora de Aventuras campaign they may read (404
    otherwise); 403 without ``need``."""
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
    """A sheet the user may see (404 otherwise); 403 when ``need`` says no."""
    if isinstance(campaign, str):
        campaign = sheet_campaign(campaign)
    if access is None:
        access, options = _access_for(request, campaign)
    else:
        options = perms.sheet_options(campaign)
    character = get_object_or_404(
        Character.objects.filter(campaign=campaign, aventuras__isnull=False)
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


def _health_boxes(sheet) -> list[bool]:
    """One box per health level, True for the ones lost."""
    return [index < sheet.health_lost for index in range(sheet.health)]


def _dice_text(modifier: int) -> str:
    """«+1 dado», «−2 dados» (A3), as the sheet shows a state's modifier."""
    if modifier > 0:
        return ngettext("+%(n)s dado", "+%(n)s dados", modifier) % {"n": modifier}
    return ngettext("−%(n)s dado", "−%(n)s dados", -modifier) % {"n": -modifier}


def _state_rows(sheet, access: Access) -> list[dict]:
    """Each state with the dice it adds or takes (A3), the threshold it
    moves (A7), the actions it touches and, for one "por el morro", the
    scene it lasts (A27), named only to a reader who may open it."""
    states = list(sheet.states.all())
    seen = seen_scene_ids(access, [state.scene_id for state in states])
    for state in states:
        if state.scene_id not in seen:
            state.scene = None  # shown, never saved
    return [
        {
            "state": state,
            "dice": _dice_text(state.modifier) if state.modifier else "",
            "threshold": state.get_threshold_display() if state.threshold else "",
            "applies": (
                _("acciones de tipo %(kind)s") % {"kind": ACTION_KIND_LABELS.get(state.applies_to, state.applies_to)}
                if state.applies_to
                else _("todas las acciones")
            ),
        }
        for state in states
    ]


def _detail_context(access: Access, character: Character, options: CampaignSheetOptions, **extra) -> dict:
    sheet = character.aventuras
    may_mark = can_mark(access, character)
    # Someone other than the owner (the GM) changing the sheet in play says why.
    reason_required = not perms.is_owner(access, character)
    context = {
        "campaign": character.campaign,
        "access": access,
        "character": character,
        "sheet": sheet,
        "private": perms.can_see_private(access, character),
        "can_mark": may_mark,
        "can_remove_for_free": access.is_gm,
        "can_set_experience": can_set_experience(access, character),
        "can_edit": perms.can_edit_sheet(access, character),
        "can_notes": perms.can_edit_notes(access, character),
        "can_submit": perms.can_submit(access, character),
        "can_review": perms.can_review(access) and character.status == Character.Status.SUBMITTED,
        "can_gm_notes": perms.can_see_gm_notes(access),
        # A2 — each attribute's score and the dice it rolls (the score if highlighted, else 2).
        "attributes": sheet.attribute_rows(),
        "health_boxes": _health_boxes(sheet),
        "states": _state_rows(sheet, access),
        "feats": list(sheet.feats.all()),
        "tools": list(sheet.tools.all()),
        "play_error": extra.get("play_error"),
        "reason_required": reason_required,
        # A refused change in play comes back with what was typed (its reason).
        "health_form": extra.get("health_form"),
        "remove_form": extra.get("remove_form"),
        "remove_state_id": extra.get("remove_state_id"),
    }
    if may_mark:
        context["state_form"] = extra.get("state_form") or StateForm(auto_id=STATE_IDS, reason_required=reason_required)
    if context["can_set_experience"]:
        context["experience_form"] = extra.get("experience_form") or ExperienceForm(
            initial={"experience": sheet.experience}, auto_id="experiencia-%s"
        )
    if context["can_review"]:
        context["review_form"] = extra.get("review_form") or ReviewForm()
    # The hero points helper's panel (``heroes.panel``): its template and what it reads.
    context.update(sheet_panel(character, access))
    return context


# --- list --------------------------------------------------------------------------


@require_safe
def sheet_list(request: HtmxHttpRequest, campaign: Campaign) -> HttpResponse:
    access, options = _access_for(request, campaign)
    context = sheet_list_context(
        request, campaign, access, options, lambda characters: characters.select_related(*SHEET_RELATED)
    )
    return page_or_fragment(request, "aventuras/sheet/sheet_list.html", "sheet-table", context)


# --- creation and editing ----------------------------------------------------------


FORM_PAGES = SheetFormPages(
    template="aventuras/sheet/sheet_form.html",
    sheet_form=SheetForm,
    initial=SHEET_INITIAL,
    formsets=(("feats", FeatFormSet, feats_initial), ("tools", ToolFormSet, tools_initial)),
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
        f"aventuras/sheet/sheet_detail.html#{part}", {**context, **fragments.csrf_context()}, request=request
    )
    return {"html": html, "title": character.name}


@require_safe
def sheet_detail(request: HtmxHttpRequest, campaign: Campaign, character_id: int) -> HttpResponse:
    """The sheet, as the cache keeps it for this reader (``campaigns.fragments``)
    until anything it shows changes."""
    if campaign.system != SYSTEM:
        raise Http404
    return cached_sheet_page(
        request,
        campaign,
        character_id,
        name="aventuras-",
        in_play="sheet-play",
        template="aventuras/sheet/sheet_detail.html",
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
    return render(request, "aventuras/sheet/sheet_detail.html", context)


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
    return render(request, "aventuras/sheet/sheet_detail.html", context)


# --- in play: health, states, experience ----------------------------------------------


def _play_response(request: HtmxHttpRequest, access, character, options, *, error: str = "", **extra) -> HttpResponse:
    """After an action in play: with htmx the sheet's part in play (with the
    refusal, if any); without, a redirect to the sheet, or, when refused, the
    page again with the refusal and the form as it was typed (a refused
    action passes its bound form back; a done one passes ``None``)."""
    typed = [form for form in extra.values() if isinstance(form, forms.BaseForm)]
    if not request.htmx and not typed:
        if error:
            messages.error(request, error)
        return redirect(character)
    context = _detail_context(access, _reload(character), options, play_error=error, **extra)
    return page_or_fragment(request, "aventuras/sheet/sheet_detail.html", "sheet-play", context)


def _error(exc: ValidationError) -> str:
    return " ".join(exc.messages)


def _form_errors(form) -> str:
    """A small form's own errors (its reason missing or too long), in Spanish."""
    return " ".join(str(error) for errors in form.errors.values() for error in errors)


@login_required
@require_POST
def health_update(request: HtmxHttpRequest, slug: str, character_id: int) -> HttpResponse:
    """The − / + buttons of the health levels."""
    character, access, options = _sheet_for(request, slug, character_id, need=can_mark)
    form = HealthForm(request.POST, reason_required=not perms.is_owner(access, character))
    error = ""
    if form.is_valid():
        try:
            services.health_change(
                character=character,
                actor=request.user,
                change=form.cleaned_data["change"],
                reason=form.cleaned_data["reason"],
            )
        except ValidationError as exc:
            error = _error(exc)
    elif "change" in form.errors:
        error = _("Indica si pierde o recupera niveles de salud.")
    else:
        error = _form_errors(form)
    return _play_response(request, access, character, options, error=error, health_form=form if error else None)


@login_required
@require_POST
def state_create(request: HtmxHttpRequest, slug: str, character_id: int) -> HttpResponse:
    """A state on the character: dice it adds or takes (A3), threshold (A7),
    which actions it touches."""
    character, access, options = _sheet_for(request, slug, character_id, need=can_mark)
    form = StateForm(request.POST, auto_id=STATE_IDS, reason_required=not perms.is_owner(access, character))
    error = ""
    if form.is_valid():
        data = form.cleaned_data
        try:
            services.state_add(
                character=character,
                actor=request.user,
                name=data["name"],
                modifier=data["modifier"],
                threshold=data["threshold"],
                applies_to=data["applies_to"],
                reason=data["reason"],
            )
        except ValidationError as exc:
            error = _error(exc)
        else:
            form = None
    return _play_response(request, access, character, options, error=error, state_form=form)


@login_required
@require_POST
def state_delete(request: HtmxHttpRequest, slug: str, character_id: int, state_id: int) -> HttpResponse:
    """A state goes (one "por el morro", A27, only by the GM)."""
    character, access, options = _sheet_for(request, slug, character_id, need=can_mark)
    form = StateRemoveForm(request.POST, reason_required=not perms.is_owner(access, character))
    error = ""
    if form.is_valid():
        try:
            services.state_remove(
                character=character,
                actor=request.user,
                state_id=state_id,
                reason=form.cleaned_data["reason"],
                may_remove_for_free=access.is_gm,
            )
        except ValidationError as exc:
            error = _error(exc)
    else:
        error = _form_errors(form)
    kept = {"remove_form": form, "remove_state_id": state_id} if error else {}
    return _play_response(request, access, character, options, error=error, **kept)


@login_required
@require_POST
def experience_update(request: HtmxHttpRequest, slug: str, character_id: int) -> HttpResponse:
    """The GM sets the experience points, saying why."""
    character, access, options = _sheet_for(request, slug, character_id, need=can_set_experience)
    form = ExperienceForm(request.POST, auto_id="experiencia-%s")
    error = ""
    if form.is_valid():
        try:
            services.experience_set(
                character=character,
                actor=request.user,
                experience=form.cleaned_data["experience"],
                reason=form.cleaned_data["reason"],
            )
        except ValidationError as exc:
            error = _error(exc)
        else:
            form = None
    return _play_response(request, access, character, options, error=error, experience_form=form)


# --- print, export, import --------------------------------------------------------


@login_required
@require_safe
def sheet_print(request: HtmxHttpRequest, campaign: Campaign, character_id: int) -> HttpResponse:
    character, access, options = _sheet_for(request, campaign, character_id, need=perms.can_see_private)
    return render(request, "aventuras/sheet/sheet_print.html", _detail_context(access, character, options))


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
        FeatFormSet(post, prefix="feats"),
        ToolFormSet(post, prefix="tools"),
    )


def _problems(form, where: str = "") -> list[str]:
    """A form's errors as people read them: «Herramienta 1, Bonificación: …»."""
    problems = []
    for name, errors in form.errors.items():
        field = form.fields.get(name)
        parts = [part for part in (where, str(field.label) if field is not None else "") if part]
        text = " ".join(errors)
        problems.append(f"{', '.join(parts)}: {text}" if parts else text)
    return problems


def import_problems(sheet_form, feats, tools) -> str:
    """Why an imported file's sheet was refused, in Spanish: the sheet's
    fields by their labels, and each feat or tool by its number."""
    problems = _problems(sheet_form)
    for formset, group, row in (
        (feats, _("Proezas"), _("Proeza %(n)s")),
        (tools, _("Herramientas"), _("Herramienta %(n)s")),
    ):
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
            return render(request, "aventuras/sheet/sheet_import.html", context)
        sheet_form, feats, tools = import_forms(data, npc=npc, is_gm=access.is_gm)
        if not all_valid(sheet_form, feats, tools):
            form.add_error("file", import_problems(sheet_form, feats, tools))
            return render(request, "aventuras/sheet/sheet_import.html", context)
        try:
            character = services.sheet_create(
                campaign=campaign,
                owner=request.user,
                actor=request.user,
                data=sheet_form.sheet_data(feats.rows(), tools.rows()),
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
            if not access.is_gm and (play.experience or play.hero_points not in (None, STARTING_HERO_POINTS)):
                # A21 — a hero starts with five points; the GM sets experience.
                notes.append(
                    _(
                        "Los puntos de Héroe y la Experiencia del archivo no se importan: empieza con "
                        "%(points)s puntos de Héroe y 0 de Experiencia, y la dirección los ajusta."
                    )
                    % {"points": STARTING_HERO_POINTS}
                )
            messages.success(request, " ".join(notes))
            return redirect(character)
    return render(request, "aventuras/sheet/sheet_import.html", context)


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
