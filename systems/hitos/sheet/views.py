"""HITOS sheet pages: the list, creation and review, the sheet with its
meters, NPCs, session / scene changes, export and import.

The pages at the shared sheet addresses (``PAGES``) are served through
``sheets.views.system_page``, which passes the campaign; HITOS's own actions
(meters, drama points, aspects, new session or scene) have their own
addresses in the ``hitos`` namespace. Every view loads its objects through the access helpers at the top:
outsiders (and members who may not see a sheet) get 404, members without the
right get 403. Meter, drama and aspect actions are plain forms that redirect
(Post/Redirect/Get); with htmx they answer with the sheet's fragment.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from django import forms as forms_module
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.db.models import Prefetch
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseBadRequest
from django.shortcuts import get_object_or_404, redirect, render
from django.template.loader import render_to_string
from django.utils.cache import patch_vary_headers
from django.utils.text import slugify
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods, require_POST, require_safe

from accounts.limits import refusal_message
from campaigns import fragments
from campaigns.models import Campaign
from campaigns.models import Scene as CampaignScene
from campaigns.permissions import Access, campaign_access, can_view_campaign, visible_scenes
from hitos_site.htmx import HtmxHttpRequest, page_or_fragment, wants_fragment
from rules.hitos_health import HealthState, MentalState
from sheets import permissions as perms
from sheets import services as core
from sheets.models import CampaignSheetOptions, Character, SheetEvent
from sheets.views import cached_sheet_page, sheet_campaign, sheet_list_context
from systems.hitos.campaign import rules_options_or_defaults
from systems.hitos.models import CHARACTERISTIC_FIELDS, Aspect, SceneAspect
from systems.hitos.sheet import services
from systems.hitos.sheet.forms import (
    ROWS,
    SKILL_ROWS,
    WEAPON_ROWS,
    AspectActionForm,
    AspectForm,
    DramaForm,
    ImportForm,
    MeterForm,
    NewSceneForm,
    NewSessionForm,
    NotesForm,
    NpcForm,
    ReviewForm,
    Rows,
    SheetForm,
    SkillFormSet,
    WeaponFormSet,
    import_form_data,
    sheet_preview,
    shown_unchecked,
    skills_initial,
    weapons_initial,
)
from systems.hitos.sheet.meters import METERS
from systems.hitos.sheet.permissions import can_mark
from systems.hitos.texts import state_label

SYSTEM = "hitos"
NPC_HIDDEN_SCORES = ("entereza", "estabilidad")


# --- access helpers -------------------------------------------------------------


def _access_for(
    request: HttpRequest, campaign: Campaign, *, need: Callable[[Access], bool] | None = None
) -> tuple[Access, CampaignSheetOptions]:
    """The user's access to a HITOS campaign they may read (404 otherwise);
    403 without ``need``."""
    if campaign.system != SYSTEM:
        raise Http404
    access = campaign_access(request.user, campaign)
    if not can_view_campaign(access):
        raise Http404
    if need is not None and not need(access):
        raise PermissionDenied(_("No puedes hacer esto en las fichas de esta partida."))
    return access, perms.sheet_options(campaign)


def _campaign_for(
    request: HttpRequest, slug: str, *, need: Callable[[Access], bool] | None = None
) -> tuple[Campaign, Access, CampaignSheetOptions]:
    """For HITOS's own sheet actions (addressed by slug): as ``_access_for``."""
    campaign = sheet_campaign(slug)
    access, options = _access_for(request, campaign, need=need)
    return campaign, access, options


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
        Character.objects.filter(campaign=campaign)
        .select_related("owner", "hitos")
        .prefetch_related("skills", "weapons", Prefetch("aspects", queryset=Aspect.objects.active())),
        pk=character_id,
    )
    character.campaign = campaign
    if not perms.can_see_sheet(access, character, options):
        raise Http404
    if need is not None and not need(access, character):
        raise PermissionDenied(_("No puedes hacer esto con esta ficha."))
    return character, access, options


def _reload(character: Character) -> Character:
    fresh = (
        Character.objects.select_related("owner", "hitos")
        .prefetch_related("skills", "weapons", Prefetch("aspects", queryset=Aspect.objects.active()))
        .get(pk=character.pk)
    )
    fresh.campaign = character.campaign
    return fresh


# --- context builders ---------------------------------------------------------------


HEALTH_ROW_STATES = (HealthState.HERIDO, HealthState.INCAPACITADO, HealthState.MORIBUNDO)
MENTAL_ROW_STATES = (MentalState.ALTERADO, MentalState.TRASTORNADO, MentalState.ENLOQUECIDO)


def _meter_rows(meter, row: int, states) -> list[tuple[str, list[str]]]:
    """The boxes of a meter (``Meter.boxes``) in rows of Aguante (Entereza)
    boxes, each with the state its last box brings (H53–H56, H83)."""
    boxes = meter.boxes
    rows = [list(boxes[i : i + row]) for i in range(0, len(boxes), row)]
    return [(state_label(states[i]) if i < len(states) else "", r) for i, r in enumerate(rows)]


def _detail_context(access: Access, character: Character, options: CampaignSheetOptions, **forms) -> dict:
    campaign = character.campaign
    private = perms.can_see_private(access, character)
    may_mark = can_mark(access, character)
    context = {
        "campaign": campaign,
        "access": access,
        "character": character,
        "private": private,
        "can_mark": may_mark,
        "can_edit": perms.can_edit_sheet(access, character),
        "can_notes": perms.can_edit_notes(access, character),
        "can_submit": perms.can_submit(access, character),
        "can_review": perms.can_review(access) and character.status == Character.Status.SUBMITTED,
        "can_gm_notes": perms.can_see_gm_notes(access),
        # NPC stat blocks have no sanity meter.
        "scores": {
            k: v for k, v in character.hitos.scores.items() if not (character.is_npc and k in NPC_HIDDEN_SCORES)
        },
        "sheet": character.hitos,
        "health_rows": _meter_rows(character.hitos.health_meter, character.hitos.aguante, HEALTH_ROW_STATES),
        "mental_rows": _meter_rows(character.hitos.mental_meter, character.hitos.entereza, MENTAL_ROW_STATES),
        "aspects": sorted(character.aspects.all(), key=lambda a: (a.kind != "concept", a.kind, a.position, a.pk)),
    }
    if private:
        context["warnings"] = services.sheet_warnings(character) if not character.is_npc else []
    if may_mark:
        context["health_form"] = forms.get("health_form") or MeterForm(meter=services.HEALTH, campaign=campaign)
        context["mental_form"] = forms.get("mental_form") or MeterForm(meter=services.MENTAL, campaign=campaign)
        context["drama_form"] = forms.get("drama_form") or DramaForm(campaign=campaign)
        context["aspect_form"] = forms.get("aspect_form") or AspectForm()
    if context["can_review"]:
        context["review_form"] = forms.get("review_form") or ReviewForm()
    context["aspect_error"] = forms.get("aspect_error")
    context["last_roll"], context["last_check"] = forms.get("last_roll"), forms.get("last_check")
    return context


def _scene_aspects(access: Access) -> list[SceneAspect]:
    scenes = visible_scenes(access)
    return list(
        SceneAspect.objects.filter(
            scene__in=scenes.filter(status=CampaignScene.Status.OPEN).values("pk")
        ).select_related("scene")
    )


def _stored_preview(character: Character) -> dict:
    return {"scores": character.hitos.scores, "warnings": services.sheet_warnings(character)}


# --- list, options, session and scene ---------------------------------------------------


@require_safe
def sheet_list(request: HtmxHttpRequest, campaign: Campaign) -> HttpResponse:
    access, options = _access_for(request, campaign)
    context = sheet_list_context(
        request,
        campaign,
        access,
        options,
        lambda characters: characters.select_related("owner", "hitos").prefetch_related(
            "skills", Prefetch("aspects", queryset=Aspect.objects.active())
        ),
    )
    context.update(
        session_form=NewSessionForm(),
        # Both forms have a «Nota»: its ids must differ on the one page.
        scene_form=NewSceneForm(auto_id="id_scene_%s"),
        recent=list(SheetEvent.objects.filter(campaign=campaign, character__isnull=True).select_related("actor")[:5])
        if access.is_gm
        else [],
    )
    return page_or_fragment(request, "hitos/sheet/sheet_list.html", "sheet-table", context)


@login_required
@require_POST
def session_new(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    campaign, access, _options = _campaign_for(request, slug, need=perms.can_manage_sheets)
    form = NewSessionForm(request.POST)
    if form.is_valid():
        count = services.campaign_new_session(
            campaign=campaign,
            actor=request.user,
            reason=form.cleaned_data["reason"],
            new_story=form.cleaned_data["new_story"],
        )
        messages.success(request, _("Nueva sesión: %(n)s fichas con sus puntos dramáticos renovados.") % {"n": count})
    else:
        messages.error(request, refusal_message(form, missing=_("No se ha podido empezar la sesión.")))
    return redirect("sheets:sheet-list", campaign.slug)


@login_required
@require_POST
def scene_new(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    campaign, access, _options = _campaign_for(request, slug, need=perms.can_manage_sheets)
    form = NewSceneForm(request.POST)
    if form.is_valid():
        ended = services.campaign_new_scene(campaign=campaign, actor=request.user, reason=form.cleaned_data["reason"])
        messages.success(request, _("Nueva escena: %(n)s aspectos temporales terminados.") % {"n": ended})
    else:
        messages.error(request, refusal_message(form, missing=_("No se ha podido empezar la escena.")))
    return redirect("sheets:sheet-list", campaign.slug)


# --- creation and editing ----------------------------------------------------------


def _added_rows(request: HttpRequest) -> Rows | None:
    """The rows a button asked one more of, without JavaScript ("Añadir
    habilidad" posts the whole form; with htmx it asks ``sheet_row``)."""
    if request.method != "POST":
        return None
    return next((rows for rows in ROWS.values() if rows.button in request.POST), None)


def _form_data(request: HttpRequest, added: Rows | None):
    """What the forms are bound to: the POST, with one more row when asked."""
    if request.method != "POST":
        return None
    return added.with_one_more(request.POST) if added is not None else request.POST


def _shown_with_row(added: Rows, *forms) -> None:
    """The forms shown again to add a row: unchecked (nothing is saved), the
    new row's first field focused."""
    shown_unchecked(*forms)
    for formset in forms:
        if getattr(formset, "prefix", None) == added.prefix and formset.forms:
            next(iter(formset.forms[-1].fields.values())).widget.attrs["autofocus"] = True


def _sheet_forms(request, campaign, access, *, character=None, creating=False, added: Rows | None = None):
    data = _form_data(request, added)
    initial = (
        SheetForm.initial_for(character)
        if character
        else {"drama": 5, "fortaleza": 5, "reflejos": 5, "voluntad": 5, "intelecto": 5}
    )
    form = SheetForm(data, initial=initial, is_gm=access.is_gm, creating=creating)
    skills = SkillFormSet(data, prefix="skills", initial=skills_initial(character) if character else None)
    weapons = WeaponFormSet(data, prefix="weapons", initial=weapons_initial(character) if character else None)
    return form, skills, weapons


def _render_sheet_form(request, context, form, skills, *, npc=False) -> HttpResponse:
    """The whole form page, or with htmx only the live derived scores (preview)."""
    if request.method == "POST":
        context["preview"] = sheet_preview(request.POST, rules_options_or_defaults(context["campaign"]))
    elif context.get("character") is not None:
        context["preview"] = _stored_preview(context["character"])
    else:
        context["preview"] = sheet_preview(
            {k: str(v) for k, v in form.initial.items()}, rules_options_or_defaults(context["campaign"])
        )
    context["npc"] = npc
    context["row_kinds"] = {"skills": SKILL_ROWS, "weapons": WEAPON_ROWS}
    if request.htmx and request.method == "POST":
        return render(request, "hitos/sheet/sheet_form.html#sheet-preview", context)
    return render(request, "hitos/sheet/sheet_form.html", context)


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def sheet_create(request: HtmxHttpRequest, campaign: Campaign) -> HttpResponse:
    access, _options = _access_for(request, campaign, need=perms.can_create_sheet)
    added = _added_rows(request)
    form, skills, weapons = _sheet_forms(request, campaign, access, creating=True, added=added)
    context = {"campaign": campaign, "form": form, "skills": skills, "weapons": weapons, "creating": True}
    if added is not None:
        _shown_with_row(added, form, skills, weapons)
    elif request.method == "POST" and "preview" not in request.POST:
        if form.is_valid() and skills.is_valid() and weapons.is_valid():
            character = services.sheet_create(
                campaign=campaign,
                owner=request.user,
                actor=request.user,
                data=form.sheet_data(skills.rows(), weapons.rows()),
            )
            messages.success(request, _("Ficha creada como borrador. Envíala a la dirección cuando esté lista."))
            return redirect(character)
    return _render_sheet_form(request, context, form, skills)


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def sheet_edit(request: HtmxHttpRequest, campaign: Campaign, character_id: int) -> HttpResponse:
    character, access, _options = _sheet_for(request, campaign, character_id, need=perms.can_edit_sheet)
    if character.is_npc:
        return _npc_edit(request, character, access)
    campaign = character.campaign
    added = _added_rows(request)
    form, skills, weapons = _sheet_forms(request, campaign, access, character=character, added=added)
    context = {"campaign": campaign, "character": character, "form": form, "skills": skills, "weapons": weapons}
    if added is not None:
        _shown_with_row(added, form, skills, weapons)
    elif request.method == "POST" and "preview" not in request.POST:
        if form.is_valid() and skills.is_valid() and weapons.is_valid():
            services.sheet_update(
                character=character, actor=request.user, data=form.sheet_data(skills.rows(), weapons.rows())
            )
            messages.success(request, _("Ficha guardada."))
            return redirect(character)
    return _render_sheet_form(request, context, form, skills)


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def npc_create(request: HtmxHttpRequest, campaign: Campaign) -> HttpResponse:
    access, _options = _access_for(request, campaign, need=perms.can_manage_sheets)
    added = _added_rows(request)
    data = _form_data(request, added)
    form = NpcForm(data, initial={"fortaleza": 5, "reflejos": 5, "voluntad": 5, "intelecto": 5, "rd": 0})
    skills = SkillFormSet(data, prefix="skills")
    context = {"campaign": campaign, "form": form, "skills": skills, "creating": True}
    if added is not None:
        _shown_with_row(added, form, skills)
    elif request.method == "POST" and "preview" not in request.POST:
        if form.is_valid() and skills.is_valid():
            character = services.sheet_create(
                campaign=campaign,
                owner=request.user,
                actor=request.user,
                kind=Character.Kind.NPC,
                data=form.sheet_data(skills.rows()),
            )
            messages.success(request, _("PNJ creado."))
            return redirect(character)
    return _render_sheet_form(request, context, form, skills, npc=True)


def _npc_edit(request: HtmxHttpRequest, character: Character, access: Access) -> HttpResponse:
    """The NPC branch of ``sheet_edit`` (same URL, same access check)."""
    added = _added_rows(request)
    data = _form_data(request, added)
    initial = {name: getattr(character.hitos, name) for name in (*CHARACTERISTIC_FIELDS, "rd", "damage_code")} | {
        "name": character.name,
        "gm_notes": character.gm_notes,
    }
    initial["concept"] = next((a.phrase for a in character.aspects.all() if a.kind == Aspect.Kind.CONCEPT), "")
    form = NpcForm(data, initial=initial)
    skills = SkillFormSet(data, prefix="skills", initial=skills_initial(character))
    context = {"campaign": character.campaign, "character": character, "form": form, "skills": skills}
    if added is not None:
        _shown_with_row(added, form, skills)
    elif request.method == "POST" and "preview" not in request.POST:
        if form.is_valid() and skills.is_valid():
            services.sheet_update(character=character, actor=request.user, data=form.sheet_data(skills.rows()))
            messages.success(request, _("PNJ guardado."))
            return redirect(character)
    return _render_sheet_form(request, context, form, skills, npc=True)


@login_required
@require_safe
def sheet_row(request: HtmxHttpRequest, slug: str, rows: str) -> HttpResponse:
    """One more empty row of the sheet form's skills or weapons, for the
    "Añadir habilidad" / "Añadir arma" button (htmx): the row goes at the end
    of the list, and the formset's row count (``<prefix>-TOTAL_FORMS``, which
    the button sends) moves on out of band. Without htmx the button posts
    the whole form, which comes back with one more row (``_added_rows``);
    this address then leads to the new sheet's form."""
    campaign, _access, _options = _campaign_for(request, slug, need=perms.can_create_sheet)
    kind = ROWS.get(rows)
    if kind is None:
        raise Http404
    if not wants_fragment(request):
        return redirect("sheets:sheet-create", campaign.slug)
    total = request.GET.get(kind.total_name, "")
    if not (total.isascii() and total.isdigit() and len(total) <= 4):
        return HttpResponseBadRequest(
            _("Falta el número de filas que tiene el formulario."), content_type="text/plain; charset=utf-8"
        )
    index = int(total)
    if index >= kind.max_num:
        return HttpResponseBadRequest(
            _("No se pueden añadir más filas: como mucho %(n)s.") % {"n": kind.max_num},
            content_type="text/plain; charset=utf-8",
        )
    context = {
        "row": kind.new_row(index),
        "kind": kind.prefix,
        "number": index + 1,
        "rows_kind": kind,
        "total": index + 1,
        "full": index + 1 >= kind.max_num,
    }
    response = render(request, "hitos/sheet/sheet_form.html#new-row", context)
    patch_vary_headers(response, ("HX-Request",))
    return response


# --- the sheet -------------------------------------------------------------------


def _sheet_page(request: HtmxHttpRequest, campaign: Campaign, character_id: int, part: str, access: Access) -> dict:
    """The sheet (``part``: the whole page's content or, for htmx, its meters)
    as the reader of ``access`` sees it: ``{"html", "title"}``. 404 as
    ``_sheet_for``."""
    character, access, options = _sheet_for(request, campaign, character_id, access=access)
    context = _detail_context(access, character, options)
    if part == "sheet-page":
        context["scene_aspects"] = _scene_aspects(access)
        if context["can_notes"]:
            context["notes_form"] = NotesForm(
                initial={f: getattr(character, f) for f in ("private_notes", "public_description", "gm_notes")},
                is_gm=access.is_gm,
                description_allowed=options.players_edit_description,
            )
    html = render_to_string(
        f"hitos/sheet/sheet_detail.html#{part}", {**context, **fragments.csrf_context()}, request=request
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
        name="",
        in_play="sheet-meters",
        template="hitos/sheet/sheet_detail.html",
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
    context["scene_aspects"] = _scene_aspects(access)
    return render(request, "hitos/sheet/sheet_detail.html", context)


@login_required
@require_POST
def sheet_submit(request: HtmxHttpRequest, campaign: Campaign, character_id: int) -> HttpResponse:
    character, access, _options = _sheet_for(request, campaign, character_id, need=perms.can_submit)
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
            services.sheet_review(
                character=character,
                actor=request.user,
                approve=approve,
                comment=form.cleaned_data["comment"],
                accept_budget=form.cleaned_data["accept_budget"],
            )
        except ValidationError as exc:
            form.add_error("accept_budget", exc)
        else:
            messages.success(request, _("Ficha aprobada.") if approve else _("Ficha devuelta con tus comentarios."))
            return redirect(character)
    context = _detail_context(access, character, options, review_form=form)
    context["scene_aspects"] = _scene_aspects(access)
    return render(request, "hitos/sheet/sheet_detail.html", context)


def _play_response(request: HtmxHttpRequest, access, character, options, partial: str, **forms) -> HttpResponse:
    """After a meter / drama / aspect action: the fragment with htmx, else the
    page (with the form's errors) or a redirect when it worked."""
    failed = any(isinstance(f, forms_module.Form) and f.errors for f in forms.values()) or forms.get("aspect_error")
    if not failed and not request.htmx:
        return redirect(character)
    character = _reload(character)
    context = _detail_context(access, character, options, **forms)
    if not wants_fragment(request):
        context["scene_aspects"] = _scene_aspects(access)
    return page_or_fragment(request, "hitos/sheet/sheet_detail.html", partial, context)


def _forget_seed(form: MeterForm) -> None:
    """A refused browser seed is not shown again: the form comes back with
    its field empty, for the browser to fill with a new one (what the user
    typed stays)."""
    form.data = form.data.copy()
    form.data.pop(form.add_prefix("client_seed"), None)


@login_required
@require_POST
def meter_update(request: HtmxHttpRequest, slug: str, character_id: int, meter: str) -> HttpResponse:
    character, access, options = _sheet_for(request, slug, character_id, need=can_mark)
    if meter not in (services.HEALTH, services.MENTAL) or (character.is_npc and meter == services.MENTAL):
        raise Http404
    form = MeterForm(request.POST, meter=meter, campaign=character.campaign)
    key = "health_form" if meter == services.HEALTH else "mental_form"
    extra = {}
    if form.is_valid():
        data = form.cleaned_data
        try:
            change = services.meter_apply(
                character=character,
                actor=request.user,
                meter=meter,
                action=data["action"],
                amount=data["amount"],
                rested=data["rested"],
                reason=data["reason"],
                post=data["post"],
                client_seed=data["client_seed"] or None,
            )
        except ValidationError as exc:
            form.add_error(None, exc)
            if getattr(exc, "code", None) == "client_seed_used":
                _forget_seed(form)
        else:
            if change.roll is not None:
                extra = {"last_roll": change.roll, "last_check": change.check}
                if not request.htmx:
                    messages.info(
                        request,
                        _("%(purpose)s: %(dice)s.")
                        % {"purpose": change.roll.purpose, "dice": ", ".join(map(str, change.roll.dice))},
                    )
            form = None
    return _play_response(request, access, character, options, "sheet-meters", **{key: form}, **extra)


@login_required
@require_POST
def drama_update(request: HtmxHttpRequest, slug: str, character_id: int) -> HttpResponse:
    character, access, options = _sheet_for(request, slug, character_id, need=can_mark)
    if character.is_npc:
        raise PermissionDenied(_("Los PNJ no tienen puntos dramáticos (H24)."))
    form = DramaForm(request.POST, campaign=character.campaign)
    if form.is_valid():
        try:
            services.drama_adjust(
                character=character,
                actor=request.user,
                change=form.cleaned_data["change"],
                reason=form.cleaned_data["reason"],
                post=form.cleaned_data["post"],
            )
        except ValidationError as exc:
            form.add_error(None, exc)
        else:
            form = None
    return _play_response(request, access, character, options, "sheet-aspects", drama_form=form)


@login_required
@require_POST
def aspect_create(request: HtmxHttpRequest, slug: str, character_id: int) -> HttpResponse:
    character, access, options = _sheet_for(request, slug, character_id, need=can_mark)
    form = AspectForm(request.POST)
    if form.is_valid():
        services.aspect_add_temporary(character=character, actor=request.user, **form.cleaned_data)
        form = None
    return _play_response(request, access, character, options, "sheet-aspects", aspect_form=form)


@login_required
@require_POST
def aspect_update(request: HtmxHttpRequest, slug: str, character_id: int, aspect_id: int) -> HttpResponse:
    character, access, options = _sheet_for(request, slug, character_id, need=can_mark)
    aspect = get_object_or_404(Aspect.objects.active(), pk=aspect_id, character=character)
    aspect.character = character
    form = AspectActionForm(request.POST)
    error = None
    if form.is_valid():
        try:
            services.aspect_change(
                aspect=aspect,
                actor=request.user,
                action=form.cleaned_data["action"],
                until=form.cleaned_data["until"] or Aspect.Duration.SESSION,
            )
        except ValidationError as exc:
            error = exc.messages[0]
    else:
        error = _("Acción desconocida.")
    return _play_response(request, access, character, options, "sheet-aspects", aspect_error=error)


# --- history, export, import --------------------------------------------------------


@login_required
@require_safe
def sheet_print(request: HtmxHttpRequest, campaign: Campaign, character_id: int) -> HttpResponse:
    character, access, options = _sheet_for(request, campaign, character_id, need=perms.can_see_private)
    return render(request, "hitos/sheet/sheet_print.html", _detail_context(access, character, options))


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


def _import_forms(data: dict, *, npc: bool, is_gm: bool):
    """The sheet in the file as the POST of the sheet (or NPC) form and its
    formsets, so it is validated exactly like a typed one."""
    post = import_form_data(data)
    sheet_form = NpcForm(post) if npc else SheetForm(post, is_gm=is_gm, creating=True)
    return sheet_form, SkillFormSet(post, prefix="skills"), WeaponFormSet(post, prefix="weapons")


def _import_problems(sheet_form, skills, weapons) -> str:
    problems = [
        f"{sheet_form.fields[name].label if name in sheet_form.fields else name}: {' '.join(errs)}"
        for name, errs in sheet_form.errors.items()
    ]
    for fs in (skills, weapons):
        for i, errs in enumerate(fs.errors):
            problems += [f"{fs.prefix} {i + 1}, {name}: {' '.join(e)}" for name, e in errs.items()]
    return _("La ficha del archivo no es válida: %(problems)s") % {"problems": "; ".join(problems)}


def _import_mark_notes(play: services.PlayState, character: Character) -> list[str]:
    notes = []
    for kind in METERS.values():
        if character.is_npc and kind.key == services.MENTAL:
            continue  # NPC stat blocks have no sanity meter.
        wanted = play.marks.get(kind.key)
        if wanted is None:
            notes.append(_("El archivo no trae las marcas de %(meter)s: empieza sin marcas.") % {"meter": kind.label})
        elif wanted != kind.marks(character.hitos):
            notes.append(
                _("Las marcas de %(meter)s que no caben en sus %(n)s casillas se han descartado.")
                % {"meter": kind.label, "n": kind.meter(character.hitos).capacity}
            )
    return notes


def _import_message(data: dict, play: services.PlayState, character: Character, *, is_gm: bool) -> str:
    """The import's success message, saying plainly what the new sheet did
    not take from the file."""
    notes = [_("PNJ importado.") if character.is_npc else _("Ficha importada como borrador.")]
    notes += _import_mark_notes(play, character)
    if play.temporary is None:
        notes.append(_("El archivo no trae los aspectos temporales: la ficha empieza sin ninguno."))
    if play.exhausted is None:
        notes.append(_("El archivo no dice qué aspectos estaban agotados: ninguno empieza agotado."))
    points = data.get("drama_points")
    if not character.is_npc and type(points) is int and points != character.hitos.drama_points:
        notes.append(
            _("Los puntos dramáticos empiezan en %(n)s, su Drama (H26); el archivo tenía %(old)s.")
            % {"n": character.hitos.drama_points, "old": points}
        )
    if not is_gm and isinstance(data.get("gm_notes"), str) and data["gm_notes"].strip():
        notes.append(_("Las notas de la dirección del archivo no se importan: solo la dirección puede importarlas."))
    return " ".join(notes)


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
            return render(request, "hitos/sheet/sheet_import.html", context)
        sheet_form, skills, weapons = _import_forms(data, npc=npc, is_gm=access.is_gm)
        if not (sheet_form.is_valid() and skills.is_valid() and weapons.is_valid()):
            form.add_error("file", _import_problems(sheet_form, skills, weapons))
            return render(request, "hitos/sheet/sheet_import.html", context)
        rows = (skills.rows(),) if npc else (skills.rows(), weapons.rows())
        try:
            character = services.sheet_create(
                campaign=campaign,
                owner=request.user,
                actor=request.user,
                data=sheet_form.sheet_data(*rows),
                imported=True,
                kind=Character.Kind.NPC if npc else Character.Kind.PC,
                play=play,
            )
        except ValidationError as exc:
            form.add_error("file", exc.messages)
        else:
            messages.success(request, _import_message(data, play, character, is_gm=access.is_gm))
            return redirect(character)
    return render(request, "hitos/sheet/sheet_import.html", context)


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
