"""What the table is doing now, around the cached pages: who is away, whom
each scene waits for and until when, the campaign's pace.

These parts change with the clock (an absence starts, a deadline comes near)
as much as with the rows, so they are never kept in a cached fragment: the
campaign page puts them where its cached content leaves a mark (``SLOT``),
the home page and the GM's dashboard render them each time, and the scene
page (cached whole) loads its own through htmx from ``scene_status``, which
is also a page of its own for a browser without JavaScript.

Each feature renders its own part (``absence_views``, ``waiting_views``,
``pace``); this module puts them in order.
"""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404
from django.utils.safestring import SafeString, mark_safe
from django.views.decorators.http import require_safe

from campaigns import absence_views, pace, waiting_views
from campaigns import permissions as perms
from campaigns.access import campaign_for
from campaigns.models import Campaign
from campaigns.permissions import Access
from hitos_site.htmx import HtmxHttpRequest, page_or_fragment

# Where the cached campaign page leaves room for what changes with the clock.
SLOT = "<!--hitos:status-->"


def _join(parts: list[str]) -> SafeString:
    # Each part is a template's rendering (escaped there) or "".
    return mark_safe("".join(str(part) for part in parts))  # noqa: S308


def campaign_status_html(request: HttpRequest, campaign: Campaign, access: Access) -> SafeString:
    """The campaign page's part: nothing for a reader who is not a member."""
    if not access.is_member:
        return mark_safe("")
    return _join(
        [
            waiting_views.campaign_part(request, campaign, access),
            absence_views.campaign_part(request, campaign, access),
            pace.campaign_part(request, campaign, access),
        ]
    )


def fill_campaign_slot(content: str, status_html: str) -> SafeString:
    """The cached campaign page with the status in its slot."""
    return mark_safe(str(content).replace(SLOT, str(status_html), 1))  # noqa: S308


def dashboard_status_html(request: HttpRequest, campaign: Campaign, access: Access) -> SafeString:
    """The GM's dashboard part: deadlines that passed, who is away and who is back."""
    return _join(
        [
            waiting_views.dashboard_part(request, campaign, access),
            absence_views.dashboard_part(request, campaign, access),
        ]
    )


def home_status_html(request: HttpRequest) -> SafeString:
    """The home page's part for a signed-in user: what waits for them."""
    if not request.user.is_authenticated:
        return mark_safe("")
    return _join([waiting_views.home_part(request)])


@login_required
@require_safe
def scene_status(request: HtmxHttpRequest, slug: str, scene_id: int) -> HttpResponse:
    """What this scene waits for and who of its people is away, for its
    members: the scene page loads it (htmx), or it is a page of its own."""
    campaign, access = campaign_for(request, slug, need=lambda a: a.is_member)
    scene = get_object_or_404(perms.visible_scenes(access), pk=scene_id)
    scene.campaign = campaign
    context = {
        "campaign": campaign,
        "scene": scene,
        "access": access,
        "parts": _join(
            [
                waiting_views.scene_part(request, scene, access),
                absence_views.scene_part(request, scene, access),
            ]
        ),
    }
    return page_or_fragment(request, "campaigns/status/scene_status.html", "status", context)
