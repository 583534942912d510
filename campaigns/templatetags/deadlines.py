"""``{% deadline_line deadline %}``: a deadline as its viewer reads it, in
the campaign's time zone, in their own when it differs, and the time left,
worked out at each rendering (never kept in a cached fragment). Nothing for
``None``. The deadline's ``campaign`` should be loaded with it
(``select_related("campaign")``), or the tag asks for it."""

from __future__ import annotations

from django import template

from campaigns import deadlines

register = template.Library()


@register.inclusion_tag("campaigns/deadlines/_line.html", takes_context=True)
def deadline_line(context, deadline, left: bool = True) -> dict:
    """``left=False`` leaves the time left out, for a page kept in a cache
    (the scene page's lists of requests): the dates alone do not go stale."""
    if deadline is None:
        return {"deadline": None}
    request = context.get("request")
    user = getattr(request, "user", None) or context.get("user")
    return {**deadlines.line_parts(deadline, user), "show_left": left}
