"""The GM's Vaesen options page (``Campaign.rules_options``)."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse
from django.shortcuts import redirect
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods

from campaigns import permissions as perms
from campaigns import services as forum
from campaigns.access import campaign_for
from hitos_site.htmx import HtmxHttpRequest, page_or_fragment
from systems.vaesen.options.forms import VaesenOptionsForm


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def campaign_options(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    """Only the GM of a Vaesen campaign; a refused form keeps what was typed."""
    campaign, _access = campaign_for(
        request, slug, need=perms.can_manage, denied=_("Solo la dirección de la partida puede hacer esto.")
    )
    if campaign.system != "vaesen":
        raise Http404
    form = VaesenOptionsForm(request.POST if request.method == "POST" else None, campaign=campaign)
    if request.method == "POST" and form.is_valid():
        forum.campaign_update(campaign=campaign, rules_options=form.rules_options())
        messages.success(request, _("Opciones guardadas."))
        return redirect("vaesen:campaign-options", slug=campaign.slug)
    return page_or_fragment(
        request, "vaesen/campaign_options.html", "options-form", {"form": form, "campaign": campaign}
    )
