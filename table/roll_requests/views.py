"""GM roll requests: the GM asks a character for a roll, and may cancel it.

The answer is a post (``table.views.post_create``): the player's next
post as that character rolls what the request says.
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods, require_POST

from campaigns import deadlines
from campaigns import permissions as perms
from hitos_site.htmx import HtmxHttpRequest, page_or_fragment, redirect_after
from sheets.models import Character
from table import systems
from table.access import scene_for
from table.models import RollRequest
from table.roll_requests import services as roll_requests


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def request_create(request: HtmxHttpRequest, slug: str, scene_id: int) -> HttpResponse:
    """The GM asks a character for a roll (characteristic + skill, difficulty
    shown or hidden); the player is notified."""
    scene, access = scene_for(
        request, slug, scene_id, need=perms.can_manage, denied=_("Solo la dirección puede pedir tiradas.")
    )
    system = systems.for_campaign(scene.campaign)
    characters = Character.objects.filter(campaign=scene.campaign).approved().select_related("owner")
    form = (
        system.request_form(
            request.POST if request.method == "POST" else None, characters=system.characters(characters)
        )
        if system
        else None
    )
    if form is None:
        raise Http404
    # When to answer by: the table's part of every game's form.
    form.fields.update(deadlines.deadline_form_fields(scene.campaign))
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        due_at, remind_before = deadlines.deadline_from(data)
        try:
            roll_requests.request_create(
                access=access,
                scene=scene,
                character=data["character"],
                difficulty_hidden=data["difficulty_hidden"],
                purpose=data["purpose"],
                due_at=due_at,
                remind_before=remind_before,
                **system.request_fields(data),
            )
        except ValidationError as exc:
            field = {"skill": "skill", "past": "plazo"}.get(exc.code)
            form.add_error(field, exc)
        else:
            messages.success(
                request, _("Tirada pedida a %(name)s: se le ha avisado.") % {"name": data["character"].name}
            )
            return redirect_after(request, scene.get_absolute_url())
    context = {"campaign": scene.campaign, "scene": scene, "form": form}
    return page_or_fragment(request, "table/request_form.html", "request-form", context)


@login_required
@require_POST
def request_cancel(request: HtmxHttpRequest, request_id: int) -> HttpResponse:
    roll_request = get_object_or_404(RollRequest.objects.select_related("campaign", "scene"), pk=request_id)
    scene, access = scene_for(
        request,
        roll_request.campaign.slug,
        roll_request.scene_id,
        need=perms.can_manage,
        denied=_("Solo la dirección puede pedir tiradas."),
    )
    try:
        roll_requests.request_cancel(access=access, request=roll_request)
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
    else:
        messages.success(request, _("Petición de tirada anulada."))
    return redirect_after(request, scene.get_absolute_url())
