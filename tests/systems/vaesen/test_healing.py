"""Treatment, healing and recovery (issue 15, item 4): each a test through the
signed log whose effects go onto the sheets with a ``SheetEvent``.
V28 — Medicina (physical) or Inspiración (mental) on a critical injury: a
success ends Broken, each extra success heals one more condition. V29 — a
day's healing: Medicina heals others' physical conditions (never one's own),
Inspiración mental ones; 3 per success shared among the patients, Broken
included; one roll a day. V30 — recovery at HQ: Físico + Precisión or
Lógica + Empatía. Access: outsiders 404, other members 403; Spanish refusals
with nothing changed; the page's queries pinned."""

from __future__ import annotations

import pytest
from django.core.exceptions import PermissionDenied, ValidationError
from django.urls import reverse
from pytest_django.asserts import assertContains

from sheets.models import SheetEvent
from systems.vaesen.healing import services
from systems.vaesen.models import VaesenInjury, VaesenSheet
from systems.vaesen.rolls import services as rolls
from table.models import TableRoll
from tests.conftest import client_for
from tests.factories import client_seed, make_scene
from tests.systems.vaesen.conftest import vaesen_character
from tests.systems.vaesen.test_options import queue_d6

pytestmark = pytest.mark.django_db


@pytest.fixture
def d6(monkeypatch):
    return queue_d6(monkeypatch)


@pytest.fixture
def scene(vaesen_campaign):
    return make_scene(vaesen_campaign, title="La casa segura")


@pytest.fixture
def karl(vaesen_campaign, vaesen_other_player):
    return vaesen_character(vaesen_campaign, vaesen_other_player, "Karl", skills={"Inspiración": 2, "Medicina": 2})


def page(w, scene) -> str:
    return reverse("vaesen:healing", args=[w.campaign.slug, scene.pk])


def sheet(character) -> VaesenSheet:
    return VaesenSheet.objects.get(pk=character.pk)


def test_v28_a_treated_injury_ends_broken_and_extra_successes_heal(vaesen_world, scene, karl, d6):
    w = vaesen_world
    VaesenSheet.objects.filter(pk=w.pc.pk).update(
        broken_physical=True, physical_conditions=["Exhausto", "Magullado", "Herido"]
    )
    injury = VaesenInjury.objects.create(
        sheet=w.pc.vaesen, kind="físico", roll=23, name="Brazo roto", time_limit="un día"
    )
    # Karl: Precisión 3 + Medicina 2 = 5 dice; two 6s: ends Broken and heals one more.
    d6.append([6, 6, 1, 2, 3])
    response = client_for(w.other).post(
        reverse("vaesen:healing-treatment", args=[w.campaign.slug, scene.pk]),
        {"healer": str(karl.pk), "injury": str(injury.pk), "client_seed": client_seed()},
    )
    assert response.status_code == 302
    pc = sheet(w.pc)
    assert not pc.broken_physical
    assert pc.physical_conditions == ["Exhausto", "Magullado"]
    injury.refresh_from_db()
    assert injury.treated
    table_roll = TableRoll.objects.get(kind=services.TREATMENT)
    assert table_roll.facts["applied"] and table_roll.first.signed_game["test"] == "treatment"
    events = SheetEvent.objects.filter(character=w.pc, actor=w.other)
    assert events.filter(roll=table_roll.first).count() == 1
    assert events.count() == 2  # the conditions and the injury treated
    # Treating it again is refused, nothing rolled.
    with pytest.raises(ValidationError, match="ya está tratada"):
        services.treatment_roll(scene=scene, actor=w.other, healer=karl, injury=injury)
    assert TableRoll.objects.filter(kind=services.TREATMENT).count() == 1


def test_v28_a_failed_treatment_changes_nothing_until_a_pushed_success_is_applied(vaesen_world, scene, karl, d6):
    w = vaesen_world
    for _ in range(40):
        VaesenSheet.objects.filter(pk=w.pc.pk).update(
            broken_mental=True, mental_conditions=["Irritado", "Asustado", "Desesperado"]
        )
        VaesenSheet.objects.filter(pk=karl.pk).update(mental_conditions=[])
        karl.refresh_from_db()
        injury = VaesenInjury.objects.create(sheet=w.pc.vaesen, kind="mental", name="Pesadillas")
        # Karl: Empatía 3 + Inspiración 2, no 6.
        d6.append([1, 2, 3, 4, 5])
        table_roll = services.treatment_roll(scene=scene, actor=w.other, healer=karl, injury=injury)
        assert table_roll.facts["success"] is False and not table_roll.facts.get("applied")
        assert sheet(w.pc).broken_mental
        assert services.apply_refusal(table_roll, w.other, is_gm=False) == "La tirada falló: no cura nada."
        # The healer pushes (a mental condition for Empatía); the re-roll draws as usual.
        rolls.push(table_roll=table_roll, user=w.other, condition="Irritado", client_seed=client_seed())
        table_roll.refresh_from_db()
        assert sheet(karl).mental_conditions == ["Irritado"]
        if table_roll.facts["success"]:
            break
    else:
        raise AssertionError("no pushed success")
    with pytest.raises(ValidationError, match="Solo quien tiró o la dirección"):
        services.apply_effects(table_roll=table_roll, user=w.player, is_gm=False)
    services.apply_effects(table_roll=table_roll, user=w.other, is_gm=False)
    successes = table_roll.latest.signed_game["successes"]
    pc = sheet(w.pc)
    assert not pc.broken_mental
    assert len(pc.mental_conditions) == max(3 - (successes - 1), 0)
    injury.refresh_from_db()
    assert injury.treated
    with pytest.raises(ValidationError, match="ya está aplicada"):
        services.apply_effects(table_roll=table_roll, user=w.gm, is_gm=True)


def test_v29_healing_shares_three_per_success_broken_included_never_oneself(vaesen_world, scene, karl, d6):
    w = vaesen_world
    anna = vaesen_character(w.campaign, w.gm, "Anna", kind="npc")
    VaesenSheet.objects.filter(pk=w.pc.pk).update(
        broken_physical=True, physical_conditions=["Exhausto", "Magullado", "Herido"]
    )
    VaesenSheet.objects.filter(pk=anna.pk).update(physical_conditions=["Exhausto"])
    with pytest.raises(ValidationError, match="no puede curarse a sí mismo"):
        services.healing_roll(scene=scene, actor=w.other, healer=karl, skill="Medicina", patients=[karl, w.pc])
    with pytest.raises(PermissionDenied):
        services.healing_roll(scene=scene, actor=w.player, healer=karl, skill="Medicina", patients=[w.pc])
    # One success: three conditions, in turn: Elsa's Broken, Anna's Exhausto, Elsa's Herido.
    d6.append([6, 1, 2, 3, 4])
    table_roll = services.healing_roll(
        scene=scene, actor=w.other, healer=karl, skill="Medicina", patients=[w.pc, anna], client_seed=client_seed()
    )
    pc, nurse = sheet(w.pc), sheet(anna)
    assert not pc.broken_physical and pc.physical_conditions == ["Exhausto", "Magullado"]
    assert nurse.physical_conditions == []
    assert table_roll.facts["healed"] == {"Elsa": ["Derrotado", "Herido"], "Anna": ["Exhausto"]}
    assert SheetEvent.objects.filter(roll=table_roll.first, actor=w.other).count() == 2
    # One healing roll a day per kind; Inspiración is another kind.
    with pytest.raises(ValidationError, match="ya ha hecho hoy"):
        services.healing_roll(scene=scene, actor=w.other, healer=karl, skill="Medicina", patients=[w.pc])
    # Elsa had her physical healer today; Karl healed today, so nobody treats him.
    olof = vaesen_character(w.campaign, w.gm, "Olof", kind="npc", skills={"Medicina": 3, "Inspiración": 1})
    with pytest.raises(ValidationError, match="Elsa ya ha recibido hoy curación de estados físicos\\."):
        services.healing_roll(scene=scene, actor=w.gm, healer=olof, skill="Medicina", patients=[w.pc])
    with pytest.raises(ValidationError, match="Karl ha curado hoy"):
        services.healing_roll(scene=scene, actor=w.gm, healer=olof, skill="Inspiración", patients=[karl])
    # A patient of today does not heal.
    with pytest.raises(ValidationError, match="Elsa está hoy en tratamiento"):
        services.healing_roll(scene=scene, actor=w.player, healer=w.pc, skill="Inspiración", patients=[anna])
    assert TableRoll.objects.filter(kind=services.HEALING).count() == 1
    d6.append([1, 1, 1, 1, 1])
    services.healing_roll(scene=scene, actor=w.other, healer=karl, skill="Inspiración", patients=[w.pc])
    assert TableRoll.objects.filter(kind=services.HEALING).count() == 2


def test_v30_recovery_rolls_the_two_attributes(vaesen_world, scene, d6):
    w = vaesen_world
    d6.append([6, 6, 1, 2, 3, 4, 5])
    table_roll = services.recovery_roll(scene=scene, actor=w.player, character=w.pc, kind="físico")
    game = table_roll.first.signed_game
    # Físico 3 + Precisión 4.
    assert (game["pool"], game["successes"], game["test"]) == (7, 2, "recovery")
    assert [label for label, _v in game["breakdown"]] == ["Físico", "Precisión"]
    with pytest.raises(ValidationError, match="física o la mental"):
        services.recovery_roll(scene=scene, actor=w.player, character=w.pc, kind="otro")
    with pytest.raises(ValidationError, match="Solo los personajes jugadores"):
        services.recovery_roll(scene=scene, actor=w.gm, character=w.creature, kind="mental")


def test_v11_a_character_broken_by_physical_harm_rolls_no_recovery(vaesen_world, scene):
    w = vaesen_world
    sheet = w.pc.vaesen
    sheet.broken_physical = True
    sheet.save(update_fields=["broken_physical"])
    with pytest.raises(ValidationError, match="falla automáticamente"):
        services.recovery_roll(scene=scene, actor=w.player, character=w.pc, kind="mental")
    assert not TableRoll.objects.filter(kind=services.RECOVERY).exists()


def test_views_access_forms_and_queries(vaesen_world, scene, karl, d6, django_assert_max_num_queries):
    w = vaesen_world
    w.campaign.visibility = "private"
    w.campaign.save(update_fields=["visibility"])
    heal_url = reverse("vaesen:healing-heal", args=[w.campaign.slug, scene.pk])
    assert w.client("outsider").get(page(w, scene)).status_code == 404
    assert w.client("outsider").post(heal_url, {}).status_code == 404
    assert w.client("reader").post(heal_url, {"healer": str(karl.pk)}).status_code == 403
    # Another player's character is not theirs to roll: the form refuses it, nothing rolled.
    refused = w.client("player").post(
        heal_url, {"healer": str(karl.pk), "skill": "Medicina", "patients": [str(w.pc.pk)]}
    )
    assert refused.status_code == 200
    assertContains(refused, "Esa opción no está en la lista.")
    assert not TableRoll.objects.exists()
    d6.append([6, 1, 1, 1, 1])
    done = client_for(w.other).post(
        heal_url,
        {"healer": str(karl.pk), "skill": "Medicina", "patients": [str(w.pc.pk)], "client_seed": client_seed()},
    )
    assert done.status_code == 302
    player = client_for(w.player)
    with django_assert_max_num_queries(12):
        full = player.get(page(w, scene))
    assertContains(full, "Elsa: nada que curar")
    partial = player.get(page(w, scene), headers={"HX-Request": "true"})
    assert b"<html" not in partial.content
    assertContains(partial, 'id="healing-board"')
