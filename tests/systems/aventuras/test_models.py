"""The Hora de Aventuras sheet's model API (the contract the rolls, the
hero points and the initiative build on)."""

import pytest
from django.core.exceptions import ValidationError

from systems.aventuras.models import AventurasSheet, AventurasState, AventurasTool


def test_dice_for_is_the_score_if_highlighted_else_two(aventuras_pc):
    """A2 — «tirará tantos dados como la puntuación que tenga en el atributo y,
    si no lo tiene, entonces tirará dos dados» (Palomita: Cachas 3 and Majo 4 highlighted)."""
    sheet = aventuras_pc.aventuras
    assert [sheet.dice_for(a) for a in ("cachas", "cerebrito", "espabilado", "majo")] == [3, 2, 2, 4]
    # S004: «Este no es uno de los atributos destacados de Palomita, así que solo tira dos dados».
    sheet.espabilado = 5
    assert sheet.dice_for("espabilado") == 2
    with pytest.raises(ValueError):
        sheet.dice_for("fuerza")


def test_attribute_rows_name_score_highlight_and_dice(aventuras_pc):
    rows = aventuras_pc.aventuras.attribute_rows()
    assert [(r["key"], r["highlighted"], r["dice"]) for r in rows] == [
        ("cachas", True, 3),
        ("cerebrito", False, 2),
        ("espabilado", False, 2),
        ("majo", True, 4),
    ]
    assert [str(r["label"]) for r in rows] == ["Cachas", "Cerebrito", "Espabilado", "Majo"]


def test_hero_points_tell_a_hero_from_a_gm_character(aventuras_pc, aventuras_npc):
    """A20/A21 — a hero has five to start; the GM's characters have none."""
    assert (aventuras_pc.aventuras.hero_points, aventuras_pc.aventuras.is_hero) == (5, True)
    assert (aventuras_npc.aventuras.hero_points, aventuras_npc.aventuras.is_hero) == (None, False)


def test_health_left_never_goes_below_zero(aventuras_pc):
    sheet = aventuras_pc.aventuras
    sheet.health_lost = 2
    assert sheet.health_left == 3
    sheet.health_lost = 9
    assert sheet.health_left == 0


def test_a_tool_gives_one_to_three(aventuras_pc):
    """A29 — «Las herramientas normales dan +1 … o incluso dar un +3»."""
    tool = AventurasTool(sheet=aventuras_pc.aventuras, name="Espada mítica", attribute="cachas", bonus=4)
    with pytest.raises(ValidationError):
        tool.full_clean()
    tool.bonus = 3
    tool.full_clean()


def test_a_state_moves_dice_within_five_and_a_known_threshold(aventuras_pc):
    """A3 — dice added or taken; A7 — only 3+ or 5+."""
    state = AventurasState(sheet=aventuras_pc.aventuras, name="Cansado", modifier=-6, threshold="harder")
    with pytest.raises(ValidationError):
        state.full_clean(exclude=["scene"])
    state.modifier, state.threshold = -1, "imposible"
    with pytest.raises(ValidationError):
        state.full_clean(exclude=["scene"])
    state.threshold = "harder"
    state.full_clean(exclude=["scene"])


def test_scores_stay_within_ten(aventuras_npc):
    sheet = AventurasSheet.objects.get(pk=aventuras_npc.pk)
    sheet.cachas = 11
    with pytest.raises(ValidationError):
        sheet.full_clean(exclude=["character"])
