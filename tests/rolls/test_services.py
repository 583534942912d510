"""Appending to the log: slots, seeds, chain, idempotency, epochs, re-rolls and readings."""

import json

import pytest
from cryptography.fernet import Fernet, InvalidToken
from django.conf import settings
from django.core.exceptions import ValidationError

from campaigns import services as campaign_services
from campaigns.models import Visibility
from rolls import rollog, services, verify_log, verify_roll
from rolls.models import CampaignLog, RollEntry, SeedEpoch
from rules import hitos
from systems.hitos import reading as hitos_reading
from tests.factories import UserFactory, client_seed, plain_read, roll
from tests.rolls.conftest import make_table, public_key

CLIENT_SEED_ERROR = "La semilla del navegador no es válida: de 1 a 64 letras, cifras, guiones o guiones bajos."
STALE_PAGE = "La tirada se preparó con una página antigua. Recarga la página y vuelve a tirar."


def _messages(excinfo) -> list[str]:
    return excinfo.value.messages


def _root(epoch: SeedEpoch) -> bytes:
    return settings.ROLLOG_KEYS.fernet.decrypt(bytes(epoch.root_encrypted))


def _audit(campaign):
    refs = [e.signed.ref() for e in RollEntry.objects.filter(campaign=campaign).order_by("seq")]
    return verify_log.audit_log(refs, public_key())


# --- Opening the log ----------------------------------------------------------------


def test_creating_a_campaign_opens_its_first_epoch_at_seq_0(db):
    gm = UserFactory()
    campaign = campaign_services.campaign_create(gm=gm, title="Niebla", system="hitos", visibility=Visibility.PUBLIC)
    opening = RollEntry.objects.get(campaign=campaign)
    entry = opening.entry
    epoch = SeedEpoch.objects.get(campaign=campaign)
    assert (opening.seq, opening.kind, opening.epoch, opening.epoch_index) == (0, "epoch_open", 1, None)
    assert entry == {
        "anchor": epoch.anchor,
        "campaign": "niebla",
        "epoch": 1,
        "key": settings.ROLLOG_KEYS.public_key_hex,
        "kind": "epoch_open",
        "length": 10_000,
        "prev": "0" * 64,
        "seq": 0,
        "time": entry["time"],
        "v": 1,
    }
    # The anchor is SHA-256 applied L times to the secret root.
    assert verify_roll.hash_chain(_root(epoch), 10_000).hex() == epoch.anchor
    assert (epoch.epoch, epoch.length, epoch.opened_seq) == (1, 10_000, 0)
    log = CampaignLog.objects.get(campaign=campaign)
    assert (log.log_id, log.seq, log.head_hash, log.epoch, log.next_index) == ("niebla", 0, opening.entry_hash, 1, 1)
    assert verify_roll.signature_valid(public_key(), bytes.fromhex(opening.entry_hash), bytes(opening.signature))


def test_the_epoch_root_is_stored_encrypted_and_opens_only_with_the_seed_key(table):
    epoch = SeedEpoch.objects.get(campaign=table.campaign)
    root = _root(epoch)
    stored = bytes(epoch.root_encrypted)
    assert len(root) == 32
    assert root not in stored and root.hex().encode() not in stored
    with pytest.raises(InvalidToken):
        Fernet(Fernet.generate_key()).decrypt(stored)


def test_opening_the_log_twice_changes_nothing(table):
    log = services.log_open(campaign=table.campaign)
    assert log.seq == 0
    assert RollEntry.objects.filter(campaign=table.campaign).count() == 1


def test_a_second_campaign_with_a_clashing_slug_gets_its_own_log_id(db):
    gm = UserFactory()
    first = campaign_services.campaign_create(gm=gm, title="Niebla", system="hitos", visibility=Visibility.PUBLIC)
    second = campaign_services.campaign_create(gm=gm, title="Niebla!", system="hitos", visibility=Visibility.PUBLIC)
    assert first.roll_log.log_id == "niebla"
    assert second.slug == "niebla-2"
    assert second.roll_log.log_id == "niebla-2"


# --- One roll -------------------------------------------------------------------------


def test_roll_append_draws_exactly_what_rollog_derives_from_the_stored_entry(table, clock):
    entry = roll(
        table,
        user=table.player,
        spec="2d6+1d8",
        purpose="Atletismo: saltar el foso",
        client_seed="5eed0001aaaaaaaaaaaaaaaaaaaaaa00",
        character=table.character,
        post=table.post,
    )
    e = entry.entry
    epoch = SeedEpoch.objects.get(campaign=table.campaign, epoch=1)
    seed = rollog.seed_for_slot(_root(epoch), 10_000, 1)
    assert e["seed"] == seed.hex()
    assert e["campaign"] == table.campaign.roll_log.log_id == table.campaign.slug
    message = rollog.derivation_message(e["campaign"], 1, "5eed0001aaaaaaaaaaaaaaaaaaaaaa00", "2d6+1d8")
    assert message == f"rollog/v1:{table.campaign.slug}:1:5eed0001aaaaaaaaaaaaaaaaaaaaaa00:2d6+1d8:-:-"
    dice = rollog.dice_for_spec(seed, message, "2d6+1d8")
    assert e["dice"] == dice == entry.dice
    # Rebuilding the entry from its inputs gives the very bytes that were signed.
    rebuilt = rollog.build_roll(
        settings.ROLLOG_KEYS.signing_key,
        campaign=e["campaign"],
        seq=1,
        prev=RollEntry.objects.get(campaign=table.campaign, seq=0).entry_hash,
        time="2031-03-14T18:00:00Z",
        user=f"u{table.player.pk}",
        character=f"ch{table.character.pk}",
        scene=f"sc{table.scene.pk}",
        purpose="Atletismo: saltar el foso",
        spec="2d6+1d8",
        epoch=1,
        epoch_index=1,
        seed=seed,
        client_seed="5eed0001aaaaaaaaaaaaaaaaaaaaaa00",
        seen=e["prev"],
        extra={"game": {"system": "test", "sum": sum(dice)}, "post": f"p{table.post.pk}"},
    )
    assert bytes(entry.entry_bytes) == rebuilt.entry_bytes
    assert bytes(entry.signature) == rebuilt.signature
    assert (entry.entry_hash, entry.permalink) == (rebuilt.hash_hex, rebuilt.permalink)
    assert (entry.user, entry.character, entry.scene, entry.post) == (
        table.player,
        table.character,
        table.scene,
        table.post,
    )
    assert e["client_seed_source"] == "browser"


def test_the_revealed_seed_hashes_down_to_the_anchor(table):
    for _ in range(3):
        entry = roll(table)
    anchor = SeedEpoch.objects.get(campaign=table.campaign).anchor
    assert entry.epoch_index == 3
    assert verify_roll.hash_chain(bytes.fromhex(entry.entry["seed"]), 3).hex() == anchor


def test_seq_is_contiguous_and_each_entry_names_the_previous_one(table):
    for _ in range(5):
        roll(table)
    entries = list(RollEntry.objects.filter(campaign=table.campaign).order_by("seq"))
    assert [e.seq for e in entries] == [0, 1, 2, 3, 4, 5]
    assert [e.epoch_index for e in entries] == [None, 1, 2, 3, 4, 5]
    assert [e.entry["prev"] for e in entries] == ["0" * 64] + [e.entry_hash for e in entries[:-1]]
    log = CampaignLog.objects.get(campaign=table.campaign)
    assert (log.seq, log.head_hash, log.next_index) == (5, entries[-1].entry_hash, 6)
    assert _audit(table.campaign).ok


def test_time_never_goes_back_even_when_the_clock_does(clock, table):
    first = roll(table)
    clock.advance(minutes=-10)
    second = roll(table)
    clock.advance(minutes=20)
    third = roll(table)
    assert [first.time, second.time, third.time] == [
        "2031-03-14T18:00:00Z",
        "2031-03-14T18:00:00Z",
        "2031-03-14T18:10:00Z",
    ]
    assert _audit(table.campaign).ok


def test_without_a_client_seed_the_server_makes_one_and_says_so(table):
    entry = services.roll_append(
        campaign=table.campaign, user=table.player, spec="3d10", purpose="Sin JavaScript", read=plain_read
    )
    assert entry.entry["client_seed_source"] == "server"
    assert len(entry.client_seed) == 32


def test_the_purpose_is_normalised_and_limited(table):
    entry = roll(table, purpose="Cafe\u0301\x07 con leche")
    assert entry.entry["purpose"] == entry.purpose == "Café con leche"
    with pytest.raises(ValidationError) as excinfo:
        roll(table, purpose="x" * 301)
    assert _messages(excinfo) == ["El motivo de la tirada no puede pasar de 300 caracteres."]


@pytest.mark.parametrize("spec", ["3d1", "0d6", "3d10+", "101d6", "d6", "3D10"])
def test_a_bad_pool_is_refused_before_anything_is_written(table, spec):
    with pytest.raises(ValidationError) as excinfo:
        roll(table, spec=spec)
    assert _messages(excinfo) == [
        f"Reserva de dados no válida: {spec} (se espera algo como 3d10 o 2d6+1d8, hasta 100 dados)."
    ]
    assert RollEntry.objects.filter(campaign=table.campaign).count() == 1


# --- Client seeds and `seen` ------------------------------------------------------------


def test_a_retry_with_the_same_client_seed_returns_the_existing_entry(table):
    first = roll(table, client_seed="reintento-1")
    again = roll(table, client_seed="reintento-1")
    assert again.pk == first.pk
    assert RollEntry.objects.filter(campaign=table.campaign).count() == 2
    assert CampaignLog.objects.get(campaign=table.campaign).seq == 1


def test_another_user_cannot_reuse_a_client_seed(table):
    roll(table, user=table.player, client_seed="mia")
    with pytest.raises(ValidationError) as excinfo:
        roll(table, user=table.other, client_seed="mia")
    assert _messages(excinfo) == ["Esa semilla ya se usó en otra tirada."]


def test_the_same_client_seed_for_a_different_pool_is_refused(table):
    roll(table, client_seed="mia", spec="3d10")
    with pytest.raises(ValidationError) as excinfo:
        roll(table, client_seed="mia", spec="2d6")
    assert _messages(excinfo) == ["Esa semilla ya se usó en otra tirada."]


def test_a_client_seed_may_repeat_in_another_campaign(table, db):
    other = make_table()
    roll(table, client_seed="comun")
    entry = roll(other, client_seed="comun")
    assert entry.campaign == other.campaign


@pytest.mark.parametrize("seed", ["", "a" * 65, "con espacio", "ñandú", "a/b", "semilla.1", "a\n"])
def test_a_malformed_client_seed_is_refused_in_spanish(table, seed):
    with pytest.raises(ValidationError) as excinfo:
        roll(table, client_seed=seed)
    assert _messages(excinfo) == [CLIENT_SEED_ERROR]


@pytest.mark.parametrize("seed", ["a", "A" * 64, "0-_zZ9"])
def test_client_seeds_of_the_allowed_alphabet_are_accepted(table, seed):
    assert roll(table, client_seed=seed).client_seed == seed


def test_seen_is_stored_when_it_names_an_entry_of_the_current_epoch(table):
    opening = RollEntry.objects.get(campaign=table.campaign, seq=0)
    first = roll(table)
    second = roll(table, seen=opening.entry_hash)
    third = roll(table)
    assert second.entry["seen"] == opening.entry_hash
    # Without `seen` the entry records the head the server had.
    assert first.entry["seen"] == opening.entry_hash
    assert third.entry["seen"] == second.entry_hash
    assert _audit(table.campaign).ok


@pytest.mark.parametrize("seen", ["0" * 64, "zz", "f" * 63])
def test_seen_naming_no_entry_of_this_log_is_refused(table, seen):
    with pytest.raises(ValidationError) as excinfo:
        roll(table, seen=seen)
    assert _messages(excinfo) == [STALE_PAGE]


def test_seen_from_another_campaign_is_refused(table):
    other = make_table()
    with pytest.raises(ValidationError) as excinfo:
        roll(table, seen=other.campaign.roll_log.head_hash)
    assert _messages(excinfo) == [STALE_PAGE]


# --- Epochs -------------------------------------------------------------------------------


def test_a_new_epoch_opens_as_soon_as_the_previous_one_is_used_up(monkeypatch, db):
    monkeypatch.setattr(services, "EPOCH_LENGTH", 3)
    table = make_table()
    rolls = [roll(table) for _ in range(4)]
    entries = list(RollEntry.objects.filter(campaign=table.campaign).order_by("seq"))
    assert [(e.seq, e.kind, e.epoch, e.epoch_index) for e in entries] == [
        (0, "epoch_open", 1, None),
        (1, "roll", 1, 1),
        (2, "roll", 1, 2),
        (3, "roll", 1, 3),
        (4, "epoch_open", 2, None),
        (5, "roll", 2, 1),
    ]
    second = SeedEpoch.objects.get(campaign=table.campaign, epoch=2)
    assert (second.length, second.opened_seq) == (3, 4)
    assert entries[4].entry["anchor"] == second.anchor
    assert entries[4].entry["prev"] == rolls[2].entry_hash
    assert verify_roll.hash_chain(bytes.fromhex(rolls[3].entry["seed"]), 1).hex() == second.anchor
    assert rolls[3].entry["seen"] == entries[4].entry_hash
    log = CampaignLog.objects.get(campaign=table.campaign)
    assert (log.epoch, log.next_index, log.seq) == (2, 2, 5)
    report = _audit(table.campaign)
    assert report.ok, report.problems


def test_a_page_seen_before_the_new_epoch_must_be_reloaded(monkeypatch, db):
    monkeypatch.setattr(services, "EPOCH_LENGTH", 2)
    table = make_table()
    roll(table)
    last_of_epoch = roll(table)
    with pytest.raises(ValidationError) as excinfo:
        roll(table, seen=last_of_epoch.entry_hash)
    assert _messages(excinfo) == [STALE_PAGE]


def test_the_epoch_length_is_read_when_the_log_opens_not_at_import(monkeypatch, db):
    monkeypatch.setattr(services, "EPOCH_LENGTH", 5)
    table = make_table()
    assert SeedEpoch.objects.get(campaign=table.campaign).length == 5
    monkeypatch.setattr(services, "EPOCH_LENGTH", 2)
    # An open epoch keeps its own length: no early rollover.
    for _ in range(5):
        roll(table)
    assert list(SeedEpoch.objects.filter(campaign=table.campaign).values_list("epoch", "length")) == [(1, 5), (2, 2)]
    assert _audit(table.campaign).ok


@pytest.mark.parametrize(("length", "step"), [(10, 3), (9, 3), (1, 100), (100, 100), (250, 100)])
def test_cached_chain_points_give_every_slot_exactly(length, step):
    root = bytes(range(32))
    points = services._checkpoints(root, length, step)
    assert points[-1] == root
    assert points[0] == rollog.epoch_anchor(root, length)


def test_every_slot_of_a_short_epoch_comes_from_the_cache_correctly(monkeypatch, table):
    monkeypatch.setattr(services, "CHECKPOINT_STEP", 4)
    services.chain_cache_clear()
    epoch = SeedEpoch.objects.get(campaign=table.campaign)
    root = _root(epoch)
    for index in (0, 1, 3, 4, 5, 9_996, 9_999, 10_000):
        assert services._seed_for(epoch, index) == rollog.seed_for_slot(root, 10_000, index)


def test_a_root_that_does_not_lead_to_the_anchor_stops_the_roll(table):
    services.chain_cache_clear()
    epoch = SeedEpoch.objects.get(campaign=table.campaign)
    epoch.anchor = "0" * 64
    with pytest.raises(services.SeedChainError):
        services._seed_for(epoch, 1)


# --- Re-rolls -----------------------------------------------------------------------------


def _reroll(parent, positions, **kwargs):
    kwargs.setdefault("client_seed", client_seed())
    kwargs.setdefault("user", parent.user)
    return services.reroll_append(parent=parent, positions=positions, purpose="Aspecto", read=plain_read, **kwargs)


def test_a_reroll_redraws_only_the_chosen_positions(table):
    original = roll(table, character=table.character)
    reroll = _reroll(original, [2, 0])
    e = reroll.entry
    assert (e["kind"], e["parent"], e["rerolled"], e["spec"]) == ("reroll", original.entry_hash, [0, 2], "3d10")
    assert e["dice"][1] == original.entry["dice"][1]
    assert [e["dice"][0], e["dice"][2]] == e["drawn"]
    seed = bytes.fromhex(e["seed"])
    message = rollog.derivation_message(e["campaign"], e["seq"], e["client_seed"], "3d10", original.entry_hash, [0, 2])
    stream = rollog.dice_stream(seed, message)
    assert [stream.roll(10), stream.roll(10)] == e["drawn"]
    assert (reroll.parent, reroll.character, reroll.scene) == (original, table.character, table.scene)
    assert e["character"] == original.entry["character"]
    assert _audit(table.campaign).ok


def test_a_reroll_of_the_latest_version_continues_the_chain(table):
    original = roll(table)
    first = _reroll(original, [0])
    second = _reroll(first, [1, 2])
    assert second.entry["parent"] == first.entry_hash
    assert second.entry["dice"][0] == first.entry["dice"][0]
    assert _audit(table.campaign).ok


def test_a_version_cannot_be_rerolled_twice(table):
    original = roll(table)
    _reroll(original, [0])
    with pytest.raises(ValidationError) as excinfo:
        _reroll(original, [1])
    assert _messages(excinfo) == ["Esa versión de la tirada ya se repitió: actúa sobre la última."]
    assert RollEntry.objects.filter(campaign=table.campaign).count() == 3


@pytest.mark.parametrize("positions", [[], [3], [-1], [0, 3], [True]])
def test_reroll_positions_must_be_some_of_the_pool(table, positions):
    original = roll(table)
    with pytest.raises(ValidationError) as excinfo:
        _reroll(original, positions)
    assert _messages(excinfo) == ["Elige qué dados repetir: al menos uno, con posiciones entre 0 y 2."]


def test_repeated_positions_count_once(table):
    reroll = _reroll(roll(table), [1, 1])
    assert reroll.entry["rerolled"] == [1]


def test_a_retried_reroll_returns_the_same_entry(table):
    original = roll(table)
    first = _reroll(original, [0], client_seed="repite-1")
    assert _reroll(original, [0], client_seed="repite-1").pk == first.pk


def test_an_epoch_opening_cannot_be_rerolled(table):
    opening = RollEntry.objects.get(campaign=table.campaign, seq=0)
    with pytest.raises(ValidationError) as excinfo:
        _reroll(opening, [0], user=table.player)
    assert _messages(excinfo) == ["Solo se pueden repetir tiradas."]


def test_hitos_activation_data_is_signed_in_the_reroll(table):
    original = roll(table)
    reroll = _reroll(
        original,
        [0],
        user=table.gm,
        activation="negative",
        aspect="Miedo a las alturas",
        target_user=table.player,
        paid_by=table.gm,
        payment="1 punto dramático",
    )
    e = reroll.entry
    assert (e["user"], e["activation"], e["aspect"], e["target_user"], e["paid_by"], e["payment"]) == (
        f"u{table.gm.pk}",
        "negative",
        "Miedo a las alturas",
        f"u{table.player.pk}",
        f"u{table.gm.pk}",
        "1 punto dramático",
    )
    # Activation data is not part of the HMAC message (§6.7).
    assert verify_roll.roll_message(e).endswith(f":{original.entry_hash}:0")
    with pytest.raises(ValidationError):
        _reroll(reroll, [1], activation="neutral")


# --- HITOS readings ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("dice", "difficulty", "fields"),
    [
        # H1 — m, C, M are the lowest, middle and highest die; C is the value.
        (
            [9, 2, 1],
            15,
            {
                "labels": ["M", "C", "m"],
                "m": 1,
                "C": 2,
                "M": 9,
                "value": 2,
                "total": 11,
                "success": False,
                "critical": 0,
                "fumble": 0,
            },
        ),
        (
            [4, 7, 6],
            15,
            {
                "labels": ["m", "M", "C"],
                "m": 4,
                "C": 6,
                "M": 7,
                "value": 6,
                "total": 15,
                "success": True,
                "critical": 0,
                "fumble": 0,
            },
        ),
        # H5 — a double 10 succeeds whatever the difficulty.
        (
            [10, 3, 10],
            40,
            {"m": 3, "C": 10, "M": 10, "value": 10, "total": 19, "success": True, "critical": 2, "fumble": 0},
        ),
        # H6 — a double 1 fails even when the total beats the difficulty.
        ([1, 9, 1], 5, {"m": 1, "C": 1, "M": 9, "value": 1, "total": 10, "success": False, "critical": 0, "fumble": 2}),
    ],
)
def test_the_hitos_reader_signs_the_reading(table, dice, difficulty, fields):
    read = hitos_reading.hitos_reader(
        campaign=table.campaign,
        what="Reflejos + Sigilo",
        modifier=9,
        difficulty=difficulty,
        breakdown=[("Reflejos", 5), ("Sigilo", 4)],
    )
    game = read(dice)
    assert {k: game[k] for k in fields} == fields
    assert (game["system"], game["what"], game["breakdown"], game["modifier"], game["difficulty"], game["reading"]) == (
        "hitos",
        "Reflejos + Sigilo",
        [["Reflejos", 5], ["Sigilo", 4]],
        9,
        difficulty,
        "normal",
    )


def test_a_hidden_difficulty_is_not_written_into_the_public_entry(table):
    entry, result = hitos_reading.hitos_check_roll(
        campaign=table.campaign,
        user=table.player,
        purpose="Buscar trampas",
        modifier=7,
        difficulty=23,
        difficulty_hidden=True,
        client_seed=client_seed(),
    )
    game = entry.entry["game"]
    assert game["difficulty"] == "hidden"
    assert game["success"] is result.success
    # The total is at most 10 + 7, so "23" anywhere in the game fields would be the difficulty.
    assert "23" not in json.dumps(game)
    assert set(game) == {
        "system",
        "what",
        "breakdown",
        "reading",
        "labels",
        "m",
        "C",
        "M",
        "value",
        "modifier",
        "total",
        "critical",
        "fumble",
        "difficulty",
        "success",
    }


def test_a_check_without_difficulty_has_no_success(table):
    entry, _ = hitos_reading.hitos_check_roll(
        campaign=table.campaign,
        user=table.player,
        purpose="Iniciativa",
        modifier=6,
        difficulty=None,
        client_seed=client_seed(),
    )
    assert entry.entry["game"]["difficulty"] is None
    assert "success" not in entry.entry["game"]


def test_hitos_check_roll_reads_the_signed_dice_with_the_campaign_options(table):
    entry, result = hitos_reading.hitos_check_roll(
        campaign=table.campaign,
        user=table.player,
        purpose="Intelecto + Percepción: huellas",
        what="Intelecto + Percepción",
        modifier=9,
        difficulty=15,
        breakdown=[("Intelecto", 5), ("Percepción", 4)],
        character=table.character,
        scene=table.scene,
        post=table.post,
        client_seed=client_seed(),
    )
    dice = entry.entry["dice"]
    assert entry.spec == "3d10" and len(dice) == 3
    expected = hitos.check(hitos.HitosRoll(tuple(dice)), 9, 15)
    assert result == expected
    game = entry.entry["game"]
    assert (game["value"], game["total"], game["success"], game["what"]) == (
        expected.value,
        expected.total,
        expected.success,
        "Intelecto + Percepción",
    )
    assert entry.entry["purpose"] == "Intelecto + Percepción: huellas"


# --- Free rolls ------------------------------------------------------------------------------


def _free(table, text, purpose="", **kwargs):
    kwargs.setdefault("client_seed", client_seed())
    return services.free_roll(campaign=table.campaign, user=table.player, text=text, purpose=purpose, **kwargs)


def test_a_free_roll_goes_through_the_log_with_its_reading(table):
    entry = _free(table, "2d6+1d8+2", "Monedas")
    e = entry.entry
    assert (e["spec"], e["purpose"]) == ("2d6+1d8", "Monedas")
    d = e["dice"]
    assert e["game"] == {
        "system": "free",
        "expression": "2d6+1d8+2",
        "total": sum(d) + 2,
        "detail": f"2d6+1d8+2: [{d[0]}, {d[1]}]+[{d[2]}]+2 = {sum(d) + 2}",
    }
    assert _audit(table.campaign).ok


def test_a_free_roll_keeps_the_highest_dice(table):
    entry = _free(table, "4d6kh3")
    d = entry.entry["dice"]
    assert entry.entry["game"]["total"] == sum(sorted(d)[1:])
    assert entry.entry["purpose"] == "4d6kh3"


def test_a_free_roll_joins_neighbouring_dice_of_the_same_size(table):
    assert _free(table, "d6 + d6 + d8 + d6").spec == "2d6+1d8+1d6"
    assert _free(table, "d6! + d6! + d6 + d8").spec == "2d6!+1d6+1d8"


def test_an_exploding_free_roll_is_drawn_and_read_in_the_logs_order(table):
    # rollog v1.1 §3.4b: a d2 explodes on 2; the log draws the written die,
    # then one die per maximum, and the notation reads the same list.
    entry = _free(table, "1d2!+3")
    dice = entry.entry["dice"]
    assert entry.spec == "1d2!" and dice[-1] == 1 and all(d == 2 for d in dice[:-1])
    assert entry.entry["game"]["total"] == sum(dice) + 3
    assert _audit(table.campaign).ok


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("hola", "No entiendo la tirada (posición 1: se esperaba un número o una tirada (p. ej. 2d6))."),
        ("101d6", "No entiendo la tirada (posición 1: no se pueden tirar más de 100 dados)."),
        ("1d1", "No entiendo la tirada (posición 3: un dado debe tener entre 2 y 1000 caras, no 1)."),
        ("d6+" * 40 + "d6", "No entiendo la tirada (posición 101: la tirada tiene 122 caracteres y el máximo es 100)."),
        ("7", "La tirada necesita al menos un dado."),
    ],
)
def test_a_bad_free_roll_is_refused_in_spanish(table, text, message):
    with pytest.raises(ValidationError) as excinfo:
        _free(table, text)
    assert _messages(excinfo) == [message]
    assert RollEntry.objects.filter(campaign=table.campaign).count() == 1


def test_a_database_without_insert_returning_still_appends(monkeypatch, table):
    from django.db import connection

    if connection.vendor != "sqlite":
        pytest.skip("only SQLite before 3.35 lacks INSERT … RETURNING")
    monkeypatch.setattr(connection.features, "can_return_columns_from_insert", False)
    entries = [roll(table) for _ in range(2)]
    assert [e.seq for e in entries] == [1, 2]
    assert RollEntry.objects.get(pk=entries[1].pk).entry_hash == entries[1].entry_hash
    assert CampaignLog.objects.get(campaign=table.campaign).head_hash == entries[1].entry_hash
    assert _audit(table.campaign).ok


def test_the_post_a_roll_belongs_to_is_signed_and_verifies(table):
    entry = roll(table, post=table.post)
    assert entry.entry["post"] == f"p{table.post.pk}"
    assert entry.post == table.post
    assert verify_roll.signature_valid(public_key(), bytes.fromhex(entry.entry_hash), bytes(entry.signature))


def test_a_roll_without_a_post_signs_no_post_field(table):
    assert "post" not in roll(table).entry
