"""Atom feeds (RFC 4287): one per public scene and one per public campaign
(its public posts, open to anyone), a private one per member (found by the
secret ``Membership.feed_token``) and a private one for the GM, who has no
membership (found by the campaign's id and a token derived from the secret
``Campaign.gm_feed_key`` and the GM's id: renewing the key, or handing the
campaign over, ends the old address).

Entries carry the post's stored, sanitised ``body_html`` and what the apps
above add to it for the feed's reader (``extensions.feed_extras``: the post's
rolls, each with its result and permalink; a roll the reader may not open
says only that it is private): no Markdown is rendered here,
out-of-character notes stay on the site, and a hidden post is a placeholder
without its text, its rolls or its author's name. Titles
are plain text; the feed generator escapes them.

The campaign-wide feeds (the public one, a member's, the GM's) carry the
head of the campaign's roll log, so that a feed reader keeps a witness of it
(roll-verification.md §3.8): ``<rollog:head seq="42">`` and the entry hash
of the log's last entry, in the namespace ``urn:rollog:v1``.

Every address in a feed (the feed's own ``rel="self"`` link, the page it
mirrors, each entry's permalink) is built from ``SITE_URL``, never from the
request's host: a feed reader that reached the site under another name, or a
proxy that rewrote the host, would otherwise see new entry ids and show old
posts as new. The ids are those absolute addresses: a post keeps one id in
every feed it appears in, and each feed's id is its own address.
"""

from __future__ import annotations

import secrets
from datetime import datetime

from django.contrib.auth.models import AnonymousUser
from django.contrib.syndication.views import Feed
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404
from django.urls import reverse
from django.utils.cache import patch_cache_control
from django.utils.crypto import constant_time_compare, salted_hmac
from django.utils.feedgenerator import Atom1Feed
from django.utils.html import format_html
from django.utils.translation import gettext as _

from campaigns import bylines, extensions
from campaigns.models import Campaign, Membership, Post, Scene, Visibility
from campaigns.notify import site_url
from campaigns.permissions import campaign_access, visible_scenes

FEED_SIZE = 50
# The namespace of the roll log's head in the campaign-wide feeds.
ROLLOG_NAMESPACE = "urn:rollog:v1"


def _log_head(campaign: Campaign) -> dict:
    """What the campaign-wide feeds say of the campaign's roll log (one query)."""
    head = extensions.log_heads([campaign.pk]).get(campaign.pk)
    return {"rollog_head": head} if head is not None else {}


def gm_feed_token(campaign: Campaign) -> str:
    """The secret part of the GM's feed address: the campaign's key signs its
    id and its GM's, so the address of one GM never opens another's feed."""
    value = f"{campaign.pk}:{campaign.gm_id}"
    return salted_hmac("campaigns.feeds.gm", value, secret=campaign.gm_feed_key, algorithm="sha256").hexdigest()[:40]


def gm_feed_path(campaign: Campaign) -> str:
    return reverse("campaigns:gm-feed", args=[campaign.pk, gm_feed_token(campaign)])


def gm_feed_rotate(*, campaign: Campaign) -> None:
    """A new key for the GM's feed: its old address answers 404 from now on."""
    campaign.gm_feed_key = secrets.token_urlsafe(24)
    campaign.save(update_fields=["gm_feed_key"])


gm_feed_rotate.alters_data = True


def _with_extras(posts, access) -> list[Post]:
    """The feed's newest posts, each with what the apps above add to its
    entry for this reader (``post.feed_extra``), in a constant number of queries."""
    shown = list(
        posts.select_related("author", "character", "on_behalf_of", "scene__campaign").order_by("-id")[:FEED_SIZE]
    )
    extras = extensions.feed_extras([p for p in shown if not p.hidden], access)
    for post in shown:
        post.feed_extra = extras.get(post.pk, "")
    bylines.mark_written_for(shown, access.campaign)
    return shown


class AtomWithContentFeed(Atom1Feed):
    """Atom with the post as ``<content type="html">`` rather than a summary."""

    def root_attributes(self):
        attributes = super().root_attributes()
        if self.feed.get("rollog_head") is not None:
            attributes["xmlns:rollog"] = ROLLOG_NAMESPACE
        return attributes

    def add_root_elements(self, handler):
        super().add_root_elements(handler)
        head = self.feed.get("rollog_head")
        if head is not None:
            seq, head_hash = head
            handler.addQuickElement("rollog:head", head_hash, {"seq": str(seq)})

    def add_item_elements(self, handler, item):
        super().add_item_elements(handler, item)
        if item.get("content") is not None:
            handler.addQuickElement("content", item["content"], {"type": "html"})

    def latest_post_date(self):
        # An empty feed dates from what it follows, not from the moment it is
        # asked for: its updated date, Last-Modified and ETag stay put, and a
        # reader that polls it gets 304.
        if not self.items and self.feed.get("empty_since") is not None:
            return self.feed["empty_since"]
        return super().latest_post_date()


class _PostFeed(Feed):
    feed_type = AtomWithContentFeed

    def feed_guid(self, obj) -> str:
        # The feed's id is its own address (the rel="self" link).
        return self.feed_url(obj)

    def item_title(self, post: Post) -> str:
        if post.hidden:
            return _("Mensaje #%(id)s (oculto)") % {"id": post.pk}
        return _("Mensaje #%(id)s de %(speaker)s") % {"id": post.pk, "speaker": post.speaker_name}

    def item_link(self, post: Post) -> str:
        return site_url(post.get_absolute_url())

    def item_guid(self, post: Post) -> str:
        return site_url(post.get_absolute_url())

    def item_description(self, post: Post) -> None:
        return None

    def item_extra_kwargs(self, post: Post) -> dict[str, str]:
        if post.hidden:
            return {"content": format_html("<p>{}</p>", _("Mensaje oculto por la dirección."))}
        extra = getattr(post, "feed_extra", "")
        behalf = getattr(post, "written_for", "")
        # Escaped here: the names are the users' own text.
        byline = format_html("<p><em>{}</em></p>", behalf) if behalf else ""
        # body_html is stored sanitised; the extras come escaped (``feed_extras``).
        return {"content": byline + post.body_html + str(extra)}

    def item_author_name(self, post: Post) -> str:
        # Atom requires an author on every entry (or on the feed). A hidden
        # post's placeholder is the direction's, and does not name the writer.
        return _("La dirección de la partida") if post.hidden else post.speaker_name

    def item_pubdate(self, post: Post) -> datetime:
        return post.created_at

    def item_updateddate(self, post: Post) -> datetime:
        # Hiding a post changes what its entry says: readers must fetch it again.
        changes = [post.created_at, post.edited_at, post.hidden_at if post.hidden else None]
        return max(moment for moment in changes if moment is not None)


class _CampaignWideFeed(_PostFeed):
    """A feed of several scenes: each entry names its scene as a category."""

    def item_categories(self, post: Post) -> tuple[str]:
        return (post.scene.title,)


class _PrivateFeed(_CampaignWideFeed):
    def __call__(self, request: HttpRequest, *args, **kwargs) -> HttpResponse:
        response = super().__call__(request, *args, **kwargs)
        # The address is a secret: no shared cache keeps it, no search engine lists it.
        patch_cache_control(response, private=True)
        response["X-Robots-Tag"] = "noindex"
        return response


class SceneFeed(_PostFeed):
    """The public posts of a scene anonymous visitors may read: a public
    campaign's all-members scene. Whispers and hidden posts are left out."""

    def get_object(self, request: HttpRequest, slug: str, scene_id: int) -> Scene:
        scenes = Scene.objects.select_related("campaign__gm").filter(
            campaign__slug=slug, campaign__visibility=Visibility.PUBLIC, everyone=True
        )
        return get_object_or_404(scenes, pk=scene_id)

    def title(self, scene: Scene) -> str:
        return _("%(scene)s · %(campaign)s") % {"scene": scene.title, "campaign": scene.campaign.title}

    def subtitle(self, scene: Scene) -> str:
        return _("Mensajes públicos de la escena «%(scene)s» en Hitos.") % {"scene": scene.title}

    def author_name(self, scene: Scene) -> str:
        return scene.campaign.gm.public_name

    def link(self, scene: Scene) -> str:
        return site_url(scene.get_absolute_url())

    def feed_url(self, scene: Scene) -> str:
        return site_url(reverse("campaigns:scene-feed", args=[scene.campaign.slug, scene.pk]))

    def feed_extra_kwargs(self, scene: Scene) -> dict:
        return {"empty_since": scene.created_at}

    def items(self, scene: Scene):
        posts = Post.objects.filter(scene=scene, recipients=Post.Recipients.ALL, hidden=False)
        return _with_extras(posts, campaign_access(AnonymousUser(), scene.campaign))


class CampaignFeed(_CampaignWideFeed):
    """The public posts of a public campaign, every scene open to all members
    together: what an anonymous visitor may read there. Whispers and hidden
    posts are left out; a private campaign has no public feed (404)."""

    def get_object(self, request: HttpRequest, slug: str) -> Campaign:
        campaigns = Campaign.objects.public().select_related("gm")
        return get_object_or_404(campaigns, slug=slug)

    def title(self, campaign: Campaign) -> str:
        return _("«%(campaign)s» en Hitos") % {"campaign": campaign.title}

    def subtitle(self, campaign: Campaign) -> str:
        return _("Mensajes públicos de todas las escenas de la partida «%(campaign)s».") % {"campaign": campaign.title}

    def author_name(self, campaign: Campaign) -> str:
        return campaign.gm.public_name

    def link(self, campaign: Campaign) -> str:
        return site_url(campaign.get_absolute_url())

    def feed_url(self, campaign: Campaign) -> str:
        return site_url(reverse("campaigns:campaign-feed", args=[campaign.slug]))

    def feed_extra_kwargs(self, campaign: Campaign) -> dict:
        return {"empty_since": campaign.created_at, **_log_head(campaign)}

    def items(self, campaign: Campaign):
        posts = Post.objects.filter(
            scene__campaign=campaign, scene__everyone=True, recipients=Post.Recipients.ALL, hidden=False
        )
        return _with_extras(posts, campaign_access(AnonymousUser(), campaign))


class MemberFeed(_PrivateFeed):
    """Everything one member may read in their campaign, found by the secret
    ``Membership.feed_token``. Hidden posts are placeholders without text."""

    def get_object(self, request: HttpRequest, token: str) -> Membership:
        memberships = Membership.objects.active().select_related("campaign__gm", "user")
        membership = get_object_or_404(memberships, feed_token=token, user__is_active=True)
        return membership

    def title(self, membership: Membership) -> str:
        return _("«%(campaign)s» en Hitos") % {"campaign": membership.campaign.title}

    def subtitle(self, membership: Membership) -> str:
        return _("Los mensajes que puedes leer en la partida. No compartas la dirección de este canal.")

    def author_name(self, membership: Membership) -> str:
        return membership.campaign.gm.public_name

    def link(self, membership: Membership) -> str:
        return site_url(membership.campaign.get_absolute_url())

    def feed_url(self, membership: Membership) -> str:
        return site_url(reverse("campaigns:member-feed", args=[membership.feed_token]))

    def feed_extra_kwargs(self, membership: Membership) -> dict:
        return {"empty_since": membership.joined_at, **_log_head(membership.campaign)}

    def items(self, membership: Membership):
        access = campaign_access(membership.user, membership.campaign)
        if not access.is_member:
            raise Http404
        scenes = visible_scenes(access)
        posts = Post.objects.filter(scene__in=scenes.values("pk")).addressed_to(membership.user, is_gm=access.is_gm)
        return _with_extras(posts, access)


class GMFeed(_PrivateFeed):
    """Everything in the campaign, whispers included, for its GM (co-GMs have
    their membership's feed), found by the campaign's id and
    ``gm_feed_token``. Hidden posts are placeholders without text, as in every
    feed: a copy kept by a feed reader is not where moderation is done."""

    def get_object(self, request: HttpRequest, campaign_id: int, token: str) -> Campaign:
        campaign = get_object_or_404(Campaign.objects.select_related("gm"), pk=campaign_id, gm__is_active=True)
        if not constant_time_compare(token, gm_feed_token(campaign)):
            raise Http404
        return campaign

    def title(self, campaign: Campaign) -> str:
        return _("«%(campaign)s» en Hitos: dirección") % {"campaign": campaign.title}

    def subtitle(self, campaign: Campaign) -> str:
        return _("Todos los mensajes de la partida, susurros incluidos. No compartas la dirección de este canal.")

    def author_name(self, campaign: Campaign) -> str:
        return campaign.gm.public_name

    def link(self, campaign: Campaign) -> str:
        return site_url(campaign.get_absolute_url())

    def feed_url(self, campaign: Campaign) -> str:
        return site_url(gm_feed_path(campaign))

    def feed_extra_kwargs(self, campaign: Campaign) -> dict:
        return {"empty_since": campaign.created_at, **_log_head(campaign)}

    def items(self, campaign: Campaign):
        # The GM reads every scene and every post (``addressed_to`` with is_gm).
        posts = Post.objects.filter(scene__campaign=campaign)
        return _with_extras(posts, campaign_access(campaign.gm, campaign))
