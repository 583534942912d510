"""The Vaesen sheet's model API (the contract the rolls build on)."""

import pytest
from django.core.exceptions import ValidationError

from rules.vaesen import ConditionKind, Conditions, suffer
from systems.vaesen.models import VaesenInjury, VaesenSheet


def test_attribute_reads_each_of_the_four_by_its_rules_name(vaesen_pc):
    """V1 — the pool's attribute, named as rules.vaesen.ATTRIBUTES names it."""
    sheet = vaesen_pc.vaesen
    assert [sheet.attribute(a) for a in ("físico", "precisión", "lógica", "empatía")] == [3, 4, 3, 2]
    assert sheet.attribute("Precisión") == 4
    with pytest.raises(ValueError):
        sheet.attribute("fuerza")


def test_a_skill_the_sheet_lacks_is_zero(vaesen_pc):
    """V4 — skill 0 rolls the attribute only; the raw value, armour aside."""
    sheet = vaesen_pc.vaesen
    sheet.armour_agility_penalty = 1
    assert (sheet.skill("Sigilo"), sheet.skill("Agilidad"), sheet.skill("Erudición")) == (3, 2, 0)
    with pytest.raises(ValueError):
        sheet.skill("Pelea")


def test_conditions_round_trip_through_the_four_fields(vaesen_pc):
    """V8/V10 — set_conditions writes the lists in the text's order and the Broken flags."""
    sheet = vaesen_pc.vaesen
    after = suffer(Conditions(), ConditionKind.PHYSICAL, 2, choices=["Herido"]).conditions
    after = suffer(after, ConditionKind.MENTAL, 4).conditions
    sheet.set_conditions(after)
    assert sheet.physical_conditions == ["Exhausto", "Herido"]
    assert sheet.mental_conditions == ["Irritado", "Asustado", "Desesperado"]
    assert (sheet.broken_physical, sheet.broken_mental) == (False, True)
    sheet.save()
    sheet = VaesenSheet.objects.get(pk=sheet.pk)
    assert sheet.conditions() == after
    assert sheet.conditions().penalty(ConditionKind.PHYSICAL) == 2
    assert sheet.broken


def test_uses_resistance_only_for_human_npcs_and_animals(vaesen_pc, vaesen_npc, vaesen_creature):
    """V20 — Resistencia instead of conditions; creatures have Fear instead (V26)."""
    assert vaesen_npc.vaesen.uses_resistance and vaesen_npc.vaesen.resistance_left == 3
    assert not vaesen_pc.vaesen.uses_resistance
    assert not vaesen_creature.vaesen.uses_resistance and vaesen_creature.vaesen.fear == 2
    vaesen_npc.vaesen.resistance_lost = 5
    assert vaesen_npc.vaesen.resistance_left == 0


def test_items_weapons_and_injuries_hang_from_the_sheet(vaesen_pc):
    """V16/V31 equipment with bonus dice and availability; V13 injuries with a d66 roll."""
    sheet = vaesen_pc.vaesen
    assert [(i.name, i.bonus, i.skill, i.availability) for i in sheet.items.all()] == [("Ganzúas", 1, "Sigilo", 2)]
    assert [(w.name, w.damage) for w in sheet.weapons.all()] == [("Cuchillo", 1)]
    injury = VaesenInjury(sheet=sheet, kind="físico", roll=67, name="Brazo roto")
    with pytest.raises(ValidationError):
        injury.full_clean()


def test_attribute_rows_list_each_attribute_with_its_three_skills(vaesen_pc):
    """V1 — the sheet shows each attribute with the skills that hang from it."""
    rows = vaesen_pc.vaesen.attribute_rows()
    assert [r["value"] for r in rows] == [3, 4, 3, 2]
    assert rows[1]["skills"] == [("Combate a distancia", 0), ("Medicina", 1), ("Sigilo", 3)]
