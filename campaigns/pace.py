"""The campaign's pace at a glance: posts per week of each member over the
last ``WEEKS`` weeks and the days since each one's last post, the GM
included, as a small chart drawn here (an inline SVG, no JavaScript) with a
table of the same numbers for screen readers.

The direction always sees it; other members only when the campaign says so
(``Campaign.pace_public``); never anyone else (``campaigns.status`` asks only
for members). Hidden posts do not count. The direction counts every post;
other members count only what every member may read (posts to everyone in
scenes open to everyone), so the chart never tells them how much was
whispered or written in a separate group. Weeks start on Monday in the
campaign's time zone; the last one is the current, unfinished week.

Three queries whatever the number of members and posts: the people, the
posts per author and day, and each author's last post; the chart is kept in
the cache until a post or a member of the campaign changes, or the day ends.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

from django.db.models import Count, Max, Q
from django.db.models.functions import TruncDate
from django.template.loader import render_to_string
from django.utils import timezone
from django.utils.text import Truncator

from accounts.models import User
from campaigns import fragments
from campaigns.models import Campaign, Membership, Post
from campaigns.permissions import Access

WEEKS = 8

# The chart's geometry, in viewBox units (it scales to the width it is given).
WIDTH = 360
ROW = 26
TOP = 18
NAME_WIDTH = 118
BAR_WIDTH = 20
BAR_GAP = 4
BAR_HEIGHT = 18
NAME_CHARS = 16


@dataclass
class Row:
    user_id: int
    name: str
    short_name: str
    is_gm: bool
    weeks: list[int] = field(default_factory=list)
    last_post: datetime | None = None
    days_since: int | None = None
    bars: list[dict] = field(default_factory=list)
    y: int = 0


def can_see(access: Access) -> bool:
    return access.is_member and (access.is_gm or access.campaign.pace_public)


def _people(campaign: Campaign) -> list[tuple[int, str, bool]]:
    """(user id, public name, directs) of the GM and the active members, GM first (one query)."""
    members = Membership.objects.active().filter(campaign=campaign)
    users = (
        User.objects.filter(Q(pk=campaign.gm_id) | Q(pk__in=members.values("user_id")))
        .only("username", "display_name")
        .order_by("pk")
    )
    people = [(user.pk, user.public_name, user.pk == campaign.gm_id) for user in users]
    return sorted(people, key=lambda person: (not person[2], person[1].casefold(), person[0]))


def pace(campaign: Campaign, *, everything: bool, now: datetime | None = None) -> dict:
    """The numbers of the chart: one ``Row`` per person, the weeks' first days
    and the largest weekly count."""
    now = now or timezone.now()
    zone = ZoneInfo(campaign.time_zone)
    today = timezone.localtime(now, zone).date()
    this_monday = today - timedelta(days=today.weekday())
    first_monday = this_monday - timedelta(weeks=WEEKS - 1)
    since = datetime.combine(first_monday, datetime.min.time(), tzinfo=zone)

    people = _people(campaign)
    ids = [user_id for user_id, _name, _gm in people]
    posts = Post.objects.filter(scene__campaign=campaign, hidden=False, author_id__in=ids)
    if not everything:
        posts = posts.filter(scene__everyone=True, recipients=Post.Recipients.ALL)
    daily = (
        posts.filter(created_at__gte=since)
        .annotate(day=TruncDate("created_at", tzinfo=zone))
        .values("author_id", "day")
        .annotate(n=Count("pk"))
        .order_by()
    )
    weekly: dict[int, list[int]] = {user_id: [0] * WEEKS for user_id in ids}
    for row in daily:
        day: date = row["day"]
        week = (day - first_monday).days // 7
        if 0 <= week < WEEKS:
            weekly[row["author_id"]][week] += row["n"]
    last = dict(posts.values("author_id").annotate(last=Max("created_at")).order_by().values_list("author_id", "last"))

    rows = []
    for user_id, name, is_gm in people:
        last_post = last.get(user_id)
        days_since = (today - timezone.localtime(last_post, zone).date()).days if last_post else None
        rows.append(
            Row(
                user_id=user_id,
                name=name,
                short_name=Truncator(name).chars(NAME_CHARS),
                is_gm=is_gm,
                weeks=weekly[user_id],
                last_post=last_post,
                days_since=days_since,
            )
        )
    return {
        "rows": rows,
        "weeks": [first_monday + timedelta(weeks=week) for week in range(WEEKS)],
        "top": max((n for row in rows for n in row.weeks), default=0),
    }


def _draw(numbers: dict) -> dict:
    """The SVG's coordinates: one row per person, a bar per week scaled to
    the largest weekly count (a count of zero is a thin line, so the week
    still shows)."""
    top = numbers["top"] or 1
    for index, row in enumerate(numbers["rows"]):
        row.y = TOP + index * ROW
        row.bars = []
        for week, count in enumerate(row.weeks):
            height = max(1, round(BAR_HEIGHT * count / top))
            row.bars.append(
                {
                    "x": NAME_WIDTH + week * (BAR_WIDTH + BAR_GAP),
                    "y": row.y + BAR_HEIGHT - height,
                    "height": height,
                    "count": count,
                    "week": numbers["weeks"][week],
                }
            )
    return {
        "width": WIDTH,
        "height": TOP + ROW * len(numbers["rows"]),
        "bar_width": BAR_WIDTH,
        "name_x": 0,
        "days_x": WIDTH,
        "text_dy": BAR_HEIGHT - 4,
        "weeks_x": NAME_WIDTH,
    }


def campaign_part(request, campaign, access) -> str:
    """The campaign page's pace chart, for whoever may see it ("" otherwise)."""
    if not can_see(access):
        return ""
    everything = access.is_gm

    def render() -> str:
        numbers = pace(campaign, everything=everything)
        context = {"campaign": campaign, **numbers, "svg": _draw(numbers), "everything": everything}
        return render_to_string("campaigns/pace/_chart.html", context, request=request)

    # The same until a post or a membership of the campaign changes (they
    # move its version), a name changes, or the day ends where it is played.
    versions = fragments.versions(fragments.campaign_scope(campaign.pk), fragments.PEOPLE)
    today = timezone.localtime(timezone.now(), ZoneInfo(campaign.time_zone)).date()
    key = fragments.key("pace", campaign.pk, *versions, today, int(everything))
    return fragments.fragment(request, key, render)
