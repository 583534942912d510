"""Who wrote a post on whose behalf: «Escrito por X (dirección) en nombre de
Y», for a post written as an absent owner's character (``Post.on_behalf_of``,
issue 17). Worked out here once for every place that shows a post: the
scene page (``table/_post.html``) and the feeds (``campaigns.feeds``).
"""

from __future__ import annotations

from collections.abc import Iterable

from django.utils.translation import gettext as _

from campaigns.models import Campaign, Post
from campaigns.notify import gm_ids


def mark_written_for(posts: Iterable[Post], campaign: Campaign) -> None:
    """Set ``post.written_for`` on each post of ``campaign``: the sentence
    for a post written for an absent owner (plain text: the template or
    the caller escapes it), empty otherwise. Who is of the direction is
    read once, and only when some post needs it (one query, none otherwise)."""
    posts = list(posts)
    direction = gm_ids(campaign) if any(post.on_behalf_of_id is not None for post in posts) else set()
    for post in posts:
        post.written_for = written_for(post, by_direction=post.author_id in direction)


def written_for(post: Post, *, by_direction: bool) -> str:
    """The byline of ``post`` (empty for a post written in its own name)."""
    if post.on_behalf_of_id is None:
        return ""
    values = {"name": post.author.public_name, "owner": post.on_behalf_of.public_name}
    if by_direction:
        return _("Escrito por %(name)s (dirección) en nombre de %(owner)s") % values
    return _("Escrito por %(name)s en nombre de %(owner)s") % values
