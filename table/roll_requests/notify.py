"""What a GM roll request tells the player (through ``campaigns.notify``)."""

from __future__ import annotations

from django.urls import reverse
from django.utils.translation import gettext as _

from campaigns import notify
from campaigns.models import Notification


def roll_requested(request) -> list[Notification]:
    """Tell a character's player that the GM asks them for a roll."""
    character = request.character
    values = {"name": character.name, "purpose": request.purpose}

    def text() -> str:
        return _("La dirección pide una tirada a %(name)s: %(purpose)s.") % values

    url = reverse("table:scene-detail", args=[request.campaign.slug, request.scene_id]) + "#escribir"
    return notify.notify_users(
        [character.owner], campaign=request.campaign, kind=Notification.Kind.REQUEST, url=url, text=text
    )
