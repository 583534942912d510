"""Secret rolls of the GM in a scene, and their reveal (``systems.hitos.secret.services``)."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods, require_POST

from campaigns import permissions as perms
from campaigns.permissions import campaign_access
from hitos_site.htmx import HtmxHttpRequest, page_or_fragment
from rolls import services
from rolls.models import CampaignLog, RollEntry
from rolls.permissions import can_read_roll
from sheets.models import Character
from systems.hitos.secret import services as secret
from systems.hitos.secret.forms import SecretRollForm
from table.access import scene_for

DENIED = _("Solo la dirección de la partida puede hacer tiradas secretas.")


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def secret_roll_create(request: HtmxHttpRequest, slug: str, scene_id: int) -> HttpResponse:
    scene, access = scene_for(request, slug, scene_id, need=perms.can_manage, denied=DENIED)
    log = services.log_open(campaign=scene.campaign)
    characters = Character.objects.filter(campaign=scene.campaign).order_by("kind", "name", "pk")
    if request.method == "POST":
        form = SecretRollForm(request.POST, characters=characters)
        if form.is_valid():
            data = form.cleaned_data
            seeds = {"client_seed": data["client_seed"] or None, "seen": data["seen"] or None}
            try:
                if data["notation"]:
                    entry = secret.secret_free_roll(
                        scene=scene, user=request.user, notation=data["notation"], purpose=data["purpose"], **seeds
                    )
                else:
                    entry = secret.secret_check_roll(
                        scene=scene,
                        user=request.user,
                        purpose=data["purpose"],
                        character=data["character"],
                        characteristic=data["characteristic"],
                        skill=data["skill"],
                        free_modifier=data["free_modifier"],
                        difficulty=data["difficulty"],
                        **seeds,
                    )
            except ValidationError as exc:
                form.add_error("notation" if data["notation"] else None, exc)
            else:
                messages.success(request, _("Tirada secreta hecha: solo tú la ves hasta que la reveles."))
                return redirect(entry)
        # Nothing was rolled: the same client seed may be sent again, with the head this page now shows.
        form.data = form.data.copy()
        form.data["seen"] = CampaignLog.objects.get(campaign=scene.campaign).head_hash
    else:
        form = SecretRollForm(characters=characters, initial={"seen": log.head_hash})
    context = {"campaign": scene.campaign, "scene": scene, "form": form}
    return page_or_fragment(request, "hitos/secret_roll_form.html", "secret-form", context)


@login_required
@require_POST
def secret_roll_reveal(request: HtmxHttpRequest, permalink: str) -> HttpResponse:
    entry = get_object_or_404(RollEntry.objects.select_related("campaign", "scene"), permalink=permalink)
    access = campaign_access(request.user, entry.campaign)
    # Outsiders, and members who may not see the roll, learn nothing about it.
    if not perms.can_view_campaign(access) or not can_read_roll(access, entry):
        raise Http404
    if not access.is_gm:
        raise PermissionDenied(_("Solo la dirección puede revelar sus tiradas secretas."))
    try:
        secret.secret_roll_reveal(entry=entry, user=request.user, access=access)
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
    else:
        messages.success(request, _("Tirada revelada: ahora la ve todo el que lee la escena."))
    return redirect(entry)
