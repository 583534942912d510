"""Hero points on the sheet and in the scene (interface for the sheet page and ``system.scene_context``)."""

from __future__ import annotations


def sheet_panel(character, access) -> dict:
    """What the sheet page adds: ``aventuras_heroes_template`` and what it reads."""
    return {}


def scene_panel(scene, access, *, characters) -> dict:
    """What the scene page adds: ``aventuras_balances_template`` and what it reads."""
    return {}
