"""Whose turn it is: what each scene waits for, and from whom.

The forum's own part (kind ``"post"``): in an open scene of the story (not
the off-game one), the players who have not written since the direction's
last post to everyone, when the campaign asks for it
(``Campaign.wait_for_posts``), and, whatever it asks, those who have not
written since the scene was given a deadline (``deadlines.SCENE``, attached
to their item). The layers above add theirs (roll requests, combat turns,
pending activations or reactions) through ``extensions.provide_waiting``.

``waiting_in`` gathers them all in a constant number of queries, whatever
the number of campaigns, scenes and items; ``rows`` dresses them for a page
(names, scenes, who is away, recent nudges). The direction nudges one
member with ``nudge_send``, once per scene and member every 12 hours.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Exists, Max, OuterRef, Q, Subquery
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext

from accounts.models import User
from campaigns import absences, deadlines, extensions, notify
from campaigns.extensions import Awaited
from campaigns.models import (
    Absence,
    Campaign,
    CampaignStatus,
    Deadline,
    Membership,
    ModerationAction,
    ModerationLog,
    Notification,
    Nudge,
    Post,
    Role,
    Scene,
)

POST = "post"

# One nudge per scene and member in this time.
NUDGE_EVERY = timedelta(hours=12)


def _scene_url(campaign: Campaign, scene_id: int) -> str:
    return reverse("table:scene-detail", args=[campaign.slug, scene_id])


def _last_direction_post():
    """The id of the direction's last post to everyone in the scene (the GM
    or an active co-GM; not hidden, not written for someone else's character)."""
    cogms = Membership.objects.active().filter(campaign_id=OuterRef(OuterRef("campaign_id")), role=Role.COGM)
    return Subquery(
        Post.objects.filter(scene_id=OuterRef("pk"), recipients=Post.Recipients.ALL, hidden=False)
        .filter(on_behalf_of__isnull=True)
        .filter(Q(author_id=OuterRef("campaign__gm_id")) | Q(author_id__in=cogms.values("user_id")))
        .order_by("-pk")
        .values("pk")[:1]
    )


def _chosen(split_scene_ids: list[int]) -> dict[int, set[int]]:
    """The chosen members of the split scenes, by scene (one query, none without any)."""
    chosen: dict[int, set[int]] = defaultdict(set)
    if split_scene_ids:
        through = Scene.participants.through.objects.filter(scene_id__in=split_scene_ids)
        for scene_id, user_id in through.values_list("scene_id", "user_id"):
            chosen[scene_id].add(user_id)
    return chosen


def _last_posts(posts) -> tuple[dict[tuple[int, int], int], dict[tuple[int, int], datetime]]:
    """Each player's last post in each scene and when, by (scene, user): written
    by them, or for their character by whoever took it over while they were away
    (one query)."""
    last_pk: dict[tuple[int, int], int] = {}
    last_at: dict[tuple[int, int], datetime] = {}
    grouped = posts.order_by().values("scene_id", "author_id", "on_behalf_of_id")
    for row in grouped.annotate(last=Max("pk"), at=Max("created_at")):
        for who in {row["author_id"], row["on_behalf_of_id"]} - {None}:
            key = (row["scene_id"], who)
            last_pk[key] = max(last_pk.get(key, 0), row["last"])
            last_at[key] = max(last_at[key], row["at"]) if key in last_at else row["at"]
    return last_pk, last_at


def _post_items(campaigns: list[Campaign], scene_ids, user_id, *, outside=False, viewer_id=None) -> list[Awaited]:
    """The forum's own items (four or five queries for all the campaigns).
    ``outside``: as a viewer outside the direction (``viewer_id``, None when
    anonymous) may tell them: a player has answered only with a post to
    everyone that is not hidden (or one by or for the viewer, who knows it),
    so a whisper to the direction does not show through the list."""
    by_id = {campaign.pk: campaign for campaign in campaigns}
    scene_deadlines = Deadline.objects.open().filter(kind=deadlines.SCENE, campaign_id__in=by_id)
    if scene_ids is not None:
        scene_deadlines = scene_deadlines.filter(target_id__in=scene_ids)
    dated = {deadline.target_id: deadline for deadline in scene_deadlines}
    for deadline in dated.values():
        deadline.campaign = by_id[deadline.campaign_id]
    asking = [pk for pk, campaign in by_id.items() if campaign.wait_for_posts]
    if not asking and not dated:
        return []
    scenes = Scene.objects.filter(status=Scene.Status.OPEN, is_offgame=False).filter(
        Q(campaign_id__in=asking) | Q(pk__in=list(dated))
    )
    if scene_ids is not None:
        scenes = scenes.filter(pk__in=scene_ids)
    scenes = list(
        scenes.annotate(last_gm=_last_direction_post())
        .order_by()
        .values_list("pk", "campaign_id", "everyone", "title", "last_gm")
    )
    if not scenes:
        return []
    players = Membership.objects.active().filter(campaign_id__in={s[1] for s in scenes}, role=Role.PLAYER)
    posts = Post.objects.filter(scene_id__in=[s[0] for s in scenes])
    if outside:
        seen = Q(recipients=Post.Recipients.ALL, hidden=False)
        if viewer_id is not None:
            seen |= Q(author_id=viewer_id) | Q(on_behalf_of_id=viewer_id)
        posts = posts.filter(seen)
    if user_id is not None:
        players = players.filter(user_id=user_id)
        posts = posts.filter(Q(author_id=user_id) | Q(on_behalf_of_id=user_id))
    players_of: dict[int, list[int]] = defaultdict(list)
    for campaign_id, player_id in players.order_by("user_id").values_list("campaign_id", "user_id"):
        players_of[campaign_id].append(player_id)
    chosen = _chosen([s[0] for s in scenes if not s[2]])
    last_pk, last_at = _last_posts(posts)
    items = []
    for scene_id, campaign_id, everyone, title, last_gm in scenes:
        campaign = by_id[campaign_id]
        deadline = dated.get(scene_id)
        for player_id in players_of[campaign_id]:
            if not everyone and player_id not in chosen[scene_id]:
                continue
            key = (scene_id, player_id)
            behind = bool(campaign.wait_for_posts and last_gm and last_pk.get(key, 0) < last_gm)
            late = deadline is not None and (key not in last_at or last_at[key] < deadline.created_at)
            if behind or late:
                items.append(
                    Awaited(
                        user_id=player_id,
                        scene_id=scene_id,
                        kind=POST,
                        text=gettext("Escribir en «%(scene)s»") % {"scene": title},
                        url=_scene_url(campaign, scene_id),
                        deadline=deadline if late else None,
                    )
                )
    return items


def _sort_key(item: Awaited):
    due = item.deadline.due_at if item.deadline is not None else None
    return (due is None, due or 0, item.scene_id, item.user_id, item.kind)


def waiting_in(campaigns, *, scene_ids=None, user_id=None, viewer_access=None) -> list[Awaited]:
    """What these campaigns wait for (in ``scene_ids``, from ``user_id``;
    ``None``: everywhere, from anyone): the forum's items and every
    provider's, soonest deadline first. With ``viewer_access`` (an
    ``Access`` to one campaign) outside the direction, as that viewer may
    see them: private items only for the member awaited, the others' items
    with their ``public_text``, and a player answered only by what the
    viewer could read (``_post_items``). The deadlines come with their
    campaign loaded."""
    campaigns = list(campaigns)
    if not campaigns:
        return []
    outside = viewer_access is not None and not viewer_access.is_gm
    viewer_id = viewer_access.user.pk if outside else None
    items = _post_items(campaigns, scene_ids, user_id, outside=outside, viewer_id=viewer_id)
    for provider in extensions.waiting_providers():
        items.extend(provider(campaigns, scene_ids, user_id))
    if user_id is not None:
        items = [item for item in items if item.user_id == user_id]
    if scene_ids is not None:
        wanted = set(scene_ids)
        items = [item for item in items if item.scene_id in wanted]
    if outside:
        items = [
            item if item.user_id == viewer_id or not item.public_text else replace(item, text=item.public_text)
            for item in items
            if not item.private or item.user_id == viewer_id
        ]
    by_id = {campaign.pk: campaign for campaign in campaigns}
    for item in items:
        deadline = item.deadline
        if deadline is not None and deadline.campaign_id in by_id:
            deadline.campaign = by_id[deadline.campaign_id]
    return sorted(items, key=_sort_key)


# --- for the pages ---------------------------------------------------------------------------


@dataclass
class Row:
    """One awaited member in one scene, with everything they are awaited for."""

    user: Any
    scene: Any
    campaign: Campaign
    items: list[Awaited] = field(default_factory=list)
    away: Absence | None = None
    nudged_at: datetime | None = None

    @property
    def deadline(self):
        """The soonest of the row's deadlines."""
        dated = [item.deadline for item in self.items if item.deadline is not None]
        return min(dated, key=lambda d: d.due_at) if dated else None


def away_in(campaigns: list[Campaign], user_ids, now: datetime | None = None) -> dict[tuple[int, int], Absence]:
    """Who is away today in each campaign (``absences.away_now`` for many
    campaigns in one query), by (campaign id, user id). An absence whose
    return was noticed («Ya he vuelto») no longer counts."""
    if not campaigns or not user_ids:
        return {}
    today = {campaign.pk: absences.campaign_today(campaign, now) for campaign in campaigns}
    found = Absence.objects.live().filter(
        campaign_id__in=today,
        user_id__in=set(user_ids),
        returned_at__isnull=True,
        starts_on__lte=max(today.values()),
        ends_on__gte=min(today.values()),
    )
    return {
        (absence.campaign_id, absence.user_id): absence
        for absence in found
        if absence.starts_on <= today[absence.campaign_id] <= absence.ends_on
    }


def recent_nudges(scene_ids, now: datetime | None = None) -> dict[tuple[int, int], datetime]:
    """The nudges of the last 12 hours in these scenes, by (scene, user)."""
    since = (now or timezone.now()) - NUDGE_EVERY
    found: dict[tuple[int, int], datetime] = {}
    for scene_id, user_id, at in Nudge.objects.filter(scene_id__in=list(scene_ids), created_at__gt=since).values_list(
        "scene_id", "user_id", "created_at"
    ):
        found[(scene_id, user_id)] = max(at, found.get((scene_id, user_id), at))
    return found


def rows(items: list[Awaited], campaigns, *, nudges: bool = False) -> list[Row]:
    """The items grouped by scene and member, in their order, with the
    member, the scene, whether they are away today and (``nudges``) when the
    direction last nudged them (three or four queries)."""
    if not items:
        return []
    by_id = {campaign.pk: campaign for campaign in campaigns}
    users = User.objects.in_bulk({item.user_id for item in items})
    scenes = Scene.objects.only("title", "campaign_id", "status", "everyone").in_bulk({i.scene_id for i in items})
    away = away_in([by_id[s.campaign_id] for s in scenes.values()], users)
    nudged = recent_nudges(scenes) if nudges else {}
    grouped: dict[tuple[int, int], Row] = {}
    for item in items:
        scene, user = scenes.get(item.scene_id), users.get(item.user_id)
        if scene is None or user is None:
            continue
        campaign = by_id[scene.campaign_id]
        scene.campaign = campaign
        key = (item.scene_id, item.user_id)
        if key not in grouped:
            grouped[key] = Row(
                user=user,
                scene=scene,
                campaign=campaign,
                away=away.get((campaign.pk, user.pk)),
                nudged_at=nudged.get(key),
            )
        grouped[key].items.append(item)
    return list(grouped.values())


def active_campaigns_of(user):
    """The campaigns the user directs or plays in that are not finished."""
    return Campaign.objects.of_user(user).exclude(status=CampaignStatus.FINISHED).order_by("title", "pk")


def pending_for(user) -> list[Awaited]:
    """What waits for ``user`` across their active campaigns, soonest first."""
    return waiting_in(active_campaigns_of(user), user_id=user.pk)


def digest_items(user, *, held_campaign_ids=()) -> list[tuple[str, str, str]]:
    """What waits for the user, for the digest: (campaign title, text with
    the deadline in the user's own zone and the time left, absolute link).
    Nothing from the campaigns in ``held_campaign_ids``, where an absence of
    theirs holds what they would be told."""
    campaigns = list(active_campaigns_of(user).exclude(pk__in=list(held_campaign_ids)))
    titles = {campaign.pk: campaign.title for campaign in campaigns}
    items = waiting_in(campaigns, user_id=user.pk)
    scene_campaign = dict(
        Scene.objects.filter(pk__in={item.scene_id for item in items}).values_list("pk", "campaign_id")
    )
    found = []
    for item in items:
        text = item.text
        if item.deadline is not None:
            zone = deadlines.viewer_zone(user, item.deadline.campaign)
            text = gettext("%(text)s — plazo: %(when)s, %(left)s") % {
                "text": text,
                "when": deadlines.when_text(item.deadline.due_at, zone),
                "left": deadlines.time_left(item.deadline.due_at),
            }
        found.append((titles.get(scene_campaign.get(item.scene_id), ""), text, notify.site_url(item.url)))
    return found


def active_campaigns_with(users) -> list[Campaign]:
    """The campaigns not finished that one of ``users`` (a User QuerySet)
    directs or plays in (one query)."""
    member = Membership.objects.active().filter(campaign=OuterRef("pk"), user__in=users)
    return list(
        Campaign.objects.exclude(status=CampaignStatus.FINISHED).filter(Q(gm__in=users) | Exists(member)).order_by("pk")
    )


def awaited_in(campaigns) -> set[tuple[int, int]]:
    """Who these campaigns wait for, as (user id, campaign id) pairs: one
    ``waiting_in`` for them all and one query for the scenes' campaigns,
    whatever their number."""
    items = waiting_in(campaigns)
    if not items:
        return set()
    scene_campaign = dict(
        Scene.objects.filter(pk__in={item.scene_id for item in items}).values_list("pk", "campaign_id")
    )
    return {(item.user_id, scene_campaign[item.scene_id]) for item in items if item.scene_id in scene_campaign}


# --- nudges ------------------------------------------------------------------------------


def nudge_send(*, scene: Scene, user, actor, now: datetime | None = None) -> Nudge:
    """The direction reminds ``user`` that ``scene`` waits for them.

    Refused (``ValidationError``, in Spanish) when the scene waits for
    nothing from them, or they were nudged in this scene less than 12 hours
    ago (the message says from when). Side effects: a ``Nudge`` row, a
    moderation log row (NUDGE) and a notification (NUDGE) with the scene's
    link. The scene's row is locked, so two clicks at once make one nudge."""
    now = now or timezone.now()
    campaign = scene.campaign
    with transaction.atomic():
        Scene.objects.select_for_update().filter(pk=scene.pk).first()
        last = Nudge.objects.filter(scene=scene, user=user, created_at__gt=now - NUDGE_EVERY).order_by("-created_at")
        last = last.first()
        if last is not None:
            zone = deadlines.viewer_zone(actor, campaign)
            raise ValidationError(
                gettext("Ya le diste un toque a %(name)s en esta escena. Podrás darle otro a partir del %(when)s.")
                % {"name": user.public_name, "when": deadlines.when_text(last.created_at + NUDGE_EVERY, zone)},
                code="too_soon",
            )
        if not waiting_in([campaign], scene_ids=[scene.pk], user_id=user.pk):
            raise ValidationError(
                gettext("Esta escena no espera nada de %(name)s.") % {"name": user.public_name}, code="not_awaited"
            )
        nudge = Nudge.objects.create(campaign=campaign, scene=scene, user=user, sent_by=actor)
        ModerationLog.objects.create(
            campaign=campaign,
            actor=actor,
            action=ModerationAction.NUDGE,
            target_user=user,
            scene=scene,
            reason=gettext("Toque en «%(scene)s».") % {"scene": scene.title},
        )
        notify.notify_users(
            [user],
            campaign=campaign,
            kind=Notification.Kind.NUDGE,
            url=_scene_url(campaign, scene.pk),
            text=lambda: (
                gettext("La dirección te espera en «%(scene)s» (%(campaign)s).")
                % {"scene": scene.title, "campaign": campaign.title}
            ),
        )
    return nudge


def nudge_next(nudged_at: datetime | None) -> datetime | None:
    """When the next nudge is possible after one at ``nudged_at``."""
    return nudged_at + NUDGE_EVERY if nudged_at else None
