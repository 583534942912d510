"""K16 and one way to roll a check (issue 12): a sheet's own tests are table
rolls — a card with activations — and an activation re-reads the meter."""

from __future__ import annotations

import pytest
from django.db import transaction

from campaigns.permissions import campaign_access
from rolls import rollog
from rules.hitos import Reading
from sheets.models import SheetEvent
from systems.hitos.checks.services import lock_table_roll, table_reroll
from systems.hitos.models import HitosEvent, TableRollKind
from systems.hitos.sheet import services
from table.cards import card
from table.models import TableRoll


@pytest.fixture
def rerolled(monkeypatch):
    """Make the next re-roll draw the given dice (the same ones each time the
    entry builder draws for the same roll)."""
    queue: list[list[int]] = []
    drawn: dict[str, list[int]] = {}
    real = rollog.dice_stream

    class Fixed:
        def __init__(self, values):
            self.values = list(values)

        def roll(self, faces):
            return self.values.pop(0)

    def stream(seed, message):
        # A re-roll's derivation names its parent and positions; a plain roll's ends ":-:-".
        if message.endswith(":-:-") or (message not in drawn and not queue):
            return real(seed, message)
        if message not in drawn:
            drawn[message] = queue.pop(0)
        return Fixed(drawn[message])

    monkeypatch.setattr(rollog, "dice_stream", stream)
    return queue


def _herido(world, lost=6):
    """Herido: as many points lost as Aguante (5) or more, under twice it;
    marked in losses under Aguante, so no mass-damage test is rolled."""
    for amount in (3, lost - 3):
        services.meter_mark(character=world.sheet, actor=world.gm, meter=services.HEALTH, amount=amount)
    world.sheet.refresh_from_db()
    assert world.sheet.hitos.health_label == "Herido"


def _reroll(table_roll, user, positions, reading):
    """A re-roll as an activation makes it: in a transaction, the roll locked first."""
    with transaction.atomic():
        table_roll = lock_table_roll(table_roll)
        return table_reroll(
            table_roll, user=user, positions=positions, reading=reading, activation=str(reading), aspect="Duro"
        )


def test_a_healing_roll_is_a_table_roll_with_its_card_and_actions(world, fake_rolls):
    _herido(world)
    rolls = fake_rolls([1, 2, 3])  # C 2 + Aguante 5 = 7 < 10: nothing recovered
    change = services.meter_recovery_roll(character=world.sheet, actor=world.gm, meter=services.HEALTH)
    table_roll = TableRoll.objects.get(first=rolls.entries[0])
    assert table_roll.kind == TableRollKind.METER and table_roll.owner == world.player
    assert table_roll.facts == {
        "modifier": 5,
        "arcane": False,
        "meter": "resistencia",
        "action": "healing_roll",
        "rested": True,
    }
    assert change.character.hitos.health_meter.lost == 6
    # The player's card offers the activation (H14) on their own roll.
    player = campaign_access(world.player, world.campaign)
    shown = card(table_roll.latest, access=player, table_roll=table_roll)
    assert shown["can_activate_positive"] and shown["actions_template"]
    page = world.client("player").get(table_roll.latest.get_absolute_url())
    assert "Activar aspecto" in page.text


def test_k16_a_positive_activation_turns_a_failed_healing_roll_into_its_value(world, fake_rolls, rerolled):
    _herido(world)
    rolls = fake_rolls([1, 2, 3])  # C 2 + 5 = 7 < 10: fails
    services.meter_recovery_roll(character=world.sheet, actor=world.gm, meter=services.HEALTH)
    table_roll = TableRoll.objects.get(first=rolls.entries[0])
    rerolled.append([9])  # [1, 2, 9] read positively is worth M 9: 14 ≥ 10, recovers 9 (all 6 lost)
    entry = _reroll(table_roll, world.player, [2], Reading.POSITIVE)
    world.sheet.refresh_from_db()
    assert entry.entry["dice"] == [1, 2, 9]
    assert world.sheet.hitos.health_meter.lost == 0
    event = SheetEvent.objects.get(roll=entry)
    assert event.kind == HitosEvent.HEALING_ROLL and event.actor == world.player
    assert "recupera 6" in event.summary and event.before["slashes"] == 6 and event.after["slashes"] == 0


def test_k16_a_negative_activation_undoes_what_the_roll_recovered_and_keeps_later_marks(world, fake_rolls, rerolled):
    _herido(world)
    rolls = fake_rolls([2, 6, 9])  # C 6 + 5 = 11 ≥ 10: recovers C 6 → all 6 back
    services.meter_recovery_roll(character=world.sheet, actor=world.gm, meter=services.HEALTH)
    world.sheet.refresh_from_db()
    assert world.sheet.hitos.health_meter.lost == 0
    services.meter_mark(character=world.sheet, actor=world.gm, meter=services.HEALTH, amount=1)  # a mark since
    table_roll = TableRoll.objects.get(first=rolls.entries[0])
    rerolled.append([1])  # [2, 6, 1] read negatively is worth m 1: 6 < 10, recovers nothing
    _reroll(table_roll, world.gm, [2], Reading.NEGATIVE)
    world.sheet.refresh_from_db()
    assert world.sheet.hitos.health_meter.lost == 7  # the 6 the roll gave back are lost again, the later 1 stays


def test_an_activation_on_a_mass_damage_test_re_reads_the_damage(world, fake_rolls, rerolled):
    rolls = fake_rolls([1, 2, 3])  # mass damage test: C 2 + 5 = 7 < 12 fails: every box slashed
    services.meter_mark(character=world.sheet, actor=world.gm, meter=services.HEALTH, amount=9)
    world.sheet.refresh_from_db()
    capacity = world.sheet.hitos.health_meter.capacity
    assert world.sheet.hitos.health_meter.lost == capacity
    table_roll = TableRoll.objects.get(first=rolls.entries[0])
    assert table_roll.facts == {"modifier": 5, "arcane": False, "meter": "resistencia", "action": "damage", "amount": 9}
    rerolled.append([9])  # [1, 2, 9] positive: M 9 + 5 = 14 ≥ 12, the test is passed: only the 9 marks
    _reroll(table_roll, world.player, [2], Reading.POSITIVE)
    world.sheet.refresh_from_db()
    assert world.sheet.hitos.health_meter.lost == 9
