"""Which game systems have sheets, and the pages each one shows.

The character core (``sheets.models.Character``) is shared; what a sheet
holds beyond it belongs to the campaign's game system, which registers a
``SheetKind`` from its ``AppConfig.ready()``. The sheet addresses stay the
same for every system (``sheets:sheet-detail`` …): ``sheets.views.system_page``
finds the campaign, asks its system's kind for the page and calls it with the
campaign already loaded. A campaign whose system has no sheets gets 404 there,
and no "Fichas" link.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from django.core.exceptions import ImproperlyConfigured
from django.http import HttpResponse

# The pages a system may serve at the shared sheet addresses (``sheets/urls.py``).
PAGES = (
    "list",
    "create",
    "npc-create",
    "import",
    "detail",
    "edit",
    "notes",
    "submit",
    "review",
    "print",
    "export",
)

# page(request, campaign, **url_kwargs) -> HttpResponse
Page = Callable[..., HttpResponse]


@dataclass(frozen=True)
class SheetKind:
    key: str  # the game system's key (``Campaign.system``)
    pages: Mapping[str, Page]
    # The system's own kinds of ``SheetEvent`` (value, label), beside the core's.
    events: tuple[tuple[str, str], ...] = ()


_kinds: dict[str, SheetKind] = {}


def register(kind: SheetKind) -> None:
    unknown = set(kind.pages) - set(PAGES)
    if unknown:
        raise ImproperlyConfigured(f"{kind.key}: unknown sheet pages {sorted(unknown)}")
    if kind.key in _kinds and _kinds[kind.key] != kind:
        raise ImproperlyConfigured(f"Two sheet kinds for the system {kind.key!r}")
    _kinds[kind.key] = kind


def get(system: str) -> SheetKind | None:
    return _kinds.get(system)


def has_sheets(campaign) -> bool:
    return campaign.system in _kinds


def event_choices() -> list[tuple[str, str]]:
    """The systems' own kinds of sheet event, for ``SheetEvent.kind``."""
    return [choice for kind in _kinds.values() for choice in kind.events]
