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

import time

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404
from django.utils.safestring import SafeString, mark_safe
from django.views.decorators.http import require_safe

from campaigns import absence_views, fragments, pace, waiting_views
from campaigns import permissions as perms
from campaigns.access import campaign_for
from campaigns.models import Campaign
from campaigns.permissions import Access
from hitos_site.htmx import HtmxHttpRequest, page_or_fragment, wants_fragment

# Where the cached campaign page leaves room for what changes with the clock.
SLOT = "<!--hitos:status-->"

# How long a part with the time left in it is kept at most: its key changes
# every minute, and with the versions of what it shows (a post, a deadline, an
# absence, a member) at once. The rows of the games' waits that move no
# campaign version (a new roll request) show within this time.
CLOCK_SECONDS = 60


def _clocked(name: str, parts: tuple, render) -> SafeString:
    """``render()``'s HTML (a part without forms), kept for this minute under ``parts``."""
    key = fragments.key(name, *parts, int(time.time() // CLOCK_SECONDS))
    kept = fragments.cached(key, lambda: {"html": str(render()), "seconds": CLOCK_SECONDS})
    return mark_safe(kept["html"])  # noqa: S308 (our templates' output)


def _join(parts: list[str]) -> SafeString:
    # Each part is a template's rendering (escaped there) or "".
    return mark_safe("".join(str(part) for part in parts))  # noqa: S308


def campaign_status_html(request: HttpRequest, campaign: Campaign, access: Access) -> SafeString:
    """The campaign page's part: nothing for a reader who is not a member."""
    if not access.is_member:
        return mark_safe("")
    content = fragments.versions(fragments.campaign_scope(campaign.pk), fragments.PEOPLE)
    viewer = fragments.viewer(access.user, access.standing)
    return _join(
        [
            _clocked(
                "campaign-waiting",
                (campaign.pk, *content, viewer),
                lambda: waiting_views.campaign_part(request, campaign, access),
            ),
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
    user = request.user
    if not user.is_authenticated:
        return mark_safe("")
    member, people, ids, campaign_versions = fragments.member_campaigns(user)
    if not ids:
        return mark_safe("")
    return _clocked(
        "home-pending",
        (user.pk, member, people, fragments.digest(ids, campaign_versions)),
        lambda: _join([waiting_views.home_part(request), absence_views.home_part(request)]),
    )


def scene_status_parts(request: HttpRequest, scene, access: Access, **waiting_extra) -> SafeString:
    """The scene's status: whom it waits for (``waiting_extra``: an error or
    a refused form to show there again) and who of its people is away. On
    the scene page (an htmx load above the posts, where a phone must still
    show the first post) it is folded to one line that marks who is away;
    the list of absences is on its own page and the campaign's."""
    parts = [waiting_views.scene_part(request, scene, access, **waiting_extra)]
    if not wants_fragment(request) or waiting_extra:
        parts.append(absence_views.scene_part(request, scene, access))
    return _join(parts)


@login_required
@require_safe
def scene_status(request: HtmxHttpRequest, slug: str, scene_id: int) -> HttpResponse:
    """What this scene waits for and who of its people is away, for its
    members: the scene page loads it (htmx), or it is a page of its own."""
    campaign, access = campaign_for(request, slug, need=lambda a: a.is_member)
    scene = get_object_or_404(perms.visible_scenes(access), pk=scene_id)
    scene.campaign = campaign
    return scene_status_response(request, scene, access)


def scene_status_response(request: HtmxHttpRequest, scene, access: Access, **waiting_extra) -> HttpResponse:
    """The scene's status region: a page of its own, or the fragment htmx swaps."""
    context = {
        "campaign": scene.campaign,
        "scene": scene,
        "access": access,
        "parts": scene_status_parts(request, scene, access, **waiting_extra),
    }
    return page_or_fragment(request, "campaigns/status/scene_status.html", "status", context)
