"""Atom feeds: one per public scene, and a private one per member.

Entries carry the post's stored, sanitised ``body_html`` and nothing else: no
Markdown is rendered here, out-of-character notes stay on the site, and a
hidden post is a placeholder without its text. Titles are plain text; the
feed generator escapes them.
"""

from __future__ import annotations

from django.contrib.syndication.views import Feed
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404
from django.utils.cache import patch_cache_control
from django.utils.feedgenerator import Atom1Feed
from django.utils.html import format_html
from django.utils.translation import gettext as _

from campaigns.models import Membership, Post, Scene, Visibility
from campaigns.permissions import campaign_access, visible_scenes

FEED_SIZE = 50


class AtomWithContentFeed(Atom1Feed):
    """Atom with the post as ``<content type="html">`` rather than a summary."""

    def add_item_elements(self, handler, item):
        super().add_item_elements(handler, item)
        if item.get("content") is not None:
            handler.addQuickElement("content", item["content"], {"type": "html"})


class _PostFeed(Feed):
    feed_type = AtomWithContentFeed

    def item_title(self, post: Post) -> str:
        if post.hidden:
            return _("Mensaje #%(id)s (oculto)") % {"id": post.pk}
        return _("Mensaje #%(id)s de %(speaker)s") % {"id": post.pk, "speaker": post.speaker_name}

    def item_link(self, post: Post) -> str:
        return post.get_absolute_url()

    def item_description(self, post: Post) -> None:
        return None

    def item_extra_kwargs(self, post: Post) -> dict[str, str]:
        if post.hidden:
            return {"content": format_html("<p>{}</p>", _("Mensaje oculto por la dirección."))}
        return {"content": post.body_html}

    def item_author_name(self, post: Post) -> str | None:
        return None if post.hidden else post.speaker_name

    def item_pubdate(self, post: Post):
        return post.created_at

    def item_updateddate(self, post: Post):
        return post.edited_at or post.created_at


class SceneFeed(_PostFeed):
    """The public posts of a scene anonymous visitors may read: a public
    campaign's all-members scene. Whispers and hidden posts are left out."""

    def get_object(self, request: HttpRequest, slug: str, scene_id: int) -> Scene:
        scenes = Scene.objects.select_related("campaign").filter(
            campaign__slug=slug, campaign__visibility=Visibility.PUBLIC, everyone=True
        )
        return get_object_or_404(scenes, pk=scene_id)

    def title(self, scene: Scene) -> str:
        return _("%(scene)s · %(campaign)s") % {"scene": scene.title, "campaign": scene.campaign.title}

    def subtitle(self, scene: Scene) -> str:
        return _("Mensajes públicos de la escena «%(scene)s» en Hitos.") % {"scene": scene.title}

    def link(self, scene: Scene) -> str:
        return scene.get_absolute_url()

    def items(self, scene: Scene):
        posts = Post.objects.filter(scene=scene, recipients=Post.Recipients.ALL, hidden=False)
        return posts.select_related("author", "character", "scene__campaign").order_by("-id")[:FEED_SIZE]


class MemberFeed(_PostFeed):
    """Everything one member may read in their campaign, found by the secret
    ``Membership.feed_token``. Hidden posts are placeholders without text."""

    def __call__(self, request: HttpRequest, *args, **kwargs) -> HttpResponse:
        response = super().__call__(request, *args, **kwargs)
        # The address is a secret: no shared cache keeps it, no search engine lists it.
        patch_cache_control(response, private=True)
        response["X-Robots-Tag"] = "noindex"
        return response

    def get_object(self, request: HttpRequest, token: str) -> Membership:
        memberships = Membership.objects.active().select_related("campaign", "user")
        membership = get_object_or_404(memberships, feed_token=token, user__is_active=True)
        return membership

    def title(self, membership: Membership) -> str:
        return _("«%(campaign)s» en Hitos") % {"campaign": membership.campaign.title}

    def subtitle(self, membership: Membership) -> str:
        return _("Los mensajes que puedes leer en la partida. No compartas la dirección de este canal.")

    def link(self, membership: Membership) -> str:
        return membership.campaign.get_absolute_url()

    def items(self, membership: Membership):
        access = campaign_access(membership.user, membership.campaign)
        if not access.is_member:
            raise Http404
        scenes = visible_scenes(access)
        posts = Post.objects.filter(scene__in=scenes.values("pk")).addressed_to(membership.user, is_gm=access.is_gm)
        return posts.select_related("author", "character", "scene__campaign").order_by("-id")[:FEED_SIZE]
