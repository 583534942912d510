"""Writes to sheets. Each runs in one transaction, asks ``rules/`` for every
piece of game arithmetic and records a ``SheetEvent`` (who, when, what, why,
the post or roll it came from).

Meter changes lock the character's row (``select_for_update``) so two
simultaneous damage applications both land.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from campaigns import notify
from rules.hitos_drama import (
    BANK,
    GM_POOL,
    NotEnoughPoints,
    Transfer,
    add_degeneracion,
    apply_transfers,
    session_refresh,
)
from rules.hitos_health import (
    MASS_DAMAGE_DIFFICULTY,
    STATE_LABELS,
    TRAUMA_DIFFICULTY,
    massive_test_due,
    recover,
    recovery_rule,
    take_damage,
    take_imbalance,
)
from rules.hitos_scores import CULTOS_INNOMBRABLES_BUDGET, creation_warnings
from sheets.models import CHARACTERISTIC_FIELDS, Aspect, Character, SheetEvent, Skill, Weapon

EXPORT_FORMAT = "hitos-ficha/v1"


class RollsUnavailable(ValidationError):
    pass


def _roll(**kwargs):
    """Roll 3d10 through the campaign's verifiable roll log (rolls app).

    Fails closed: if the roll log is not installed nothing is applied."""
    try:
        from rolls.services import hitos_check_roll
    except ImportError as exc:
        raise RollsUnavailable(
            _("Las tiradas verificables todavía no están disponibles: no se ha aplicado nada.")
        ) from exc
    return hitos_check_roll(**kwargs)


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


def _log(
    character: Character | None,
    campaign,
    actor,
    kind,
    summary="",
    *,
    reason="",
    post=None,
    roll=None,
    before=None,
    after=None,
) -> SheetEvent:
    return SheetEvent.objects.create(
        campaign=campaign,
        character=character,
        actor=actor,
        kind=kind,
        summary=summary[:500],
        reason=reason[:500],
        post=post,
        roll_id=roll.pk if roll is not None else None,
        roll_url=roll.get_absolute_url() if roll is not None else "",
        before=before or {},
        after=after or {},
    )


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
    (``rules.meters.Meter.resized``, through the character's meter readings)."""
    character.__dict__.pop("scores", None)
    health, mental = character.health_meter, character.mental_meter
    character.health_slashes, character.health_crosses = health.slashes, health.crosses
    character.mental_slashes, character.mental_crosses = mental.slashes, mental.crosses


def _apply_fields(character: Character, data: SheetData) -> None:
    for name, value in data.fields.items():
        setattr(character, name, value)


@transaction.atomic
def sheet_create(
    *, campaign, owner, actor, data: SheetData, kind: str = Character.Kind.PC, imported: bool = False
) -> Character:
    """A new draft (or, for an NPC, an approved stat block owned by the GM).
    A new character starts with as many drama points as its Drama (H26)."""
    character = Character(campaign=campaign, owner=owner, kind=kind)
    _apply_fields(character, data)
    if kind == Character.Kind.NPC:
        # H24 — NPCs have no drama points; they are ready to play at once.
        character.status = Character.Status.APPROVED
        character.drama = 0
        character.drama_points = 0
    else:
        character.drama_points = session_refresh(character.drama)
    character.full_clean()
    character.save()
    _sync_rows(character, data)
    _sync_aspects(character, data)
    kind_event = SheetEvent.Kind.IMPORTED if imported else SheetEvent.Kind.CREATED
    _log(character, campaign, actor, kind_event, character.name)
    return character


@transaction.atomic
def sheet_update(*, character: Character, actor, data: SheetData, reason: str = "") -> Character:
    character = Character.objects.select_for_update(of=("self",)).select_related("campaign").get(pk=character.pk)
    _apply_fields(character, data)
    _sync_rows(character, data)
    character.__dict__.pop("scores", None)
    _fit_meters(character)
    character.full_clean()
    character.save()
    _sync_aspects(character, data)
    _log(character, character.campaign, actor, SheetEvent.Kind.EDITED, character.name, reason=reason)
    return character


def sheet_update_notes(*, character: Character, actor, values: dict[str, str]) -> Character:
    with transaction.atomic():
        for name, value in values.items():
            setattr(character, name, value)
        character.full_clean()
        character.save(update_fields=[*values.keys(), "updated_at"])
        _log(character, character.campaign, actor, SheetEvent.Kind.NOTES, ", ".join(sorted(values)))
    return character


def sheet_warnings(character: Character) -> list[str]:
    """The Cultos Innombrables budget (§4.5) as guidance: warnings, never errors."""
    return creation_warnings(
        CULTOS_INNOMBRABLES_BUDGET,
        characteristics=character.characteristics,
        skills=[(s.category, s.value) for s in character.skills.all()],
        hitos=sum(1 for a in character.aspects.all() if a.kind == Aspect.Kind.HITO and a.ended_at is None),
        citas=1 if character.cita else 0,
        drama=character.drama,
        complications=sum(
            1 for a in character.aspects.all() if a.kind == Aspect.Kind.COMPLICATION and a.ended_at is None
        ),
    )


@transaction.atomic
def sheet_submit(*, character: Character, actor) -> Character:
    """Draft or returned → submitted; the GM sees it among the pending sheets."""
    if not character.is_editable_by_owner:
        raise ValidationError(_("Esta ficha ya está enviada o aprobada."))
    character.status = Character.Status.SUBMITTED
    character.submitted_at = timezone.now()
    character.save(update_fields=["status", "submitted_at", "updated_at"])
    _log(character, character.campaign, actor, SheetEvent.Kind.SUBMITTED, character.name)
    notify.sheet_submitted(character)
    return character


@transaction.atomic
def sheet_review(
    *, character: Character, actor, approve: bool, comment: str = "", accept_budget: bool = False
) -> Character:
    """Submitted → approved (the owner can no longer edit it, except notes) or
    returned with the GM's comment (the owner edits and submits again).
    Approving a sheet with budget warnings needs ``accept_budget``."""
    if character.status != Character.Status.SUBMITTED:
        raise ValidationError(_("Solo se revisan las fichas enviadas."))
    if approve and not accept_budget and sheet_warnings(character):
        # §4.5 — the budget is guidance: departures are fine once the GM says so.
        raise ValidationError(
            _("La ficha se aparta del presupuesto de creación: marca la casilla para aceptarlo o devuélvela.")
        )
    character.status = Character.Status.APPROVED if approve else Character.Status.RETURNED
    character.review_comment = comment
    character.budget_accepted = accept_budget if approve else False
    character.reviewed_at = timezone.now()
    character.reviewed_by = actor
    character.save(
        update_fields=["status", "review_comment", "budget_accepted", "reviewed_at", "reviewed_by", "updated_at"]
    )
    kind = SheetEvent.Kind.APPROVED if approve else SheetEvent.Kind.RETURNED
    _log(character, character.campaign, actor, kind, character.name, reason=comment)
    # The owner hears about the GM's decision (an action on their content).
    notify.sheet_reviewed(character, approved=approve, comment=comment)
    return character


# --- meters ---------------------------------------------------------------------

HEALTH = "resistencia"
MENTAL = "estabilidad"

METER_ACTIONS = {
    HEALTH: ("damage", "shock", "stabilise", "heal", "healing_roll"),
    MENTAL: ("imbalance", "stress", "stabilise", "heal", "recovery_roll"),
}
NEEDS_AMOUNT = {"damage", "imbalance", "stabilise", "heal"}

_EVENT_KIND = {
    "damage": SheetEvent.Kind.DAMAGE,
    "imbalance": SheetEvent.Kind.IMBALANCE,
    "shock": SheetEvent.Kind.SHOCK,
    "stress": SheetEvent.Kind.STRESS,
    "stabilise": SheetEvent.Kind.STABILISE,
    "heal": SheetEvent.Kind.HEAL,
    "healing_roll": SheetEvent.Kind.HEALING_ROLL,
    "recovery_roll": SheetEvent.Kind.RECOVERY_ROLL,
}


@dataclass
class MeterChange:
    character: Character
    event: SheetEvent
    roll: Any = None  # rolls.models.RollEntry
    check: Any = None  # rules.hitos.CheckResult


def _meter_snapshot(character: Character, meter: str) -> dict[str, Any]:
    if meter == HEALTH:
        m, state = character.health_meter, character.health_state
    else:
        m, state = character.mental_meter, character.mental_state
    return {"boxes": m.boxes, "slashes": m.slashes, "crosses": m.crosses, "state": STATE_LABELS[state]}


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
) -> MeterChange:
    """Change a meter by one of ``METER_ACTIONS``. Side effects: the character's
    marks, a ``SheetEvent``, and for a mass-damage / trauma test or a periodic
    healing / recovery roll, one entry in the campaign's roll log (same
    transaction, so the roll and the marks commit together). ``scene`` places
    such a roll in a scene when there is no post (combat, horror)."""
    if action not in METER_ACTIONS.get(meter, ()):
        raise ValidationError(_("Acción desconocida para este medidor."))
    if action in NEEDS_AMOUNT and (amount is None or amount < 0):
        raise ValidationError(_("Indica una cantidad entera de 0 o más."))
    with transaction.atomic():
        # Lock the sheet row: concurrent marks queue here instead of overwriting each other.
        locked = Character.objects.select_for_update(of=("self",)).select_related("campaign").get(pk=character.pk)
        before = _meter_snapshot(locked, meter)
        current = locked.health_meter if meter == HEALTH else locked.mental_meter
        threshold = locked.aguante if meter == HEALTH else locked.entereza
        options = locked.options
        roll = check = None
        summary = str(amount) if action in NEEDS_AMOUNT else ""
        try:
            if action in ("damage", "imbalance"):
                key = "aguante" if action == "damage" else "entereza"
                test_key = "mass_test" if action == "damage" else "trauma_test"
                test = None
                if massive_test_due(amount, threshold):
                    # H52 / H77 — the amount reaches the threshold: roll the test through the log.
                    purpose = (
                        _("Prueba de daño masivo de %(name)s (Aguante contra 12)")
                        if action == "damage"
                        else _("Prueba de trauma de %(name)s (Entereza contra 12)")
                    ) % {"name": locked.name}
                    roll, check = _roll(
                        campaign=locked.campaign,
                        user=actor,
                        purpose=purpose,
                        modifier=threshold,
                        difficulty=MASS_DAMAGE_DIFFICULTY if action == "damage" else TRAUMA_DIFFICULTY,
                        breakdown=[(_("Aguante") if action == "damage" else _("Entereza"), threshold)],
                        character=locked,
                        post=post,
                        scene=scene or (post.scene if post is not None else None),
                    )
                    test = check
                take = take_damage if action == "damage" else take_imbalance
                outcome = take(current, amount, **{key: threshold, test_key: test})
                after = outcome.after
                if outcome.test_due:
                    summary += " · " + (_("prueba superada") if outcome.test_passed else _("prueba fallada"))
            elif action in ("shock", "stress"):
                after = current.shock()
            elif action == "stabilise":
                after = current.stabilise(amount)
            elif action == "heal":
                after = current.heal(amount)
            else:
                state = locked.health_state if meter == HEALTH else locked.mental_state
                rule = recovery_rule(state, rested=rested)
                test = None
                if rule is not None and not (rested and state in ("sano", "cuerdo")):
                    purpose = (
                        _("Curación semanal de %(name)s (Aguante)")
                        if meter == HEALTH
                        else _("Recuperación mental mensual de %(name)s (Entereza)")
                    ) % {"name": locked.name}
                    roll, check = _roll(
                        campaign=locked.campaign,
                        user=actor,
                        purpose=purpose,
                        modifier=threshold,
                        difficulty=rule.difficulty,
                        breakdown=[(_("Aguante") if meter == HEALTH else _("Entereza"), threshold)],
                        character=locked,
                        post=post,
                        scene=scene or (post.scene if post is not None else None),
                    )
                    test = check
                result = recover(current, state, test, rested=rested, options=options)
                after = result.after
                summary = (
                    _("recupera %(n)s") % {"n": result.recovered}
                    if not result.lost
                    else _("pierde %(n)s") % {"n": result.lost}
                )
        except ValueError as exc:
            raise ValidationError(str(exc)) from exc
        prefix = "health" if meter == HEALTH else "mental"
        setattr(locked, f"{prefix}_slashes", after.slashes)
        setattr(locked, f"{prefix}_crosses", after.crosses)
        locked.save(update_fields=[f"{prefix}_slashes", f"{prefix}_crosses", "updated_at"])
        event = _log(
            locked,
            locked.campaign,
            actor,
            _EVENT_KIND[action],
            summary,
            reason=reason,
            post=post,
            roll=roll,
            before=before,
            after=_meter_snapshot(locked, meter),
        )
    return MeterChange(locked, event, roll, check)


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
    characters by id (the lock order of ``rolls.table``). Nobody goes below
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
        if len(characters) != len(character_ids):
            raise ValidationError(_("Ese personaje ya no existe."))
        balances = {key: c.drama_points for key, c in characters.items()}
        if locked_campaign is not None:
            balances[GM_POOL] = locked_campaign.gm_drama_points
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
                character.drama_points = after[key]
                character.save(update_fields=["drama_points", "updated_at"])
                _log(
                    character,
                    campaign,
                    actor,
                    SheetEvent.Kind.DRAMA,
                    f"{balances[key]} → {after[key]}",
                    reason=reason,
                    post=post,
                    roll=roll,
                    before={"drama_points": balances[key]},
                    after={"drama_points": after[key]},
                )
        if locked_campaign is not None and after[GM_POOL] != balances[GM_POOL]:
            locked_campaign.gm_drama_points = after[GM_POOL]
            locked_campaign.save(update_fields=["gm_drama_points"])
            campaign.gm_drama_points = after[GM_POOL]
            _log(
                None,
                campaign,
                actor,
                SheetEvent.Kind.DRAMA,
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
    return Character.objects.select_related("campaign").get(pk=character.pk)


def gm_pool_set(*, campaign, actor, value: int, reason: str):
    """The GM sets their pool (a new session, a correction); logged."""
    from campaigns.models import Campaign

    if value < 0 or value > 99:
        raise ValidationError(_("La reserva de la dirección va de 0 a 99 puntos."))
    if not reason.strip():
        raise ValidationError(_("Indica el motivo del cambio."))
    with transaction.atomic():
        locked = Campaign.objects.select_for_update().get(pk=campaign.pk)
        before = locked.gm_drama_points
        locked.gm_drama_points = value
        locked.save(update_fields=["gm_drama_points"])
        _log(
            None,
            locked,
            actor,
            SheetEvent.Kind.DRAMA,
            f"{gm_pool_label()}: {before} → {value}",
            reason=reason,
            before={"gm_drama_points": before},
            after={"gm_drama_points": value},
        )
    campaign.gm_drama_points = value
    return locked


def degeneracion_gain(*, character: Character, actor, reason: str, roll=None) -> Character:
    """H92 — +1 Degeneración instead of a drama point; logged on the sheet."""
    with transaction.atomic():
        locked = Character.objects.select_for_update(of=("self",)).select_related("campaign").get(pk=character.pk)
        change = add_degeneracion(locked.degeneracion, 1)
        locked.degeneracion = change.after
        locked.save(update_fields=["degeneracion", "updated_at"])
        _log(
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
    _log(
        character,
        character.campaign,
        actor,
        SheetEvent.Kind.ASPECT,
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
    _log(character, character.campaign, actor, SheetEvent.Kind.ASPECT, text, reason=reason)
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
        Character.objects.select_for_update(of=("self",)).filter(campaign=campaign).player_characters().approved()
    )
    for character in characters:
        before = character.drama_points
        character.drama_points = session_refresh(character.drama)
        character.save(update_fields=["drama_points", "updated_at"])
        _log(
            character,
            campaign,
            actor,
            SheetEvent.Kind.NEW_SESSION,
            f"{before} → {character.drama_points}",
            reason=reason,
            before={"drama_points": before},
            after={"drama_points": character.drama_points},
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
    _log(None, campaign, actor, SheetEvent.Kind.NEW_SESSION, summary, reason=reason)
    return len(characters)


@transaction.atomic
def campaign_new_scene(*, campaign, actor, reason: str = "") -> int:
    """Scene-long temporary aspects end. Returns how many ended."""
    ended = (
        Aspect.objects.filter(character__campaign=campaign, kind=Aspect.Kind.TEMPORARY, duration=Aspect.Duration.SCENE)
        .active()
        .update(ended_at=timezone.now())
    )
    _log(
        None,
        campaign,
        actor,
        SheetEvent.Kind.NEW_SCENE,
        _("%(n)s aspectos temporales terminados") % {"n": ended},
        reason=reason,
    )
    return ended


# --- export and import -----------------------------------------------------------


def sheet_export(character: Character, *, include_gm_notes: bool) -> dict[str, Any]:
    """The sheet as JSON-ready data; ``sheet_data_from_export`` reads it back."""
    aspects = [a for a in character.aspects.all() if a.ended_at is None]
    data = {
        "format": EXPORT_FORMAT,
        "kind": character.kind,
        "name": character.name,
        "concept": next((a.phrase for a in aspects if a.kind == Aspect.Kind.CONCEPT), ""),
        "cita": character.cita,
        "characteristics": {name: getattr(character, name) for name in CHARACTERISTIC_FIELDS},
        "traits": {a.characteristic: a.phrase for a in aspects if a.kind == Aspect.Kind.TRAIT},
        "hitos": [a.phrase for a in aspects if a.kind == Aspect.Kind.HITO],
        "complications": [a.phrase for a in aspects if a.kind == Aspect.Kind.COMPLICATION],
        "skills": [{"name": s.name, "category": s.category, "value": s.value} for s in character.skills.all()],
        "weapons": [
            {"name": w.name, "damage_code": w.damage_code, "melee": w.melee, "notes": w.notes}
            for w in character.weapons.all()
        ],
        "drama": character.drama,
        "drama_points": character.drama_points,
        "degeneracion": character.degeneracion,
        "armour": character.armour,
        "rd": character.rd,
        "damage_code": character.damage_code,
        "secuelas": character.secuelas,
        "temporary_aspects": [
            {"phrase": a.phrase, "duration": a.duration, "origin": a.origin}
            for a in aspects
            if a.kind == Aspect.Kind.TEMPORARY
        ],
        "meters": {
            "resistencia": {"slashes": character.health_slashes, "crosses": character.health_crosses},
            "estabilidad": {"slashes": character.mental_slashes, "crosses": character.mental_crosses},
        },
        "public_description": character.public_description,
        "private_notes": character.private_notes,
        "status": character.status,
    }
    if include_gm_notes:
        data["gm_notes"] = character.gm_notes
    return data
