"""What every game's combat page reads first about a scene's combat
(issue 17): which combat to show, the id of its open deadline and whether
anyone in the campaign is away today, in the one query that finds it.

The games' combat models share the shape this needs (``scene``,
``campaign``, ``ended_at``); each game names the kind of deadline its combat
is given (``campaigns.models.Deadline``, target: the combat).
"""

from __future__ import annotations

from django.db.models import Exists, F, Model, OuterRef, Subquery
from django.utils.translation import gettext as _

from campaigns import absences, deadlines
from campaigns.extensions import Awaited
from campaigns.models import Absence, Deadline, Scene


def current_combat(model: type[Model], scene: Scene, *, deadline_kind: str):
    """The open ``model`` combat of the scene, or else the last one that
    ended (None: none), annotated with ``deadline_id`` (its open deadline of
    ``deadline_kind``, or None) and ``anyone_away`` (whether any member of
    the campaign is away on the campaign's today), and with its campaign and
    scene set: one query."""
    deadline = Deadline.objects.open().filter(kind=deadline_kind, target_id=OuterRef("pk"))
    away = Absence.objects.on(absences.campaign_today(scene.campaign)).filter(
        campaign_id=OuterRef("campaign_id"), returned_at__isnull=True
    )
    combat = (
        model.objects.filter(scene=scene)
        .annotate(deadline_id=Subquery(deadline.values("pk")[:1]), anyone_away=Exists(away))
        .order_by(F("ended_at").desc(nulls_first=True), "-id")
        .first()
    )
    if combat is not None:
        combat.campaign = scene.campaign
        combat.scene = scene
    return combat


def combat_deadline(combat) -> Deadline | None:
    """The open deadline of a combat from ``current_combat`` while it is
    open, with its campaign set (one query, none without a deadline)."""
    if combat.ended_at is not None or combat.deadline_id is None:
        return None
    deadline = Deadline.objects.filter(pk=combat.deadline_id).first()
    if deadline is not None:
        deadline.campaign = combat.campaign
    return deadline


def away_today(combat) -> dict:
    """Who is away today in the campaign of a combat from ``current_combat``,
    by user id (one query, none when nobody is)."""
    return absences.away_now(combat.campaign) if combat.anyone_away else {}


def turns_awaited(turns: dict, *, deadline_kind: str, url) -> list:
    """What whose-turn lists show of combats waiting for a player's
    character: ``turns`` maps each combat's id to the combatant whose turn it
    is (its ``combat`` loaded, with the campaign), ``url(combat)`` is the
    game's combat page; the turn's open deadline of ``deadline_kind`` is
    attached (one query for all of them)."""
    if not turns:
        return []
    due = deadlines.open_for(deadline_kind, list(turns))
    for combat_id, deadline in due.items():
        deadline.campaign = turns[combat_id].combat.campaign
    return [
        Awaited(
            user_id=turn.character.owner_id,
            scene_id=turn.combat.scene_id,
            kind="combat",
            text=_("Turno de %(name)s en el combate (asalto %(round)s)")
            % {"name": turn.character.name, "round": turn.combat.round},
            url=url(turn.combat),
            character=turn.character.name,
            deadline=due.get(combat_id),
        )
        for combat_id, turn in sorted(turns.items())
    ]
