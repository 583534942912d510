"""The offline verifiers against a valid log and tampered copies of it.

The valid log is the six entries of test vectors T1–T6 (built by the server
core), optionally extended to use up epoch 1 and open epoch 2. Each tampered
copy breaks one rule and must be rejected with that rule's own reason code.
"""

from __future__ import annotations

import ast
import base64
import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from rolls import rollog, verify_log, verify_roll
from rolls.rollog import SignedEntry
from rolls.verify_roll import RollogError, parse_public_key, verify_bundle
from tests.rolls.test_vectors import (
    CAMPAIGN,
    KEY_SEED_HEX,
    LENGTH,
    PUBLIC_KEY_HEX,
    ROOT_HEX,
    SEED_CHAIN,
    VECTORS,
    build_vector_log,
)

REPO = Path(__file__).resolve().parents[2]
KEY = rollog.load_signing_key(KEY_SEED_HEX)
PUBLIC_KEY = parse_public_key(PUBLIC_KEY_HEX)
ROOT = bytes.fromhex(ROOT_HEX)
ROOT_2 = hashlib.sha256(b"rollog/v1 TEST second epoch root").digest()
OTHER_KEY = rollog.load_signing_key(hashlib.sha256(b"an attacker's own key").digest())
OTHER_PUBLIC_HEX = rollog.public_key_hex(OTHER_KEY.public_key())


# --- Building logs ---------------------------------------------------------------


@pytest.fixture(scope="module")
def log() -> list[SignedEntry]:
    return build_vector_log()


def add_roll(log: list[SignedEntry], slot: int, *, root: bytes = ROOT, epoch: int = 1, **fields) -> SignedEntry:
    """A valid next roll (unless ``fields`` says otherwise), signed with the test key."""
    seq = len(log)
    defaults = dict(
        campaign=CAMPAIGN,
        seq=seq,
        prev=log[-1].hash_hex,
        time=f"2025-01-15T21:{seq:02d}:00Z",
        user="bruno",
        character="Jimena",
        scene="escena-2",
        purpose=f"Tirada {seq}",
        spec="3d10",
        epoch=epoch,
        epoch_index=slot,
        seed=rollog.seed_for_slot(root, LENGTH, slot),
        client_seed=f"cs-{seq}",
        seen=log[-1].hash_hex,
    )
    return rollog.build_roll(KEY, **(defaults | fields))


def add_reroll(log: list[SignedEntry], parent: SignedEntry, slot: int, **fields) -> SignedEntry:
    seq = len(log)
    defaults = dict(
        parent=parent,
        positions=[0],
        seq=seq,
        prev=log[-1].hash_hex,
        time=f"2025-01-15T21:{seq:02d}:00Z",
        user="alicia",
        purpose="Aspecto «Tozudo»: repite el dado 0",
        epoch=1,
        epoch_index=slot,
        seed=rollog.seed_for_slot(ROOT, LENGTH, slot),
        client_seed=f"cs-{seq}",
        seen=log[-1].hash_hex,
    )
    return rollog.build_reroll(KEY, **(defaults | fields))


def add_epoch(log: list[SignedEntry], epoch: int, root: bytes) -> SignedEntry:
    seq = len(log)
    return rollog.build_epoch_open(
        KEY,
        campaign=CAMPAIGN,
        seq=seq,
        prev=log[-1].hash_hex,
        time=f"2025-01-15T21:{seq:02d}:00Z",
        epoch=epoch,
        anchor=rollog.epoch_anchor(root, LENGTH),
        length=LENGTH,
    )


def extended_log(log: list[SignedEntry]) -> list[SignedEntry]:
    """T1–T6, then: re-roll of the tip #4, slots 7–8, epoch 2, and its first roll."""
    out = list(log)
    out.append(add_reroll(out, out[4], 6, positions=[0, 2]))
    out.append(add_roll(out, 7))
    out.append(add_roll(out, 8, spec="2d6+1d8"))
    out.append(add_epoch(out, 2, ROOT_2))
    out.append(add_roll(out, 1, root=ROOT_2, epoch=2))
    return out


def edited(signed: SignedEntry, signer=KEY, **changes) -> SignedEntry:
    """The operator rewrites an entry and signs it again (by default with the real key)."""
    return rollog.sign_entry(signed.entry | changes, signer)


def unsigned_edit(signed: SignedEntry, **changes) -> SignedEntry:
    """A database-level edit: new bytes, old signature."""
    raw = rollog.canonical_bytes(signed.entry | changes)
    return SignedEntry.from_stored(raw, signed.signature)


# --- Running the verifiers ----------------------------------------------------------


def bundle(entry: SignedEntry, epoch_open: SignedEntry, parent: SignedEntry | None = None, **kw) -> dict:
    return rollog.roll_bundle(entry, epoch_open=epoch_open, public_key=PUBLIC_KEY_HEX, parent=parent, **kw)


def bundle_code(document: dict, public_key=PUBLIC_KEY) -> str | None:
    try:
        verify_bundle(document, public_key)
    except RollogError as exc:
        return exc.code
    return None


def audit(entries: list[SignedEntry], public_key=PUBLIC_KEY) -> list[tuple[int | None, str]]:
    report = verify_log.audit_log([e.ref() for e in entries], public_key)
    return [(p.seq, p.code) for p in report.problems]


def write_json(tmp_path: Path, name: str, document: object) -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(document, ensure_ascii=False), encoding="utf-8")
    return path


# --- Valid bundles and logs -------------------------------------------------------------


@pytest.mark.parametrize("seq", [1, 2, 3, 5])
def test_every_vector_roll_verifies(log, seq):
    proof = verify_bundle(bundle(log[seq], log[0], head=log[5]), PUBLIC_KEY)
    assert proof.entry.entry["dice"] == VECTORS[seq].dice
    assert verify_roll.rejected(proof.stream) == VECTORS[seq].rejected
    assert proof.warnings == ()


def test_reroll_bundle_verifies_with_its_parent(log):
    proof = verify_bundle(bundle(log[4], log[0], log[3], children=[], head=log[5]), PUBLIC_KEY)
    assert proof.parent is not None and proof.parent.hash_hex == VECTORS[3].hash
    assert proof.entry.entry["dice"] == [9, 9, 10]


def test_a_head_older_than_the_roll_or_unsigned_is_refused(log):
    # The head is outside the roll's proof (rolls/verify.py ignores it); the explainer checks it.
    assert bundle_code(bundle(log[5], log[0], head=log[3])) == "bad_head"
    assert bundle_code(bundle(log[5], log[0], head=unsigned_edit(log[5], seq=6))) == "bad_signature"
    assert bundle_code(bundle(log[5], log[0], head=log[5])) is None


def test_bundle_shape(log):
    document = bundle(log[4], log[0], log[3], head=log[5], children=["abc"])
    assert list(document) == [
        "format",
        "permalink",
        "entry_hash",
        "entry_b64",
        "sig",
        "entry",
        "epoch_open",
        "parent",
        "children",
        "head",
        "public_key",
    ]
    assert document["format"] == "rollog/v1"
    assert document["permalink"] == "gdinemzccoyud5pjbvpfjswt"
    assert document["entry_hash"] == VECTORS[4].hash
    assert base64.b64decode(document["entry_b64"]) == VECTORS[4].entry.encode()
    assert document["sig"] == VECTORS[4].sig
    assert document["epoch_open"] == {
        "entry_b64": base64.b64encode(VECTORS[0].entry.encode()).decode(),
        "sig": VECTORS[0].sig,
    }
    assert document["parent"]["sig"] == VECTORS[3].sig
    assert document["head"]["sig"] == VECTORS[5].sig
    assert document["public_key"] == PUBLIC_KEY_HEX


def test_main_prints_the_verified_roll(log, tmp_path, capsys):
    path = write_json(tmp_path, "roll.json", bundle(log[4], log[0], log[3]))
    assert verify_roll.main([str(path), PUBLIC_KEY_HEX]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "OK: tirada verificada (rollog/v1)",
        "  campaña hitos-demo, entrada #4 (repetición de la entrada #3), 2025-01-15T20:11:00Z",
        "  quién: alicia / Rodrigo, escena escena-1",
        "  motivo: Aspecto «Veterano de la frontera»: repite los dados 1 y 2",
        "  dados: 3d10 [9, 2, 1] -> posiciones [1, 2] repetidas -> [9, 10] -> [9, 9, 10]",
        "  bytes usados: 2, rechazados: ninguno",
        "  semilla x_4 encadenada con el ancla de la época 1",
        "  semilla del cliente: 5eed0004dddddddddddddddddddddd00 (browser)",
        "  hash de la entrada: 30d0d2332213b141f5e90d5e54cad309164ca9e3e91a2889244b58b0b7adb3de",
        "  enlace permanente: gdinemzccoyud5pjbvpfjswt",
        "  firma Ed25519 válida con la clave fijada",
    ]


def test_main_reports_rejected_bytes(log, tmp_path, capsys):
    path = write_json(tmp_path, "roll.json", bundle(log[2], log[0]))
    assert verify_roll.main([str(path), PUBLIC_KEY_HEX]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[4:6] == [
        "  dados: 3d10 -> [10, 5, 3] (orden de generación)",
        "  bytes usados: 5, rechazados: [250, 254]",
    ]


def test_vector_log_audits_clean(log):
    assert audit(log) == []


def test_extended_log_audits_clean(log):
    longer = extended_log(log)
    assert [e.entry["kind"] for e in longer[6:]] == ["reroll", "roll", "roll", "epoch_open", "roll"]
    assert audit(longer) == []


def test_roll_of_a_second_epoch_verifies_against_that_epoch(log):
    longer = extended_log(log)
    assert bundle_code(bundle(longer[10], longer[9])) is None
    assert bundle_code(bundle(longer[10], longer[0])) == "bad_epoch_open"


def test_export_page_shape_and_main(log, tmp_path, capsys):
    page = rollog.export_page(CAMPAIGN, log, public_key=PUBLIC_KEY_HEX)
    assert page == {
        "format": "rollog/v1",
        "campaign": "hitos-demo",
        "public_key": PUBLIC_KEY_HEX,
        "start": 0,
        "entries": [e.ref() for e in log],
        "next": None,
    }
    path = write_json(tmp_path, "log.json", page)
    assert verify_log.main([str(path), PUBLIC_KEY_HEX]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "OK: registro íntegro (rollog/v1): 6 entradas de hitos-demo; cabeza #5 2e1220f8d81678ec… (2025-01-15T20:15:00Z)",
        f"  hash completo de la cabeza: {VECTORS[5].hash}",
        "  Compáralo con la cabeza que guardaste antes (correo, navegador).",
    ]


def test_paginated_export_and_bare_list(log, tmp_path):
    longer = extended_log(log)
    first = rollog.export_page(CAMPAIGN, longer[:4], public_key=PUBLIC_KEY_HEX, next_url="/c/hitos-demo/log.json?p=2")
    second = rollog.export_page(CAMPAIGN, longer[4:], public_key=PUBLIC_KEY_HEX, start=4)
    paths = [write_json(tmp_path, "p1.json", first), write_json(tmp_path, "p2.json", second)]
    assert verify_log.main([*map(str, paths), PUBLIC_KEY_HEX]) == 0
    bare = write_json(tmp_path, "bare.json", [e.ref() for e in longer])
    assert verify_log.main([str(bare), PUBLIC_KEY_HEX]) == 0
    # The second page alone is not a complete log.
    assert verify_log.main([str(paths[1]), PUBLIC_KEY_HEX]) == 1


# --- Tampered bundles (verify_roll) ------------------------------------------------------


def test_edited_dice_without_the_key_breaks_the_signature(log):
    assert bundle_code(bundle(unsigned_edit(log[1], dice=[10, 10, 10]), log[0])) == "bad_signature"


def test_edited_dice_resigned_by_the_operator_do_not_derive(log):
    assert bundle_code(bundle(edited(log[1], dice=[10, 10, 10]), log[0])) == "dice_mismatch"


def test_edited_reroll_result_is_caught(log):
    assert bundle_code(bundle(edited(log[4], dice=[10, 9, 10]), log[0], log[3])) == "dice_mismatch"
    assert bundle_code(bundle(edited(log[4], drawn=[10, 10], dice=[9, 10, 10]), log[0], log[3])) == "dice_mismatch"


def test_edited_readable_copy_is_caught(log):
    document = bundle(log[1], log[0])
    document["entry"]["dice"] = [10, 10, 10]
    assert bundle_code(document) == "entry_copy_mismatch"


def test_wrong_permalink_or_hash_is_caught(log):
    assert bundle_code(bundle(log[1], log[0]) | {"permalink": VECTORS[2].permalink}) == "permalink_mismatch"
    assert bundle_code(bundle(log[1], log[0]) | {"entry_hash": VECTORS[2].hash}) == "hash_mismatch"


def test_swapped_seed_is_not_committed_by_the_anchor(log):
    # The operator swaps in x_6 for slot 5 and re-derives consistent dice.
    swapped = add_roll(log[:5], 5, seed=bytes.fromhex(SEED_CHAIN[6]))
    assert bundle_code(bundle(swapped, log[0])) == "seed_not_committed"


def test_slot_beyond_the_epoch_is_rejected(log):
    assert bundle_code(bundle(edited(log[5], epoch_index=9), log[0])) == "slot_out_of_range"


def test_wrong_parent_is_caught(log):
    assert bundle_code(bundle(log[4], log[0], log[2])) == "parent_mismatch"
    assert bundle_code(bundle(log[4], log[0], None)) == "bad_bundle"


def test_reroll_positions_must_be_sorted_and_unique(log):
    assert bundle_code(bundle(edited(log[4], rerolled=[2, 1]), log[0], log[3])) == "bad_positions"


def test_forgery_under_another_key(log):
    forged = [edited(e, OTHER_KEY) for e in log[:3]]
    forged[0] = edited(log[0], OTHER_KEY, key=OTHER_PUBLIC_HEX)
    document = rollog.roll_bundle(forged[1], epoch_open=forged[0], public_key=OTHER_PUBLIC_HEX)
    assert bundle_code(document) == "bad_signature"
    # A verifier that trusted the key inside the bundle would accept it (§4 #16).
    assert bundle_code(document, parse_public_key(OTHER_PUBLIC_HEX)) is None


def test_epoch_open_naming_another_key_is_rejected(log):
    assert bundle_code(bundle(log[1], edited(log[0], key=OTHER_PUBLIC_HEX))) == "key_mismatch"


def test_non_canonical_bytes_are_rejected_even_if_signed(log):
    raw = json.dumps(log[1].entry, sort_keys=True, ensure_ascii=False).encode()  # spaces after ":" and ","
    hash_ = rollog.entry_hash(raw)
    forged = SignedEntry(raw, hash_, KEY.sign(verify_roll.signed_message(hash_)))
    assert bundle_code(bundle(forged, log[0])) == "not_canonical"


def test_a_roll_before_its_epoch_is_rejected(log):
    assert bundle_code(bundle(edited(log[1], time="2025-01-15T18:59:59Z"), log[0])) == "time_backwards"


def test_epoch_open_is_not_a_roll(log):
    assert bundle_code(bundle(log[0], log[0])) == "not_a_roll"


def test_bundle_announcing_another_key_gets_a_warning(log):
    proof = verify_bundle(bundle(log[1], log[0]) | {"public_key": OTHER_PUBLIC_HEX}, PUBLIC_KEY)
    assert proof.warnings == ("El paquete anuncia otra clave pública; se ha usado la clave fijada.",)


@pytest.mark.parametrize(
    "document",
    [[], {"format": "rollog/v2"}, {"format": "rollog/v1"}, {"format": "rollog/v1", "entry_b64": "%%", "sig": ""}],
)
def test_malformed_bundles_fail_cleanly(document):
    assert bundle_code(document) in {"bad_bundle", "bad_signature"}


def test_main_prints_the_reason(log, tmp_path, capsys):
    path = write_json(tmp_path, "roll.json", bundle(edited(log[1], dice=[10, 10, 10]), log[0]))
    assert verify_roll.main([str(path), PUBLIC_KEY_HEX]) == 1
    assert (
        capsys.readouterr().out == "FAIL: la tirada NO es válida: Los dados no salen de la semilla. [dice_mismatch]\n"
    )


def test_main_usage_errors(tmp_path, capsys):
    assert verify_roll.main([]) == 2
    assert verify_roll.main([str(tmp_path / "missing.json"), PUBLIC_KEY_HEX]) == 2
    path = write_json(tmp_path, "x.json", {})
    assert verify_roll.main([str(path), "not-a-key"]) == 2
    assert "64 cifras" in capsys.readouterr().err


# --- Tampered logs (verify_log) -----------------------------------------------------------


def test_log_edited_dice_without_the_key(log):
    tampered = [*log[:2], unsigned_edit(log[2], dice=[10, 10, 10]), *log[3:]]
    # The untrusted entry is skipped, so slot 2 and its hash are missing for #3.
    assert audit(tampered) == [
        (None, "bad_signature"),
        (3, "prev_mismatch"),
        (3, "slot_out_of_order"),
        (3, "seen_invalid"),
    ]


def test_log_edited_dice_resigned(log):
    assert audit([*log[:5], edited(log[5], dice=[6, 6, 6, 6, 6])]) == [(5, "dice_mismatch")]


def test_log_dropped_entry(log):
    assert audit([*log[:2], *log[3:]]) == [
        (3, "seq_gap"),
        (3, "prev_mismatch"),
        (3, "slot_out_of_order"),
        (3, "seen_invalid"),
    ]


def test_log_dropped_parent(log):
    assert audit([*log[:3], *log[4:]]) == [
        (4, "seq_gap"),
        (4, "prev_mismatch"),
        (4, "slot_out_of_order"),
        (4, "seen_invalid"),
        (4, "parent_unknown"),
    ]


def test_log_duplicated_entry(log):
    assert audit([*log[:4], log[3], *log[4:]]) == [(3, "duplicate_entry")]


def test_log_two_signed_versions_of_one_seq_prove_equivocation(log):
    # Peek and abort, then re-use seq 5 with a new client seed: both were signed.
    other = add_roll(log[:5], 5, client_seed="otra-semilla")
    assert audit([*log, other]) == [(5, "equivocation"), (5, "prev_mismatch"), (5, "slot_out_of_order")]


def test_log_swapped_seed(log):
    swapped = add_roll(log[:5], 5, seed=bytes.fromhex(SEED_CHAIN[6]))
    assert audit([*log[:5], swapped]) == [(5, "seed_not_committed")]


def test_log_swapped_seed_then_honest_slot(log):
    swapped = add_roll(log[:5], 5, seed=bytes.fromhex(SEED_CHAIN[6]))
    after = add_roll([*log[:5], swapped], 6)
    assert audit([*log[:5], swapped, after]) == [(5, "seed_not_committed")]


def test_log_wrong_parent(log):
    good = add_reroll(list(log), log[3], 6)
    to_epoch = edited(good, parent=log[0].hash_hex)
    assert audit([*log, to_epoch]) == [(6, "parent_not_roll")]
    unknown = edited(good, parent="ab" * 32)
    assert audit([*log, unknown]) == [(6, "parent_unknown")]


def test_log_forgery_under_another_key(log):
    forged = [edited(e, OTHER_KEY) for e in log]
    assert audit(forged) == [(None, "bad_signature")] * 6
    appended = add_roll(list(log), 6)
    assert audit([*log, edited(appended, OTHER_KEY)]) == [(None, "bad_signature")]


def test_log_time_going_back(log):
    assert audit([*log[:5], edited(log[5], time="2025-01-15T20:10:59Z")]) == [(5, "time_backwards")]


def test_log_second_reroll_of_one_version(log):
    branch = add_reroll(list(log), log[3], 6, positions=[0])
    assert audit([*log, branch]) == [(6, "second_reroll")]


def test_log_reroll_of_the_latest_version_is_fine(log):
    assert audit([*log, add_reroll(list(log), log[4], 6)]) == []


def test_log_epoch_opened_early(log):
    assert audit([*log, add_epoch(list(log), 2, ROOT_2)]) == [(6, "epoch_opened_early")]


def test_log_epoch_numbers_follow_on(log):
    longer = extended_log(log)
    renumbered = edited(longer[9], epoch=3)
    rolled = add_roll([*longer[:9], renumbered], 1, root=ROOT_2, epoch=3)
    assert audit([*longer[:9], renumbered, rolled]) == [(9, "epoch_number")]


def test_log_unique_client_seeds(log):
    again = add_roll(list(log), 6, client_seed=VECTORS[1].entry.split('"client_seed":"')[1][:32])
    assert audit([*log, again]) == [(6, "client_seed_reused")]


def test_log_slots_in_order(log):
    assert audit([*log, add_roll(list(log), 7)]) == [(6, "slot_out_of_order")]
    reused = add_roll(list(log), 5, client_seed="fresh")
    assert audit([*log, reused]) == [(6, "slot_out_of_order")]


def test_log_seen_before_the_current_epoch(log):
    longer = extended_log(log)
    stale = add_roll(longer[:10], 1, root=ROOT_2, epoch=2, seen=longer[8].hash_hex)
    assert audit([*longer[:10], stale]) == [(10, "seen_invalid")]


def test_log_seen_unknown_head(log):
    assert audit([*log, add_roll(list(log), 6, seen="cd" * 32)]) == [(6, "seen_invalid")]


def test_log_must_start_with_an_epoch(log):
    assert audit([]) == [(None, "empty")]
    orphan = edited(log[1], prev=rollog.ZERO_HASH, seq=0)
    assert audit([orphan]) == [(0, "no_epoch")]


def test_log_main_lists_every_problem(log, tmp_path, capsys):
    tampered = [*log[:5], edited(log[5], time="2025-01-15T20:10:59Z", dice=[1, 1, 1, 1, 1])]
    path = write_json(tmp_path, "log.json", rollog.export_page(CAMPAIGN, tampered, public_key=PUBLIC_KEY_HEX))
    assert verify_log.main([str(path), PUBLIC_KEY_HEX]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[:2] == [
        "FAIL entrada #5 (posición 5) [time_backwards]: 2025-01-15T20:10:59Z es anterior a 2025-01-15T20:11:00Z.",
        "FAIL entrada #5 (posición 5) [dice_mismatch]: Los dados no salen de la semilla.",
    ]
    assert lines[2].startswith("FAIL: 2 problemas en 6 entradas de hitos-demo; cabeza #5 ")


def test_log_main_usage_errors(tmp_path):
    assert verify_log.main([PUBLIC_KEY_HEX]) == 2
    assert verify_log.main([str(write_json(tmp_path, "x.json", {"rows": []})), PUBLIC_KEY_HEX]) == 2


# --- As real programs ----------------------------------------------------------------------


def run_module(module: str, *args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", module, *args]
    return subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=60)


def test_verify_roll_as_a_program(log, tmp_path):
    good = write_json(tmp_path, "roll.json", bundle(log[4], log[0], log[3]))
    result = run_module("rolls.verify_roll", str(good), PUBLIC_KEY_HEX)
    assert (result.returncode, result.stdout.splitlines()[0]) == (0, "OK: tirada verificada (rollog/v1)")
    bad = write_json(tmp_path, "bad.json", bundle(log[4], log[0], log[2]))
    result = run_module("rolls.verify_roll", str(bad), PUBLIC_KEY_HEX)
    assert result.returncode == 1
    assert result.stdout.strip().endswith("[parent_mismatch]")


def test_verify_log_as_a_program(log, tmp_path):
    good = write_json(tmp_path, "log.json", rollog.export_page(CAMPAIGN, log, public_key=PUBLIC_KEY_HEX))
    result = run_module("rolls.verify_log", str(good), PUBLIC_KEY_HEX)
    assert result.returncode == 0
    assert result.stdout.startswith("OK: registro íntegro")
    dropped = write_json(tmp_path, "dropped.json", [e.ref() for e in [*log[:2], *log[3:]]])
    result = run_module("rolls.verify_log", str(dropped), PUBLIC_KEY_HEX)
    assert result.returncode == 1
    assert "[seq_gap]: Faltan entradas: seq 2." in result.stdout


def imported_roots(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    roots = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            roots |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module == "rolls":  # from rolls import verify
            roots |= {f"rolls.{alias.name}" for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            roots.add(node.module)
    return roots


def is_allowed(module: str, extra: tuple[str, ...] = ()) -> bool:
    root = module.split(".")[0]
    return root in sys.stdlib_module_names or root == "cryptography" or module in extra


def test_verifiers_need_only_stdlib_cryptography_and_the_single_file():
    assert all(is_allowed(m) for m in imported_roots(REPO / "rolls" / "verify.py"))
    assert all(is_allowed(m, ("rolls.verify",)) for m in imported_roots(REPO / "rolls" / "verify_roll.py"))
    log_imports = imported_roots(REPO / "rolls" / "verify_log.py")
    assert all(is_allowed(m, ("rolls.verify", "rolls.verify_roll")) for m in log_imports)


def test_core_does_not_import_django():
    assert all(is_allowed(m, ("rolls.verify",)) for m in imported_roots(REPO / "rolls" / "rollog.py"))


def signed_raw(raw: bytes) -> SignedEntry:
    hash_ = rollog.entry_hash(raw)
    return SignedEntry(raw, hash_, KEY.sign(verify_roll.signed_message(hash_)))


def test_plain_roll_must_carry_null_parent_and_rerolled(log):
    entry = log[1].entry
    del entry["parent"]
    assert bundle_code(bundle(rollog.sign_entry(entry, KEY), log[0])) == "bad_field"


def test_duplicate_keys_and_deep_nesting_are_not_canonical(log):
    raw = log[1].entry_bytes
    duplicated = raw[:-1] + b',"v":1}'
    assert bundle_code(bundle(signed_raw(duplicated), log[0])) == "not_canonical"
    nested = signed_raw(b'{"a":' + b"[" * 100_000 + b"]" * 100_000 + b"}")
    document = bundle(log[1], log[0]) | nested.ref() | {"permalink": nested.permalink, "entry": None}
    assert bundle_code(document) == "not_canonical"
