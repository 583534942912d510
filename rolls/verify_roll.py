"""The detailed explainer of one rollog/v1 (v1.1) roll, built on ``rolls.verify``.

Usage::

    python -m rolls.verify_roll BUNDLE.json PUBKEY_HEX

Every check is made by :mod:`rolls.verify` (``verify.py``, the single file the
permalink page offers for download and the server itself uses); this module
only explains: it says in Spanish why a roll fails (one message per stable
code) and prints what was verified, byte by byte. It needs ``verify.py`` next
to it (in a ``rolls/`` folder), the standard library and ``cryptography``.

Exit status: 0 if the roll is valid, 1 if it is not (the reason is printed),
2 for usage errors (missing file, malformed public key).
"""

from __future__ import annotations

import collections
import json
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from rolls import verify
from rolls.verify import (
    FORMAT,
    MAX_DICE,
    ROLL_KINDS,
    SEALED,
    SEALED_MIN_CLIENT_SEED,
    RollogError,
    check,
    hash_chain,
    roll_message,
)

__all__ = [
    "FORMAT",
    "MAX_DICE",
    "MESSAGES",
    "ROLL_KINDS",
    "SEALED",
    "SEALED_UNDISCLOSED",
    "DiceStream",
    "LoadedEntry",
    "Opened",
    "RollProof",
    "RollogError",
    "Draw",
    "check",
    "commitment_of",
    "describe",
    "draw_pool",
    "expand_spec",
    "explain",
    "hash_chain",
    "main",
    "parse_public_key",
    "permalink_id",
    "read_json",
    "rejected",
    "roll_message",
    "signature_valid",
    "signed_message",
    "verify_bundle",
]

draw_pool = verify.draw
commitment_of = verify.commitment
permalink_id = verify.permalink
SEALED_UNDISCLOSED = "sellada: posición en la cadena verificada, contenido no revelado"

# What each code of rolls.verify means, for people. ``{detail}`` is the short
# English detail the check gives (a field's name, a slot number…).
MESSAGES = {
    "bad_bundle": "El paquete está mal formado o incompleto ({detail}).",
    "bad_key": "La clave pública debe tener 64 cifras hexadecimales.",
    "bad_signature": "La firma no es válida con la clave pública fijada.",
    "not_canonical": "Los bytes de la entrada no están en forma canónica (JSON UTF-8 con claves ordenadas y sin espacios).",
    "bad_field": "Falta el campo {detail} o no tiene el tipo que exige el formato.",
    "bad_version": "La entrada no es v1.",
    "bad_client_seed": "La semilla del cliente debe tener de 1 a 64 caracteres de [0-9A-Za-z_-].",
    "bad_spec": "Tirada no válida: se espera algo como 3d10, 2d6+1d8 o 2d6!, de 2 a 1000 caras y 100 dados como mucho.",
    "unknown_kind": "Tipo de entrada desconocido en v1: {detail}.",
    "sealed_fields": "Una entrada sellada lleva exactamente v, kind, campaign, seq, prev, time, epoch, epoch_index, "
    "seed, audience y commitment.",
    "bad_opening": "La apertura no es base64 válido.",
    "commitment_mismatch": "La apertura no coincide con el compromiso firmado: el contenido no es el sellado.",
    "opening_mismatch": "La apertura no comparte seq, prev, hora, época o semilla con su entrada sellada, "
    "o no es una tirada.",
    "weak_client_seed": f"Una tirada sellada necesita una semilla del cliente de {SEALED_MIN_CLIENT_SEED} "
    "caracteres o más.",
    "not_a_roll": "La entrada no es una tirada.",
    "permalink_mismatch": "El enlace permanente no corresponde al hash de la entrada.",
    "hash_mismatch": "entry_hash no coincide.",
    "entry_copy_mismatch": "La copia legible de la entrada no coincide con los bytes firmados.",
    "bad_epoch_open": "La época no corresponde a la campaña y época de la tirada, o se abrió después.",
    "key_mismatch": "La época declara otra clave de firma.",
    "slot_out_of_range": "La ranura de semilla no existe en su época ({detail}).",
    "time_backwards": "La tirada es anterior a la apertura de su época.",
    "seed_not_committed": "La semilla no encadena con el ancla de su época.",
    "parent_missing": "Falta la entrada madre de la repetición o extensión, o la apertura de una madre sellada.",
    "parent_mismatch": "La entrada madre no es una tirada anterior de la campaña con esa reserva de dados.",
    "parent_not_roll": "La entrada madre no es una tirada.",
    "sealed_child_mismatch": "Una repetición o extensión de una tirada sellada va sellada y para el mismo público.",
    "unspecified_reroll": "Repetir dados de una tirada extendida o con dados explosivos no está definido "
    "en rollog/v1.1.",
    "bad_positions": "Posiciones repetidas no válidas: ordenadas, únicas y dentro de la reserva.",
    "dice_mismatch": "Los dados no salen de la semilla.",
    "bad_head": "La cabeza del registro no es posterior a la tirada.",
    "bad_checkpoint": "El punto de control está mal formado ({detail}).",
    "campaign_mismatch": "El punto de control es de otra campaña.",
    "truncated": "El registro es más corto que un punto de control firmado: se han borrado entradas.",
    "fork": "El registro no contiene la entrada que firmó el punto de control: se ha reescrito.",
}


def explain(exc: RollogError) -> RollogError:
    """The same fault, with its Spanish explanation as ``message``."""
    template = MESSAGES.get(exc.code, "Regla incumplida: {detail}.")
    return RollogError(exc.code, template.format(detail=exc.message or exc.code))


# --- Thin names the rest of the site and the tests use -------------------------


@dataclass(frozen=True)
class LoadedEntry:
    """A signed entry whose signature (and fields) were checked under the pinned key."""

    entry_bytes: bytes
    hash: bytes
    entry: dict[str, Any]

    @property
    def hash_hex(self) -> str:
        return self.hash.hex()


@dataclass(frozen=True)
class Opened:
    """What a roll says: the entry itself, or a sealed entry's checked opening;
    ``hash`` is always that of the signed (outer) entry."""

    hash: bytes
    entry: dict[str, Any]
    audience: str | None = None

    @property
    def hash_hex(self) -> str:
        return self.hash.hex()


def expand_spec(spec: object) -> list[int]:
    """``"2d6+1d8"`` -> ``[6, 6, 8]``: the faces of each base die, in draw order."""
    return [faces for faces, _ in verify.terms(spec)]


# One value read from a dice stream: its offset and size in bytes, the value, the faces, and the die (None: rejected).
Draw = collections.namedtuple("Draw", "offset size value faces die")


class DiceStream(verify.Stream):
    """``verify.Stream``, keeping every value it reads (``draws``) to explain a roll: verifying needs only the
    dice it gives, so the single file keeps nothing more."""

    def __init__(self, seed: bytes, message: str) -> None:
        super().__init__(seed, message)
        self.draws: list[Draw] = []
        self.faces = 0  # of the die being rolled

    def read(self, size: int) -> int:
        value = super().read(size)
        self.draws.append(Draw(self.consumed - size, size, value, self.faces, None))
        return value

    def roll(self, faces: int) -> int:
        self.faces = faces
        die = super().roll(faces)  # the last value read made the die; any read before it for this die was rejected
        self.draws[-1] = self.draws[-1]._replace(die=die)
        return die


def rejected(stream: DiceStream) -> list[int]:
    """The values a dice stream read and threw away, in order (they would have biased the die)."""
    return [d.value for d in stream.draws if d.die is None]


def signed_message(hash_: bytes) -> bytes:
    """What Ed25519 signs: the domain-separated entry hash."""
    return verify.SIG + hash_


def signature_valid(public_key: Ed25519PublicKey, hash_: bytes, signature: bytes) -> bool:
    try:
        public_key.verify(signature, signed_message(hash_))
    except InvalidSignature:
        return False
    return True


def parse_public_key(key_hex: object) -> Ed25519PublicKey:
    """A pinned key from its 64 hex digits (RollogError "bad_key" otherwise)."""
    text = str(key_hex).strip().lower()
    check(len(text) == 64 and all(c in "0123456789abcdef" for c in text), "bad_key", MESSAGES["bad_key"])
    try:
        return Ed25519PublicKey.from_public_bytes(bytes.fromhex(text))
    except ValueError as exc:
        raise RollogError("bad_key", MESSAGES["bad_key"]) from exc


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


def _opened(value: verify.Opened | None) -> Opened | None:
    return Opened(*value) if value is not None else None


def verify_bundle(bundle: object, public_key: Ed25519PublicKey) -> RollProof:
    """``rolls.verify.verify``, its faults explained in Spanish (``RollogError``)."""
    try:
        proof = verify.verify(bundle, public_key, DiceStream)
        # The log's head when the bundle was served: optional, outside the roll's proof; this roll or later.
        if isinstance(bundle, Mapping) and bundle.get("head") is not None:
            head, e = verify.load(bundle["head"], public_key).entry, proof.entry.entry
            check(head["campaign"] == e["campaign"] and head["seq"] >= e["seq"], "bad_head")
    except RollogError as exc:
        raise explain(exc) from exc
    warnings = []
    if isinstance(bundle, Mapping) and bundle.get("public_key") not in (None, public_key.public_bytes_raw().hex()):
        warnings.append("El paquete anuncia otra clave pública; se ha usado la clave fijada.")
    return RollProof(
        LoadedEntry(*proof.entry),
        LoadedEntry(*proof.epoch_open),
        _opened(proof.parent),
        proof.stream,
        _opened(proof.content),
        tuple(warnings),
    )


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
        f"  bytes usados: {stream.consumed}, rechazados: {rejected(stream) or 'ninguno'}",
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
        # A field the checks did not cover; still a clear "no".
        print(f"FAIL: la tirada NO es válida: paquete mal formado ({exc!r}) [bad_bundle]")
        return 1
    print("\n".join(describe(proof)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
