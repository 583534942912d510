"""Template filters of the log's pages: the signed time of an entry as an
instant the ``date`` filter shows in the reader's time zone."""

from __future__ import annotations

from datetime import UTC, datetime

from django import template

from rolls import rollog

register = template.Library()


@register.filter
def signed_time(text: object) -> datetime | None:
    """A signed ``YYYY-MM-DDTHH:MM:SSZ`` as an aware datetime in UTC (None
    when the text is not one), for ``|date`` to show in local time while the
    ``<time datetime>`` keeps the signed text."""
    try:
        return rollog.parse_time(text).replace(tzinfo=UTC)
    except rollog.RollogError:
        return None
