"""A version number per scene, kept in the cache (Redis when ``REDIS_URL`` is
set, so every web process shares it): it changes whenever a post is
published in the scene. The "hay mensajes nuevos" poll sends back the
version it last saw and, when nothing changed, is answered without reading
a single post (``table.views.scene_poll``).

A version starts at the clock's nanoseconds, so one rebuilt after the cache
lost it never matches a version handed out before.
"""

from __future__ import annotations

import time

from django.core.cache import cache
from django.db import transaction


def _key(scene_id: int) -> str:
    return f"scene-version:{scene_id}"


def scene_version(scene_id: int) -> int:
    key = _key(scene_id)
    version = cache.get(key)
    if version is None:
        cache.add(key, time.time_ns(), timeout=None)
        version = cache.get(key)
    return version


def scene_changed(scene_id: int) -> None:
    """Move the scene's version on once the current transaction commits (a
    rolled-back post changes nothing)."""

    def bump() -> None:
        key = _key(scene_id)
        try:
            cache.incr(key)
        except ValueError:  # not in the cache (never asked, or evicted)
            cache.add(key, time.time_ns(), timeout=None)

    transaction.on_commit(bump)
