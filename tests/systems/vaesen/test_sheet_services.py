"""The Vaesen sheet's writes in play: conditions, Broken, critical injuries,
Resistencia (V8–V13, V20, V28), each a SheetEvent, nothing changed when refused."""

import pytest
from django.core.exceptions import ValidationError

from rules.vaesen import ConditionKind, Conditions, suffer
from sheets.models import SheetEvent
from systems.vaesen.models import VaesenEvent, VaesenInjury, VaesenSheet
from systems.vaesen.sheet import services


def _state(character):
    sheet = VaesenSheet.objects.get(pk=character.pk)
    return (sheet.physical_conditions, sheet.mental_conditions, sheet.broken_physical, sheet.broken_mental)


def _change(character, actor, kind, action, name="", reason=""):
    return services.condition_change(
        character=character, actor=actor, kind=kind, action=action, name=name, reason=reason
    )


def test_ticking_a_condition_stores_it_and_logs_who_when_why(vaesen_pc, vaesen_gm):
    """V8/V9 — a condition of its kind, one event with the state before and after."""
    _change(vaesen_pc, vaesen_gm, "físico", "marcar", "Magullado", reason="Caída por la escalera")
    assert _state(vaesen_pc) == (["Magullado"], [], False, False)
    event = SheetEvent.objects.get(character=vaesen_pc)
    assert (event.kind, event.actor, event.reason) == (VaesenEvent.CONDITION, vaesen_gm, "Caída por la escalera")
    assert event.before["physical"] == [] and event.after["physical"] == ["Magullado"]
    assert event.summary == "Magullado"


def test_the_fourth_condition_of_a_kind_makes_the_character_broken(vaesen_pc, vaesen_gm):
    """V10 — with the three mental conditions ticked, one more: Derrotado mentalmente."""
    for _ in range(3):
        _change(vaesen_pc, vaesen_gm, "mental", "sufrir")
    assert _state(vaesen_pc) == ([], ["Irritado", "Asustado", "Desesperado"], False, False)
    _change(vaesen_pc, vaesen_gm, "mental", "sufrir")
    assert _state(vaesen_pc) == ([], ["Irritado", "Asustado", "Desesperado"], False, True)
    assert SheetEvent.objects.filter(character=vaesen_pc).first().summary.endswith("Derrotado mentalmente")


def test_recovering_from_broken_keeps_the_conditions(vaesen_pc, vaesen_gm):
    """V28 — treatment ends Broken; the other conditions stay."""
    for _ in range(4):
        _change(vaesen_pc, vaesen_gm, "físico", "sufrir")
    _change(vaesen_pc, vaesen_gm, "físico", "recuperar", reason="Medicina de Elsa")
    assert _state(vaesen_pc) == (["Exhausto", "Magullado", "Herido"], [], False, False)


@pytest.mark.parametrize(
    ("setup", "kind", "action", "name", "message"),
    [
        ([("físico", "marcar", "Herido")], "físico", "marcar", "Herido", "«Herido» ya está marcado."),
        ([], "mental", "quitar", "Asustado", "«Asustado» no está marcado."),
        ([], "mental", "marcar", "Herido", "«Herido» no es un estado mental."),
        ([("físico", "sufrir", "")] * 4, "físico", "sufrir", "", "ya está Derrotado físicamente"),
        ([], "físico", "recuperar", "", "El personaje no está Derrotado físicamente."),
        ([], "astral", "sufrir", "", "Tipo de estado desconocido."),
    ],
)
def test_impossible_condition_changes_are_refused_in_spanish_changing_nothing(
    vaesen_pc, vaesen_gm, setup, kind, action, name, message
):
    """V8/V10 — ticking what is ticked, unticking what is not, a fourth condition
    when already Broken …: a Spanish error, and neither the sheet nor its history moves."""
    for step in setup:
        _change(vaesen_pc, vaesen_gm, *step)
    before, events = _state(vaesen_pc), SheetEvent.objects.count()
    with pytest.raises(ValidationError) as refused:
        _change(vaesen_pc, vaesen_gm, kind, action, name)
    assert message in refused.value.messages[0]
    assert (_state(vaesen_pc), SheetEvent.objects.count()) == (before, events)


def test_apply_conditions_stores_what_the_rules_worked_out(vaesen_pc, vaesen_gm):
    """The rolls' entry point (contract): V7 a push's condition, one event, the caller's object updated."""
    after = suffer(vaesen_pc.vaesen.conditions(), ConditionKind.PHYSICAL, 1).conditions
    services.apply_conditions(vaesen_pc, after, actor=vaesen_gm, reason="Forzó la tirada")
    assert _state(vaesen_pc) == (["Exhausto"], [], False, False)
    assert vaesen_pc.vaesen.physical_conditions == ["Exhausto"]
    event = SheetEvent.objects.get(character=vaesen_pc)
    assert (event.kind, event.reason) == (VaesenEvent.CONDITION, "Forzó la tirada")
    services.apply_conditions(vaesen_pc, Conditions(broken_mental=True), actor=vaesen_gm, reason="Miedo")
    assert _state(vaesen_pc) == ([], [], False, True)


def test_add_injury_records_the_injury_and_its_time_limit(vaesen_pc, vaesen_gm):
    """V13/V28 — a d66 result, its effect and how long there is to treat it."""
    injury = services.add_injury(
        vaesen_pc,
        kind="físico",
        roll_value=54,
        name="Hemorragia interna",
        effect="Morirá si no la tratan.",
        time_limit="un día",
        actor=vaesen_gm,
        reason="Derrotado por el Näcken",
    )
    assert (injury.sheet_id, injury.roll, injury.time_limit, injury.treated) == (vaesen_pc.pk, 54, "un día", False)
    event = SheetEvent.objects.get(character=vaesen_pc)
    assert (event.kind, event.summary, event.reason) == (
        VaesenEvent.INJURY,
        "Hemorragia interna (54)",
        "Derrotado por el Näcken",
    )
    with pytest.raises(ValidationError):
        services.add_injury(
            vaesen_pc, kind="físico", roll_value=70, name="x", effect="", time_limit="", actor=vaesen_gm, reason=""
        )
    assert VaesenInjury.objects.count() == 1


def test_treating_an_injury_toggles_it_once(vaesen_pc, vaesen_gm):
    """V28 — the "tratada" toggle; treating it twice is refused."""
    injury = services.add_injury(
        vaesen_pc,
        kind="mental",
        roll_value=None,
        name="Pesadillas",
        effect="",
        time_limit="",
        actor=vaesen_gm,
        reason="",
    )
    services.injury_treated(
        character=vaesen_pc, actor=vaesen_gm, injury_id=injury.pk, treated=True, reason="Inspiración"
    )
    injury.refresh_from_db()
    assert injury.treated
    with pytest.raises(ValidationError, match="La herida ya está tratada."):
        services.injury_treated(character=vaesen_pc, actor=vaesen_gm, injury_id=injury.pk, treated=True)
    assert SheetEvent.objects.filter(kind=VaesenEvent.TREATED).count() == 1


def test_npc_resistance_goes_down_and_up_within_its_points(vaesen_npc, vaesen_gm):
    """V20 — human NPCs lose Resistencia points instead of taking conditions."""
    for _ in range(3):
        services.resistance_change(character=vaesen_npc, actor=vaesen_gm, change=-1, reason="Golpe")
    assert VaesenSheet.objects.get(pk=vaesen_npc.pk).resistance_left == 0
    with pytest.raises(ValidationError, match="No le quedan puntos de Resistencia que perder."):
        services.resistance_change(character=vaesen_npc, actor=vaesen_gm, change=-1)
    services.resistance_change(character=vaesen_npc, actor=vaesen_gm, change=1)
    with pytest.raises(ValidationError, match="Ya tiene todos sus puntos de Resistencia."):
        for _ in range(3):
            services.resistance_change(character=vaesen_npc, actor=vaesen_gm, change=1)
    assert VaesenSheet.objects.get(pk=vaesen_npc.pk).resistance_lost == 0
    assert SheetEvent.objects.filter(character=vaesen_npc, kind=VaesenEvent.RESISTANCE).count() == 6


def test_npcs_with_resistance_take_no_conditions_and_pcs_no_resistance(vaesen_npc, vaesen_pc, vaesen_gm):
    """V20 — each sheet refuses the other's track."""
    with pytest.raises(ValidationError, match="pierde puntos de Resistencia"):
        _change(vaesen_npc, vaesen_gm, "físico", "sufrir")
    with pytest.raises(ValidationError, match="sufre estados"):
        services.resistance_change(character=vaesen_pc, actor=vaesen_gm, change=-1)
    assert not SheetEvent.objects.exists()
