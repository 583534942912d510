"""Writes to sheets. Each runs in one transaction, asks ``rules/`` for every
piece of game arithmetic and records a ``SheetEvent`` (who, when, what, why,
the post or roll it came from).

Every write locks the character's row (``select_for_update``) before it
reads the sheet (``character.hitos``), so two simultaneous damage
applications both land.
"""

from __future__ import annotations

from collections.abc import Callable
from copy import copy
from dataclasses import dataclass, field, replace
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from rolls.services import earlier_entry, seed_used
from rules.hitos_drama import (
    BANK,
    GM_POOL,
    NotEnoughPoints,
    Transfer,
    add_degeneracion,
    apply_transfers,
    session_refresh,
)
from rules.hitos_health import massive_test_due, recover, recovery_rule
from rules.hitos_scores import CULTOS_INNOMBRABLES_BUDGET, creation_warnings
from rules.meters import Meter
from sheets.models import Character, SheetEvent
from sheets.services import require_submitted, sheet_log
from sheets.services import sheet_review as core_review
from systems.hitos.campaign import gm_pool, with_gm_pool
from systems.hitos.health import meter_check, meter_check_made
from systems.hitos.models import CHARACTERISTIC_FIELDS, Aspect, HitosEvent, HitosSheet, Skill, Weapon
from systems.hitos.sheet.meters import HEALTH as HEALTH
from systems.hitos.sheet.meters import MENTAL as MENTAL
from systems.hitos.sheet.meters import METER_ACTIONS as METER_ACTIONS
from systems.hitos.sheet.meters import METERS, MeterKind
from systems.hitos.sheet.meters import NEEDS_AMOUNT as NEEDS_AMOUNT
from systems.hitos.texts import budget_warning_texts

EXPORT_FORMAT = "hitos-ficha/v1"


# --- the sheet itself -----------------------------------------------------------


@dataclass
class SheetData:
    """What the sheet form (or an imported file) says about a character."""

    fields: dict[str, Any]
    concept: str = ""
    traits: dict[str, str] = field(default_factory=dict)
    hitos: list[str] = field(default_factory=list)
    complications: list[str] = field(default_factory=list)
    skills: list[tuple[str, str, int]] = field(default_factory=list)  # name, category, value
    weapons: list[tuple[str, str, bool, str]] = field(default_factory=list)  # name, code, melee, notes


@dataclass(frozen=True)
class TemporaryAspect:
    phrase: str
    duration: str
    origin: str = ""
    exhausted_until: str = ""


@dataclass(frozen=True)
class ExhaustedAspect:
    """An own aspect (concept, trait, hito, complication) exhausted until the
    next session or story, found again by its kind and phrase."""

    kind: str
    phrase: str
    exhausted_until: str
    characteristic: str = ""  # for a trait


@dataclass
class PlayState:
    """What an imported file says about the sheet in play. ``marks``: slashes
    and crosses by meter (``MeterKind.key``); a meter missing starts clean.
    ``temporary`` and ``exhausted``: ``None`` when the file does not say (an
    older export), and then the sheet starts without them."""

    marks: dict[str, tuple[int, int]] = field(default_factory=dict)
    temporary: list[TemporaryAspect] | None = None
    exhausted: list[ExhaustedAspect] | None = None


def _sync_aspects(character: Character, data: SheetData) -> None:
    """Own aspects follow the form: same kind and position keeps the row (and
    its exhausted state), a changed phrase updates it, a removed one ends."""
    wanted: list[tuple[str, str, int, str]] = []
    if data.concept:
        wanted.append((Aspect.Kind.CONCEPT, "", 0, data.concept))
    for i, name in enumerate(CHARACTERISTIC_FIELDS):
        if data.traits.get(name):
            wanted.append((Aspect.Kind.TRAIT, name, i, data.traits[name]))
    wanted += [(Aspect.Kind.HITO, "", i, p) for i, p in enumerate(data.hitos)]
    wanted += [(Aspect.Kind.COMPLICATION, "", i, p) for i, p in enumerate(data.complications)]
    existing = {(a.kind, a.position): a for a in character.aspects.active().exclude(kind=Aspect.Kind.TEMPORARY)}
    now = timezone.now()
    for kind, characteristic, position, phrase in wanted:
        aspect = existing.pop((kind, position), None)
        if aspect is None:
            Aspect.objects.create(
                character=character, kind=kind, characteristic=characteristic, position=position, phrase=phrase
            )
        elif aspect.phrase != phrase:
            aspect.phrase = phrase
            aspect.save(update_fields=["phrase"])
    for aspect in existing.values():
        aspect.ended_at = now
        aspect.save(update_fields=["ended_at"])


def _sync_rows(character: Character, data: SheetData) -> None:
    character.skills.all().delete()
    Skill.objects.bulk_create(
        Skill(character=character, name=name, category=category, value=value) for name, category, value in data.skills
    )
    character.weapons.all().delete()
    Weapon.objects.bulk_create(
        Weapon(character=character, name=name, damage_code=code, melee=melee, notes=notes)
        for name, code, melee, notes in data.weapons
    )


def _fit_meters(character: Character) -> None:
    """Aguante or Entereza may have changed: marks that no longer fit are dropped
    (``rules.meters.Meter.resized``, through the sheet's meter readings)."""
    character.hitos.forget_readings()
    for kind in METERS.values():
        kind.store(character.hitos, kind.meter(character.hitos))


# The form's fields that belong to the shared character core; the rest are the sheet's.
CORE_FIELDS = ("name", "public_description", "private_notes", "gm_notes")


def _apply_fields(character: Character, data: SheetData) -> None:
    for name, value in data.fields.items():
        setattr(character if name in CORE_FIELDS else character.hitos, name, value)


def _save_sheet(character: Character, fields: list[str]) -> None:
    """Save these fields of the sheet (the history log says when and why)."""
    character.hitos.save(update_fields=fields)


def _same_phrase(a: str, b: str) -> bool:
    return a.split() == b.split()


def _restore_exhausted(character: Character, exhausted: list[ExhaustedAspect]) -> None:
    """Exhaust again each own aspect the file names (by kind, characteristic
    and phrase); one the sheet does not have is a ``ValidationError``."""
    own = list(character.aspects.active().exclude(kind=Aspect.Kind.TEMPORARY))
    for wanted in exhausted:
        aspect = next(
            (
                a
                for a in own
                if (a.kind, a.characteristic) == (wanted.kind, wanted.characteristic)
                and _same_phrase(a.phrase, wanted.phrase)
                and not a.exhausted
            ),
            None,
        )
        if aspect is None:
            raise ValidationError(
                _("El aspecto agotado «%(phrase)s» no está entre los aspectos de la ficha.") % {"phrase": wanted.phrase}
            )
        aspect.exhausted_until = wanted.exhausted_until
        aspect.full_clean()
        aspect.save(update_fields=["exhausted_until"])


def _restore_play(character: Character, play: PlayState) -> None:
    """An imported sheet in play: its marks (what no longer fits its meters
    is dropped, as on an edit), temporary aspects and exhausted aspects."""
    for key, (slashes, crosses) in play.marks.items():
        kind = METERS[key]
        setattr(character.hitos, kind.slashes_field, slashes)
        setattr(character.hitos, kind.crosses_field, crosses)
    _fit_meters(character)
    character.hitos.save(update_fields=[name for kind in METERS.values() for name in kind.fields])
    for temporary in play.temporary or ():
        aspect = Aspect(
            character=character,
            kind=Aspect.Kind.TEMPORARY,
            phrase=temporary.phrase,
            duration=temporary.duration,
            origin=temporary.origin,
            exhausted_until=temporary.exhausted_until,
        )
        aspect.full_clean()
        aspect.save()
    _restore_exhausted(character, play.exhausted or [])


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
    """A new draft (or, for an NPC, an approved stat block owned by the GM).
    A new character starts with as many drama points as its Drama (H26).
    An imported one also gets back its ``play`` state (marks, temporary and
    exhausted aspects); a ``ValidationError`` there saves nothing."""
    character = Character(campaign=campaign, owner=owner, kind=kind)
    sheet = HitosSheet(character=character)
    _apply_fields(character, data)
    if kind == Character.Kind.NPC:
        # H24 — NPCs have no drama points; they are ready to play at once.
        character.status = Character.Status.APPROVED
        sheet.drama = 0
        sheet.drama_points = 0
    else:
        sheet.drama_points = session_refresh(sheet.drama)
    character.full_clean()
    sheet.full_clean(exclude=["character"])
    character.save()
    sheet.character = character
    sheet.save()
    _sync_rows(character, data)
    _sync_aspects(character, data)
    if play is not None:
        _restore_play(character, play)
    kind_event = SheetEvent.Kind.IMPORTED if imported else SheetEvent.Kind.CREATED
    sheet_log(character, campaign, actor, kind_event, character.name)
    return character


@transaction.atomic
def sheet_update(*, character: Character, actor, data: SheetData, reason: str = "") -> Character:
    character = _locked(character)
    _apply_fields(character, data)
    _sync_rows(character, data)
    _fit_meters(character)
    character.full_clean()
    character.hitos.full_clean(exclude=["character"])
    character.save()
    character.hitos.save()
    _sync_aspects(character, data)
    sheet_log(character, character.campaign, actor, SheetEvent.Kind.EDITED, character.name, reason=reason)
    return character


def _locked(character: Character, *, same_skills: bool = False) -> Character:
    """The character again, its row locked until the transaction ends (the
    table's lock order: characters before the roll log's head), with its
    campaign and its sheet. The sheet is read after the lock, by a query of
    its own, so it is what the last writer committed. ``same_skills``: keep
    the skills the caller loaded (for the meters, which do not depend on them:
    Combate only moves Defensa)."""
    locked = Character.objects.select_for_update(of=("self",)).select_related("campaign").get(pk=character.pk)
    _attach_sheets([locked])
    skills = getattr(character, "_prefetched_objects_cache", {}).get("skills")
    if same_skills and skills is not None:
        locked._prefetched_objects_cache = {"skills": skills}
    return locked


def _attach_sheets(characters: list[Character]) -> None:
    """Load the sheets of characters whose rows this transaction has locked."""
    sheets = HitosSheet.objects.in_bulk([c.pk for c in characters])
    for character in characters:
        character.hitos = sheets[character.pk]


def sheet_warnings(character: Character) -> list[str]:
    """The Cultos Innombrables budget (§4.5) as guidance: warnings, never
    errors, in the active language."""
    return budget_warning_texts(
        creation_warnings(
            CULTOS_INNOMBRABLES_BUDGET,
            characteristics=character.hitos.characteristics,
            skills=[(s.category, s.value) for s in character.skills.all()],
            hitos=sum(1 for a in character.aspects.all() if a.kind == Aspect.Kind.HITO and a.ended_at is None),
            citas=1 if character.hitos.cita else 0,
            drama=character.hitos.drama,
            complications=sum(
                1 for a in character.aspects.all() if a.kind == Aspect.Kind.COMPLICATION and a.ended_at is None
            ),
        )
    )


@transaction.atomic
def sheet_review(
    *, character: Character, actor, approve: bool, comment: str = "", accept_budget: bool = False
) -> Character:
    """The core review (``sheets.services.sheet_review``) with HITOS's own
    condition: approving a sheet with budget warnings needs ``accept_budget``.
    The character's row is locked first: two reviews cannot both pass."""
    locked = _locked(character)
    require_submitted(locked)
    if approve and not accept_budget and sheet_warnings(locked):
        # §4.5 — the budget is guidance: departures are fine once the GM says so.
        raise ValidationError(
            _("La ficha se aparta del presupuesto de creación: marca la casilla para aceptarlo o devuélvela.")
        )
    locked.hitos.budget_accepted = accept_budget if approve else False
    locked.hitos.save(update_fields=["budget_accepted"])
    return core_review(character=character, actor=actor, approve=approve, comment=comment)


# --- meters ---------------------------------------------------------------------
#
# One service per meter action (``meter_mark``, ``meter_shock``,
# ``meter_stabilise``, ``meter_heal``, ``meter_recovery_roll``), each naming
# the meter by its ``MeterKind`` key (``HEALTH`` / ``MENTAL``); the table in
# ``meters`` says what differs between the two meters. ``meter_apply``
# is the dispatcher for callers that name the action by its string
# (``HEALTH``, ``MENTAL``, ``METER_ACTIONS`` and ``NEEDS_AMOUNT`` are
# re-exported from ``meters`` for them).


@dataclass
class MeterChange:
    character: Character
    event: SheetEvent
    roll: Any = None  # rolls.models.RollEntry
    check: Any = None  # rules.hitos.CheckResult


@dataclass(frozen=True)
class _Marks:
    """What one action does to a meter: the meter after it, the event's
    summary, and the roll it made through the log, if any."""

    after: Meter
    summary: str
    roll: Any = None
    check: Any = None


def _meter_kind(meter: str) -> MeterKind:
    if meter not in METERS:
        raise ValidationError(_("Acción desconocida para este medidor."))
    return METERS[meter]


def _require_amount(amount: int | None) -> None:
    if amount is None or amount < 0:
        raise ValidationError(_("Indica una cantidad entera de 0 o más."))


def _meter_roll(
    locked: Character,
    actor,
    kind: MeterKind,
    *,
    purpose: str,
    difficulty: int,
    post,
    scene,
    facts: dict,
    client_seed: str | None = None,
):
    """A test of the meter's threshold (Aguante or Entereza) through the
    campaign's roll log, placed in the post's scene unless ``scene`` is given;
    ``facts`` (the meter, the action and its inputs) let an activation re-read
    it later (``meter_reread``); ``client_seed`` is the page's browser seed
    (the server makes one without it)."""
    threshold = kind.threshold_of(locked.hitos)
    return meter_check(
        client_seed=client_seed or None,
        facts={"meter": kind.key, **facts},
        campaign=locked.campaign,
        user=actor,
        purpose=purpose % {"name": locked.name},
        modifier=threshold,
        difficulty=difficulty,
        breakdown=[(str(kind.threshold_label), threshold)],
        character=locked,
        post=post,
        scene=scene or (post.scene if post is not None else None),
    )


def _meter_change(
    character: Character,
    actor,
    kind: MeterKind,
    action: HitosEvent,
    step: Callable[[Character, Meter], _Marks],
    *,
    reason: str,
    post,
    client_seed: str | None = None,
) -> MeterChange:
    """The frame of every meter action, in one transaction: lock the sheet
    row, let ``step`` change the meter (a roll it makes commits with the
    marks; the rules' ``ValueError`` becomes a ``ValidationError``), store
    the marks and log a ``SheetEvent`` with the meter before and after.

    ``client_seed`` (the page's browser seed, which ``step`` rolls with) is
    the idempotency key (rollog/v1 §3.3): the event keeps it, and the same
    form sent again finds what the first request did (``_meter_retried``)
    and returns it, writing nothing."""
    with transaction.atomic():
        # Lock the sheet row: concurrent marks queue here instead of overwriting each other.
        locked = _locked(character, same_skills=True)
        earlier = _meter_retried(locked, actor, action, client_seed)
        if earlier is not None:
            return earlier
        before = kind.snapshot(locked.hitos)
        current = kind.meter(locked.hitos)
        try:
            marks = step(locked, current)
        except ValueError as exc:
            raise ValidationError(str(exc)) from exc
        _save_sheet(locked, kind.store(locked.hitos, marks.after))
        event = sheet_log(
            locked,
            locked.campaign,
            actor,
            action,
            marks.summary,
            reason=reason,
            post=post,
            roll=marks.roll,
            before=before,
            after={**kind.snapshot(locked.hitos), **({"client_seed": client_seed} if client_seed else {})},
        )
    return MeterChange(locked, event, marks.roll, marks.check)


def _meter_retried(locked: Character, actor, action: HitosEvent, client_seed: str | None) -> MeterChange | None:
    """What a meter form sent again already did (the same browser seed), or
    None for a seed not used yet (or no seed: the server's, never retried).

    Called under the sheet's row lock, before anything is written. A seed
    that rolled this character's test for this action (the roll log knows
    it) or made this action without a roll (its ``SheetEvent`` keeps it)
    gives back that event and the roll as it stands now (after any
    activation). A seed used by someone else, for another roll, another
    character or another action is refused, and nothing changes."""
    if not client_seed:
        return None
    used = seed_used()
    entry = earlier_entry(campaign=locked.campaign, user=actor, client_seed=client_seed)
    if entry is not None:
        event = SheetEvent.objects.filter(character=locked, roll=entry, kind=action).order_by("pk").first()
        made = meter_check_made(entry) if event is not None else None
        if made is None:
            raise used
        roll, check = made
        return MeterChange(locked, event, roll, check)
    event = SheetEvent.objects.filter(character=locked, after__client_seed=client_seed).order_by("pk").first()
    if event is None:
        return None
    if event.actor_id != actor.pk or event.kind != action:
        raise used
    return MeterChange(locked, event)


def _loss_marks(kind: MeterKind, sheet: HitosSheet, current: Meter, amount: int, check) -> _Marks:
    """A loss of ``amount`` on the meter, with the mass-damage / trauma test's
    result when one was due (rules/: ``take_damage`` / ``take_imbalance``)."""
    outcome = kind.take_loss(current, amount, threshold=kind.threshold_of(sheet), test=check)
    summary = str(amount)
    if outcome.test_due:
        summary += " · " + (_("prueba superada") if outcome.test_passed else _("prueba fallada"))
    return _Marks(outcome.after, summary, check=check)


def _recovery_marks(kind: MeterKind, sheet: HitosSheet, current: Meter, rested: bool, check) -> _Marks:
    """One recovery period, read from the roll as it stands (K16: after an
    activation the activated value decides)."""
    result = recover(current, kind.state(sheet), check, rested=rested, options=sheet.options)
    if result.lost:
        summary = _("pierde %(n)s") % {"n": result.lost}
    else:
        summary = _("recupera %(n)s") % {"n": result.recovered}
    return _Marks(result.after, summary, check=check)


def meter_reread(*, previous, entry, check, facts: dict, actor) -> MeterChange | None:
    """A sheet's test re-read after an activation re-rolled it (K16; the game
    calls this, ``systems.hitos.health``): the meter goes where the new reading
    takes it from where the roll found it. Marks made since stay: the change
    is the difference between what the old and the new reading did. Side
    effects: the marks and a ``SheetEvent`` pointing at the new version.
    Runs in the caller's transaction, which holds the sheet's row lock."""
    kind = METERS.get(facts.get("meter", ""))
    if kind is None:
        return None
    # The meter's own line: a drama point paid for the activation is logged against the same roll.
    event = (
        SheetEvent.objects.filter(roll=previous, character__isnull=False, kind=facts.get("action", ""))
        .order_by("-pk")
        .first()
    )
    if event is None:
        return None
    locked = _locked(Character(pk=event.character_id))
    then = copy(locked.hitos)
    kind.store(then, Meter(kind.meter(locked.hitos).capacity, event.before["slashes"], event.before["crosses"]))
    current = kind.meter(then)
    if facts.get("action") == kind.recovery:
        marks = _recovery_marks(kind, then, current, bool(facts.get("rested", True)), check)
    else:
        marks = _loss_marks(kind, then, current, int(facts.get("amount", 0)), check)
    now = kind.meter(locked.hitos)
    slashes = max(now.slashes + marks.after.slashes - event.after["slashes"], 0)
    crosses = max(now.crosses + marks.after.crosses - event.after["crosses"], 0)
    # Marks that no longer fit the meter are dropped, as the rules resize it.
    moved = Meter(max(now.capacity, slashes + crosses), slashes, crosses).resized(now.capacity)
    before = kind.snapshot(locked.hitos)
    _save_sheet(locked, kind.store(locked.hitos, moved))
    summary = _("releída tras una activación: %(summary)s") % {"summary": marks.summary}
    new_event = sheet_log(
        locked,
        locked.campaign,
        actor,
        event.kind,
        summary,
        post=event.post,
        roll=entry,
        before=before,
        after=kind.snapshot(locked.hitos),
    )
    return MeterChange(locked, new_event, entry, check)


def meter_mark(
    *,
    character: Character,
    actor,
    meter: str,
    amount: int,
    reason: str = "",
    post=None,
    scene=None,
    client_seed: str | None = None,
) -> MeterChange:
    """Mark damage on Resistencia or imbalance on Estabilidad (H60, H82).
    When the amount reaches Aguante / Entereza the mass-damage (H52) or
    trauma (H77) test is rolled through the log first; failing it slashes
    every box left."""
    kind = _meter_kind(meter)
    _require_amount(amount)

    def step(locked: Character, current: Meter) -> _Marks:
        roll = check = None
        if massive_test_due(amount, kind.threshold_of(locked.hitos)):
            roll, check = _meter_roll(
                locked,
                actor,
                kind,
                purpose=kind.test_purpose,
                difficulty=kind.test_difficulty,
                post=post,
                scene=scene,
                facts={"action": kind.loss, "amount": amount},
                client_seed=client_seed,
            )
        return replace(_loss_marks(kind, locked.hitos, current, amount, check), roll=roll)

    return _meter_change(character, actor, kind, kind.loss, step, reason=reason, post=post, client_seed=client_seed)


def meter_shock(
    *, character: Character, actor, meter: str, reason: str = "", post=None, client_seed: str | None = None
) -> MeterChange:
    """Shock (H62) or stress (H87) after rest: half the slashes, rounded
    down, are erased and the rest become crosses."""
    kind = _meter_kind(meter)
    return _meter_change(
        character,
        actor,
        kind,
        kind.shock,
        lambda locked, current: _Marks(current.shock(), ""),
        reason=reason,
        post=post,
        client_seed=client_seed,
    )


def meter_stabilise(
    *,
    character: Character,
    actor,
    meter: str,
    amount: int,
    reason: str = "",
    post=None,
    client_seed: str | None = None,
) -> MeterChange:
    """Erase up to ``amount`` slashes, never crosses (H58, H85)."""
    kind = _meter_kind(meter)
    _require_amount(amount)
    return _meter_change(
        character,
        actor,
        kind,
        HitosEvent.STABILISE,
        lambda locked, current: _Marks(current.stabilise(amount), str(amount)),
        reason=reason,
        post=post,
        client_seed=client_seed,
    )


def meter_heal(
    *,
    character: Character,
    actor,
    meter: str,
    amount: int,
    reason: str = "",
    post=None,
    client_seed: str | None = None,
) -> MeterChange:
    """Recover ``amount`` points, crosses first (Q12)."""
    kind = _meter_kind(meter)
    _require_amount(amount)
    return _meter_change(
        character,
        actor,
        kind,
        HitosEvent.HEAL,
        lambda locked, current: _Marks(current.heal(amount), str(amount)),
        reason=reason,
        post=post,
        client_seed=client_seed,
    )


def meter_recovery_roll(
    *,
    character: Character,
    actor,
    meter: str,
    rested: bool = True,
    reason: str = "",
    post=None,
    scene=None,
    client_seed: str | None = None,
) -> MeterChange:
    """One period of recovery: the weekly healing roll (H67–H70) or the
    monthly mental recovery roll (H88), rolled through the log at the
    difficulty of the character's state. With rest, Sano / Cuerdo recover
    everything without a roll."""
    kind = _meter_kind(meter)

    def step(locked: Character, current: Meter) -> _Marks:
        state = kind.state(locked.hitos)
        rule = recovery_rule(state, rested=rested)
        roll = check = None
        if rule is not None and not (rested and state == kind.whole_state):
            roll, check = _meter_roll(
                locked,
                actor,
                kind,
                purpose=kind.recovery_purpose,
                difficulty=rule.difficulty,
                post=post,
                scene=scene,
                facts={"action": kind.recovery, "rested": rested},
                client_seed=client_seed,
            )
        return replace(_recovery_marks(kind, locked.hitos, current, rested, check), roll=roll)

    return _meter_change(character, actor, kind, kind.recovery, step, reason=reason, post=post, client_seed=client_seed)


def meter_apply(
    *,
    character: Character,
    actor,
    meter: str,
    action: str,
    amount: int | None = None,
    rested: bool = True,
    reason: str = "",
    post=None,
    scene=None,
    client_seed: str | None = None,
) -> MeterChange:
    """Change a meter by one of ``METER_ACTIONS``, named by its string (the
    meter form, combat, horror): dispatches to the action's own service.
    Side effects: the character's marks, a ``SheetEvent``, and for a
    mass-damage / trauma test or a periodic healing / recovery roll, one
    entry in the campaign's roll log (same transaction, so the roll and the
    marks commit together). ``scene`` places such a roll in a scene when
    there is no post (combat, horror). ``client_seed``: the page's browser
    seed, which such a roll uses and which makes a retried form harmless
    (the first request's change comes back, nothing is written again)."""
    kind = METERS.get(meter)
    if kind is None or action not in kind.actions:
        raise ValidationError(_("Acción desconocida para este medidor."))
    common = {
        "character": character,
        "actor": actor,
        "meter": meter,
        "reason": reason,
        "post": post,
        "client_seed": client_seed,
    }
    if action == kind.loss:
        return meter_mark(**common, amount=amount, scene=scene)
    if action == kind.shock:
        return meter_shock(**common)
    if action == HitosEvent.STABILISE:
        return meter_stabilise(**common, amount=amount)
    if action == HitosEvent.HEAL:
        return meter_heal(**common, amount=amount)
    return meter_recovery_roll(**common, rested=rested, scene=scene)


# --- drama points and aspects --------------------------------------------------------


def drama_account(character: Character) -> str:
    """A character's account in ``rules.hitos_drama`` transfers."""
    return f"ch{character.pk}"


def gm_pool_label() -> str:
    return _("Reserva de la dirección")


def drama_move(*, campaign, transfers, actor, reason: str, post=None, roll=None) -> dict[str, int]:
    """Apply drama point transfers between characters (``drama_account``) and
    the GM's pool (``rules.hitos_drama.GM_POOL``, stored on the campaign) in one
    transaction, locking every row involved: the campaign first, then the
    characters by id (the lock order of ``systems.hitos.checks.services``). Nobody goes below
    zero: a ``ValidationError`` naming who is short, and nothing changes.
    Each balance that changes leaves a ``SheetEvent``. Returns the new balances."""
    from campaigns.models import Campaign

    transfers = list(transfers)
    if not transfers:
        return {}
    accounts = ({t.source for t in transfers} | {t.target for t in transfers}) - {BANK}
    character_ids = sorted(int(a[2:]) for a in accounts if a.startswith("ch"))
    with transaction.atomic():
        locked_campaign = Campaign.objects.select_for_update().get(pk=campaign.pk) if GM_POOL in accounts else None
        characters = {
            drama_account(c): c
            for c in Character.objects.select_for_update(of=("self",)).filter(pk__in=character_ids).order_by("pk")
        }
        _attach_sheets(list(characters.values()))
        if len(characters) != len(character_ids):
            raise ValidationError(_("Ese personaje ya no existe."))
        balances = {key: c.hitos.drama_points for key, c in characters.items()}
        if locked_campaign is not None:
            balances[GM_POOL] = gm_pool(locked_campaign)
        try:
            after = apply_transfers(balances, transfers)
        except NotEnoughPoints as short:
            if short.account == GM_POOL:
                raise ValidationError(_("La reserva de la dirección no tiene puntos dramáticos suficientes.")) from None
            raise ValidationError(
                _("%(name)s no tiene puntos dramáticos suficientes (%(n)s).")
                % {"name": characters[short.account].name, "n": short.have}
            ) from None
        except ValueError as exc:
            raise ValidationError(str(exc)) from None
        for key, character in characters.items():
            if after[key] != balances[key]:
                character.hitos.drama_points = after[key]
                _save_sheet(character, ["drama_points"])
                sheet_log(
                    character,
                    campaign,
                    actor,
                    HitosEvent.DRAMA,
                    f"{balances[key]} → {after[key]}",
                    reason=reason,
                    post=post,
                    roll=roll,
                    before={"drama_points": balances[key]},
                    after={"drama_points": after[key]},
                )
        if locked_campaign is not None and after[GM_POOL] != balances[GM_POOL]:
            locked_campaign.game_state = with_gm_pool(locked_campaign, after[GM_POOL])
            locked_campaign.save(update_fields=["game_state"])
            campaign.game_state = locked_campaign.game_state
            sheet_log(
                None,
                campaign,
                actor,
                HitosEvent.DRAMA,
                f"{gm_pool_label()}: {balances[GM_POOL]} → {after[GM_POOL]}",
                reason=reason,
                post=post,
                roll=roll,
                before={"gm_drama_points": balances[GM_POOL]},
                after={"gm_drama_points": after[GM_POOL]},
            )
    return after


def drama_adjust(*, character: Character, actor, change: int, reason: str = "", post=None) -> Character:
    """Spend (−1) or gain (+1) a drama point; nobody goes below zero (rules)."""
    if character.is_npc:
        raise ValidationError(_("Los PNJ no tienen puntos dramáticos (H24)."))
    key = drama_account(character)
    transfer = Transfer(key, BANK, 1) if change < 0 else Transfer(BANK, key, 1)
    drama_move(campaign=character.campaign, transfers=[transfer], actor=actor, reason=reason, post=post)
    return Character.objects.select_related("campaign", "hitos").get(pk=character.pk)


def gm_pool_set(*, campaign, actor, value: int, reason: str):
    """The GM sets their pool (a new session, a correction); logged."""
    from campaigns.models import Campaign

    if value < 0 or value > 99:
        raise ValidationError(_("La reserva de la dirección va de 0 a 99 puntos."))
    if not reason.strip():
        raise ValidationError(_("Indica el motivo del cambio."))
    with transaction.atomic():
        locked = Campaign.objects.select_for_update().get(pk=campaign.pk)
        before = gm_pool(locked)
        locked.game_state = with_gm_pool(locked, value)
        locked.save(update_fields=["game_state"])
        sheet_log(
            None,
            locked,
            actor,
            HitosEvent.DRAMA,
            f"{gm_pool_label()}: {before} → {value}",
            reason=reason,
            before={"gm_drama_points": before},
            after={"gm_drama_points": value},
        )
    campaign.game_state = locked.game_state
    return locked


def degeneracion_gain(*, character: Character, actor, reason: str, roll=None) -> Character:
    """H92 — +1 Degeneración instead of a drama point; logged on the sheet."""
    with transaction.atomic():
        locked = _locked(character)
        change = add_degeneracion(locked.hitos.degeneracion, 1)
        locked.hitos.degeneracion = change.after
        _save_sheet(locked, ["degeneracion"])
        sheet_log(
            locked,
            locked.campaign,
            actor,
            SheetEvent.Kind.EDITED,
            _("Degeneración %(before)s → %(after)s") % {"before": change.before, "after": change.after},
            reason=reason,
            roll=roll,
            before={"degeneracion": change.before},
            after={"degeneracion": change.after},
        )
    return locked


@transaction.atomic
def aspect_add_temporary(*, character: Character, actor, phrase: str, duration: str, origin: str = "") -> Aspect:
    aspect = Aspect(character=character, kind=Aspect.Kind.TEMPORARY, phrase=phrase, duration=duration, origin=origin)
    aspect.full_clean()
    aspect.save()
    sheet_log(
        character,
        character.campaign,
        actor,
        HitosEvent.ASPECT,
        _("nuevo aspecto temporal «%(phrase)s» (%(duration)s)")
        % {"phrase": phrase, "duration": aspect.get_duration_display()},
    )
    return aspect


@transaction.atomic
def aspect_change(
    *, aspect: Aspect, actor, action: str, until: str = Aspect.Duration.SESSION, reason: str = ""
) -> Aspect:
    """Exhaust an own aspect until the next session or story (H13, H27), recover
    it, or end a temporary aspect."""
    character = aspect.character
    if action == "exhaust":
        if until not in (Aspect.Duration.SESSION, Aspect.Duration.STORY):
            raise ValidationError(_("Un aspecto se agota hasta la próxima sesión o la próxima historia."))
        aspect.exhausted_until = until
        aspect.save(update_fields=["exhausted_until"])
        text = _("agota «%(phrase)s»") % {"phrase": aspect.phrase}
    elif action == "recover":
        aspect.exhausted_until = ""
        aspect.save(update_fields=["exhausted_until"])
        text = _("recupera «%(phrase)s»") % {"phrase": aspect.phrase}
    elif action == "end":
        if aspect.kind != Aspect.Kind.TEMPORARY:
            raise ValidationError(_("Solo se pueden retirar los aspectos temporales."))
        aspect.ended_at = timezone.now()
        aspect.save(update_fields=["ended_at"])
        text = _("retira «%(phrase)s»") % {"phrase": aspect.phrase}
    else:
        raise ValidationError(_("Acción desconocida."))
    sheet_log(character, character.campaign, actor, HitosEvent.ASPECT, text, reason=reason)
    return aspect


# --- session and scene --------------------------------------------------------------


@transaction.atomic
def campaign_new_session(*, campaign, actor, reason: str = "", new_story: bool = False) -> int:
    """H26 — every player character's drama points become its Drama; temporary
    aspects that last a scene or a session end, and aspects exhausted until the
    next session recover. A new story also ends story-long ones. Returns how
    many characters were refreshed."""
    now = timezone.now()
    ending = [Aspect.Duration.SCENE, Aspect.Duration.SESSION] + ([Aspect.Duration.STORY] if new_story else [])
    recovering = [Aspect.Duration.SESSION] + ([Aspect.Duration.STORY] if new_story else [])
    characters = list(
        Character.objects.select_for_update(of=("self",))
        .filter(campaign=campaign)
        .player_characters()
        .approved()
        .order_by("pk")  # the lock order: characters by id
    )
    _attach_sheets(characters)
    for character in characters:
        sheet = character.hitos
        before = sheet.drama_points
        sheet.drama_points = session_refresh(sheet.drama)
        _save_sheet(character, ["drama_points"])
        sheet_log(
            character,
            campaign,
            actor,
            HitosEvent.NEW_SESSION,
            f"{before} → {sheet.drama_points}",
            reason=reason,
            before={"drama_points": before},
            after={"drama_points": sheet.drama_points},
        )
    aspects = Aspect.objects.filter(character__campaign=campaign).active()
    ended = aspects.filter(kind=Aspect.Kind.TEMPORARY, duration__in=ending).update(ended_at=now)
    recovered = aspects.filter(exhausted_until__in=recovering).update(exhausted_until="")
    summary = _("%(n)s fichas renovadas, %(ended)s aspectos temporales terminados, %(rec)s aspectos recuperados") % {
        "n": len(characters),
        "ended": ended,
        "rec": recovered,
    }
    if new_story:
        summary += " · " + _("nueva historia")
    sheet_log(None, campaign, actor, HitosEvent.NEW_SESSION, summary, reason=reason)
    return len(characters)


@transaction.atomic
def campaign_new_scene(*, campaign, actor, reason: str = "") -> int:
    """Scene-long temporary aspects end. Returns how many ended."""
    ended = (
        Aspect.objects.filter(character__campaign=campaign, kind=Aspect.Kind.TEMPORARY, duration=Aspect.Duration.SCENE)
        .active()
        .update(ended_at=timezone.now())
    )
    sheet_log(
        None,
        campaign,
        actor,
        HitosEvent.NEW_SCENE,
        _("%(n)s aspectos temporales terminados") % {"n": ended},
        reason=reason,
    )
    return ended


# --- export and import -----------------------------------------------------------


def sheet_export(character: Character, *, include_gm_notes: bool) -> dict[str, Any]:
    """The sheet as JSON-ready data: everything it holds but its owner, its
    review and its history. ``forms.ImportForm`` and
    ``import_form_data`` read it back; ``sheet_create`` restores it."""
    aspects = [a for a in character.aspects.all() if a.ended_at is None]
    sheet = character.hitos
    data = {
        "format": EXPORT_FORMAT,
        "kind": character.kind,
        "name": character.name,
        "concept": next((a.phrase for a in aspects if a.kind == Aspect.Kind.CONCEPT), ""),
        "cita": sheet.cita,
        "characteristics": {name: getattr(sheet, name) for name in CHARACTERISTIC_FIELDS},
        "traits": {a.characteristic: a.phrase for a in aspects if a.kind == Aspect.Kind.TRAIT},
        "hitos": [a.phrase for a in aspects if a.kind == Aspect.Kind.HITO],
        "complications": [a.phrase for a in aspects if a.kind == Aspect.Kind.COMPLICATION],
        "skills": [{"name": s.name, "category": s.category, "value": s.value} for s in character.skills.all()],
        "weapons": [
            {"name": w.name, "damage_code": w.damage_code, "melee": w.melee, "notes": w.notes}
            for w in character.weapons.all()
        ],
        "drama": sheet.drama,
        "drama_points": sheet.drama_points,
        "degeneracion": sheet.degeneracion,
        "armour": sheet.armour,
        "rd": sheet.rd,
        "damage_code": sheet.damage_code,
        "secuelas": sheet.secuelas,
        "temporary_aspects": [
            {"phrase": a.phrase, "duration": a.duration, "origin": a.origin, "exhausted_until": a.exhausted_until}
            for a in aspects
            if a.kind == Aspect.Kind.TEMPORARY
        ],
        "exhausted_aspects": [
            {
                "kind": a.kind,
                "characteristic": a.characteristic,
                "phrase": a.phrase,
                "exhausted_until": a.exhausted_until,
            }
            for a in aspects
            if a.exhausted and a.kind != Aspect.Kind.TEMPORARY
        ],
        "meters": {
            kind.key: dict(zip(("slashes", "crosses"), kind.marks(sheet), strict=True)) for kind in METERS.values()
        },
        "public_description": character.public_description,
        "private_notes": character.private_notes,
        "status": character.status,
    }
    if include_gm_notes:
        data["gm_notes"] = character.gm_notes
    return data
