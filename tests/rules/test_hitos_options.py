"""Campaign options for HITOS: defaults, validation and JSON round trip."""

import json

import pytest

from rules.hitos_options import DEFAULT_OPTIONS, HitosOptions


def test_defaults_are_the_spec_engine_defaults():
    assert DEFAULT_OPTIONS.to_dict() == {
        "strict_success": False,  # K1
        "unprepared_penalty": 2,  # K2
        "stabilise_difficulty": 12,  # K3
        "critical_damage": "weapon_dice",  # K4
        "initiative_ties": "score_then_reroll",  # K5
        "npc_drama": "gm_pool",  # K6
        "permanent_secuela": "always",  # K8
        "healing_fumble_marks": "crosses",  # K9
        "rounding": "floor",  # K10
        "alterado_boundary": "at_least",  # K11
        "negative_double_one_fumbles": True,  # H21
        "damage_ladder": ["m", "C", "M", "mM", "CM", "mCM"],  # §4.2
    }


def test_round_trip_through_json():
    options = HitosOptions(strict_success=True, unprepared_penalty=3, damage_ladder=("m", "C", "M", "mC", "mCM"))
    restored = HitosOptions.from_dict(json.loads(json.dumps(options.to_dict())))
    assert restored == options
    assert restored.damage_ladder == ("m", "C", "M", "mC", "mCM")


def test_missing_keys_take_defaults():
    assert HitosOptions.from_dict({"strict_success": True}) == HitosOptions(strict_success=True)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"unprepared_penalty": 4}, "Valor no válido para unprepared_penalty: 4"),
        ({"critical_damage": "double"}, "Valor no válido para critical_damage"),
        ({"strict_success": "yes"}, "strict_success debe ser verdadero o falso"),
        ({"colour": "red"}, "Opciones de HITOS desconocidas: colour"),
        ({"damage_ladder": ["m", "X"]}, "Código de daño desconocido"),
        ({"damage_ladder": []}, "escala de daño"),
        ({"damage_ladder": ["m", "m"]}, "no puede repetir"),
    ],
)
def test_bad_options_are_clear_errors(data, message):
    with pytest.raises(ValueError, match=message):
        HitosOptions.from_dict(data)
