"""Where the game adds to the forum without the forum importing it.

The forum (this app) knows nothing of sheets, rolls or game systems. Apps of
higher layers register, in their ``AppConfig.ready()``, a provider for a page
of the forum; the forum's view asks every provider what it adds, in the order
of ``INSTALLED_APPS``, and the template shows it where the page has room:

- ``links``: buttons in the page's bar, ``(label, url)``;
- ``panels``: sections, ``(template, context)``, included with their own
  context plus ``campaign`` and ``access``.

Pages with room for additions: ``PAGES``. A provider returns ``None`` when
it adds nothing (the viewer may not see it, the campaign's game has no such
thing). Events (a campaign was created) are the signals in
``campaigns.signals``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from django.http import HttpRequest

from campaigns.permissions import Access

# The campaign page and the GM's dashboard.
PAGES = ("campaign_page", "dashboard")


@dataclass(frozen=True)
class Additions:
    links: list[tuple[str, str]] = field(default_factory=list)
    panels: list[tuple[str, dict]] = field(default_factory=list)


Provider = Callable[[HttpRequest, Access], Additions | None]
_providers: dict[str, list[Provider]] = {page: [] for page in PAGES}


def provide(page: str, provider: Provider) -> None:
    """Register ``provider`` for ``page`` (once: a second registration of the
    same function is ignored, so a re-run ``ready()`` adds nothing)."""
    if page not in _providers:
        raise ValueError(f"the forum has no page {page!r} for additions: {PAGES}")
    if provider not in _providers[page]:
        _providers[page].append(provider)


def additions(page: str, request: HttpRequest, access: Access) -> Additions:
    """Everything the providers add to ``page`` for this viewer."""
    found = Additions()
    for provider in _providers[page]:
        added = provider(request, access)
        if added is not None:
            found.links.extend(added.links)
            found.panels.extend(added.panels)
    return found
