"""systems.hitos.checks.services: checks from the sheet, re-rolls and drama point moves."""

from __future__ import annotations

from fractions import Fraction

import pytest
from django.core.exceptions import ValidationError

from rolls.models import RollEntry
from rules import hitos
from rules.hitos_drama import BANK, GM_POOL, Transfer
from rules.probability import success_probability
from sheets.models import SheetEvent
from systems.hitos.campaign import gm_pool
from systems.hitos.checks import services as table
from systems.hitos.models import HitosEvent
from systems.hitos.sheet import services as sheet_services
from table.models import TableRoll
from tests.factories import client_seed


def _roll(play, **kwargs):
    setup = kwargs.pop("setup", None) or table.check_setup(play.ines, characteristic="reflejos", skill="Sigilo")
    kwargs.setdefault("client_seed", client_seed())
    return table.table_check(
        campaign=play.campaign,
        user=play.ana,
        setup=setup,
        purpose="Colarse en el sótano",
        difficulty=kwargs.pop("difficulty", 15),
        character=play.ines,
        scene=play.scene,
        post=play.post,
        **kwargs,
    )


def test_setup_adds_characteristic_skill_and_extra_reasons(play):
    setup = table.check_setup(play.ines, characteristic="reflejos", skill="Sigilo", extra=[("A oscuras", -2)])
    assert setup.modifier == 6 + 3 - 2
    assert setup.breakdown == (("Reflejos", 6), ("Sigilo", 3), ("A oscuras", -2))
    assert setup.what == "Reflejos + Sigilo"
    assert setup.arcane is False


def test_h54_h83_penalties_are_applied_by_themselves(play):
    # Inés: Aguante 5 + 5 // 2 = 7 and Entereza 5 + 5 // 2 = 7; 7 marks on
    # each meter make her Herido (H54) and Alterado (H83, K11 default ≥).
    play.ines.hitos.health_slashes = 7
    play.ines.hitos.mental_slashes = 7
    play.ines.hitos.save()
    setup = table.check_setup(play.ines, characteristic="reflejos")
    labels = dict(setup.breakdown)
    assert labels["Salud: Herido"] == -2
    assert labels["Mente: Alterado"] == -2
    assert setup.modifier == 6 - 2 - 2


def test_npc_has_no_mental_penalty(play):
    play.npc.hitos.mental_slashes = 20
    play.npc.hitos.save()
    setup = table.check_setup(play.npc, characteristic="fortaleza")
    assert setup.modifier == play.npc.hitos.fortaleza


def test_free_modifier_and_bad_choices(play):
    assert table.check_setup(None, free_modifier=4).modifier == 4
    with pytest.raises(ValidationError, match="característica"):
        table.check_setup(play.ines, characteristic="carisma")
    with pytest.raises(ValidationError, match="no tiene la habilidad «Vuelo»"):
        table.check_setup(play.ines, characteristic="reflejos", skill="Vuelo")


def test_arcane_skill_is_flagged(play):
    play.ines.skills.create(name="Invocar", category="arcana", value=2)
    assert table.check_setup(play.ines, characteristic="voluntad", skill="Invocar").arcane is True


def test_chance_is_the_rules_probability(play):
    setup = table.check_setup(play.ines, characteristic="reflejos", skill="Sigilo")
    assert table.chance(setup, 15, play.campaign) == success_probability(9, 15)
    assert isinstance(table.chance(setup, 15, play.campaign), Fraction)


def test_table_check_stores_the_roll_and_its_table_row(play):
    tr = _roll(play)
    assert tr.first == tr.latest
    assert tr.first.post == play.post and tr.first.character == play.ines
    game = tr.first.signed_game
    assert game["modifier"] == 9 and game["what"] == "Reflejos + Sigilo"
    result = table.table_result(tr)
    assert result.total == game["total"] and result.success == game["success"]


def test_same_client_seed_twice_gives_one_roll(play):
    seed = client_seed()
    first = _roll(play, client_seed=seed)
    again = _roll(play, client_seed=seed)
    assert first.pk == again.pk
    assert TableRoll.objects.count() == 1 and RollEntry.objects.rolls().count() == 1


def test_hidden_difficulty_is_kept_server_side(play):
    tr = _roll(play, difficulty=20, difficulty_hidden=True)
    assert tr.first.signed_game["difficulty"] == "hidden"
    assert tr.difficulty == 20
    assert table.table_result(tr).difficulty == 20


def test_reroll_moves_latest_and_reads_positive(play):
    tr = _roll(play)
    entry = table.table_reroll(
        tr, user=play.ana, positions=[0, 2], reading=hitos.Reading.POSITIVE, activation="positive", aspect="Ágil"
    )
    tr.refresh_from_db()
    assert tr.latest == entry and entry.parent == tr.first
    assert entry.signed_game["reading"] == "positive"
    assert entry.entry["aspect"] == "Ágil"
    assert entry.entry["dice"][1] == tr.first.entry["dice"][1]
    # The hidden-difficulty-free modifier and breakdown carry over.
    assert entry.signed_game["breakdown"] == tr.first.signed_game["breakdown"]
    assert table.table_result(tr).roll.reading == hitos.Reading.POSITIVE


@pytest.mark.parametrize("values", [[], ["3"], ["x"], ["-1"]])
def test_parse_positions_refuses_bad_dice(values):
    with pytest.raises(ValidationError):
        table.parse_positions(values)


def test_parse_positions_sorts_and_dedupes():
    assert table.parse_positions(["2", "0", "2"]) == [0, 2]


def test_drama_move_between_character_and_gm_pool_is_logged(play):
    ines = sheet_services.drama_account(play.ines)
    after = sheet_services.drama_move(
        campaign=play.campaign,
        transfers=[Transfer(ines, BANK), Transfer(BANK, GM_POOL)],
        actor=play.gm,
        reason="prueba",
    )
    assert after == {ines: 2, GM_POOL: 6}
    play.ines.refresh_from_db()
    play.campaign.refresh_from_db()
    assert play.ines.hitos.drama_points == 2 and gm_pool(play.campaign) == 6
    events = SheetEvent.objects.filter(kind=HitosEvent.DRAMA)
    assert events.count() == 2
    assert events.filter(character=None, before={"gm_drama_points": 5}, after={"gm_drama_points": 6}).exists()
    assert events.get(character=play.ines).actor == play.gm


def test_drama_move_never_goes_below_zero_and_changes_nothing(play):
    play.ines.hitos.drama_points = 0
    play.ines.hitos.save()
    ines = sheet_services.drama_account(play.ines)
    with pytest.raises(ValidationError, match="Inés Salcedo no tiene puntos dramáticos suficientes"):
        sheet_services.drama_move(
            campaign=play.campaign,
            transfers=[Transfer(BANK, GM_POOL), Transfer(ines, BANK)],
            actor=play.ana,
            reason="x",
        )
    play.campaign.refresh_from_db()
    assert gm_pool(play.campaign) == 5
    assert not SheetEvent.objects.exists()


def test_gm_pool_empty_message(play):
    play.campaign.game_state = {"gm_pool": 0}
    play.campaign.save(update_fields=["game_state"])
    with pytest.raises(ValidationError, match="reserva de la dirección"):
        sheet_services.drama_move(
            campaign=play.campaign, transfers=[Transfer(GM_POOL, BANK)], actor=play.gm, reason="x"
        )


def test_gm_pool_set_needs_reason_and_range(play):
    with pytest.raises(ValidationError):
        sheet_services.gm_pool_set(campaign=play.campaign, actor=play.gm, value=3, reason=" ")
    with pytest.raises(ValidationError):
        sheet_services.gm_pool_set(campaign=play.campaign, actor=play.gm, value=-1, reason="x")
    sheet_services.gm_pool_set(campaign=play.campaign, actor=play.gm, value=8, reason="Nueva sesión")
    play.campaign.refresh_from_db()
    assert gm_pool(play.campaign) == 8
    assert SheetEvent.objects.get(character=None).reason == "Nueva sesión"


def test_h92_degeneracion_gain_is_logged(play):
    sheet_services.degeneracion_gain(character=play.ines, actor=play.ana, reason="Activación arcana")
    play.ines.refresh_from_db()
    assert play.ines.hitos.degeneracion == 1
    event = SheetEvent.objects.get(character=play.ines)
    assert event.before == {"degeneracion": 0} and event.after == {"degeneracion": 1}
