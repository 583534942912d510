"""Horror tests and opposed rolls in a scene: the lists, the GM's start forms
and the "Tirar Entereza" button.

Anyone who may read the scene sees both pages; only the GM starts a test or
an opposed roll; a character's Entereza is rolled by its player or the GM.
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.paginator import Paginator
from django.db.models import Prefetch
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST, require_safe

from campaigns import permissions as perms
from campaigns.models import Campaign, Scene
from campaigns.permissions import Access
from hitos_site.htmx import HtmxHttpRequest, after_action, page_or_fragment, redirect_after
from rules.hitos import Opposed
from sheets.models import Character
from systems.hitos.cards import activations_prefetch
from systems.hitos.horror import services as horror
from systems.hitos.horror.forms import ExposureRollForm, HorrorStartForm, OpposedStartForm
from systems.hitos.models import HorrorExposure, HorrorTest, OpposedRoll, Skill
from systems.hitos.opposed import services as opposed
from table.access import scene_for
from table.cards import cards_for

HORROR_PAGE_SIZE = 10
OPPOSED_PAGE_SIZE = 20


def _candidates(campaign: Campaign):
    """Who the GM may expose or oppose: approved PCs and the campaign's NPCs."""
    return (
        Character.objects.filter(campaign=campaign).in_play().select_related("campaign").order_by("kind", "name", "pk")
    )


# --- horror ----------------------------------------------------------------------------


def _horror_tests(scene: Scene):
    exposures = HorrorExposure.objects.select_related(
        "character__campaign",
        "character__hitos",
        "table_roll__first__user",
        "table_roll__latest__user",
        "table_roll__owner",
        "table_roll__character",
    ).prefetch_related("character__skills", activations_prefetch("table_roll__"))
    return HorrorTest.objects.filter(scene=scene).prefetch_related(Prefetch("exposures", queryset=exposures))


def _decorate_tests(tests, access: Access, scene: Scene, errors: dict[int, str] | None = None) -> None:
    """What each exposure shows and whether the user may roll it (decided here)."""
    errors = errors or {}
    rolled = [e.table_roll for test in tests for e in test.exposures.all() if e.table_roll]
    cards = cards_for(rolled, access=access)
    for test in tests:
        test.scene = scene
        test.campaign = scene.campaign
        test.level_info = horror.horror_level(test.level)
        for exposure in test.exposures.all():
            exposure.test = test
            exposure.level_info = horror.effective_level(exposure)
            exposure.error = errors.get(exposure.pk, "")
            exposure.can_roll = (
                access.user.is_authenticated
                and exposure.resolved_at is None
                and horror.can_roll_exposure(access, exposure)
            )
            exposure.sees_meter = access.is_gm or (
                access.user.is_authenticated
                and not exposure.character.is_npc
                and exposure.character.owner_id == access.user.pk
            )
            exposure.outcome = horror.exposure_outcome(exposure)
            exposure.card = cards.get(exposure.table_roll_id)


def _horror_context(request: HttpRequest, access: Access, scene: Scene, *, form=None) -> dict:
    page_obj = Paginator(_horror_tests(scene), HORROR_PAGE_SIZE).get_page(request.GET.get("pagina"))
    _decorate_tests(page_obj.object_list, access, scene)
    if form is None and access.is_gm and scene.status != Scene.Status.ARCHIVED:
        form = HorrorStartForm(characters=_candidates(scene.campaign))
    return {
        "campaign": scene.campaign,
        "scene": scene,
        "access": access,
        "page_obj": page_obj,
        "tests": page_obj.object_list,
        "form": form,
    }


@require_safe
def horror_page(request: HtmxHttpRequest, slug: str, scene_id: int) -> HttpResponse:
    """The scene's horror tests, newest first, with the GM's start form."""
    scene, access = scene_for(request, slug, scene_id)
    return page_or_fragment(request, "hitos/horror.html", "horror-board", _horror_context(request, access, scene))


@login_required
@require_POST
def horror_start(request: HtmxHttpRequest, slug: str, scene_id: int) -> HttpResponse:
    """The GM exposes characters to a level of horror (H78–H81)."""
    scene, access = scene_for(
        request, slug, scene_id, need=perms.can_manage, denied=_("Solo la dirección de la partida puede hacer esto.")
    )
    form = HorrorStartForm(request.POST, characters=_candidates(scene.campaign))
    if form.is_valid():
        try:
            horror.horror_start(
                scene=scene,
                actor=request.user,
                level=form.cleaned_data["level"],
                description=form.cleaned_data["description"],
                exposures=form.cleaned_data["exposures"],
            )
        except ValidationError as exc:
            form.add_error(None, exc)
        else:
            messages.success(request, _("Prueba de horror preparada: cada personaje ya puede tirar Entereza."))
            return redirect_after(request, reverse("hitos:horror", args=[scene.campaign.slug, scene.pk]))
    # Nothing typed is lost: the form comes back with its errors (200, so htmx swaps it).
    return page_or_fragment(
        request, "hitos/horror.html", "horror-board", _horror_context(request, access, scene, form=form)
    )


@login_required
@require_POST
def horror_roll(request: HtmxHttpRequest, slug: str, scene_id: int, exposure_id: int) -> HttpResponse:
    """A character's Entereza test against its exposure, once (H78, H80)."""
    scene, access = scene_for(request, slug, scene_id)
    exposure = get_object_or_404(
        HorrorExposure.objects.select_related("test", "character"), pk=exposure_id, test__scene=scene
    )
    exposure.test.campaign = scene.campaign
    if not horror.can_roll_exposure(access, exposure):
        raise PermissionDenied(_("Solo la dirección o quien lleva a este personaje puede tirar por él."))
    form = ExposureRollForm(request.POST)
    errors = {}
    if not form.is_valid():
        errors[exposure.pk] = " ".join(form.errors.get("client_seed", []))
    else:
        try:
            horror.exposure_roll(
                exposure=exposure, actor=request.user, client_seed=form.cleaned_data["client_seed"] or None
            )
        except ValidationError as exc:
            errors[exposure.pk] = " ".join(exc.messages)

    def row(error: str) -> HttpResponse:
        # Only this character's row is swapped: the other buttons keep the
        # seeds their browser made when the page loaded.
        test = _horror_tests(scene).get(pk=exposure.test_id)
        _decorate_tests([test], access, scene, errors)
        swapped = next(e for e in test.exposures.all() if e.pk == exposure.pk)
        context = {"exposure": swapped, "test": test, "campaign": scene.campaign, "scene": scene, "access": access}
        return page_or_fragment(request, "hitos/horror.html", "horror-exposure", context)

    return after_action(
        request,
        fragment=row,
        url=reverse("hitos:horror", args=[scene.campaign.slug, scene.pk]) + f"#exposicion-{exposure.pk}",
        error=errors.get(exposure.pk, ""),
        success=_("Prueba de Entereza tirada."),
    )


# --- opposed rolls --------------------------------------------------------------------


def _opposed_rounds(scene: Scene):
    return (
        OpposedRoll.objects.filter(scene=scene)
        .select_related(
            "first__first__user",
            "first__latest__user",
            "first__character",
            "first__owner",
            "second__first__user",
            "second__latest__user",
            "second__character",
            "second__owner",
        )
        .prefetch_related(activations_prefetch("first__"), activations_prefetch("second__"))
    )


def _decorate_chains(chains, access: Access, scene: Scene) -> None:
    rolls = [tr for chain in chains for row in chain for tr in (row.first, row.second)]
    cards = cards_for(rolls, access=access)
    for chain in chains:
        for row in chain:
            row.first_card = cards[row.first_id]
            row.second_card = cards[row.second_id]
        head = chain[0]
        head.rounds = chain
        head.tiebreaks = chain[1:]
        head.current = opposed.opposed_outcome(chain)
        last = chain[-1]
        head.winner = {Opposed.FIRST: last.first.character, Opposed.SECOND: last.second.character}.get(head.current)
        head.is_tie = head.current is Opposed.TIE
        head.unsettled = head.current is Opposed.REROLL


def _opposed_context(request: HttpRequest, access: Access, scene: Scene, *, form=None) -> dict:
    rounds = _opposed_rounds(scene)
    heads = rounds.filter(tiebreak_of__isnull=True).order_by("-created_at", "-id")
    page_obj = Paginator(heads, OPPOSED_PAGE_SIZE).get_page(request.GET.get("pagina"))
    chains = opposed.opposed_chains(page_obj.object_list, rounds)
    _decorate_chains(chains, access, scene)
    if form is None and access.is_gm and scene.status != Scene.Status.ARCHIVED:
        form = _opposed_form(scene)
    return {
        "campaign": scene.campaign,
        "scene": scene,
        "access": access,
        "page_obj": page_obj,
        "opposed_rolls": [chain[0] for chain in chains],
        "form": form,
    }


def _opposed_form(scene: Scene, data=None) -> OpposedStartForm:
    characters = list(_candidates(scene.campaign))
    skills = (
        Skill.objects.filter(character__in=[c.pk for c in characters])
        .order_by("name")
        .values_list("name", flat=True)
        .distinct()
    )
    return OpposedStartForm(data, characters=characters, skills=list(skills))


@require_safe
def opposed_page(request: HtmxHttpRequest, slug: str, scene_id: int) -> HttpResponse:
    """The scene's opposed rolls, newest first, with their tie-breaks (H9)."""
    scene, access = scene_for(request, slug, scene_id)
    return page_or_fragment(request, "hitos/opposed.html", "opposed-board", _opposed_context(request, access, scene))


@login_required
@require_POST
def opposed_start(request: HtmxHttpRequest, slug: str, scene_id: int) -> HttpResponse:
    """The GM has two characters roll against each other (H9)."""
    scene, access = scene_for(
        request, slug, scene_id, need=perms.can_manage, denied=_("Solo la dirección de la partida puede hacer esto.")
    )
    form = _opposed_form(scene, request.POST)
    if form.is_valid():
        first, second = form.cleaned_data["sides"]
        try:
            opposed.opposed_start(
                scene=scene,
                actor=request.user,
                purpose=form.cleaned_data["purpose"],
                tie_allowed=form.cleaned_data["tie_allowed"],
                first=first,
                second=second,
                client_seed=form.cleaned_data["client_seed"] or None,
            )
        except ValidationError as exc:
            form.add_error(None, exc)
        else:
            messages.success(request, _("Tirada enfrentada hecha y firmada."))
            return redirect_after(request, reverse("hitos:opposed", args=[scene.campaign.slug, scene.pk]))
    return page_or_fragment(
        request, "hitos/opposed.html", "opposed-board", _opposed_context(request, access, scene, form=form)
    )
