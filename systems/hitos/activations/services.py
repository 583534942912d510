"""Aspect activations at the table (H13–H27, H92): positive re-rolls, negative
ones the roll's owner accepts or cancels, narrative elements, and who may
activate what.

Every write runs in one transaction and takes its locks in the same order as
the rest of the table code (the table roll, then the campaign and the
characters through ``drama_move``, then the log head through the re-roll), so
two activations on the same roll queue one behind the other and two that
would spend the same last drama point can never both succeed.

Services raise ``PermissionDenied`` when the user may not act at all (the
views answer 403) and ``ValidationError`` with a Spanish message when the
action breaks a rule (nothing changes).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from fractions import Fraction
from itertools import combinations

from django.core.exceptions import PermissionDenied, ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from campaigns import deadlines
from campaigns.models import Campaign, Deadline, ModerationAction, ModerationLog
from campaigns.permissions import Access, campaign_access
from rolls.models import RollEntry
from rolls.services import earlier_entry, seed_used
from rules import hitos, hitos_drama
from rules.hitos_drama import BANK, Transfer
from rules.probability import reroll_success_probability
from sheets.models import Character
from systems.hitos import notify
from systems.hitos.campaign import table_setting
from systems.hitos.checks.services import (
    is_arcane,
    lock_table_roll,
    reroll_refusal,
    roll_modifier,
    side_for,
    table_reroll,
)
from systems.hitos.models import Activation, Aspect, SceneAspect
from systems.hitos.reading import campaign_options
from systems.hitos.sheet.services import aspect_change, degeneracion_gain, drama_account, drama_move
from table.models import TableRoll

# Prefixes of an aspect choice: a sheet aspect, a scene's situation aspect,
# or (the GM's negative activations only) free text.
SHEET_ASPECT = "a"
SCENE_ASPECT = "s"
FREE_TEXT = "t:"

POSITIVE_PAYMENTS = ("point", "exhaust", "degeneracion")


@dataclass(frozen=True)
class AspectOption:
    """One aspect the user may activate here: the form's value and label."""

    value: str
    label: str
    text: str
    aspect: Aspect | None = None
    scene_aspect: SceneAspect | None = None
    own: bool = False  # the activating character's own aspect (exhaustable, H27)


# --- Who acts -------------------------------------------------------------------------


def _approved_pc(user, campaign: Campaign, *, exclude: int | None = None) -> Character | None:
    characters = Character.objects.approved().filter(campaign=campaign, owner=user)
    if exclude is not None:
        characters = characters.exclude(pk=exclude)
    return characters.order_by("pk").first()


def positive_activator(table_roll: TableRoll, user, access: Access) -> Character | None:
    """The character who activates an aspect in favour of the roll, or None
    for the GM's pool. The roll's owner acts as its character; another player
    helps with their own approved character (H11, "aspecto ajeno"); the GM
    acts for an NPC's roll (or their own roll without a character)."""
    character = table_roll.character
    if access.is_gm and (character is None or character.is_npc):
        return character
    if not access.is_player:
        raise PermissionDenied(_("Solo los jugadores y la dirección pueden activar aspectos."))
    if character is not None and character.is_npc:
        raise PermissionDenied(_("Solo la dirección activa aspectos a favor de un PNJ."))
    if character is not None and character.owner_id == user.pk:
        return character
    helper = _approved_pc(user, table_roll.campaign, exclude=table_roll.character_id)
    if helper is None:
        raise PermissionDenied(_("Necesitas un personaje aprobado en la partida para activar aspectos."))
    return helper


def negative_activator(table_roll: TableRoll, user, access: Access) -> Character | None:
    """Who activates an aspect against the roll: the GM (their pool, None) or
    another player's approved character; never the roll's own player."""
    target = table_roll.character
    if target is None:
        raise PermissionDenied(_("Solo se activan aspectos en contra de la tirada de un personaje."))
    if access.is_gm:
        if target.is_npc or table_roll.owner_id == user.pk:
            raise PermissionDenied(_("La dirección no activa aspectos en contra de sus propias tiradas."))
        return None
    if not access.is_player:
        raise PermissionDenied(_("Solo los jugadores y la dirección pueden activar aspectos."))
    if table_roll.owner_id == user.pk or target.owner_id == user.pk:
        raise PermissionDenied(_("No puedes activar un aspecto en contra de tu propia tirada."))
    activator = _approved_pc(user, table_roll.campaign, exclude=target.pk)
    if activator is None:
        raise PermissionDenied(_("Necesitas un personaje aprobado en la partida para activar aspectos."))
    return activator


def may_answer(activation: Activation, user, access: Access) -> bool:
    """The roll's owner answers a negative activation (the GM for an NPC's
    roll); the affected character's player answers a narrative one."""
    target = activation.target_character
    if activation.kind == Activation.Kind.NARRATIVE:
        return target is not None and target.owner_id == user.pk and not target.is_npc
    table_roll = activation.table_roll
    if table_roll.owner_id == user.pk:
        return True
    return access.is_gm and target is not None and target.is_npc


# --- What may be activated --------------------------------------------------------------


def _aspect_label(aspect: Aspect, character: Character) -> str:
    label = f"{aspect.phrase} ({character.name})"
    if aspect.exhausted:
        label += " · " + _("agotado")
    return label


def aspect_options(
    *, table_roll: TableRoll, activator: Character | None, negative: bool, is_gm: bool
) -> list[AspectOption]:
    """The aspects ``activator`` may activate on this roll (H11): its own
    active aspects (not the exhausted ones, H27), the visible aspects of the
    campaign's approved player characters, and the scene's situation aspects.
    The GM, activating against a character, may use any of its aspects, even
    exhausted ones (H27). Three queries."""
    options: list[AspectOption] = []
    characters = {
        c.pk: c for c in Character.objects.approved().filter(campaign_id=table_roll.campaign_id).order_by("name", "pk")
    }
    if activator is not None:
        characters[activator.pk] = activator
    target = table_roll.character
    if target is not None and (is_gm or not target.is_npc):
        characters[target.pk] = target
    aspects = Aspect.objects.active().filter(character_id__in=list(characters)).order_by("character_id", "kind", "pk")
    own: list[AspectOption] = []
    others: list[AspectOption] = []
    for aspect in aspects:
        character = characters[aspect.character_id]
        mine = activator is not None and aspect.character_id == activator.pk
        if mine and aspect.exhausted:
            continue  # H27 — locked for its own player until it recovers.
        if is_gm and negative and target is not None and aspect.character_id != target.pk:
            continue  # Against a character, the GM uses that character's aspects.
        if character.is_npc and not is_gm and not mine:
            continue  # An NPC's stat block is the GM's secret.
        option = AspectOption(
            f"{SHEET_ASPECT}{aspect.pk}", _aspect_label(aspect, character), aspect.phrase, aspect=aspect, own=mine
        )
        (own if mine else others).append(option)
    options = own + others
    if table_roll.scene_id:
        for scene_aspect in SceneAspect.objects.filter(scene_id=table_roll.scene_id).order_by("position", "pk"):
            options.append(
                AspectOption(
                    f"{SCENE_ASPECT}{scene_aspect.pk}",
                    _("%(phrase)s (situación)") % {"phrase": scene_aspect.phrase},
                    scene_aspect.phrase,
                    scene_aspect=scene_aspect,
                )
            )
    return options


def _chosen(options: list[AspectOption], choice: str, *, free_text: bool) -> AspectOption:
    choice = (choice or "").strip()
    if free_text and choice.startswith(FREE_TEXT):
        text = " ".join(choice[len(FREE_TEXT) :].split())
        if not text:
            raise ValidationError(_("Escribe el aspecto que activas."), code="aspect")
        return AspectOption(choice, text, text[:200])
    for option in options:
        if option.value == choice:
            return option
    raise ValidationError(_("Elige uno de los aspectos que puedes activar en esta tirada."), code="aspect")


def _positions(positions) -> list[int]:
    chosen = sorted(set(positions or ()))
    if not chosen or any(p.__class__ is not int or not 0 <= p <= 2 for p in chosen):
        raise ValidationError(_("Los dados se eligen por su posición: 0, 1 o 2."), code="bad_positions")
    return chosen


def _refuse_state(table_roll: TableRoll) -> None:
    refusal = reroll_refusal(table_roll)
    if refusal is not None:
        raise ValidationError(refusal, code="no_reroll")
    if Activation.objects.filter(table_roll=table_roll, status=Activation.Status.PENDING).exists():
        raise ValidationError(
            _("Esta tirada espera respuesta a una activación en contra: primero hay que resolverla."), code="pending"
        )


def _rule(call, *args, **kwargs):
    """A ``rules.hitos_drama`` call whose refusals become form messages."""
    try:
        return call(*args, **kwargs)
    except ValueError as exc:
        raise ValidationError(str(exc)) from None


def _retried(campaign: Campaign, *, user, client_seed: str | None, candidates) -> Activation | None:
    """The activation a retried form already made (rollog/v1 §3.3: the
    client seed is the idempotency key), or None for a seed not used yet.

    Called first, under the lock the action takes on the roll: when the seed
    already re-rolled one of ``candidates`` (the activations this request
    could have made), that activation is the answer, and nothing is paid,
    exhausted, drawn or re-read again. A seed that made anything else
    (another roll, another activation, someone else's roll) is refused."""
    entry = earlier_entry(campaign=campaign, user=user, client_seed=client_seed)
    if entry is None:
        return None
    found = candidates.filter(reroll=entry).first() if entry.kind == RollEntry.Kind.REROLL else None
    if found is None:
        raise seed_used()
    return found


def reroll_chances(table_roll: TableRoll, reading: hitos.Reading) -> list[tuple[str, Fraction]] | None:
    """The exact chance of success after re-rolling each set of dice (H14,
    H18), for the form; None when there is no known difficulty."""
    if table_roll.difficulty is None:
        return None
    dice = list(table_roll.latest.entry["dice"])
    labels = table_roll.latest.signed_game.get("labels") or ["", "", ""]
    strict = campaign_options(table_roll.campaign).strict_success
    chances = []
    for size in (1, 2, 3):
        for subset in combinations(range(3), size):
            name = " + ".join(f"{dice[p]} {labels[p]}".strip() for p in subset)
            chances.append(
                (
                    name,
                    reroll_success_probability(
                        dice, subset, reading, roll_modifier(table_roll), table_roll.difficulty, strict=strict
                    ),
                )
            )
    return chances


# --- Positive activation -------------------------------------------------------------


def activate_positive(
    *, table_roll: TableRoll, user, aspect_choice: str, positions, payment: str, client_seed: str | None = None
) -> Activation:
    """H13–H16 — re-roll the chosen dice of the roll's latest version, read
    positively (H15), paying 1 drama point, exhausting an own aspect (H27) or,
    with an arcane skill, taking +1 Degeneración (H92).

    Side effects, all in one transaction: the activator's drama point (or the
    GM's pool) with its ``SheetEvent``, or the aspect exhausted, or the
    Degeneración gained; a signed ``reroll`` entry drawn with ``client_seed``
    (the browser's; None without JavaScript: the server's); the
    ``Activation`` row. The same seed sent again (a retried form) returns
    the activation it made, and nothing more is paid or drawn.
    """
    if payment not in POSITIVE_PAYMENTS:
        raise ValidationError(_("Elige cómo pagas la activación."), code="payment")
    chosen_positions = _positions(positions)
    with transaction.atomic():
        tr = lock_table_roll(table_roll)
        access = campaign_access(user, tr.campaign)
        character = positive_activator(tr, user, access)
        earlier = _retried(tr.campaign, user=user, client_seed=client_seed, candidates=_positives(tr, user))
        if earlier is not None:
            table_roll.latest = tr.latest
            return earlier
        _refuse_state(tr)
        option = _chosen(
            aspect_options(table_roll=tr, activator=character, negative=False, is_gm=access.is_gm),
            aspect_choice,
            free_text=False,
        )
        side = side_for(character)
        options = campaign_options(tr.campaign)
        against = tr.latest
        reason = _("activa «%(aspect)s» a favor de «%(purpose)s»") % {"aspect": option.text, "purpose": against.purpose}
        if payment == "exhaust":
            if not option.own or character is None:
                raise ValidationError(_("Solo puedes agotar los aspectos de tu propio personaje."), code="exhaust")
            _rule(hitos_drama.positive_activation, side, exhaust=True, own_aspect=True, options=options)
            _exhaust(option.aspect.pk, user=user, reason=reason)
            stored_payment = Activation.Payment.EXHAUST
        elif payment == "degeneracion":
            if not is_arcane(tr) or character is None or character.pk != tr.character_id:
                raise ValidationError(
                    _("Solo quien actúa con una habilidad arcana puede ganar Degeneración en lugar de pagar."),
                    code="degeneracion",
                )
            _rule(hitos_drama.arcane_degeneracion_instead, side)
            degeneracion_gain(character=character, actor=user, reason=reason, roll=against)
            stored_payment = Activation.Payment.DEGENERACION
        else:
            effect = _rule(hitos_drama.positive_activation, side, arcane=is_arcane(tr), options=options)
            _pay(tr, effect.transfers, user=user, reason=reason, nothing=_no_points_message(option, character))
            stored_payment = (
                Activation.Payment.POINT if character and not character.is_npc else Activation.Payment.GM_POOL
            )
        entry = table_reroll(
            tr,
            user=user,
            positions=chosen_positions,
            reading=hitos.Reading.POSITIVE,
            activation="positive",
            aspect=option.text,
            target_user=tr.owner if tr.owner_id != user.pk else None,
            paid_by=user,
            payment=stored_payment,
            client_seed=client_seed,
        )
        activation = Activation(
            campaign=tr.campaign,
            kind=Activation.Kind.POSITIVE,
            status=Activation.Status.DONE,
            table_roll=tr,
            against=against,
            reroll=entry,
            positions=chosen_positions,
            activator=user,
            activator_character=character,
            target_character=tr.character,
            aspect_text=option.text[:200],
            aspect=option.aspect,
            scene_aspect=option.scene_aspect,
            payment=stored_payment,
            decided_at=timezone.now(),
            decided_by=user,
        )
        activation.full_clean(validate_constraints=False)
        activation.save()
    table_roll.latest = tr.latest
    return activation


def _positives(tr: TableRoll, user):
    return Activation.objects.filter(table_roll=tr, kind=Activation.Kind.POSITIVE, activator=user)


def earlier_positive(*, table_roll: TableRoll, user, client_seed: str | None) -> Activation | None:
    """The positive activation a retried form already made on this roll
    with ``client_seed``, read before the form is checked again (its aspect
    may be exhausted by then); ``activate_positive`` asks again under the
    lock. Raises ``ValidationError`` for a seed used for anything else."""
    return _retried(table_roll.campaign, user=user, client_seed=client_seed, candidates=_positives(table_roll, user))


def _exhaust(aspect_pk: int, *, user, reason: str) -> Aspect:
    """H13, H27, K17 — pay an activation by exhausting the activator's own
    aspect (the caller has checked it is theirs): any kind of aspect still on
    the sheet, not exhausted already, locked until the next session (the GM
    may recover it from the sheet), with its ``SheetEvent``. Locks the row."""
    aspect = Aspect.objects.select_for_update().filter(pk=aspect_pk).first()
    if aspect is None or aspect.ended_at is not None:
        raise ValidationError(_("Ese aspecto ya no está en la ficha."), code="exhaust")
    if aspect.exhausted:
        raise ValidationError(_("Ese aspecto ya está agotado."), code="exhaust")
    aspect_change(aspect=aspect, actor=user, action="exhaust", reason=reason)
    return aspect


def _no_points_message(option: AspectOption, character: Character | None) -> str:
    if character is None or character.is_npc:
        return _("La reserva de la dirección no tiene puntos dramáticos.")
    if option.own:
        return _("%(name)s no tiene puntos dramáticos: agota el aspecto en lugar de pagar.") % {"name": character.name}
    return _("%(name)s no tiene puntos dramáticos y ese aspecto no es suyo: no se puede agotar.") % {
        "name": character.name
    }


def _pay(tr: TableRoll, transfers, *, user, reason: str, nothing: str | None = None) -> None:
    """Move the drama points; someone short of points stops everything."""
    try:
        drama_move(campaign=tr.campaign, transfers=transfers, actor=user, reason=reason, post=tr.post, roll=tr.latest)
    except ValidationError as exc:
        raise ValidationError(nothing or exc.messages[0], code="no_points") from None


def may_force_degeneracion(activation: Activation, is_gm: bool) -> bool:
    """H92 — the GM may turn a player's point spent on an arcane action's
    activation into +1 Degeneración (and the player then gains a point)."""
    character = activation.activator_character
    return (
        is_gm
        and activation.kind == Activation.Kind.POSITIVE
        and activation.payment == Activation.Payment.POINT
        and activation.table_roll is not None
        and is_arcane(activation.table_roll)
        and character is not None
        and not character.is_npc
    )


def force_degeneracion(*, activation: Activation, user) -> Activation:
    """H92 — «El director de juego puede forzar esta elección, pero entonces el
    jugador recibe un punto dramático adicional». The point the player spent
    comes back, they gain one more, and their character +1 Degeneración; all
    logged on the sheet."""
    with transaction.atomic():
        tr = lock_table_roll(activation.table_roll)
        locked = (
            Activation.objects.select_for_update(of=("self",))
            .select_related("activator_character", "campaign")
            .get(pk=activation.pk)
        )
        locked.table_roll = tr
        if not campaign_access(user, tr.campaign).is_gm:
            raise PermissionDenied(_("Solo la dirección puede forzar la Degeneración."))
        if not may_force_degeneracion(locked, True):
            raise ValidationError(
                _("Solo se fuerza la Degeneración en una activación pagada con un punto en una acción arcana."),
                code="not_forceable",
            )
        character = locked.activator_character
        options = campaign_options(tr.campaign)
        side = side_for(character)
        effect = _rule(hitos_drama.positive_activation, side, arcane=True, gm_forces_degeneracion=True, options=options)
        refund = Transfer(BANK, drama_account(character), 1, "devolución")
        reason = _("la dirección fuerza la Degeneración (H92) en «%(aspect)s»") % {"aspect": locked.aspect_text}
        drama_move(
            campaign=tr.campaign,
            transfers=[refund, *effect.transfers],
            actor=user,
            reason=reason,
            post=tr.post,
            roll=locked.reroll,
        )
        for _gain in range(effect.degeneracion):
            degeneracion_gain(character=character, actor=user, reason=reason, roll=locked.reroll)
        locked.payment = Activation.Payment.FORCED
        locked.decided_by = user
        locked.save(update_fields=["payment", "decided_by"])
    return locked


# --- Negative activation ---------------------------------------------------------------


def activate_negative(*, table_roll: TableRoll, user, aspect_choice: str, positions, note: str = "") -> Activation:
    """H18 — activate an aspect against someone's roll, choosing the dice they
    will re-roll. The activator pays 1 point at once (the GM from their pool);
    the roll's owner then accepts or cancels (``answer_negative``).

    Side effects: the point and its ``SheetEvent``; a PENDING ``Activation``
    with its deadline; a notification to the roll's owner.
    """
    chosen_positions = _positions(positions)
    with transaction.atomic():
        tr = lock_table_roll(table_roll)
        access = campaign_access(user, tr.campaign)
        character = negative_activator(tr, user, access)
        _refuse_state(tr)
        option = _chosen(
            aspect_options(table_roll=tr, activator=character, negative=True, is_gm=access.is_gm),
            aspect_choice,
            free_text=access.is_gm,
        )
        effect = _rule(
            hitos_drama.negative_activation, side_for(character), side_for(tr.character), campaign_options(tr.campaign)
        )
        reason = _("activa «%(aspect)s» en contra de «%(purpose)s»") % {
            "aspect": option.text,
            "purpose": tr.latest.purpose,
        }
        _pay(tr, effect.transfers, user=user, reason=reason)
        activation = Activation(
            campaign=tr.campaign,
            kind=Activation.Kind.NEGATIVE,
            status=Activation.Status.PENDING,
            table_roll=tr,
            against=tr.latest,
            positions=chosen_positions,
            activator=user,
            activator_character=character,
            target_character=tr.character,
            aspect_text=option.text[:200],
            aspect=option.aspect,
            scene_aspect=option.scene_aspect,
            payment=Activation.Payment.POINT if character else Activation.Payment.GM_POOL,
            note=note.strip()[:500],
            deadline=timezone.now() + timedelta(hours=table_setting(tr.campaign, "activation_deadline_hours")),
        )
        activation.full_clean(validate_constraints=False)
        try:
            with transaction.atomic():
                activation.save()
        except IntegrityError:
            raise ValidationError(
                _("Esta tirada ya espera respuesta a otra activación en contra."), code="pending"
            ) from None
        _give_deadline(activation, tr, user=user)
        notify.activation_pending(activation)
    return activation


# The kind of ``campaigns.models.Deadline`` a pending negative activation has
# (target: the activation): the campaigns' clock reminds the player and tells
# the direction when it passes, and the direction settles it as the rule says.
DEADLINE_KIND = "activation"
# The option its settling offers: the activation counts as accepted (H22).
SETTLE_ACCEPT = "accept"


def _give_deadline(activation: Activation, tr: TableRoll, *, user) -> None:
    """The answer's deadline (the campaign's ``activation_deadline_hours``)
    as a campaign deadline, reminded halfway through a window shorter than
    two days."""
    if tr.scene_id is None:
        return
    window = timedelta(hours=table_setting(tr.campaign, "activation_deadline_hours"))
    deadlines.set_deadline(
        campaign=tr.campaign,
        scene=tr.scene,
        kind=DEADLINE_KIND,
        target_id=activation.pk,
        due_at=activation.deadline,
        actor=user,
        remind_before=min(deadlines.DEFAULT_REMIND, window / 2),
    )


def _locked_pending(activation: Activation, *, pending: bool = True) -> Activation:
    """The activation's row, locked; refused once answered unless
    ``pending`` is False (the caller checks that itself, after a retry's)."""
    locked = (
        Activation.objects.select_for_update(of=("self",))
        .select_related("campaign", "activator_character", "target_character", "activator")
        .get(pk=activation.pk)
    )
    if pending:
        _still_pending(locked)
    return locked


def _still_pending(activation: Activation) -> None:
    if activation.status != Activation.Status.PENDING:
        raise ValidationError(_("Esa activación ya tiene respuesta."), code="answered")


def _decide(activation: Activation, *, user, accept: bool, client_seed: str | None = None) -> Activation:
    """Resolve a pending activation (the caller holds the locks); an
    accepted negative one re-rolls with ``client_seed``."""
    options = campaign_options(activation.campaign)
    activator = side_for(activation.activator_character)
    target = side_for(activation.target_character)
    tr = activation.table_roll
    if activation.kind == Activation.Kind.NARRATIVE:
        _decide_narrative(activation, user=user, accept=accept, activator=activator, target=target, options=options)
    elif accept:
        # H19/H22 — the owner re-rolls the chosen dice, read negatively, and gains a point.
        effect = hitos_drama.negative_accepted(activator, target, options)
        reason = _("acepta la activación en contra «%(aspect)s»") % {"aspect": activation.aspect_text}
        _pay(tr, effect.transfers, user=user, reason=reason)
        activation.reroll = table_reroll(
            tr,
            user=user,
            positions=activation.positions,
            reading=hitos.Reading.NEGATIVE,
            activation="negative",
            aspect=activation.aspect_text,
            target_user=tr.owner,
            paid_by=activation.activator,
            payment=activation.payment,
            client_seed=client_seed,
        )
    else:
        # H22 — cancelling costs the owner a point; the activator gets theirs back and that one.
        effect = hitos_drama.negative_cancelled(activator, target, options)
        reason = _("cancela la activación en contra «%(aspect)s»") % {"aspect": activation.aspect_text}
        name = activation.target_character.name
        _pay(
            tr,
            effect.transfers,
            user=user,
            reason=reason,
            nothing=_("%(name)s no tiene puntos dramáticos para cancelar la activación.") % {"name": name},
        )
    activation.status = Activation.Status.ACCEPTED if accept else Activation.Status.CANCELLED
    activation.decided_at = timezone.now()
    activation.decided_by = user
    activation.save(update_fields=["status", "reroll", "decided_at", "decided_by"])
    return activation


def _decide_narrative(activation: Activation, *, user, accept: bool, activator, target, options) -> None:
    """H23, K15, K17 — settle a harmful narrative element. Paid with a point:
    accepting gives the affected that point, refusing gives it back to the
    activator. Paid by exhausting an aspect (K17): no point moves either way,
    and a refusal gives the activator the aspect back (its ``SheetEvent``)."""
    exhausted = activation.payment == Activation.Payment.EXHAUST
    if accept:
        effect = hitos_drama.narrative_accepted(target, options, exhausted=exhausted)
        reason = _("acepta el elemento narrativo «%(aspect)s»")
    else:
        effect = hitos_drama.narrative_refused(activator, target, options, exhausted=exhausted)
        reason = _("rechaza el elemento narrativo «%(aspect)s»")
    reason = reason % {"aspect": activation.aspect_text}
    _move(activation, effect.transfers, user=user, reason=reason)
    if effect.restores_aspect and activation.aspect_id is not None:
        aspect = Aspect.objects.select_for_update().filter(pk=activation.aspect_id).first()
        # Already recovered (a new session, or the GM from the sheet): nothing to give back.
        if aspect is not None and aspect.exhausted:
            aspect_change(aspect=aspect, actor=user, action="recover", reason=reason)


def _move(activation: Activation, transfers, *, user, reason: str) -> None:
    try:
        drama_move(campaign=activation.campaign, transfers=transfers, actor=user, reason=reason)
    except ValidationError as exc:
        raise ValidationError(exc.messages[0], code="no_points") from None


def _accepted(activation: Activation):
    return Activation.objects.filter(pk=activation.pk, kind=Activation.Kind.NEGATIVE)


def activation_answer(*, activation: Activation, user, accept: bool, client_seed: str | None = None) -> Activation:
    """The target's answer to a pending negative (H22, H25) or narrative (H23)
    activation: accept (+1 point, and the negative re-roll, drawn with
    ``client_seed``) or cancel (pay 1 point to the activator, who also gets
    theirs back). Refusing a narrative element gives the activator back what
    they paid (K15), the point or the exhausted aspect (K17). An acceptance
    sent again with the same seed (a retried form) returns the activation
    as the first one left it, and nothing more is paid or drawn."""
    with transaction.atomic():
        if activation.table_roll_id:
            lock_table_roll(activation.table_roll)
        locked = _locked_pending(activation, pending=False)
        if locked.table_roll_id:
            locked.table_roll = TableRoll.objects.select_related("campaign", "latest", "owner", "post").get(
                pk=locked.table_roll_id
            )
        if not may_answer(locked, user, campaign_access(user, locked.campaign)):
            raise PermissionDenied(_("Solo el jugador afectado responde a esta activación."))
        if accept and locked.table_roll_id:
            earlier = _retried(locked.campaign, user=user, client_seed=client_seed, candidates=_accepted(locked))
            if earlier is not None:
                return earlier
        _still_pending(locked)
        decided = _decide(locked, user=user, accept=accept, client_seed=client_seed)
        if decided.kind == Activation.Kind.NEGATIVE:
            deadlines.withdraw(DEADLINE_KIND, decided.pk, now=decided.decided_at)
        return decided


def answer_negative(*, activation: Activation, user, accept: bool, client_seed: str | None = None) -> Activation:
    if activation.kind != Activation.Kind.NEGATIVE:
        raise ValidationError(_("Esa activación no es en contra de una tirada."))
    return activation_answer(activation=activation, user=user, accept=accept, client_seed=client_seed)


def answer_narrative(*, activation: Activation, user, accept: bool) -> Activation:
    if activation.kind != Activation.Kind.NARRATIVE:
        raise ValidationError(_("Esa activación no es un elemento narrativo."))
    return activation_answer(activation=activation, user=user, accept=accept)


def settle_negative(*, activation: Activation, user, client_seed: str | None = None) -> Activation:
    """The GM settles a pending activation nobody answered in time: it counts
    as accepted (the campaign's ``activation_deadline_hours`` table setting).

    From the roll's card as from the settle page: a roll in a scene has the
    campaign's deadline, and this goes through ``deadlines.deadline_settle``
    (the deadline's record, the moderation log row, the player told; the
    activation itself through ``settle_unanswered``). A roll outside any
    scene has no campaign deadline: it is settled here on the activation's
    own date, with its moderation log row too.

    The re-roll is drawn with ``client_seed``; the same seed sent again (a
    retried form) returns the activation as the first request left it."""
    if not campaign_access(user, activation.campaign).is_gm:
        raise PermissionDenied(_("Solo la dirección resuelve activaciones pendientes."))
    retried = {"user": user, "client_seed": client_seed, "candidates": _accepted(activation)}
    earlier = _retried(activation.campaign, **retried)
    if earlier is not None:
        return earlier
    deadline = (
        Deadline.objects.open()
        .filter(kind=DEADLINE_KIND, target_id=activation.pk, campaign_id=activation.campaign_id)
        .first()
    )
    if deadline is not None:
        try:
            deadlines.deadline_settle(deadline=deadline, key=SETTLE_ACCEPT, actor=user, client_seed=client_seed)
        except ValidationError:
            # The same form sent twice at once: the twin, first to lock the
            # deadline, settled it with this seed; its answer is this one's.
            earlier = _retried(activation.campaign, **retried)
            if earlier is not None:
                return earlier
            raise
        return Activation.objects.get(pk=activation.pk)
    with transaction.atomic():
        if activation.table_roll_id:
            lock_table_roll(activation.table_roll)
        earlier = _retried(activation.campaign, **retried)
        if earlier is not None:
            return earlier
        locked = _locked_pending(activation)
        if locked.table_roll_id:
            locked.table_roll = TableRoll.objects.select_related("campaign", "latest", "owner", "post").get(
                pk=locked.table_roll_id
            )
        if not is_overdue(locked):
            raise ValidationError(_("El plazo para responder aún no ha vencido."), code="deadline")
        decided = _decide(locked, user=user, accept=True, client_seed=client_seed)
        ModerationLog.objects.create(
            campaign=decided.campaign,
            actor=user,
            action=ModerationAction.DEADLINE_SETTLED,
            scene_id=decided.table_roll.scene_id if decided.table_roll_id else None,
            reason=_settled_sentence(decided, user),
        )
        return decided


def _settled_sentence(activation: Activation, user) -> str:
    return _(
        "%(actor)s dio por aceptada la activación en contra «%(aspect)s» de %(name)s: venció el plazo sin respuesta."
    ) % {
        "actor": user.public_name,
        "aspect": activation.aspect_text,
        "name": activation.target_character.name if activation.target_character else "",
    }


def settle_unanswered(*, deadline: Deadline, actor, client_seed: str | None = None) -> str:
    """The campaign's deadline of a pending negative activation passed and
    the direction settles it: it counts as accepted (the re-roll is made
    with ``client_seed``, the target gains the point, H22), as
    ``settle_negative``. Inside the caller's transaction, which records the
    deadline as settled. Returns the sentence recorded; for a seed that
    already settled this activation (a retry), the same sentence, with
    nothing paid or drawn again."""
    activation = Activation.objects.filter(pk=deadline.target_id, campaign_id=deadline.campaign_id).first()
    if activation is None:
        raise ValidationError(_("Esa activación ya no existe."), code="gone")
    if activation.table_roll_id:
        lock_table_roll(activation.table_roll)
    locked = _locked_pending(activation, pending=False)
    if locked.table_roll_id:
        locked.table_roll = TableRoll.objects.select_related("campaign", "latest", "owner", "post").get(
            pk=locked.table_roll_id
        )
    if not campaign_access(actor, locked.campaign).is_gm:
        raise ValidationError(_("Solo la dirección resuelve activaciones pendientes."), code="gm")
    if locked.table_roll_id:
        earlier = _retried(locked.campaign, user=actor, client_seed=client_seed, candidates=_accepted(locked))
        if earlier is not None:
            return _settled_sentence(earlier, actor)
    _still_pending(locked)
    if timezone.now() < deadline.due_at:
        raise ValidationError(_("El plazo para responder aún no ha vencido."), code="deadline")
    decided = _decide(locked, user=actor, accept=True, client_seed=client_seed)
    return _settled_sentence(decided, actor)


def is_overdue(activation: Activation) -> bool:
    return activation.deadline is not None and timezone.now() >= activation.deadline


# --- Narrative activation ----------------------------------------------------------------


def narrative_exhaust_options(*, character_ids) -> list[AspectOption]:
    """K17 — the aspects that may pay a narrative element by being exhausted:
    those of the given player characters (never an NPC's: the GM pays from the
    pool, H24), still on the sheet and not exhausted (H27). One query."""
    aspects = (
        Aspect.objects.active()
        .filter(character_id__in=list(character_ids), character__kind=Character.Kind.PC, exhausted_until="")
        .select_related("character")
        .order_by("character__name", "character_id", "kind", "position", "pk")
    )
    return [
        AspectOption(
            f"{SHEET_ASPECT}{aspect.pk}",
            _("Agotar «%(phrase)s» (%(name)s)") % {"phrase": aspect.phrase, "name": aspect.character.name},
            aspect.phrase,
            aspect=aspect,
            own=True,
        )
        for aspect in aspects
    ]


def _check_narrative_activator(access: Access, user, campaign: Campaign, character_or_gm: Character | None) -> None:
    if character_or_gm is None or character_or_gm.is_npc:
        if not access.is_gm:
            raise PermissionDenied(_("Solo la dirección usa su reserva o sus PNJ."))
    elif not (
        access.is_player and character_or_gm.owner_id == user.pk and character_or_gm.status == Character.Status.APPROVED
    ):
        raise PermissionDenied(_("Solo puedes activar aspectos con tu propio personaje aprobado."))
    if character_or_gm is not None and character_or_gm.campaign_id != campaign.pk:
        raise PermissionDenied(_("Ese personaje no es de esta partida."))


def _check_affected(campaign: Campaign, character_or_gm: Character | None, affected: Character | None) -> None:
    if affected is None:
        return
    if affected.campaign_id != campaign.pk or affected.is_npc or affected.status != Character.Status.APPROVED:
        raise ValidationError(_("Solo un personaje jugador aprobado puede verse afectado."), code="affected")
    if character_or_gm is not None and affected.pk == character_or_gm.pk:
        raise ValidationError(_("El personaje afectado no puede ser quien activa el aspecto."), code="affected")


def _exhaust_for_narrative(
    *, character: Character | None, aspect_id: int, aspect_text: str, user, note: str, options
) -> Aspect:
    """K17 — pay a narrative element by exhausting the activator's own aspect:
    the aspect activated is the one exhausted (an empty ``aspect_text`` takes
    its phrase; a different one is refused). H27 — never another character's
    aspect; the GM and NPCs pay from the pool."""
    aspect = Aspect.objects.filter(pk=aspect_id).first()
    # The GM and NPCs are refused whatever the aspect; a player, for another character's.
    own = aspect is None or (character is not None and aspect.character_id == character.pk)
    _rule(hitos_drama.narrative_activation, side_for(character), options, exhaust=True, own_aspect=own)
    if aspect is None:
        raise ValidationError(_("Ese aspecto ya no está en la ficha."), code="exhaust")
    if aspect_text and aspect_text.casefold() != " ".join(aspect.phrase.split()).casefold():
        raise ValidationError(
            _(
                "Al pagar agotando un aspecto, el aspecto que activas es ese mismo («%(phrase)s»): "
                "deja vacío el campo «Aspecto» o escribe esa frase."
            )
            % {"phrase": aspect.phrase},
            code="exhaust",
        )
    reason = _("elemento narrativo con «%(aspect)s»: %(note)s") % {"aspect": aspect.phrase, "note": note}
    return _exhaust(aspect.pk, user=user, reason=reason)


def narrative_activation(
    *,
    campaign: Campaign,
    user,
    character_or_gm: Character | None,
    aspect_text: str,
    note: str,
    affected: Character | None = None,
    exhaust_aspect_id: int | None = None,
) -> Activation:
    """H23 — an aspect introduces a fact in the story for 1 drama point (the
    GM's from their pool). K17 — a player may pay instead by exhausting their
    own character's aspect (``exhaust_aspect_id``, the aspect activated; the
    same rules as a positive activation's exhaustion), never the GM or an NPC.

    When the element harms another character, that character's player
    answers (``answer_narrative``). Paid with a point: accept and gain it, or
    refuse and the activator gets it back (K15). Paid by exhaustion, the same
    net 0 for both: accepting gains nothing (no point was spent), refusing
    costs nothing and the activator's aspect recovers; a refused element does
    not happen.

    Side effects: the point and its ``SheetEvent`` with the note, or the
    aspect exhausted and its ``SheetEvent``; an ``Activation`` (PENDING while
    the affected player has not answered)."""
    access = campaign_access(user, campaign)
    _check_narrative_activator(access, user, campaign, character_or_gm)
    aspect_text = " ".join(aspect_text.split())
    note = note.strip()
    if not note or not (aspect_text or exhaust_aspect_id is not None):
        raise ValidationError(_("Indica el aspecto y el elemento narrativo que introduces."), code="required")
    _check_affected(campaign, character_or_gm, affected)
    options = campaign_options(campaign)
    side = side_for(character_or_gm)
    exhausted: Aspect | None = None
    with transaction.atomic():
        if exhaust_aspect_id is not None:
            exhausted = _exhaust_for_narrative(
                character=character_or_gm,
                aspect_id=exhaust_aspect_id,
                aspect_text=aspect_text,
                user=user,
                note=note,
                options=options,
            )
            aspect_text = exhausted.phrase
            payment = Activation.Payment.EXHAUST
        else:
            effect = hitos_drama.narrative_activation(side, options)
            reason = _("elemento narrativo con «%(aspect)s»: %(note)s") % {"aspect": aspect_text, "note": note}
            try:
                drama_move(campaign=campaign, transfers=effect.transfers, actor=user, reason=reason)
            except ValidationError as exc:
                raise ValidationError(exc.messages[0], code="no_points") from None
            payment = (
                Activation.Payment.POINT
                if character_or_gm and not character_or_gm.is_npc
                else Activation.Payment.GM_POOL
            )
        activation = Activation(
            campaign=campaign,
            kind=Activation.Kind.NARRATIVE,
            status=Activation.Status.PENDING if affected else Activation.Status.DONE,
            activator=user,
            activator_character=character_or_gm,
            target_character=affected,
            aspect_text=aspect_text[:200],
            aspect=exhausted,
            payment=payment,
            note=note[:500],
            deadline=timezone.now() + timedelta(hours=table_setting(campaign, "activation_deadline_hours"))
            if affected
            else None,
            decided_at=None if affected else timezone.now(),
            decided_by=None if affected else user,
        )
        # A narrative element re-rolls nothing: no dice positions.
        activation.full_clean(exclude=["positions"], validate_constraints=False)
        activation.save()
        if affected is not None:
            notify.narrative_pending(activation)
    return activation
