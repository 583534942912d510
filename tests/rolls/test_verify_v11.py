"""Tampering with rollog v1.1 entries (sealed, extend, exploding) is rejected
by both offline verifiers, and the programs say what they verified."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from pathlib import Path

import pytest

from rolls import rollog, verify_log
from rolls.rollog import SignedEntry
from rolls.verify_roll import RollogError, commitment_of, verify_bundle
from tests.rolls.test_vectors import CAMPAIGN, PUBLIC_KEY_HEX, signing_key
from tests.rolls.test_vectors_v11 import PUBLIC_KEY, build_v11_log

REPO = Path(__file__).resolve().parents[2]
KEY = signing_key()


@pytest.fixture(scope="module")
def built():
    return build_v11_log()


@pytest.fixture
def log(built) -> list[SignedEntry]:
    return list(built[0])


@pytest.fixture
def openings(built) -> dict[int, bytes]:
    return dict(built[1])


def resign(signed: SignedEntry, **changes) -> SignedEntry:
    """The operator rewrites an entry and signs it again with the real key."""
    entry = signed.entry | changes
    for key in [k for k, v in changes.items() if v is ...]:
        del entry[key]
    return rollog.sign_entry(entry, KEY)


def bundle(log, seq, entry=None, *, opening=None, parent=None, parent_opening=None) -> dict:
    epoch = log[0] if log[seq].entry["epoch"] == 1 else log[9]
    return rollog.roll_bundle(
        entry or log[seq],
        epoch_open=epoch,
        public_key=PUBLIC_KEY_HEX,
        parent=parent,
        opening=opening,
        parent_opening=parent_opening,
    )


def code(document: dict) -> str | None:
    try:
        verify_bundle(document, PUBLIC_KEY)
    except RollogError as exc:
        return exc.code
    return None


def body(opening: bytes) -> dict:
    return json.loads(opening)


def reseal(log, seq, new_body: dict) -> tuple[SignedEntry, bytes]:
    """A consistent forgery: new opening, its commitment, the outer entry signed again."""
    raw = rollog.canonical_bytes(new_body)
    return resign(log[seq], commitment=commitment_of(raw)), raw


def audit_codes(refs) -> list[tuple[int | None, str]]:
    return [(p.seq, p.code) for p in verify_log.audit_log(refs, PUBLIC_KEY).problems]


# --- Sealed entries ---------------------------------------------------------------------


def test_an_opening_that_differs_from_the_commitment_is_rejected(log, openings):
    other = rollog.canonical_bytes(body(openings[10]) | {"dice": [10, 10, 10]})
    assert code(bundle(log, 10, opening=other)) == "commitment_mismatch"


def test_an_opening_of_another_sealed_roll_is_rejected(log, openings):
    assert code(bundle(log, 10, opening=openings[11])) == "commitment_mismatch"


@pytest.mark.parametrize(
    "extra",
    [{"purpose": "se cuela"}, {"user": "alicia"}, {"dice": [10, 4, 3]}, {"spec": "3d10"}, {"note": ""}],
    ids=["purpose", "user", "dice", "spec", "any-other"],
)
def test_a_sealed_outer_entry_with_any_extra_field_is_rejected(log, openings, extra):
    forged = resign(log[10], **extra)
    assert code(bundle(log, 10, forged, opening=openings[10])) == "sealed_fields"
    assert code(bundle(log, 10, forged)) == "sealed_fields"


def test_a_sealed_outer_entry_missing_a_field_is_rejected(log):
    assert code(bundle(log, 10, resign(log[10], audience=...))) == "sealed_fields"


def test_an_opening_for_another_slot_is_rejected(log, openings):
    forged, raw = reseal(log, 10, body(openings[10]) | {"seq": 12})
    assert code(bundle(log, 10, forged, opening=raw)) == "opening_mismatch"


def test_an_opening_whose_dice_do_not_derive_is_rejected(log, openings):
    forged, raw = reseal(log, 10, body(openings[10]) | {"dice": [1, 1, 1]})
    assert code(bundle(log, 10, forged, opening=raw)) == "dice_mismatch"


def test_an_opening_without_a_nonce_is_rejected(log, openings):
    new_body = body(openings[10])
    del new_body["nonce"]
    forged, raw = reseal(log, 10, new_body)
    assert code(bundle(log, 10, forged, opening=raw)) == "bad_field"


def test_an_opening_with_a_short_client_seed_is_rejected():
    inner = {"kind": "roll", "client_seed": "corta"}
    with pytest.raises(RollogError) as caught:
        rollog.seal(inner, audience="gm")
    assert caught.value.code == "weak_client_seed"


def test_a_public_bundle_may_not_carry_an_opening(log, openings):
    assert code(bundle(log, 7) | {"opening_b64": base64.b64encode(openings[10]).decode()}) == "bad_bundle"


def test_a_sealed_reroll_needs_its_parents_opening(log, openings):
    assert code(bundle(log, 11, opening=openings[11], parent=log[10])) == "parent_missing"
    wrong = rollog.canonical_bytes(body(openings[10]) | {"dice": [9, 9, 9]})
    assert code(bundle(log, 11, opening=openings[11], parent=log[10], parent_opening=wrong)) == "commitment_mismatch"


def test_a_public_reroll_of_a_sealed_roll_is_rejected(log, openings):
    inner = body(openings[11])
    del inner["nonce"]
    public = rollog.sign_entry(inner, KEY)
    document = bundle(log, 11, public, parent=log[10], parent_opening=openings[10])
    assert code(document) == "sealed_child_mismatch"


def test_a_sealed_reroll_for_another_audience_is_rejected(log, openings):
    forged = resign(log[11], audience="gm")
    document = bundle(log, 11, forged, opening=openings[11], parent=log[10], parent_opening=openings[10])
    assert code(document) == "sealed_child_mismatch"


# --- Extensions -------------------------------------------------------------------------


def test_an_extension_whose_dice_are_not_the_parents_plus_the_drawn_is_rejected(log):
    for dice in ([3, 6], [6, 3, 6], [3, 6, 6, 6], [6, 6]):
        forged = resign(log[8], dice=dice)
        assert code(bundle(log, 8, forged, parent=log[7])) == "dice_mismatch", dice


def test_an_extension_with_drawn_dice_not_from_the_seed_is_rejected(log):
    forged = resign(log[8], drawn=[2], dice=[3, 6, 2])
    assert code(bundle(log, 8, forged, parent=log[7])) == "dice_mismatch"


def test_an_extension_with_positions_is_rejected(log):
    assert code(bundle(log, 8, resign(log[8], rerolled=[0]), parent=log[7])) == "bad_field"


def test_an_extension_of_another_roll_is_rejected(log):
    assert code(bundle(log, 8, parent=log[6])) == "parent_mismatch"


# --- Exploding dice ---------------------------------------------------------------------


def test_an_exploding_roll_with_a_missing_die_is_rejected(log):
    assert code(bundle(log, 6, resign(log[6], dice=[3, 6]))) == "dice_mismatch"


def test_an_exploding_roll_with_an_extra_die_is_rejected(log):
    assert code(bundle(log, 6, resign(log[6], dice=[3, 6, 3, 1]))) == "dice_mismatch"


def test_a_roll_that_drops_the_bang_is_rejected(log):
    assert code(bundle(log, 6, resign(log[6], spec="2d6"))) == "dice_mismatch"


# --- The log audit ---------------------------------------------------------------------


def refs(log, openings):
    return [rollog.ref_with_opening(e, openings.get(e.entry["seq"])) for e in log]


def test_audit_rejects_an_opening_that_differs_from_the_commitment(log, openings):
    wrong = rollog.canonical_bytes(body(openings[10]) | {"purpose": "otra cosa"})
    problems = audit_codes(refs(log, {**openings, 10: wrong}))
    assert (10, "commitment_mismatch") in problems


def test_audit_rejects_a_sealed_outer_entry_with_an_extra_field(log, openings):
    tampered = list(log)
    tampered[10] = resign(log[10], purpose="se cuela")
    problems = audit_codes(refs(tampered, openings))
    assert (10, "sealed_fields") in problems


def test_audit_rejects_an_edited_extension(log, openings):
    tampered = list(log)
    tampered[8] = resign(log[8], dice=[3, 6, 1])
    problems = audit_codes(refs(tampered, openings))
    assert (8, "dice_mismatch") in problems


def test_audit_counts_a_sealed_slot_even_without_its_opening(log, openings):
    dropped = [*log[:10], *log[11:]]
    problems = audit_codes(refs(dropped, {}))
    assert (11, "seq_gap") in problems


def test_audit_refuses_a_reused_slot_hidden_in_a_sealed_entry(log, openings):
    tampered = list(log)
    tampered[11] = resign(log[11], epoch_index=1, seed=log[10].entry["seed"])
    problems = audit_codes(refs(tampered, {}))
    assert (11, "slot_out_of_order") in problems


# --- As programs ---------------------------------------------------------------------------


def run(module: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", module, *args], cwd=REPO, capture_output=True, text=True, timeout=60)


def write(tmp_path: Path, name: str, document) -> str:
    path = tmp_path / name
    path.write_text(json.dumps(document), encoding="utf-8")
    return str(path)


def test_verify_roll_program_on_a_sealed_bundle(log, openings, tmp_path):
    closed = run("rolls.verify_roll", write(tmp_path, "closed.json", bundle(log, 10)), PUBLIC_KEY_HEX)
    assert closed.returncode == 0
    assert closed.stdout.splitlines()[:2] == [
        "OK: tirada sellada: posición en la cadena verificada, contenido no revelado (rollog/v1)",
        "  (sealed: chain position verified, content not disclosed)",
    ]
    assert "Sigilo" not in closed.stdout
    opened = run(
        "rolls.verify_roll", write(tmp_path, "open.json", bundle(log, 10, opening=openings[10])), PUBLIC_KEY_HEX
    )
    assert opened.returncode == 0
    assert "  motivo: Sigilo: ¿me ven los guardias? (solo para la GM y Jimena)" in opened.stdout
    forged = write(tmp_path, "forged.json", bundle(log, 10, opening=openings[11]))
    failed = run("rolls.verify_roll", forged, PUBLIC_KEY_HEX)
    assert failed.returncode == 1 and failed.stdout.strip().endswith("[commitment_mismatch]")


def test_verify_log_program_on_a_v11_export(log, openings, tmp_path):
    page = rollog.export_page(CAMPAIGN, refs(log, {}), public_key=PUBLIC_KEY_HEX)
    result = run("rolls.verify_log", write(tmp_path, "log.json", page), PUBLIC_KEY_HEX)
    assert result.returncode == 0, result.stdout
    assert "2 tiradas selladas; 2 sin apertura" in result.stdout
