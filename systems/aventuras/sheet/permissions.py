"""Who may change a Hora de Aventuras sheet in play (beside ``sheets.permissions``)."""

from __future__ import annotations

from campaigns.permissions import Access
from sheets.models import Character
from sheets.permissions import is_owner


def can_mark(access: Access, character: Character) -> bool:
    """Health levels and states in play: the GM, or the character's owner."""
    return access.is_gm or is_owner(access, character)


def can_set_experience(access: Access, character: Character) -> bool:
    """Experience points: the GM only."""
    return access.is_gm
