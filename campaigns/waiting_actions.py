"""The direction's actions on whose turn it is and the deadlines: give a
scene a deadline, withdraw one, settle one that passed, nudge a member.
Each answers htmx with the scene's status region again
(``campaigns.status.scene_status_response``) or redirects to it."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_http_methods, require_POST
from django_htmx.http import reswap, retarget

from campaigns import deadlines, extensions, status, waiting
from campaigns import permissions as perms
from campaigns.access import campaign_for
from campaigns.forms_waiting import NudgeForm, SceneDeadlineForm, SettleForm
from campaigns.models import Deadline, Scene
from campaigns.permissions import Access
from campaigns.waiting_views import scene_context
from hitos_site.htmx import HtmxHttpRequest, form_again, page_or_fragment, redirect_after, wants_fragment

DIRECTION_ONLY = gettext_lazy("Solo la dirección de la partida puede hacer esto.")


# --- the direction's actions ---------------------------------------------------------------


def _scene_for(request: HttpRequest, slug: str, scene_id: int) -> tuple[Scene, Access]:
    campaign, access = campaign_for(request, slug, need=perms.can_manage, denied=DIRECTION_ONLY)
    scene = get_object_or_404(perms.visible_scenes(access), pk=scene_id)
    scene.campaign = campaign
    return scene, access


def _deadline_for(request: HttpRequest, slug: str, deadline_id: int) -> tuple[Deadline, Access]:
    campaign, access = campaign_for(request, slug, need=perms.can_manage, denied=DIRECTION_ONLY)
    deadline = get_object_or_404(Deadline.objects.select_related("scene"), pk=deadline_id, campaign=campaign)
    deadline.campaign = deadline.scene.campaign = campaign
    return deadline, access


def _status_url(scene: Scene) -> str:
    return reverse("campaigns:scene-status", args=[scene.campaign.slug, scene.pk])


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def scene_deadline(request: HtmxHttpRequest, slug: str, scene_id: int) -> HttpResponse:
    """Give the scene a deadline or move it (the direction)."""
    scene, access = _scene_for(request, slug, scene_id)
    if request.method != "POST":
        context = scene_context(request, scene, access)
        return page_or_fragment(request, "campaigns/deadlines/scene_deadline.html", "deadline-form", context)
    form = SceneDeadlineForm(request.POST, campaign=scene.campaign)
    if form.is_valid():
        due_at, remind_before = deadlines.deadline_from(form.cleaned_data)
        try:
            deadlines.set_deadline(
                campaign=scene.campaign,
                scene=scene,
                kind=deadlines.SCENE,
                target_id=scene.pk,
                due_at=due_at,
                actor=request.user,
                remind_before=remind_before,
            )
        except ValidationError as exc:
            form.add_error("plazo", exc)
    if form.is_valid():
        if request.htmx:
            return status.scene_status_response(request, scene, access, open=True)
        messages.success(request, _("Plazo guardado."))
        return redirect(_status_url(scene))
    context = scene_context(request, scene, access, form=form)
    if request.htmx:
        # Shown again inside the status region, so it posts through htmx again.
        context["in_status"] = True
        response = page_or_fragment(request, "campaigns/deadlines/scene_deadline.html", "deadline-form", context)
        return form_again(response, f"#plazo-escena-{scene.pk}")
    return page_or_fragment(request, "campaigns/deadlines/scene_deadline.html", "deadline-form", context)


@login_required
@require_POST
def deadline_withdraw(request: HtmxHttpRequest, slug: str, deadline_id: int) -> HttpResponse:
    """Withdraw a deadline (the direction), with its record and the
    awaited members told (``deadlines.deadline_withdraw``)."""
    deadline, access = _deadline_for(request, slug, deadline_id)
    error = ""
    try:
        deadlines.deadline_withdraw(deadline=deadline, actor=request.user)
    except ValidationError as exc:
        error = " ".join(exc.messages)
    if request.POST.get("volver") == "direccion":
        if error:
            messages.error(request, error)
        else:
            messages.success(request, _("Plazo retirado."))
        return redirect_after(request, reverse("campaigns:dashboard", args=[slug]))
    if request.htmx:
        return status.scene_status_response(request, deadline.scene, access, error=error, open=True)
    if error:
        messages.error(request, error)
    else:
        messages.success(request, _("Plazo retirado."))
    return redirect(_status_url(deadline.scene))


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def deadline_settle(request: HtmxHttpRequest, slug: str, deadline_id: int) -> HttpResponse:
    """Decide what happens with a deadline that passed (the direction):
    what its kind offers, more time, or withdrawing it. Before it passes
    the page says so and offers only moving or withdrawing it."""
    deadline, access = _deadline_for(request, slug, deadline_id)
    kind = extensions.deadline_kind(deadline.kind)
    form = None
    error = ""
    if deadline.is_open:
        form = SettleForm(request.POST if request.method == "POST" else None, deadline=deadline, actor=request.user)
    elif request.method == "POST":
        error = _("Este plazo ya está resuelto o retirado.")
    if request.method == "POST" and form is not None and form.is_valid():
        choice = form.cleaned_data["choice"]
        try:
            if choice == deadlines.MORE_TIME:
                due_at, remind_before = deadlines.deadline_from(form.cleaned_data)
                deadlines.deadline_extend(
                    deadline=deadline, due_at=due_at, remind_before=remind_before, actor=request.user
                )
                done = _("Plazo ampliado.")
            elif choice == deadlines.WITHDRAW:
                deadlines.deadline_withdraw(deadline=deadline, actor=request.user)
                done = _("Plazo retirado.")
            else:
                deadlines.deadline_settle(
                    deadline=deadline,
                    key=choice,
                    actor=request.user,
                    client_seed=form.cleaned_data["client_seed"] or None,
                )
                done = _("Plazo resuelto.")
        except ValidationError as exc:
            error = " ".join(exc.messages)
        else:
            messages.success(request, done)
            return redirect_after(request, reverse("campaigns:dashboard", args=[slug]))
    if error:
        deadline.refresh_from_db(fields=["settled_at", "cancelled_at", "settlement", "due_at"])
    context = {
        "campaign": deadline.campaign,
        "deadline": deadline,
        "kind_label": kind.label() if kind else deadline.kind,
        "target_url": kind.url(deadline) if kind else deadline.scene.get_absolute_url(),
        "form": form if deadline.is_open else None,
        "not_due": deadline.is_open and deadline.due_at > timezone.now(),
        # In the campaign's zone, named, as the deadline's own line.
        "settled_when": (
            deadlines.when_text(deadline.settled_at, deadlines.campaign_zone(deadline.campaign))
            if deadline.settled_at
            else ""
        ),
        "error": error,
    }
    response = page_or_fragment(request, "campaigns/deadlines/settle.html", "deadline-settle", context)
    if request.method == "POST" and wants_fragment(request):
        return form_again(response, f"#resolver-plazo-{deadline.pk}")
    return response


@login_required
@require_POST
def nudge(request: HtmxHttpRequest, slug: str, scene_id: int) -> HttpResponse:
    """Remind one awaited member that the scene waits for them (the
    direction; once per scene and member every 12 hours)."""
    scene, access = _scene_for(request, slug, scene_id)
    form = NudgeForm(request.POST, campaign=scene.campaign)
    member = None
    if not form.is_valid():
        error = " ".join(form.errors["user"])
    else:
        member = form.cleaned_data["user"]
        error = ""
        try:
            waiting.nudge_send(scene=scene, user=member, actor=request.user)
        except ValidationError as exc:
            error = " ".join(exc.messages)
    if request.htmx and member is not None:
        context = scene_context(request, scene, access, error=error)
        row = next((row for row in context["rows"] if row.user.pk == member.pk), None)
        if row is not None:
            context.update({"row": row, "row_error": error})
            return render(request, "campaigns/waiting/scene.html#awaited-row", context)
    if request.htmx:
        # The button targets the member's row; with no row to put back (they
        # are no longer awaited, or the member is not valid) the whole
        # status region replaces the region, not the row.
        response = status.scene_status_response(request, scene, access, error=error, open=True)
        return reswap(retarget(response, "#estado-escena"), "outerHTML")
    if error:
        messages.error(request, error)
    else:
        messages.success(request, _("Toque enviado a %(name)s.") % {"name": member.public_name})
    return redirect(_status_url(scene))
