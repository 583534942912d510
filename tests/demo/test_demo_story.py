"""The ``make run`` demo reads well whatever the dice give (issue 14).

Its rolls are real, so each load is different. Here the randomness the roll
log draws from (the epoch root and the server's client seed) is seeded, and
the demo is loaded under many seeds and under the extreme dice (every check
a fumble, every check a triple ten): the narrator's posts must say what the
signed dice say, and no player character may start the demo mad or dying
(the creature may fall to Tomás's shot; the narrator then says so).
"""

import io
import random

import pytest
from django.core.management import call_command
from django.db import transaction

from campaigns.models import Post
from demo import story
from demo.campaign import demo_load
from demo.table import CREATURE, TABLE_SCENE
from rolls import rollog
from rolls.models import RollEntry
from rules.hitos_health import HealthState, MentalState, horror_level, massive_test_due
from rules.meters import Meter
from sheets.models import Character
from systems.hitos.models import Attack, HorrorTest
from table.models import TableRoll

pytestmark = pytest.mark.django_db

SEEDS = range(12)


def _seed_the_log(monkeypatch, seed: int) -> None:
    """The log's own randomness, from ``random.Random(seed)``: the rolls are
    still drawn, signed and verified exactly as in play."""
    source = random.Random(seed)
    monkeypatch.setattr(rollog, "new_epoch_root", lambda: source.randbytes(rollog.ROOT_BYTES))
    monkeypatch.setattr(rollog, "server_client_seed", lambda: source.randbytes(16).hex())


def _fixed_dice(monkeypatch, dice: list[int]) -> None:
    """Every 3d10 of the log comes out as ``dice`` (other pools stay real)."""
    real = rollog.dice_for_spec

    def draw(seed, message, spec):
        return list(dice) if spec == "3d10" else real(seed, message, spec)

    monkeypatch.setattr(rollog, "dice_for_spec", draw)


def _narrations(scene) -> list[Post]:
    return list(scene.posts.filter(voice=Post.Voice.NPC, npc_name=story.NARRATOR).order_by("pk"))


def _latest(campaign, purpose: str) -> RollEntry:
    """The latest version of the table roll with this purpose (after any re-roll)."""
    return TableRoll.objects.select_related("latest").get(campaign=campaign, first__purpose=purpose).latest


def _assert_reads_well(campaign) -> None:
    ines = Character.objects.get(campaign=campaign, name="Inés Albarrán")
    tomas = Character.objects.get(campaign=campaign, name="Tomás Quiroga")
    creature = Character.objects.get(campaign=campaign, name=CREATURE)

    # No player character starts the demo mad or dying; Inés's sanity meter is never full.
    for character in (ines, tomas):
        sheet = character.hitos
        assert sheet.mental_meter.empty > 0 and sheet.health_meter.empty > 0, character.name
        assert sheet.mental_state != MentalState.ENLOQUECIDO and sheet.health_state != HealthState.MORIBUNDO
    # No exposure called for a trauma test (H77): the loss stayed below Entereza.
    assert not massive_test_due(ines.hitos.mental_meter.lost, ines.hitos.entereza)

    # Scene 1: footprints (after the aspect re-roll), stealth and the coins.
    hall = campaign.scenes.get(title="1. La verja oxidada")
    (garden,) = _narrations(hall)
    footprints = RollEntry.objects.get(campaign=campaign, purpose="Aspecto «Nieta del difunto»: repite dos dados")
    stealth = RollEntry.objects.get(campaign=campaign, purpose="Reflejos + Sigilo: cruzar el jardín sin ruido")
    coins = RollEntry.objects.get(campaign=campaign, purpose="Monedas en el bolsillo del cochero")
    assert ("huellas recientes" in garden.body) is footprints.signed_game["success"]
    assert ("no dejó rastro" in garden.body) is not footprints.signed_game["success"]
    assert ("nadie en la casa parece darse cuenta" in garden.body) is stealth.signed_game["success"]
    assert ("la grava cruje" in garden.body) is not stealth.signed_game["success"]
    assert f"cuenta sus monedas: {coins.signed_game['total']}." in garden.body
    assert coins.scene_id == hall.pk

    cellar = campaign.scenes.get(title=TABLE_SCENE)
    ledger, steps, attack, horror, key, steps_left = _narrations(cellar)

    assert ("*«Para el pozo.»*" in ledger.body) is _latest(campaign, "Descifrar el libro de cuentas").signed_game[
        "success"
    ]
    assert ("Las cifras bailan" in ledger.body) is not _latest(campaign, "Descifrar el libro de cuentas").signed_game[
        "success"
    ]
    slipped = not _latest(campaign, "Bajar sin resbalar").signed_game["success"]
    assert ("baja los últimos escalones resbalando" in steps.body) is slipped
    assert ("recupera el equilibrio" in steps.body) is not slipped

    shots = list(Attack.objects.filter(combat__scene=cellar).order_by("pk"))
    said = "Tomás dispara una vez." if len(shots) == 1 else f"Tomás dispara {len(shots)} veces."
    assert attack.body.startswith(said)
    applied = [a for a in shots if a.damage_applied is not None]
    if applied:
        # One hit, the last shot, applied; the narration gives its damage and the creature's state.
        assert applied == shots[-1:]
        damage = applied[0].damage_applied
        meter = creature.hitos.health_meter
        assert meter.lost >= min(damage, meter.capacity)
        assert (f"le hace {damage} punto" in attack.body) is (damage > 0)
        state = creature.hitos.health_state
        assert ("se desploma junto al brocal" in attack.body) is (state == HealthState.MORIBUNDO)
        assert ("retrocede hacia el brocal" in attack.body) is (state == HealthState.HERIDO)
        assert ("se arrastra a duras penas" in attack.body) is (state == HealthState.INCAPACITADO)
        assert ("ni se detiene" in attack.body) is (state == HealthState.SANO)
    else:
        assert len(shots) == 6 and "Las balas se pierden en la oscuridad" in attack.body
        assert creature.hitos.health_meter.lost == 0

    test = HorrorTest.objects.get(scene=cellar)
    exposures = {e.character_id: e for e in test.exposures.select_related("table_roll__first")}
    ines_exposure, tomas_exposure = exposures[ines.pk], exposures[tomas.pk]
    # Inés really tests (Degeneración 0); what she lost is what her meter shows and what is told.
    assert not ines_exposure.exempt and ines_exposure.table_roll is not None
    lost = ines.hitos.mental_meter.lost
    assert ines_exposure.loss == lost
    passed = ines_exposure.table_roll.first.signed_game["success"]
    if lost:
        assert f"pierde {lost} punto{'' if lost == 1 else 's'} de Estabilidad mental." in horror.body
        assert ("A Inés Albarrán se le encoge el estómago, pero aguanta" in horror.body) is passed
        assert ("A Inés Albarrán se le hiela la sangre" in horror.body) is not passed
    elif passed:
        assert "Inés Albarrán aguanta la mirada de la cosa sin perder la calma." in horror.body
    else:
        assert "Inés Albarrán se estremece" in horror.body
    # Tomás (Degeneración 1) is shifted down to Desasosiego, which he is spared (H80).
    assert tomas_exposure.exempt and "Tomás Quiroga ha visto cosas peores: ni se inmuta." in horror.body
    assert tomas.hitos.mental_meter.lost == 7  # the two marks of his sheet, nothing more

    # The whisper's outcome goes to the two of them only.
    got_it = _latest(campaign, "Quitarle la llave sin que se dé cuenta").signed_game["success"]
    assert ("sin un ruido" in key.body) is got_it and ("La llave sigue donde estaba" in key.body) is not got_it
    assert key.recipients == Post.Recipients.CHOSEN
    assert {u.username for u in key.chosen_recipients.all()} == {"ana", "bruno"}

    revealed = RollEntry.objects.get(campaign=campaign, purpose="¿Cuántos escalones faltan hasta el agua?")
    assert hasattr(revealed, "reveal")
    assert steps_left.body == story.steps_left_narration(steps=revealed.signed_game["total"])


@pytest.mark.parametrize("seed", SEEDS)
def test_the_demo_reads_consistently_under_any_seed(monkeypatch, seed):
    _seed_the_log(monkeypatch, seed)
    _users, campaign = demo_load(vaesen=False, aventuras=False)
    _assert_reads_well(campaign)


@pytest.mark.parametrize(
    "dice",
    [pytest.param([1, 1, 1], id="every-check-fumbles"), pytest.param([10, 10, 10], id="every-check-is-a-triple-ten")],
)
def test_the_demo_reads_consistently_with_the_worst_and_best_dice(monkeypatch, dice):
    _fixed_dice(monkeypatch, dice)
    _users, campaign = demo_load(vaesen=False, aventuras=False)
    _assert_reads_well(campaign)


def test_the_seed_moves_the_dice_and_the_rolls_still_verify(monkeypatch):
    dice = []
    for seed in (1, 2):
        with transaction.atomic():
            _seed_the_log(monkeypatch, seed)
            _users, campaign = demo_load(vaesen=False, aventuras=False)
            dice.append([e.entry["dice"] for e in RollEntry.objects.filter(campaign=campaign).rolls().order_by("seq")])
            call_command("verify_rolls", campaign=campaign.slug, stdout=io.StringIO())
            transaction.set_rollback(True)
    assert dice[0] != dice[1]


# --- The horror level the demo can afford (H77, H79, H80, H81) -------------------------


class _Sheet:
    def __init__(self, meter: Meter, entereza: int, degeneracion: int = 0):
        self.mental_meter, self.entereza, self.degeneracion = meter, entereza, degeneracion


def test_a_level_is_safe_only_if_no_roll_can_reach_entereza_or_fill_the_meter():
    ines = _Sheet(Meter(24), 8)
    # H79 — Estupor loses 1 on a success, m on a failure; failing at 15 with
    # Entereza 8 needs C ≤ 6, so m ≤ 6 < 8: no trauma test (H77) can be due.
    assert story.horror_is_safe(horror_level("estupor"), meter=ines.mental_meter, entereza=8, degeneracion=0)
    # Miedo loses M on a failure: dice 1, 1, 10 fail and lose 10 ≥ 8, and a
    # failed trauma test would slash every box left.
    assert not story.horror_is_safe(horror_level("miedo"), meter=ines.mental_meter, entereza=8, degeneracion=0)
    assert story.safe_horror_level([(ines, 0, 0)]) == horror_level("estupor")
    # A −2 on the test lets C ≤ 8 fail, so m can be 8: Estupor is no longer safe.
    assert story.safe_horror_level([(ines, 0, -2)]) == horror_level("desasosiego")
    # With Entereza 11, M (at most 10) never reaches it: Miedo is safe; Pánico
    # (C + M on a failure) is not.
    assert story.safe_horror_level([(_Sheet(Meter(33), 11), 0, 0)]) == horror_level("miedo")


def test_the_level_is_the_strongest_every_exposed_character_can_afford():
    tomas = _Sheet(Meter(21, 7), 7, degeneracion=1)
    # Estupor with Entereza 7: failing needs C ≤ 7, so m can be 7 ≥ 7. H80 —
    # Degeneración 1 makes no Desasosiego tests, so that level is safe.
    assert story.safe_horror_level([(tomas, 0, 0)]) == horror_level("desasosiego")
    # H81 — his aspect moves the level one step down: the test can be Estupor.
    assert story.safe_horror_level([(tomas, -1, 0)]) == horror_level("estupor")
    assert story.safe_horror_level([(tomas, -1, 0), (_Sheet(Meter(24), 8), 0, 0)]) == horror_level("estupor")
    # Desasosiego loses 1 on a failure: with one box left it would fill the meter.
    nearly_mad = _Sheet(Meter(24, 23), 8)
    assert story.safe_horror_level([(nearly_mad, 0, 0)]) is None
    assert story.safe_horror_level([(tomas, -1, 0), (nearly_mad, 0, 0)]) is None
