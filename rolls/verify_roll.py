"""Offline verifier for one rollog/v1 (v1.1) roll bundle.

Usage::

    python -m rolls.verify_roll BUNDLE.json PUBKEY_HEX

BUNDLE.json is what ``/r/<permalink>.json`` returns and PUBKEY_HEX is the
site's Ed25519 public key, obtained through a channel independent of the
bundle (never trust the ``public_key`` printed inside the bundle itself).

This file is deliberately self-contained: it needs only the Python standard
library and the ``cryptography`` package, so anyone can copy it out of the
repository and check a roll without trusting our server or database. The
server-side code (``rolls.rollog``) imports the primitives below instead of
writing them twice, so producer and verifier cannot drift apart.

Exit status: 0 if the roll is valid, 1 if it is not (the reason is printed),
2 for usage errors (missing file, malformed public key).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import re
import sys
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

FORMAT = "rollog/v1"
VERSION = 1
ENTRY_DOMAIN = b"rollog/v1/entry\n"
SIG_DOMAIN = b"rollog/v1/sig\n"
ZERO_HASH = "0" * 64

MIN_FACES = 2
MAX_FACES = 1000
MAX_DICE = 100
# Kinds whose entry carries dice in clear; a "sealed" entry (v1.1, §3.7)
# carries one of them inside its committed opening.
ROLL_KINDS = ("roll", "reroll", "extend")
SEALED = "sealed"
SEALED_DOMAIN = b"rollog/v1/sealed\n"
# §3.7: the outer entry of a sealed roll has exactly these keys.
SEALED_KEYS = frozenset(
    {"v", "kind", "campaign", "seq", "prev", "time", "epoch", "epoch_index", "seed", "audience", "commitment"}
)
# The fields an opening must share with its outer entry.
SHARED_KEYS = ("v", "campaign", "seq", "prev", "time", "epoch", "epoch_index", "seed")
AUDIENCES = ("gm", "recipients", "scene")
# A sealed roll's dice stay secret only through its client seed (§3.7).
SEALED_MIN_CLIENT_SEED = 32
CLIENT_SEED_SOURCES = ("browser", "api", "server")

# fullmatch with explicit ASCII classes: ``\d`` would accept other scripts'
# digits and ``$`` would accept a trailing newline.
SPEC_RE = re.compile(r"[0-9]{1,3}d[0-9]{1,4}!?(?:\+[0-9]{1,3}d[0-9]{1,4}!?)*")
CLIENT_SEED_RE = re.compile(r"[0-9A-Za-z_-]{1,64}")
CAMPAIGN_RE = re.compile(r"[a-z0-9-]{1,100}")
HEX32_RE = re.compile(r"[0-9a-f]{64}")
HEX64_RE = re.compile(r"[0-9a-f]{128}")
TIME_RE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z")


class RollogError(ValueError):
    """A rollog/v1 rule was broken.

    ``code`` is a stable English keyword for programs and tests; ``message``
    is the Spanish explanation shown to people.
    """

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{message} [{code}]")
        self.code = code
        self.message = message


def check(ok: object, code: str, message: str) -> None:
    # Not `assert`: asserts vanish under `python -O`.
    if not ok:
        raise RollogError(code, message)


# --- Bytes, hashes, signatures, permalinks -----------------------------------


def sha256(data: bytes) -> bytes:
    return hashlib.sha256(data).digest()


def canonical_bytes(entry: Mapping[str, Any]) -> bytes:
    """The exact bytes that are hashed and signed (§3.5)."""
    try:
        text = json.dumps(entry, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
        return text.encode("utf-8")
    except (TypeError, ValueError) as exc:  # UnicodeEncodeError is a ValueError
        raise RollogError("not_canonical", f"La entrada no se puede serializar: {exc}.") from exc


def entry_hash(entry_bytes: bytes) -> bytes:
    return sha256(ENTRY_DOMAIN + entry_bytes)


def signed_message(hash_: bytes) -> bytes:
    """What Ed25519 signs: the domain-separated entry hash."""
    return SIG_DOMAIN + hash_


def permalink_id(hash_: bytes) -> str:
    """24 lowercase base32 characters: the first 120 bits of the entry hash."""
    return base64.b32encode(hash_[:15]).decode("ascii").lower()


def parse_public_key(key_hex: str) -> Ed25519PublicKey:
    text = key_hex.strip().lower()
    check(HEX32_RE.fullmatch(text), "bad_key", "La clave pública debe tener 64 cifras hexadecimales.")
    try:
        return Ed25519PublicKey.from_public_bytes(bytes.fromhex(text))
    except ValueError as exc:
        raise RollogError("bad_key", "La clave pública no es una clave Ed25519 válida.") from exc


def public_key_hex(public_key: Ed25519PublicKey) -> str:
    return public_key.public_bytes_raw().hex()


def signature_valid(public_key: Ed25519PublicKey, hash_: bytes, signature: bytes) -> bool:
    try:
        public_key.verify(signature, signed_message(hash_))
    except InvalidSignature:
        return False
    return True


def decode_entry(entry_bytes: bytes) -> dict[str, Any]:
    """Parse signed bytes, insisting that they are in canonical form.

    Re-serialising and comparing rejects duplicate keys, extra whitespace,
    escaped non-ASCII and other encodings that different JSON parsers could
    read differently from what was signed.
    """
    try:
        entry = json.loads(entry_bytes.decode("utf-8"))
    except (ValueError, RecursionError) as exc:  # UnicodeDecodeError is a ValueError
        raise RollogError("not_canonical", "Los bytes de la entrada no son JSON UTF-8.") from exc
    check(isinstance(entry, dict), "not_canonical", "La entrada no es un objeto JSON.")
    check(
        canonical_bytes(entry) == entry_bytes,
        "not_canonical",
        "Los bytes de la entrada no están en forma canónica.",
    )
    return entry


@dataclass(frozen=True)
class LoadedEntry:
    """A signed entry whose signature has been checked under the pinned key."""

    entry_bytes: bytes
    hash: bytes
    signature: bytes
    entry: dict[str, Any]

    @property
    def hash_hex(self) -> str:
        return self.hash.hex()


def decode_ref(ref: object) -> tuple[bytes, bytes]:
    """``{"entry_b64", "sig"}`` -> (entry bytes, signature bytes)."""
    if not isinstance(ref, Mapping):
        raise RollogError("bad_bundle", "Falta una entrada firmada ({entry_b64, sig}).")
    b64, sig = ref.get("entry_b64"), ref.get("sig")
    check(isinstance(b64, str) and isinstance(sig, str), "bad_bundle", "Entrada firmada incompleta.")
    try:
        raw = base64.b64decode(b64, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise RollogError("bad_bundle", "entry_b64 no es base64 válido.") from exc
    check(HEX64_RE.fullmatch(sig), "bad_signature", "La firma debe tener 128 cifras hexadecimales.")
    return raw, bytes.fromhex(sig)


def load_signed(ref: object, public_key: Ed25519PublicKey) -> LoadedEntry:
    """Check one ``{entry_b64, sig}`` against the pinned key and decode it."""
    raw, sig = decode_ref(ref)
    hash_ = entry_hash(raw)
    check(
        signature_valid(public_key, hash_, sig),
        "bad_signature",
        "La firma no es válida con la clave pública fijada.",
    )
    return LoadedEntry(raw, hash_, sig, decode_entry(raw))


# --- Field checks --------------------------------------------------------------


def is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def is_int_list(value: object) -> bool:
    return isinstance(value, list) and all(is_int(v) for v in value)


def parse_time(value: object) -> datetime:
    check(
        isinstance(value, str) and TIME_RE.fullmatch(value),
        "bad_field",
        f"Hora mal formada: {value!r} (se espera AAAA-MM-DDTHH:MM:SSZ).",
    )
    text = str(value)
    # The regex fixed every position, so slicing is safe; this is much faster
    # than strptime, which matters when auditing 10 000 entries.
    parts = (text[0:4], text[5:7], text[8:10], text[11:13], text[14:16], text[17:19])
    try:
        return datetime(*(int(p) for p in parts))
    except ValueError as exc:
        raise RollogError("bad_field", f"Hora imposible: {value!r}.") from exc


def is_normalised_text(text: str) -> bool:
    """NFC and free of control characters, as purposes must be (§3.5)."""
    no_controls = not any(unicodedata.category(c) == "Cc" for c in text)
    return no_controls and unicodedata.is_normalized("NFC", text)


def check_client_seed(client_seed: object) -> str:
    check(
        isinstance(client_seed, str) and CLIENT_SEED_RE.fullmatch(client_seed),
        "bad_client_seed",
        "La semilla del cliente debe tener de 1 a 64 caracteres de [0-9A-Za-z_-].",
    )
    return str(client_seed)


def spec_terms(spec: object) -> list[tuple[int, bool]]:
    """``"2d6!+1d8"`` -> ``[(6, True), (6, True), (8, False)]``: each base die's
    faces and whether it explodes (§3.4b), in draw order.

    Beyond the grammar we refuse counts of zero and leading zeros, so that
    every pool has exactly one spelling (the spec string is part of ``M``).
    """
    check(
        isinstance(spec, str) and SPEC_RE.fullmatch(spec),
        "bad_spec",
        f"Tirada no válida: {spec!r} (se espera algo como 3d10, 2d6+1d8 o 2d6!).",
    )
    dice: list[tuple[int, bool]] = []
    for term in str(spec).split("+"):
        explodes = term.endswith("!")
        count_text, faces_text = term.rstrip("!").split("d")
        check(
            count_text[0] != "0" and faces_text[0] != "0",
            "bad_spec",
            f"«{term}»: sin ceros a la izquierda ni grupos de cero dados.",
        )
        count, sides = int(count_text), int(faces_text)
        check(
            MIN_FACES <= sides <= MAX_FACES,
            "bad_spec",
            f"«{term}»: un dado debe tener entre {MIN_FACES} y {MAX_FACES} caras.",
        )
        dice.extend([(sides, explodes)] * count)
        check(len(dice) <= MAX_DICE, "bad_spec", f"Como mucho se tiran {MAX_DICE} dados.")
    return dice


def expand_spec(spec: object) -> list[int]:
    """``"2d6+1d8"`` -> ``[6, 6, 8]``: the faces of each base die, in draw order."""
    return [faces for faces, _ in spec_terms(spec)]


def explodes(spec: str) -> bool:
    return any(boom for _, boom in spec_terms(spec))


def check_hex32(entry: Mapping[str, Any], name: str) -> None:
    value = entry.get(name)
    check(
        isinstance(value, str) and HEX32_RE.fullmatch(value),
        "bad_field",
        f"El campo {name} debe ser un hash de 64 cifras hexadecimales en minúscula.",
    )


def check_typed(entry: Mapping[str, Any], names: Sequence[str], kind: type) -> None:
    for name in names:
        value = entry.get(name)
        ok = is_int(value) if kind is int else isinstance(value, kind)
        check(ok, "bad_field", f"Falta el campo {name} o no es de tipo {kind.__name__}.")


def check_common_fields(entry: Mapping[str, Any]) -> None:
    check(entry.get("v") == VERSION and is_int(entry.get("v")), "bad_version", "La entrada no es v1.")
    check_typed(entry, ("kind", "campaign"), str)
    check_typed(entry, ("seq",), int)
    check(CAMPAIGN_RE.fullmatch(entry["campaign"]), "bad_field", "Identificador de campaña no válido.")
    check(entry["seq"] >= 0, "bad_field", "seq no puede ser negativo.")
    check_hex32(entry, "prev")
    parse_time(entry.get("time"))


def check_epoch_open_fields(entry: Mapping[str, Any]) -> None:
    check_typed(entry, ("epoch", "length"), int)
    check(entry["epoch"] >= 1 and entry["length"] >= 1, "bad_field", "Época o longitud no válidas.")
    check_hex32(entry, "anchor")
    check_hex32(entry, "key")


def check_roll_fields(entry: Mapping[str, Any]) -> None:
    text_fields = ("user", "character", "scene", "purpose", "visibility", "client_seed_source")
    check_typed(entry, text_fields, str)
    check_typed(entry, ("epoch", "epoch_index"), int)
    check(
        entry["epoch"] >= 1 and entry["epoch_index"] >= 1,
        "bad_field",
        "Ranura de semilla no válida.",
    )
    check_hex32(entry, "seed")
    check_hex32(entry, "seen")
    check_client_seed(entry.get("client_seed"))
    check(
        entry["client_seed_source"] in CLIENT_SEED_SOURCES,
        "bad_field",
        "client_seed_source debe ser browser, api o server.",
    )
    check(is_normalised_text(entry["purpose"]), "bad_field", "El motivo no está normalizado (NFC).")
    expand_spec(entry.get("spec"))
    check(is_int_list(entry.get("dice")), "bad_field", "dice debe ser una lista de enteros.")
    if entry["kind"] == "roll":
        # The vectors carry parent/rerolled as null and leave `drawn` out.
        check(
            "parent" in entry and "rerolled" in entry and entry["parent"] is None and entry["rerolled"] is None,
            "bad_field",
            "Una tirada normal no tiene padre ni posiciones repetidas.",
        )
        check(entry.get("drawn") is None, "bad_field", "Una tirada normal no lleva drawn.")
    elif entry["kind"] == "reroll":
        check_hex32(entry, "parent")
        check(
            is_int_list(entry.get("rerolled")),
            "bad_field",
            "rerolled debe ser una lista de enteros.",
        )
        check(is_int_list(entry.get("drawn")), "bad_field", "drawn debe ser una lista de enteros.")
    else:  # extend (§3.6b): the added dice, no positions
        check_hex32(entry, "parent")
        check(
            "rerolled" in entry and entry["rerolled"] is None,
            "bad_field",
            "Una extensión lleva rerolled a null.",
        )
        check(is_int_list(entry.get("drawn")), "bad_field", "drawn debe ser una lista de enteros.")
        check(not explodes(entry["spec"]), "bad_spec", "Los dados añadidos por una extensión no explotan.")


def check_sealed_fields(entry: Mapping[str, Any]) -> None:
    """The outer entry of a sealed roll: the slot and the commitment, nothing else (§3.7)."""
    keys = set(entry)
    check(
        keys == SEALED_KEYS,
        "sealed_fields",
        f"Una entrada sellada lleva exactamente {sorted(SEALED_KEYS)}; sobran {sorted(keys - SEALED_KEYS)}"
        f" y faltan {sorted(SEALED_KEYS - keys)}.",
    )
    check_typed(entry, ("epoch", "epoch_index"), int)
    check(entry["epoch"] >= 1 and entry["epoch_index"] >= 1, "bad_field", "Ranura de semilla no válida.")
    check_hex32(entry, "seed")
    check_hex32(entry, "commitment")
    check(entry.get("audience") in AUDIENCES, "bad_field", f"audience debe ser una de {list(AUDIENCES)}.")


def check_fields(entry: Mapping[str, Any]) -> None:
    """Shape and type of every field the format defines; extra game fields pass."""
    check_common_fields(entry)
    kind = entry["kind"]
    if kind == "epoch_open":
        check_epoch_open_fields(entry)
    elif kind in ROLL_KINDS:
        check_roll_fields(entry)
    elif kind == SEALED:
        check_sealed_fields(entry)
    else:
        raise RollogError("unknown_kind", f"Tipo de entrada desconocido en v1: {kind!r}.")


def commitment_of(body_bytes: bytes) -> str:
    return sha256(SEALED_DOMAIN + body_bytes).hex()


@dataclass(frozen=True)
class Opened:
    """A version of a roll as its content reads: the entry itself for a public
    roll, the checked opening for a sealed one. ``hash`` is always the hash
    of the signed (outer) entry, the one children name as ``parent``."""

    hash: bytes
    entry: dict[str, Any]
    audience: str | None = None  # set for a sealed entry

    @property
    def hash_hex(self) -> str:
        return self.hash.hex()


def open_sealed(outer: LoadedEntry, opening_b64: object) -> Opened:
    """Check an opening against its sealed outer entry (§3.7) and return the content."""
    o = outer.entry
    check(isinstance(opening_b64, str), "bad_opening", "La apertura debe ser texto base64.")
    try:
        body_bytes = base64.b64decode(str(opening_b64), validate=True)
    except (binascii.Error, ValueError) as exc:
        raise RollogError("bad_opening", "La apertura no es base64 válido.") from exc
    check(
        commitment_of(body_bytes) == o["commitment"],
        "commitment_mismatch",
        "La apertura no coincide con el compromiso firmado: el contenido no es el sellado.",
    )
    body = decode_entry(body_bytes)
    check(
        all(body.get(k) == o[k] and type(body.get(k)) is type(o[k]) for k in SHARED_KEYS),
        "opening_mismatch",
        "La apertura no comparte seq, prev, hora, época o semilla con su entrada sellada.",
    )
    check(
        "audience" not in body and "commitment" not in body,
        "opening_mismatch",
        "La apertura no lleva audience ni commitment.",
    )
    check_hex32(body, "nonce")
    check_fields(body)
    check(body["kind"] in ROLL_KINDS, "opening_mismatch", "La apertura no es una tirada.")
    check(
        len(body["client_seed"]) >= SEALED_MIN_CLIENT_SEED,
        "weak_client_seed",
        f"Una tirada sellada necesita una semilla del cliente de {SEALED_MIN_CLIENT_SEED} caracteres o más.",
    )
    return Opened(outer.hash, body, o["audience"])


def content_of(loaded: LoadedEntry, opening_b64: object = None) -> Opened | None:
    """What a signed entry says: itself, its checked opening, or None for a
    sealed entry given without its opening."""
    if loaded.entry.get("kind") != SEALED:
        return Opened(loaded.hash, loaded.entry)
    if opening_b64 is None:
        return None
    return open_sealed(loaded, opening_b64)


# --- Seed chain ------------------------------------------------------------------


def hash_chain(seed: bytes, times: int) -> bytes:
    """SHA-256 applied ``times`` times to raw bytes: x_i -> x_{i-times}."""
    for _ in range(times):
        seed = sha256(seed)
    return seed


# --- Dice derivation (§3.4) ------------------------------------------------------


EXTEND_POSITIONS = "+"  # the positions field of M for an extension (§3.6b)


def derivation_message(
    campaign: str,
    seq: int,
    client_seed: str,
    spec: str,
    parent: str | None = None,
    positions: Sequence[int] | str | None = None,
) -> str:
    """The HMAC message M. Only values the server cannot steer go in.

    ``positions`` is the re-rolled positions, or EXTEND_POSITIONS for an extension.
    """
    parent_part = parent or "-"
    if isinstance(positions, str):
        positions_part = positions
    else:
        positions_part = ",".join(str(p) for p in positions or ()) or "-"
    return ":".join(["rollog/v1", campaign, str(seq), client_seed, spec, parent_part, positions_part])


def hmac_block(seed: bytes, message: str, index: int) -> bytes:
    return hmac.new(seed, f"{message}:{index}".encode(), hashlib.sha256).digest()


def bytes_per_die(faces: int) -> int:
    """Smallest k with 256**k >= faces."""
    k = 1
    while 256**k < faces:
        k += 1
    return k


@dataclass(frozen=True)
class Draw:
    """One attempt to draw a die: kept so pages can show every byte used."""

    offset: int  # position of the first byte in the stream
    size: int  # bytes read (k)
    value: int  # the bytes as a big-endian integer
    faces: int
    die: int | None  # None when the value was rejected

    @property
    def accepted(self) -> bool:
        return self.die is not None


@dataclass
class DiceStream:
    """A ``DiceSource`` (see ``rules.dice``) over HMAC-SHA256(x_i, M ":" j).

    Each ``roll(faces)`` takes the next bytes of the stream and applies
    rejection sampling, so dice are exactly uniform and drawn in order.
    """

    seed: bytes
    message: str
    blocks: list[bytes] = field(default_factory=list)
    draws: list[Draw] = field(default_factory=list)
    dice: list[int] = field(default_factory=list)
    consumed: int = 0

    def _take(self, size: int) -> bytes:
        # A draw may straddle two blocks, so index the concatenated stream.
        while len(self.blocks) * 32 < self.consumed + size:
            self.blocks.append(hmac_block(self.seed, self.message, len(self.blocks)))
        start = self.consumed
        self.consumed += size
        return b"".join(self.blocks)[start : self.consumed]

    def roll(self, faces: int) -> int:
        check(
            is_int(faces) and MIN_FACES <= faces <= MAX_FACES,
            "bad_spec",
            f"Un dado debe tener entre {MIN_FACES} y {MAX_FACES} caras, no {faces!r}.",
        )
        size = bytes_per_die(faces)
        span = 256**size
        limit = span - span % faces  # values >= limit would favour low faces
        while True:
            offset = self.consumed
            value = int.from_bytes(self._take(size), "big")
            die = value % faces + 1 if value < limit else None
            self.draws.append(Draw(offset, size, value, faces, die))
            if die is not None:
                self.dice.append(die)
                return die

    @property
    def rejected(self) -> list[int]:
        return [d.value for d in self.draws if not d.accepted]


def derive_dice(seed: bytes, message: str, faces: Sequence[int]) -> list[int]:
    stream = DiceStream(seed, message)
    return [stream.roll(n) for n in faces]


def draw_pool(stream: DiceStream, spec: str) -> list[int]:
    """Every die of ``spec`` from ``stream``, explosions included (§3.4b).

    The base dice of the whole spec come first; then one walk over the growing
    list from position 0 adds a die of the same faces for each die of a ``!``
    term that shows its maximum (added dice may explode in turn), until the
    list holds MAX_DICE dice.
    """
    terms = spec_terms(spec)
    dice = [stream.roll(faces) for faces, _ in terms]
    position = 0
    while position < len(dice) and len(dice) < MAX_DICE:
        faces, boom = terms[position]
        if boom and dice[position] == faces:
            dice.append(stream.roll(faces))
            terms.append((faces, True))
        position += 1
    return dice


# --- One roll against its epoch and parent (L1, §3.8) ----------------------------


def check_epoch_link(entry: Mapping[str, Any], epoch_open: Mapping[str, Any], key_hex: str) -> None:
    """The roll's seed slot belongs to this signed epoch_open."""
    check(
        epoch_open.get("kind") == "epoch_open",
        "bad_epoch_open",
        "La entrada de época no es epoch_open.",
    )
    same = (epoch_open["campaign"], epoch_open["epoch"]) == (entry["campaign"], entry["epoch"])
    check(same, "bad_epoch_open", "La época no corresponde a la campaña y época de la tirada.")
    check(
        epoch_open["seq"] < entry["seq"],
        "bad_epoch_open",
        "La época se abrió después de la tirada.",
    )
    check(epoch_open["key"] == key_hex, "key_mismatch", "La época declara otra clave de firma.")
    check(
        entry["epoch_index"] <= epoch_open["length"],
        "slot_out_of_range",
        f"La ranura {entry['epoch_index']} no existe en una época de {epoch_open['length']}.",
    )
    check(
        parse_time(epoch_open["time"]) <= parse_time(entry["time"]),
        "time_backwards",
        "La tirada es anterior a la apertura de su época.",
    )


def check_seed(entry: Mapping[str, Any], known: bytes, steps: int) -> None:
    """Hashing the revealed seed ``steps`` times must give a known chain point."""
    seed = bytes.fromhex(entry["seed"])
    check(
        hash_chain(seed, steps) == known,
        "seed_not_committed",
        f"La semilla de la ranura {entry['epoch_index']} no encadena con el ancla de su época.",
    )


def roll_message(entry: Mapping[str, Any]) -> str:
    positions = EXTEND_POSITIONS if entry.get("kind") == "extend" else entry.get("rerolled")
    return derivation_message(
        entry["campaign"],
        entry["seq"],
        entry["client_seed"],
        entry["spec"],
        entry.get("parent"),
        positions,
    )


def check_parent_link(entry: Mapping[str, Any], parent: Opened) -> None:
    """The version a re-roll or an extension changes: named, earlier, same campaign."""
    p = parent.entry
    check(
        parent.hash_hex == entry["parent"],
        "parent_mismatch",
        "La entrada madre no es la que se repite.",
    )
    check(p.get("kind") in ROLL_KINDS, "parent_not_roll", "La entrada madre no es una tirada.")
    check(p["campaign"] == entry["campaign"], "parent_mismatch", "La madre es de otra campaña.")
    check(p["seq"] < entry["seq"], "parent_mismatch", "La madre es posterior a la repetición.")
    check(
        parse_time(p["time"]) <= parse_time(entry["time"]),
        "time_backwards",
        "La repetición es anterior a su tirada madre.",
    )


def check_reroll_link(entry: Mapping[str, Any], parent: Opened) -> None:
    check_parent_link(entry, parent)
    p = parent.entry
    check(p["spec"] == entry["spec"], "parent_mismatch", "La madre tiene otra reserva de dados.")
    # The pool of an extended version, and the faces of exploded dice, are not
    # fixed by the format yet (v1.1): such re-rolls cannot be verified.
    check(
        p["kind"] != "extend" and not explodes(entry["spec"]),
        "unspecified_reroll",
        "Repetir dados de una tirada extendida o con dados explosivos no está definido en rollog/v1.1.",
    )


def check_positions(positions: list[int], pool_size: int) -> None:
    check(
        positions and positions == sorted(set(positions)) and all(0 <= i < pool_size for i in positions),
        "bad_positions",
        f"Posiciones repetidas no válidas: {positions} (ordenadas, únicas, entre 0 y {pool_size - 1}).",
    )


def check_dice(entry: Mapping[str, Any], parent: Opened | None) -> DiceStream:
    """Re-derive the dice from seed and message; return the stream as evidence."""
    stream = DiceStream(bytes.fromhex(entry["seed"]), roll_message(entry))
    if entry["kind"] == "roll":
        draw_pool(stream, entry["spec"])
        check(stream.dice == entry["dice"], "dice_mismatch", "Los dados no salen de la semilla.")
        return stream
    if parent is None:
        raise RollogError("parent_missing", "Falta la entrada madre de la repetición.")
    if entry["kind"] == "extend":
        check_parent_link(entry, parent)
        drawn = draw_pool(stream, entry["spec"])
        check(drawn == entry["drawn"], "dice_mismatch", "Los dados añadidos no salen de la semilla.")
        check(
            list(parent.entry["dice"]) + drawn == entry["dice"],
            "dice_mismatch",
            "El resultado no son los dados de la madre seguidos de los añadidos.",
        )
        return stream
    check_reroll_link(entry, parent)
    faces = expand_spec(entry["spec"])
    positions = entry["rerolled"]
    check_positions(positions, len(faces))
    for p in positions:
        stream.roll(faces[p])
    check(stream.dice == entry["drawn"], "dice_mismatch", "Los dados nuevos no salen de la semilla.")
    dice = list(parent.entry["dice"])
    for p, value in zip(positions, stream.dice, strict=True):
        dice[p] = value
    check(
        dice == entry["dice"],
        "dice_mismatch",
        "El resultado no es la madre con esos dados cambiados.",
    )
    return stream


def check_sealed_family(parent: Opened, child_audience: str | None) -> None:
    """Re-rolls and extensions of a sealed roll are sealed too, for the same audience (§3.7)."""
    if parent.audience is not None:
        check(
            child_audience == parent.audience,
            "sealed_child_mismatch",
            "Una repetición o extensión de una tirada sellada va sellada y para el mismo público.",
        )


# --- The bundle (§3.10) ------------------------------------------------------------


@dataclass(frozen=True)
class RollProof:
    """Everything checked for one roll, for printing or for a web page.

    ``content`` is what the roll says (the entry itself, or a sealed entry's
    checked opening); None, with ``stream`` None, for a sealed entry verified
    without its opening: its chain position only.
    """

    entry: LoadedEntry
    epoch_open: LoadedEntry
    parent: Opened | None
    stream: DiceStream | None
    content: Opened | None
    warnings: tuple[str, ...] = ()

    @property
    def sealed(self) -> bool:
        return self.entry.entry["kind"] == SEALED

    @property
    def disclosed(self) -> bool:
        return self.content is not None


def check_bundle_copies(bundle: Mapping[str, Any], loaded: LoadedEntry) -> None:
    """The bundle's unsigned conveniences must not contradict the signed bytes."""
    check(
        bundle.get("permalink") == permalink_id(loaded.hash),
        "permalink_mismatch",
        "El enlace permanente no corresponde al hash de la entrada.",
    )
    if "entry_hash" in bundle:
        check(bundle["entry_hash"] == loaded.hash_hex, "hash_mismatch", "entry_hash no coincide.")
    if bundle.get("entry") is not None:
        check(
            bundle["entry"] == loaded.entry,
            "entry_copy_mismatch",
            "La copia legible de la entrada no coincide con los bytes firmados.",
        )


def check_head(bundle: Mapping[str, Any], loaded: LoadedEntry, public_key: Ed25519PublicKey) -> None:
    if bundle.get("head") is None:
        return
    head = load_signed(bundle["head"], public_key)
    check_common_fields(head.entry)
    check(
        head.entry["campaign"] == loaded.entry["campaign"] and head.entry["seq"] >= loaded.entry["seq"],
        "bad_head",
        "La cabeza del registro no es posterior a la tirada.",
    )


def load_parent(ref: object, public_key: Ed25519PublicKey) -> Opened:
    """A bundle's parent: ``{entry_b64, sig}``, plus ``opening_b64`` when sealed."""
    loaded = load_signed(ref, public_key)
    check_fields(loaded.entry)
    opening = ref.get("opening_b64") if isinstance(ref, Mapping) else None
    if loaded.entry["kind"] == SEALED:
        check(opening is not None, "parent_missing", "Falta la apertura de la tirada madre sellada.")
    parent = content_of(loaded, opening)
    if parent is None:  # unreachable: a sealed parent without opening was refused above
        raise RollogError("parent_missing", "Falta la apertura de la tirada madre sellada.")
    return parent


def verify_bundle(bundle: object, public_key: Ed25519PublicKey) -> RollProof:
    """Verify one roll bundle completely; raise ``RollogError`` on the first fault.

    A sealed roll given without its opening is verified as far as it can be:
    signature, permalink, epoch and seed slot ("sealed: chain position
    verified, content not disclosed").
    """
    if not isinstance(bundle, Mapping):
        raise RollogError("bad_bundle", "El paquete no es un objeto JSON.")
    check(bundle.get("format") == FORMAT, "bad_bundle", f"El paquete no es {FORMAT}.")
    key_hex = public_key_hex(public_key)
    loaded = load_signed(bundle, public_key)  # entry_b64 and sig sit at the top level
    entry = loaded.entry
    check_fields(entry)
    check(entry["kind"] in (*ROLL_KINDS, SEALED), "not_a_roll", "La entrada no es una tirada.")
    check_bundle_copies(bundle, loaded)
    epoch = load_signed(bundle.get("epoch_open"), public_key)
    check_fields(epoch.entry)
    check_epoch_link(entry, epoch.entry, key_hex)
    check_seed(entry, bytes.fromhex(epoch.entry["anchor"]), entry["epoch_index"])
    if entry["kind"] == SEALED:
        content = content_of(loaded, bundle.get("opening_b64"))
    else:
        check(bundle.get("opening_b64") is None, "bad_bundle", "Una tirada pública no lleva apertura.")
        content = content_of(loaded)
    parent = stream = None
    if content is not None:
        if content.entry["kind"] != "roll":
            parent = load_parent(bundle.get("parent"), public_key)
            check_sealed_family(parent, content.audience)
        stream = check_dice(content.entry, parent)
    check_head(bundle, loaded, public_key)
    warnings = []
    if bundle.get("public_key") not in (None, key_hex):
        warnings.append("El paquete anuncia otra clave pública; se ha usado la clave fijada.")
    return RollProof(loaded, epoch, parent, stream, content, tuple(warnings))


SEALED_UNDISCLOSED = "sellada: posición en la cadena verificada, contenido no revelado"


# --- Command line ----------------------------------------------------------------


def describe(proof: RollProof) -> list[str]:
    outer = proof.entry.entry
    if proof.content is None:
        return [
            f"OK: tirada {SEALED_UNDISCLOSED} ({FORMAT})",
            "  (sealed: chain position verified, content not disclosed)",
            f"  campaña {outer['campaign']}, entrada #{outer['seq']}, {outer['time']}, público «{outer['audience']}»",
            f"  semilla x_{outer['epoch_index']} encadenada con el ancla de la época {outer['epoch']}",
            f"  compromiso: {outer['commitment']}",
            f"  hash de la entrada: {proof.entry.hash_hex}",
            f"  enlace permanente: {permalink_id(proof.entry.hash)}",
            "  firma Ed25519 válida con la clave fijada",
        ]
    e = proof.content.entry
    parent = proof.parent.entry if proof.parent else None
    kinds = {"reroll": "repetición", "extend": "extensión"}
    kind = f"{kinds[e['kind']]} de la entrada #{parent['seq']}" if parent else "tirada"
    lines = [
        f"OK: tirada verificada ({FORMAT})",
        f"  campaña {e['campaign']}, entrada #{e['seq']} ({kind}), {e['time']}",
    ]
    if proof.sealed:
        lines.append(
            f"  sellada para «{outer['audience']}»: la apertura coincide con el compromiso {outer['commitment']}"
        )
    lines += [
        f"  quién: {e['user']} / {e['character']}, escena {e['scene']}",
        f"  motivo: {e['purpose']}",
    ]
    if parent and e["kind"] == "extend":
        lines.append(f"  dados: {parent['dice']} + {e['spec']} -> {e['drawn']} -> {e['dice']}")
    elif parent:
        lines.append(
            f"  dados: {e['spec']} {parent['dice']} -> posiciones {e['rerolled']} repetidas "
            f"-> {e['drawn']} -> {e['dice']}"
        )
    else:
        lines.append(f"  dados: {e['spec']} -> {e['dice']} (orden de generación)")
    stream = proof.stream or DiceStream(b"", "")
    lines += [
        f"  bytes usados: {stream.consumed}, rechazados: {stream.rejected or 'ninguno'}",
        f"  semilla x_{e['epoch_index']} encadenada con el ancla de la época {e['epoch']}",
        f"  semilla del cliente: {e['client_seed']} ({e['client_seed_source']})",
        f"  hash de la entrada: {proof.entry.hash_hex}",
        f"  enlace permanente: {permalink_id(proof.entry.hash)}",
        "  firma Ed25519 válida con la clave fijada",
    ]
    if e["client_seed_source"] == "server":
        lines.append("  AVISO: la semilla del cliente la puso el servidor; la equidad depende del operador.")
    lines += [f"  AVISO: {w}" for w in proof.warnings]
    return lines


def read_json(path: str) -> object:
    with open(path, encoding="utf-8") as handle:
        return json.load(handle)


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 2:
        print("uso: python -m rolls.verify_roll TIRADA.json CLAVE_PUBLICA_HEX", file=sys.stderr)
        return 2
    try:
        public_key = parse_public_key(args[1])
        bundle = read_json(args[0])
    except RollogError as exc:
        print(f"ERROR: {exc.message}", file=sys.stderr)
        return 2
    except (OSError, ValueError, RecursionError) as exc:
        print(f"ERROR: no se puede leer {args[0]}: {exc}", file=sys.stderr)
        return 2
    try:
        proof = verify_bundle(bundle, public_key)
    except RollogError as exc:
        print(f"FAIL: la tirada NO es válida: {exc.message} [{exc.code}]")
        return 1
    except (KeyError, TypeError, AttributeError) as exc:
        # A field the checks above did not cover; still a clear "no".
        print(f"FAIL: la tirada NO es válida: paquete mal formado ({exc!r}) [bad_bundle]")
        return 1
    print("\n".join(describe(proof)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
