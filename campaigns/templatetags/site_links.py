"""Addresses shared outside the site, built from ``SITE_URL`` (never from the
host the request came in on), and the feeds a page announces.

``{{ path|absolute }}`` is a site path's public address; ``{% gm_feed_url
campaign %}`` the GM's private feed; ``{% feed_links %}`` (in ``base.html``'s
head, outside the frame kept per process: it differs per reader) writes the
``<link rel="alternate">`` autodiscovery of the feeds the reader may use on
the campaign's page and a scene's page. A private feed's address appears
only in the page of the person it belongs to. It reads the campaign, scene
and access the view already loaded, and asks the database nothing.
"""

from __future__ import annotations

from django import template
from django.urls import reverse
from django.utils.html import format_html_join
from django.utils.safestring import SafeString
from django.utils.translation import gettext as _

from campaigns import fragments
from campaigns.feeds import gm_feed_path
from campaigns.models import Campaign, Scene, Visibility
from campaigns.notify import site_url
from campaigns.permissions import Access

register = template.Library()

# The pages that announce their feeds: the campaign's and a scene's.
FEED_PAGES = frozenset({"campaigns:campaign-detail", "table:scene-detail"})


@register.filter
def absolute(path: str) -> str:
    """The public address of a site path (``/invitacion/…`` → ``https://…/invitacion/…``)."""
    return site_url(str(path))


@register.simple_tag
def gm_feed_url(campaign: Campaign) -> str:
    return site_url(gm_feed_path(campaign))


def _reader_access(context: template.Context, request, campaign: Campaign) -> Access:
    """The access the view computed (the scene page hands it over), else the
    one the campaign page kept in the cache for this reader."""
    access = context.get("access")
    if isinstance(access, Access) and access.campaign.pk == campaign.pk:
        return access
    (version,) = fragments.versions(fragments.campaign_scope(campaign.pk))
    return fragments.reader_access(request.user, campaign, version)


def feeds_for(campaign: Campaign, scene: Scene | None, access: Access) -> list[tuple[str, str]]:
    """(title, address) of each feed the reader may follow from the page, the
    most complete first."""
    names = {"campaign": campaign.title}
    found = []
    if access.is_owner:
        found.append((_("«%(campaign)s»: tu canal privado de dirección") % names, gm_feed_path(campaign)))
    elif access.membership is not None:
        path = reverse("campaigns:member-feed", args=[access.membership.feed_token])
        found.append((_("«%(campaign)s»: tu canal privado") % names, path))
    if campaign.visibility == Visibility.PUBLIC:
        if scene is not None and scene.everyone:
            path = reverse("campaigns:scene-feed", args=[campaign.slug, scene.pk])
            found.append((_("«%(scene)s»: mensajes públicos de la escena") % {"scene": scene.title}, path))
        path = reverse("campaigns:campaign-feed", args=[campaign.slug])
        found.append((_("«%(campaign)s»: mensajes públicos") % names, path))
    return [(title, site_url(path)) for title, path in found]


@register.simple_tag(takes_context=True)
def feed_links(context: template.Context) -> SafeString | str:
    request = context.get("request")
    match = getattr(request, "resolver_match", None)
    campaign = context.get("campaign")
    if match is None or match.view_name not in FEED_PAGES or not isinstance(campaign, Campaign):
        return ""
    scene = context.get("scene")
    scene = scene if isinstance(scene, Scene) and scene.campaign_id == campaign.pk else None
    links = feeds_for(campaign, scene, _reader_access(context, request, campaign))
    return format_html_join("\n  ", '<link rel="alternate" type="application/atom+xml" title="{}" href="{}">', links)
