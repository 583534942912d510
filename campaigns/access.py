"""The access helper every app's views start from: the campaign if the user
may see it (404 otherwise), and, when a ``need`` is given (a predicate on the
``Access``: ``perms.can_manage``, ``perms.can_play`` …), a 403 with
``denied`` as the message for a member it refuses."""

from __future__ import annotations

from collections.abc import Callable

from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest
from django.shortcuts import get_object_or_404
from django.utils.translation import gettext as _

from campaigns import permissions as perms
from campaigns.models import Campaign
from campaigns.permissions import Access, campaign_access

Need = Callable[[Access], bool]
SAFE_METHODS = ("GET", "HEAD", "OPTIONS")


def require(access: Access, need: Need | None, denied: str | None) -> None:
    """403 with ``denied`` when ``need`` refuses the user."""
    if need is not None and not need(access):
        raise PermissionDenied(denied)


def campaign_for(
    request: HttpRequest, slug: str, *, need: Need | None = None, denied: str | None = None
) -> tuple[Campaign, Access]:
    """The campaign if the user may see it (404), and ``need`` allows (403);
    a read-only copy takes no write, whatever the view (403)."""
    campaign = get_object_or_404(Campaign.objects.select_related("gm"), slug=slug)
    access = campaign_access(request.user, campaign)
    if not perms.can_view_campaign(access):
        raise Http404
    if request.method not in SAFE_METHODS and not perms.writable(access):
        raise PermissionDenied(_("Esta partida es una copia de solo lectura: no se puede cambiar nada en ella."))
    require(access, need, denied)
    return campaign, access
