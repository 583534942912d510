"""The small readings Vaesen combat in posts adds to rules.vaesen (V17–V25)."""

from __future__ import annotations

import pytest

from rules import vaesen


@pytest.mark.parametrize(
    ("slow_used", "fast_used", "slow", "allowed"),
    [
        (0, 0, True, True),
        (0, 0, False, True),
        (1, 0, False, True),  # one slow and one fast
        (1, 0, True, False),  # never two slow
        (0, 1, True, True),  # a reaction first, then the slow action
        (0, 2, True, False),  # two fast: nothing left
        (0, 1, False, True),  # two fast
        (1, 1, False, False),
    ],
)
def test_v18_one_slow_and_one_fast_or_two_fast(slow_used, fast_used, slow, allowed):
    assert vaesen.may_take_action(slow_used, fast_used, slow=slow) is allowed


def test_v18_counts_are_natural_numbers():
    with pytest.raises(ValueError, match="acciones lentas"):
        vaesen.may_take_action(-1, 0, slow=True)


def test_v17_v25_initiative_keeps_the_best_d10():
    assert vaesen.initiative_kept([7]) == 7
    assert vaesen.initiative_kept([3, 9]) == 9
    with pytest.raises(ValueError):
        vaesen.initiative_kept([11])
    with pytest.raises(ValueError):
        vaesen.initiative_kept([])


def test_v17_q18_groups_highest_first_ties_together_in_the_given_order():
    values = {"Elsa": 7, "Olof": 9, "Näcken": 7, "Molinero": 2}
    assert vaesen.initiative_groups(values) == [["Olof"], ["Elsa", "Näcken"], ["Molinero"]]
    assert vaesen.initiative_groups({}) == []


@pytest.mark.parametrize(
    ("sigilo", "vigilancia", "outcome"),
    [
        (1, 0, (True, 0)),
        (3, 1, (True, 1)),  # beats the watch with one, one extra: +1 on the first action
        (4, 0, (True, 3)),
        (1, 1, (False, 0)),  # a tie does not get past the watch
        (0, 2, (False, 0)),
    ],
)
def test_v25_ambush_sigilo_against_vigilancia(sigilo, vigilancia, outcome):
    assert vaesen.ambush_outcome(sigilo, vigilancia) == outcome


def test_v19_v21_one_success_left_after_the_reaction_hits():
    assert vaesen.attack_lands(1)
    assert not vaesen.attack_lands(0)
    assert vaesen.attack_lands(3, 2)
    assert not vaesen.attack_lands(2, 2)
    assert not vaesen.attack_lands(1, 4)


def test_v23_silencing_costs_one_more_success():
    assert not vaesen.grapple_silences(1)
    assert vaesen.grapple_silences(2)
    assert not vaesen.grapple_silences(3, 2)


def test_v24_the_enemy_removes_successes_from_the_flight():
    assert vaesen.flees(1)
    assert not vaesen.flees(0)
    assert vaesen.flees(2, 1)
    assert not vaesen.flees(2, 2)
