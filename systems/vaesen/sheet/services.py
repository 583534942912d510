"""Writes to Vaesen sheets. Each runs in one transaction, asks ``rules.vaesen``
for every piece of game arithmetic and records a ``SheetEvent`` (who, when,
what, why, the post or roll it came from).

Every write in play locks the character's row (``select_for_update``) before
it reads the sheet, so two simultaneous changes both land. The rolls call
``apply_conditions``, ``add_injury`` and ``terror_set``; the sheet's own
buttons call ``condition_change``, ``resistance_change``, ``injury_treated``
and ``terror_end``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext, pgettext

from rules.vaesen import CONDITION_NAMES, FACES, ConditionKind, Conditions, heal, suffer
from sheets.models import Character, SheetEvent
from sheets.services import sheet_log
from systems.vaesen.models import VaesenEvent, VaesenInjury, VaesenItem, VaesenSheet, VaesenWeapon

EXPORT_FORMAT = "vaesen-ficha/v1"

# The form's fields that belong to the shared character core; the rest are the sheet's.
CORE_FIELDS = ("name", "public_description", "private_notes", "gm_notes")


# --- the sheet itself -----------------------------------------------------------


@dataclass
class SheetData:
    """What the sheet form (or an imported file) says about a character."""

    fields: dict[str, Any]
    skills: dict[str, int] = field(default_factory=dict)
    items: list[dict[str, Any]] = field(default_factory=list)  # name, bonus, skill, availability
    weapons: list[dict[str, Any]] = field(default_factory=list)  # name, skill, damage, bonus, range


@dataclass
class PlayState:
    """What an imported file says about the sheet in play."""

    conditions: Conditions = field(default_factory=Conditions)
    resistance_lost: int = 0
    injuries: list[dict[str, Any]] = field(default_factory=list)
    # V27 — Aterrorizado: rounds (0: not) and the reaction chosen.
    terrified_rounds: int = 0
    terror_reaction: str = ""
    # V20 (the "next test" reading) — the points lost since the NPC's last test.
    resistance_unspent: int = 0
    # V10 — the critical injuries owed and not rolled yet ("físico", "mental").
    pending_injuries: list[str] = field(default_factory=list)


def _apply_fields(character: Character, sheet: VaesenSheet, data: SheetData) -> None:
    for name, value in data.fields.items():
        setattr(character if name in CORE_FIELDS else sheet, name, value)
    sheet.skills = {name: value for name, value in data.skills.items() if value}


def _sync_rows(sheet: VaesenSheet, data: SheetData) -> None:
    sheet.items.all().delete()
    VaesenItem.objects.bulk_create(VaesenItem(sheet=sheet, **item) for item in data.items)
    sheet.weapons.all().delete()
    VaesenWeapon.objects.bulk_create(VaesenWeapon(sheet=sheet, **weapon) for weapon in data.weapons)


def _restore_play(sheet: VaesenSheet, play: PlayState) -> None:
    sheet.set_conditions(play.conditions)
    sheet.resistance_lost = min(play.resistance_lost, sheet.resistance or 0)
    sheet.resistance_unspent = min(play.resistance_unspent, sheet.resistance_lost)
    sheet.pending_injuries = list(play.pending_injuries)
    sheet.terrified_rounds, sheet.terror_reaction = play.terrified_rounds, play.terror_reaction
    sheet.save()
    for injury in play.injuries:
        row = VaesenInjury(sheet=sheet, **injury)
        row.full_clean(exclude=["sheet"])
        row.save()


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
    """A new draft (or, for an NPC, a stat block owned by the GM, ready to play).
    An imported one also gets back its ``play`` state (conditions, Resistencia
    lost, critical injuries)."""
    character = Character(campaign=campaign, owner=owner, kind=kind)
    sheet = VaesenSheet(character=character)
    _apply_fields(character, sheet, data)
    if kind == Character.Kind.NPC:
        character.status = Character.Status.APPROVED
    character.full_clean()
    sheet.full_clean(exclude=["character"])
    character.save()
    sheet.character = character
    sheet.save()
    _sync_rows(sheet, data)
    if play is not None:
        _restore_play(sheet, play)
    kind_event = SheetEvent.Kind.IMPORTED if imported else SheetEvent.Kind.CREATED
    sheet_log(character, campaign, actor, kind_event, character.name)
    return character


def _locked(character: Character) -> Character:
    """The character again, its row locked until the transaction ends, with
    its campaign and its sheet (read after the lock: what the last writer
    committed)."""
    locked = Character.objects.select_for_update(of=("self",)).select_related("campaign").get(pk=character.pk)
    locked.vaesen = VaesenSheet.objects.get(pk=locked.pk)
    return locked


@transaction.atomic
def sheet_update(*, character: Character, actor, data: SheetData, reason: str = "") -> Character:
    locked = _locked(character)
    sheet = locked.vaesen
    _apply_fields(locked, sheet, data)
    if sheet.resistance is None:
        sheet.resistance_lost = 0
    else:
        sheet.resistance_lost = min(sheet.resistance_lost, sheet.resistance)
    sheet.resistance_unspent = min(sheet.resistance_unspent, sheet.resistance_lost)
    locked.full_clean()
    sheet.full_clean(exclude=["character"])
    locked.save()
    sheet.save()
    _sync_rows(sheet, data)
    sheet_log(locked, locked.campaign, actor, SheetEvent.Kind.EDITED, locked.name, reason=reason)
    return locked


# --- conditions, Broken and critical injuries (V8–V13, V20, V28) ---------------


def _snapshot(sheet: VaesenSheet) -> dict[str, Any]:
    return {
        "physical": list(sheet.physical_conditions),
        "mental": list(sheet.mental_conditions),
        "broken_physical": sheet.broken_physical,
        "broken_mental": sheet.broken_mental,
    }


def _summary(sheet: VaesenSheet) -> str:
    conditions = [*sheet.physical_conditions, *sheet.mental_conditions]
    if sheet.broken_physical:
        conditions.append(_("Derrotado físicamente"))
    if sheet.broken_mental:
        conditions.append(_("Derrotado mentalmente"))
    return ", ".join(conditions) or _("sin estados")


def _store_conditions(locked: Character, conditions: Conditions, *, actor, reason: str, post, roll) -> SheetEvent:
    sheet = locked.vaesen
    before = _snapshot(sheet)
    sheet.set_conditions(conditions)
    sheet.save(update_fields=["physical_conditions", "mental_conditions", "broken_physical", "broken_mental"])
    return sheet_log(
        locked,
        locked.campaign,
        actor,
        VaesenEvent.CONDITION,
        _summary(sheet),
        reason=reason,
        post=post,
        roll=roll,
        before=before,
        after=_snapshot(sheet),
    )


def apply_conditions(character: Character, conditions: Conditions, *, actor, reason: str, post=None, roll=None) -> None:
    """Store the character's conditions and Broken states as ``conditions``
    (worked out by the caller with ``rules.vaesen``) and record one
    ``SheetEvent``, in the caller's transaction."""
    with transaction.atomic():
        locked = _locked(character)
        _store_conditions(locked, conditions, actor=actor, reason=reason, post=post, roll=roll)
    _refresh(character, locked)


def _refresh(character: Character, locked: Character) -> None:
    """The caller's character object sees what was stored."""
    if not Character.vaesen.is_cached(character):
        return
    sheet = character.vaesen
    for name in (
        "physical_conditions",
        "mental_conditions",
        "broken_physical",
        "broken_mental",
        "resistance_lost",
        "resistance_unspent",
    ):
        setattr(sheet, name, getattr(locked.vaesen, name))


def add_injury(
    character: Character,
    *,
    kind,
    roll_value: int | None,
    name: str,
    effect: str,
    time_limit: str,
    actor,
    reason: str,
    roll=None,
    settles_pending: bool = False,
) -> VaesenInjury:
    """Record a critical injury (V13) with its time limit for treatment (V28).
    With ``settles_pending`` it is the one the sheet's «Sufrir» owes of its
    kind (V10): no longer pending."""
    try:
        kind = ConditionKind(kind)
    except ValueError:
        raise ValidationError(_("Tipo de herida desconocido: física o mental.")) from None
    with transaction.atomic():
        locked = _locked(character)
        injury = VaesenInjury(
            sheet=locked.vaesen,
            kind=kind.value,
            roll=roll_value,
            name=name,
            effect=effect,
            time_limit=time_limit,
        )
        injury.full_clean()
        injury.save()
        sheet = locked.vaesen
        if settles_pending and kind.value in sheet.pending_injuries:
            pending = list(sheet.pending_injuries)
            pending.remove(kind.value)
            sheet.pending_injuries = pending
            sheet.save(update_fields=["pending_injuries"])
        summary = f"{injury.name} ({injury.roll})" if injury.roll else injury.name
        sheet_log(
            locked,
            locked.campaign,
            actor,
            VaesenEvent.INJURY,
            summary,
            reason=reason,
            roll=roll,
            after={"injury": injury.pk, "kind": injury.kind, "time_limit": injury.time_limit},
        )
    return injury


class ConditionAction:
    TICK = "marcar"
    UNTICK = "quitar"
    SUFFER = "sufrir"
    RECOVER = "recuperar"  # no longer Broken (V28)

    ALL = (TICK, UNTICK, SUFFER, RECOVER)


def _kind_label(kind: ConditionKind) -> str:
    return _("físico") if kind is ConditionKind.PHYSICAL else _("mental")


def kind_word(kind: ConditionKind | str, *, agrees: str = "estado") -> str:
    """ "físico" or "mental" as a sentence needs it, translated: after
    "estado" (the default), "estados" (plural) or a feminine noun ("herida",
    "recuperación")."""
    physical = ConditionKind(kind) is ConditionKind.PHYSICAL
    if agrees == "estados":
        return _("físicos") if physical else _("mentales")
    if agrees == "herida":
        return pgettext("femenino", "física") if physical else pgettext("femenino", "mental")
    return _kind_label(ConditionKind(kind))


def _broken_label(kind: ConditionKind) -> str:
    return _("Derrotado físicamente") if kind is ConditionKind.PHYSICAL else _("Derrotado mentalmente")


def _next_conditions(sheet: VaesenSheet, kind: ConditionKind, action: str, name: str) -> Conditions:
    """What one button of the sheet does to its conditions, or the reason it
    cannot (a ``ValidationError`` in Spanish)."""
    current = sheet.conditions()
    if action == ConditionAction.TICK:
        if name not in CONDITION_NAMES[kind]:
            raise ValidationError(_("«%(name)s» no es un estado %(kind)s.") % {"name": name, "kind": _kind_label(kind)})
        if name in current.of(kind):
            raise ValidationError(_("«%(name)s» ya está marcado.") % {"name": name})
        if current.broken(kind):
            raise ValidationError(
                _("El personaje ya está %(broken)s: recupéralo antes de marcar estados.")
                % {"broken": _broken_label(kind)}
            )
        return suffer(current, kind, 1, choices=[name]).conditions
    if action == ConditionAction.UNTICK:
        if name not in CONDITION_NAMES[kind]:
            raise ValidationError(_("«%(name)s» no es un estado %(kind)s.") % {"name": name, "kind": _kind_label(kind)})
        if name not in current.of(kind):
            raise ValidationError(_("«%(name)s» no está marcado.") % {"name": name})
        return heal(current, kind, [name])
    if action == ConditionAction.SUFFER:
        if current.broken(kind):
            raise ValidationError(
                _("El personaje ya está %(broken)s: no puede sufrir más estados de este tipo.")
                % {"broken": _broken_label(kind)}
            )
        # V10 — with the three marked, the next one makes the character Broken.
        return suffer(current, kind, 1).conditions
    if action == ConditionAction.RECOVER:
        if not current.broken(kind):
            raise ValidationError(_("El personaje no está %(broken)s.") % {"broken": _broken_label(kind)})
        return heal(current, kind, broken=True)
    raise ValidationError(_("Acción desconocida para los estados."))


def condition_change(*, character: Character, actor, kind, action: str, name: str = "", reason: str = "") -> Character:
    """One of the sheet's condition buttons: tick or untick a condition, suffer
    the next one (the fourth makes the character Broken, V10) or recover from
    Broken (V28). Refused with a Spanish ``ValidationError``, changing nothing,
    when impossible."""
    try:
        kind = ConditionKind(kind)
    except ValueError:
        raise ValidationError(_("Tipo de estado desconocido.")) from None
    with transaction.atomic():
        locked = _locked(character)
        if locked.vaesen.uses_resistance:
            raise ValidationError(_("Este PNJ no sufre estados: pierde puntos de Resistencia."))
        sheet = locked.vaesen
        was_broken = sheet.conditions().broken(kind)
        conditions = _next_conditions(sheet, kind, action, name)
        if action == ConditionAction.SUFFER and conditions.broken(kind) and not was_broken:
            # V10 — the condition that breaks the character is a critical injury:
            # owed until the GM rolls it from the sheet (or writes it by hand).
            sheet.pending_injuries = [*sheet.pending_injuries, kind.value]
            sheet.save(update_fields=["pending_injuries"])
        _store_conditions(locked, conditions, actor=actor, reason=reason, post=None, roll=None)
    return locked


def resistance_change(*, character: Character, actor, change: int, reason: str = "") -> Character:
    """A human NPC or an animal loses (``change`` < 0) or gets back Resistencia
    points (V20)."""
    with transaction.atomic():
        locked = _locked(character)
        sheet = locked.vaesen
        if not sheet.uses_resistance:
            raise ValidationError(_("Esta ficha no tiene puntos de Resistencia: sufre estados."))
        lost = sheet.resistance_lost - change
        if lost > sheet.resistance:
            raise ValidationError(_("No le quedan puntos de Resistencia que perder."))
        if lost < 0:
            raise ValidationError(_("Ya tiene todos sus puntos de Resistencia."))
        before = {"resistance_lost": sheet.resistance_lost}
        sheet.resistance_lost = lost
        # V20 (``NpcPenalty.NEXT_TEST``) — the points lost wait for the next
        # test; points given back are the last ones lost first.
        unspent = sheet.resistance_unspent - change if change < 0 else max(sheet.resistance_unspent - change, 0)
        sheet.resistance_unspent = min(unspent, lost)
        sheet.save(update_fields=["resistance_lost", "resistance_unspent"])
        sheet_log(
            locked,
            locked.campaign,
            actor,
            VaesenEvent.RESISTANCE,
            _("Resistencia %(left)s/%(max)s") % {"left": sheet.resistance_left, "max": sheet.resistance},
            reason=reason,
            before=before,
            after={"resistance_lost": lost},
        )
    return locked


def npc_test_taken(character: Character) -> None:
    """V20 (``NpcPenalty.NEXT_TEST``) — a human NPC or an animal has rolled a
    test: the Resistencia points lost before it no longer cost dice. Kept
    whatever the campaign's option, so that switching to the literal reading
    counts only what was lost since the last test. Bookkeeping of the rolls
    (the test's own log entry says why): no ``SheetEvent``."""
    with transaction.atomic():
        locked = _locked(character)
        sheet = locked.vaesen
        if sheet.resistance_unspent:
            sheet.resistance_unspent = 0
            sheet.save(update_fields=["resistance_unspent"])
    if Character.vaesen.is_cached(character):
        character.vaesen.resistance_unspent = 0


def injury_treated(*, character: Character, actor, injury_id: int, treated: bool, reason: str = "") -> VaesenInjury:
    """Mark a critical injury treated (V28) or not treated again."""
    with transaction.atomic():
        locked = _locked(character)
        injury = VaesenInjury.objects.filter(sheet=locked.vaesen, pk=injury_id).first()
        if injury is None:
            raise ValidationError(_("Esa herida crítica no está en esta ficha."))
        if injury.treated == treated:
            message = _("La herida ya está tratada.") if treated else _("La herida no estaba tratada.")
            raise ValidationError(message)
        injury.treated = treated
        injury.save(update_fields=["treated"])
        summary = injury.name + " · " + (_("tratada") if treated else _("sin tratar"))
        sheet_log(
            locked,
            locked.campaign,
            actor,
            VaesenEvent.TREATED,
            summary,
            reason=reason,
            before={"injury": injury.pk, "treated": not treated},
            after={"injury": injury.pk, "treated": treated},
        )
    return injury


# --- Aterrorizado after a failed fear test (V27) ------------------------------------

# V27 — the player's choice of reaction while Aterrorizado (stored as the key).
REACTIONS = {
    "Huida": gettext_lazy("Huida"),
    "Parálisis": gettext_lazy("Parálisis"),
    "Desmayo": gettext_lazy("Desmayo"),
    "Agresión": gettext_lazy("Agresión"),
}


def terror_text(rounds: int, reaction: str) -> str:
    """«Aterrorizado (3 asaltos): Parálisis», as the sheet and its history say it."""
    label = REACTIONS.get(reaction, reaction)
    return ngettext(
        "Aterrorizado (%(rounds)s asalto): %(reaction)s",
        "Aterrorizado (%(rounds)s asaltos): %(reaction)s",
        rounds,
    ) % {"rounds": rounds, "reaction": label}


def _terror_snapshot(sheet: VaesenSheet) -> dict[str, Any]:
    return {"terrified_rounds": sheet.terrified_rounds, "terror_reaction": sheet.terror_reaction}


def _store_terror(locked: Character, rounds: int, reaction: str, *, actor, summary: str, reason: str, post, roll):
    sheet = locked.vaesen
    before = _terror_snapshot(sheet)
    sheet.terrified_rounds, sheet.terror_reaction = rounds, reaction
    # Saved (not updated) so that the cached sheet pages move on (``fragments.track``).
    sheet.save(update_fields=["terrified_rounds", "terror_reaction"])
    return sheet_log(
        locked,
        locked.campaign,
        actor,
        VaesenEvent.CONDITION,
        summary,
        reason=reason,
        post=post,
        roll=roll,
        before=before,
        after=_terror_snapshot(sheet),
    )


def terror_set(character: Character, *, rounds: int, reaction: str, actor, reason: str, roll=None, post=None) -> None:
    """V27 — after a failed fear test the character is Aterrorizado for
    ``rounds`` (the 1d6 rolled through the log) with the ``reaction`` the
    player chose (Huida, Parálisis, Desmayo or Agresión); one ``SheetEvent``,
    in the caller's transaction. Refused (Spanish ``ValidationError``,
    nothing changed) with rounds outside 1–6 or another reaction."""
    if reaction not in REACTIONS:
        raise ValidationError(_("Elige una reacción: Huida, Parálisis, Desmayo o Agresión."), code="reaction")
    if type(rounds) is not int or not 1 <= rounds <= FACES:
        raise ValidationError(_("Se queda Aterrorizado de 1 a %(max)s asaltos.") % {"max": FACES}, code="rounds")
    with transaction.atomic():
        locked = _locked(character)
        _store_terror(
            locked,
            rounds,
            reaction,
            actor=actor,
            summary=terror_text(rounds, reaction),
            reason=reason,
            post=post,
            roll=roll,
        )
    if Character.vaesen.is_cached(character):
        character.vaesen.terrified_rounds, character.vaesen.terror_reaction = rounds, reaction


def terror_end(*, character: Character, actor, reason: str = "") -> Character:
    """The GM ends the Aterrorizado state (its rounds are over, V27); one
    ``SheetEvent``. Refused in Spanish, nothing changed, when the character
    is not Aterrorizado."""
    with transaction.atomic():
        locked = _locked(character)
        if not locked.vaesen.terrified_rounds:
            raise ValidationError(_("%(name)s no está Aterrorizado.") % {"name": locked.name}, code="terror")
        _store_terror(
            locked, 0, "", actor=actor, summary=_("Ya no está Aterrorizado"), reason=reason, post=None, roll=None
        )
    return locked


# --- export and import -----------------------------------------------------------

SHEET_EXPORT_FIELDS = (
    "npc_kind",
    "archetype",
    "age",
    "fisico",
    "precision",
    "logica",
    "empatia",
    "motivation",
    "trauma",
    "dark_secret",
    "relationships",
    "insights",
    "defects",
    "talents",
    "resources",
    "armour",
    "armour_protection",
    "armour_agility_penalty",
    "fear",
    "resistance",
)


def sheet_export(character: Character, *, include_gm_notes: bool) -> dict[str, Any]:
    """The sheet as JSON-ready data: everything it holds but its owner, its
    review and its history. ``forms.import_form_data`` and
    ``forms.import_play_state`` read it back; ``sheet_create`` restores it."""
    sheet = character.vaesen
    data: dict[str, Any] = {
        "format": EXPORT_FORMAT,
        "kind": character.kind,
        "name": character.name,
        **{name: getattr(sheet, name) for name in SHEET_EXPORT_FIELDS},
        "skills": dict(sheet.skills),
        "items": [
            {"name": i.name, "bonus": i.bonus, "skill": i.skill, "availability": i.availability}
            for i in sheet.items.all()
        ],
        "weapons": [
            {"name": w.name, "skill": w.skill, "damage": w.damage, "bonus": w.bonus, "range": w.range}
            for w in sheet.weapons.all()
        ],
        "conditions": _snapshot(sheet),
        "terror": _terror_snapshot(sheet),
        "resistance_lost": sheet.resistance_lost,
        "resistance_unspent": sheet.resistance_unspent,
        "pending_injuries": list(sheet.pending_injuries),
        "injuries": [
            {
                "kind": i.kind,
                "roll": i.roll,
                "name": i.name,
                "effect": i.effect,
                "time_limit": i.time_limit,
                "treated": i.treated,
            }
            for i in sheet.injuries.all()
        ],
        "public_description": character.public_description,
        "private_notes": character.private_notes,
        "status": character.status,
    }
    if include_gm_notes:
        data["gm_notes"] = character.gm_notes
    return data
