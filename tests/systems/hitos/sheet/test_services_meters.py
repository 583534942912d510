import pytest
from django.core.exceptions import ValidationError

from sheets.models import SheetEvent
from systems.hitos.sheet import services
from tests.systems.hitos.sheet.factories import CharacterFactory

pytestmark = pytest.mark.django_db


def _apply(sheet, actor, action, amount=None, meter=services.HEALTH, **kw):
    return services.meter_apply(character=sheet, actor=actor, meter=meter, action=action, amount=amount, **kw)


def test_the_rules_spec_meter_sequence_with_aguante_5(world, fake_rolls):
    # rules-spec §meters: Aguante 5: take 7 → Herido; shock → 4 crosses → Sano;
    # take 4 → Herido; take 9 with the test passed → 9 slashes, 6 crosses → Moribundo.
    sheet, gm = world.sheet, world.gm
    assert sheet.hitos.aguante == 5 and sheet.hitos.health_meter.capacity == 15
    rolls = fake_rolls([6, 7, 8], [5, 9, 9])  # C 7 + 5 = 12 ≥ 12; C 9 + 5 = 14 ≥ 12: both passed
    change = _apply(sheet, gm, "damage", 7)
    assert (change.character.hitos.health_slashes, change.character.hitos.health_crosses) == (7, 0)
    assert change.character.hitos.health_label == "Herido"
    assert change.check.success and change.roll.entry["dice"] == [6, 7, 8]
    assert rolls.calls[0]["difficulty"] == 12 and rolls.calls[0]["modifier"] == 5
    change = _apply(sheet, gm, "shock")
    assert (change.character.hitos.health_slashes, change.character.hitos.health_crosses) == (0, 4)
    assert change.character.hitos.health_label == "Sano"
    change = _apply(sheet, gm, "damage", 4)  # below Aguante: no test
    assert (change.character.hitos.health_slashes, change.character.hitos.health_crosses) == (4, 4)
    assert change.character.hitos.health_label == "Herido" and change.roll is None
    change = _apply(sheet, gm, "damage", 9)
    assert (change.character.hitos.health_slashes, change.character.hitos.health_crosses) == (9, 6)
    assert change.character.hitos.health_meter.boxes == "××××××∕∕∕∕∕∕∕∕∕"
    assert change.character.hitos.health_label == "Moribundo"
    assert change.character.hitos.penalty == -5
    assert len(rolls.calls) == 2
    kinds = list(SheetEvent.objects.filter(character=sheet).order_by("id").values_list("kind", flat=True))
    assert kinds == ["damage", "shock", "damage", "damage"]
    last = SheetEvent.objects.filter(character=sheet).order_by("id").last()
    assert last.actor == gm and last.roll == rolls.entries[1]
    assert last.before == {"boxes": "××××∕∕∕∕·······", "slashes": 4, "crosses": 4, "state": "Herido"}
    assert last.after["state"] == "Moribundo"


def test_a_failed_mass_damage_test_slashes_every_box_left(world, fake_rolls):
    fake_rolls([1, 2, 3])  # C 2 + 5 = 7 < 12
    change = _apply(world.sheet, world.gm, "damage", 6)
    assert (change.character.hitos.health_slashes, change.character.hitos.health_crosses) == (15, 0)
    assert change.character.hitos.health_label == "Moribundo"
    assert "prueba fallada" in change.event.summary


def test_trauma_test_is_rolled_when_imbalance_reaches_entereza(world, fake_rolls):
    rolls = fake_rolls([5, 6, 7])  # 6 + Entereza 6 = 12: passed
    change = _apply(world.sheet, world.gm, "imbalance", 6, meter=services.MENTAL)
    assert (change.character.hitos.mental_slashes, change.character.hitos.mental_crosses) == (6, 0)
    assert change.character.hitos.mental_label == "Alterado"
    assert rolls.calls[0]["modifier"] == 6


def test_stress_heal_and_stabilise_use_the_rules(world):
    sheet = world.sheet
    _apply(sheet, world.gm, "imbalance", 5, meter=services.MENTAL)
    change = _apply(sheet, world.gm, "stress", meter=services.MENTAL)
    assert (change.character.hitos.mental_slashes, change.character.hitos.mental_crosses) == (0, 3)
    _apply(sheet, world.gm, "damage", 4)
    _apply(sheet, world.gm, "shock")  # 2 crosses
    _apply(sheet, world.gm, "damage", 3)  # 3 slashes, 2 crosses
    change = _apply(sheet, world.gm, "stabilise", 2)
    assert (change.character.hitos.health_slashes, change.character.hitos.health_crosses) == (1, 2)
    change = _apply(sheet, world.gm, "heal", 2)  # crosses first (Q12)
    assert (change.character.hitos.health_slashes, change.character.hitos.health_crosses) == (1, 0)


def test_weekly_healing_roll_goes_through_the_log_and_recovers_c(world, fake_rolls):
    sheet = world.sheet
    _apply(sheet, world.gm, "damage", 4)
    _apply(sheet, world.gm, "damage", 3)  # 7 slashes: Herido
    rolls = fake_rolls([2, 6, 9])  # Herido weekly at 10: 6 + 5 = 11 ≥ 10 → recovers C = 6
    change = _apply(sheet, world.gm, "healing_roll")
    assert rolls.calls[0]["difficulty"] == 10
    assert (change.character.hitos.health_slashes, change.character.hitos.health_crosses) == (1, 0)
    assert change.event.kind == "healing_roll" and change.event.roll == rolls.entries[0]


def test_a_sano_character_heals_fully_without_a_roll(world, fake_rolls):
    rolls = fake_rolls()
    _apply(world.sheet, world.gm, "damage", 3)
    change = _apply(world.sheet, world.gm, "healing_roll")
    assert change.character.hitos.health_meter.lost == 0 and rolls.calls == []


def test_roll_actions_fail_closed_when_the_log_refuses_the_roll(world, monkeypatch):
    def unavailable(**kwargs):
        raise ValidationError("El registro de tiradas no admite la tirada: no se ha aplicado nada.")

    monkeypatch.setattr(services, "meter_check", unavailable)
    with pytest.raises(ValidationError):
        _apply(world.sheet, world.gm, "damage", 9)
    world.sheet.refresh_from_db()
    assert world.sheet.hitos.health_slashes == 0
    assert not SheetEvent.objects.filter(character=world.sheet).exists()


@pytest.mark.parametrize("amount", [-1, None])
def test_negative_or_missing_amounts_are_refused(world, amount):
    with pytest.raises(ValidationError):
        _apply(world.sheet, world.gm, "damage", amount)


def test_npc_damage_uses_its_aguante(world, fake_rolls):
    npc = CharacterFactory(
        campaign=world.campaign, owner=world.gm, kind="npc", fortaleza=4, voluntad=4, drama=0, drama_points=0
    )
    assert npc.hitos.aguante == 6
    change = _apply(npc, world.gm, "damage", 5)
    assert change.character.hitos.health_slashes == 5
