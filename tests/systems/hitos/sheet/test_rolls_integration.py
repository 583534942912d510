"""The meter tests that need a roll go through the real roll log."""

import pytest

from rolls.models import RollEntry
from sheets.models import SheetEvent
from systems.hitos.sheet import services

pytestmark = pytest.mark.django_db


def test_mass_damage_test_is_a_signed_entry_in_the_campaign_log(world):
    change = services.meter_apply(
        character=world.sheet, actor=world.gm, meter=services.HEALTH, action="damage", amount=9, reason="Disparo"
    )
    entry = RollEntry.objects.filter(campaign=world.campaign).rolls().get()
    assert change.roll.pk == entry.pk and entry.character_id == world.sheet.pk and entry.user == world.gm
    assert len(entry.dice) == 3 and change.check.difficulty == 12 and change.check.modifier == 5
    assert "daño masivo" in entry.purpose
    event = SheetEvent.objects.get(character=world.sheet)
    assert event.roll == entry
    # The outcome the rules give for that roll is what was marked.
    expected = (9, 0) if change.check.success else (15, 0)
    assert (change.character.hitos.health_slashes, change.character.hitos.health_crosses) == expected
