"""The GM's HITOS rules options page."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods

from campaigns import permissions as perms
from campaigns import services as forum
from campaigns.access import campaign_for
from hitos_site.htmx import HtmxHttpRequest
from systems.hitos.options.forms import CampaignOptionsForm


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def campaign_options(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    campaign, _access = campaign_for(
        request, slug, need=perms.can_manage, denied=_("Solo la dirección de la partida puede hacer esto.")
    )
    form = CampaignOptionsForm(request.POST if request.method == "POST" else None, campaign=campaign)
    if request.method == "POST" and form.is_valid():
        forum.campaign_update(campaign=campaign, rules_options=form.rules_options())
        messages.success(request, _("Opciones guardadas."))
        return redirect("hitos:campaign-options", slug=campaign.slug)
    return render(request, "hitos/campaign_options.html", {"form": form, "campaign": campaign})
