"""Server-side core of the rollog/v1 signed, hash-chained roll log.

Pure Python, no Django: the models and services call these functions and
store ``SignedEntry.entry_bytes`` as the source of truth. The byte-level
primitives (canonical JSON, hashes, permalinks, the spec grammar, the dice
derivation, commitments) live in :mod:`rolls.verify`, the single-file offline
verifier, and are imported from there so producer and verifier cannot drift.

The normative description is ``roll-verification.md`` (rollog/v1); section
numbers in comments refer to it.
"""

from __future__ import annotations

import base64
import json
import re
import secrets
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import (
    Ed25519PrivateKey,
    Ed25519PublicKey,
)

from rolls import verify
from rolls.verify import (
    FORMAT,
    SEALED,
    SEALED_MIN_CLIENT_SEED,
    RollogError,
    check,
    commitment,
    draw,
    entry_hash,
    hash_chain,
    permalink,
    roll_message,
)

__all__ = [
    "EPOCH_LENGTH",
    "FORMAT",
    "ZERO_HASH",
    "DiceStream",
    "RollogError",
    "SignedEntry",
    "build_epoch_open",
    "build_reroll",
    "build_roll",
    "extend_entry",
    "seal",
    "canonical_bytes",
    "check_client_seed",
    "check_positions",
    "derivation_message",
    "dice_for_spec",
    "dice_stream",
    "entry_hash",
    "epoch_anchor",
    "epoch_open_entry",
    "expand_spec",
    "export_page",
    "format_time",
    "load_signing_key",
    "new_epoch_root",
    "normalise_purpose",
    "permalink_id",
    "public_key_hex",
    "ref_with_opening",
    "reroll_entry",
    "roll_bundle",
    "roll_entry",
    "seed_for_slot",
    "server_client_seed",
    "sign_entry",
    "verify_signed_entry",
]

EPOCH_LENGTH = 10_000  # seed slots per epoch in production (§6.1)
VERSION = 1
ZERO_HASH = "0" * 64
EXTEND_POSITIONS = "+"  # the positions field of M for an extension (§3.6b)
AUDIENCES = ("gm", "recipients", "scene")
CLIENT_SEED_SOURCES = ("browser", "api", "server")
CAMPAIGN_RE = re.compile(r"[a-z0-9-]{1,100}")
HEX32_RE = re.compile(r"[0-9a-f]{64}")
TIME_RE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z")
DiceStream = verify.Stream
commitment_of = commitment
permalink_id = permalink
draw_pool = draw
ROOT_BYTES = 32

# Keys the format itself defines; extra signed game fields may not reuse them.
ROLL_FIELDS = frozenset(
    {
        "v", "kind", "campaign", "seq", "prev", "time", "user", "character", "scene",
        "purpose", "visibility", "spec", "epoch", "epoch_index", "seed", "client_seed",
        "client_seed_source", "seen", "parent", "rerolled", "drawn", "dice",
        "anchor", "length", "key", "nonce", "audience", "commitment",
    }
)  # fmt: skip


# --- The verifier's primitives, in the producer's terms ---------------------------


def canonical_bytes(entry: Mapping[str, Any]) -> bytes:
    """The exact bytes that are hashed and signed (§3.5): ``rolls.verify.canonical``."""
    try:
        return verify.canonical(entry)
    except (TypeError, ValueError) as exc:  # UnicodeEncodeError is a ValueError
        raise RollogError("not_canonical", f"La entrada no se puede serializar: {exc}.") from exc


def signed_message(hash_: bytes) -> bytes:
    """What Ed25519 signs: the domain-separated entry hash."""
    return verify.SIG + hash_


def signature_valid(public_key: Ed25519PublicKey, hash_: bytes, signature: bytes) -> bool:
    try:
        public_key.verify(signature, signed_message(hash_))
    except InvalidSignature:
        return False
    return True


def public_key_hex(public_key: Ed25519PublicKey) -> str:
    return public_key.public_bytes_raw().hex()


def is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def parse_time(value: object) -> datetime:
    """``YYYY-MM-DDTHH:MM:SSZ`` -> naive UTC datetime; RollogError("bad_field") otherwise."""
    check(isinstance(value, str) and TIME_RE.fullmatch(value), "bad_field", f"Hora mal formada: {value!r}.")
    try:
        return datetime.strptime(str(value), "%Y-%m-%dT%H:%M:%SZ")
    except ValueError as exc:
        raise RollogError("bad_field", f"Hora imposible: {value!r}.") from exc


def check_client_seed(client_seed: object) -> str:
    """The verifier's own rule for ``client_seed`` (code ``bad_client_seed``)."""
    verify.check_fields({"client_seed": client_seed}, {"client_seed": verify.ROLL["client_seed"]})
    return str(client_seed)


def check_positions(positions: list[int], pool_size: int) -> None:
    ok = positions and positions == sorted(set(positions)) and all(0 <= i < pool_size for i in positions)
    check(ok, "bad_positions", f"Posiciones no válidas: {positions} (ordenadas, únicas, de 0 a {pool_size - 1}).")


def expand_spec(spec: object) -> list[int]:
    """``"2d6+1d8"`` -> ``[6, 6, 8]``: the faces of each base die (``rolls.verify.terms``)."""
    return [faces for faces, _ in verify.terms(spec)]


def explodes(spec: str) -> bool:
    return any(boom for _, boom in verify.terms(spec))


def derivation_message(
    campaign: str,
    seq: int,
    client_seed: str,
    spec: str,
    parent: str | None = None,
    positions: Sequence[int] | str | None = None,
) -> str:
    """The HMAC message M (``rolls.verify.roll_message``); ``positions`` is the
    re-rolled positions, or EXTEND_POSITIONS for an extension."""
    kind = "extend" if positions == EXTEND_POSITIONS else "reroll"
    return roll_message(
        {"kind": kind, "campaign": campaign, "seq": seq, "client_seed": client_seed, "spec": spec, "parent": parent}
        | {"rerolled": positions}
    )


# --- Signed entries ------------------------------------------------------------


@dataclass(frozen=True)
class SignedEntry:
    """One log entry exactly as signed; ``entry_bytes`` is the source of truth."""

    entry_bytes: bytes
    entry_hash: bytes
    signature: bytes

    @classmethod
    def from_stored(cls, entry_bytes: bytes, signature: bytes) -> SignedEntry:
        """Rebuild from the stored bytes and signature (the hash is recomputed)."""
        return cls(bytes(entry_bytes), entry_hash(bytes(entry_bytes)), bytes(signature))

    @property
    def entry(self) -> dict[str, Any]:
        """A fresh decoded copy; editing it never changes what was signed."""
        return json.loads(self.entry_bytes.decode("utf-8"))

    @property
    def hash_hex(self) -> str:
        return self.entry_hash.hex()

    @property
    def signature_hex(self) -> str:
        return self.signature.hex()

    @property
    def permalink(self) -> str:
        return permalink_id(self.entry_hash)

    def ref(self) -> dict[str, str]:
        """The ``{entry_b64, sig}`` form used in bundles and exports."""
        return {
            "entry_b64": base64.b64encode(self.entry_bytes).decode("ascii"),
            "sig": self.signature_hex,
        }


def load_signing_key(secret: bytes | str) -> Ed25519PrivateKey:
    """An Ed25519 key from its 32-byte seed, raw or as 64 hex digits."""
    if isinstance(secret, str):
        text = secret.strip().lower()
        check(HEX32_RE.fullmatch(text), "bad_key", "La clave de firma debe ser 64 cifras hex.")
        secret = bytes.fromhex(text)
    check(len(secret) == 32, "bad_key", "La clave de firma debe tener 32 bytes.")
    return Ed25519PrivateKey.from_private_bytes(secret)


def sign_entry(entry: Mapping[str, Any], signing_key: Ed25519PrivateKey) -> SignedEntry:
    """Canonicalise, hash (§3.5) and sign one entry."""
    raw = canonical_bytes(entry)
    hash_ = entry_hash(raw)
    return SignedEntry(raw, hash_, signing_key.sign(signed_message(hash_)))


def verify_signed_entry(signed: SignedEntry, public_key: Ed25519PublicKey) -> bool:
    """Bytes, hash and signature agree under ``public_key``."""
    return signed.entry_hash == entry_hash(signed.entry_bytes) and signature_valid(
        public_key, signed.entry_hash, signed.signature
    )


# --- Seed chain (§3.2) ------------------------------------------------------------


def new_epoch_root() -> bytes:
    """The secret r = x_L of a new epoch; store it encrypted, never in clear."""
    return secrets.token_bytes(ROOT_BYTES)


def seed_for_slot(root: bytes, length: int, index: int) -> bytes:
    """x_index, from x_L = root and x_{i-1} = SHA-256(x_i); index 0 is the anchor."""
    check(len(root) == ROOT_BYTES, "bad_root", "La raíz de la época debe tener 32 bytes.")
    check(0 <= index <= length, "slot_out_of_range", f"La ranura {index} no existe (L={length}).")
    return hash_chain(root, length - index)


def epoch_anchor(root: bytes, length: int) -> bytes:
    return seed_for_slot(root, length, 0)


# --- Player input ---------------------------------------------------------------------


def server_client_seed() -> str:
    """For requests without browser entropy; such entries say source "server"."""
    return secrets.token_hex(16)


def normalise_purpose(text: str) -> str:
    """Control characters removed, then NFC (§3.5).

    Removing first and normalising last guarantees an NFC result: deleting a
    control character can bring a letter and a combining accent together.
    """
    visible = "".join(c for c in text if unicodedata.category(c) != "Cc")
    return unicodedata.normalize("NFC", visible)


def format_time(moment: datetime) -> str:
    """Server UTC time, to the second, as ``YYYY-MM-DDTHH:MM:SSZ``."""
    check(moment.tzinfo is not None, "bad_field", "La hora debe llevar zona horaria.")
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _time_text(time: datetime | str) -> str:
    text = format_time(time) if isinstance(time, datetime) else time
    parse_time(text)
    return text


# --- Dice (§3.4) ------------------------------------------------------------------------


def dice_stream(seed: bytes, message: str) -> DiceStream:
    """A ``rules.dice.DiceSource`` drawing sequentially from the HMAC stream."""
    check(len(seed) == ROOT_BYTES, "bad_field", "La semilla debe tener 32 bytes.")
    return DiceStream(seed, message)


def dice_for_spec(seed: bytes, message: str, spec: str) -> list[int]:
    """The whole pool of ``spec``, in generation order (explosions last, §3.4b)."""
    return draw_pool(dice_stream(seed, message), spec)


# --- Entry builders (§3.5, field sets exactly as in vectors T1–T6) -------------------


def _check_header(campaign: str, seq: int, prev: str) -> None:
    check(
        isinstance(campaign, str) and CAMPAIGN_RE.fullmatch(campaign),
        "bad_field",
        "El identificador público de la campaña solo admite [a-z0-9-].",
    )
    check(is_int(seq) and seq >= 0, "bad_field", "seq debe ser un entero no negativo.")
    check(
        isinstance(prev, str) and HEX32_RE.fullmatch(prev),
        "bad_field",
        "prev debe ser un hash hex de 64 cifras.",
    )
    check((seq == 0) == (prev == ZERO_HASH), "bad_field", "Solo la entrada 0 tiene prev a ceros.")


def _check_extra(extra: Mapping[str, Any] | None) -> dict[str, Any]:
    """Signed game fields (system, modifiers, reading…) added beside the core."""
    fields = dict(extra or {})
    clash = sorted(ROLL_FIELDS.intersection(fields))
    check(not clash, "bad_field", f"Campos reservados en los datos de juego: {clash}.")
    check(all(isinstance(k, str) for k in fields), "bad_field", "Las claves deben ser texto.")
    # Floats have no single canonical spelling across languages; use integers.
    check(
        not _has_float(fields),
        "bad_field",
        "Los datos de juego no pueden llevar números con decimales.",
    )
    return fields


def _has_float(value: Any) -> bool:
    if isinstance(value, float):
        return True
    if isinstance(value, Mapping):
        return any(_has_float(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return any(_has_float(v) for v in value)
    return False


def epoch_open_entry(
    *,
    campaign: str,
    seq: int,
    prev: str,
    time: datetime | str,
    epoch: int,
    anchor: bytes,
    length: int,
    key: str,
) -> dict[str, Any]:
    """The entry that commits to a new epoch's anchor and the signing key."""
    _check_header(campaign, seq, prev)
    check(is_int(epoch) and epoch >= 1, "bad_field", "La época empieza en 1.")
    check(is_int(length) and length >= 1, "bad_field", "La época necesita al menos una ranura.")
    check(len(anchor) == ROOT_BYTES, "bad_field", "El ancla debe tener 32 bytes.")
    check(HEX32_RE.fullmatch(key), "bad_key", "La clave debe ser 64 cifras hex en minúscula.")
    return {
        "v": VERSION,
        "kind": "epoch_open",
        "campaign": campaign,
        "seq": seq,
        "prev": prev,
        "time": _time_text(time),
        "epoch": epoch,
        "anchor": anchor.hex(),
        "length": length,
        "key": key,
    }


def _roll_core(
    *,
    kind: str,
    campaign: str,
    seq: int,
    prev: str,
    time: datetime | str,
    user: str,
    character: str,
    scene: str,
    purpose: str,
    spec: str,
    epoch: int,
    epoch_index: int,
    seed: bytes,
    client_seed: str,
    client_seed_source: str,
    seen: str,
    visibility: str,
    extra: Mapping[str, Any] | None,
) -> dict[str, Any]:
    """Fields shared by roll and reroll, validated; dice are added by the caller."""
    _check_header(campaign, seq, prev)
    for name, value in (("user", user), ("character", character), ("scene", scene)):
        check(isinstance(value, str), "bad_field", f"{name} debe ser texto.")
    check(isinstance(visibility, str), "bad_field", "visibility debe ser texto.")
    check(is_int(epoch) and epoch >= 1, "bad_field", "La época empieza en 1.")
    check(is_int(epoch_index) and epoch_index >= 1, "bad_field", "La ranura 0 es el ancla.")
    check(len(seed) == ROOT_BYTES, "bad_field", "La semilla debe tener 32 bytes.")
    check(client_seed_source in CLIENT_SEED_SOURCES, "bad_field", "Origen de semilla no válido.")
    check(
        isinstance(seen, str) and HEX32_RE.fullmatch(seen),
        "bad_field",
        "seen debe ser un hash hex de 64 cifras.",
    )
    expand_spec(spec)
    return {
        **_check_extra(extra),
        "v": VERSION,
        "kind": kind,
        "campaign": campaign,
        "seq": seq,
        "prev": prev,
        "time": _time_text(time),
        "user": user,
        "character": character,
        "scene": scene,
        "purpose": normalise_purpose(purpose),
        "visibility": visibility,
        "spec": spec,
        "epoch": epoch,
        "epoch_index": epoch_index,
        "seed": seed.hex(),
        "client_seed": check_client_seed(client_seed),
        "client_seed_source": client_seed_source,
        "seen": seen,
    }


def roll_entry(
    *,
    campaign: str,
    seq: int,
    prev: str,
    time: datetime | str,
    user: str,
    character: str,
    scene: str,
    purpose: str,
    spec: str,
    epoch: int,
    epoch_index: int,
    seed: bytes,
    client_seed: str,
    seen: str,
    client_seed_source: str = "browser",
    visibility: str = "public",
    extra: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """A plain roll: the dice are derived here from x_i and M, never passed in."""
    entry = _roll_core(
        kind="roll",
        campaign=campaign,
        seq=seq,
        prev=prev,
        time=time,
        user=user,
        character=character,
        scene=scene,
        purpose=purpose,
        spec=spec,
        epoch=epoch,
        epoch_index=epoch_index,
        seed=seed,
        client_seed=client_seed,
        client_seed_source=client_seed_source,
        seen=seen,
        visibility=visibility,
        extra=extra,
    )
    message = derivation_message(campaign, seq, client_seed, spec)
    entry.update(parent=None, rerolled=None, dice=dice_for_spec(seed, message, spec))
    return entry


def reroll_entry(
    *,
    parent: SignedEntry,
    positions: Iterable[int],
    parent_content: Mapping[str, Any] | None = None,
    seq: int,
    prev: str,
    time: datetime | str,
    user: str,
    purpose: str,
    epoch: int,
    epoch_index: int,
    seed: bytes,
    client_seed: str,
    seen: str,
    client_seed_source: str = "browser",
    visibility: str = "public",
    extra: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """A re-roll of ``parent`` (the version being modified, §3.6).

    Campaign, character, scene and pool spec come from the parent; ``user`` is
    whoever activates (the owner, or another player or the GM for a negative
    activation). ``positions`` are 0-based in the parent's raw dice order.
    ``parent_content`` is a sealed parent's opening (its ``parent`` link is
    still the outer entry's hash, §3.7).
    """
    base = dict(parent_content) if parent_content is not None else parent.entry
    check(base.get("kind") in ("roll", "reroll"), "parent_not_roll", "Solo se repiten tiradas.")
    check(
        not explodes(base["spec"]),
        "unspecified_reroll",
        "Repetir dados de una tirada con dados explosivos no está definido en rollog/v1.1.",
    )
    chosen = sorted(set(positions))
    faces = expand_spec(base["spec"])
    check_positions(chosen, len(faces))
    entry = _roll_core(
        kind="reroll",
        campaign=base["campaign"],
        seq=seq,
        prev=prev,
        time=time,
        user=user,
        character=base["character"],
        scene=base["scene"],
        purpose=purpose,
        spec=base["spec"],
        epoch=epoch,
        epoch_index=epoch_index,
        seed=seed,
        client_seed=client_seed,
        client_seed_source=client_seed_source,
        seen=seen,
        visibility=visibility,
        extra=extra,
    )
    check(seq > base["seq"], "parent_mismatch", "La repetición va después de su tirada madre.")
    message = derivation_message(base["campaign"], seq, client_seed, base["spec"], parent.hash_hex, chosen)
    stream = dice_stream(seed, message)
    drawn = [stream.roll(faces[p]) for p in chosen]
    dice = list(base["dice"])
    for p, value in zip(chosen, drawn, strict=True):
        dice[p] = value
    entry.update(parent=parent.hash_hex, rerolled=chosen, drawn=drawn, dice=dice)
    return entry


def extend_entry(
    *,
    parent: SignedEntry,
    spec: str,
    seq: int,
    prev: str,
    time: datetime | str,
    user: str,
    purpose: str,
    epoch: int,
    epoch_index: int,
    seed: bytes,
    client_seed: str,
    seen: str,
    parent_content: Mapping[str, Any] | None = None,
    client_seed_source: str = "browser",
    visibility: str = "public",
    extra: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Dice added to ``parent`` (the version being extended, §3.6b): ``spec``
    is the added dice only; ``dice`` is the parent's followed by the drawn.

    Game data that explains the extension (``converted`` …) goes in ``extra``.
    """
    base = dict(parent_content) if parent_content is not None else parent.entry
    check(base.get("kind") in ("roll", "reroll", "extend"), "parent_not_roll", "Solo se extienden tiradas.")
    check(not explodes(spec), "bad_spec", "Los dados añadidos por una extensión no explotan.")
    entry = _roll_core(
        kind="extend",
        campaign=base["campaign"],
        seq=seq,
        prev=prev,
        time=time,
        user=user,
        character=base["character"],
        scene=base["scene"],
        purpose=purpose,
        spec=spec,
        epoch=epoch,
        epoch_index=epoch_index,
        seed=seed,
        client_seed=client_seed,
        client_seed_source=client_seed_source,
        seen=seen,
        visibility=visibility,
        extra=extra,
    )
    check(seq > base["seq"], "parent_mismatch", "La extensión va después de su tirada madre.")
    message = derivation_message(base["campaign"], seq, client_seed, spec, parent.hash_hex, EXTEND_POSITIONS)
    drawn = dice_for_spec(seed, message, spec)
    entry.update(parent=parent.hash_hex, rerolled=None, drawn=drawn, dice=[*base["dice"], *drawn])
    return entry


# --- Sealed entries (§3.7) ----------------------------------------------------------------


def seal(inner: Mapping[str, Any], *, audience: str, nonce: bytes | None = None) -> tuple[dict[str, Any], bytes]:
    """The outer entry that carries ``inner`` sealed, and the opening's bytes.

    ``inner`` is the complete roll, reroll or extend entry; the opening is it
    plus a random nonce, and the outer entry keeps only the slot and the
    commitment to the opening.
    """
    check(inner.get("kind") in ("roll", "reroll", "extend"), "bad_field", "Solo se sellan tiradas.")
    check(audience in AUDIENCES, "bad_field", f"Público no válido: {audience!r}.")
    check(
        len(inner["client_seed"]) >= SEALED_MIN_CLIENT_SEED,
        "weak_client_seed",
        f"Una tirada sellada necesita una semilla del cliente de {SEALED_MIN_CLIENT_SEED} caracteres o más.",
    )
    nonce = secrets.token_bytes(32) if nonce is None else nonce
    check(len(nonce) == 32, "bad_field", "El nonce debe tener 32 bytes.")
    body_bytes = canonical_bytes({**inner, "nonce": nonce.hex()})
    outer = {key: inner[key] for key in ("v", "campaign", "seq", "prev", "time", "epoch", "epoch_index", "seed")}
    outer.update(kind=SEALED, audience=audience, commitment=commitment_of(body_bytes))
    return outer, body_bytes


def build_epoch_open(signing_key: Ed25519PrivateKey, **fields: Any) -> SignedEntry:
    """``epoch_open_entry`` signed; ``key`` defaults to the signing key's public half."""
    fields.setdefault("key", public_key_hex(signing_key.public_key()))
    return sign_entry(epoch_open_entry(**fields), signing_key)


def build_roll(signing_key: Ed25519PrivateKey, **fields: Any) -> SignedEntry:
    """``roll_entry`` signed."""
    return sign_entry(roll_entry(**fields), signing_key)


def build_reroll(signing_key: Ed25519PrivateKey, **fields: Any) -> SignedEntry:
    """``reroll_entry`` signed."""
    return sign_entry(reroll_entry(**fields), signing_key)


# --- JSON documents (§3.10, §3.8) ------------------------------------------------------


def ref_with_opening(signed: SignedEntry, opening: bytes | None) -> dict[str, Any]:
    """``{entry_b64, sig}``, and for a sealed entry ``opening_b64`` (null when
    the reader may not see the content)."""
    ref: dict[str, Any] = signed.ref()
    if signed.entry["kind"] == SEALED:
        ref["opening_b64"] = base64.b64encode(opening).decode("ascii") if opening is not None else None
    return ref


def roll_bundle(
    entry: SignedEntry,
    *,
    epoch_open: SignedEntry,
    public_key: str,
    parent: SignedEntry | None = None,
    head: SignedEntry | None = None,
    children: Sequence[str] = (),
    opening: bytes | None = None,
    parent_opening: bytes | None = None,
) -> dict[str, Any]:
    """The ``/r/<permalink>.json`` document that ``verify_roll`` checks.

    For a sealed roll, ``opening`` is given only to readers allowed to see
    it; without it ``parent`` and ``children`` are left out too (§3.7).
    """
    sealed = entry.entry["kind"] == SEALED
    disclosed = not sealed or opening is not None
    document = {
        "format": FORMAT,
        "permalink": entry.permalink,
        "entry_hash": entry.hash_hex,
        **entry.ref(),
        "entry": entry.entry,
        "epoch_open": epoch_open.ref(),
        "parent": ref_with_opening(parent, parent_opening) if parent and disclosed else None,
        "children": list(children) if disclosed else [],
        "head": head.ref() if head else None,
        "public_key": public_key,
    }
    if sealed:
        document["opening_b64"] = base64.b64encode(opening).decode("ascii") if opening is not None else None
    return document


def export_page(
    campaign: str,
    refs: Iterable[dict[str, Any] | SignedEntry],
    *,
    public_key: str,
    start: int = 0,
    next_url: str | None = None,
) -> dict[str, Any]:
    """One page of the campaign log export that ``verify_log`` audits.

    ``refs`` are ``ref_with_opening`` documents, in seq order. ``start`` is
    the seq of the first entry on the page; ``next`` points to the following
    page (null on the last). An audit needs every page from seq 0.
    """
    return {
        "format": FORMAT,
        "campaign": campaign,
        "public_key": public_key,
        "start": start,
        "entries": [r.ref() if isinstance(r, SignedEntry) else r for r in refs],
        "next": next_url,
    }
