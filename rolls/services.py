"""Appending to a campaign's signed roll log (rollog/v1).

Every die the site rolls is drawn here: lock the campaign's head row, take the
next seed slot, draw with HMAC-SHA256 and rejection sampling, let ``rules/``
read the dice, sign, store. Callers may run inside their own transaction so
the roll and its consequences (a drama point spent, a mark on a meter) commit
together.
"""

from __future__ import annotations

import functools
import json
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import IntegrityError, connection, transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from campaigns.models import Campaign
from rolls import rollog, verify_roll
from rolls.models import CampaignLog, LogHeadMismatch, RollEntry, SeedEpoch
from rolls.permissions import audience_for
from rules import notation
from rules.dice import FixedDice

# Read at call time (never copied into a default argument), so tests can
# shorten it with monkeypatch before a campaign's log opens.
EPOCH_LENGTH = rollog.EPOCH_LENGTH
# Lengths of the indexed copies (see RollEntry).
PURPOSE_MAX_LENGTH = 300
SPEC_MAX_LENGTH = 100
# One decrypted chain point kept in memory every this many slots (see _seed_for).
CHECKPOINT_STEP = 100
CHAIN_CACHE_SIZE = 512

ACTIVATIONS = ("positive", "negative")

# A function from the drawn dice to the signed game fields of the entry.
Reader = Callable[[list[int]], dict[str, Any]]


def _keys():
    return settings.ROLLOG_KEYS


# --- The seed chain, fast ------------------------------------------------------------
#
# x_i is SHA-256 applied L - i times to the epoch's root: up to 10 000 hashes
# (about 20 ms) per roll if computed from the root each time. Instead the
# chain is walked once per process and epoch, keeping every CHECKPOINT_STEP-th
# point, so a slot costs at most CHECKPOINT_STEP hashes. The points live only
# in this process's memory, never in the database, keyed by campaign, epoch
# and anchor (a different anchor under the same ids is a different chain).

_chain_lock = threading.Lock()
_chain_cache: OrderedDict[tuple[int, int, str], tuple[int, list[bytes]]] = OrderedDict()


class SeedChainError(RuntimeError):
    """The decrypted root does not lead to the published anchor."""


def _checkpoints(root: bytes, length: int, step: int) -> list[bytes]:
    """points[k] = x_{min(k*step, length)}; the last point is the root itself."""
    count = -(-length // step)  # ceil
    points: list[bytes] = [b""] * (count + 1)
    x = root
    index = length
    points[count] = root
    for k in range(count - 1, -1, -1):
        target = k * step
        x = verify_roll.hash_chain(x, index - target)
        index = target
        points[k] = x
    return points


def _seed_for(epoch: SeedEpoch | _Epoch, index: int) -> bytes:
    """x_index of ``epoch``, from the in-memory checkpoints (built on first use)."""
    key = (epoch.campaign_id, epoch.epoch, epoch.anchor)
    with _chain_lock:
        cached = _chain_cache.get(key)
        if cached is not None:
            _chain_cache.move_to_end(key)
    if cached is None:
        root = _keys().fernet.decrypt(bytes(epoch.root_encrypted))
        points = _checkpoints(root, epoch.length, CHECKPOINT_STEP)
        if points[0].hex() != epoch.anchor:
            raise SeedChainError(f"The seed root of epoch {epoch.epoch} does not lead to its anchor.")
        cached = (CHECKPOINT_STEP, points)
        with _chain_lock:
            _chain_cache[key] = cached
            while len(_chain_cache) > CHAIN_CACHE_SIZE:
                _chain_cache.popitem(last=False)
    step, points = cached
    if not 0 <= index <= epoch.length:
        raise rollog.RollogError("slot_out_of_range", f"La ranura {index} no existe (L={epoch.length}).")
    k = -(-index // step)  # the first checkpoint at or above index
    above = min(k * step, epoch.length)
    return verify_roll.hash_chain(points[k], above - index)


def chain_cache_clear() -> None:
    with _chain_lock:
        _chain_cache.clear()


# --- Opening the log and its epochs --------------------------------------------------


def _log_id_for(campaign: Campaign) -> str:
    base = re.sub(r"[^a-z0-9-]+", "-", campaign.slug.lower()).strip("-")[:80] or "partida"
    if CampaignLog.objects.filter(log_id=base).exists():
        base = f"{base}-{campaign.pk}"
    return base


def _now_text(last: str = "") -> str:
    # Time never goes back in the log (§3.12): the fixed-width format sorts as text.
    return max(rollog.format_time(timezone.now()), last)


def _store(
    campaign: Campaign,
    signed: rollog.SignedEntry,
    *,
    head: _Head | None = None,
    opening: bytes | None = None,
    audience: str = "",
    **links: Any,
) -> RollEntry:
    """Insert the signed entry with its indexed copies (the only write entries ever get).

    For a sealed roll ``signed`` is the outer entry and the copies come from
    its ``opening``. With ``head`` (the locked head of an append) the head
    moves to this entry and its next slot in the same round trip.
    """
    entry = json.loads(opening) if opening is not None else signed.entry
    row = RollEntry(
        audience=audience,
        opening=opening,
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
    if not connection.features.can_return_columns_from_insert:  # an old SQLite
        row.save()
        if head is not None:
            head.seq, head.head_hash, head.head_time = row.seq, row.entry_hash, row.time
            head.next_index += 1
            head.save()
        return row
    # The INSERT the ORM would build, without building it each time (see
    # _Head): each field prepares its own value for this database.
    fields = [f for f in RollEntry._meta.concrete_fields if not f.primary_key]
    values = [f.get_db_prep_save(f.pre_save(row, True), connection) for f in fields]
    statements = [(_insert_sql(), values)]
    if head is not None:
        head.seq, head.head_hash, head.head_time = row.seq, row.entry_hash, row.time
        head.next_index += 1
        statements.append(head.update_statement())
    with connection.cursor() as cursor:
        row.pk = _execute(cursor, statements)[0][0][0]
    row._state.adding = False
    row._state.db = connection.alias
    return row


def _batched() -> bool:
    """Several statements per round trip: PostgreSQL with client-side binding (Django's default)."""
    if connection.vendor != "postgresql":
        return False
    from django.db.backends.postgresql.psycopg_any import is_psycopg3

    return is_psycopg3 and connection.settings_dict.get("OPTIONS", {}).get("server_side_binding") is not True


def _execute(cursor, statements: list[tuple[str, list]]) -> list[list[tuple]]:
    """Run the statements in order and return each one's rows.

    On PostgreSQL they go in one round trip. Each still runs as a statement of
    its own, with its own snapshot under READ COMMITTED, as when sent apart.
    """
    results: list[list[tuple]] = []
    if _batched():
        cursor.execute("; ".join(sql for sql, _ in statements), [p for _, params in statements for p in params])
        for n in range(len(statements)):
            if n:
                cursor.nextset()
            results.append(cursor.fetchall() if cursor.description else [])
        return results
    for sql, params in statements:
        cursor.execute(sql, params)
        results.append(cursor.fetchall() if cursor.description else [])
    return results


@functools.cache
def _insert_sql() -> str:
    fields = [f for f in RollEntry._meta.concrete_fields if not f.primary_key]
    quote = connection.ops.quote_name
    columns = ", ".join(quote(f.column) for f in fields)
    marks = ", ".join(["%s"] * len(fields))
    return f"INSERT INTO {quote(RollEntry._meta.db_table)} ({columns}) VALUES ({marks}) RETURNING {quote('id')}"


def _open_epoch(campaign: Campaign, *, log_id: str, epoch: int, seq: int, prev: str, time: str) -> RollEntry:
    """Commit to a fresh seed chain: store its root encrypted, sign its anchor."""
    keys = _keys()
    length = EPOCH_LENGTH
    root = rollog.new_epoch_root()
    signed = rollog.build_epoch_open(
        keys.signing_key,
        campaign=log_id,
        seq=seq,
        prev=prev,
        time=time,
        epoch=epoch,
        anchor=rollog.epoch_anchor(root, length),
        length=length,
    )
    SeedEpoch.objects.create(
        campaign=campaign,
        epoch=epoch,
        anchor=signed.entry["anchor"],
        length=length,
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


# The append path: lock the head row and read what the slot needs; insert the
# entry and move the head; commit. Every append waits for the previous one's
# commit (the row lock), so the time the lock is held bounds appends per
# second. Building ORM queries costs more than running these, hence a few
# hand-written statements, sent two at a time on PostgreSQL (see _execute and
# bench/bench_rolls.py).


@dataclass
class _Head:
    """The campaign's locked head row (rolls.CampaignLog), as plain values."""

    campaign: Campaign
    log_id: str
    seq: int
    head_hash: str
    head_time: str
    epoch: int
    next_index: int

    @property
    def campaign_id(self) -> int:
        return self.campaign.pk

    def update_statement(self, *, epoch: bool = False) -> tuple[str, list]:
        columns = ["seq", "head_hash", "head_time", "next_index"] + (["epoch"] if epoch else [])
        assignments = ", ".join(f"{c} = %s" for c in columns)
        return (
            f"UPDATE {CampaignLog._meta.db_table} SET {assignments} WHERE campaign_id = %s",
            [*(getattr(self, c) for c in columns), self.campaign_id],
        )

    def save(self, *, epoch: bool = False) -> None:
        with connection.cursor() as cursor:
            cursor.execute(*self.update_statement(epoch=epoch))


@dataclass(frozen=True)
class _Epoch:
    """A rolls.SeedEpoch without its encrypted root (read only when the chain cache misses)."""

    pk: int
    campaign_id: int
    epoch: int
    anchor: str
    length: int
    opened_seq: int

    @property
    def root_encrypted(self) -> bytes:
        return SeedEpoch.objects.filter(pk=self.pk).values_list("root_encrypted", flat=True).get()


@dataclass(frozen=True)
class _Slot:
    epoch: _Epoch
    retry_id: int | None  # the entry already made with this client seed
    seen_seq: int | None  # the seq of the entry named by `seen`
    head_named: bool  # the head names the campaign's last entry (CampaignLog.names)

    @classmethod
    def from_row(cls, row: tuple) -> _Slot:
        *epoch, retry_id, seen_seq, head_named = row
        return cls(_Epoch(*epoch), retry_id, seen_seq, bool(head_named))


def _head_statement(campaign: Campaign) -> tuple[str, list]:
    sql = (
        f"SELECT log_id, seq, head_hash, head_time, epoch, next_index FROM {CampaignLog._meta.db_table}"
        " WHERE campaign_id = %s"
    )
    if connection.features.has_select_for_update:
        sql += " FOR UPDATE"
    return sql, [campaign.pk]


def _slot_statement(campaign_id: int, client_seed: str | None, seen: str | None) -> tuple[str, list]:
    # After the lock, as a statement of its own: under READ COMMITTED it sees
    # the head as the previous holder left it and every entry committed while
    # this request waited for the lock.
    entries, log = RollEntry._meta.db_table, CampaignLog._meta.db_table
    # Does the head name the last entry: its seq, hash, time, epoch and the
    # slot after it, every field the head's trigger checks (rolls 0005)?
    named = (
        "t.seq = h.seq AND t.entry_hash = h.head_hash AND t.time = h.head_time AND t.epoch = h.epoch"
        f" AND CASE WHEN t.kind = '{RollEntry.Kind.EPOCH_OPEN}' THEN 1 ELSE t.epoch_index + 1 END = h.next_index"
    )
    sql = (
        "SELECT id, campaign_id, epoch, anchor, length, opened_seq,"
        f" (SELECT r.id FROM {entries} r WHERE r.campaign_id = %s AND r.client_seed = %s),"
        f" (SELECT s.seq FROM {entries} s WHERE s.campaign_id = %s AND s.entry_hash = %s),"
        f" (SELECT {named} FROM {entries} t JOIN {log} h ON h.campaign_id = t.campaign_id"
        "   WHERE t.campaign_id = %s ORDER BY t.seq DESC LIMIT 1)"
        f" FROM {SeedEpoch._meta.db_table}"
        f" WHERE campaign_id = %s AND epoch = (SELECT epoch FROM {log} WHERE campaign_id = %s)"
    )
    return sql, [campaign_id, client_seed, campaign_id, seen, campaign_id, campaign_id, campaign_id]


def _lock_head(campaign: Campaign, client_seed: str | None, seen: str | None) -> tuple[_Head, _Slot]:
    """Lock the campaign's head row until the transaction ends (opening the log
    if missing) and read what the next slot needs, in one round trip.

    Raises ``LogHeadMismatch`` when the head does not name the last entry (or
    is missing while entries exist, or names no seed epoch): appending after
    it would reuse a seq or chain to an entry that is not the last."""
    statements = [_head_statement(campaign), _slot_statement(campaign.pk, client_seed, seen)]
    with connection.cursor() as cursor:
        heads, slots = _execute(cursor, statements)
    if not heads:
        try:
            with transaction.atomic():
                log_open(campaign=campaign)
        except IntegrityError:
            pass  # Another request opened it first.
        with connection.cursor() as cursor:
            heads, slots = _execute(cursor, statements)
    if not heads or not slots:
        raise LogHeadMismatch(campaign)
    head, slot = _Head(campaign, *heads[0]), _Slot.from_row(slots[0])
    if not slot.head_named:
        raise LogHeadMismatch(campaign)
    return head, slot


def _move_head(log: _Head, entry: RollEntry) -> None:
    log.seq, log.head_hash, log.head_time = entry.seq, entry.entry_hash, entry.time


def _open_next_epoch(log: _Head) -> None:
    """The next epoch opens as soon as this one is used up.

    Opening it right after the last slot (not lazily, inside the next roll)
    puts its epoch_open in the log before any client can see it, so the next
    roll's ``seen`` names an entry of the epoch it draws from, as the audit
    requires (§3.3).
    """
    entry = _open_epoch(
        log.campaign,
        log_id=log.log_id,
        epoch=log.epoch + 1,
        seq=log.seq + 1,
        prev=log.head_hash,
        time=_now_text(log.head_time),
    )
    _move_head(log, entry)
    log.epoch += 1
    log.next_index = 1
    log.save(epoch=True)


def _take_slot(campaign: Campaign, client_seed: str | None, seen: str | None) -> tuple[_Head, _Slot]:
    log, slot = _lock_head(campaign, client_seed, seen)
    if log.next_index > slot.epoch.length:
        # Only a log left with a used-up epoch (say, by an older version) gets here.
        _open_next_epoch(log)
        with connection.cursor() as cursor:
            slot = _Slot.from_row(_execute(cursor, [_slot_statement(log.campaign_id, client_seed, seen)])[0][0])
    return log, slot


def _after_append(log: _Head, epoch: _Epoch) -> None:
    if log.next_index > epoch.length:
        _open_next_epoch(log)


# --- Checking what the player sent ---------------------------------------------------


def _check_seen(log: _Head, slot: _Slot, seen: str | None) -> str:
    """``seen`` must name an entry at or after the current epoch_open (§3.3)."""
    if not seen:
        return log.head_hash
    if slot.seen_seq is None or slot.seen_seq < slot.epoch.opened_seq:
        raise ValidationError(
            _("La tirada se preparó con una página antigua. Recarga la página y vuelve a tirar."), code="stale_seen"
        )
    return seen


def _client_seed(client_seed: str | None) -> tuple[str, str]:
    if client_seed is None:
        return rollog.server_client_seed(), "server"
    try:
        return rollog.check_client_seed(client_seed), "browser"
    except rollog.RollogError:
        raise ValidationError(
            _("La semilla del navegador no es válida: de 1 a 64 letras, cifras, guiones o guiones bajos."),
            code="bad_client_seed",
        ) from None


def _retry(slot: _Slot, user, *, same: Callable[[RollEntry], bool]) -> RollEntry | None:
    """A retry with the same client seed returns the entry it made (idempotency, §3.3)."""
    if slot.retry_id is None:
        return None
    entry = RollEntry.objects.get(pk=slot.retry_id)
    if entry.user_id != getattr(user, "pk", None) or not same(entry):
        raise seed_used()
    return entry


def seed_used() -> ValidationError:
    """The refusal of a client seed that already made another roll of the
    campaign (its seeds are unique: ``UNIQUE(campaign, client_seed)``)."""
    return ValidationError(_("Esa semilla ya se usó en otra tirada."), code="client_seed_used")


def derived_seed(client_seed: str | None, suffix: str) -> str | None:
    """The seed of a further roll made by the same request as ``client_seed``:
    ``"<its first 56 characters>-<suffix>"`` (a campaign's seeds are unique;
    64 characters at most). None without a browser seed: the server makes it."""
    return f"{client_seed[:56]}-{suffix}" if client_seed else None


class Seeds:
    """The seeds of the rolls one request makes, in the order it makes them:
    the browser's for the first, ``derived_seed(first, n)`` for the n-th after
    it. None each without a browser seed (no JavaScript)."""

    def __init__(self, client_seed: str | None) -> None:
        self.first = client_seed or None
        self.used = 0

    def next(self) -> str | None:
        index, self.used = self.used, self.used + 1
        return self.first if index == 0 else derived_seed(self.first, str(index))


def earlier_entry(*, campaign: Campaign, user, client_seed: str | None) -> RollEntry | None:
    """The entry a browser seed already made in ``campaign``, if any.

    The client seed is the idempotency key (rollog/v1 §3.3): a game action
    that pays for a re-roll or an extension (a drama point, a push's
    condition, a hero point) looks its seed up here first, under the lock it
    takes on the roll, and on a retried form shows what the first request
    did instead of paying and drawing again. A seed someone else used is
    refused, as the log would refuse it, and so is a malformed one.
    """
    if not client_seed:
        return None
    # A seed the log would refuse (a NUL byte, 100 000 characters) is refused
    # here, in Spanish, before it reaches a query: PostgreSQL cannot hold a NUL.
    _client_seed(client_seed)
    entry = RollEntry.objects.filter(campaign=campaign, client_seed=client_seed).first()
    if entry is not None and entry.user_id != getattr(user, "pk", None):
        raise seed_used()
    return entry


def _purpose(text: str) -> str:
    purpose = rollog.normalise_purpose(text or "")
    if len(purpose) > PURPOSE_MAX_LENGTH:
        raise ValidationError(
            _("El motivo de la tirada no puede pasar de %(limit)d caracteres.") % {"limit": PURPOSE_MAX_LENGTH},
            code="purpose_too_long",
        )
    return purpose


def _spec(spec: str) -> str:
    try:
        rollog.expand_spec(spec)
    except rollog.RollogError:
        raise ValidationError(
            _("Reserva de dados no válida: %(spec)s (se espera algo como 3d10 o 2d6+1d8, hasta 100 dados).")
            % {"spec": spec},
            code="bad_spec",
        ) from None
    if len(spec) > SPEC_MAX_LENGTH:
        raise ValidationError(_("La reserva de dados es demasiado larga."), code="bad_spec")
    return spec


def _ids(user, character, scene) -> dict[str, str]:
    """Pseudonymous ids for the signed entry: never names or e-mails (§3.5)."""
    return {
        "user": f"u{user.pk}" if user else "",
        "character": f"ch{character.pk}" if character else "",
        "scene": f"sc{scene.pk}" if scene else "",
    }


def _sign(inner: dict[str, Any], audience: str) -> tuple[rollog.SignedEntry, bytes | None]:
    """Sign the entry as it is, or sealed for ``audience`` (§3.7): then the
    chain carries the slot and a commitment, and the opening is returned."""
    if not audience:
        return rollog.sign_entry(inner, _keys().signing_key), None
    outer, opening = rollog.seal(inner, audience=audience)
    return rollog.sign_entry(outer, _keys().signing_key), opening


def _sealed_seed(seed_text: str, audience: str) -> None:
    # The seed x_i is revealed by a later slot, so a sealed roll's dice stay
    # secret only through its client seed: at least 128 bits (§3.7).
    if audience and len(seed_text) < rollog.SEALED_MIN_CLIENT_SEED:
        raise ValidationError(
            _("Una tirada privada necesita una semilla del navegador de al menos %(n)d caracteres.")
            % {"n": rollog.SEALED_MIN_CLIENT_SEED},
            code="weak_client_seed",
        )


# --- Appending rolls -----------------------------------------------------------------


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
    secret: bool = False,
    client_seed: str | None = None,
    seen: str | None = None,
) -> RollEntry:
    """Draw ``spec`` through the log and store the signed entry.

    ``read`` turns the dice into the entry's signed game fields (the reading
    by ``rules/``); it is stored under ``game``. Without ``client_seed`` the
    server makes one and the entry says so (``client_seed_source: server``).
    A roll not every reader of the log may read (a whisper's, a split-party
    scene's, a ``secret`` roll of the GM) is sealed (``rolls.permissions``).
    Side effects: locks the campaign's head row, appends one entry (two when
    this roll uses the epoch's last slot: the next epoch_open follows it).
    """
    seed_text, source = _client_seed(client_seed)
    spec = _spec(spec)
    purpose = _purpose(purpose)
    audience = audience_for(post=post, scene=scene, secret=secret)
    _sealed_seed(seed_text, audience)
    log, slot = _take_slot(campaign, seed_text if source == "browser" else None, seen)
    retry = _retry(slot, user, same=lambda e: e.kind == RollEntry.Kind.ROLL and e.spec == spec)
    if retry is not None:
        return retry
    epoch = slot.epoch
    seen_hash = _check_seen(log, slot, seen)
    index = log.next_index
    seed = _seed_for(epoch, index)
    seq = log.seq + 1
    message = rollog.derivation_message(log.log_id, seq, seed_text, spec)
    dice = rollog.dice_for_spec(seed, message, spec)
    inner = rollog.roll_entry(
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
        # The post a roll belongs to is signed too (§3.5 "post"): nobody can
        # move a roll to another post afterwards.
        extra={"game": read(list(dice)), **({"post": f"p{post.pk}"} if post else {})},
    )
    signed, opening = _sign(inner, audience)
    entry = _store(
        campaign,
        signed,
        head=log,
        opening=opening,
        audience=audience,
        user=user,
        character=character,
        scene=scene,
        post=post,
    )
    _after_append(log, epoch)
    return entry


@transaction.atomic
def reroll_append(
    *,
    parent: RollEntry,
    user,
    positions: Sequence[int],
    purpose: str,
    read: Reader,
    activation: str | None = None,
    aspect: str = "",
    target_user=None,
    paid_by=None,
    payment: str = "",
    client_seed: str | None = None,
    seen: str | None = None,
) -> RollEntry:
    """Re-roll ``positions`` (0-based, raw order) of ``parent``, the latest
    version of a roll: a new ``reroll`` entry pointing at it (§3.6).

    HITOS activation data (``activation`` positive/negative, the ``aspect``,
    the ``target_user`` of a negative activation, who paid and how) is signed
    in the entry but kept out of the HMAC message (§6.7).
    """
    seed_text, source = _client_seed(client_seed)
    purpose = _purpose(purpose)
    # A re-roll of a sealed roll is sealed for the same audience (§3.7).
    _sealed_seed(seed_text, parent.audience)
    if parent.kind not in (RollEntry.Kind.ROLL, RollEntry.Kind.REROLL):
        raise ValidationError(_("Solo se pueden repetir tiradas."), code="parent_not_roll")
    if rollog.explodes(parent.entry["spec"]):
        raise ValidationError(
            _("Los dados explosivos no se pueden repetir: rollog/v1.1 no lo define todavía."), code="explodes"
        )
    if activation is not None and activation not in ACTIVATIONS:
        raise ValidationError(_("Activación desconocida: %(activation)s.") % {"activation": activation})
    pool = len(parent.entry["dice"])
    chosen = sorted(set(positions))
    if not chosen or any(not isinstance(p, int) or isinstance(p, bool) or not 0 <= p < pool for p in chosen):
        raise ValidationError(
            _("Elige qué dados repetir: al menos uno, con posiciones entre 0 y %(last)d.") % {"last": pool - 1},
            code="bad_positions",
        )
    extra: dict[str, Any] = {}
    if activation is not None:
        extra.update(
            activation=activation,
            aspect=rollog.normalise_purpose(aspect),
            target_user=f"u{target_user.pk}" if target_user else "",
            paid_by=f"u{paid_by.pk}" if paid_by else "",
            payment=rollog.normalise_purpose(payment),
        )
    return _version_append(
        rollog.reroll_entry,
        parent=parent,
        user=user,
        purpose=purpose,
        read=read,
        extra=extra,
        seed_text=seed_text,
        source=source,
        seen=seen,
        kind=RollEntry.Kind.REROLL,
        changed=_("Esa versión de la tirada ya se repitió: actúa sobre la última."),
        positions=chosen,
    )


@transaction.atomic
def extend_append(
    *,
    parent: RollEntry,
    user,
    spec: str,
    purpose: str,
    read: Reader,
    extra: dict[str, Any] | None = None,
    client_seed: str | None = None,
    seen: str | None = None,
) -> RollEntry:
    """Add ``spec`` dice to ``parent``, the latest version of a roll: a new
    ``extend`` entry pointing at it (§3.6b), sealed like its parent.

    ``extra`` holds the signed game data that explains the extension (for
    example ``converted``: the positions of the 6s read as 5); ``read`` turns
    the whole new pool into the signed reading.
    """
    seed_text, source = _client_seed(client_seed)
    spec = _spec(spec)
    purpose = _purpose(purpose)
    _sealed_seed(seed_text, parent.audience)
    if parent.kind not in (RollEntry.Kind.ROLL, RollEntry.Kind.REROLL, RollEntry.Kind.EXTEND):
        raise ValidationError(_("Solo se pueden añadir dados a una tirada."), code="parent_not_roll")
    if rollog.explodes(spec):
        raise ValidationError(_("Los dados añadidos a una tirada no explotan."), code="explodes")
    if len(parent.entry["dice"]) + len(rollog.expand_spec(spec)) > verify_roll.MAX_DICE:
        raise ValidationError(
            _("Una tirada no puede pasar de %(n)d dados.") % {"n": verify_roll.MAX_DICE}, code="too_many_dice"
        )
    return _version_append(
        rollog.extend_entry,
        parent=parent,
        user=user,
        purpose=purpose,
        read=read,
        extra=extra,
        seed_text=seed_text,
        source=source,
        seen=seen,
        kind=RollEntry.Kind.EXTEND,
        changed=_("Esa versión de la tirada ya cambió: actúa sobre la última."),
        spec=spec,
    )


def _version_append(
    build: Callable[..., dict[str, Any]],
    *,
    parent: RollEntry,
    user,
    purpose: str,
    read: Reader,
    extra: dict[str, Any] | None,
    seed_text: str,
    source: str,
    seen: str | None,
    kind: str,
    changed: str,
    **fields: Any,
) -> RollEntry:
    """A new version of ``parent`` (a re-roll or an extension, built by
    ``build`` from ``fields``), once its own input is checked: the slot, the
    retry of the same client seed, one child per version, the reading, and
    the same seal as the parent (§3.6, §3.6b, §3.7)."""
    log, slot = _take_slot(parent.campaign, seed_text if source == "browser" else None, seen)
    retry = _retry(slot, user, same=lambda e: e.kind == kind and e.parent_id == parent.pk)
    if retry is not None:
        return retry
    if RollEntry.objects.filter(parent=parent).exists():
        raise ValidationError(changed, code="already_rerolled")
    epoch = slot.epoch
    index = log.next_index
    # The new values are drawn by rollog itself; read them back for the reading.
    entry_fields = build(
        parent=parent.signed,
        parent_content=parent.entry if parent.is_sealed else None,
        seq=log.seq + 1,
        prev=log.head_hash,
        time=_now_text(log.head_time),
        user=f"u{user.pk}",
        purpose=purpose,
        epoch=epoch.epoch,
        epoch_index=index,
        seed=_seed_for(epoch, index),
        client_seed=seed_text,
        client_seed_source=source,
        seen=_check_seen(log, slot, seen),
        extra=extra,
        **fields,
    )
    entry_fields["game"] = read(list(entry_fields["dice"]))
    signed, opening = _sign(entry_fields, parent.audience)
    entry = _store(
        parent.campaign,
        signed,
        head=log,
        opening=opening,
        audience=parent.audience,
        user=user,
        character=parent.character,
        scene=parent.scene,
        post=parent.post,
        parent=parent,
    )
    _after_append(log, epoch)
    return entry


# --- Readings: the signed game fields -------------------------------------------------


def notation_reader(expression: notation.Expression) -> Reader:
    def read(dice: list[int]) -> dict[str, Any]:
        result = notation.evaluate(expression, FixedDice(dice))
        return {
            "system": "free",
            "expression": expression.canonical(),
            "total": result.total,
            "detail": result.detail(),
        }

    return read


def _compact_pool(spec: str) -> str:
    """``1d6+1d6+1d8`` -> ``2d6+1d8``: the same dice in the same order, shorter
    (terms merge only when they explode alike)."""
    groups: list[list] = []
    for term in spec.split("+"):
        bang = "!" if term.endswith("!") else ""
        count, faces = (int(part) for part in term.rstrip("!").split("d"))
        if groups and groups[-1][1:] == [faces, bang]:
            groups[-1][0] += count
        else:
            groups.append([count, faces, bang])
    return "+".join(f"{count}d{faces}{bang}" for count, faces, bang in groups)


def free_roll(
    *,
    campaign: Campaign,
    user,
    text: str,
    purpose: str,
    scene=None,
    post=None,
    secret: bool = False,
    client_seed: str | None = None,
    seen: str | None = None,
) -> RollEntry:
    """A "tirada libre" in dice notation, through the same log.

    Exploding dice (``3d10!``) draw their extra dice from the same stream, in
    the order of rollog v1.1 §3.4b, which ``rules.notation`` reads alike.
    """
    try:
        expression = notation.parse(text)
    except notation.NotationError as exc:
        raise ValidationError(
            _("No entiendo la tirada (%(error)s).") % {"error": str(exc)}, code="bad_notation"
        ) from None
    if expression.dice_count == 0:
        raise ValidationError(_("La tirada necesita al menos un dado."), code="no_dice")
    return roll_append(
        campaign=campaign,
        user=user,
        spec=_compact_pool(expression.pool_spec()),
        purpose=purpose or expression.canonical(),
        read=notation_reader(expression),
        scene=scene,
        post=post,
        secret=secret,
        client_seed=client_seed,
        seen=seen,
    )
