"""Verifier of rollog/v1 (with v1.1): everything needed to check a roll, and nothing else.

    python3 verify.py ROLL.json PUBLIC_KEY_HEX

ROLL.json is what ``/r/<permalink>.json`` returns; PUBLIC_KEY_HEX is the site's
Ed25519 key, obtained elsewhere (never trust a key printed inside the file).
Needs only Python 3.12 and the ``cryptography`` package. Exit status: 0 valid,
1 not valid (with the code of the rule it breaks), 2 usage error.

The site builds its log with this same file, so what it signs and what you
check cannot drift apart. § numbers refer to roll-verification.md; the longer
explanations of every check live in verify_roll.py, which is built on this.

The records it returns: ``Signed`` (an entry whose signature, and unless told
otherwise its fields, were checked: its exact bytes, hash and object), ``Opened`` (what a roll says: the
entry itself, or for a sealed entry its checked opening and audience) and ``Proof`` (the roll, its
epoch_open, its parent, its dice stream and what it says; for a sealed roll
checked without its opening, stream and content are None). Verifying needs only the dice a stream
gives; verify_roll.py passes a ``Stream`` subclass (``stream_type``) that also keeps every value read.
"""

import base64
import collections
import functools
import hashlib
import hmac
import json
import re
import sys
import unicodedata

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

FORMAT, SEALED, ROLL_KINDS, MAX_DICE = "rollog/v1", "sealed", ("roll", "reroll", "extend"), 100
ENTRY, SIG, SEALED_DOMAIN = (f"rollog/v1/{d}\n".encode() for d in ("entry", "sig", "sealed"))
# A sealed entry and its opening share these fields; a sealed roll's client seed has 32 characters at least.
SHARED, SEALED_MIN_CLIENT_SEED = ("v", "campaign", "seq", "prev", "time", "epoch", "epoch_index", "seed"), 32
# Field types: regexes over each value's canonical JSON (so true, 1.0 or "1" are no integer); "" is an absent field.
HEX, N, TEXT, INTS = '"[0-9a-f]{64}"', "[1-9][0-9]*", '".*"', r"\[(-?[0-9]+(,-?[0-9]+)*)?\]"
DAY, SPEC = "[0-9]{4}-[01][0-9]-[0-3][0-9]", r"[1-9][0-9]{0,2}d[1-9][0-9]{0,3}!?(\+[1-9][0-9]{0,2}d[1-9][0-9]{0,3}!?)*"
# A roll's purpose is text without control characters (§3.5). Canonical JSON writes the C0 ones as escapes, so its
# JSON has no escape but \" and \\, and no DEL or C1 control (U+007F-U+009F); check_fields adds that it is in NFC.
TIME, PURPOSE = f'"{DAY}T[0-2][0-9]:[0-5][0-9]:[0-5][0-9]Z"', r'"([^\\\x7f-\x9f]|\\[\\"])*"'
COMMON = {"v": "1", "kind": TEXT, "campaign": '"[a-z0-9-]{1,100}"', "seq": f"0|{N}", "prev": HEX, "time": TIME}
# A roll (§3.5): who, where and why; its pool, seed and dice; the player's seed. A plain roll has no parent,
# positions or drawn dice; a re-roll or an extension names its parent and the dice it drew (§3.6, §3.6b).
ROLL = {"user": TEXT, "character": TEXT, "scene": TEXT, "purpose": PURPOSE, "visibility": TEXT, "spec": f'"{SPEC}"'}
ROLL |= {"epoch": N, "epoch_index": N, "seed": HEX, "client_seed": '"[0-9A-Za-z_-]{1,64}"', "seen": HEX, "dice": INTS}
ROLL |= {"client_seed_source": '"(browser|api|server)"', "parent": "null", "rerolled": "null", "drawn": ""}
# What each kind of entry carries (§3.5–3.7); other (game) fields may follow, except in sealed entries.
# The dice an extension adds never explode (§3.6b).
KINDS = {"roll": ROLL, "reroll": ROLL | {"parent": HEX, "rerolled": INTS, "drawn": INTS}}
KINDS["extend"] = ROLL | {"parent": HEX, "drawn": INTS, "spec": f'"{SPEC.replace("!?", "")}"'}
KINDS["epoch_open"] = {"epoch": N, "length": N, "anchor": HEX, "key": HEX}
KINDS[SEALED] = {"epoch": N, "epoch_index": N, "seed": HEX, "commitment": HEX, "audience": '"(gm|recipients|scene)"'}
CODES = {"v": "bad_version", "client_seed": "bad_client_seed", "spec": "bad_spec"}  # the others: bad_field
Signed = collections.namedtuple("Signed", "entry_bytes hash entry")
Opened = collections.namedtuple("Opened", "hash entry audience", defaults=(None,))
Proof = collections.namedtuple("Proof", "entry epoch_open parent stream content")


class RollogError(ValueError):
    def __init__(self, code: str, message: str = "") -> None:  # code: a stable keyword, explained in verify_roll.py
        super().__init__(f"{message} [{code}]")
        self.code, self.message = code, message


def check(ok: object, code: str, message: str = "") -> None:
    if not ok:  # not `assert`: python -O removes asserts
        raise RollogError(code, message)


def attempt(code: str, parse, *args, **kwargs):
    """``parse(*args, **kwargs)``; any failure of it (not base64, not JSON, a bad signature…) is the fault ``code``:
    a verifier refuses what it cannot read."""
    try:
        return parse(*args, **kwargs)
    except Exception as exc:
        raise RollogError(code, str(exc) or type(exc).__name__) from None


def entry_hash(raw: bytes) -> bytes:
    return hashlib.sha256(ENTRY + raw).digest()


def commitment(opening: bytes) -> str:
    return hashlib.sha256(SEALED_DOMAIN + opening).hexdigest()


def permalink(hash_: bytes) -> str:
    return base64.b32encode(hash_[:15]).decode().lower()


def hash_chain(seed: bytes, n: int) -> bytes:
    return functools.reduce(lambda x, _: hashlib.sha256(x).digest(), range(n), seed)


def canonical(value) -> bytes:
    """The exact bytes that are hashed and signed (§3.5): sorted keys, no spaces, UTF-8."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode()


def check_fields(e: dict, rules: dict | None = None, extra: dict | None = None) -> dict:
    """Each field the format defines for the entry's kind (and ``extra``) has its type, and a roll's purpose
    is in NFC (§3.5); with ``rules``, only those fields. Returns the entry."""
    # Unless told which fields: a kind the format defines, and a sealed entry carries nothing else (§3.7).
    check(rules or e.get("kind") in [*KINDS], "unknown_kind", str(e.get("kind")))
    check(rules or e["kind"] != SEALED or e.keys() == {*SHARED, "kind", "audience", "commitment"}, "sealed_fields")
    for name, rule in (rules or COMMON | KINDS[e["kind"]] | (extra or {})).items():
        check(re.fullmatch(rule, canonical(e[name]).decode() if name in e else ""), CODES.get(name, "bad_field"), name)
    check(e.get("kind") not in ROLL_KINDS or unicodedata.is_normalized("NFC", e["purpose"]), "bad_field", "purpose")
    return e


def decode(raw: bytes) -> dict:
    """Signed bytes -> object; encoding it again must give the same bytes (no duplicate keys, spaces, escapes,
    other encodings…). A lone surrogate, escaped or not, cannot be encoded again: it fails there."""
    value = attempt("not_canonical", json.loads, raw)
    check(type(value) is dict and attempt("not_canonical", canonical, value) == raw, "not_canonical")
    return value


def load(ref: object, key: Ed25519PublicKey, fields=True, name="entry_b64", tags=(ENTRY, SIG), code="bad_bundle"):
    """``{"entry_b64", "sig"}`` -> ``Signed``, if signed under the pinned key: Ed25519 over
    SIG + SHA-256(ENTRY + bytes) (§3.5); then its fields are checked, unless ``fields`` is false.
    A checkpoint has its own names and domain tags (verify_log.py)."""
    raw = attempt(code, base64.b64decode, ref.get(name) if isinstance(ref, dict) else None, validate=True)
    check(re.fullmatch("[0-9a-f]{128}", str(ref.get("sig"))), "bad_signature", "sig: 128 hex digits")
    attempt("bad_signature", key.verify, bytes.fromhex(ref["sig"]), tags[1] + hashlib.sha256(tags[0] + raw).digest())
    return Signed(raw, entry_hash(raw), check_fields(decode(raw)) if fields else decode(raw))


def terms(spec: object) -> list[tuple[int, bool]]:
    """``"2d6!+1d8"`` -> ``[(6, True), (6, True), (8, False)]``: each base die's faces, and whether it explodes."""
    check(type(spec) is str and len(spec) <= 800 and re.fullmatch(SPEC, spec), "bad_spec", repr(spec))
    dice = [(int(n), bang == "!") for count, n, bang in re.findall(r"(\d+)d(\d+)(!?)", spec) for _ in range(int(count))]
    check(all(2 <= n <= 1000 for n, _ in dice) and len(dice) <= MAX_DICE, "bad_spec", "2-1000 faces, 100 dice at most")
    return dice


def roll_message(e: dict) -> str:
    """M (§3.4): only what the server cannot steer; positions: the re-rolled ones, "+" for an extension (§3.6b)."""
    places = "+" if e["kind"] == "extend" else ",".join(map(str, e.get("rerolled") or ())) or "-"
    return ":".join([FORMAT, e["campaign"], str(e["seq"]), e["client_seed"], e["spec"], e.get("parent") or "-", places])


class Stream:
    """The dice of one entry (§3.4): the bytes of HMAC-SHA256(seed, M ":" j), j = 0, 1, …, read in order."""

    def __init__(self, seed: bytes, message: str) -> None:
        self.seed, self.message, self.blocks, self.consumed = seed, message, [], 0

    def read(self, size: int) -> int:
        """The next ``size`` bytes, as a big-endian number (verify_roll.py records each one)."""
        while len(self.blocks) * 32 < self.consumed + size:  # a die may straddle two blocks
            self.blocks.append(hmac.digest(self.seed, f"{self.message}:{len(self.blocks)}".encode(), "sha256"))
        self.consumed += size
        return int.from_bytes(b"".join(self.blocks)[self.consumed - size : self.consumed])

    def roll(self, faces: int) -> int:
        size = ((faces - 1).bit_length() + 7) // 8  # k bytes: the smallest k with 256**k >= faces
        value = self.read(size)  # a value that would favour low faces is rejected: the die reads the next bytes
        return value % faces + 1 if value < 256**size - 256**size % faces else self.roll(faces)


def draw(stream: Stream, spec: str) -> list[int]:
    """The base dice; then (§3.4b) one walk from the first die adds a die for each die of a "!" term
    showing its maximum (added dice may explode too), up to MAX_DICE dice in all."""
    faces, dice = terms(spec), []
    for n, explodes in faces:  # the list grows as we walk it: added dice come after the base ones, in order
        dice.append(stream.roll(n))
        if explodes and dice[-1] == n and len(faces) < MAX_DICE:
            faces.append((n, True))
    return dice


def check_dice(opened: Opened, parent: Opened | None = None, stream_type=Stream) -> Stream:
    """Re-derive a roll's dice from its seed (§3.4, §3.6, §3.6b); return the stream as evidence."""
    e, p = opened.entry, parent.entry if parent else {}
    stream = stream_type(bytes.fromhex(e["seed"]), roll_message(e))
    if e["kind"] != "roll":  # the version it changes: named, an earlier roll of the campaign, sealed alike
        check(parent, "parent_missing", "a sealed parent needs its opening")
        link = p["kind"] in ROLL_KINDS and p["campaign"] == e["campaign"] and p["seq"] < e["seq"]
        check(parent.hash.hex() == e["parent"] and link and p["time"] <= e["time"], "parent_mismatch", "not its parent")
        check(parent.audience in (None, opened.audience), "sealed_child_mismatch", "a sealed roll's: sealed alike")
    if e["kind"] == "reroll":  # the parent's dice, with new ones at the given positions
        check(p["spec"] == e["spec"], "parent_mismatch", "another pool")
        check(p["kind"] != "extend" and "!" not in e["spec"], "unspecified_reroll", "not defined in v1.1")
        faces, at = [n for n, _ in terms(e["spec"])], e["rerolled"]
        check(at and at == sorted(set(at)) and 0 <= at[0] and at[-1] < len(faces), "bad_positions")
        new = {i: stream.roll(faces[i]) for i in at}
        drawn, dice = list(new.values()), [new.get(i, die) for i, die in enumerate(p["dice"])]
    else:  # a roll; an extension: the parent's dice followed by the added ones
        dice = p.get("dice", []) + (drawn := draw(stream, e["spec"]))
    check(drawn == e.get("drawn", drawn) and dice == e["dice"], "dice_mismatch")
    return stream


def content(signed: Signed, opening_b64: object = None) -> Opened | None:
    """What an entry says: itself; for a sealed one its checked opening (§3.7), None without it."""
    if (o := signed.entry)["kind"] != SEALED or opening_b64 is None:
        return None if o["kind"] == SEALED else Opened(signed.hash, o)
    raw = attempt("bad_opening", base64.b64decode, opening_b64, validate=True)
    check(commitment(raw) == o["commitment"], "commitment_mismatch")
    body = decode(raw)  # a roll of the same slot (equal values; check_fields below checks their types)
    check(all(body.get(k) == o[k] for k in SHARED) and body.get("kind") in ROLL_KINDS, "opening_mismatch")
    check_fields(body, extra={"nonce": HEX, "audience": "", "commitment": ""})
    check(len(body["client_seed"]) >= SEALED_MIN_CLIENT_SEED, "weak_client_seed")
    return Opened(signed.hash, body, o["audience"])


def verify(bundle: object, key: Ed25519PublicKey, stream_type=Stream) -> Proof:
    """Check a roll bundle (§3.10) completely; raise RollogError at the first fault. The optional
    ``head`` and ``children`` are navigation, outside the roll's proof (verify_roll.py checks the head)."""
    check(isinstance(bundle, dict) and bundle.get("format") == FORMAT, "bad_bundle", f"not a {FORMAT} bundle")
    e = (signed := load(bundle, key)).entry  # entry_b64 and sig are at the top level
    check(e["kind"] in (*ROLL_KINDS, SEALED), "not_a_roll")
    check(bundle.get("permalink") == permalink(signed.hash), "permalink_mismatch")  # copies agree with the bytes
    check(bundle.get("entry_hash", signed.hash.hex()) == signed.hash.hex(), "hash_mismatch")
    check(bundle.get("entry") in (None, e), "entry_copy_mismatch")
    # The seed's slot belongs to this epoch, opened earlier under the pinned key (§3.2).
    o = (epoch := load(bundle.get("epoch_open"), key)).entry
    same = (o["kind"], o["campaign"], o["epoch"]) == ("epoch_open", e["campaign"], e["epoch"])
    check(same and o["seq"] < e["seq"], "bad_epoch_open", "another campaign's or epoch's, or later")
    check(o["key"] == key.public_bytes_raw().hex(), "key_mismatch")
    check(e["epoch_index"] <= o["length"], "slot_out_of_range", f"slot {e['epoch_index']} of {o['length']}")
    check(o["time"] <= e["time"], "time_backwards", "before its epoch")
    check(hash_chain(bytes.fromhex(e["seed"]), e["epoch_index"]).hex() == o["anchor"], "seed_not_committed")
    check(e["kind"] == SEALED or bundle.get("opening_b64") is None, "bad_bundle", "an opening for a public roll")
    opened, parent = content(signed, bundle.get("opening_b64")), None
    if opened is not None and opened.entry["kind"] != "roll":  # its parent, opened too when sealed
        parent = content(load(bundle.get("parent"), key), bundle["parent"].get("opening_b64"))
    return Proof(signed, epoch, parent, check_dice(opened, parent, stream_type) if opened else None, opened)


if __name__ == "__main__":  # the command line (see above): prints OK or FAIL, exits with 0, 1 or 2
    try:
        with open(sys.argv[1], encoding="utf-8") as handle:
            bundle, key = json.load(handle), Ed25519PublicKey.from_public_bytes(bytes.fromhex(sys.argv[2]))
        e = ((proof := verify(bundle, key)).content or proof.entry).entry
    except (RollogError, KeyError, TypeError, AttributeError) as exc:  # not valid; the last three: a malformed bundle
        sys.exit(print(f"FAIL: {getattr(exc, 'code', 'bad_bundle')} {exc}") or 1)
    except (IndexError, OSError, ValueError, RecursionError) as exc:  # no bundle, or no key
        sys.exit(print(f"usage: python3 verify.py ROLL.json PUBLIC_KEY_HEX\nERROR: {exc!r}", file=sys.stderr) or 2)
    said = "sealed: chain position verified, content not disclosed"
    if proof.content:  # and who made the client seed: when the server did, fairness rests on the operator
        note = " (fairness rests on the operator)" if e["client_seed_source"] == "server" else ""
        said = f"{e['spec']} -> {e['dice']}, client seed: {e['client_seed_source']}{note}"
    print(f"OK {permalink(proof.entry.hash)}: {e['campaign']} #{e['seq']} {e['time']}: {said}")
