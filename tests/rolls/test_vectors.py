"""rollog/v1 test vectors T0–T9 (roll-verification.md §5), reproduced exactly.

The server core (``rolls.rollog``) builds the six log entries from the test
key, the test epoch root and the vector times; every byte, hash, signature,
permalink, HMAC block and die must match the spec verbatim.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import shutil
import subprocess
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

import pytest

from rolls import rollog
from rolls.rollog import SignedEntry
from rolls.verify_roll import (
    DiceStream,
    RollogError,
    expand_spec,
    hash_chain,
    rejected,
    roll_message,
)
from rules.dice import reroll_positions, roll_dice


def hmac_block(seed: bytes, message: str, j: int) -> bytes:
    """Block j of a dice stream as the spec defines it (§3.4): HMAC-SHA256(seed, M ":" j)."""
    return hmac.digest(seed, f"{message}:{j}".encode(), "sha256")


# --- T0 ------------------------------------------------------------------------

KEY_SEED_HEX = "738b034ef471fc5f87a1ea6daa11cf6d55127c9721736dedf884f5adbcd1fd2a"
PUBLIC_KEY_HEX = "d424e1b779a6b4c190bc7065ee3e21b90be905e0ee20e3a37efe9c664ec35e63"
ROOT_HEX = "14ecc4e5b3663037c1e0258a309e7764648b7f056c98e2487d5c8f66da2693cc"
LENGTH = 8
CAMPAIGN = "hitos-demo"
SEED_CHAIN = [
    "ec8a55c4419f89b7abf17917b8c221afa2f84eba77be1a8d1a26516ab91af757",
    "b060b8f656c740df65a4aa430518ecdc81e71aed7e8617fca0f0bf5e6670d9ff",
    "a53238514284e3d11537d45b16bc9daa4053d8289732ef567c7b19657648e808",
    "8902f769207ba03324da8c3936bb212a681d20204832192ea186249358f32ada",
    "a44c283f1ed18568cbdc27f8febc551d40e6e8858156bb98991313fc15280981",
    "b825a0163d81c0580b1d30df41d827e75537260fd6c94e8b361de1a890164609",
    "fb7906c340f25386a09df7d171ba2c1cbbe9c22029b103841fc26f0e410abd54",
    "667d5e1bbdeec03a459ecf5f617152eceb2afaff97205168ad4da601e428d68e",
    "14ecc4e5b3663037c1e0258a309e7764648b7f056c98e2487d5c8f66da2693cc",
]


@dataclass(frozen=True)
class Vector:
    entry: str
    hash: str
    sig: str
    permalink: str
    message: str = ""
    seed: str = ""
    block0: str = ""
    consumed: tuple[int, ...] | list[int] = ()
    rejected: tuple[int, ...] | list[int] = ()
    dice: tuple[int, ...] | list[int] = ()


# T1–T6, keyed by seq.
VECTORS = {
    0: Vector(
        entry='{"anchor":"ec8a55c4419f89b7abf17917b8c221afa2f84eba77be1a8d1a26516ab91af757","campaign":"hitos-demo","epoch":1,"key":"d424e1b779a6b4c190bc7065ee3e21b90be905e0ee20e3a37efe9c664ec35e63","kind":"epoch_open","length":8,"prev":"0000000000000000000000000000000000000000000000000000000000000000","seq":0,"time":"2025-01-15T19:00:00Z","v":1}',
        hash="91227570d8480ffdb97f77f03c7899956c66a8c2171705cacf487f2b207bf536",
        sig=(
            "aaf33035ad945a41ef54cfee1b9d5b705d9733e8218a5ba3f0e2fad92db453c3"
            "4d28a47c711ad43d799cad4e5d3be030d37052848ee39d0b319de7eb01ba760c"
        ),
        permalink="serhk4gyjah73ol7o7ydy6ez",
    ),
    1: Vector(
        entry='{"campaign":"hitos-demo","character":"Rodrigo","client_seed":"5eed0001aaaaaaaaaaaaaaaaaaaaaa00","client_seed_source":"browser","dice":[5,3,5],"epoch":1,"epoch_index":1,"kind":"roll","parent":null,"prev":"91227570d8480ffdb97f77f03c7899956c66a8c2171705cacf487f2b207bf536","purpose":"Atletismo: saltar el foso","rerolled":null,"scene":"escena-1","seed":"b060b8f656c740df65a4aa430518ecdc81e71aed7e8617fca0f0bf5e6670d9ff","seen":"91227570d8480ffdb97f77f03c7899956c66a8c2171705cacf487f2b207bf536","seq":1,"spec":"3d10","time":"2025-01-15T20:00:00Z","user":"alicia","v":1,"visibility":"public"}',
        hash="31f6ddc1bd16b00f1d60f1ad4c8175c6c62b9a490f3cdf17b2f5de6632e9d7fb",
        sig=(
            "a2943376d96177abdae736b16d4dc51fdfad5c8192146c5afe7fe19920b28ba5"
            "08e50d53b1670e743be5dbdc30ce6425a0783d5fbadfb04f9241478d2e2c5109"
        ),
        permalink="gh3n3qn5c2ya6hla6gwuzalv",
        message="rollog/v1:hitos-demo:1:5eed0001aaaaaaaaaaaaaaaaaaaaaa00:3d10:-:-",
        seed="b060b8f656c740df65a4aa430518ecdc81e71aed7e8617fca0f0bf5e6670d9ff",
        block0="d6f290183003701d5a6f470c8c4844b7c78de2ec50ce241a9a026a8e90870a44",
        consumed=[214, 242, 144],
        rejected=[],
        dice=[5, 3, 5],
    ),
    2: Vector(
        entry='{"campaign":"hitos-demo","character":"Jimena","client_seed":"5eed0002bbbbbbbbbbbbbbbbbbbbbb01","client_seed_source":"browser","dice":[10,5,3],"epoch":1,"epoch_index":2,"kind":"roll","parent":null,"prev":"31f6ddc1bd16b00f1d60f1ad4c8175c6c62b9a490f3cdf17b2f5de6632e9d7fb","purpose":"Percepción: ¿hay alguien en la torre?","rerolled":null,"scene":"escena-1","seed":"a53238514284e3d11537d45b16bc9daa4053d8289732ef567c7b19657648e808","seen":"31f6ddc1bd16b00f1d60f1ad4c8175c6c62b9a490f3cdf17b2f5de6632e9d7fb","seq":2,"spec":"3d10","time":"2025-01-15T20:05:00Z","user":"bruno","v":1,"visibility":"public"}',
        hash="d396d8973119777c68985d70b176f1fa9bed4118ba35916db9400f453d3f3e49",
        sig=(
            "2f708f26c7fe4597bc24afe7717f7a588c6d2a1ecd72e99e5ed20aaea5054375"
            "49fc5b78d18872bbd445c9d0a85deab91cbb30615b775b322385b61933238f06"
        ),
        permalink="2olnrfzrdf3xy2eylvylc5xr",
        message="rollog/v1:hitos-demo:2:5eed0002bbbbbbbbbbbbbbbbbbbbbb01:3d10:-:-",
        seed="a53238514284e3d11537d45b16bc9daa4053d8289732ef567c7b19657648e808",
        block0="6dfaeafe16be469386b8478e9e9bb470e34c3947a1de8d0b4b767d381971abcd",
        consumed=[109, 250, 234, 254, 22],
        rejected=[250, 254],
        dice=[10, 5, 3],
    ),
    3: Vector(
        entry='{"campaign":"hitos-demo","character":"Rodrigo","client_seed":"5eed0003cccccccccccccccccccccc00","client_seed_source":"browser","dice":[9,2,1],"epoch":1,"epoch_index":3,"kind":"roll","parent":null,"prev":"d396d8973119777c68985d70b176f1fa9bed4118ba35916db9400f453d3f3e49","purpose":"Pelea: espada contra el ogro","rerolled":null,"scene":"escena-1","seed":"8902f769207ba03324da8c3936bb212a681d20204832192ea186249358f32ada","seen":"d396d8973119777c68985d70b176f1fa9bed4118ba35916db9400f453d3f3e49","seq":3,"spec":"3d10","time":"2025-01-15T20:10:00Z","user":"alicia","v":1,"visibility":"public"}',
        hash="806e8daa717b0f47baa4a932939deab38e8f6faf07270323f83ffd7c8855061e",
        sig=(
            "e9133f4458c2b57b9839c95c4dd3067df6efe17827c07268009a5a371ade1a6b"
            "532d3b781f5846876f96a327c86cb584a1390998ce2c46979a26ec068d16da04"
        ),
        permalink="qbxi3ktrpmhupovevezjhhpk",
        message="rollog/v1:hitos-demo:3:5eed0003cccccccccccccccccccccc00:3d10:-:-",
        seed="8902f769207ba03324da8c3936bb212a681d20204832192ea186249358f32ada",
        block0="f83d5af20c1f3a03ff3ee174f7c41e019f64b7b46fadbabe81efe042bdb1623b",
        consumed=[248, 61, 90],
        rejected=[],
        dice=[9, 2, 1],
    ),
    4: Vector(
        entry='{"campaign":"hitos-demo","character":"Rodrigo","client_seed":"5eed0004dddddddddddddddddddddd00","client_seed_source":"browser","dice":[9,9,10],"drawn":[9,10],"epoch":1,"epoch_index":4,"kind":"reroll","parent":"806e8daa717b0f47baa4a932939deab38e8f6faf07270323f83ffd7c8855061e","prev":"806e8daa717b0f47baa4a932939deab38e8f6faf07270323f83ffd7c8855061e","purpose":"Aspecto «Veterano de la frontera»: repite los dados 1 y 2","rerolled":[1,2],"scene":"escena-1","seed":"a44c283f1ed18568cbdc27f8febc551d40e6e8858156bb98991313fc15280981","seen":"806e8daa717b0f47baa4a932939deab38e8f6faf07270323f83ffd7c8855061e","seq":4,"spec":"3d10","time":"2025-01-15T20:11:00Z","user":"alicia","v":1,"visibility":"public"}',
        hash="30d0d2332213b141f5e90d5e54cad309164ca9e3e91a2889244b58b0b7adb3de",
        sig=(
            "32356c6db778351b125727716353394ea7af1e76552855cd893edce385f89fed"
            "3dea90ef00f803e86d57dbc9fe8874e5dea69e52f32ff3b6e3bf7074cd747108"
        ),
        permalink="gdinemzccoyud5pjbvpfjswt",
        message="rollog/v1:hitos-demo:4:5eed0004dddddddddddddddddddddd00:3d10:806e8daa717b0f47baa4a932939deab38e8f6faf07270323f83ffd7c8855061e:1,2",
        seed="a44c283f1ed18568cbdc27f8febc551d40e6e8858156bb98991313fc15280981",
        block0="80096c37bfe2f9b1ae9f0b1887120428df342a52c7d96e87a5274ed5e6779ece",
        consumed=[128, 9],
        rejected=[],
        dice=[9, 9, 10],
    ),
    5: Vector(
        entry='{"campaign":"hitos-demo","character":"Ogro","client_seed":"5eed0005eeeeeeeeeeeeeeeeeeeeee0d","client_seed_source":"browser","dice":[4,5,6,6,3],"epoch":1,"epoch_index":5,"kind":"roll","parent":null,"prev":"30d0d2332213b141f5e90d5e54cad309164ca9e3e91a2889244b58b0b7adb3de","purpose":"Reserva de ataque del ogro","rerolled":null,"scene":"escena-1","seed":"b825a0163d81c0580b1d30df41d827e75537260fd6c94e8b361de1a890164609","seen":"30d0d2332213b141f5e90d5e54cad309164ca9e3e91a2889244b58b0b7adb3de","seq":5,"spec":"5d6","time":"2025-01-15T20:15:00Z","user":"gm-carla","v":1,"visibility":"public"}',
        hash="2e1220f8d81678ec435570b263808a6e981333197bdf7efc1a25f22cade49161",
        sig=(
            "26847f97e44e0be7634db44f8ec68ca3a651fcfc94e0e0287d60d865c3d961d1"
            "7a3b76bfce1a4e8009b70eae045688a1cf026dd4f416f97a68c3e99f06f2f508"
        ),
        permalink="fyjcb6gycz4oyq2voczghaek",
        message="rollog/v1:hitos-demo:5:5eed0005eeeeeeeeeeeeeeeeeeeeee0d:5d6:-:-",
        seed="b825a0163d81c0580b1d30df41d827e75537260fd6c94e8b361de1a890164609",
        block0="a5dc05d7fd14a56dc75c59af2bf1155fc3580128c0a744025037f8e69b56bc7f",
        consumed=[165, 220, 5, 215, 253, 20],
        rejected=[253],
        dice=[4, 5, 6, 6, 3],
    ),
}

ROLLS = [seq for seq in VECTORS if seq > 0]


def signing_key():
    return rollog.load_signing_key(KEY_SEED_HEX)


def root() -> bytes:
    return bytes.fromhex(ROOT_HEX)


def build_vector_log() -> list[SignedEntry]:
    """seq 0–5 of T1–T6, built by the server core with injected inputs."""
    key = signing_key()
    log = [
        rollog.build_epoch_open(
            key,
            campaign=CAMPAIGN,
            seq=0,
            prev=rollog.ZERO_HASH,
            time="2025-01-15T19:00:00Z",
            epoch=1,
            anchor=rollog.epoch_anchor(root(), LENGTH),
            length=LENGTH,
        )
    ]
    plain = [
        (1, "20:00", "alicia", "Rodrigo", "Atletismo: saltar el foso", "3d10", "5eed0001aaaaaaaaaaaaaaaaaaaaaa00"),
        (2, "20:05", "bruno", "Jimena", "Percepción: ¿hay alguien en la torre?", "3d10", "5eed0002bbbbbbbbbbbbbbbbbbbbbb01"),
        (3, "20:10", "alicia", "Rodrigo", "Pelea: espada contra el ogro", "3d10", "5eed0003cccccccccccccccccccccc00"),
    ]  # fmt: skip
    for seq, clock, user, character, purpose, spec, client_seed in plain:
        log.append(roll(key, log[-1], seq, clock, user, character, purpose, spec, client_seed))
    log.append(
        rollog.build_reroll(
            key,
            parent=log[3],
            positions=[1, 2],
            seq=4,
            prev=log[3].hash_hex,
            time="2025-01-15T20:11:00Z",
            user="alicia",
            purpose="Aspecto «Veterano de la frontera»: repite los dados 1 y 2",
            epoch=1,
            epoch_index=4,
            seed=rollog.seed_for_slot(root(), LENGTH, 4),
            client_seed="5eed0004dddddddddddddddddddddd00",
            seen=log[3].hash_hex,
        )
    )
    log.append(
        roll(
            key,
            log[4],
            5,
            "20:15",
            "gm-carla",
            "Ogro",
            "Reserva de ataque del ogro",
            "5d6",
            "5eed0005eeeeeeeeeeeeeeeeeeeeee0d",
        )  # fmt: skip
    )
    return log


def roll(key, prev: SignedEntry, seq, clock, user, character, purpose, spec, client_seed):
    return rollog.build_roll(
        key,
        campaign=CAMPAIGN,
        seq=seq,
        prev=prev.hash_hex,
        time=f"2025-01-15T{clock}:00Z",
        user=user,
        character=character,
        scene="escena-1",
        purpose=purpose,
        spec=spec,
        epoch=1,
        epoch_index=seq,
        seed=rollog.seed_for_slot(root(), LENGTH, seq),
        client_seed=client_seed,
        seen=prev.hash_hex,  # in the vectors the client saw the previous head
    )


@pytest.fixture(scope="module")
def log() -> list[SignedEntry]:
    return build_vector_log()


# --- T0: key, root and seed chain ------------------------------------------------


def test_t0_test_key_and_root_come_from_their_labels():
    label_key = hashlib.sha256(b"rollog/v1 TEST signing key - never use in production")
    label_root = hashlib.sha256(b"rollog/v1 TEST epoch root - never use in production")
    assert label_key.hexdigest() == KEY_SEED_HEX
    assert label_root.hexdigest() == ROOT_HEX
    assert rollog.public_key_hex(signing_key().public_key()) == PUBLIC_KEY_HEX


def test_t0_seed_chain():
    chain = [rollog.seed_for_slot(root(), LENGTH, i).hex() for i in range(LENGTH + 1)]
    assert chain == SEED_CHAIN
    assert rollog.epoch_anchor(root(), LENGTH).hex() == SEED_CHAIN[0]


@pytest.mark.parametrize("index", range(1, LENGTH + 1))
def test_t0_each_seed_hashes_down_to_the_anchor(index):
    assert hash_chain(bytes.fromhex(SEED_CHAIN[index]), index).hex() == SEED_CHAIN[0]


# --- T1–T6: entries ----------------------------------------------------------------


@pytest.mark.parametrize("seq", sorted(VECTORS))
def test_entry_bytes_exact(log, seq):
    assert log[seq].entry_bytes == VECTORS[seq].entry.encode("utf-8")


@pytest.mark.parametrize("seq", sorted(VECTORS))
def test_entry_hash(log, seq):
    assert log[seq].hash_hex == VECTORS[seq].hash
    assert rollog.entry_hash(VECTORS[seq].entry.encode()).hex() == VECTORS[seq].hash


@pytest.mark.parametrize("seq", sorted(VECTORS))
def test_signature(log, seq):
    # Ed25519 is deterministic, so the signature is reproducible byte for byte.
    assert log[seq].signature_hex == VECTORS[seq].sig
    public_key = signing_key().public_key()
    assert rollog.verify_signed_entry(log[seq], public_key)


@pytest.mark.parametrize("seq", sorted(VECTORS))
def test_permalink(log, seq):
    assert log[seq].permalink == VECTORS[seq].permalink
    assert rollog.permalink_id(bytes.fromhex(VECTORS[seq].hash)) == VECTORS[seq].permalink


@pytest.mark.parametrize("seq", sorted(VECTORS))
def test_prev_links_the_chain(log, seq):
    expected = rollog.ZERO_HASH if seq == 0 else VECTORS[seq - 1].hash
    assert log[seq].entry["prev"] == expected


def test_stored_bytes_round_trip(log):
    stored = SignedEntry.from_stored(VECTORS[4].entry.encode(), bytes.fromhex(VECTORS[4].sig))
    assert stored == log[4]
    assert stored.entry["purpose"] == "Aspecto «Veterano de la frontera»: repite los dados 1 y 2"


def test_entry_property_is_a_copy(log):
    log[1].entry["dice"][0] = 99
    assert log[1].entry["dice"] == [5, 3, 5]


# --- T2–T6: derivation -------------------------------------------------------------


@pytest.mark.parametrize("seq", ROLLS)
def test_seed_is_the_slot_seed(log, seq):
    assert log[seq].entry["seed"] == VECTORS[seq].seed == SEED_CHAIN[seq]


@pytest.mark.parametrize("seq", ROLLS)
def test_derivation_message(log, seq):
    assert roll_message(log[seq].entry) == VECTORS[seq].message


@pytest.mark.parametrize("seq", ROLLS)
def test_block_zero(seq):
    vector = VECTORS[seq]
    assert hmac_block(bytes.fromhex(vector.seed), vector.message, 0).hex() == vector.block0


@pytest.mark.parametrize("seq", ROLLS)
def test_bytes_consumed_and_rejected(log, seq):
    vector = VECTORS[seq]
    entry = log[seq].entry
    faces = expand_spec(entry["spec"])
    if entry["rerolled"]:
        faces = [faces[p] for p in entry["rerolled"]]
    stream = DiceStream(bytes.fromhex(vector.seed), vector.message)  # the explainer's: it keeps what it read
    dice = [stream.roll(n) for n in faces]
    producer = rollog.dice_stream(bytes.fromhex(vector.seed), vector.message)
    assert dice == [producer.roll(n) for n in faces]
    assert [d.value for d in stream.draws] == vector.consumed
    assert rejected(stream) == vector.rejected
    assert stream.consumed == len(vector.consumed)
    assert stream.blocks == [bytes.fromhex(vector.block0)]
    expected = entry["drawn"] if entry["rerolled"] else vector.dice
    assert dice == expected


@pytest.mark.parametrize("seq", ROLLS)
def test_dice(log, seq):
    assert log[seq].entry["dice"] == VECTORS[seq].dice


def test_t5_reroll_fields(log):
    entry = log[4].entry
    assert entry["parent"] == VECTORS[3].hash
    assert entry["rerolled"] == [1, 2]
    assert entry["drawn"] == [9, 10]
    assert log[3].entry["dice"] == [9, 2, 1]
    assert entry["dice"] == [9, 9, 10]


def test_dice_for_spec_function(log):
    seed = bytes.fromhex(VECTORS[5].seed)
    assert rollog.dice_for_spec(seed, VECTORS[5].message, "5d6") == [4, 5, 6, 6, 3]


def test_stream_is_a_dice_source_for_rules():
    # rules/ reads the dice through the DiceSource protocol and must see the
    # same values the log signs: 3d10 for T4, then the T5 re-roll.
    t4 = VECTORS[3]
    dice = roll_dice(rollog.dice_stream(bytes.fromhex(t4.seed), t4.message), 3, 10)
    assert dice == (9, 2, 1)
    t5 = VECTORS[4]
    source = rollog.dice_stream(bytes.fromhex(t5.seed), t5.message)
    assert reroll_positions(source, dice, [2, 1], 10) == ((9, 9, 10), (9, 10))


# --- T7: derivation only -------------------------------------------------------------

T7_KEY = bytes(range(32))
T7_40D10 = [2, 1, 1, 2, 5, 3, 2, 6, 3, 5, 6, 5, 5, 10, 9, 4, 8, 3, 5, 8, 1, 3, 5, 1, 5, 2, 1, 9, 2, 6, 9, 1, 5, 3, 1, 10, 1, 10, 5, 7]  # fmt: skip
T7 = [
    (
        "rollog/v1:test:1:00000000000000000000000000000000:40d10:-:-",
        "40d10",
        [
            "4750e697b8d48319160eeb9a18138aff9957e8cc2f2848368ceac9e6bcbf9b6c",
            "5a2c34be77a0770e7e78364f9a667907fc1aec61de1ec027a444cd98b5216861",
        ],
        41,
        [255],
        T7_40D10,
    ),
    (
        "rollog/v1:test:2:ffffffffffffffffffffffffffffffff:4d100:-:-",
        "4d100",
        [
            "99d30214a2b3b5c9ac286ba8c692aa971c1c175fb34b977ffa60f80edfacf437",
            "c84c3a396d8e578a3214c0374f9385ffd151fcb6cb3a5ae336dd6871b4a100d3",
        ],
        5,
        [211],
        [54, 3, 21, 63],
    ),
]


@pytest.mark.parametrize(("message", "spec", "blocks", "consumed", "expected_rejected", "dice"), T7)
def test_t7_derivation(message, spec, blocks, consumed, expected_rejected, dice):
    assert rollog.derivation_message("test", int(message.split(":")[2]), message.split(":")[3], spec) == message
    assert [hmac_block(T7_KEY, message, j).hex() for j in (0, 1)] == blocks
    stream = DiceStream(T7_KEY, message)
    assert [stream.roll(n) for n in expand_spec(spec)] == dice
    assert stream.consumed == consumed
    assert rejected(stream) == expected_rejected


# --- T8: RFC 6962 Merkle tree over the six entry hashes --------------------------------


def merkle_root(leaves: list[bytes]) -> bytes:
    if len(leaves) == 1:
        return hashlib.sha256(b"\x00" + leaves[0]).digest()
    split = 1 << ((len(leaves) - 1).bit_length() - 1)  # largest power of 2 < n
    left, right = merkle_root(leaves[:split]), merkle_root(leaves[split:])
    return hashlib.sha256(b"\x01" + left + right).digest()


def merkle_path(index: int, leaves: list[bytes]) -> list[bytes]:
    if len(leaves) == 1:
        return []
    split = 1 << ((len(leaves) - 1).bit_length() - 1)
    if index < split:
        return merkle_path(index, leaves[:split]) + [merkle_root(leaves[split:])]
    return merkle_path(index - split, leaves[split:]) + [merkle_root(leaves[:split])]


def test_t8_merkle_root_and_inclusion_path(log):
    leaves = [entry.entry_hash for entry in log]
    assert merkle_root(leaves).hex() == "14a2f24c38cd4136078ac278a32aa19cdee3418ed6e613958721572e443c5e0e"
    assert merkle_root([leaves[3]]).hex() == "ea39e82102bbb2e1d3976f99a3bdae8c49fa17af3be638e6780b7cff39ef61ae"
    assert [h.hex() for h in merkle_path(3, leaves)] == [
        "cf4519d7a8451fff187387a5ecf7350e389cccf2694ca25515b43f767f440cd2",
        "f079b17925b43407608f5214a58a19fe016bac96111b012278382803f17d4a9d",
        "2899526ea9c00a95e40638c95344512dbae9d72662fe82196b2be7bed3ee8bcc",
    ]


# --- T9: the openssl cross-check --------------------------------------------------------

T9 = [
    (VECTORS[1].message + ":0", VECTORS[1].seed, "d6f290183003701d5a6f470c8c4844b7c78de2ec50ce241a9a026a8e90870a44"),
    (VECTORS[2].message + ":0", VECTORS[2].seed, "6dfaeafe16be469386b8478e9e9bb470e34c3947a1de8d0b4b767d381971abcd"),
    (VECTORS[5].message + ":0", VECTORS[5].seed, "a5dc05d7fd14a56dc75c59af2bf1155fc3580128c0a744025037f8e69b56bc7f"),
]


@pytest.mark.parametrize(("text", "key_hex", "expected"), T9)
def test_t9_hmac_blocks(text, key_hex, expected):
    assert hmac.new(bytes.fromhex(key_hex), text.encode(), hashlib.sha256).hexdigest() == expected


@pytest.mark.skipif(shutil.which("openssl") is None, reason="openssl CLI not installed")
@pytest.mark.parametrize(("text", "key_hex", "expected"), T9)
def test_t9_openssl_agrees(text, key_hex, expected):
    command = ["openssl", "dgst", "-sha256", "-mac", "HMAC", "-macopt", f"hexkey:{key_hex}"]
    result = subprocess.run(command, input=text.encode(), capture_output=True, check=True)
    assert result.stdout.decode().split()[-1] == expected


def test_t9_x1_hashes_to_the_anchor():
    assert hashlib.sha256(bytes.fromhex(SEED_CHAIN[1])).hexdigest() == SEED_CHAIN[0]


# --- Input rules the builders enforce ------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "faces"),
    [
        ("3d10", [10, 10, 10]),
        ("2d6+1d8", [6, 6, 8]),
        ("1d2", [2]),
        ("1d1000", [1000]),
        ("100d6", [6] * 100),
        ("50d6+50d10", [6] * 50 + [10] * 50),
    ],
)
def test_expand_spec(spec, faces):
    assert expand_spec(spec) == faces


@pytest.mark.parametrize(
    "spec",
    ["", "d6", "3d", "3d1", "1d1001", "101d6", "60d6+41d6", "0d6", "03d10", "3d010",
     "3d10\n", "3D10", "3d10+", "3d10-1", " 3d10", "٣d10", "1000d6", "3d10000"],
)  # fmt: skip
def test_expand_spec_rejects(spec):
    with pytest.raises(RollogError) as caught:
        expand_spec(spec)
    assert caught.value.code == "bad_spec"


@pytest.mark.parametrize("seed", ["a", "A-z_09", "x" * 64, "5eed0001aaaaaaaaaaaaaaaaaaaaaa00"])
def test_client_seed_accepts(seed):
    assert rollog.check_client_seed(seed) == seed


@pytest.mark.parametrize("seed", ["", "x" * 65, "a:b", "ñ", "a b", "abc\n", None, 12])
def test_client_seed_rejects(seed):
    with pytest.raises(RollogError) as caught:
        rollog.check_client_seed(seed)
    assert caught.value.code == "bad_client_seed"


def test_server_client_seed_is_valid_and_fresh():
    first, second = rollog.server_client_seed(), rollog.server_client_seed()
    assert len(first) == 32 and first != second
    assert rollog.check_client_seed(first) == first


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Percepción", "Percepción"),
        ("Percepcio\u0301n", "Percepción"),  # decomposed accent -> NFC
        ("línea\nnueva\ttab\x00\x7f\x85", "líneanuevatab"),
        ("e\x00\u0301", "é"),  # stripping first lets the accent compose
        ("Aspecto «Veterano»", "Aspecto «Veterano»"),
    ],
)
def test_normalise_purpose(text, expected):
    assert rollog.normalise_purpose(text) == expected


def test_new_epoch_root_and_anchor():
    fresh = rollog.new_epoch_root()
    assert len(fresh) == 32
    anchor = rollog.epoch_anchor(fresh, rollog.EPOCH_LENGTH)
    assert hash_chain(rollog.seed_for_slot(fresh, rollog.EPOCH_LENGTH, 9_999), 9_999) == anchor


def test_format_time_is_utc_to_the_second():
    madrid = timezone(timedelta(hours=1))
    moment = datetime(2025, 1, 15, 21, 0, 0, 123456, tzinfo=madrid)
    assert rollog.format_time(moment) == "2025-01-15T20:00:00Z"
    with pytest.raises(RollogError):
        rollog.format_time(datetime(2025, 1, 15, 20, 0, 0))


def roll_fields(**overrides):
    fields = dict(
        campaign=CAMPAIGN,
        seq=1,
        prev=VECTORS[0].hash,
        time="2025-01-15T20:00:00Z",
        user="alicia",
        character="Rodrigo",
        scene="escena-1",
        purpose="Atletismo: saltar el foso",
        spec="3d10",
        epoch=1,
        epoch_index=1,
        seed=bytes.fromhex(SEED_CHAIN[1]),
        client_seed="5eed0001aaaaaaaaaaaaaaaaaaaaaa00",
        seen=VECTORS[0].hash,
    )
    return fields | overrides


def test_roll_entry_matches_t2_field_set():
    assert rollog.roll_entry(**roll_fields()) == json.loads(VECTORS[1].entry)


def test_extra_game_fields_are_signed_beside_the_core():
    extra = {"system": "hitos", "modifier": {"Reflejos": 3, "Sigilo": 2}, "target": 15}
    entry = rollog.roll_entry(**roll_fields(extra=extra))
    assert entry["system"] == "hitos" and entry["target"] == 15
    assert entry["dice"] == [5, 3, 5]  # game data never changes the draw


@pytest.mark.parametrize(
    "overrides",
    [
        {"extra": {"dice": [10, 10, 10]}},
        {"extra": {"seq": 7}},
        {"extra": {"bonus": 1.5}},
        {"extra": {"nested": [{"x": 0.5}]}},
        {"campaign": "Hitos_Demo"},
        {"campaign": "a:b"},
        {"seq": 0},
        {"seq": -1},
        {"prev": "XYZ"},
        {"time": "2025-01-15 20:00:00"},
        {"time": "2025-13-15T20:00:00Z"},
        {"spec": "3d10+"},
        {"client_seed": "no:colons"},
        {"client_seed_source": "magic"},
        {"seed": b"short"},
        {"epoch_index": 0},
        {"seen": "abc"},
    ],
)
def test_roll_entry_rejects(overrides):
    with pytest.raises(RollogError):
        rollog.roll_entry(**roll_fields(**overrides))


@pytest.mark.parametrize("positions", [[], [3], [-1], [0, 0, 5]])
def test_reroll_rejects_bad_positions(log, positions):
    with pytest.raises(RollogError) as caught:
        rollog.reroll_entry(
            parent=log[3],
            positions=positions,
            seq=4,
            prev=log[3].hash_hex,
            time="2025-01-15T20:11:00Z",
            user="alicia",
            purpose="x",
            epoch=1,
            epoch_index=4,
            seed=bytes.fromhex(SEED_CHAIN[4]),
            client_seed="c4",
            seen=log[3].hash_hex,
        )
    assert caught.value.code == "bad_positions"


def test_signing_key_must_be_32_bytes():
    with pytest.raises(RollogError):
        rollog.load_signing_key("abc")
    with pytest.raises(RollogError):
        rollog.load_signing_key(b"\x00" * 31)
