"""rollog v1.1 test vectors T10–T13 (roll-verification.md), reproduced exactly.

They continue the T0–T6 log: an exploding roll (T10, and the derivation-only
T10b), a roll and its extension (T11), the epoch_open of epoch 2, a sealed
roll (T12) and a sealed re-roll of it (T13). The server core builds every
entry from the test inputs; bytes, hashes, signatures, permalinks, HMAC
blocks, dice, openings and commitments must match the spec verbatim, and the
offline verifiers must accept the whole log.
"""

from __future__ import annotations

import base64
import hashlib

import pytest

from rolls import rollog
from rolls.rollog import SignedEntry
from rolls.verify_log import audit_log
from rolls.verify_roll import (
    DiceStream,
    draw_pool,
    parse_public_key,
    roll_message,
    verify_bundle,
)
from tests.rolls.test_vectors import (
    CAMPAIGN,
    LENGTH,
    PUBLIC_KEY_HEX,
    SEED_CHAIN,
    build_vector_log,
    hmac_block,
    roll,
    signing_key,
)

EPOCH2_ROOT = hashlib.sha256(b"rollog/v1 TEST epoch 2 root - never use in production").digest()
PUBLIC_KEY = parse_public_key(PUBLIC_KEY_HEX)

T10 = {
    "entry": '{"campaign":"hitos-demo","character":"Jimena","client_seed":"t10-2","client_seed_source":"browser","dice":[3,6,3],"epoch":1,"epoch_index":6,"kind":"roll","parent":null,"prev":"2e1220f8d81678ec435570b263808a6e981333197bdf7efc1a25f22cade49161","purpose":"Daño del hacha: 2d6! (el 6 explota)","rerolled":null,"scene":"escena-1","seed":"fb7906c340f25386a09df7d171ba2c1cbbe9c22029b103841fc26f0e410abd54","seen":"2e1220f8d81678ec435570b263808a6e981333197bdf7efc1a25f22cade49161","seq":6,"spec":"2d6!","time":"2025-01-15T20:20:00Z","user":"bruno","v":1,"visibility":"public"}',
    "hash": "e8a75abd2fb95661bb6287be333a2b3258689b885145a7b05d3a72441b85475d",
    "sig": "8e7322faab702cb17209f8db2606a23b991ffd2a542474a969875d66949a3de76707ba3378e086ec78e233c81f0593f71255a3b1d335b4da349060e2b884090e",
    "permalink": "5ctvvpjpxflgdo3cq67dgorl",
    "message": "rollog/v1:hitos-demo:6:t10-2:2d6!:-:-",
    "block0": "74b90e8704576857d6a1b31763dadc290925307526be42ca688da29973587c9b",
    "consumed": [116, 185, 14],
    "dice": [3, 6, 3],
}
T11_ROLL = {
    "entry": '{"campaign":"hitos-demo","character":"Finn","client_seed":"t11-2","client_seed_source":"browser","dice":[3,6],"epoch":1,"epoch_index":7,"kind":"roll","parent":null,"prev":"e8a75abd2fb95661bb6287be333a2b3258689b885145a7b05d3a72441b85475d","purpose":"Aventuras: trepar al árbol de caramelo","rerolled":null,"scene":"escena-1","seed":"667d5e1bbdeec03a459ecf5f617152eceb2afaff97205168ad4da601e428d68e","seen":"e8a75abd2fb95661bb6287be333a2b3258689b885145a7b05d3a72441b85475d","seq":7,"spec":"2d6","time":"2025-01-15T20:25:00Z","user":"dario","v":1,"visibility":"public"}',
    "hash": "6b668ccf34f7e864bcf9e8f3909cd21c8f85b2aba71d279d9f07cc7ce79eaf04",
    "sig": "805f43e96fe7e20c65d99b3062c917c75ee4b2680ae72b4d5f399d7201718822ce273d0cb1941f214a91d22b0bcf09ea259bee846040be4685187bdc6008d50d",
    "permalink": "nntiztzu67ugjphz5dzzbhgs",
    "message": "rollog/v1:hitos-demo:7:t11-2:2d6:-:-",
    "block0": "ce2f427c8e12a3761f3b547287c9984b76741a92e81ad59cd0292fb6b664edf1",
    "consumed": [206, 47],
    "dice": [3, 6],
}
T11_EXTEND = {
    "entry": '{"campaign":"hitos-demo","character":"Finn","client_seed":"t11-ext","client_seed_source":"browser","converted":[1],"dice":[3,6,6],"drawn":[6],"epoch":1,"epoch_index":8,"kind":"extend","parent":"6b668ccf34f7e864bcf9e8f3909cd21c8f85b2aba71d279d9f07cc7ce79eaf04","prev":"6b668ccf34f7e864bcf9e8f3909cd21c8f85b2aba71d279d9f07cc7ce79eaf04","purpose":"Éxito chachi: el 6 de la posición 1 se lee como 5 y añade 1d6","rerolled":null,"scene":"escena-1","seed":"14ecc4e5b3663037c1e0258a309e7764648b7f056c98e2487d5c8f66da2693cc","seen":"6b668ccf34f7e864bcf9e8f3909cd21c8f85b2aba71d279d9f07cc7ce79eaf04","seq":8,"spec":"1d6","time":"2025-01-15T20:26:00Z","user":"dario","v":1,"visibility":"public"}',
    "hash": "2dcf840defd619de707e121016d3bcbb3ae53ead721761e72823ae20e5605cd1",
    "sig": "0b678ad91278c1b92896523f9b35be78ae1e986145b253ec65071453d201256877ad27303b7190d21864ad62d6de5d6d3cb11a26a0a0880b2f3fb0402debe907",
    "permalink": "fxhyidpp2ym544d6ciibnu54",
    "message": "rollog/v1:hitos-demo:8:t11-ext:1d6:6b668ccf34f7e864bcf9e8f3909cd21c8f85b2aba71d279d9f07cc7ce79eaf04:+",
    "block0": "2fbdd32e97d1cf863330864633ea0f329dad92cfa56a63c1d6a8fd77a9ad98bc",
    "consumed": [47],
    "dice": [3, 6, 6],
}
EPOCH2 = {
    "root": "42496f617f9a4e9f877a3684a45f584c890dd56e4b9e855770c2a4f63271e40a",
    "chain": [
        "689e2768fc9df64021b42cf95fa020065ad5c4f074dc06f72ba7da1b41cb078e",
        "e3b56a2302574159f302b226ad7567c1e4a9423e17242f4db2c1c5c4f66e63f2",
        "bad2f9132d8527601ab75f8571a7f0f4ac4afb66a52b513f2575810fc1f2eda3",
    ],
    "entry": '{"anchor":"689e2768fc9df64021b42cf95fa020065ad5c4f074dc06f72ba7da1b41cb078e","campaign":"hitos-demo","epoch":2,"key":"d424e1b779a6b4c190bc7065ee3e21b90be905e0ee20e3a37efe9c664ec35e63","kind":"epoch_open","length":8,"prev":"2dcf840defd619de707e121016d3bcbb3ae53ead721761e72823ae20e5605cd1","seq":9,"time":"2025-01-15T20:30:00Z","v":1}',
    "hash": "09c0733474810be9bae748ae3ed5656789092b5ca99b662a93b34ca2eced1413",
    "sig": "63115b66a7db498936ed0fcc4732622ee428993ec8d5b79c46c486bb329ed891523254edadae90783d9551bab1528797e4a6ec97fc76bf4003265dcab59b0d00",
    "permalink": "bhahgnduqef6toxhjcxd5vlf",
}
T12 = {
    "message": "rollog/v1:hitos-demo:10:5eed0010a5a5a5a5a5a5a5a5a5a5a500:3d10:-:-",
    "block0": "4f35c0464a1a1c3951220ec0ef2eed57121bda5a558a63fb9a4a1f783ebef2ff",
    "consumed": [79, 53, 192],
    "dice": [10, 4, 3],
    "body": '{"campaign":"hitos-demo","character":"Rodrigo","client_seed":"5eed0010a5a5a5a5a5a5a5a5a5a5a500","client_seed_source":"browser","dice":[10,4,3],"epoch":2,"epoch_index":1,"kind":"roll","nonce":"404142434445464748494a4b4c4d4e4f505152535455565758595a5b5c5d5e5f","parent":null,"prev":"09c0733474810be9bae748ae3ed5656789092b5ca99b662a93b34ca2eced1413","purpose":"Sigilo: ¿me ven los guardias? (solo para la GM y Jimena)","rerolled":null,"scene":"escena-2","seed":"e3b56a2302574159f302b226ad7567c1e4a9423e17242f4db2c1c5c4f66e63f2","seen":"09c0733474810be9bae748ae3ed5656789092b5ca99b662a93b34ca2eced1413","seq":10,"spec":"3d10","time":"2025-01-15T20:35:00Z","user":"alicia","v":1,"visibility":"public"}',
    "commitment": "f466f329a7bf8738597efb1475e63e884c130101812f33c7bc3f7d281c5a12ab",
    "entry": '{"audience":"recipients","campaign":"hitos-demo","commitment":"f466f329a7bf8738597efb1475e63e884c130101812f33c7bc3f7d281c5a12ab","epoch":2,"epoch_index":1,"kind":"sealed","prev":"09c0733474810be9bae748ae3ed5656789092b5ca99b662a93b34ca2eced1413","seed":"e3b56a2302574159f302b226ad7567c1e4a9423e17242f4db2c1c5c4f66e63f2","seq":10,"time":"2025-01-15T20:35:00Z","v":1}',
    "hash": "552de1f5d5407e452e2fdfcb3fc7f4b617296c6b2507e487f9fb428af0929035",
    "sig": "b948759aa40444cbee4680a163190e0c019e638bc6c3c78a2b47ab382bd57f982c69ec8fe24be932ca15afa7c9b5ec5d1ee4507696f161505e9c19d940e43c06",
    "permalink": "kuw6d5ovib7eklrp37ft7r7u",
}
T13 = {
    "message": "rollog/v1:hitos-demo:11:5eed0011a5a5a5a5a5a5a5a5a5a5a500:3d10:552de1f5d5407e452e2fdfcb3fc7f4b617296c6b2507e487f9fb428af0929035:0",
    "block0": "0e736ee4c5366753cda9c968d45a3632b73858adda2f5e66bb606a6fd356b5c3",
    "consumed": [14],
    "dice": [5, 4, 3],
    "body": '{"campaign":"hitos-demo","character":"Rodrigo","client_seed":"5eed0011a5a5a5a5a5a5a5a5a5a5a500","client_seed_source":"browser","dice":[5,4,3],"drawn":[5],"epoch":2,"epoch_index":2,"kind":"reroll","nonce":"606162636465666768696a6b6c6d6e6f707172737475767778797a7b7c7d7e7f","parent":"552de1f5d5407e452e2fdfcb3fc7f4b617296c6b2507e487f9fb428af0929035","prev":"552de1f5d5407e452e2fdfcb3fc7f4b617296c6b2507e487f9fb428af0929035","purpose":"Aspecto «Sombra entre sombras»: repite el dado 0","rerolled":[0],"scene":"escena-2","seed":"bad2f9132d8527601ab75f8571a7f0f4ac4afb66a52b513f2575810fc1f2eda3","seen":"552de1f5d5407e452e2fdfcb3fc7f4b617296c6b2507e487f9fb428af0929035","seq":11,"spec":"3d10","time":"2025-01-15T20:36:00Z","user":"alicia","v":1,"visibility":"public"}',
    "commitment": "d6b079284e62815d2c075832603b5fe809d3cd8facb5d8f2521ba3d660187cb2",
    "entry": '{"audience":"recipients","campaign":"hitos-demo","commitment":"d6b079284e62815d2c075832603b5fe809d3cd8facb5d8f2521ba3d660187cb2","epoch":2,"epoch_index":2,"kind":"sealed","prev":"552de1f5d5407e452e2fdfcb3fc7f4b617296c6b2507e487f9fb428af0929035","seed":"bad2f9132d8527601ab75f8571a7f0f4ac4afb66a52b513f2575810fc1f2eda3","seq":11,"time":"2025-01-15T20:36:00Z","v":1}',
    "hash": "b9d8f29fae47c42181de696ae45e43b595a68da5d265750aa3dff5072f362ae2",
    "sig": "8b43b54d24aa03969fb8f5077e7822bf7d8cbd8cc87e2bbae120329bf4091a8979bdd2b98049c03fee11edc51b57e8ace1d0a3158294d2c3e2449011f176b107",
    "permalink": "xhmpfh5oi7ccdao6nfvoixsd",
}
SIGNED = {6: T10, 7: T11_ROLL, 8: T11_EXTEND, 9: EPOCH2, 10: T12, 11: T13}
ROOT1 = bytes.fromhex(SEED_CHAIN[-1])


def build_v11_log() -> tuple[list[SignedEntry], dict[int, bytes]]:
    """seq 0–11: T1–T6, then T10–T13 built by the server core; and the openings by seq."""
    key = signing_key()
    log = build_vector_log()
    log.append(
        roll(key, log[-1], 6, "20:20", "bruno", "Jimena", "Daño del hacha: 2d6! (el 6 explota)", "2d6!", "t10-2")
    )
    log.append(
        roll(key, log[-1], 7, "20:25", "dario", "Finn", "Aventuras: trepar al árbol de caramelo", "2d6", "t11-2")
    )
    extend = rollog.extend_entry(
        parent=log[7],
        spec="1d6",
        seq=8,
        prev=log[7].hash_hex,
        time="2025-01-15T20:26:00Z",
        user="dario",
        purpose="Éxito chachi: el 6 de la posición 1 se lee como 5 y añade 1d6",
        epoch=1,
        epoch_index=8,
        seed=rollog.seed_for_slot(ROOT1, LENGTH, 8),
        client_seed="t11-ext",
        seen=log[7].hash_hex,
        extra={"converted": [1]},
    )
    log.append(rollog.sign_entry(extend, key))
    log.append(
        rollog.build_epoch_open(
            key,
            campaign=CAMPAIGN,
            seq=9,
            prev=log[8].hash_hex,
            time="2025-01-15T20:30:00Z",
            epoch=2,
            anchor=rollog.epoch_anchor(EPOCH2_ROOT, LENGTH),
            length=LENGTH,
        )
    )
    inner = rollog.roll_entry(
        campaign=CAMPAIGN,
        seq=10,
        prev=log[9].hash_hex,
        time="2025-01-15T20:35:00Z",
        user="alicia",
        character="Rodrigo",
        scene="escena-2",
        purpose="Sigilo: ¿me ven los guardias? (solo para la GM y Jimena)",
        spec="3d10",
        epoch=2,
        epoch_index=1,
        seed=rollog.seed_for_slot(EPOCH2_ROOT, LENGTH, 1),
        client_seed="5eed0010a5a5a5a5a5a5a5a5a5a5a500",
        seen=log[9].hash_hex,
    )
    outer, opening10 = rollog.seal(inner, audience="recipients", nonce=bytes(range(0x40, 0x60)))
    log.append(rollog.sign_entry(outer, key))
    inner = rollog.reroll_entry(
        parent=log[10],
        parent_content=rollog.SignedEntry(opening10, b"", b"").entry,
        positions=[0],
        seq=11,
        prev=log[10].hash_hex,
        time="2025-01-15T20:36:00Z",
        user="alicia",
        purpose="Aspecto «Sombra entre sombras»: repite el dado 0",
        epoch=2,
        epoch_index=2,
        seed=rollog.seed_for_slot(EPOCH2_ROOT, LENGTH, 2),
        client_seed="5eed0011a5a5a5a5a5a5a5a5a5a5a500",
        seen=log[10].hash_hex,
    )
    outer, opening11 = rollog.seal(inner, audience="recipients", nonce=bytes(range(0x60, 0x80)))
    log.append(rollog.sign_entry(outer, key))
    return log, {10: opening10, 11: opening11}


@pytest.fixture(scope="module")
def built() -> tuple[list[SignedEntry], dict[int, bytes]]:
    return build_v11_log()


@pytest.fixture(scope="module")
def log(built) -> list[SignedEntry]:
    return built[0]


@pytest.fixture(scope="module")
def openings(built) -> dict[int, bytes]:
    return built[1]


# --- Every signed entry, byte for byte -------------------------------------------


@pytest.mark.parametrize("seq", sorted(SIGNED))
def test_v11_entry_bytes_hash_signature_and_permalink(log, seq):
    vector = SIGNED[seq]
    assert log[seq].entry_bytes == vector["entry"].encode("utf-8")
    assert log[seq].hash_hex == vector["hash"]
    assert log[seq].signature_hex == vector["sig"]
    assert log[seq].permalink == vector["permalink"]
    assert log[seq].entry["prev"] == log[seq - 1].hash_hex


def test_epoch_2_root_and_chain():
    assert EPOCH2_ROOT.hex() == EPOCH2["root"]
    for index, point in enumerate(EPOCH2["chain"]):
        assert rollog.seed_for_slot(EPOCH2_ROOT, LENGTH, index).hex() == point


@pytest.mark.parametrize("seq", [6, 7, 8])
def test_v11_epoch_1_slots_are_its_last_three(log, seq):
    assert log[seq].entry["seed"] == SEED_CHAIN[seq]


# --- Derivation: messages, blocks, bytes consumed, dice ----------------------------


@pytest.mark.parametrize(
    ("vector", "content_seq"),
    [(T10, 6), (T11_ROLL, 7), (T11_EXTEND, 8), (T12, 10), (T13, 11)],
    ids=["T10", "T11-roll", "T11-extend", "T12", "T13"],
)
def test_v11_derivation(log, openings, vector, content_seq):
    content = (
        rollog.SignedEntry(openings[content_seq], b"", b"").entry if content_seq in openings else log[content_seq].entry
    )
    assert roll_message(content) == vector["message"]
    seed = bytes.fromhex(content["seed"])
    assert hmac_block(seed, vector["message"], 0).hex() == vector["block0"]
    assert content["dice"] == vector["dice"]
    stream = DiceStream(seed, vector["message"])
    if content["kind"] == "roll":
        draw_pool(stream, content["spec"])
    elif content["kind"] == "extend":
        draw_pool(stream, content["spec"])
    else:
        for _ in content["rerolled"]:
            stream.roll(10)
    assert [d.value for d in stream.draws] == vector["consumed"]


def test_t10_explosion_dice_come_last(log):
    entry = log[6].entry
    assert entry["dice"] == [3, 6, 3]
    assert "exploded" not in entry and "explosions" not in entry


def test_t10b_explosion_order():
    key = bytes(range(32))
    message = "rollog/v1:test:3:t10b-766:2d6!+1d8:-:-"
    assert hmac_block(key, message, 0).hex() == "658ed7f57d433a061c5c389564b2161a041aec73b080a60a1e83bf9379dabd05"
    stream = DiceStream(key, message)
    assert draw_pool(stream, "2d6!+1d8") == [6, 5, 8, 6, 6, 2]
    assert [d.value for d in stream.draws] == [101, 142, 215, 245, 125, 67]


def test_explosions_stop_at_a_hundred_dice():
    class AlwaysMax:
        draws: list = []

        def roll(self, faces):
            return faces

    assert len(draw_pool(AlwaysMax(), "99d6!+1d6")) == 100
    assert len(draw_pool(AlwaysMax(), "100d4!")) == 100


def test_more_than_a_hundred_base_dice_are_refused():
    with pytest.raises(rollog.RollogError) as caught:
        rollog.expand_spec("60d6!+41d6")
    assert caught.value.code == "bad_spec"


def test_t11_extend_fields(log):
    entry = log[8].entry
    assert (entry["kind"], entry["parent"], entry["rerolled"], entry["drawn"], entry["converted"]) == (
        "extend",
        T11_ROLL["hash"],
        None,
        [6],
        [1],
    )


# --- Sealed entries: openings and commitments ---------------------------------------


@pytest.mark.parametrize("seq", [10, 11])
def test_sealed_opening_and_commitment(log, openings, seq):
    vector = SIGNED[seq]
    assert openings[seq] == vector["body"].encode("utf-8")
    assert hashlib.sha256(b"rollog/v1/sealed\n" + openings[seq]).hexdigest() == vector["commitment"]
    assert log[seq].entry["commitment"] == vector["commitment"]


def test_t13_inner_parent_is_the_outer_hash_of_t12(openings):
    body = rollog.SignedEntry(openings[11], b"", b"").entry
    assert body["parent"] == T12["hash"]


# --- The verifiers accept all of it -----------------------------------------------------


def _bundle(log, seq, *, opening=None, parent=None, parent_opening=None):
    epoch = log[0] if log[seq].entry["epoch"] == 1 else log[9]
    return rollog.roll_bundle(
        log[seq],
        epoch_open=epoch,
        public_key=PUBLIC_KEY_HEX,
        parent=parent,
        opening=opening,
        parent_opening=parent_opening,
    )


def test_exploding_roll_bundle_verifies(log):
    proof = verify_bundle(_bundle(log, 6), PUBLIC_KEY)
    assert proof.content.entry["dice"] == [3, 6, 3]


def test_extension_bundle_verifies(log):
    proof = verify_bundle(_bundle(log, 8, parent=log[7]), PUBLIC_KEY)
    assert proof.content.entry["dice"] == [3, 6, 6]


def test_sealed_bundle_with_its_opening_verifies_fully(log, openings):
    proof = verify_bundle(_bundle(log, 10, opening=openings[10]), PUBLIC_KEY)
    assert proof.disclosed and proof.content.entry["dice"] == [10, 4, 3]


def test_sealed_bundle_without_its_opening_verifies_the_position_only(log):
    document = _bundle(log, 10, opening=None, parent=log[9])
    assert document["opening_b64"] is None and document["parent"] is None
    proof = verify_bundle(document, PUBLIC_KEY)
    assert proof.sealed and not proof.disclosed and proof.content is None


def test_sealed_reroll_bundle_verifies_with_the_parents_opening(log, openings):
    document = _bundle(log, 11, opening=openings[11], parent=log[10], parent_opening=openings[10])
    assert base64.b64decode(document["parent"]["opening_b64"]) == openings[10]
    proof = verify_bundle(document, PUBLIC_KEY)
    assert proof.content.entry["dice"] == [5, 4, 3]


def test_the_whole_v11_log_audits_clean_with_and_without_openings(log, openings):
    full = [rollog.ref_with_opening(e, openings.get(e.entry["seq"])) for e in log]
    report = audit_log(full, PUBLIC_KEY)
    assert report.problems == () and report.ok and (report.sealed, report.undisclosed) == (2, 0)
    closed = [rollog.ref_with_opening(e, None) for e in log]
    report = audit_log(closed, PUBLIC_KEY)
    assert report.problems == () and report.ok and (report.sealed, report.undisclosed) == (2, 2)
    assert report.head.hash_hex == T13["hash"]
