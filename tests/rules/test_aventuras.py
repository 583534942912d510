"""Hora de Aventuras: rules A1–A30 of rules-spec.md, quoting seed S004
(/work/shared/seeds/004_bd4791e7c21f0e25.txt)."""

import re
from fractions import Fraction
from functools import cache
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rules import aventuras as a
from rules.dice import FixedDice

Tally = a.Tally
SEED = Path(__file__).resolve().parents[3] / "shared" / "seeds" / "004_bd4791e7c21f0e25.txt"


# --- Dice count --------------------------------------------------------------


def test_an_action_uses_one_attribute():
    # A1 — «Cada acción utiliza un atributo del personaje»
    assert a.attribute_score(4, highlighted=True) == 4


def test_the_attributes_and_action_kinds_are_the_seeds():
    # A1 — «para romper una puerta usarás el atributo Cachas, pero para ligar con un poli
    # banana usarás el atributo Majo»; «tirar su atributo de Espabilado»; «+1 a Cerebrito»
    text = SEED.read_text(encoding="utf-8")
    for name in a.ATTRIBUTES:
        assert f"atributo {name.capitalize()}" in text or f"a {name.capitalize()}" in text
    # «Las acciones pueden ser de tres tipos»: física, mental, social.
    assert a.ACTION_KINDS == ("física", "mental", "social")


def test_the_difficulty_words_are_only_the_ones_the_seed_gives():
    # A8/A10 — «Las acciones más fáciles tendrán dificultad 0» and «La dificultad es 2. ¡Esta
    # acción es dificililla!»; S004 has no guide table, so no other difficulty gets a word.
    text = SEED.read_text(encoding="utf-8")
    assert a.DIFFICULTY_WORDS == {0: "de las más fáciles", 2: "dificililla"}
    assert "acciones más fáciles tendrán dificultad 0" in text
    assert "¡Esta acción es dificililla!" in text


def test_dice_are_the_score_if_highlighted_else_two():
    # A2 — «tirará tantos dados como la puntuación que tenga en el atributo y, si no lo tiene, entonces tirará dos dados»
    assert a.dice_count(4, highlighted=True) == 4
    assert a.dice_count(4, highlighted=False) == 2


def test_bonuses_and_penalties_add_and_remove_dice():
    # A3 — «si decimos que una tirada tiene una bonificación de +1, eso es que tiras un dado más; y si tiene una penalización de –1, tiras un dado menos»
    assert a.dice_count(3, True, +1) == 4
    assert a.dice_count(3, True, -1) == 2


def test_zero_dice_is_an_automatic_failure_by_default():
    # Q17 [ENGINE DEFAULT] — no minimum in S004: zero dice roll nothing and fail.
    assert a.dice_count(2, False, -3) == 0
    empty = a.roll(FixedDice([]), 0)
    assert empty.dice == () and empty.tally == Tally(0, 0)
    assert a.resolve(empty.tally, 0).succeeded is False
    assert a.success_probability(0, 0) == 0
    # The option: always roll at least one die.
    assert a.dice_count(2, False, -3, min_dice=1) == 1


def test_tools_add_dice():
    # A29 — «Las herramientas normales dan +1 al atributo, para una única acción y solo para unos usos concretos de la acción»
    # A29 — «incluso dar un +3»
    assert a.dice_count(2, False, +1) == 3
    assert a.dice_count(3, True, +3) == 6


# --- Reading the dice ------------------------------------------------------


def test_one_to_three_fail_four_five_succeed_six_is_chachi():
    # A4 — «un resultado de 1, 2 o 3 es un fallo y se ignora, mientras que un resultado de 4 o 5 se considera un éxito. Un resultado de 6 es un éxito chachi»
    assert [a.die_outcome(d) for d in range(1, 7)] == [a.Outcome.FAILURE] * 3 + [a.Outcome.SUCCESS] * 2 + [
        a.Outcome.CHACHI
    ]
    assert a.roll(FixedDice([1, 4, 6, 5]), 4).tally == Tally(2, 1)


def test_threshold_moves_to_three_or_five_and_opposites_cancel():
    # A7 — «si una ofrece éxito con 3 o más y otra lo modifica a 5 o más, entonces las cosas se quedan con el habitual 4 o más»
    # A7 — «Los citados 3 o más o 5 o más deberían ser los límites de esta modificación»
    assert a.success_threshold() == 4
    assert a.success_threshold(easier=1) == 3
    assert a.success_threshold(harder=1) == 5
    assert a.success_threshold(easier=1, harder=1) == 4
    assert a.success_threshold(easier=3) == 3
    assert a.success_threshold(harder=2) == 5
    assert a.success_threshold(easier=2, harder=1) == 3
    assert a.die_outcome(3, threshold=3) is a.Outcome.SUCCESS
    assert a.die_outcome(4, threshold=5) is a.Outcome.FAILURE
    assert a.die_outcome(6, threshold=5) is a.Outcome.CHACHI
    assert a.roll(FixedDice([3, 4, 6]), 3, threshold=5).tally == Tally(0, 1)
    with pytest.raises(ValueError, match="3\\+ a 5\\+"):
        a.die_outcome(4, threshold=2)
    with pytest.raises(ValueError, match="Un d6 no puede sacar 7"):
        a.die_outcome(7)


# --- Chachi conversion -------------------------------------------------------


def test_a_chachi_becomes_a_five_and_adds_a_die():
    # A5 — «puede convertir un resultado de 6 en un 5 y añadir otro dado a su tirada»
    state = a.roll(FixedDice([2, 6]), 2)
    after = a.convert_chachi(state, 1, FixedDice([3]))
    assert state.dice == (2, 6) and state.tally == Tally(0, 1)  # the old state is unchanged
    assert after.dice == (2, 6, 3)
    assert after.values == (2, 5, 3)
    assert after.converted == frozenset({1})
    assert after.tally == Tally(1, 0)


def test_conversion_chains_on_added_dice_and_refuses_non_chachis():
    # A5 — «Mientras sigas obteniendo éxitos chachis puedes convertirlos en éxitos normales y añadir más dados si quieres»
    state = a.roll(FixedDice([6]), 1)
    state = a.convert_chachi(state, 0, FixedDice([6]))
    state = a.convert_chachi(state, 1, FixedDice([6]))
    assert state.chachi_positions == (2,)
    with pytest.raises(ValueError, match="no es un éxito chachi"):
        a.convert_chachi(state, 0, FixedDice([1]))
    with pytest.raises(ValueError, match="no es un éxito chachi"):
        a.convert_chachi(a.AventurasRoll((5,)), 0, FixedDice([1]))
    with pytest.raises(ValueError, match="no es un 6"):
        a.AventurasRoll((5, 6), converted=frozenset({0}))


def test_palomita_worked_example():
    # A30 — «su resultado final es 3, 5, 5, 4. ¡Tres éxitos! ¡Palomita ha superado la dificultad!»
    # A10 — «La dificultad es 2. ¡Esta acción es dificililla!»
    state = a.roll(FixedDice([3, 6]), a.dice_count(3, highlighted=False))
    assert a.resolve(state.tally, 2).succeeded is False
    state = a.convert_chachi(state, 1, FixedDice([6]))
    assert state.tally.successes == 2  # «Ahora está empatada»
    assert a.resolve(state.tally, 2).succeeded is False
    state = a.convert_chachi(state, 2, FixedDice([4]))
    assert state.dice == (3, 6, 6, 4)
    assert state.values == (3, 5, 5, 4)
    result = a.resolve(state.tally, 2)
    assert result == a.Resolution(True, Tally(3, 0), Tally(1, 0))
    assert result.chachis == 0


# --- Difficulty ----------------------------------------------------------------


def test_difficulty_cancels_successes_and_one_more_is_needed():
    # A8 — «La dificultad de la acción son éxitos que se anulan de tu tirada»
    # A8 — «tendrás que obtener más éxitos (al menos uno más) que el número de dificultad»
    assert a.resolve(Tally(2, 0), 2).succeeded is False
    assert a.resolve(Tally(2, 1), 2).succeeded is True
    assert a.resolve(Tally(1, 0), 0).succeeded is True


def test_difficulty_cancels_normal_successes_first():
    # A9 — «la dificultad siempre anula primero los éxitos normales y solo anula los chachis cuando no quedan éxitos normales que anular»
    assert a.cancel_by_difficulty(Tally(2, 2), 1) == Tally(1, 2)
    assert a.cancel_by_difficulty(Tally(2, 2), 3) == Tally(0, 1)
    assert a.cancel_by_difficulty(Tally(1, 1), 5) == Tally(0, 0)


def test_chachis_count_only_when_the_action_succeeds():
    # A6 — «si el resultado de la tirada no tiene suficientes éxitos, los éxitos chachis no servirán para nada»
    assert a.resolve(Tally(0, 2), 2).chachis == 0
    assert a.resolve(Tally(0, 2), 1).chachis == 1


def test_a_chachi_spent_on_a_narrative_effect_still_counts_as_a_success_but_not_as_a_chachi():
    # A12 — «el éxito chachi así utilizado seguirá contando como un éxito para la resolución,
    # pero no podrá utilizarse para los efectos habituales descritos en la acción»
    spent = a.spend_on_narrative(Tally(1, 2), 1)
    assert spent == Tally(2, 1)
    assert spent.successes == Tally(1, 2).successes
    assert a.resolve(spent, 2).succeeded is True
    # A9 — the difficulty cancels it as a normal success: one chachi left for the action.
    assert a.resolve(spent, 2).chachis == 1
    assert a.resolve(a.spend_on_narrative(Tally(0, 2), 2), 1).chachis == 0
    with pytest.raises(ValueError):
        a.spend_on_narrative(Tally(1, 1), 2)


# --- Reactions -----------------------------------------------------------------


def test_reactions_are_optional():
    # A14 — «Las reacciones son gratis, no cuentan como una acción del personaje que se defiende, pero son opcionales»
    result = a.resolve_reaction(Tally(2, 1), None, 1)
    assert result == a.ReactionResult(True, False, Tally(1, 1), -3)


def test_the_reaction_replaces_the_difficulty_when_higher():
    # A15 — «la tirada de acción tiene que superar la dificultad o los éxitos de la tirada de reacción, lo que sea mayor»
    assert a.resolve_reaction(Tally(3, 0), Tally(2, 0), 1).succeeded is True
    assert a.resolve_reaction(Tally(2, 0), Tally(2, 0), 1).succeeded is False
    assert a.resolve_reaction(Tally(2, 0), Tally(1, 0), 2).succeeded is False
    # A lower reaction leaves the difficulty in place, which cancels normals first.
    assert a.resolve_reaction(Tally(2, 2), Tally(0, 1), 2).remaining == Tally(0, 2)


def test_a_higher_reaction_blocks_the_action():
    # A16 — «Si la tirada de reacción es mayor que la tirada de acción, entonces el defensor bloquea totalmente la acción»
    result = a.resolve_reaction(Tally(1, 1), Tally(3, 0))
    assert result.succeeded is False and result.blocked is True
    assert result.defender_margin == 1
    assert result.chachis == 0
    tie = a.resolve_reaction(Tally(1, 1), Tally(2, 0))
    assert tie.succeeded is False and tie.blocked is False


def test_defender_normals_cancel_normals_first_and_chachis_cancel_chachis_first():
    # A17 — «los éxitos normales del defensor anulan primero los éxitos normales y, solo si han anulado todos, pueden anular éxitos chachis»
    # A17 — «los éxitos chachis del defensor hacen lo contrario: anulan primero éxitos chachis del personaje y si los anulan todos pasan a anular los normales»
    assert a.cancel_by_reaction(Tally(1, 2), Tally(2, 0)) == Tally(0, 1)
    assert a.cancel_by_reaction(Tally(2, 1), Tally(0, 2)) == Tally(1, 0)
    assert a.cancel_by_reaction(Tally(3, 2), Tally(1, 1)) == Tally(2, 1)
    for order in a.ReactionOrder:
        assert a.resolve_reaction(Tally(3, 2), Tally(1, 1), order=order).remaining == Tally(2, 1)


@settings(deadline=None)
@given(
    action=st.builds(Tally, st.integers(0, 8), st.integers(0, 8)),
    reaction=st.builds(Tally, st.integers(0, 8), st.integers(0, 8)),
    difficulty=st.integers(0, 8),
)
def test_both_cancel_orders_agree_whenever_the_action_succeeds(action, reaction, difficulty):
    first = a.resolve_reaction(action, reaction, difficulty, order=a.ReactionOrder.NORMALS_FIRST)
    second = a.resolve_reaction(action, reaction, difficulty, order=a.ReactionOrder.CHACHIS_FIRST)
    assert first.succeeded == second.succeeded
    if first.succeeded:
        assert first.remaining == second.remaining
        assert first.remaining.successes == action.successes - max(difficulty, reaction.successes)


def test_one_action_roll_each_target_reacts_separately():
    # A18 — «se realiza una única tirada para el personaje que realiza la acción, pero cada personaje que pueda ser afectado reacciona por separado»
    action = Tally(2, 1)
    results = [a.resolve_reaction(action, r) for r in (Tally(1, 0), Tally(3, 0), None)]
    assert [r.succeeded for r in results] == [True, False, True]


# --- Competitions and cooperation ------------------------------------------


def test_competition_goes_to_the_successful_side_with_more_chachis_then_normals():
    # A13 — «el que obtiene éxito y tiene más éxitos chachis gana la competición. A empate de éxitos chachis, gana el que tenga más éxitos normales. Si el empate continúa, entonces la competición también está empatada»
    palomita, cacahuete = a.resolve(Tally(2, 0)), a.resolve(Tally(1, 0))
    assert a.competition_winners([palomita, cacahuete]) == (0,)
    assert a.competition_winners([a.resolve(Tally(3, 0)), a.resolve(Tally(0, 1))]) == (1,)
    assert a.competition_winners([a.resolve(Tally(1, 1)), a.resolve(Tally(1, 1))]) == (0, 1)
    # A side that fails its own difficulty cannot win; if nobody succeeds, nobody wins.
    assert a.competition_winners([a.resolve(Tally(0, 2), 2), a.resolve(Tally(1, 0))]) == (1,)
    assert a.competition_winners([a.resolve(Tally(1, 0), 1), a.resolve(Tally(0, 0))]) == ()


def test_competition_counts_after_difficulty_by_default():
    # Different difficulties: (3, 1) at 2 keeps (1, 1); (1, 1) at 0 keeps (1, 1): a tie.
    tied = [a.resolve(Tally(3, 1), 2), a.resolve(Tally(1, 1), 0)]
    assert a.competition_winners(tied) == (0, 1)
    assert a.competition_winners(tied, a.CompetitionCount.AS_ROLLED) == (0,)


def test_cooperation_adds_one_difficulty_per_helper_and_pools_successes():
    # A19 — «aumenta en +1 la dificultad de la acción por cada personaje extra que se apunte a ayudar»
    # A19 — «combina los éxitos que obtengan todos (¡y los éxitos chachis!)»
    # The seed's example: difficulty 2 +1 for Palomita; 1 + 3 successes beat it.
    result = a.cooperate([Tally(1, 0), Tally(2, 1)], 2)
    assert a.cooperation_difficulty(2, 1) == 3
    assert result == a.Resolution(True, Tally(3, 1), Tally(0, 1))
    with pytest.raises(ValueError, match="al menos un personaje"):
        a.cooperate([], 1)


# --- Initiative ----------------------------------------------------------------


def test_initiative_by_espabilado_then_cachas_then_hero_points():
    # A20 — «El personaje más rápido es el que tiene la puntuación de Espabilado más alta»
    # A20 — «Si dos personajes tienen la misma puntuación de Espabilado, actúa antes el que tenga la puntuación más alta en Cachas. Si siguen empatados (¡qué mala pata!), actúa primero el que tenga más puntos de Héroe»
    # A20 — «los personajes de los jugadores siempre actúan antes, ¡incluso si han gastado todos sus puntos de Héroe!»
    finn = a.Combatant("Finn", a.attribute_score(3, True), 4, hero_points=2)
    jake = a.Combatant("Jake", a.attribute_score(5, False), 4, hero_points=5)
    ogro = a.Combatant("Ogro", 2, 4)
    bmo = a.Combatant("BMO", 2, 4, hero_points=0)
    pb = a.Combatant("Princesa", 2, 4, hero_points=0)
    order = a.initiative_order([ogro, jake, bmo, finn, pb])
    assert [[c.name for c in group] for group in order] == [
        ["Finn"],
        ["Jake"],
        ["BMO", "Princesa"],
        ["Ogro"],
    ]


# --- Hero points -----------------------------------------------------------------


def test_every_adventure_starts_with_five_hero_points_and_no_cap():
    # A21 — «cada héroe comienza el juego con cinco puntos de Héroe»
    # A21 — «No hay límite a los puntos de Héroe que puedes acumular durante la aventura»
    hero = a.new_adventure()
    assert hero == a.HeroPoints(5, frozenset())
    assert a.gain(a.HeroPoints(40), a.HeroGain.SACRIFICE).points == 41


def test_a_hero_point_adds_two_dice_or_rerolls_any_dice():
    # A22 — «puedes gastar un punto de Héroe para añadir dos dados a tu tirada»
    # A22 — «puedes gastar un punto de Héroe para repetir todos los dados que quieras de tu tirada»
    hero = a.spend(a.new_adventure(), a.HeroSpend.ADD_DICE)
    state = a.roll(FixedDice([1, 2, 6, 3]), a.dice_count(2, False) + a.HERO_EXTRA_DICE)
    hero = a.spend(hero, a.HeroSpend.REROLL)
    again = a.reroll(state, [0, 1, 3], FixedDice([4, 6, 5]))
    assert hero.points == 3
    assert again.dice == (4, 6, 6, 5)
    assert again.tally == Tally(2, 2)
    converted = a.convert_chachi(again, 2, FixedDice([1]))
    assert a.reroll(converted, [2], FixedDice([3])).converted == frozenset()


def test_other_hero_point_uses():
    # A23 — «ignorar un estado durante un turno»
    # A23 — «recuperar hasta dos niveles de salud»
    hero = a.new_adventure()
    for use in (a.HeroSpend.IGNORE_STATE, a.HeroSpend.RECOVER, a.HeroSpend.FEAT):
        hero = a.spend(hero, use)
    assert hero.points == 2


def test_one_of_each_use_per_turn():
    # A24 — «podrías gastar un punto para añadir dos dados a tu tirada y a continuación otro para repetir la tirada (¡incluyendo esos dados que has añadido!), pero no podrías gastar dos puntos para añadir cuatro dados ni repetir la tirada dos veces»
    hero = a.spend(a.new_adventure(), a.HeroSpend.ADD_DICE)
    hero = a.spend(hero, a.HeroSpend.REROLL)
    for use in (a.HeroSpend.ADD_DICE, a.HeroSpend.REROLL):
        with pytest.raises(ValueError, match="este turno"):
            a.spend(hero, use)
    hero = a.spend(a.new_turn(hero), a.HeroSpend.ADD_DICE)
    assert hero.points == 2
    with pytest.raises(ValueError, match="No quedan"):
        a.spend(a.HeroPoints(0), a.HeroSpend.RECOVER)


def test_earning_hero_points():
    # A25 — «si te enfrentas a tu defecto para ayudar a otros, ganas un punto de Héroe»
    # A25 — «renuncias a cosas que te importan»
    # A27 — «Un estado por el morro dura una escena y el personaje que lo recibe gana un punto de Héroe»
    hero = a.HeroPoints(1)
    for reason in a.HeroGain:
        hero = a.gain(hero, reason)
    assert hero.points == 4


def test_a_helped_player_may_give_one_of_their_points():
    # A26 — «este puede darte, si quiere, uno de sus puntos de Héroe»
    giver, receiver = a.give(a.HeroPoints(2), a.HeroPoints(0))
    assert (giver.points, receiver.points) == (1, 1)
    with pytest.raises(ValueError, match="no tiene ninguno"):
        a.give(a.HeroPoints(0), a.HeroPoints(3))


def test_two_experience_buy_an_instant_point_spent_at_once():
    # A28 — «Puedes gastar dos puntos de Experiencia de los que hayas recibido por tus aventuras pasadas para comprar un punto de Héroe instantáneo»
    hero, xp = a.spend_experience(a.HeroPoints(0), 5, a.HeroSpend.REROLL)
    assert (hero.points, xp) == (0, 3)
    with pytest.raises(ValueError, match="este turno"):
        a.spend_experience(hero, xp, a.HeroSpend.REROLL)
    with pytest.raises(ValueError, match="dos puntos de Experiencia"):
        a.spend_experience(hero, 1, a.HeroSpend.ADD_DICE)


# --- Exact probabilities -----------------------------------------------------


def test_success_probability_without_converting_is_binomial():
    assert a.success_probability(1, 0) == Fraction(1, 2)
    assert a.success_probability(2, 0) == Fraction(3, 4)
    assert a.success_probability(2, 2) == 0
    assert a.success_probability(3, 1, threshold=3) == Fraction(20, 27)


def test_success_probability_converting_every_chachi():
    # One die at difficulty 0 converting: still 1/2 (a 6 already succeeds).
    assert a.success_probability(1, 0, convert_chachis=True) == Fraction(1, 2)
    # One die at difficulty 1: a 6 (1/6) then the new die succeeds (1/2).
    assert a.success_probability(1, 1, convert_chachis=True) == Fraction(1, 12)
    # Palomita's two dice against difficulty 2.
    assert a.success_probability(2, 2, convert_chachis=True) == Fraction(13, 144)


@cache
def _needs(dice: int, more: int, threshold: int) -> Fraction:
    """Independent check: P(at least ``more`` successes) with ``dice`` live dice."""
    if more <= 0:
        return Fraction(1)
    if dice == 0:
        return Fraction(0)
    fail = Fraction(threshold - 1, 6)
    normal = Fraction(6 - threshold, 6)
    six = Fraction(1, 6)
    return (
        fail * _needs(dice - 1, more, threshold)
        + normal * _needs(dice - 1, more - 1, threshold)
        + six * _needs(dice, more - 1, threshold)
    )


@settings(deadline=None, max_examples=60)
@given(dice=st.integers(0, 8), difficulty=st.integers(0, 8), threshold=st.integers(3, 5))
def test_converting_probability_matches_an_independent_recursion(dice, difficulty, threshold):
    p = a.success_probability(dice, difficulty, threshold=threshold, convert_chachis=True)
    assert p == _needs(dice, difficulty + 1, threshold)
    assert p >= a.success_probability(dice, difficulty, threshold=threshold)


@settings(deadline=None, max_examples=60)
@given(dice=st.integers(0, 12), threshold=st.integers(3, 5), cap=st.integers(0, 15))
def test_every_distribution_sums_to_one(dice, threshold, cap):
    assert sum(a.successes_distribution(dice, threshold)) == 1
    assert sum(a.successes_distribution(dice, threshold, True, cap)) == 1
    assert sum(a.successes_distribution(dice, threshold, False, cap)) == 1


def test_converting_needs_a_cap_for_the_distribution():
    with pytest.raises(ValueError, match="tope"):
        a.successes_distribution(2, 4, True)


def test_probabilities_refuse_absurd_pools():
    with pytest.raises(ValueError, match="Como mucho se calculan 100 dados"):
        a.success_probability(101, 0)
    with pytest.raises(ValueError, match="dificultad de 100"):
        a.success_probability(3, 101, convert_chachis=True)


# --- The quotes above are the seed's words --------------------------------


def test_every_quoted_seed_phrase_is_verbatim():
    if not SEED.exists():
        pytest.skip("the seed texts are not next to this checkout")
    seed = " ".join(SEED.read_text(encoding="utf-8").split())
    quotes = re.findall(r"# A\d+ — «(.+?)»$", Path(__file__).read_text("utf-8"), re.MULTILINE)
    assert len(quotes) >= 30
    for quote in quotes:
        assert " ".join(quote.split()) in seed, quote
