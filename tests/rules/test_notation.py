"""The generic dice notation of the forum's free roll (rules/notation.py)."""

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rules import notation as n
from rules.dice import FixedDice


class AlwaysMax:
    def roll(self, faces: int) -> int:
        return faces


class RandomDice:
    def __init__(self, rng: random.Random):
        self.rng = rng

    def roll(self, faces: int) -> int:
        return self.rng.randint(1, faces)


def flags(result: n.RollResult) -> list[tuple[int, bool, bool, bool]]:
    return [(d.value, d.kept, d.exploded, d.from_explosion) for d in result.dice]


# --- Parsing and canonical form ----------------------------------------------


@pytest.mark.parametrize(
    "text,canonical",
    [
        ("3d10", "3d10"),
        ("d20", "1d20"),
        (" 2D6 + 3 ", "2d6+3"),
        ("4d6k3", "4d6kh3"),
        ("2d20KL1", "2d20kl1"),
        ("4d6dl1", "4d6dl1"),
        ("5d8dh2", "5d8dh2"),
        ("3d10!", "3d10!"),
        ("6d6>=5", "6d6>=5"),
        ("2d6+1d8-2", "2d6+1d8-2"),
        ("-1+1d4", "-1+1d4"),
        ("4d10!kh2>8", "4d10!kh2>8"),
        ("007", "7"),
    ],
)
def test_parse_gives_a_canonical_text(text, canonical):
    assert n.parse(text).canonical() == canonical
    assert str(n.parse(canonical)) == canonical


def test_parse_builds_an_immutable_expression():
    expr = n.parse("4d6kh3+2")
    assert expr == n.Expression((n.Dice(4, 6, 1, False, n.KeepMode.KEEP_HIGHEST, 3), n.Constant(2)))
    with pytest.raises(AttributeError):
        expr.terms = ()


def test_faces_in_draw_order_and_pool_spec_for_the_roll_log():
    assert n.parse("3d10").faces() == (10, 10, 10)
    assert n.parse("2d6+1d8").faces() == (6, 6, 8)
    assert n.parse("2d6+1d8").pool_spec() == "2d6+1d8"
    assert n.parse("4d6kh3+2").pool_spec() == "4d6"
    assert n.parse("2d6-1d4+3").pool_spec() == "2d6+1d4"
    assert n.parse("5").faces() == ()
    with pytest.raises(ValueError, match="explosivos"):
        n.parse("3d10!").faces()
    assert n.parse("3d10!+1d6-2d4!kh1").pool_spec() == "3d10!+1d6+2d4!"


# --- Evaluation ----------------------------------------------------------------


def test_plain_sum_with_constants_and_subtraction():
    result = n.roll("1d6-1d4+3", FixedDice([4, 2]))
    assert result.total == 5
    assert [d.value for d in result.dice] == [4, 2]
    assert [d.term for d in result.dice] == [0, 1]
    assert result.counts_successes is False
    assert n.roll("-2+1d6", FixedDice([3])).total == 1


def test_keep_highest_three_of_four():
    result = n.roll("4d6kh3", FixedDice([6, 4, 1, 3]))
    assert result.total == 13
    assert [d.kept for d in result.dice] == [True, True, False, True]
    assert result.detail() == "4d6kh3: [6, 4, (1), 3] = 13"
    assert n.roll("4d6dl1", FixedDice([6, 4, 1, 3])).total == 13


def test_keep_lowest_and_drop_highest():
    assert n.roll("2d20kl1", FixedDice([15, 7])).total == 7
    assert n.roll("4d6dh1", FixedDice([6, 4, 1, 3])).total == 8


def test_ties_keep_or_drop_the_earlier_die_first():
    assert [d.kept for d in n.roll("3d6kh2", FixedDice([5, 5, 5])).dice] == [True, True, False]
    assert [d.kept for d in n.roll("3d6dl1", FixedDice([2, 2, 6])).dice] == [False, True, True]


def test_exploding_dice_are_drawn_after_the_written_ones_in_the_roll_logs_order():
    # rollog v1.1 §3.4b: written dice [10, 5, 10]; die 0 explodes into die 3
    # (10), die 2 into die 4 (1), die 3 into die 5 (2).
    result = n.roll("3d10!", FixedDice([10, 5, 10, 10, 1, 2]))
    assert flags(result) == [
        (10, True, True, False),
        (5, True, False, False),
        (10, True, True, False),
        (10, True, True, True),
        (1, True, False, True),
        (2, True, False, True),
    ]
    assert result.total == 38
    assert result.truncated is False
    assert result.detail() == "3d10!: [10!, 5, 10!, 10!, 1, 2] = 38"


def test_explosion_order_matches_vector_t10b():
    # T10b: 2d6!+1d8 drawn as [6, 5, 8, 6, 6, 2]; the d8's 8 does not explode.
    result = n.roll("2d6!+1d8", FixedDice([6, 5, 8, 6, 6, 2]))
    assert [(d.value, d.term) for d in result.dice] == [(6, 0), (5, 0), (8, 1), (6, 0), (6, 0), (2, 0)]
    assert result.total == 33


def test_keep_applies_to_explosion_dice_too():
    result = n.roll("2d6!kh1", FixedDice([6, 3, 2]))
    assert [(d.value, d.kept) for d in result.dice] == [(6, True), (3, False), (2, False)]
    assert result.total == 6


def test_success_counting():
    result = n.roll("6d6>=5", FixedDice([1, 5, 6, 2, 3, 5]))
    assert result.total == 3
    assert result.counts_successes is True
    assert [d.success for d in result.dice] == [False, True, True, False, False, True]
    assert n.roll("6d6>=5+1", FixedDice([1, 5, 6, 2, 3, 5])).total == 4
    assert n.roll("3d10<3", FixedDice([1, 3, 2])).total == 2
    assert n.roll("3d10=10", FixedDice([10, 3, 10])).total == 2
    # Only kept dice count.
    assert n.roll("4d6kh2>=5", FixedDice([6, 5, 5, 1])).total == 2


def test_explosions_stop_at_one_hundred_dice():
    result = n.roll("99d6!", AlwaysMax())
    assert len(result.dice) == 100
    assert result.truncated is True
    assert result.dice[99].from_explosion is True and result.dice[98].from_explosion is False
    assert result.detail().endswith("(explosiones cortadas en 100 dados)")
    # Written dice are never cut: explosions only use what the limit leaves.
    result = n.roll("50d2!+50d2", AlwaysMax())
    assert len(result.dice) == 100 and result.truncated is True
    assert result.total == 200


def test_a_source_outside_the_faces_is_refused():
    with pytest.raises(ValueError, match="Un d6 no puede sacar 7"):
        n.roll("2d6", FixedDice([7, 1]))


# --- Errors, in Spanish, with their position --------------------------------


@pytest.mark.parametrize(
    "text,position,message",
    [
        ("", 1, "se esperaba un número o una tirada (p. ej. 2d6)"),
        ("2d6+x", 5, "se esperaba un número o una tirada (p. ej. 2d6)"),
        ("2d", 3, "se esperaba el número de caras"),
        ("4d6kh", 6, "se esperaba un número"),
        ("2d6 3", 5, "se esperaba «+» o «-» y no «3»"),
        ("2d6*2", 4, "se esperaba «+» o «-» y no «*»"),
        ("1d1", 3, "un dado debe tener entre 2 y 1000 caras, no 1"),
        ("1d1001", 3, "un dado debe tener entre 2 y 1000 caras, no 1001"),
        ("0d6", 1, "hay que tirar al menos un dado"),
        ("101d6", 1, "no se pueden tirar más de 100 dados"),
        ("60d6+41d6", 6, "no se pueden tirar más de 100 dados"),
        ("4d6kh5", 6, "se pueden conservar de 1 a 4 dados"),
        ("3d6dl3", 6, "se pueden descartar de 1 a 2 dados"),
        ("1d6dl1", 6, "no se puede descartar el único dado"),
        ("1d6>=7", 6, "el umbral debe estar entre 1 y 6"),
        ("2d6>=5+1d6", 8, "no se pueden mezclar sumas de dados con recuentos de éxitos"),
        ("2000000", 1, "una constante no puede pasar de 1000000"),
        ("123456789", 1, "el número es demasiado grande"),
        ("--2", 2, "se esperaba un número o una tirada (p. ej. 2d6)"),
        ("x" * 101, 101, "la tirada tiene 101 caracteres y el máximo es 100"),
    ],
)
def test_bad_input_says_what_and_where_in_spanish(text, position, message):
    with pytest.raises(n.NotationError) as caught:
        n.parse(text)
    assert caught.value.position == position
    assert str(caught.value) == f"posición {position}: {message}"
    assert isinstance(caught.value, ValueError)


def test_limits_are_inclusive():
    assert n.parse("100d6").dice_count == 100
    assert n.parse("2d1000").faces() == (1000, 1000)
    assert len(n.parse("1+" * 49 + "10").terms) == 50  # exactly 100 characters


@settings(deadline=None, max_examples=100)
@given(st.text(max_size=110))
def test_any_text_parses_or_raises_a_notation_error(text):
    try:
        expr = n.parse(text)
    except n.NotationError as error:
        assert 1 <= error.position <= 101
        assert str(error).startswith(f"posición {error.position}: ")
    else:
        assert n.parse(expr.canonical()) == expr


@settings(deadline=None, max_examples=100)
@given(st.text(alphabet="0123456789dDkhl!<>=+- ", max_size=40))
def test_dice_like_text_parses_or_raises_a_notation_error(text):
    try:
        expr = n.parse(text)
    except n.NotationError:
        return
    assert n.parse(expr.canonical()) == expr


# --- Properties ------------------------------------------------------------------


@st.composite
def expressions(draw):
    counting = draw(st.booleans())
    terms = []
    for _ in range(draw(st.integers(1, 5))):
        sign = draw(st.sampled_from([1, -1]))
        if draw(st.booleans()):
            terms.append(n.Constant(draw(st.integers(0, n.MAX_CONSTANT)), sign))
            continue
        count = draw(st.integers(1, 10))
        faces = draw(st.integers(2, 1000))
        keep = draw(st.none() | st.sampled_from(list(n.KeepMode)))
        if keep is None:
            keep_count = 0
        elif keep in (n.KeepMode.KEEP_HIGHEST, n.KeepMode.KEEP_LOWEST):
            keep_count = draw(st.integers(1, count))
        elif count == 1:
            keep, keep_count = None, 0
        else:
            keep_count = draw(st.integers(1, count - 1))
        compare = draw(st.sampled_from(list(n.Comparison))) if counting else None
        target = draw(st.integers(1, faces)) if counting else 0
        terms.append(n.Dice(count, faces, sign, draw(st.booleans()), keep, keep_count, compare, target))
    return n.Expression(tuple(terms))


@settings(deadline=None, max_examples=50)
@given(expressions())
def test_parse_of_canonical_round_trips(expr):
    assert n.parse(expr.canonical()) == expr


@settings(deadline=None, max_examples=50)
@given(expressions(), st.randoms(use_true_random=False))
def test_evaluation_keeps_every_die_and_respects_the_limits(expr, rng):
    result = n.evaluate(expr, RandomDice(rng))
    assert len(result.dice) <= n.MAX_DICE
    assert sum(1 for d in result.dice if not d.from_explosion) == expr.dice_count
    for index, term in enumerate(expr.terms):
        if isinstance(term, n.Constant):
            continue
        dice = [d for d in result.dice if d.term == index]
        assert all(1 <= d.value <= term.faces for d in dice)
        kept = sum(d.kept for d in dice)
        match term.keep:
            case None:
                assert kept == len(dice)
            case n.KeepMode.KEEP_HIGHEST | n.KeepMode.KEEP_LOWEST:
                assert kept == term.keep_count
            case _:
                assert kept == len(dice) - term.keep_count
    if not expr.explodes:
        assert tuple(d.faces for d in result.dice) == expr.faces()
