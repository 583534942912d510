"""Who may change a Vaesen sheet in play (beside ``sheets.permissions``)."""

from __future__ import annotations

from campaigns.permissions import Access
from sheets.models import Character
from sheets.permissions import is_owner

# The campaign's setting (``Campaign.rules_options``) that lets players mark
# their own conditions, as HITOS's lets them mark their own meters.
PLAYERS_MARK_OWN = "players_mark_own_conditions"


def can_mark(access: Access, character: Character) -> bool:
    """Conditions, critical injuries and Resistencia in play: the GM always;
    the owner of an approved character when the campaign lets players mark
    their own conditions."""
    if access.is_gm:
        return True
    return (
        is_owner(access, character)
        and character.status == Character.Status.APPROVED
        and bool((access.campaign.rules_options or {}).get(PLAYERS_MARK_OWN, False))
    )
