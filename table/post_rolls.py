"""Rolls made with a post: planned from the post form by the campaign's game
system, rolled when the post is published (never before: the chance preview
only asks ``rules/``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from django.core.exceptions import ImproperlyConfigured

from table import systems
from table.models import RollRequest, TableRoll

# A percentage with one decimal, as the preview shows it.
PERCENT = Fraction(100)


@dataclass(frozen=True)
class PlannedRoll:
    """One roll to make with a post: what the system will roll (``setup``,
    its own) and against what."""

    setup: Any
    difficulty: int | None
    purpose: str
    character: Any = None
    client_seed: str | None = None
    difficulty_hidden: bool = False


def system_of(campaign) -> systems.GameSystem:
    """The campaign's game system; a campaign whose system is not installed
    has no rolls at the table (the post form offers no rows)."""
    system = systems.for_campaign(campaign)
    if system is None:
        raise ImproperlyConfigured(f"the game system {campaign.system!r} is not installed")
    return system


def percent(probability: Fraction) -> float:
    """A probability as a percentage for display (the template rounds it)."""
    return float(probability * PERCENT)


def request_plan(request: RollRequest, *, client_seed: str | None = None) -> PlannedRoll:
    """The one roll that answers a GM request: everything comes from the request."""
    return system_of(request.campaign).request_plan(request, client_seed=client_seed)


def post_rolls_create(*, post, user, planned: Sequence[PlannedRoll]) -> list[TableRoll]:
    """Roll the planned rolls of ``post`` through the log, in order, inside
    the caller's transaction (the post and its rolls commit together)."""
    if not planned:
        return []
    system = system_of(post.scene.campaign)
    return [system.roll(plan, post=post, user=user, position=position) for position, plan in enumerate(planned)]
