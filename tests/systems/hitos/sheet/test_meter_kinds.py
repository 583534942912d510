"""The meter table (``sheets.meters``) and the one-service-per-action API
that ``meter_apply`` dispatches to."""

import pytest
from django.core.exceptions import ValidationError

from campaigns.models import Scene
from sheets.models import SheetEvent
from systems.hitos.sheet import services
from systems.hitos.sheet.meters import ESTABILIDAD, METER_ACTIONS, METERS, NEEDS_AMOUNT, RESISTENCIA

pytestmark = pytest.mark.django_db


def test_the_table_keeps_the_actions_and_their_order_for_the_meter_form():
    assert METER_ACTIONS == {
        "resistencia": ("damage", "shock", "stabilise", "heal", "healing_roll"),
        "estabilidad": ("imbalance", "stress", "stabilise", "heal", "recovery_roll"),
    }
    assert NEEDS_AMOUNT == {"damage", "imbalance", "stabilise", "heal"}
    assert METERS == {"resistencia": RESISTENCIA, "estabilidad": ESTABILIDAD}
    assert (services.HEALTH, services.MENTAL, services.METER_ACTIONS) == ("resistencia", "estabilidad", METER_ACTIONS)


@pytest.mark.parametrize(
    ("meter", "action"),
    [
        ("resistencia", "imbalance"),
        ("estabilidad", "shock"),
        ("cordura", "heal"),
        ("resistencia", "explode"),
        ("estabilidad", None),
        ("resistencia", ""),
    ],
)
def test_an_action_the_meter_does_not_have_is_refused_before_anything_changes(world, meter, action):
    with pytest.raises(ValidationError) as caught:
        services.meter_apply(character=world.sheet, actor=world.gm, meter=meter, action=action, amount=1)
    assert caught.value.messages == ["Acción desconocida para este medidor."]
    assert not SheetEvent.objects.exists()


@pytest.mark.parametrize("service", [services.meter_mark, services.meter_stabilise, services.meter_heal])
def test_the_named_services_refuse_a_missing_amount_themselves(world, service):
    with pytest.raises(ValidationError) as caught:
        service(character=world.sheet, actor=world.gm, meter=services.MENTAL, amount=None)
    assert caught.value.messages == ["Indica una cantidad entera de 0 o más."]


def test_the_trauma_test_rolls_entereza_in_the_scene_it_is_given(world, fake_rolls):
    scene = Scene.objects.create(campaign=world.campaign, title="La cripta", position=1)
    rolls = fake_rolls([1, 2, 3])  # 2 + Entereza 6 = 8 < 12: failed
    change = services.meter_mark(
        character=world.sheet, actor=world.gm, meter=services.MENTAL, amount=7, reason="El abismo", scene=scene
    )
    call = rolls.calls[0]
    assert call["purpose"] == "Prueba de trauma de Inés (Entereza contra 12)"
    assert (call["modifier"], call["difficulty"], call["breakdown"], call["scene"]) == (
        6,
        12,
        [("Entereza", 6)],
        scene,
    )
    assert (change.character.hitos.mental_slashes, change.character.hitos.mental_crosses) == (18, 0)
    assert change.event.kind == "imbalance" and change.event.summary == "7 · prueba fallada"
    assert change.event.reason == "El abismo" and change.event.roll == rolls.entries[0]
    assert rolls.entries[0].scene == scene and rolls.entries[0].entry["dice"] == [1, 2, 3]


def test_the_monthly_recovery_roll_goes_through_the_log(world, fake_rolls):
    services.meter_mark(character=world.sheet, actor=world.gm, meter=services.MENTAL, amount=5)
    services.meter_mark(character=world.sheet, actor=world.gm, meter=services.MENTAL, amount=1)  # 6 = Entereza
    rolls = fake_rolls([2, 6, 9])  # Alterado monthly at 10: 6 + 6 = 12 ≥ 10 → recovers C = 6
    change = services.meter_apply(character=world.sheet, actor=world.gm, meter=services.MENTAL, action="recovery_roll")
    call = rolls.calls[0]
    assert call["purpose"] == "Recuperación mental mensual de Inés (Entereza)"
    assert (call["modifier"], call["difficulty"], call["breakdown"]) == (6, 10, [("Entereza", 6)])
    assert change.character.hitos.mental_meter.lost == 0 and change.character.hitos.mental_label == "Cuerdo"
    assert change.event.kind == "recovery_roll" and change.event.summary == "recupera 6"
    assert change.event.before["state"] == "Alterado" and change.event.after["state"] == "Cuerdo"


def test_a_recovery_roll_without_rest_for_an_incapacitated_character_can_lose_points(world, fake_rolls):
    services.meter_mark(character=world.sheet, actor=world.gm, meter=services.HEALTH, amount=4)
    services.meter_mark(character=world.sheet, actor=world.gm, meter=services.HEALTH, amount=4)
    services.meter_mark(character=world.sheet, actor=world.gm, meter=services.HEALTH, amount=2)  # 10: Incapacitado
    rolls = fake_rolls([1, 2, 3])  # H70 without rest at 15: 2 + 5 = 7 fails → loses C = 2
    change = services.meter_recovery_roll(character=world.sheet, actor=world.gm, meter=services.HEALTH, rested=False)
    assert rolls.calls[0]["purpose"] == "Curación semanal de Inés (Aguante)"
    assert rolls.calls[0]["difficulty"] == 15
    assert change.event.kind == "healing_roll" and change.event.summary == "pierde 2"
    assert change.character.hitos.health_meter.lost == 12


def test_each_named_service_records_its_own_event_kind(world):
    sheet, gm = world.sheet, world.gm
    services.meter_mark(character=sheet, actor=gm, meter=services.MENTAL, amount=4)
    services.meter_shock(character=sheet, actor=gm, meter=services.MENTAL)
    services.meter_mark(character=sheet, actor=gm, meter=services.MENTAL, amount=2)
    services.meter_stabilise(character=sheet, actor=gm, meter=services.MENTAL, amount=1)
    change = services.meter_heal(character=sheet, actor=gm, meter=services.MENTAL, amount=1)
    assert (change.character.hitos.mental_slashes, change.character.hitos.mental_crosses) == (1, 1)
    kinds = list(SheetEvent.objects.filter(character=sheet).order_by("id").values_list("kind", "summary"))
    assert kinds == [("imbalance", "4"), ("stress", ""), ("imbalance", "2"), ("stabilise", "1"), ("heal", "1")]
