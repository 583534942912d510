"""The «Curación» panel of a scene: treatment of critical injuries (V28),
healing conditions (V29) and recovery at HQ (V30), each a roll through the
log whose effects go onto the sheets with a ``SheetEvent``.

Anyone who may read the scene sees it (404 otherwise); a test is rolled by
the GM or by the player of the character who rolls it (403 otherwise).
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST, require_safe

from campaigns.models import Scene
from campaigns.permissions import Access
from hitos_site.htmx import HtmxHttpRequest, page_or_fragment, redirect_after
from sheets.models import Character
from sheets.permissions import can_play_character
from systems.vaesen.fear.views import vaesen_scene
from systems.vaesen.healing import services
from systems.vaesen.healing.forms import HealingForm, RecoveryForm, TreatmentForm
from systems.vaesen.models import VaesenInjury
from table.cards import cards_for
from table.models import TableRoll


def _url(scene: Scene) -> str:
    return reverse("vaesen:healing", args=[scene.campaign.slug, scene.pk])


def _forms(access: Access, scene: Scene, data=None, *, which: str = "") -> dict:
    characters = list(
        Character.objects.filter(campaign=scene.campaign)
        .in_play()
        .select_related("vaesen", "owner")
        .order_by("kind", "name", "pk")
    )
    mine = [c for c in characters if can_play_character(access, c)] if access.user.is_authenticated else []
    patients = [c for c in characters if c.vaesen.resistance is None]
    injuries = list(
        VaesenInjury.objects.filter(sheet__character__in=patients, treated=False).select_related("sheet__character")
    )
    return {
        # Three forms on one page: each its own ids (the posted names stay the same).
        "treatment_form": TreatmentForm(
            data if which == "treatment" else None, healers=mine, injuries=injuries, auto_id="tratar-%s"
        ),
        "healing_form": HealingForm(
            data if which == "healing" else None, healers=mine, patients=patients, auto_id="curar-%s"
        ),
        "recovery_form": RecoveryForm(
            data if which == "recovery" else None,
            healers=[c for c in mine if not c.is_npc],
            auto_id="recuperar-%s",
        ),
        "may_roll": bool(mine),
    }


def _context(request: HttpRequest, access: Access, scene: Scene, forms: dict | None = None) -> dict:
    rolls = services.scene_rolls(scene)
    cards = cards_for(rolls, access=access)
    rows = [
        {
            "table_roll": tr,
            "card": cards[tr.pk],
            "effects": services.effects_of(tr),
            "can_apply": access.user.is_authenticated
            and services.apply_refusal(tr, access.user, is_gm=access.is_gm) is None,
        }
        for tr in rolls
    ]
    context = {"campaign": scene.campaign, "scene": scene, "access": access, "rolls": rows}
    if scene.status != Scene.Status.ARCHIVED:
        context.update(forms or _forms(access, scene))
    return context


@require_safe
def healing_page(request: HtmxHttpRequest, slug: str, scene_id: int) -> HttpResponse:
    scene, access = vaesen_scene(request, slug, scene_id)
    return page_or_fragment(request, "vaesen/healing.html", "healing-board", _context(request, access, scene))


def _action(request: HtmxHttpRequest, slug: str, scene_id: int, which: str, act) -> HttpResponse:
    scene, access = vaesen_scene(request, slug, scene_id)
    if not access.is_gm and not access.is_player:
        raise PermissionDenied(_("Solo quien juega en la partida puede tirar."))
    forms = _forms(access, scene, request.POST, which=which)
    form = forms[f"{which}_form"]
    if form.is_valid():
        try:
            act(scene, form.cleaned_data, form.cleaned_data["client_seed"] or None)
        except ValidationError as exc:
            form.add_error(None, exc)
        else:
            messages.success(request, _("Tirada hecha; lo que cura queda anotado en las fichas."))
            return redirect_after(request, _url(scene))
    return page_or_fragment(request, "vaesen/healing.html", "healing-board", _context(request, access, scene, forms))


def _required(value, message: str):
    if value is None:
        raise ValidationError(message)
    return value


@login_required
@require_POST
def treatment(request: HtmxHttpRequest, slug: str, scene_id: int) -> HttpResponse:
    """V28 — treat a critical injury."""

    def act(scene, data, seed):
        services.treatment_roll(
            scene=scene,
            actor=request.user,
            healer=_required(data["healer_character"], _("Elige quién trata.")),
            injury=_required(data["injury_row"], _("Elige la herida.")),
            client_seed=seed,
        )

    return _action(request, slug, scene_id, "treatment", act)


@login_required
@require_POST
def healing(request: HtmxHttpRequest, slug: str, scene_id: int) -> HttpResponse:
    """V29 — a day's healing of conditions."""

    def act(scene, data, seed):
        services.healing_roll(
            scene=scene,
            actor=request.user,
            healer=_required(data["healer_character"], _("Elige quién cura.")),
            skill=data["skill"],
            patients=data["patient_characters"],
            client_seed=seed,
        )

    return _action(request, slug, scene_id, "healing", act)


@login_required
@require_POST
def recovery(request: HtmxHttpRequest, slug: str, scene_id: int) -> HttpResponse:
    """V30 — the recovery roll back at HQ."""

    def act(scene, data, seed):
        services.recovery_roll(
            scene=scene,
            actor=request.user,
            character=_required(data["recovering"], _("Elige el personaje.")),
            kind=data["kind"],
            client_seed=seed,
        )

    return _action(request, slug, scene_id, "recovery", act)


@login_required
@require_POST
def apply(request: HtmxHttpRequest, slug: str, scene_id: int, table_roll_id: int) -> HttpResponse:
    """A treatment or healing that succeeded after a push goes onto the sheets."""
    scene, access = vaesen_scene(request, slug, scene_id)
    table_roll = get_object_or_404(
        TableRoll.objects.select_related("campaign", "latest", "first", "character"),
        pk=table_roll_id,
        scene=scene,
        kind__in=(services.TREATMENT, services.HEALING),
    )
    if table_roll.owner_id != request.user.pk and not access.is_gm:
        raise PermissionDenied(_("Solo quien tiró o la dirección aplican la curación."))
    try:
        services.apply_effects(table_roll=table_roll, user=request.user, is_gm=access.is_gm)
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
    else:
        messages.success(request, _("Curación aplicada en las fichas."))
    return redirect_after(request, _url(scene))
