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
from collections.abc import Callable

from django.core.cache import cache
from django.db import transaction

# How long a fact kept under a scene's version may be served at most (a
# tracked change moves the version, and so the key, at once).
FACT_SECONDS = 300
_MISSING = object()


def _key(scene_id: int) -> str:
    return f"scene-version:{scene_id}"


def scene_version(scene_id: int) -> int:
    key = _key(scene_id)
    version = cache.get(key)
    if version is None:
        cache.add(key, time.time_ns(), timeout=None)
        version = cache.get(key)
    return version


def scene_fact[T](scene_id: int, name: str, compute: Callable[[], T]) -> T:
    """A fact about what the scene's page shows (``name``: whether it has
    secret rolls …), kept under the scene's version and ``compute()``d when
    not known: right as long as every change to it moves the version (its
    rows are ``track``ed)."""
    key = f"scene-fact:{scene_id}:{scene_version(scene_id)}:{name}"
    value = cache.get(key, _MISSING)
    if value is _MISSING:
        value = compute()
        cache.set(key, value, FACT_SECONDS)
    return value


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
    deleted: ``scene_id_of(row)`` names its scene (None: no scene). A row
    saved whole (as the admin does) may have moved to another scene: the
    scene it leaves moves too. Called from the ``AppConfig.ready()`` of the
    app that owns the model, for what the scene's page of posts shows
    (posts, their rolls and the moves on them)."""
    from django.db.models.signals import post_delete, post_save, pre_save

    def leaving(sender, instance, raw=False, update_fields=None, **kwargs) -> None:
        # A targeted update (the services' ``update_fields``) keeps the row where it is.
        if raw or update_fields is not None or instance._state.adding or instance.pk is None:
            return
        stored = sender._base_manager.filter(pk=instance.pk).first()
        instance.__dict__[_LEFT] = scene_id_of(stored) if stored is not None else None

    def moved(sender, instance, **kwargs) -> None:
        for scene_id in {scene_id_of(instance), instance.__dict__.pop(_LEFT, None)} - {None}:
            scene_changed(scene_id)

    uid = f"scene-version:{model._meta.label}"
    pre_save.connect(leaving, sender=model, weak=False, dispatch_uid=uid + ":before")
    post_save.connect(moved, sender=model, weak=False, dispatch_uid=uid)
    post_delete.connect(moved, sender=model, weak=False, dispatch_uid=uid + ":delete")


# Where a row saved whole was before (``track``), between its two signals.
_LEFT = "_scene_version_left"
