"""What the roll log adds to the forum (``campaigns.extensions``,
``campaigns.signals``): its epoch opens with the campaign, and the campaign
page links to the free roll and the log."""

from __future__ import annotations

from django.http import HttpRequest
from django.urls import reverse
from django.utils.translation import gettext as _

from campaigns import permissions as perms
from campaigns.extensions import Additions
from campaigns.permissions import Access
from rolls import services


def campaign_created(sender, *, campaign, **kwargs) -> None:
    services.log_open(campaign=campaign)


def campaign_page(request: HttpRequest, access: Access) -> Additions:
    slug = access.campaign.slug
    links = []
    if perms.can_play(access):
        links.append((_("Tirada libre"), reverse("rolls:free-roll", args=[slug])))
    return Additions(links=links, panels=[("rolls/_campaign_log_links.html", {})])
