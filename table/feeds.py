"""The rolls of a post in its feed entry (``campaigns.extensions.feed_extras``):
each roll's final version as its badge says it (the game's one line), with
its purpose and a link to its permalink, where anyone can verify it.

A sealed roll (a whisper's, a split party's, a GM's secret one) says only
that it is private, in every feed, its readers' too: a feed is a copy that
a feed reader keeps and may share, and its permalink shows it to whoever may
read it (``tests/rolls/test_privacy_matrix.py``: feeds never carry a private
roll's content)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from django.utils.html import format_html, format_html_join
from django.utils.translation import gettext as _

from campaigns.notify import site_url
from campaigns.permissions import Access
from rolls import presenters
from table.models import TableRoll


def _line(entry) -> tuple[str, str, str]:
    """(purpose, what it gave, permalink) of one roll's final version."""
    url = site_url(entry.get_absolute_url())
    if entry.is_sealed:
        return _("Tirada privada"), _("solo la ven quienes pueden leerla"), url
    signed = entry.entry
    said = presenters.badge_line(signed)
    if said is None:
        said = f"{signed.get('spec', '')}: {', '.join(str(d) for d in signed.get('dice') or [])}"
    return signed.get("purpose") or _("Tirada"), said, url


def roll_lines(posts: Sequence, access: Access) -> dict[int, str]:
    """For each post with rolls, a list of them (escaped HTML), in one
    query: the table rolls with their final versions. The same for every
    reader of the post (``access`` is not needed: sealed rolls say only
    that they are private)."""
    ids = [post.pk for post in posts]
    if not ids:
        return {}
    table_rolls = list(
        TableRoll.objects.filter(post_id__in=ids).select_related("latest").order_by("post_id", "position", "id")
    )
    if not table_rolls:
        return {}
    lines: dict[int, list[tuple[str, str, str]]] = defaultdict(list)
    for tr in table_rolls:
        lines[tr.post_id].append(_line(tr.latest))
    return {
        post_id: format_html(
            '<ul class="rolls">{}</ul>',
            format_html_join("", '<li>🎲 {}: {} (<a href="{}">{}</a>)</li>', ((*row, _("verificar")) for row in rows)),
        )
        for post_id, rows in lines.items()
    }
