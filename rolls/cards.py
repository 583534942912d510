"""The roll card's context: one partial (``rolls/_roll_card.html``) shows a
roll in a post, on its permalink page and in the campaign's roll log."""

from __future__ import annotations

from typing import Any

from rolls.models import RollEntry, TableRoll


def card_context(entry: RollEntry, *, table_roll: TableRoll | None = None, user=None) -> dict[str, Any]:
    """What ``rolls/_roll_card.html`` needs for ``entry`` (a roll's latest
    version, or any version on the permalink page)."""
    signed = entry.entry
    return {
        "entry": entry,
        "signed_entry": signed,
        "game": signed.get("game") or {},
        "table_roll": table_roll,
        "user": user,
    }
