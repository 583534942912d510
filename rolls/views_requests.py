"""GM roll requests: the GM asks a character for a roll, and may cancel it.

The answer is a post (``campaigns.views.post_create``): the player's next
post as that character rolls what the request says.
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.cache import patch_vary_headers
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods, require_POST
from django_htmx.http import HttpResponseClientRedirect
from django_htmx.middleware import HtmxDetails

from campaigns import permissions as perms
from campaigns.forms import RollRequestForm
from campaigns.models import Campaign, Scene
from campaigns.permissions import Access, campaign_access
from rolls import requests as roll_requests
from rolls.models import RollRequest
from sheets.models import Character


class HtmxHttpRequest(HttpRequest):
    htmx: HtmxDetails


def _scene_for_gm(request: HttpRequest, slug: str, scene_id: int) -> tuple[Scene, Access]:
    """The scene, for the campaign's direction: 404 for those who cannot see
    it, 403 for members who are not GMs."""
    campaign = get_object_or_404(Campaign.objects.select_related("gm"), slug=slug)
    access = campaign_access(request.user, campaign)
    if not perms.can_view_campaign(access):
        raise Http404
    scene = get_object_or_404(perms.visible_scenes(access), pk=scene_id)
    scene.campaign = campaign
    if not access.is_gm:
        raise PermissionDenied(_("Solo la dirección puede pedir tiradas."))
    return scene, access


def _to_scene(request: HtmxHttpRequest, scene: Scene) -> HttpResponse:
    url = scene.get_absolute_url()
    if request.htmx:
        return HttpResponseClientRedirect(url)
    return redirect(url)


@login_required
@require_http_methods(["GET", "POST"])
def request_create(request: HtmxHttpRequest, slug: str, scene_id: int) -> HttpResponse:
    """The GM asks a character for a roll (characteristic + skill, difficulty
    shown or hidden); the player is notified."""
    scene, access = _scene_for_gm(request, slug, scene_id)
    characters = Character.objects.filter(campaign=scene.campaign).approved().select_related("owner")
    form = RollRequestForm(request.POST if request.method == "POST" else None, characters=characters)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            roll_requests.request_create(
                access=access,
                scene=scene,
                character=data["character"],
                characteristic=data["characteristic"],
                skill=data["skill"],
                modifier=data["modifier"],
                difficulty=data["difficulty"],
                difficulty_hidden=data["difficulty_hidden"],
                purpose=data["purpose"],
            )
        except ValidationError as exc:
            form.add_error("skill" if exc.code == "skill" else None, exc)
        else:
            messages.success(
                request, _("Tirada pedida a %(name)s: se le ha avisado.") % {"name": data["character"].name}
            )
            return _to_scene(request, scene)
    context = {"campaign": scene.campaign, "scene": scene, "form": form}
    wants_fragment = request.htmx and not request.htmx.history_restore_request
    response = render(
        request, "rolls/request_form.html#request-form" if wants_fragment else "rolls/request_form.html", context
    )
    patch_vary_headers(response, ("HX-Request",))
    return response


@login_required
@require_POST
def request_cancel(request: HtmxHttpRequest, request_id: int) -> HttpResponse:
    roll_request = get_object_or_404(RollRequest.objects.select_related("campaign", "scene"), pk=request_id)
    scene, access = _scene_for_gm(request, roll_request.campaign.slug, roll_request.scene_id)
    try:
        roll_requests.request_cancel(access=access, request=roll_request)
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
    else:
        messages.success(request, _("Petición de tirada anulada."))
    return _to_scene(request, scene)
