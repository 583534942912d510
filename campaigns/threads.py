"""The forum's reading of a scene: its posts for one viewer, what each post
may show them, and who takes part. The scene page (``table.views``), the
post pages and the feeds read scenes through these."""

from __future__ import annotations

from django.db.models import Q

from accounts.models import User
from campaigns import permissions as perms
from campaigns.models import Campaign, Membership, Post, Scene
from campaigns.permissions import Access

POSTS_PER_PAGE = 20


def members_of(campaign: Campaign):
    """Users who take part: the GM and the active members."""
    member_ids = Membership.objects.active().filter(campaign=campaign).values("user")
    return User.objects.filter(Q(pk=campaign.gm_id) | Q(pk__in=member_ids)).order_by("username")


def decorate_posts(posts, access: Access, scene: Scene) -> None:
    """Attach what the templates may show of each post (permissions decided here)."""
    for post in posts:
        # Every post of the page is in this scene: reuse it, one query per post otherwise.
        post.scene = scene
        post.show_text = not post.hidden or perms.can_see_hidden_text(access, post)
        post.can_edit = access.user.is_authenticated and perms.can_edit_post(access, post)
        post.can_history = post.edited_at is not None and perms.can_see_revisions(access, post)
        post.can_report = access.user.is_authenticated and perms.can_report_post(access, post)
        quote = post.quote_of
        post.quote_visible = bool(
            quote and not quote.hidden and quote.recipients == Post.Recipients.ALL and quote.scene_id == post.scene_id
        )


def scene_posts(access: Access, scene: Scene):
    """The scene's posts the viewer may read, oldest first, with what a page shows of them."""
    return (
        Post.objects.filter(scene=scene)
        .addressed_to(access.user, is_gm=access.is_gm)
        .select_related("author", "character", "quote_of__author", "quote_of__character", "edited_by")
        .prefetch_related("chosen_recipients")
        .order_by("pk")
    )
