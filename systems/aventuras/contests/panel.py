"""The scene's contests and initiative panel (interface for ``system.scene_context``)."""

from __future__ import annotations


def scene_tools(scene, access) -> dict:
    """What the scene page adds: ``aventuras_contests_template`` and what it reads."""
    return {}
