"""What the GM does with their private feed (``campaigns.feeds.GMFeed``):
renew its address when it may have leaked."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from campaigns import feeds
from campaigns.access import campaign_for
from campaigns.permissions import Access
from hitos_site.htmx import HtmxHttpRequest, redirect_after


def _directs(access: Access) -> bool:
    """The GM's feed is the GM's alone: co-GMs read theirs through their membership."""
    return access.is_owner


@login_required
@require_POST
def gm_feed_rotate(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    campaign, _access = campaign_for(
        request,
        slug,
        need=_directs,
        denied=_("Solo quien dirige la partida tiene este canal; el tuyo está en la página de la partida."),
    )
    feeds.gm_feed_rotate(campaign=campaign)
    messages.success(request, _("Tu canal privado tiene una dirección nueva: la anterior ya no funciona."))
    return redirect_after(request, reverse("campaigns:dashboard", args=[campaign.slug]) + "#canal-privado")
