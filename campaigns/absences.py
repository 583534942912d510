"""Absences: a member says they will be away from a campaign for some days.

The day is the campaign's (``Campaign.time_zone``): an absence "until the
12th" lasts until midnight of the 12th where the campaign is played.
"""

from __future__ import annotations

from datetime import date, datetime
from zoneinfo import ZoneInfo

from django.utils import timezone

from campaigns.models import Absence, Campaign


def campaign_today(campaign: Campaign, now: datetime | None = None) -> date:
    """Today's date where the campaign is played."""
    return timezone.localtime(now or timezone.now(), ZoneInfo(campaign.time_zone)).date()


def away_now(campaign: Campaign, now: datetime | None = None) -> dict[int, Absence]:
    """The members away today, by user id, with the absence that covers
    today (one query)."""
    today = campaign_today(campaign, now)
    return {absence.user_id: absence for absence in Absence.objects.on(today).filter(campaign=campaign)}


def away_user_ids(campaign: Campaign, now: datetime | None = None) -> set[int]:
    """The ids of the members away today (for the badges beside their names)."""
    return set(away_now(campaign, now))


def effective_consent(membership) -> str:
    """What the member allows while away in this campaign
    (``accounts.TakeoverConsent``): the campaign's choice, else the profile's."""
    return membership.takeover_consent or membership.user.takeover_consent


def notice_returns(now: datetime | None = None) -> int:
    """(being written)"""
    return 0
