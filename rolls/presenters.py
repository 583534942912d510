"""How a roll reads on the log's own pages: its permalink and the roll log.

The log holds the signed entries; what a game makes of a roll (the kept die,
the margin, the actions a reader may take) is the table's, a layer above.
The table registers its card builders here from its ``AppConfig.ready()``,
so the log's pages show the same card as the scene without the log importing
the table. The site always installs the table; a log page asked for before
any registration is a configuration error, said plainly.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from django.core.exceptions import ImproperlyConfigured

# permalink_card(entry, *, access, versions) -> dict
CardBuilder = Callable[..., dict[str, Any]]
# log_cards(entries, *, access) -> {entry id: card}
LogCardsBuilder = Callable[..., dict[int, dict[str, Any]]]

_builders: dict[str, Callable] = {}


def register(permalink_card: CardBuilder, log_cards: LogCardsBuilder, badge_line: Callable[..., str | None]) -> None:
    _builders["permalink_card"] = permalink_card
    _builders["badge_line"] = badge_line
    _builders["log_cards"] = log_cards


def _builder(name: str) -> Callable:
    try:
        return _builders[name]
    except KeyError:
        raise ImproperlyConfigured("No card builder: the table app (table) must be installed.") from None


def permalink_card(entry, *, access, versions: Sequence) -> dict[str, Any]:
    """The card of one version of a roll, for its permalink (``versions``:
    its chain up to it, oldest first)."""
    return _builder("permalink_card")(entry, access=access, versions=versions)


def badge_line(signed_entry: dict[str, Any]) -> str | None:
    """The badge's line for a roll a game reads; None for the log's own."""
    return _builder("badge_line")(signed_entry)


def log_cards(entries: Sequence, *, access) -> dict[int, dict[str, Any]]:
    """The compact cards of a page of the roll log, by entry id."""
    return _builder("log_cards")(entries, access=access)
