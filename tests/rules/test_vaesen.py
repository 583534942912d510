"""Vaesen-style d6 pool: rules V1–V31 of rules-spec.md, quoting seed S003
(/work/shared/seeds/003_7e78d0d79761bad2.txt)."""

import itertools
import re
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rules import vaesen as v
from rules.dice import FixedDice

PHYSICAL = v.ConditionKind.PHYSICAL
MENTAL = v.ConditionKind.MENTAL
SEED = Path(__file__).resolve().parents[3] / "shared" / "seeds" / "003_7e78d0d79761bad2.txt"


# --- Pool size ---------------------------------------------------------------


def test_pool_is_attribute_plus_skill():
    # V1 — «Suma ambos valores; el resultado es la cantidad de dados de seis caras que debes tirar»
    assert v.pool_size(3, 2) == 5


def test_skill_zero_rolls_the_attribute_only():
    # V4 — «puede lanzar solo la cantidad de dados indicada por el atributo de que depende la habilidad»
    assert v.pool_size(3, 0) == 3
    assert v.pool_size(3) == 3


def test_a_modifier_is_extra_dice():
    # V5 — «obtienes un +1 en tu tirada. Esto significa que tiras un dado adicional»
    assert v.pool_size(2, 1, modifier=1) == 4
    assert v.pool_size(2, 1, modifier=-2) == 1


def test_equipment_bonus_is_extra_dice():
    # V16 — «unas ganzúas te podrían dar un +1 para abrir una puerta»
    assert v.pool_size(3, 1, modifier=1) == 5


def test_each_condition_removes_a_die_but_one_die_is_always_rolled():
    # V9 — «Además los estados se acumulan. Aunque siempre puedes tirar al menos un dado»
    assert v.pool_size(4, 1, conditions=2) == 3
    assert v.pool_size(2, 0, conditions=3) == 1
    assert v.pool_size(1, 0, modifier=-5, conditions=3) == 1


def test_help_is_one_die_per_helper_up_to_three():
    # V15 — «Se obtiene un +1 por cada persona que esté ayudando hasta un máximo de 3»
    assert [v.help_bonus(n) for n in range(6)] == [0, 1, 2, 3, 3, 3]
    assert v.pool_size(2, 1, helpers=5) == 6


@settings(deadline=None)
@given(
    attribute=st.integers(0, 6),
    skill=st.integers(0, 6),
    modifier=st.integers(-20, 20),
    conditions=st.integers(0, 3),
    helpers=st.integers(0, 10),
)
def test_pool_size_is_never_below_one(attribute, skill, modifier, conditions, helpers):
    size = v.pool_size(attribute, skill, modifier=modifier, conditions=conditions, helpers=helpers)
    assert size >= 1
    assert size == max(1, attribute + skill + modifier + min(helpers, 3) - conditions)


@pytest.mark.parametrize("kwargs", [{"attribute": -1}, {"attribute": 2, "skill": -1}, {"attribute": 2.5}])
def test_negative_or_non_integer_scores_are_refused(kwargs):
    with pytest.raises(ValueError, match="entero no negativo"):
        v.pool_size(**kwargs)


# --- Successes -------------------------------------------------------------


def test_each_six_is_a_success():
    # V2 — «Para tener éxito, debes obtener, como mínimo, un 6. Los 6 se llaman éxitos»
    result = v.roll(FixedDice([6, 5, 1, 6]), 4)
    assert result.dice == (6, 5, 1, 6)
    assert result.successes == 2
    assert result.succeeded is True
    assert v.roll(FixedDice([5, 5]), 2).succeeded is False


def test_extra_successes_are_enhanced_successes():
    # V3 — «Si obtienes más éxitos de los necesarios, has conseguido un éxito mejorado»
    result = v.PoolRoll((6, 6, 6, 2), needed=2)
    assert result.extra_successes == 1
    assert v.PoolRoll((6, 2), needed=2).extra_successes == 0


def test_a_die_outside_the_d6_is_refused():
    with pytest.raises(ValueError, match="Un d6 no puede sacar 7"):
        v.PoolRoll((6, 7))
    with pytest.raises(ValueError, match="al menos un dado"):
        v.roll(FixedDice([]), 0)


# --- Push --------------------------------------------------------------------


def test_push_rerolls_every_die_except_the_sixes():
    # V6 — «Puedes repetir todos los dados excepto los 6, si ha salido alguno»
    first = v.roll(FixedDice([1, 6, 3, 2]), 4, needed=2, kind=PHYSICAL)
    assert first.succeeded is False and first.can_push is True
    pushed = v.push(first, FixedDice([6, 4, 5]))
    assert pushed.rerolled == (0, 2, 3)
    assert pushed.roll.dice == (6, 6, 4, 5)
    assert pushed.roll.pushed is True
    assert pushed.roll.succeeded is True


def test_push_only_once_and_only_after_a_failure():
    # V6 — «Forzar una tirada solo se puede hacer una vez por acción y debe hacerse justo inmediatamente después de fallar la prueba»
    failed = v.PoolRoll((1, 2), kind=MENTAL)
    again = v.push(failed, FixedDice([3, 4])).roll
    assert again.can_push is False
    with pytest.raises(ValueError, match="una vez por acción"):
        v.push(again, FixedDice([1, 1]))
    success = v.PoolRoll((6, 2), kind=MENTAL)
    assert success.can_push is False
    with pytest.raises(ValueError, match="fallida"):
        v.push(success, FixedDice([1]))


def test_push_costs_a_physical_or_mental_condition_by_attribute():
    # V7 — «Si estás utilizando Físico o Precisión sufres un estado físico, si estás utilizando Lógica o Empatía sufres un estado mental»
    assert v.attribute_kind("Físico") is PHYSICAL
    assert v.attribute_kind("precisión") is PHYSICAL
    assert v.attribute_kind("Lógica") is MENTAL
    assert v.attribute_kind("Empatía") is MENTAL
    cost = v.push(v.PoolRoll((1,)), FixedDice([2]), v.attribute_kind("Empatía"))
    assert cost.condition is MENTAL
    with pytest.raises(ValueError, match="Atributo desconocido"):
        v.attribute_kind("Fuerza")
    with pytest.raises(ValueError, match="física o mental"):
        v.push(v.PoolRoll((1,)), FixedDice([2]))


def test_a_failure_made_only_of_sixes_cannot_be_pushed():
    failed = v.PoolRoll((6, 6), needed=3, kind=PHYSICAL)
    assert failed.can_push is False
    with pytest.raises(ValueError, match="ningún dado"):
        v.push(failed, FixedDice([]))


# --- Conditions and Broken ---------------------------------------------------


def test_the_conditions_of_each_kind():
    # V8 — «Los estados físicos son Exhausto, Magullado y Herido. Y los mentales son Irritado, Asustado y Desesperado»
    assert v.CONDITION_NAMES[PHYSICAL] == ("Exhausto", "Magullado", "Herido")
    assert v.CONDITION_NAMES[MENTAL] == ("Irritado", "Asustado", "Desesperado")
    with pytest.raises(ValueError, match="desconocidos"):
        v.Conditions(physical=frozenset({"Irritado"}))


def test_each_condition_taken_is_a_different_one_and_penalises_its_kind():
    # V9 — «tienes 1 dado menos en todas las tiradas relacionadas con atributos físicos o mentales»
    first = v.suffer(v.Conditions(), "físico", 2, choices=["Herido"])
    assert first.taken == ("Herido", "Exhausto")
    assert first.conditions.penalty(PHYSICAL) == 2
    assert first.conditions.penalty(MENTAL) == 0
    assert first.critical_injuries == 0
    with pytest.raises(ValueError, match="no es un estado mental"):
        v.suffer(v.Conditions(), MENTAL, choices=["Herido"])


def test_a_fourth_condition_breaks_the_character_with_a_critical_injury():
    # V10 — «Cuando tengas 3 Estados de un tipo y sufras un cuarto pasarás a estar Derrotado»
    # V10 — «un personaje Derrotado también sufrirá una herida crítica»
    three = v.suffer(v.Conditions(), MENTAL, 3).conditions
    assert three.broken_mental is False
    fourth = v.suffer(three, MENTAL)
    assert fourth.became_broken is True
    assert fourth.critical_injuries == 1
    assert fourth.conditions.broken_mental is True
    assert fourth.conditions.mental == frozenset(v.CONDITION_NAMES[MENTAL])
    # One blow of 5 on a fresh character: three conditions, then Broken.
    blow = v.suffer(v.Conditions(), PHYSICAL, 5)
    assert blow.taken == ("Exhausto", "Magullado", "Herido")
    assert blow.became_broken is True and blow.critical_injuries == 1


def test_physically_broken_fails_every_test_and_each_hit_is_another_critical():
    # V11 — «Automáticamente fallas todas las pruebas»
    # V11 — «Cada ataque con éxito que sufres mientras estás Derrotado te causa otra herida crítica»
    broken = v.suffer(v.Conditions(), PHYSICAL, 4).conditions
    assert broken.fails_every_test is True
    hit = v.take_damage(broken, 2)
    assert hit.critical_injuries == 1
    assert hit.conditions == broken


def test_mentally_broken_can_defend_but_not_attack():
    # V12 — «puedes huir, parar y esquivar, haciendo las pruebas de habilidad de forma normal»
    # V12 — «No puedes atacar ni realizar rituales»
    broken = v.suffer(v.Conditions(), MENTAL, 4).conditions
    assert broken.fails_every_test is False
    assert broken.may_attack is False
    assert v.Conditions().may_attack is True


def test_critical_injury_roll_is_d66():
    # V13 — «Tiras 2d6 desglosados»
    assert v.critical_injury_roll(FixedDice([3, 5])) == 35
    assert v.critical_injury_roll(FixedDice([6, 6])) == 66


def test_healing_removes_named_conditions():
    # V28 — «Si tiene éxito, dejas de estar Derrotado, pero conservas todos los demás estados. Los éxitos adicionales se pueden utilizar para curar estados adicionales»
    broken = v.suffer(v.Conditions(), PHYSICAL, 4).conditions
    assert v.treat_critical_injury(0) == (False, 0)
    assert v.treat_critical_injury(3) == (True, 2)
    treated = v.heal(broken, PHYSICAL, ["Herido", "Magullado"], broken=True)
    assert treated == v.Conditions(physical=frozenset({"Exhausto"}))
    with pytest.raises(ValueError, match="no tiene los estados"):
        v.heal(treated, PHYSICAL, ["Herido"])


def test_a_day_of_care_heals_three_conditions_per_success():
    # V29 — «curas un total de tres estados de tus pacientes, que tú distribuyes entre ellos»
    # V29 — «Cada éxito adicional se puede utilizar para curar tres estados más»
    assert [v.conditions_healed(s) for s in range(4)] == [0, 3, 6, 9]


# --- Opposed rolls, combat ---------------------------------------------------


def test_opposed_more_successes_wins_and_a_tie_may_be_pushed():
    # V14 — «quien consiga más éxitos es el ganador. En caso de empate se puede forzar la tirada»
    assert v.opposed(2, 1) is v.Opposed.FIRST
    assert v.opposed(0, 1) is v.Opposed.SECOND
    assert v.opposed(1, 1) is v.Opposed.TIE


def test_initiative_is_a_d10_highest_first_ties_rerolled():
    # V17 — «Se lanza 1d10 para determinar la iniciativa»
    order = v.initiative(FixedDice([7, 9, 7, 2, 8]), ["Ana", "Bo", "Cai"])
    # Ana and Cai tie on 7 and re-roll (2, 8): Cai goes first; both keep 7.
    assert order == (("Bo", 9), ("Cai", 7), ("Ana", 7))


def test_ambush_rolls_initiative_twice_keeping_the_best():
    # V25 — «puedes lanzar dos veces por iniciativa y elegir la mejor tirada. Cada éxito adicional añade +1 en tu primera acción de el asalto»
    order = v.initiative(FixedDice([3, 9, 5]), ["Ana", "Bo"], twice={"Ana"})
    assert order == (("Ana", 9), ("Bo", 5))
    assert v.ambush_first_action_bonus(2) == 2


def test_initiative_cards_option_draws_without_replacement():
    # Q18 alternative: the original game's cards 1–10, so no ties.
    # Deck [1..10]: roll 10 takes card 10; then 9 cards, roll 1 takes card 1.
    order = v.initiative(FixedDice([10, 1]), ["Ana", "Bo"], mode=v.InitiativeMode.CARDS)
    assert order == (("Ana", 10), ("Bo", 1))
    with pytest.raises(ValueError, match="cartas"):
        v.initiative(FixedDice([]), [str(i) for i in range(11)], mode="cartas")


def test_damage_is_the_number_of_physical_conditions():
    # V19 — «El valor de daño indicado es el número de estados físicos que le infliges al enemigo»
    hit = v.take_damage(v.Conditions(), 2)
    assert hit.taken == ("Exhausto", "Magullado")


def test_npc_resistance_costs_dice():
    # V20 — «un PNJ que sufre 3 puntos de daño pierde 3 puntos de resistencia y tira 3 dados menos en la siguiente prueba»
    assert v.npc_dice_penalty(3, 3) == 3
    assert v.npc_dice_penalty(3, 0) == 3
    assert v.npc_dice_penalty(3, 0, v.NpcPenalty.NEXT_TEST) == 0
    assert v.npc_dice_penalty(5, 2, v.NpcPenalty.NEXT_TEST) == 2


def test_each_dodge_or_parry_success_removes_an_attack_success():
    # V21 — «Cada éxito resta un éxito del ataque del enemigo. Si reduces a 0 los éxitos del enemigo, su ataque falla»
    assert v.after_reaction(3, 1) == 2
    assert v.after_reaction(2, 2) == 0
    assert v.after_reaction(1, 3) == 0
    assert v.reaction_may_swap_initiative(1, 2) is True
    assert v.reaction_may_swap_initiative(2, 2) is False


def test_armour_rolls_protection_dice_and_each_success_stops_one_damage():
    # V22 — «tiras la cantidad de dados indicada por el valor de Protección de la armadura. Cada éxito reduce el daño en 1»
    armour = v.armour_roll(FixedDice([6, 2, 6]), 3)
    assert armour.successes == 2
    assert v.damage_after_armour(3, armour.successes) == 1
    assert v.damage_after_armour(1, 2) == 0
    assert v.take_damage(v.Conditions(), 3, armour.successes).taken == ("Exhausto",)


def test_breaking_free_needs_more_successes_or_one_if_unopposed():
    # V23 — «La persona apresada debe obtener más éxitos que su contrincante para liberarse; si se empata, la situación no cambia»
    # V23 — «tan sólo necesita un éxito para liberarse»
    assert v.breaks_free(2, 1) is True
    assert v.breaks_free(1, 1) is False
    assert v.breaks_free(1, None) is True
    assert v.breaks_free(0, None) is False


def test_fleeing_with_agilidad_loses_a_success_per_blocker_success():
    # V24 — «Para huir, utilizas Agilidad»
    assert v.after_reaction(2, 1) == 1
    assert v.after_reaction(1, 1) == 0


# --- Fear ------------------------------------------------------------------


def test_fear_pool_adds_a_die_per_companion_up_to_three_less_mental_conditions():
    # V26 — «Añade una cantidad de dados adicionales igual a la cantidad de personajes jugadores presentes en la escena (máximo +3 dados)»
    assert v.fear_pool(3, 2, 0) == 5
    assert v.fear_pool(3, 6, 0) == 6
    assert v.fear_pool(3, 6, 2) == 4
    assert v.fear_pool(1, 0, 3) == 1


def test_fear_needs_as_many_successes_as_the_fear_value():
    # V26 — «El valor de Miedo de la criatura, efecto mágico o suceso indica cuántos éxitos necesitas»
    assert v.fear_outcome(2, 2) == v.FearOutcome(True, 0, None)
    assert v.fear_outcome(4, 2) == v.FearOutcome(True, 0, None)


def test_failed_fear_terrifies_for_a_d6_of_rounds_with_conditions():
    # V27 — «Tira 1d6 para ver cuántos asaltos tardarás en recuperar el control de ti mismo»
    # V27 — «sufres una cantidad de estados mentales igual al valor de Miedo. Cada éxito que obtienes en tu prueba de Miedo reduce en 1 el número de estados que recibes»
    outcome = v.fear_outcome(1, 3, FixedDice([4]))
    assert outcome == v.FearOutcome(False, 2, 4)
    suffered = v.suffer(
        v.Conditions(mental=frozenset({"Irritado", "Asustado"})),
        MENTAL,
        outcome.mental_conditions,
    )
    assert suffered.became_broken is True and suffered.critical_injuries == 1
    with pytest.raises(ValueError, match="asaltos"):
        v.fear_outcome(0, 1)


def test_fear_test_push_costs_a_mental_condition():
    # V26 — «Si fallas, puedes forzar la tirada adquiriendo un estado mental»
    failed = v.roll(FixedDice([1, 6, 2]), v.fear_pool(2, 1, 0), needed=2, kind=MENTAL)
    pushed = v.push(failed, FixedDice([6, 1]))
    assert pushed.condition is MENTAL
    assert v.fear_outcome(pushed.roll.successes, 2).passed is True


# --- Recovery, equipment ---------------------------------------------------


def test_recovery_roll_adds_the_two_attributes():
    # V30 — «Por cada éxito, puedes curarte un defecto o hacer que una perspicacia sea permanente»
    assert v.recovery_pool(3, 2) == 5


def test_buying_needs_successes_equal_or_above_availability():
    # V31 — «El equipo se compra consiguiendo una cantidad de éxitos igual o mayor al nivel de disponibilidad del equipo»
    assert v.can_buy(3, 3) is True
    assert v.can_buy(2, 3) is False
    with pytest.raises(ValueError, match="de 1 a 5"):
        v.can_buy(3, 6)


# --- Exact probabilities -----------------------------------------------------


def test_probability_of_at_least_one_success_is_exact():
    assert v.success_probability(1) == Fraction(1, 6)
    assert v.success_probability(5) == Fraction(4651, 7776)
    assert v.success_probability(2, 3) == 0
    assert v.success_probability(3, 0) == 1


def test_probability_with_a_push_is_exact():
    # 1 die: 1/6 + 5/6 · 1/6; 2 dice: 11/36 + 25/36 · 11/36.
    assert v.success_probability(1, push=True) == Fraction(11, 36)
    assert v.success_probability(2, push=True) == Fraction(671, 1296)


def _brute_force(dice: int, needed: int, push: bool) -> Fraction:
    wins = Fraction(0)
    for first in itertools.product(range(1, 7), repeat=dice):
        p = Fraction(1, 6**dice)
        sixes = first.count(6)
        if sixes >= needed:
            wins += p
        elif push and sixes < dice:
            rest = dice - sixes
            hits = sum(1 for again in itertools.product(range(1, 7), repeat=rest) if sixes + again.count(6) >= needed)
            wins += p * Fraction(hits, 6**rest)
    return wins


@pytest.mark.parametrize("dice,needed", [(1, 1), (2, 1), (3, 2), (4, 2), (4, 3)])
def test_probabilities_match_brute_force_enumeration(dice, needed):
    for push in (False, True):
        assert v.success_probability(dice, needed, push=push) == _brute_force(dice, needed, push)


@settings(deadline=None)
@given(dice=st.integers(0, 30), needed=st.integers(0, 10))
def test_every_distribution_sums_to_one(dice, needed):
    assert sum(v.successes_distribution(dice)) == 1
    assert sum(v.pushed_distribution(dice, needed)) == 1
    assert v.success_probability(dice, needed, push=True) >= v.success_probability(dice, needed)


# --- The quotes above are the seed's words --------------------------------


def test_every_quoted_seed_phrase_is_verbatim():
    if not SEED.exists():
        pytest.skip("the seed texts are not next to this checkout")
    seed = " ".join(SEED.read_text(encoding="utf-8").split())
    quotes = re.findall(r"# V\d+ — «(.+?)»$", Path(__file__).read_text("utf-8"), re.MULTILINE)
    assert len(quotes) >= 30
    for quote in quotes:
        assert " ".join(quote.split()) in seed, quote


def test_probabilities_refuse_absurd_pools():
    with pytest.raises(ValueError, match="Como mucho se calculan 100 dados"):
        v.success_probability(101)
