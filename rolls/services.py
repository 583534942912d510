"""Appending to a campaign's signed roll log (rollog/v1).

Every die the site rolls is drawn here: lock the campaign's head row, take the
next seed slot, draw with HMAC-SHA256 and rejection sampling, let ``rules/``
read the dice, sign, store. Callers run inside their own transaction so the
roll and its consequences (a drama point spent, a mark on a meter) commit
together.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from campaigns.models import Campaign
from rolls import rollog
from rolls.models import CampaignLog, RollEntry, SeedEpoch
from rules import hitos, notation
from rules.dice import FixedDice
from rules.hitos_options import HitosOptions

EPOCH_LENGTH = rollog.EPOCH_LENGTH

# A function from the drawn dice to the signed game fields of the entry.
Reader = Callable[[list[int]], dict[str, Any]]


def _keys():
    return settings.ROLLOG_KEYS


def _log_id_for(campaign: Campaign) -> str:
    base = re.sub(r"[^a-z0-9-]+", "-", campaign.slug.lower()).strip("-")[:80] or "partida"
    if CampaignLog.objects.filter(log_id=base).exists():
        base = f"{base}-{campaign.pk}"
    return base


def _now_text(last: str = "") -> str:
    # Time never goes back in the log (§3.12): the fixed-width format sorts as text.
    return max(rollog.format_time(timezone.now()), last)


def _store(campaign: Campaign, signed: rollog.SignedEntry, **links: Any) -> RollEntry:
    entry = signed.entry
    return RollEntry.objects.create(
        campaign=campaign,
        seq=entry["seq"],
        kind=entry["kind"],
        entry_bytes=signed.entry_bytes,
        signature=signed.signature,
        entry_hash=signed.hash_hex,
        permalink=signed.permalink,
        epoch=entry["epoch"],
        epoch_index=entry.get("epoch_index"),
        client_seed=entry.get("client_seed"),
        spec=entry.get("spec", ""),
        purpose=entry.get("purpose", ""),
        dice=entry.get("dice", []),
        game=entry.get("game", {}),
        time=entry["time"],
        **links,
    )


def _open_epoch(campaign: Campaign, *, log_id: str, epoch: int, seq: int, prev: str, time: str) -> RollEntry:
    keys = _keys()
    root = rollog.new_epoch_root()
    signed = rollog.build_epoch_open(
        keys.signing_key,
        campaign=log_id,
        seq=seq,
        prev=prev,
        time=time,
        epoch=epoch,
        anchor=rollog.epoch_anchor(root, EPOCH_LENGTH),
        length=EPOCH_LENGTH,
    )
    SeedEpoch.objects.create(
        campaign=campaign,
        epoch=epoch,
        anchor=signed.entry["anchor"],
        length=EPOCH_LENGTH,
        root_encrypted=keys.fernet.encrypt(root),
        opened_seq=seq,
    )
    return _store(campaign, signed)


@transaction.atomic
def log_open(*, campaign: Campaign) -> CampaignLog:
    """Open the campaign's log with its first epoch (seq 0). Idempotent."""
    existing = CampaignLog.objects.filter(campaign=campaign).first()
    if existing:
        return existing
    log_id = _log_id_for(campaign)
    time = _now_text()
    entry = _open_epoch(campaign, log_id=log_id, epoch=1, seq=0, prev=rollog.ZERO_HASH, time=time)
    return CampaignLog.objects.create(
        campaign=campaign, log_id=log_id, seq=0, head_hash=entry.entry_hash, head_time=time, epoch=1, next_index=1
    )


def _lock_head(campaign: Campaign) -> CampaignLog:
    try:
        return CampaignLog.objects.select_for_update().get(campaign=campaign)
    except CampaignLog.DoesNotExist:
        pass
    try:
        with transaction.atomic():
            log_open(campaign=campaign)
    except IntegrityError:
        pass  # Another request opened it first.
    return CampaignLog.objects.select_for_update().get(campaign=campaign)


def _current_epoch(log: CampaignLog) -> SeedEpoch:
    return SeedEpoch.objects.get(campaign_id=log.campaign_id, epoch=log.epoch)


def _take_slot(log: CampaignLog) -> tuple[SeedEpoch, int, bytes]:
    """The next seed slot; opens a new epoch when this one is used up."""
    if log.next_index > EPOCH_LENGTH:
        time = _now_text(log.head_time)
        entry = _open_epoch(
            log.campaign, log_id=log.log_id, epoch=log.epoch + 1, seq=log.seq + 1, prev=log.head_hash, time=time
        )
        log.seq, log.head_hash, log.head_time = entry.seq, entry.entry_hash, time
        log.epoch += 1
        log.next_index = 1
    epoch = _current_epoch(log)
    root = _keys().fernet.decrypt(bytes(epoch.root_encrypted))
    index = log.next_index
    return epoch, index, rollog.seed_for_slot(root, epoch.length, index)


def _check_seen(campaign: Campaign, log: CampaignLog, seen: str | None) -> str:
    """``seen`` must name an entry at or after the current epoch_open (§3.3)."""
    if not seen:
        return log.head_hash
    epoch = _current_epoch(log)
    ok = RollEntry.objects.filter(campaign=campaign, entry_hash=seen, seq__gte=epoch.opened_seq).exists()
    if not ok and seen != log.head_hash:
        raise ValidationError(_("La tirada se preparó con una página antigua. Recarga la página y vuelve a tirar."))
    return seen


def _client_seed(client_seed: str | None) -> tuple[str, str]:
    if client_seed is None:
        return rollog.server_client_seed(), "server"
    try:
        return rollog.check_client_seed(client_seed), "browser"
    except rollog.RollogError:
        raise ValidationError(
            _("La semilla del navegador no es válida: de 1 a 64 letras, cifras, guiones o guiones bajos.")
        ) from None


def _existing(campaign: Campaign, client_seed: str, user) -> RollEntry | None:
    """A retry with the same client seed returns the entry it made (idempotency)."""
    entry = RollEntry.objects.filter(campaign=campaign, client_seed=client_seed).first()
    if entry is not None and entry.user_id != getattr(user, "pk", None):
        raise ValidationError(_("Esa semilla ya se usó en otra tirada."))
    return entry


def _advance(log: CampaignLog, entry: RollEntry) -> None:
    log.seq = entry.seq
    log.head_hash = entry.entry_hash
    log.head_time = entry.time
    log.next_index += 1
    log.save(update_fields=["seq", "head_hash", "head_time", "epoch", "next_index"])


def _ids(user, character, scene) -> dict[str, str]:
    return {
        "user": f"u{user.pk}" if user else "",
        "character": f"ch{character.pk}" if character else "",
        "scene": f"sc{scene.pk}" if scene else "",
    }


@transaction.atomic
def roll_append(
    *,
    campaign: Campaign,
    user,
    spec: str,
    purpose: str,
    read: Reader,
    character=None,
    scene=None,
    post=None,
    client_seed: str | None = None,
    seen: str | None = None,
) -> RollEntry:
    """Draw ``spec`` through the log and store the signed entry.

    ``read`` turns the dice into the entry's signed game fields (the reading
    by ``rules/``); it is stored under ``game``.
    """
    seed_text, source = _client_seed(client_seed)
    log = _lock_head(campaign)
    if source == "browser" and (existing := _existing(campaign, seed_text, user)):
        return existing
    try:
        rollog.expand_spec(spec)
    except rollog.RollogError as exc:
        raise ValidationError(exc.message) from None
    seen_hash = _check_seen(campaign, log, seen)
    epoch, index, seed = _take_slot(log)
    seq = log.seq + 1
    message = rollog.derivation_message(log.log_id, seq, seed_text, spec)
    dice = rollog.dice_for_spec(seed, message, spec)
    signed = rollog.build_roll(
        _keys().signing_key,
        campaign=log.log_id,
        seq=seq,
        prev=log.head_hash,
        time=_now_text(log.head_time),
        **_ids(user, character, scene),
        purpose=purpose,
        spec=spec,
        epoch=epoch.epoch,
        epoch_index=index,
        seed=seed,
        client_seed=seed_text,
        client_seed_source=source,
        seen=seen_hash,
        extra={"game": read(list(dice))},
    )
    entry = _store(campaign, signed, user=user, character=character, scene=scene, post=post)
    _advance(log, entry)
    return entry


@transaction.atomic
def reroll_append(
    *,
    parent: RollEntry,
    user,
    positions: Sequence[int],
    purpose: str,
    read: Reader,
    client_seed: str | None = None,
    seen: str | None = None,
) -> RollEntry:
    """Re-roll ``positions`` (0-based, raw order) of ``parent``, the latest
    version of a roll: a new ``reroll`` entry pointing at it (§3.6)."""
    campaign = parent.campaign
    seed_text, source = _client_seed(client_seed)
    log = _lock_head(campaign)
    if source == "browser" and (existing := _existing(campaign, seed_text, user)):
        return existing
    if RollEntry.objects.filter(parent=parent).exists():
        raise ValidationError(_("Esa versión de la tirada ya se repitió: actúa sobre la última."))
    chosen = sorted(set(positions))
    try:
        rollog.check_positions(chosen, len(parent.dice))
    except rollog.RollogError as exc:
        raise ValidationError(exc.message) from None
    seen_hash = _check_seen(campaign, log, seen)
    epoch, index, seed = _take_slot(log)
    seq = log.seq + 1
    signed_parent = parent.signed
    faces = rollog.expand_spec(parent.spec)
    message = rollog.derivation_message(log.log_id, seq, seed_text, parent.spec, parent.entry_hash, chosen)
    stream = rollog.dice_stream(seed, message)
    dice = list(parent.dice)
    for p in chosen:
        dice[p] = stream.roll(faces[p])
    signed = rollog.build_reroll(
        _keys().signing_key,
        parent=signed_parent,
        positions=chosen,
        seq=seq,
        prev=log.head_hash,
        time=_now_text(log.head_time),
        user=f"u{user.pk}",
        purpose=purpose,
        epoch=epoch.epoch,
        epoch_index=index,
        seed=seed,
        client_seed=seed_text,
        client_seed_source=source,
        seen=seen_hash,
        extra={"game": read(dice)},
    )
    entry = _store(
        campaign,
        signed,
        user=user,
        character=parent.character,
        scene=parent.scene,
        post=parent.post,
        parent=parent,
    )
    _advance(log, entry)
    return entry


def campaign_options(campaign: Campaign) -> HitosOptions:
    return HitosOptions.from_dict(campaign.rules_options or {})


def hitos_reader(
    *,
    campaign: Campaign,
    what: str,
    modifier: int,
    difficulty: int | None,
    difficulty_hidden: bool = False,
    breakdown: Sequence[tuple[str, int]] = (),
    reading: hitos.Reading = hitos.Reading.NORMAL,
) -> Reader:
    """Signed game fields of a HITOS check: what was rolled, the modifier
    breakdown, the difficulty (or that it is hidden) and the reading."""
    options = campaign_options(campaign)

    def read(dice: list[int]) -> dict[str, Any]:
        result = hitos.check(hitos.HitosRoll(tuple(dice), reading), modifier, difficulty or 0, options)
        data = result.to_dict()
        fields = {
            "system": "hitos",
            "what": what,
            "breakdown": [[label, value] for label, value in breakdown],
            "reading": data["reading"],
            "labels": data["labels"],
            "m": data["m"],
            "C": data["C"],
            "M": data["M"],
            "value": data["value"],
            "modifier": modifier,
            "total": data["total"],
            "critical": data["critical_level"],
            "fumble": data["fumble_level"],
        }
        if difficulty is None:
            fields["difficulty"] = None
        else:
            fields["difficulty"] = "hidden" if difficulty_hidden else difficulty
            fields["difficulty_value"] = difficulty
            fields["success"] = result.success
        return fields

    return read


@transaction.atomic
def hitos_check_roll(
    *,
    campaign: Campaign,
    user,
    purpose: str,
    modifier: int,
    difficulty: int | None,
    difficulty_hidden: bool = False,
    breakdown: Sequence[tuple[str, int]] = (),
    character=None,
    scene=None,
    post=None,
    client_seed: str | None = None,
    seen: str | None = None,
) -> tuple[RollEntry, hitos.CheckResult]:
    """3d10 through the log, read as a HITOS check with the campaign's options."""
    read = hitos_reader(
        campaign=campaign,
        what=purpose,
        modifier=modifier,
        difficulty=difficulty,
        difficulty_hidden=difficulty_hidden,
        breakdown=breakdown,
    )
    entry = roll_append(
        campaign=campaign,
        user=user,
        spec="3d10",
        purpose=purpose,
        read=read,
        character=character,
        scene=scene,
        post=post,
        client_seed=client_seed,
        seen=seen,
    )
    result = hitos.check(hitos.HitosRoll(tuple(entry.dice)), modifier, difficulty or 0, campaign_options(campaign))
    return entry, result


def notation_reader(expression: notation.Expression) -> Reader:
    def read(dice: list[int]) -> dict[str, Any]:
        result = notation.evaluate(expression, FixedDice(dice))
        return {"system": "free", "expression": expression.canonical(), "total": result.total, "detail": result.detail()}

    return read


@transaction.atomic
def free_roll(*, campaign: Campaign, user, text: str, purpose: str, scene=None, client_seed=None, seen=None) -> RollEntry:
    """A "tirada libre" in dice notation, through the same log.

    Exploding dice are refused: rollog/v1 has no rule yet for drawing extra
    dice from the stream (§3.4), so the roll could not be verified.
    """
    try:
        expression = notation.parse(text)
    except notation.NotationError as exc:
        raise ValidationError(str(exc)) from None
    if expression.explodes:
        raise ValidationError(_("Los dados explosivos (!) todavía no se pueden tirar de forma verificable."))
    try:
        spec = expression.pool_spec()
    except ValueError as exc:
        raise ValidationError(str(exc)) from None
    return roll_append(
        campaign=campaign,
        user=user,
        spec=spec,
        purpose=purpose or expression.canonical(),
        read=notation_reader(expression),
        scene=scene,
        client_seed=client_seed,
        seen=seen,
    )
