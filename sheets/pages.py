"""What the sheets add to the forum's pages (``campaigns.extensions``): the
campaign page's characters and "Fichas" link, the GM's sheets to review."""

from __future__ import annotations

from django.http import HttpRequest
from django.urls import reverse
from django.utils.translation import gettext as _

from campaigns.extensions import Additions
from campaigns.permissions import Access
from sheets import kinds
from sheets.models import Character


def _has_sheets(access: Access) -> bool:
    return kinds.has_sheets(access.campaign)


def campaign_page(request: HttpRequest, access: Access) -> Additions:
    campaign = access.campaign
    characters = list(Character.objects.filter(campaign=campaign).approved().select_related("owner"))
    linked = access.is_member and _has_sheets(access)
    links = [(_("Fichas"), reverse("sheets:sheet-list", args=[campaign.slug]))] if linked else []
    return Additions(
        links=links,
        panels=[("sheets/_campaign_characters.html", {"characters": characters, "linked": linked})],
    )


def dashboard(request: HttpRequest, access: Access) -> Additions | None:
    if not _has_sheets(access):
        return None
    campaign = access.campaign
    pending = Character.objects.filter(campaign=campaign).submitted().select_related("owner", "campaign")
    return Additions(
        links=[(_("Fichas"), reverse("sheets:sheet-list", args=[campaign.slug]))],
        panels=[("sheets/_pending.html", {"pending_sheets": pending})],
    )
