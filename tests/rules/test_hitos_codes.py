"""Damage codes above mCM (H51): how many extra d10s a code reads, how an
extended pool is read, and what the damage comes to."""

from __future__ import annotations

import pytest

from rules import hitos
from rules.hitos_codes import (
    MAX_EXTRA_DICE,
    DamageCode,
    code_value,
    extra_dice_spec,
    parse_damage_code,
    shift_code,
    split_pool,
)
from rules.hitos_combat import attack_damage
from rules.hitos_options import DEFAULT_DAMAGE_LADDER


def test_the_extra_dice_of_a_code_are_a_pool_of_d10s():
    assert extra_dice_spec("mCM+1d10") == "1d10"
    assert extra_dice_spec("mCM+2d") == "2d10"
    assert extra_dice_spec(shift_code("CM", 3, DEFAULT_DAMAGE_LADDER)) == "2d10"
    for code in ("m", "mCM", "0", "3"):
        assert extra_dice_spec(code) == ""


def test_an_extended_pool_reads_the_roll_first_and_the_extra_dice_after_it():
    assert split_pool("mCM+2d10", [9, 3, 7, 4, 10]) == ((9, 3, 7), (4, 10))
    assert split_pool("M", [9, 3, 7]) == ((9, 3, 7), ())
    with pytest.raises(ValueError, match="se lee de 5 dados"):
        split_pool("mCM+2d10", [9, 3, 7, 4])
    with pytest.raises(ValueError, match="se lee de 3 dados"):
        split_pool("mCM", [9, 3, 7, 4])


def test_the_damage_of_a_code_above_mcm_is_mcm_plus_the_extra_dice():
    # H51 — «partir del daño mCM de la tirada correspondiente y añadir tantos dados adicionales de daño directo».
    base, extra = split_pool("mCM+2d10", [9, 3, 7, 4, 10])
    assert code_value("mCM+2d10", *sorted(base), extra) == 3 + 7 + 9 + 4 + 10
    result = attack_damage(hitos.HitosRoll(base), "mCM+2d10", bonus=2, rd=3, extra_dice=extra)
    assert (result.dice_damage, result.multiplier, result.total) == (33, 1, 32)


def test_a_critical_multiplies_the_extra_dice_with_the_rest_of_the_weapon_dice():
    # H47 with K4's default: the dice (extra dice included) ×2, then the bonus.
    result = attack_damage(hitos.HitosRoll((10, 4, 10)), "mCM+1d10", bonus=2, extra_dice=[6])
    assert (result.dice_damage, result.multiplier, result.total) == (30, 2, 62)


def test_the_damage_needs_exactly_the_extra_dice_the_code_names():
    with pytest.raises(ValueError, match="necesita 1 dados adicionales, no 0"):
        code_value("mCM+1d10", 1, 2, 3)
    with pytest.raises(ValueError, match="entre 1 y 10"):
        code_value("mCM+1d10", 1, 2, 3, [11])


def test_codes_above_mcm_parse_with_ascii_digits_and_a_bounded_count():
    assert parse_damage_code("mCM+ 3d10") == DamageCode("mCM", 3)
    assert parse_damage_code(f"mCM+{MAX_EXTRA_DICE}d10").extra_dice == MAX_EXTRA_DICE
    # A superscript or Arabic-Indic digit is a digit to str.isdigit, not a count.
    for bad in ("mCM+²d10", "mCM+٣d10", "mCM+0d10", "mCM+-1d10"):
        with pytest.raises(ValueError, match="Código de daño desconocido"):
            parse_damage_code(bad)
    # 3d10 and the extra dice stay within the 100 dice of a logged roll.
    assert 3 + MAX_EXTRA_DICE == 100
    with pytest.raises(ValueError, match="Demasiados dados adicionales"):
        parse_damage_code(f"mCM+{MAX_EXTRA_DICE + 1}d10")
