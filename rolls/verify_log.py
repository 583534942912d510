"""Campaign audit of a rollog/v1 log export (L2, §3.8).

Usage::

    python -m rolls.verify_log EXPORT.json [MORE_PAGES.json ...] PUBKEY_HEX [--checkpoint CP.json ...]

EXPORT.json is the campaign log export (``/partidas/<campaign>/tiradas/registro.json``); when the
export is paginated, give every page in order, starting at seq 0. A bare list
``[{"entry_b64", "sig"}, …]`` is accepted as well.

Every entry must pass the single-roll checks of :mod:`rolls.verify`, and
the log as a whole must have: contiguous ``seq`` and an unbroken ``prev``
chain, time that never goes back, seed slots used in order, epochs opened only
once the previous one is used up, unique client seeds, at most one re-roll per
version, and ``seen`` naming an earlier entry of the current epoch. Every
problem is reported with its reason; the audit does not stop at the first.

With ``--checkpoint CP.json`` (repeatable), the export is also checked
against daily checkpoints kept earlier (docs/verification.md, "Daily
checkpoints"): a log shorter than a checkpoint was truncated, one whose entry
at the checkpoint's seq has another hash was forked.

Like ``verify_roll``, this needs ``verify.py`` and ``verify_roll.py`` next to
it (in a ``rolls/`` folder), the standard library and ``cryptography``.
Exit status: 0 clean, 1 problems found, 2 usage errors.
"""

from __future__ import annotations

import base64
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from rolls import verify
from rolls.verify import FORMAT, ROLL_KINDS, SEALED, Opened, RollogError, check
from rolls.verify_roll import SEALED_UNDISCLOSED, LoadedEntry, explain, parse_public_key, read_json

ZERO_HASH = "0" * 64


@dataclass(frozen=True)
class Problem:
    position: int  # index in the export, counted from 0
    seq: int | None  # the entry's own seq, when it could be read
    code: str
    message: str

    def __str__(self) -> str:
        where = f"#{self.seq}" if self.seq is not None else "?"
        return f"FAIL entrada {where} (posición {self.position}) [{self.code}]: {self.message}"


@dataclass
class Epoch:
    number: int
    length: int
    open_seq: int
    next_index: int = 1
    anchor: bytes = b""
    # The latest seed proven to hash down to the anchor; checking each new
    # seed against it costs a few hashes instead of up to L per entry.
    known_seed: bytes = b""
    known_index: int = 0


@dataclass
class Audit:
    """Walks the export once, in order, collecting problems."""

    public_key: Ed25519PublicKey
    problems: list[Problem] = field(default_factory=list)
    campaign: str | None = None
    expected_seq: int = 0
    prev_hash: str = ZERO_HASH
    last_time: str | None = None
    epoch: Epoch | None = None
    entries: dict[str, LoadedEntry] = field(default_factory=dict)  # hash hex -> entry
    # hash hex -> what the roll says (sealed entries only when the export opens them)
    contents: dict[str, Opened] = field(default_factory=dict)
    sealed: int = 0
    undisclosed: int = 0
    hash_of_seq: dict[int, str] = field(default_factory=dict)
    client_seeds: dict[str, int] = field(default_factory=dict)  # client seed -> seq
    children: dict[str, int] = field(default_factory=dict)  # parent hash -> child seq
    count: int = 0
    head: LoadedEntry | None = None

    def problem(self, position: int, seq: int | None, code: str, message: str) -> None:
        self.problems.append(Problem(position, seq, code, message))

    def fault(self, position: int, seq: int | None, exc: RollogError) -> None:
        """A fault found by rolls.verify, explained in Spanish."""
        self.problem(position, seq, exc.code, explain(exc).message)

    # --- per entry ------------------------------------------------------------

    def add(self, position: int, ref: object) -> None:
        self.count += 1
        try:
            loaded = LoadedEntry(*verify.load(ref, self.public_key, fields=False))
        except RollogError as exc:
            self.fault(position, None, exc)
            self.skip_untrusted(ref)
            return
        if loaded.hash_hex in self.entries:
            seq = loaded.entry.get("seq")
            self.problem(position, seq, "duplicate_entry", "La misma entrada aparece dos veces.")
            return
        try:
            verify.check_fields(loaded.entry)
        except RollogError as exc:
            self.fault(position, loaded.entry.get("seq"), exc)
            self.advance(loaded)
            return
        self.check_order(position, loaded)
        self.check_kind(position, loaded, ref)
        self.advance(loaded)

    def skip_untrusted(self, ref: object) -> None:
        """Keep the chain going past an entry whose signature failed.

        Its content is not trusted, but its bytes still have a hash, so the
        next entry's ``prev`` is checked against what is really in the export.
        """
        self.expected_seq += 1
        try:
            entry_b64 = ref.get("entry_b64") if isinstance(ref, Mapping) else None
            raw = verify.attempt("bad_bundle", base64.b64decode, entry_b64, validate=True)
        except RollogError:
            return
        self.prev_hash = verify.entry_hash(raw).hex()

    def advance(self, loaded: LoadedEntry) -> None:
        self.prev_hash = loaded.hash_hex
        self.entries[loaded.hash_hex] = loaded
        self.head = loaded
        seq = loaded.entry.get("seq")
        if isinstance(seq, int):
            self.hash_of_seq.setdefault(seq, loaded.hash_hex)
            self.expected_seq = max(self.expected_seq, seq + 1)
        else:
            self.expected_seq += 1

    def check_order(self, position: int, loaded: LoadedEntry) -> None:
        e = loaded.entry
        seq = e["seq"]
        if self.campaign is None:
            self.campaign = e["campaign"]
        elif e["campaign"] != self.campaign:
            self.problem(position, seq, "campaign_mismatch", f"Entrada de otra campaña: {e['campaign']}.")
        if seq in self.hash_of_seq:
            self.problem(
                position,
                seq,
                "equivocation",
                f"Dos entradas firmadas distintas con seq {seq}: el operador se contradice.",
            )
        elif seq > self.expected_seq:
            missing = f"{self.expected_seq}" if seq == self.expected_seq + 1 else (f"{self.expected_seq}–{seq - 1}")
            self.problem(position, seq, "seq_gap", f"Faltan entradas: seq {missing}.")
        elif seq < self.expected_seq:
            self.problem(position, seq, "seq_out_of_order", f"Se esperaba seq {self.expected_seq}.")
        if e["prev"] != self.prev_hash:
            self.problem(position, seq, "prev_mismatch", "prev no es el hash de la entrada anterior.")
        # Times were validated as fixed-width UTC text, so text order is time order.
        if self.last_time is not None and e["time"] < self.last_time:
            self.problem(position, seq, "time_backwards", f"{e['time']} es anterior a {self.last_time}.")
        else:
            self.last_time = e["time"]

    def check_kind(self, position: int, loaded: LoadedEntry, ref: object) -> None:
        kind = loaded.entry["kind"]
        if kind == "epoch_open":
            self.open_epoch(position, loaded.entry)
        elif kind in ROLL_KINDS:
            self.check_roll(position, loaded, verify.content(loaded))
        elif kind == SEALED:
            self.sealed += 1
            opening = ref.get("opening_b64") if isinstance(ref, Mapping) else None
            try:
                content = verify.content(loaded, opening)
            except RollogError as exc:
                self.fault(position, loaded.entry["seq"], exc)
                content = None
            else:
                if content is None:
                    self.undisclosed += 1
            self.check_roll(position, loaded, content)

    def open_epoch(self, position: int, e: Mapping[str, Any]) -> None:
        seq = e["seq"]
        expected = 1 if self.epoch is None else self.epoch.number + 1
        if e["epoch"] != expected:
            self.problem(position, seq, "epoch_number", f"Se esperaba la época {expected}.")
        if self.epoch is not None and self.epoch.next_index <= self.epoch.length:
            left = self.epoch.length - self.epoch.next_index + 1
            self.problem(
                position,
                seq,
                "epoch_opened_early",
                f"Época nueva con {left} ranuras sin usar en la época {self.epoch.number}.",
            )
        if e["key"] != self.public_key.public_bytes_raw().hex():
            self.problem(position, seq, "key_mismatch", "La época declara otra clave de firma.")
        anchor = bytes.fromhex(e["anchor"])
        self.epoch = Epoch(e["epoch"], e["length"], seq, anchor=anchor, known_seed=anchor)

    def check_roll(self, position: int, loaded: LoadedEntry, content: Opened | None) -> None:
        """A used slot; with its content known, the roll itself too.

        A sealed entry given without its opening is a used slot whose content
        is not disclosed (§3.7): slot order, seed, chain and time still apply.
        """
        seq = loaded.entry["seq"]
        epoch = self.epoch
        if epoch is None:
            self.problem(position, seq, "no_epoch", "Tirada antes de abrir ninguna época.")
            return
        self.check_slot(position, loaded.entry, epoch)
        if content is None:
            return
        self.contents[loaded.hash_hex] = content
        e = content.entry
        self.check_client_seed(position, e)
        self.check_seen(position, e, epoch)
        parent = self.find_parent(position, e)
        if e["kind"] != "roll" and parent is None:
            return
        try:
            verify.check_dice(content, parent)
        except RollogError as exc:
            self.fault(position, seq, exc)

    def check_slot(self, position: int, e: Mapping[str, Any], epoch: Epoch) -> None:
        seq, index = e["seq"], e["epoch_index"]
        if e["epoch"] != epoch.number:
            self.problem(position, seq, "wrong_epoch", f"Usa la época {e['epoch']}, no la actual.")
            return
        if index != epoch.next_index:
            self.problem(
                position,
                seq,
                "slot_out_of_order",
                f"Usa la ranura {index}; tocaba la {epoch.next_index} (ni saltos ni repeticiones).",
            )
        if index > epoch.length:
            self.problem(position, seq, "slot_out_of_range", f"La época solo tiene {epoch.length}.")
            return
        epoch.next_index = max(epoch.next_index, index + 1)
        # A reused slot (already reported) is still checked, from the anchor.
        known, known_index = (epoch.known_seed, epoch.known_index)
        if index <= known_index:
            known, known_index = epoch.anchor, 0
        if verify.hash_chain(bytes.fromhex(e["seed"]), index - known_index) != known:
            self.fault(position, seq, RollogError("seed_not_committed"))
            return
        if index > epoch.known_index:
            epoch.known_seed, epoch.known_index = bytes.fromhex(e["seed"]), index

    def check_client_seed(self, position: int, e: Mapping[str, Any]) -> None:
        first = self.client_seeds.setdefault(e["client_seed"], e["seq"])
        if first != e["seq"]:
            self.problem(
                position,
                e["seq"],
                "client_seed_reused",
                f"Semilla del cliente ya usada en #{first}.",
            )

    def check_seen(self, position: int, e: Mapping[str, Any], epoch: Epoch) -> None:
        """The client saw a head at or after the epoch_open: the anchor came first."""
        seen = self.entries.get(e["seen"])
        seen_seq = seen.entry.get("seq") if seen else None
        if not isinstance(seen_seq, int) or not epoch.open_seq <= seen_seq < e["seq"]:
            self.problem(
                position,
                e["seq"],
                "seen_invalid",
                "seen no nombra una entrada anterior posterior a la apertura de la época.",
            )

    def find_parent(self, position: int, e: Mapping[str, Any]) -> Opened | None:
        if e["kind"] == "roll":
            return None
        parent = self.contents.get(e["parent"])
        if parent is None:
            known = self.entries.get(e["parent"])
            if known is not None and known.entry.get("kind") == SEALED:
                message = "La tirada madre está sellada y la exportación no trae su apertura."
                self.problem(position, e["seq"], "parent_undisclosed", message)
            elif known is not None:
                self.problem(position, e["seq"], "parent_not_roll", "La entrada madre no es una tirada.")
            else:
                self.problem(position, e["seq"], "parent_unknown", "La tirada madre no está antes en el registro.")
            return None
        first = self.children.setdefault(e["parent"], e["seq"])
        if first != e["seq"]:
            self.problem(
                position,
                e["seq"],
                "second_reroll",
                f"Esa versión ya se cambió en #{first}: solo cabe una repetición o extensión por versión.",
            )
        return parent


@dataclass(frozen=True)
class AuditReport:
    count: int
    head: LoadedEntry | None
    problems: tuple[Problem, ...]
    sealed: int = 0
    undisclosed: int = 0
    entries: tuple[LoadedEntry, ...] = ()  # every entry whose signature held, in export order

    @property
    def ok(self) -> bool:
        return not self.problems and self.head is not None

    @property
    def codes(self) -> list[str]:
        return [p.code for p in self.problems]


def audit_log(refs: Iterable[object], public_key: Ed25519PublicKey) -> AuditReport:
    """Audit signed entries ``{entry_b64, sig}`` given in log order from seq 0."""
    audit = Audit(public_key)
    for position, ref in enumerate(refs):
        audit.add(position, ref)
    problems = list(audit.problems)
    if audit.count == 0:
        problems.append(Problem(0, None, "empty", "La exportación no contiene entradas."))
    entries = tuple(audit.entries.values())
    return AuditReport(audit.count, audit.head, tuple(problems), audit.sealed, audit.undisclosed, entries)


# --- Daily checkpoints (docs/verification.md) ----------------------------------

CHECKPOINT = b"rollog/v1/checkpoint\n"
CHECKPOINT_FIELDS = {**verify.COMMON, "prev": "", "kind": '"checkpoint"', "head": verify.HEX, "date": f'"{verify.DAY}"'}


def load_checkpoint(document: object, public_key: Ed25519PublicKey) -> dict[str, Any]:
    """A daily checkpoint's body: signed as Ed25519 over CHECKPOINT + SHA-256(CHECKPOINT + body)."""
    signed = verify.load(
        document, public_key, fields=False, name="checkpoint_b64", tags=(CHECKPOINT, CHECKPOINT), code="bad_checkpoint"
    )
    body = signed.entry
    check(body.keys() == CHECKPOINT_FIELDS.keys() - {"prev"}, "bad_checkpoint", str(sorted(body)))
    verify.check_fields(body, CHECKPOINT_FIELDS)
    return body


def check_checkpoint(body: Mapping[str, Any], entries: Iterable[Any]) -> None:
    """A log's signed entries (``verify.load`` results, or ``LoadedEntry``: with ``entry_bytes`` and
    ``entry``) still hold the checkpoint's head: not truncated, not forked."""
    hashes: dict[object, str] = {}
    for signed in entries:
        check(signed.entry.get("campaign") == body["campaign"], "campaign_mismatch", "another campaign's checkpoint")
        hashes.setdefault(signed.entry.get("seq"), verify.entry_hash(signed.entry_bytes).hex())
    check(body["seq"] in hashes, "truncated", f"entries dropped since the checkpoint of {body['date']}")
    check(hashes[body["seq"]] == body["head"], "fork", f"entry {body['seq']} is not the one checkpointed")


@dataclass(frozen=True)
class CheckpointProblem:
    index: int  # which --checkpoint, counted from 1
    date: str | None
    code: str
    message: str

    def __str__(self) -> str:
        return f"FAIL punto de control {self.index} ({self.date or '?'}) [{self.code}]: {self.message}"


def check_checkpoints(
    report: AuditReport, documents: Iterable[object], public_key: Ed25519PublicKey
) -> list[CheckpointProblem]:
    """Each signed checkpoint kept earlier against the audited export."""
    problems = []
    for index, document in enumerate(documents, start=1):
        body: Mapping[str, Any] = {}
        try:
            body = load_checkpoint(document, public_key)
            check_checkpoint(body, report.entries)
        except RollogError as exc:
            message = explain(exc).message
            if exc.code == "truncated":
                message = (
                    f"El registro es más corto que el punto de control firmado el {body['date']} "
                    f"(entrada #{body['seq']}): se han borrado entradas."
                )
            elif exc.code == "fork":
                message = f"La entrada #{body['seq']} no es la que firmó el punto de control del {body['date']}."
            problems.append(CheckpointProblem(index, body.get("date"), exc.code, message))
    return problems


def export_entries(document: object) -> list[object]:
    """The entries of one export page (a dict with "entries", or a bare list)."""
    if isinstance(document, list):
        return document
    if not isinstance(document, Mapping) or not isinstance(document.get("entries"), list):
        raise RollogError("bad_export", "La exportación no tiene una lista de entradas.")
    if document.get("format", FORMAT) != FORMAT:
        raise RollogError("bad_export", f"La exportación no es {FORMAT}.")
    return document["entries"]


def describe(report: AuditReport) -> list[str]:
    lines = [str(p) for p in report.problems]
    if report.head is None:
        return [*lines, f"FAIL: ninguna entrada válida ({len(report.problems)} problemas)."]
    head = report.head.entry
    summary = (
        f"{report.count} entradas de {head.get('campaign')}; cabeza #{head.get('seq')} "
        f"{report.head.hash_hex[:16]}… ({head.get('time')})"
    )
    if report.ok:
        lines = [
            f"OK: registro íntegro ({FORMAT}): {summary}",
            f"  hash completo de la cabeza: {report.head.hash_hex}",
            "  Compáralo con la cabeza que guardaste antes (correo, navegador).",
        ]
        if report.sealed:
            lines.append(
                f"  {report.sealed} tiradas selladas; {report.undisclosed} sin apertura: {SEALED_UNDISCLOSED}"
                " (sealed: chain position verified, content not disclosed)."
            )
        return lines
    return [*lines, f"FAIL: {len(report.problems)} problemas en {summary}"]


def split_checkpoints(args: list[str]) -> tuple[list[str], list[str]] | None:
    """``[... --checkpoint CP.json ...]`` -> (the other arguments, the checkpoint paths); None if malformed."""
    rest, paths = [], []
    words = iter(args)
    for word in words:
        if word == "--checkpoint":
            path = next(words, None)
            if path is None:
                return None
            paths.append(path)
        else:
            rest.append(word)
    return rest, paths


def main(argv: Sequence[str] | None = None) -> int:
    split = split_checkpoints(list(sys.argv[1:] if argv is None else argv))
    if split is None or len(split[0]) < 2:
        print(
            "uso: python -m rolls.verify_log EXPORTACION.json [MAS_PAGINAS.json …] CLAVE_PUBLICA_HEX"
            " [--checkpoint PUNTO.json …]",
            file=sys.stderr,
        )
        return 2
    args, checkpoint_paths = split
    try:
        public_key = parse_public_key(args[-1])
        refs = [ref for path in args[:-1] for ref in export_entries(read_json(path))]
        checkpoints = [read_json(path) for path in checkpoint_paths]
    except RollogError as exc:
        print(f"ERROR: {exc.message}", file=sys.stderr)
        return 2
    except (OSError, ValueError, RecursionError) as exc:
        print(f"ERROR: no se puede leer la exportación: {exc}", file=sys.stderr)
        return 2
    report = audit_log(refs, public_key)
    print("\n".join(describe(report)))
    failed = check_checkpoints(report, checkpoints, public_key)
    for problem in failed:
        print(problem)
    if checkpoints and not failed:
        # Only a log that passed the audit may be called intact; a failed one merely holds the checkpointed entries.
        verdict = (
            "el registro los contiene, sin recortes ni cambios."
            if report.ok
            else "sus entradas están en el registro, pero la auditoría ha fallado (arriba): el registro no es íntegro."
        )
        print(f"  Puntos de control comprobados: {len(checkpoints)}; {verdict}")
    return 0 if report.ok and not failed else 1


if __name__ == "__main__":
    sys.exit(main())
