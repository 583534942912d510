"""What the table does when the forum tells it something (``campaigns.signals``)."""

from __future__ import annotations

from table import systems


def scene_created(sender, *, scene, actor, **kwargs) -> None:
    """Whoever starts a scene, the campaign's game hears of it and ends
    what lasted a scene."""
    system = systems.for_campaign(scene.campaign)
    if system is not None:
        system.scene_started(scene, actor=actor)
