"""The Hora de Aventuras sheet's writes: creation (five hero points for a
hero, A21; none for the GM's characters, A20), edits that never touch the
hero points, health levels, states (A3, A7, A27) and experience; each a
SheetEvent (who, when, why), nothing changed when refused."""

import threading

import pytest
from django.core.exceptions import ValidationError
from django.db import connection

from sheets.models import Character, SheetEvent
from systems.aventuras.models import AventurasEvent, AventurasSheet, AventurasState
from systems.aventuras.sheet import services
from systems.aventuras.sheet.services import SheetData


def _data(**fields) -> SheetData:
    base = {
        "name": "Jake",
        "concept": "Perro mágico",
        "cachas": 5,
        "cerebrito": 2,
        "espabilado": 2,
        "majo": 3,
        "highlighted": ["cachas", "majo"],
        "health": 5,
        "flaw": "Perezoso",
        "flaw_earns": "",
        "public_description": "",
        "private_notes": "",
    }
    return SheetData(
        fields={**base, **fields},
        feats=[{"name": "Estirarse", "description": "", "needs_hero_point": False}],
        tools=[{"name": "Violín", "attribute": "majo", "bonus": 2, "uses": "tocar"}],
    )


def test_a_hero_starts_with_five_hero_points(aventuras_campaign, aventuras_player):
    """A21 — «cada héroe comienza el juego con cinco puntos de Héroe»."""
    character = services.sheet_create(
        campaign=aventuras_campaign, owner=aventuras_player, actor=aventuras_player, data=_data()
    )
    sheet = AventurasSheet.objects.get(pk=character.pk)
    assert (sheet.hero_points, sheet.experience, character.status) == (5, 0, "draft")
    assert [t.bonus for t in sheet.tools.all()] == [2] and [f.name for f in sheet.feats.all()] == ["Estirarse"]
    assert SheetEvent.objects.get(character=character).kind == "created"


def test_a_gm_character_has_no_hero_points(aventuras_campaign, aventuras_gm):
    """A20 — «los personajes del director de juego no tienen puntos de Héroe»."""
    character = services.sheet_create(
        campaign=aventuras_campaign, owner=aventuras_gm, actor=aventuras_gm, data=_data(), kind=Character.Kind.NPC
    )
    sheet = AventurasSheet.objects.get(pk=character.pk)
    assert (sheet.hero_points, sheet.is_hero, character.status) == (None, False, "approved")


def test_an_edit_keeps_hero_points_experience_and_clamps_health_lost(aventuras_pc, aventuras_gm):
    sheet = aventuras_pc.aventuras
    sheet.hero_points, sheet.health_lost = 8, 4
    sheet.save()
    services.sheet_update(character=aventuras_pc, actor=aventuras_gm, data=_data(name="Palomita", health=3), reason="x")
    sheet = AventurasSheet.objects.get(pk=aventuras_pc.pk)
    assert (sheet.hero_points, sheet.experience, sheet.health, sheet.health_lost) == (8, 4, 3, 3)
    assert [t.name for t in sheet.tools.all()] == ["Violín"]


def test_health_levels_are_marked_and_healed_within_the_sheet(aventuras_pc, aventuras_gm):
    services.health_change(character=aventuras_pc, actor=aventuras_gm, change=-1, reason="Caída")
    event = SheetEvent.objects.get(character=aventuras_pc)
    assert (event.kind, event.before, event.after, event.reason) == (
        AventurasEvent.HEALTH,
        {"health_lost": 0},
        {"health_lost": 1},
        "Caída",
    )
    services.health_change(character=aventuras_pc, actor=aventuras_gm, change=1, reason="Descansa")
    with pytest.raises(ValidationError, match="Ya tiene todos sus niveles de salud."):
        services.health_change(character=aventuras_pc, actor=aventuras_gm, change=1, reason="Descansa")
    for _ in range(5):
        services.health_change(character=aventuras_pc, actor=aventuras_gm, change=-1, reason="Golpe")
    with pytest.raises(ValidationError, match="No le quedan niveles de salud que perder."):
        services.health_change(character=aventuras_pc, actor=aventuras_gm, change=-1, reason="Golpe")
    assert AventurasSheet.objects.get(pk=aventuras_pc.pk).health_left == 0
    assert SheetEvent.objects.filter(character=aventuras_pc).count() == 7


def test_a_state_records_its_dice_threshold_and_actions(aventuras_pc, aventuras_gm):
    """A3 — dice added or taken; A7 — «éxito con 3 o más» / «solo con 5 o más»; the action kinds of A1."""
    state = services.state_add(
        character=aventuras_pc,
        actor=aventuras_gm,
        name="  Inspirado ",
        modifier=1,
        threshold="easier",
        reason="Canción",
    )
    assert (state.name, state.modifier, state.threshold, state.applies_to, state.for_free) == (
        "Inspirado",
        1,
        "easier",
        "",
        False,
    )
    event = SheetEvent.objects.get(character=aventuras_pc)
    assert event.summary == "Recibe el estado Inspirado (+1 dados, éxito con 3 o más, todas las acciones)"
    assert event.after["threshold"] == "easier"


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"applies_to": "mágica"}, "Un estado afecta a las acciones físicas, mentales, sociales o a todas."),
        ({"modifier": 9}, "menor o igual a 5"),
        ({"threshold": "muy_dificil"}, "muy_dificil"),
        ({"name": ""}, "Este campo no puede estar vacío"),
    ],
)
def test_a_bad_state_is_refused_and_nothing_changes(aventuras_pc, aventuras_gm, fields, message):
    with pytest.raises(ValidationError) as info:
        services.state_add(
            character=aventuras_pc, actor=aventuras_gm, reason="Sin dormir", **{"name": "Cansado", **fields}
        )
    assert message in " ".join(info.value.messages)
    assert not AventurasState.objects.exists() and not SheetEvent.objects.exists()


def test_a_state_por_el_morro_is_only_removed_by_the_gm(aventuras_pc, aventuras_player, aventuras_gm, aventuras_scene):
    """A27 — «Jugador y director de juego tienen que estar de acuerdo»; it lasts its scene."""
    state = AventurasState.objects.create(
        sheet=aventuras_pc.aventuras, name="Hambriento", for_free=True, scene=aventuras_scene
    )
    with pytest.raises(ValidationError, match="solo la dirección puede quitarlo"):
        services.state_remove(
            character=aventuras_pc, actor=aventuras_player, state_id=state.pk, may_remove_for_free=False
        )
    services.state_remove(
        character=aventuras_pc, actor=aventuras_gm, state_id=state.pk, reason="Fin de escena", may_remove_for_free=True
    )
    event = SheetEvent.objects.get(character=aventuras_pc)
    assert (event.kind, event.before["for_free"], event.reason) == (AventurasEvent.STATE, True, "Fin de escena")


def test_experience_needs_a_reason_and_a_change(aventuras_pc, aventuras_gm):
    with pytest.raises(ValidationError, match="Indica el motivo"):
        services.experience_set(character=aventuras_pc, actor=aventuras_gm, experience=6, reason=" ")
    with pytest.raises(ValidationError, match="Ya tiene 4 puntos de Experiencia."):
        services.experience_set(character=aventuras_pc, actor=aventuras_gm, experience=4, reason="igual")
    services.experience_set(character=aventuras_pc, actor=aventuras_gm, experience=2, reason="A28: compra un punto")
    assert AventurasSheet.objects.get(pk=aventuras_pc.pk).experience == 2
    assert SheetEvent.objects.get(character=aventuras_pc).kind == AventurasEvent.EXPERIENCE


@pytest.mark.django_db(transaction=True)
def test_two_simultaneous_health_marks_both_land(aventuras_pc, aventuras_gm):
    """The character's row is locked before the sheet is read: neither mark is lost."""
    if connection.vendor != "postgresql":
        pytest.skip("Needs PostgreSQL row locks (select_for_update); SQLite serialises writes anyway.")
    barrier = threading.Barrier(2)
    errors = []

    def mark():
        try:
            barrier.wait()
            services.health_change(character=aventuras_pc, actor=aventuras_gm, change=-1, reason="Mordisco")
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=mark) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert AventurasSheet.objects.get(pk=aventuras_pc.pk).health_lost == 2


def test_someone_else_changing_the_sheet_in_play_says_why(aventuras_pc, aventuras_gm, aventuras_player):
    """Who, when, why: the GM changing a player's sheet (health, states, the
    sheet itself) must give a reason; the owner need not. Refused, nothing changes."""
    missing = "Indica el motivo: cambias la ficha de otra persona y queda en su historial."
    state = AventurasState.objects.create(sheet=aventuras_pc.aventuras, name="Hambriento")
    attempts = [
        lambda reason: services.health_change(character=aventuras_pc, actor=aventuras_gm, change=-1, reason=reason),
        lambda reason: services.state_add(character=aventuras_pc, actor=aventuras_gm, name="Cansado", reason=reason),
        lambda reason: services.state_remove(
            character=aventuras_pc, actor=aventuras_gm, state_id=state.pk, reason=reason, may_remove_for_free=True
        ),
        lambda reason: services.sheet_update(
            character=aventuras_pc, actor=aventuras_gm, data=_data(name="Palomita", health=3), reason=reason
        ),
    ]
    for attempt in attempts:
        for reason in ("", "   "):
            with pytest.raises(ValidationError) as refused:
                attempt(reason)
            assert refused.value.messages == [missing]
    sheet = AventurasSheet.objects.get(pk=aventuras_pc.pk)
    assert (sheet.health_lost, sheet.health) == (0, 5)
    assert list(AventurasState.objects.values_list("name", flat=True)) == ["Hambriento"]
    assert not SheetEvent.objects.exists()
    # The owner marks their own sheet without a reason.
    services.health_change(character=aventuras_pc, actor=aventuras_player, change=-1)
    services.state_remove(character=aventuras_pc, actor=aventuras_player, state_id=state.pk, may_remove_for_free=False)
    assert SheetEvent.objects.filter(character=aventuras_pc, actor=aventuras_player).count() == 2
