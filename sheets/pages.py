"""What the sheets add to the forum's pages (``campaigns.extensions``): the
campaign page's characters and "Fichas" link, the GM's sheets to review."""

from __future__ import annotations

from django.db.models import Q
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
    linked = access.is_member and _has_sheets(access)
    # One query: the approved characters everyone sees and, for a member, their own in any state.
    shown = Character.objects.filter(campaign=campaign).select_related("owner")
    if linked:
        shown = shown.player_characters().filter(Q(status=Character.Status.APPROVED) | Q(owner_id=access.user.pk))
    else:
        shown = shown.approved()
    rows = list(shown)
    characters = [c for c in rows if c.status == Character.Status.APPROVED]
    own = [c for c in rows if linked and c.owner_id == access.user.pk]
    links = [(_("Fichas"), reverse("sheets:sheet-list", args=[campaign.slug]))] if linked else []
    values = {
        "characters": characters,
        "linked": linked,
        "own_characters": own,
        # A player without a character yet is asked to create one (it goes the moment they do).
        "offer_creation": linked and access.is_player and not own,
    }
    return Additions(links=links, panels=[("sheets/_campaign_characters.html", values)])


def dashboard(request: HttpRequest, access: Access) -> Additions | None:
    if not _has_sheets(access):
        return None
    campaign = access.campaign
    pending = Character.objects.filter(campaign=campaign).submitted().select_related("owner", "campaign")
    return Additions(
        links=[(_("Fichas"), reverse("sheets:sheet-list", args=[campaign.slug]))],
        panels=[("sheets/_pending.html", {"pending_sheets": pending})],
    )
