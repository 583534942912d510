"""HITOS derived scores, skill categories and the creation budget."""

import pytest

from rules.hitos_options import HitosOptions
from rules.hitos_scores import (
    CULTOS_INNOMBRABLES_BUDGET,
    SKILL_CATEGORIES,
    BudgetWarning,
    Characteristics,
    CreationBudget,
    aguante,
    check_skill_category,
    creation_warnings,
    defensa,
    derived_scores,
    entereza,
    estabilidad,
    iniciativa,
    melee_damage_bonus,
    ranged_damage_bonus,
    resistencia,
)

NEAREST = HitosOptions(rounding="nearest")


# H29 — «El valor en cada característica oscila entre 1 y 10, siendo 3 el valor promedio»
def test_h29_characteristics_range_from_1_to_10():
    Characteristics(1, 10, 3, 3)
    with pytest.raises(ValueError, match="Fortaleza debe estar entre 1 y 10, no 11"):
        Characteristics(11, 3, 3, 3)
    with pytest.raises(ValueError, match="Intelecto debe estar entre 1 y 10, no 0"):
        Characteristics(3, 3, 3, 0)


# H31 — «Es igual a su Fortaleza más la mitad de su Voluntad, redondeando hacia abajo»
def test_h31_aguante_is_fortaleza_plus_half_voluntad_floored():
    assert aguante(4, 5) == 6
    assert aguante(4, 4) == 6
    assert aguante(3, 1) == 3


# K10 — the Roll20 sheet rounds; the option rounds halves up.
def test_k10_rounding_option():
    assert aguante(4, 5, NEAREST) == 7
    assert melee_damage_bonus(4, 2, NEAREST) == 2  # 6 / 4 = 1.5 → 2
    assert melee_damage_bonus(4, 2) == 1


# H32 — «Un personaje tiene tanta Resistencia como su Aguante multiplicado por 3»
def test_h32_resistencia_is_three_times_aguante():
    assert resistencia(6) == 18


# H33 — «La Defensa de un personaje es su característica Reflejos más su habilidad de»
def test_h33_defensa_uses_the_higher_skill():
    assert defensa(4, 3) == 12
    assert defensa(4, 3, 6) == 15
    assert defensa(4, 6, 2) == 15


# H34 — «Es la suma de la característica Reflejos y la mitad de la característica Intelecto»
def test_h34_iniciativa_floors_half_intelecto():
    assert iniciativa(4, 7) == 7


# H35 — «Para los ataques cuerpo a cuerpo la bonificación es la suma de Fortaleza y»
def test_h35_damage_bonuses_divide_by_four_floored():
    assert melee_damage_bonus(5, 6) == 2
    assert melee_damage_bonus(5, 2) == 1
    assert ranged_damage_bonus(7) == 1
    assert ranged_damage_bonus(3) == 0


# H36 — «Se calcula sumando la Voluntad más la mitad del Intelecto, redondeando hacia abajo»
# H37 — «es igual al triple de su Entereza»
def test_h36_h37_entereza_and_estabilidad():
    assert entereza(5, 7) == 8
    assert estabilidad(8) == 24


def test_derived_scores_report_value_and_formula():
    scores = derived_scores(Characteristics(4, 3, 5, 7), combate=3, defence_skill=1)
    assert {k: s.value for k, s in scores.items()} == {
        "aguante": 6,
        "resistencia": 18,
        "defensa": 11,
        "iniciativa": 6,
        "bono_cuerpo_a_cuerpo": 1,
        "bono_distancia": 0,
        "entereza": 8,
        "estabilidad": 24,
    }
    assert scores["aguante"].worked == "4 + 5 ÷ 2 = 6"
    assert scores["resistencia"].worked == "6 × 3 = 18"
    assert scores["defensa"].worked == "3 + 3 + 5 = 11"


# H31–H37 — the formulas as data (shape, term keys, rounding) for the site to word.
def test_derived_score_formulas_are_language_neutral_data():
    scores = derived_scores(Characteristics(4, 3, 5, 7), combate=3, defence_skill=1)
    assert {k: (s.shape, s.terms, s.rounding) for k, s in scores.items()} == {
        "aguante": ("{} + {} ÷ 2", ("fortaleza", "voluntad"), "floor"),  # H31
        "resistencia": ("{} × 3", ("aguante",), None),  # H32
        "defensa": ("{} + {} + 5", ("reflejos", "defence_skill"), None),  # H33
        "iniciativa": ("{} + {} ÷ 2", ("reflejos", "intelecto"), "floor"),  # H34
        "bono_cuerpo_a_cuerpo": ("({} + {}) ÷ 4", ("fortaleza", "combate"), "floor"),  # H35
        "bono_distancia": ("{} ÷ 4", ("combate",), "floor"),  # H35
        "entereza": ("{} + {} ÷ 2", ("voluntad", "intelecto"), "floor"),  # H36
        "estabilidad": ("{} × 3", ("entereza",), None),  # H37
    }
    # K10 — the rounding option is handed on; the worked numbers follow it.
    nearest = derived_scores(Characteristics(4, 3, 5, 7), options=NEAREST)
    assert nearest["aguante"].rounding == "nearest"
    assert nearest["aguante"].worked == "4 + 5 ÷ 2 = 7"


def test_derived_scores_reject_a_negative_skill():
    with pytest.raises(ValueError, match="Combate debe ser un número entero no negativo"):
        derived_scores(Characteristics(4, 3, 5, 7), combate=-1)


# H30 — «Cada habilidad es un aspecto que puede activarse durante el juego»
def test_nine_skill_categories():
    assert SKILL_CATEGORIES == (
        "forma_fisica",
        "combate",
        "interaccion",
        "percepcion",
        "subterfugio",
        "cultura",
        "profesion",
        "ocultismo",
        "arcana",
    )
    assert check_skill_category("cultura") == "cultura"
    with pytest.raises(ValueError, match="Categoría de habilidad desconocida: 'magia'"):
        check_skill_category("magia")


def test_cultos_innombrables_budget_gives_warnings_not_errors():
    assert CULTOS_INNOMBRABLES_BUDGET == CreationBudget(20, 40, 4, 1, 5, 1)
    on_budget = creation_warnings(
        CULTOS_INNOMBRABLES_BUDGET,
        characteristics=Characteristics(5, 5, 5, 5),
        skills=[("profesion", 10), ("combate", 10), ("cultura", 20)],
        hitos=4,
        citas=1,
        drama=5,
        complications=1,
    )
    assert on_budget == []
    over = creation_warnings(
        CULTOS_INNOMBRABLES_BUDGET,
        characteristics=Characteristics(6, 5, 5, 5),
        skills=[("combate", 30), ("cultura", 12)],
        hitos=5,
        citas=1,
        drama=5,
        complications=0,
    )
    # S000 — «Elige al menos una habilidad de profesión para tu personaje».
    assert over == [
        BudgetWarning("characteristics", 21, 20),
        BudgetWarning("skills", 42, 40),
        BudgetWarning("hitos", 5, 4),
        BudgetWarning("complications", 0, 1),
        BudgetWarning("profesion_missing"),
    ]


def test_creation_rejects_unknown_categories():
    with pytest.raises(ValueError, match="Categoría de habilidad desconocida"):
        creation_warnings(
            CULTOS_INNOMBRABLES_BUDGET,
            characteristics=Characteristics(5, 5, 5, 5),
            skills=[("cocina", 3)],
            hitos=4,
            citas=1,
            drama=5,
            complications=1,
        )
