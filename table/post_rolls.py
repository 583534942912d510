"""Rolls made with a post: planned from the post form, rolled when the post is
published (never before: the chance preview only asks ``rules/``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

from django.utils.translation import gettext as _

from campaigns.models import Campaign
from rolls.models import RollRequest, TableRoll
from sheets.models import Character
from systems.hitos.checks.services import CheckSetup, chance, check_setup, table_check
from table.roll_requests import services as roll_requests

# A percentage with one decimal, as the preview shows it.
PERCENT = Fraction(100)


@dataclass(frozen=True)
class PlannedRoll:
    """One roll to make with a post: what is rolled and against what."""

    setup: CheckSetup
    difficulty: int
    purpose: str
    character: Character | None = None
    client_seed: str | None = None
    difficulty_hidden: bool = False


def roll_plan(
    *,
    character: Character | None,
    characteristic: str = "",
    skill: str = "",
    free_modifier: int | None = None,
    extra: Sequence[tuple[str, int]] = (),
    difficulty: int,
    purpose: str = "",
    client_seed: str | None = None,
) -> PlannedRoll:
    """A post form's roll row as a planned roll. Raises ``ValidationError``
    (code ``characteristic`` or ``skill``) when the sheet does not have what
    the row asks for."""
    setup = check_setup(character, characteristic=characteristic, skill=skill, free_modifier=free_modifier, extra=extra)
    return PlannedRoll(setup, difficulty, purpose, character, client_seed or None)


def roll_chance(plan: PlannedRoll, campaign: Campaign) -> Fraction:
    """The exact chance of success of a planned roll, from ``rules/``."""
    return chance(plan.setup, plan.difficulty, campaign)


def percent(probability: Fraction) -> float:
    """A probability as a percentage for display (the template rounds it)."""
    return float(probability * PERCENT)


def request_plan(request: RollRequest, *, client_seed: str | None = None) -> PlannedRoll:
    """The one roll that answers a GM request: everything comes from the request."""
    return PlannedRoll(
        roll_requests.request_setup(request),
        request.difficulty,
        request.purpose,
        request.character,
        client_seed or None,
        request.difficulty_hidden,
    )


def post_rolls_create(*, post, user, planned: Sequence[PlannedRoll]) -> list[TableRoll]:
    """Roll the planned rolls of ``post`` through the log, in order, inside
    the caller's transaction (the post and its rolls commit together)."""
    scene = post.scene
    made = []
    for position, plan in enumerate(planned):
        made.append(
            table_check(
                campaign=scene.campaign,
                user=user,
                setup=plan.setup,
                purpose=plan.purpose or _("Tirada"),
                difficulty=plan.difficulty,
                difficulty_hidden=plan.difficulty_hidden,
                character=plan.character,
                scene=scene,
                post=post,
                client_seed=plan.client_seed,
                position=position,
            )
        )
    return made
