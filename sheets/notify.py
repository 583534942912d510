"""What the sheets tell people (through the forum's ``campaigns.notify``)."""

from __future__ import annotations

from django.utils.translation import gettext as _

from accounts.models import User
from campaigns import notify
from campaigns.models import Notification


def sheet_submitted(character) -> list[Notification]:
    """Tell the GM and co-GMs that a sheet waits for their review."""
    campaign = character.campaign
    users = User.objects.filter(pk__in=notify.gm_ids(campaign), is_active=True).order_by("pk")

    def text() -> str:
        return _("%(user)s ha enviado la ficha «%(name)s» para que la revises.") % {
            "user": character.owner.public_name,
            "name": character.name,
        }

    return notify.notify_users(
        users, campaign=campaign, kind=Notification.Kind.SHEET, url=character.get_absolute_url(), text=text
    )


def sheet_reviewed(character, *, approved: bool, comment: str) -> list[Notification]:
    """Tell the owner that the GM approved or returned their sheet."""
    values = {"name": character.name, "comment": comment}

    def text() -> str:
        if approved:
            return _("La dirección ha aprobado tu ficha «%(name)s».") % values
        return _("La dirección te ha devuelto la ficha «%(name)s»: %(comment)s") % values

    return notify.notify_users(
        [character.owner],
        campaign=character.campaign,
        kind=Notification.Kind.SHEET,
        url=character.get_absolute_url(),
        text=text,
    )
