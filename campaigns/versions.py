"""A version number per scene, kept in the cache (Redis when ``REDIS_URL`` is
set, so every web process shares it): it changes whenever what the scene's
page of posts shows changes (a post, its rolls, the moves on them; the apps
register their models with ``track``). The "hay mensajes nuevos" poll sends
back the version it last saw and, when nothing changed, is answered without
reading a single post (``table.views.scene_poll``); readers without an
account get the page of posts rendered once per version.

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
    """Move the scene's version on now and again once the current transaction
    commits: a reader who came between the two saw the new version without
    the change (not yet committed), and what it kept under that version is
    never used after the commit. A rolled-back change only costs a cache miss."""

    def bump() -> None:
        key = _key(scene_id)
        try:
            cache.incr(key)
        except ValueError:  # not in the cache (never asked, or evicted)
            cache.add(key, time.time_ns(), timeout=None)

    bump()
    transaction.on_commit(bump)


def track(model, scene_id_of) -> None:
    """Move the scene's version whenever a row of ``model`` is saved or
    deleted: ``scene_id_of(row)`` names its scene (None: no scene). Called
    from the ``AppConfig.ready()`` of the app that owns the model, for what
    the scene's page of posts shows (posts, their rolls and the moves on
    them)."""
    from django.db.models.signals import post_delete, post_save

    def moved(sender, instance, **kwargs) -> None:
        scene_id = scene_id_of(instance)
        if scene_id is not None:
            scene_changed(scene_id)

    uid = f"scene-version:{model._meta.label}"
    post_save.connect(moved, sender=model, weak=False, dispatch_uid=uid)
    post_delete.connect(moved, sender=model, weak=False, dispatch_uid=uid + ":delete")
