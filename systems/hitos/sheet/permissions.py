"""Who may change a HITOS sheet in play (beside ``sheets.permissions``)."""

from __future__ import annotations

from campaigns.permissions import Access
from sheets.models import Character
from sheets.permissions import is_owner
from systems.hitos.campaign import table_setting


def can_mark(access: Access, character: Character) -> bool:
    """Meters, drama points and aspects in play: the GM always; the owner of an
    approved character when the campaign lets players mark their own meters."""
    if access.is_gm:
        return True
    return (
        is_owner(access, character)
        and character.status == Character.Status.APPROVED
        and table_setting(access.campaign, "players_mark_own_meters")
    )
