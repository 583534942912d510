"""The scene's contests and initiative panel (interface for ``system.scene_context``).

Everyone who reads the scene sees the competitions and cooperations (with
each roll's card) and the initiative order; a participant's controller gets
the button to roll, the GM the set-up forms and «Anular» (with why); a
contest called off stays in the list with who did it and why (its rolls are
in the log). A constant number of queries, however many contests,
participants and rolls."""

from __future__ import annotations

from typing import Any

from django.db.models import Prefetch

from campaigns.permissions import Access
from systems.aventuras.contests import services
from systems.aventuras.contests.forms import CancelForm, ContestForm, ContestRollForm, InitiativeForm
from systems.aventuras.models import AventurasContest, AventurasContestant, AventurasInitiative

TEMPLATE = "aventuras/contests/_scene_tools.html"
# The panel shows the latest contests: open, resolved or called off.
SHOWN = 10


def _contests(scene) -> list[AventurasContest]:
    contestants = AventurasContestant.objects.select_related(
        "character__aventuras",
        "roll__first__user",
        "roll__latest__user",
        "roll__owner",
        "roll__character",
    ).prefetch_related("character__aventuras__tools")
    return list(
        AventurasContest.objects.filter(scene=scene)
        .select_related("cancelled_by")
        .prefetch_related(Prefetch("contestants", queryset=contestants))
        .order_by("-created_at", "-id")[:SHOWN]
    )


def cancel_prefix(contest_id: int) -> str:
    return f"anular-{contest_id}"


def panel_context(
    scene,
    access: Access,
    *,
    contest_form: ContestForm | None = None,
    initiative_form: InitiativeForm | None = None,
    roll_forms: dict[int, ContestRollForm] | None = None,
    cancel_forms: dict[int, CancelForm] | None = None,
    error: str = "",
    agreed_posted: list[str] | None = None,
) -> dict[str, Any]:
    from systems.aventuras import cards

    contests = _contests(scene)
    rows = [c for contest in contests for c in contest.contestants.all()]
    table_rolls = [c.roll for c in rows if c.roll is not None]
    roll_cards = cards.cards_for(table_rolls, access=access) if table_rolls else {}
    roll_forms = roll_forms or {}
    cancel_forms = cancel_forms or {}
    for contest in contests:
        contest.scene = scene
        contest.campaign = scene.campaign
        contest.rows = list(contest.contestants.all())
        contest.shown_difficulty = (
            services.effective_difficulty(contest, len(contest.rows))
            if contest.kind == AventurasContest.Kind.COOPERATION
            else None
        )
        is_open = contest.resolved_at is None and contest.cancelled_at is None
        contest.can_cancel = access.is_gm and is_open
        if contest.can_cancel:
            contest.cancel_form = cancel_forms.get(contest.pk) or CancelForm(prefix=cancel_prefix(contest.pk))
        for row in contest.rows:
            row.card = roll_cards.get(row.roll_id) if row.roll_id else None
            row.can_roll = is_open and row.roll_id is None and services.controls(access, row.character)
            if row.can_roll:
                row.form = roll_forms.get(row.pk) or ContestRollForm(character=row.character, prefix=f"lado-{row.pk}")
        contest.names = {str(row.character_id): row.character.name for row in contest.rows}
    initiative = AventurasInitiative.objects.filter(scene=scene).first()
    if initiative is not None:
        initiative.scene = scene
    order = services.initiative_order(initiative)
    # A20 — each player rolls for the tied characters they control; the GM for the rest (or all).
    rollers = services.tiebreak_rollers(order, access)
    if access.is_gm:
        # A20 «se pongan de acuerdo»: the GM may set a tied group's order without dice.
        posted = [str(pk) for pk in agreed_posted or []]
        for group in order or []:
            if group["tied"]:
                ids = [str(m["character"].pk) for m in group["members"]]
                # A refused choice comes back as it was picked (even a name twice) in its own group's form.
                choice = posted if len(posted) == len(ids) and set(posted) <= set(ids) else ids
                group["agree_slots"] = [(n, choice[n - 1]) for n in range(1, len(ids) + 1)]
    context: dict[str, Any] = {
        "aventuras_contests_template": TEMPLATE,
        "aventuras_contests": contests,
        "aventuras_initiative": order,
        "aventuras_can_tiebreak": bool(rollers),
        "aventuras_tiebreak_for": rollers,
        "aventuras_is_gm": access.is_gm,
        "aventuras_contests_error": error,
    }
    if access.is_gm:
        characters = list(services.table_characters(scene.campaign))
        context["aventuras_contest_form"] = contest_form or ContestForm(characters=characters)
        chosen = [m["character"].pk for g in order or [] for m in g["members"]]
        context["aventuras_initiative_form"] = initiative_form or InitiativeForm(
            characters=characters, initial={"characters": [str(pk) for pk in chosen]}
        )
    return context


def scene_tools(scene, access) -> dict:
    """What the scene page adds: ``aventuras_contests_template`` and what it reads."""
    if scene.is_offgame:
        return {}
    return panel_context(scene, access)
