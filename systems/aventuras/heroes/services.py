"""Hero point moves that are not rolls (A21, A23, A25–A28)."""

from __future__ import annotations


def scene_started(scene, *, actor) -> None:
    """A27 — a new scene ends the states "por el morro" of the last one."""
