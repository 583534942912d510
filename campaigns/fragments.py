"""Rendered HTML shared between requests: kept in the cache (Redis when
``REDIS_URL`` is set) under a key that changes whenever what it shows
changes, so a page is assembled from cached fragments plus the few parts that
depend on the request.

A fragment's key holds:

- its name and the object it shows;
- content versions (``versions``): one per campaign, moved whenever a row the
  pages show of it is saved or deleted (the apps register their models with
  ``track``, naming the campaign of a row); "people", moved when someone's
  public name changes; "public", moved when a campaign is saved or deleted
  (the home page's list). Like the scenes' (``campaigns.versions``) they
  start at the clock's nanoseconds, so one rebuilt after the cache lost it
  never matches a number handed out before, and move now and again at commit;
- what else the caller knows changes it (the log's head, a page, filters);
- the viewer (``viewer``): readers without an account share one class, a
  signed-in user has their own, so a fragment made for the GM never reaches
  a player;
- the language and the time zone.

Rows written without ``save()`` (``QuerySet.update``, ``bulk_create``, raw
SQL) send no signal: each service that writes so also saves a tracked row in
the same change, or the caller keys on a value read from the database (the
roll log's head for its entries). ``FRAGMENT_SECONDS`` bounds the rest, such
as a per-process cache that another process's change cannot reach.

Forms in a fragment are rendered with a placeholder for the CSRF token;
``fragment`` puts the request's own token there each time it serves one.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Hashable, Iterable

from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.db import transaction
from django.db.models.signals import m2m_changed, post_delete, post_save
from django.http import Http404
from django.middleware.csrf import get_token
from django.shortcuts import get_object_or_404
from django.utils import timezone
from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import get_language

from campaigns.models import Absence, Campaign, Deadline, Membership, Post, PostReport, Scene
from campaigns.permissions import Access, campaign_access, can_view_campaign

# How long a fragment may be kept at most (a change moves its key at once).
FRAGMENT_SECONDS = 600
# How long a page that only reads may trust a membership it read (a change
# moves the campaign's version at once; this bounds a cache that another
# process's change cannot reach).
MEMBERSHIP_SECONDS = 60

PEOPLE = ("people",)
PUBLIC = ("public",)

# What ``{% csrf_token %}`` renders in a cached fragment. Escaped user text
# cannot hold a raw "<input", and sanitised Markdown keeps no input element,
# so only the tag's own output matches.
_CSRF_PLACEHOLDER = "csrf-token-of-the-request"
_CSRF_INPUT = '<input type="hidden" name="csrfmiddlewaretoken" value="{}">'
_CSRF_PLACEHOLDER_INPUT = _CSRF_INPUT.format(_CSRF_PLACEHOLDER)


def campaign_scope(campaign_id: int | None) -> tuple[str, int] | None:
    """The scope of everything the pages show of one campaign (None: no campaign)."""
    return ("campaign", campaign_id) if campaign_id is not None else None


def member_scope(user_id: int) -> tuple[str, int]:
    """The scope of which campaigns a user directs or belongs to."""
    return ("member", user_id)


def _version_key(scope: tuple) -> str:
    return "content-version:" + ":".join(str(part) for part in scope)


def versions(*scopes: tuple) -> tuple[int, ...]:
    """The current version of each scope, in one cache round trip when all are known."""
    keys = [_version_key(scope) for scope in scopes]
    found = cache.get_many(keys)
    missing = [key for key in keys if key not in found]
    if missing:
        for key in missing:
            cache.add(key, time.time_ns(), timeout=None)
        found.update(cache.get_many(missing))
    # A version evicted between the two reads: a fresh number, never seen before.
    return tuple(found.get(key) or time.time_ns() for key in keys)


def changed(*scopes: tuple) -> None:
    """Move the scopes' versions now and again once the current transaction
    commits: a reader who came between the two saw the new version without
    the change (not yet committed), and what it kept under that version is
    never used after the commit. A rolled-back change only costs cache misses."""

    def bump() -> None:
        for scope in scopes:
            key = _version_key(scope)
            try:
                cache.incr(key)
            except ValueError:  # not in the cache (never asked, or evicted)
                cache.add(key, time.time_ns(), timeout=None)

    bump()
    transaction.on_commit(bump)


def track(model, scopes_of: Callable[[object], Iterable[tuple | None]]) -> None:
    """Move the versions of ``scopes_of(row)`` whenever a row of ``model`` is
    saved or deleted (``post_save`` and ``post_delete``). Called from the
    ``AppConfig.ready()`` of the app that owns the model."""

    def moved(sender, instance, **kwargs) -> None:
        scopes = [scope for scope in scopes_of(instance) if scope is not None]
        if scopes:
            changed(*scopes)

    uid = f"fragments:{model._meta.label}"
    post_save.connect(moved, sender=model, weak=False, dispatch_uid=uid)
    post_delete.connect(moved, sender=model, weak=False, dispatch_uid=uid + ":delete")


def related_id(instance, relation: str, field: str):
    """``instance.<relation>.<field>`` without a query when the related row is
    loaded (the services pass it), else read by id; None when it is gone."""
    descriptor = getattr(type(instance), relation)
    if descriptor.is_cached(instance):
        related = getattr(instance, relation)
        return getattr(related, field) if related is not None else None
    related_pk = getattr(instance, f"{relation}_id")
    if related_pk is None:
        return None
    model = descriptor.field.related_model
    return model._default_manager.filter(pk=related_pk).values_list(field, flat=True).first()


def reader_access(user, campaign: Campaign, version: int) -> Access:
    """``campaigns.permissions.campaign_access`` for a page that only reads:
    a member's membership as the cache keeps it under the campaign's version
    ``version`` (read before this: a membership saved or deleted moves it),
    for at most ``MEMBERSHIP_SECONDS``. Actions ask the database."""
    if not user.is_authenticated or campaign.gm_id == user.pk:
        return campaign_access(user, campaign)  # no query to save
    cache_key = f"reader-access:{campaign.pk}:{version}:{user.pk}"
    found = cache.get(cache_key)
    if found is None:
        access = campaign_access(user, campaign)
        cache.set(cache_key, (access.standing, access.membership), MEMBERSHIP_SECONDS)
        return access
    standing, membership = found
    return Access(user, campaign, standing, membership)


def campaign_for_reading(request, slug: str) -> tuple[Campaign, Access, tuple[int, ...]]:
    """``campaigns.access.campaign_for`` (404 for a campaign the reader may
    not see) for a cached page that only reads: ``(campaign, access,
    versions)``, with the content versions (campaign, people) its key needs
    and the access of ``reader_access``."""
    # The GM's row is read only when a page is made (most visits are served from the cache).
    campaign = get_object_or_404(Campaign, slug=slug)
    content_versions = versions(campaign_scope(campaign.pk), PEOPLE)
    access = reader_access(request.user, campaign, content_versions[0])
    if not can_view_campaign(access):
        raise Http404
    return campaign, access, content_versions


def viewer(user, standing: str = "") -> str:
    """The viewer part of a key: one class for every reader without an
    account, the user's own (with their standing in the campaign) otherwise."""
    if not user.is_authenticated:
        return "anon"
    return f"u{user.pk}{'-' + standing if standing else ''}"


def digest(*parts: object) -> str:
    """A short stable name for parts of a key that may be long (filters)."""
    return hashlib.blake2b(repr(parts).encode(), digest_size=8).hexdigest()


def key(name: str, *parts: Hashable) -> str:
    """The cache key of fragment ``name``: its parts, then the language and time zone."""
    return ":".join(
        ["fragment", name, *(str(part) for part in parts), get_language() or "", timezone.get_current_timezone_name()]
    )


def csrf_context() -> dict:
    """Context that renders ``{% csrf_token %}`` as the placeholder ``fragment`` fills in."""
    return {"csrf_token": _CSRF_PLACEHOLDER}


def with_csrf(request, html: str, *, token=None) -> SafeString:
    """A cached fragment with the request's own CSRF token in its forms
    (``token``: one the request's templates already hold; else one made once
    per request)."""
    if _CSRF_PLACEHOLDER_INPUT in html:
        if token is None:
            if not hasattr(request, "_fragments_csrf_token"):
                request._fragments_csrf_token = get_token(request)
            token = request._fragments_csrf_token
        token = str(token)
        # As {% csrf_token %} does when the request has none to give.
        field = "" if token in ("", "NOTPROVIDED") else format_html(_CSRF_INPUT, token)
        html = html.replace(_CSRF_PLACEHOLDER_INPUT, field)
    return mark_safe(html)  # our own templates' output, escaped when rendered


def cached(cache_key: str, build: Callable[[], dict]) -> dict:
    """What ``build()`` made under ``cache_key`` (its ``"html"`` and anything
    else the page needs), made and kept now when missing: for
    ``FRAGMENT_SECONDS``, or for its ``"seconds"`` when it says it changes sooner
    (an answer's deadline)."""
    value = cache.get(cache_key)
    if value is None:
        value = build()
        seconds = value.pop("seconds", None)
        timeout = FRAGMENT_SECONDS if seconds is None else max(1, min(FRAGMENT_SECONDS, int(seconds)))
        cache.set(cache_key, value, timeout)
    return value


def fragment(request, cache_key: str, render: Callable[[], str]) -> SafeString:
    """The HTML cached under ``cache_key``, or ``render()``'s, kept now (render
    with ``csrf_context()`` for forms), with the request's CSRF token."""
    return with_csrf(request, cached(cache_key, lambda: {"html": str(render())})["html"])


def member_campaigns(user, load: Callable[[], list[int]] | None = None) -> tuple:
    """What the pages of a user's campaigns are keyed on: ``(member version,
    people version, campaign ids, their versions)``; the ids are kept in the
    cache until the user joins or leaves one (``load()`` reads them, or the
    campaigns they are in are asked for)."""
    member, people = versions(member_scope(user.pk), PEOPLE)
    ids_key = key("my-campaign-ids", user.pk, member)
    ids = cache.get(ids_key)
    if ids is None:
        ids = load() if load is not None else list(Campaign.objects.of_user(user).values_list("pk", flat=True))
        cache.set(ids_key, ids, FRAGMENT_SECONDS)
    return member, people, ids, versions(*(campaign_scope(pk) for pk in ids))


def seconds_until(moments: Iterable) -> float | None:
    """Seconds until the first of ``moments`` still to come (None: none), for
    ``cached``'s ``"seconds"``: what a page shows changes then."""
    now = timezone.now()
    ahead = [(moment - now).total_seconds() for moment in moments if moment is not None and moment > now]
    return min(ahead) + 1 if ahead else None


def _report_campaign_id(report: PostReport) -> int | None:
    """The campaign of a report's post: without a query when the services
    pass the post with its scene, else read by the post's id (None when the
    post is gone: deleting it moves the campaign anyway)."""
    if PostReport.post.is_cached(report):
        return related_id(report.post, "scene", "campaign_id")
    return Post.objects.filter(pk=report.post_id).values_list("scene__campaign_id", flat=True).first()


def track_forum() -> None:
    """The forum's rows the cached pages show (``CampaignsConfig.ready()``),
    and who is in which campaign; the scenes' chosen members and the posts'
    chosen recipients too (they change with ``set()``, after the row); the
    reports, whose pending number the campaign page shows the direction."""
    track(Campaign, lambda campaign: [campaign_scope(campaign.pk), member_scope(campaign.gm_id), PUBLIC])
    track(Scene, lambda scene: [campaign_scope(scene.campaign_id)])
    track(
        Membership,
        lambda membership: [campaign_scope(membership.campaign_id), member_scope(membership.user_id)],
    )
    track(Post, lambda post: [campaign_scope(related_id(post, "scene", "campaign_id"))])
    track(PostReport, lambda report: [campaign_scope(_report_campaign_id(report))])
    # Who is away shows beside their names (the member list, combat orders),
    # and a deadline on the pages of what it is for (issue 17).
    track(Absence, lambda absence: [campaign_scope(absence.campaign_id)])
    track(Deadline, lambda deadline: [campaign_scope(deadline.campaign_id)])

    def chosen_changed(sender, instance, action, reverse, pk_set, **kwargs) -> None:
        if not action.startswith("post_"):
            return
        if isinstance(instance, Scene):
            campaign_ids = {instance.campaign_id}
        elif isinstance(instance, Post):
            campaign_ids = {related_id(instance, "scene", "campaign_id")}
        elif pk_set is None:  # a user's choices all cleared: which campaigns is not known
            changed(PEOPLE)
            return
        elif sender is Scene.participants.through:
            campaign_ids = set(Scene.objects.filter(pk__in=pk_set).values_list("campaign_id", flat=True))
        else:
            campaign_ids = set(Post.objects.filter(pk__in=pk_set).values_list("scene__campaign_id", flat=True))
        scopes = [campaign_scope(campaign_id) for campaign_id in campaign_ids if campaign_id is not None]
        if scopes:
            changed(*scopes)

    for through in (Scene.participants.through, Post.chosen_recipients.through):
        m2m_changed.connect(chosen_changed, sender=through, weak=False, dispatch_uid=f"fragments:{through._meta.label}")

    def renamed(sender, instance, update_fields=None, **kwargs) -> None:
        # A log-in saves only last_login: names stay as they were.
        if update_fields is None or {"display_name", "username"} & set(update_fields):
            changed(PEOPLE)

    user_model = get_user_model()
    post_save.connect(renamed, sender=user_model, weak=False, dispatch_uid="fragments:people")
    post_delete.connect(renamed, sender=user_model, weak=False, dispatch_uid="fragments:people:delete")
