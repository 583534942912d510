"""Rendered HTML the scene page keeps in the cache (Redis when ``REDIS_URL``
is set, so every web process shares it) and serves again, with holes for
what belongs to one request.

A fragment is rendered once with a fresh random token (``Holes``) and kept
as its text split at the holes: ``{% csrf_token %}`` renders one (the
request's own token goes there), and the caller makes more where another
cached part or a viewer's own part goes (a roll card's actions). The token
is unguessable and made after every text in the fragment was written, so
nothing a user typed can open a hole.

A fragment's key is made of everything its HTML depends on: what the
caller knows changes it (a post's state, a scene's version, the viewer's
rights on it), the language and the time zone (``key``). ``SECONDS`` bounds
what no key can see, such as a renamed user or character.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from django.core.cache import cache
from django.db.models import Model
from django.utils import timezone
from django.utils.translation import get_language

# How long a fragment may be served at most (a change it shows moves its key at once).
SECONDS = 300

CSRF = "csrf"

Parts = tuple[str, ...]


@dataclass(frozen=True)
class Holes:
    """The markers of one rendering: ``holes(name)`` is where ``name`` goes."""

    token: str

    def __call__(self, name: str) -> str:
        return f"{self.token}{name}{self.token}"

    @property
    def csrf(self) -> str:
        """What ``{% csrf_token %}`` is given to render (as ``csrf_token``)."""
        return self(CSRF)

    def split(self, html: str) -> Parts:
        """``html`` as its text and its holes' names, alternately (text first)."""
        return tuple(html.split(self.token))


def new_holes() -> Holes:
    return Holes(secrets.token_hex(12))


def fill(parts: Parts, fillers: Mapping[str, str]) -> str:
    """The fragment with each hole filled (a hole nobody fills stays empty)."""
    return "".join(part if i % 2 == 0 else fillers.get(part, "") for i, part in enumerate(parts))


def digest(*parts: Any) -> str:
    """A short stable name for what a key depends on: plain values (strings,
    numbers, dates, tuples of them, dataclasses of them)."""
    return hashlib.blake2b(repr(parts).encode(), digest_size=12).hexdigest()


def plain(context: Mapping[str, Any]) -> tuple:
    """A template context as plain values for ``digest``: a model instance
    counts as its model and primary key (a list of them, as theirs)."""
    return tuple(sorted((name, _plain(value)) for name, value in context.items()))


def _plain(value: Any) -> Any:
    if isinstance(value, Model):
        return (value._meta.label, value.pk)
    if isinstance(value, list | tuple):
        return tuple(_plain(v) for v in value)
    if isinstance(value, Mapping):
        return plain(value)
    return value


def key(name: str, *parts: Any) -> str:
    """The cache key of fragment ``name``: its parts, the language and the time zone."""
    return f"fragment:{name}:{digest(*parts, get_language(), timezone.get_current_timezone_name())}"


def many(keys: Iterable[str]) -> dict[str, Parts]:
    """The fragments the cache holds of ``keys``, in one round trip."""
    return cache.get_many(list(keys))


def keep(fragments: Mapping[str, Parts]) -> None:
    if fragments:
        cache.set_many(dict(fragments), SECONDS)


def cached(cache_key: str, render: Callable[[Holes], str]) -> Parts:
    """The fragment kept under ``cache_key``, or ``render(holes)``'s, kept now."""
    parts = cache.get(cache_key)
    if parts is None:
        holes = new_holes()
        parts = holes.split(render(holes))
        cache.set(cache_key, parts, SECONDS)
    return parts


def rows(instances: Iterable[Model]) -> tuple:
    """Model instances as plain values for ``digest``: each one's loaded
    columns and the rows loaded with it (``select_related``,
    ``prefetch_related``), all of them: what a fragment rendered from them
    may show."""
    return tuple(_row(instance, set()) for instance in instances)


def _row(instance: Model | None, path: set[int]) -> tuple | None:
    if instance is None:
        return None
    if id(instance) in path:  # the way back from a prefetched row
        return (instance._meta.label, instance.pk)
    path = path | {id(instance)}
    loaded = tuple(
        (f.attname, _value(instance.__dict__[f.attname]))
        for f in instance._meta.concrete_fields
        if f.attname in instance.__dict__
    )
    related = tuple(sorted((name, _row(value, path)) for name, value in instance._state.fields_cache.items()))
    prefetched = tuple(
        sorted(
            (name, tuple(_row(row, path) for row in queryset))
            for name, queryset in getattr(instance, "_prefetched_objects_cache", {}).items()
        )
    )
    return (instance._meta.label, loaded, related, prefetched)


def _value(value: Any) -> Any:
    # A binary column reads as a memoryview, whose repr is its address.
    return bytes(value) if isinstance(value, memoryview) else value


def form_signature(form, *, besides: Iterable[str] = ()) -> tuple:
    """What an unbound form renders from: each field's kind, label, help,
    initial value, choices and widget attributes (a form with errors is
    never cached), but for the initial values of the fields ``besides``
    (each request fills those in). A model choice field's choices cost it a
    query."""
    fields = []
    for name, field in form.fields.items():
        widget = field.widget
        fields.append(
            (
                name,
                type(field).__name__,
                type(widget).__name__,
                str(field.label),
                str(field.help_text),
                field.required,
                field.disabled,
                None if name in besides else repr(form.get_initial_for_field(field, name)),
                # A choice field's widget shows the field's choices; a plain
                # field's widget may have its own (radio buttons).
                _choices(field.choices if hasattr(field, "choices") else getattr(widget, "choices", None)),
                repr(sorted(widget.attrs.items())),
            )
        )
    return (type(form).__name__, form.prefix, tuple(fields))


def _choices(choices) -> tuple | None:
    if choices is None:
        return None
    return tuple(
        (str(value), _choices(label) if isinstance(label, list | tuple) else str(label)) for value, label in choices
    )
