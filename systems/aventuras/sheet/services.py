"""Writes to Hora de Aventuras sheets. Each runs in one transaction and
records a ``SheetEvent`` (who, when, what, why).

Every write in play locks the character's row (``select_for_update``) before
it reads the sheet, so two simultaneous changes both land. Hero points are
not written here: they only move through the ledger (``heroes.ledger``);
a new hero starts with five (A21), a GM character has none (A20). A state
"por el morro" is created by the hero points package, since it gives a point
(A27); this module only adds and removes the other states.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils.translation import gettext as _

from campaigns.permissions import campaign_access
from rules.aventuras import ACTION_KINDS, STARTING_HERO_POINTS
from sheets.models import Character, SheetEvent
from sheets.services import sheet_log
from systems.aventuras.models import (
    ACTION_KIND_LABELS,
    AventurasEvent,
    AventurasFeat,
    AventurasSheet,
    AventurasState,
    AventurasTool,
    HeroMove,
)

EXPORT_FORMAT = "aventuras-ficha/v1"

# The form's fields that belong to the shared character core; the rest are the sheet's.
CORE_FIELDS = ("name", "public_description", "private_notes", "gm_notes")
# The sheet's own fields the form (and an exported file) carries.
SHEET_EXPORT_FIELDS = (
    "concept",
    "cachas",
    "cerebrito",
    "espabilado",
    "majo",
    "highlighted",
    "health",
    "flaw",
    "flaw_earns",
)
# The sheet's fields only the form (and the exported file) of a GM character carries.
NPC_FIELDS = ("known",)


@dataclass
class SheetData:
    """What the sheet form (or an imported file) says about a character."""

    fields: dict[str, Any]
    feats: list[dict[str, Any]] = field(default_factory=list)  # name, description, needs_hero_point
    tools: list[dict[str, Any]] = field(default_factory=list)  # name, attribute, bonus, uses


@dataclass
class PlayState:
    """What an imported file says about the sheet in play."""

    health_lost: int = 0
    experience: int = 0
    # A21 — the hero points the file had (None: start with five, or an NPC).
    hero_points: int | None = None
    # name, modifier, threshold, applies_to (states "por el morro" are not brought back: A27).
    states: list[dict[str, Any]] = field(default_factory=list)


def _apply_fields(character: Character, sheet: AventurasSheet, data: SheetData) -> None:
    for name, value in data.fields.items():
        setattr(character if name in CORE_FIELDS else sheet, name, value)


def _sync_rows(sheet: AventurasSheet, data: SheetData) -> None:
    sheet.feats.all().delete()
    AventurasFeat.objects.bulk_create(AventurasFeat(sheet=sheet, **feat) for feat in data.feats)
    sheet.tools.all().delete()
    AventurasTool.objects.bulk_create(AventurasTool(sheet=sheet, **tool) for tool in data.tools)


def _restore_play(character: Character, sheet: AventurasSheet, play: PlayState, *, actor, by_gm: bool) -> None:
    """An imported file's sheet in play: health lost and states as the file
    says. Hero points and experience only when the GM imports it: a hero
    imported by anyone else starts with five hero points (A21) and no
    experience (the GM sets experience, ``experience_set``). The GM's import
    keeps the file's values and records them: a ``HeroMove`` of kind
    ``ADJUST`` (why «importada») when the points are not five, an
    experience event when there is any."""
    sheet.health_lost = min(play.health_lost, sheet.health)
    sheet.save(update_fields=["health_lost"])
    for state in play.states:
        row = AventurasState(sheet=sheet, **state)
        row.full_clean(exclude=["sheet", "scene"])
        row.save()
    if not by_gm:
        return
    why = _("importada")
    if sheet.hero_points is not None and play.hero_points is not None and play.hero_points != sheet.hero_points:
        from systems.aventuras.heroes import ledger

        move = ledger.gain(
            character,
            by=actor,
            kind=HeroMove.Kind.ADJUST,
            points=play.hero_points - sheet.hero_points,
            why=why,
        )
        sheet.hero_points = move.points_after
    if play.experience:
        sheet.experience = play.experience
        sheet.full_clean(exclude=["character"])
        sheet.save(update_fields=["experience"])
        sheet_log(
            character,
            character.campaign,
            actor,
            AventurasEvent.EXPERIENCE,
            _("Experiencia: %(n)s") % {"n": play.experience},
            reason=why,
            before={"experience": 0},
            after={"experience": play.experience},
        )


@transaction.atomic
def sheet_create(
    *,
    campaign,
    owner,
    actor,
    data: SheetData,
    kind: str = Character.Kind.PC,
    imported: bool = False,
    play: PlayState | None = None,
) -> Character:
    """A new draft (or, for an NPC, the GM's character, ready to play). A
    hero starts with five hero points (A21); a GM character has none (A20).
    An imported one also gets back its ``play`` state; its hero points and
    experience only when ``actor`` is the campaign's GM (``_restore_play``)."""
    character = Character(campaign=campaign, owner=owner, kind=kind)
    npc = kind == Character.Kind.NPC
    sheet = AventurasSheet(character=character, hero_points=None if npc else STARTING_HERO_POINTS)
    _apply_fields(character, sheet, data)
    if npc:
        character.status = Character.Status.APPROVED
    character.full_clean()
    sheet.full_clean(exclude=["character"])
    character.save()
    sheet.character = character
    sheet.save()
    _sync_rows(sheet, data)
    kind_event = SheetEvent.Kind.IMPORTED if imported else SheetEvent.Kind.CREATED
    sheet_log(character, campaign, actor, kind_event, character.name)
    if play is not None:
        _restore_play(character, sheet, play, actor=actor, by_gm=campaign_access(actor, campaign).is_gm)
    return character


def check_reason(*, character: Character, actor, reason: str) -> None:
    """Someone other than the owner (the GM) changing a sheet says why: the
    owner reads it in the history (who, when, why)."""
    if getattr(actor, "pk", None) != character.owner_id and not (reason or "").strip():
        raise ValidationError(
            _("Indica el motivo: cambias la ficha de otra persona y queda en su historial."), code="reason"
        )


def _locked(character: Character) -> Character:
    """The character again, its row locked until the transaction ends, with
    its campaign and its sheet (read after the lock)."""
    locked = Character.objects.select_for_update(of=("self",)).select_related("campaign").get(pk=character.pk)
    locked.aventuras = AventurasSheet.objects.get(pk=locked.pk)
    return locked


@transaction.atomic
def sheet_update(*, character: Character, actor, data: SheetData, reason: str = "") -> Character:
    """The sheet form saved. Hero points, experience, health lost and states
    are not the form's: they keep their values (health lost at most the new
    health). Someone other than the owner says why (``check_reason``)."""
    check_reason(character=character, actor=actor, reason=reason)
    locked = _locked(character)
    sheet = locked.aventuras
    _apply_fields(locked, sheet, data)
    sheet.health_lost = min(sheet.health_lost, sheet.health)
    locked.full_clean()
    sheet.full_clean(exclude=["character"])
    locked.save()
    sheet.save()
    _sync_rows(sheet, data)
    sheet_log(locked, locked.campaign, actor, SheetEvent.Kind.EDITED, locked.name, reason=reason)
    return locked


# --- in play: health, states, experience --------------------------------------------


def health_text(sheet: AventurasSheet) -> str:
    return _("Salud %(left)s/%(max)s") % {"left": sheet.health_left, "max": sheet.health}


def health_change(*, character: Character, actor, change: int, reason: str = "") -> Character:
    """Mark (``change`` < 0) or heal (``change`` > 0) health levels. Refused
    in Spanish, nothing changed, past zero or past the sheet's health."""
    if type(change) is not int or change == 0:
        raise ValidationError(_("Indica si pierde o recupera niveles de salud."))
    check_reason(character=character, actor=actor, reason=reason)
    with transaction.atomic():
        locked = _locked(character)
        sheet = locked.aventuras
        lost = sheet.health_lost - change
        if lost > sheet.health:
            raise ValidationError(_("No le quedan niveles de salud que perder."))
        if lost < 0:
            raise ValidationError(_("Ya tiene todos sus niveles de salud."))
        before = {"health_lost": sheet.health_lost}
        sheet.health_lost = lost
        sheet.save(update_fields=["health_lost"])
        sheet_log(
            locked,
            locked.campaign,
            actor,
            AventurasEvent.HEALTH,
            health_text(sheet),
            reason=reason,
            before=before,
            after={"health_lost": lost},
        )
    return locked


def state_text(state: AventurasState) -> str:
    """«Hambriento (−1 dado, éxito solo con 5 o más; acciones físicas)», as the history says it."""
    parts = []
    if state.modifier:
        parts.append(_("%(n)+d dados") % {"n": state.modifier})
    if state.threshold:
        parts.append(str(AventurasState.Threshold(state.threshold).label))
    parts.append(
        _("acciones de tipo %(kind)s") % {"kind": ACTION_KIND_LABELS.get(state.applies_to, state.applies_to)}
        if state.applies_to
        else _("todas las acciones")
    )
    return f"{state.name} ({', '.join(parts)})"


def _state_snapshot(state: AventurasState) -> dict[str, Any]:
    return {
        "state": state.pk,
        "name": state.name,
        "modifier": state.modifier,
        "threshold": state.threshold,
        "applies_to": state.applies_to,
        "for_free": state.for_free,
    }


def state_add(
    *,
    character: Character,
    actor,
    name: str,
    modifier: int = 0,
    threshold: str = "",
    applies_to: str = "",
    reason: str = "",
) -> AventurasState:
    """A state on the character (A3: the dice it adds or takes; A7: the
    threshold it moves; which kind of action it touches, or all). Never "por
    el morro": that one gives a hero point (A27) and is the ledger's."""
    if applies_to and applies_to not in ACTION_KINDS:
        raise ValidationError(_("Un estado afecta a las acciones físicas, mentales, sociales o a todas."))
    check_reason(character=character, actor=actor, reason=reason)
    with transaction.atomic():
        locked = _locked(character)
        state = AventurasState(
            sheet=locked.aventuras,
            name=" ".join(name.split()),
            modifier=modifier,
            threshold=threshold,
            applies_to=applies_to,
            for_free=False,
        )
        state.full_clean(exclude=["scene"])
        state.save()
        sheet_log(
            locked,
            locked.campaign,
            actor,
            AventurasEvent.STATE,
            _("Recibe el estado %(state)s") % {"state": state_text(state)},
            reason=reason,
            after=_state_snapshot(state),
        )
    return state


def state_remove(*, character: Character, actor, state_id: int, reason: str = "", may_remove_for_free: bool) -> None:
    """A state goes. One "por el morro" (A27: player and GM agreed it, it
    lasts its scene) only by the GM (``may_remove_for_free``)."""
    check_reason(character=character, actor=actor, reason=reason)
    with transaction.atomic():
        locked = _locked(character)
        state = AventurasState.objects.filter(sheet=locked.aventuras, pk=state_id).first()
        if state is None:
            raise ValidationError(_("Ese estado no está en esta ficha."))
        if state.for_free and not may_remove_for_free:
            raise ValidationError(_("Un estado por el morro dura su escena: solo la dirección puede quitarlo antes."))
        before = _state_snapshot(state)
        state.delete()
        sheet_log(
            locked,
            locked.campaign,
            actor,
            AventurasEvent.STATE,
            _("Ya no tiene el estado %(state)s") % {"state": state.name},
            reason=reason,
            before=before,
        )


def experience_set(*, character: Character, actor, experience: int, reason: str) -> Character:
    """The GM sets the character's experience points, saying why."""
    if not reason.strip():
        raise ValidationError(_("Indica el motivo del cambio de experiencia."))
    with transaction.atomic():
        locked = _locked(character)
        sheet = locked.aventuras
        if sheet.experience == experience:
            raise ValidationError(_("Ya tiene %(n)s puntos de Experiencia.") % {"n": experience})
        before = {"experience": sheet.experience}
        sheet.experience = experience
        sheet.full_clean(exclude=["character"])
        sheet.save(update_fields=["experience"])
        sheet_log(
            locked,
            locked.campaign,
            actor,
            AventurasEvent.EXPERIENCE,
            _("Experiencia: %(n)s") % {"n": experience},
            reason=reason,
            before=before,
            after={"experience": experience},
        )
    return locked


# --- export ----------------------------------------------------------------------------


def sheet_export(character: Character, *, include_gm_notes: bool) -> dict[str, Any]:
    """The sheet as JSON-ready data: everything it holds but its owner, its
    review and its history. ``forms.import_form_data`` and
    ``forms.import_play_state`` read it back; ``sheet_create`` restores it."""
    sheet = character.aventuras
    data: dict[str, Any] = {
        "format": EXPORT_FORMAT,
        "kind": character.kind,
        "name": character.name,
        **{name: getattr(sheet, name) for name in SHEET_EXPORT_FIELDS},
        "highlighted": list(sheet.highlighted or []),
        "feats": [
            {"name": f.name, "description": f.description, "needs_hero_point": f.needs_hero_point}
            for f in sheet.feats.all()
        ],
        "tools": [
            {"name": t.name, "attribute": t.attribute, "bonus": t.bonus, "uses": t.uses} for t in sheet.tools.all()
        ],
        **({name: getattr(sheet, name) for name in NPC_FIELDS} if character.kind == Character.Kind.NPC else {}),
        "health_lost": sheet.health_lost,
        "experience": sheet.experience,
        "hero_points": sheet.hero_points,
        "states": [
            {
                "name": s.name,
                "modifier": s.modifier,
                "threshold": s.threshold,
                "applies_to": s.applies_to,
                "for_free": s.for_free,
            }
            for s in sheet.states.all()
        ],
        "public_description": character.public_description,
        "private_notes": character.private_notes,
        "status": character.status,
    }
    if include_gm_notes:
        data["gm_notes"] = character.gm_notes
    return data
