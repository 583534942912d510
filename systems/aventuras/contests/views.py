"""The scene's competitions, cooperations and initiative (A13, A19, A20),
and the reactions to an action (A14–A18).

Whoever may read the scene sees them (outsiders: 404); the GM sets up,
cancels and names who is in the fight; a participant's controller rolls
(members without the right: 403). Each action answers an htmx request with
the panel (or the card's reactions) as it is now, and a plain form post
with a redirect (a refusal with nothing typed as a message); a refused form
(the reason to cancel, a roll's fields, the agreed order) comes back, in the
panel or on the whole page, with what was typed.
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.cache import patch_vary_headers
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods, require_POST, require_safe

from campaigns import deadlines
from campaigns import permissions as perms
from campaigns.models import Scene
from campaigns.permissions import Access
from hitos_site.htmx import HtmxHttpRequest, page_or_fragment, redirect_after, wants_fragment
from systems.aventuras.contests import reactions, services
from systems.aventuras.contests.forms import (
    CancelForm,
    ContestForm,
    ContestRollForm,
    InitiativeForm,
    ReactForm,
    ReactionDeadlineForm,
)
from systems.aventuras.contests.panel import TEMPLATE as PANEL
from systems.aventuras.contests.panel import cancel_prefix, panel_context
from systems.aventuras.models import AventurasContest, AventurasContestant, AventurasReaction
from table.access import campaign_for, may_read_table_roll, scene_for

PAGE = "aventuras/contests/page.html"
REACTIONS = "aventuras/reactions/_card_part.html"


def aventuras_scene(request: HttpRequest, slug: str, scene_id: int, **kwargs) -> tuple[Scene, Access]:
    """``scene_for`` for a Hora de Aventuras campaign (404 for another game's)."""
    scene, access = scene_for(request, slug, scene_id, **kwargs)
    if scene.campaign.system != "aventuras":
        raise Http404
    return scene, access


def _gm(request, slug, scene_id):
    return aventuras_scene(
        request,
        slug,
        scene_id,
        need=perms.can_manage,
        denied=_("Solo la dirección de la partida prepara competiciones, cooperaciones e iniciativa."),
    )


def _player(request, slug, scene_id):
    return aventuras_scene(
        request, slug, scene_id, need=perms.can_play, denied=_("Solo los jugadores y la dirección tiran en la mesa.")
    )


def _url(scene: Scene) -> str:
    return reverse("aventuras:contests", args=[scene.campaign.slug, scene.pk])


def _render(request: HtmxHttpRequest, scene: Scene, access: Access, *, status: int = 200, **extra) -> HttpResponse:
    context = {"campaign": scene.campaign, "scene": scene, "access": access, **panel_context(scene, access, **extra)}
    response = render(request, PANEL if wants_fragment(request) else PAGE, context, status=status)
    patch_vary_headers(response, ("HX-Request",))
    return response


def _done(request: HtmxHttpRequest, scene: Scene, access: Access, error: str = "") -> HttpResponse:
    """After an action: the panel for htmx (with the error), else a message and a redirect."""
    if request.htmx:
        return _render(request, scene, access, error=error)
    if error:
        messages.error(request, error)
    return redirect(_url(scene))


def _message(exc: ValidationError) -> str:
    return " ".join(exc.messages)


def _form_error(form) -> str:
    return " ".join(m for errors in form.errors.values() for m in errors)


@require_safe
def contests(request: HtmxHttpRequest, slug: str, scene_id: int) -> HttpResponse:
    """The scene's competitions, cooperations and initiative order."""
    scene, access = aventuras_scene(request, slug, scene_id)
    return _render(request, scene, access)


@login_required
@require_POST
def contest_create(request: HtmxHttpRequest, slug: str, scene_id: int) -> HttpResponse:
    scene, access = _gm(request, slug, scene_id)
    form = ContestForm(request.POST, characters=list(services.table_characters(scene.campaign)))
    if form.is_valid():
        data = form.cleaned_data
        try:
            services.contest_create(
                scene=scene,
                access=access,
                kind=data["kind"],
                title=data["title"],
                difficulty=data.get("difficulty") or 0,
                sides=[services.Side(c, a, d) for c, a, d in data["sides"]],
            )
        except ValidationError as exc:
            form.add_error(None, exc)
        else:
            return _done(request, scene, access)
    # What was typed comes back with the refusal.
    return _render(request, scene, access, contest_form=form)


@login_required
@require_POST
def contest_cancel(request: HtmxHttpRequest, slug: str, scene_id: int, contest_id: int) -> HttpResponse:
    """The GM calls a contest off and says why (shown to everyone); a refusal
    comes back, on the page or in the panel, with the reason typed."""
    scene, access = _gm(request, slug, scene_id)
    contest = get_object_or_404(AventurasContest, pk=contest_id, scene=scene)
    form = CancelForm(request.POST, prefix=cancel_prefix(contest.pk))
    if form.is_valid():
        try:
            services.contest_cancel(contest=contest, access=access, reason=form.cleaned_data["reason"])
        except ValidationError as exc:
            form.add_error(None, exc)
        else:
            return _done(request, scene, access)
    return _render(request, scene, access, cancel_forms={contest.pk: form}, error=_form_error(form))


@login_required
@require_POST
def contest_roll(request: HtmxHttpRequest, slug: str, scene_id: int, contestant_id: int) -> HttpResponse:
    scene, access = _player(request, slug, scene_id)
    contestant = get_object_or_404(
        AventurasContestant.objects.select_related("contest__campaign", "contest__scene", "character__aventuras"),
        pk=contestant_id,
        contest__scene=scene,
    )
    if not services.controls(access, contestant.character):
        raise PermissionDenied(_("Solo quien lleva a %(name)s tira por él.") % {"name": contestant.character.name})
    form = ContestRollForm(request.POST, character=contestant.character, prefix=f"lado-{contestant.pk}")
    if form.is_valid():
        try:
            services.contest_roll(contestant=contestant, access=access, **form.roll_kwargs())
        except ValidationError as exc:
            form.add_error(None, exc)
        else:
            return _done(request, scene, access)
    return _render(request, scene, access, roll_forms={contestant.pk: form}, error=_form_error(form))


@login_required
@require_POST
def initiative_set(request: HtmxHttpRequest, slug: str, scene_id: int) -> HttpResponse:
    scene, access = _gm(request, slug, scene_id)
    form = InitiativeForm(request.POST, characters=list(services.table_characters(scene.campaign)))
    if form.is_valid():
        try:
            services.initiative_set(scene=scene, access=access, characters=form.chosen())
        except ValidationError as exc:
            form.add_error(None, exc)
        else:
            return _done(request, scene, access)
    return _render(request, scene, access, initiative_form=form)


@login_required
@require_POST
def initiative_clear(request: HtmxHttpRequest, slug: str, scene_id: int) -> HttpResponse:
    scene, access = _gm(request, slug, scene_id)
    try:
        services.initiative_clear(scene=scene, access=access)
    except ValidationError as exc:
        return _done(request, scene, access, _message(exc))
    return _done(request, scene, access)


@login_required
@require_POST
def initiative_tiebreak(request: HtmxHttpRequest, slug: str, scene_id: int) -> HttpResponse:
    scene, access = _player(request, slug, scene_id)
    try:
        services.initiative_tiebreak(scene=scene, access=access)
    except ValidationError as exc:
        return _done(request, scene, access, _message(exc))
    return _done(request, scene, access)


@login_required
@require_POST
def initiative_agree(request: HtmxHttpRequest, slug: str, scene_id: int) -> HttpResponse:
    """A20 «se pongan de acuerdo»: the GM's order for a tie, without dice (the
    choice comes back when refused)."""
    scene, access = _gm(request, slug, scene_id)
    order = request.POST.getlist("orden")
    try:
        services.initiative_agree(scene=scene, access=access, order=order)
    except ValidationError as exc:
        # The panel, or the whole page without htmx, with the refusal and the order chosen.
        return _render(request, scene, access, error=_message(exc), agreed_posted=order)
    return _done(request, scene, access)


# --- reactions -----------------------------------------------------------------------------


def _reaction(request: HttpRequest, slug: str, reaction_id: int) -> tuple[AventurasReaction, Access]:
    """The reaction if the user may read its action (404) and plays (403)."""
    campaign, access = campaign_for(request, slug)
    if campaign.system != "aventuras":
        raise Http404
    reaction = get_object_or_404(
        AventurasReaction.objects.select_related(
            "action__post__scene", "action__scene", "action__character", "target__aventuras"
        ),
        pk=reaction_id,
        action__campaign=campaign,
    )
    reaction.action.campaign = campaign
    if not may_read_table_roll(access, reaction.action):
        raise Http404
    perms_ok = perms.can_play(access)
    if not perms_ok:
        raise PermissionDenied(_("Solo los jugadores y la dirección reaccionan."))
    return reaction, access


def _back(reaction: AventurasReaction) -> str:
    action = reaction.action
    if action.post_id is not None:
        return reverse("campaigns:post-permalink", args=[action.post_id])
    if action.scene_id is not None:
        return action.scene.get_absolute_url()
    return action.campaign.get_absolute_url()


def _reaction_part(
    request: HtmxHttpRequest, reaction: AventurasReaction, access: Access, *, error: str = "", form=None
) -> HttpResponse:
    """The action card's reactions as they are now (htmx), with the refusal and what was typed."""
    from table.models import TableRoll

    action = TableRoll.objects.select_related("first__user", "latest__user", "owner", "character").get(
        pk=reaction.action_id
    )
    action.campaign = access.campaign
    part = reactions.card_reactions([action], access=access).get(action.pk)
    if part is not None and form is not None:
        for row in part["rows"]:
            if row["reaction"].pk == reaction.pk and row.get("can_answer"):
                row["form"] = form
    html = render_to_string(
        REACTIONS,
        {"card": {"table_roll": action, "reactions": part}, "reactions_error": error, "campaign": access.campaign},
        request=request,
    )
    response = HttpResponse(html)
    patch_vary_headers(response, ("HX-Request",))
    return response


def _reaction_done(request: HtmxHttpRequest, reaction, access, error: str = "", form=None) -> HttpResponse:
    if request.htmx:
        return _reaction_part(request, reaction, access, error=error, form=form)
    if error:
        messages.error(request, error)
    return redirect(_back(reaction))


@login_required
@require_POST
def reaction_roll(request: HtmxHttpRequest, slug: str, reaction_id: int) -> HttpResponse:
    reaction, access = _reaction(request, slug, reaction_id)
    if not services.controls(access, reaction.target):
        raise PermissionDenied(_("Solo quien lleva a %(name)s reacciona por él.") % {"name": reaction.target.name})
    form = ReactForm(request.POST, character=reaction.target, prefix=f"reaccion-{reaction.pk}")
    if form.is_valid():
        try:
            reactions.react(
                reaction=reaction, access=access, attribute=form.cleaned_data["attribute"], **form.roll_kwargs()
            )
        except ValidationError as exc:
            form.add_error(None, exc)
        else:
            return _reaction_done(request, reaction, access)
    if not request.htmx:
        context = {"campaign": access.campaign, "reaction": reaction, "form": form, "error": _form_error(form)}
        return render(request, "aventuras/reactions/react.html", context, status=200)
    return _reaction_done(request, reaction, access, _form_error(form), form=form)


@login_required
@require_POST
def reaction_decline(request: HtmxHttpRequest, slug: str, reaction_id: int) -> HttpResponse:
    reaction, access = _reaction(request, slug, reaction_id)
    try:
        reactions.decline(reaction=reaction, access=access)
    except ValidationError as exc:
        return _reaction_done(request, reaction, access, _message(exc))
    return _reaction_done(request, reaction, access)


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def reaction_deadline(request: HtmxHttpRequest, slug: str, reaction_id: int) -> HttpResponse:
    """The direction gives an open reaction of a player's character a date
    to answer by (or moves it); once it passes, the settle page offers
    «No reacciona» (A14)."""
    reaction, access = _reaction(request, slug, reaction_id)
    if not perms.can_manage(access):
        raise PermissionDenied(_("Solo la dirección da plazos."))
    if not reaction.open or reaction.target.is_npc or reaction.action.scene_id is None:
        raise Http404
    current = deadlines.open_for(reactions.DEADLINE_KIND, [reaction.pk]).get(reaction.pk)
    if current is not None:
        current.campaign = access.campaign
    form = ReactionDeadlineForm(request.POST if request.method == "POST" else None, campaign=access.campaign)
    if request.method == "POST" and form.is_valid():
        due_at, remind_before = deadlines.deadline_from(form.cleaned_data)
        try:
            deadlines.set_deadline(
                campaign=access.campaign,
                scene=reaction.action.scene,
                kind=reactions.DEADLINE_KIND,
                target_id=reaction.pk,
                due_at=due_at,
                actor=request.user,
                remind_before=remind_before,
            )
        except ValidationError as exc:
            form.add_error("plazo" if exc.code == "past" else None, exc)
        else:
            messages.success(
                request, _("Plazo dado a la reacción de %(name)s: se le recordará.") % {"name": reaction.target.name}
            )
            return redirect_after(request, _back(reaction))
    context = {
        "campaign": access.campaign,
        "reaction": reaction,
        "form": form,
        "deadline": current,
        "back": _back(reaction),
    }
    return page_or_fragment(request, "aventuras/reactions/deadline.html", "reaction-deadline-form", context)
