"""HITOS hazards and arcane arithmetic."""

import pytest

from rules.hitos import check, read_roll
from rules.hitos_hazards import (
    ARCANE_EFFECT_CODES,
    DEFAULT_FIRE_LEVELS,
    FIRE_LEVELS_VERIFIED,
    MEDICAL_SUPERVISION_DIFFICULTY,
    arcane_difficulty,
    asphyxia_difficulty,
    breath_turns,
    explosion_damage,
    fire_turn,
    poison_damage,
)
from rules.hitos_health import HealthState

PASS = check(read_roll([4, 6, 8]), 10, 15)
FAIL = check(read_roll([2, 3, 8]), 5, 15)
CRIT = check(read_roll([10, 10, 2]), 0, 15)
FUMBLE = check(read_roll([1, 1, 8]), 20, 15)


# H71 — «fácil si está sano, media si está herido o difícil si está incapacitado»
def test_h71_k13_medical_supervision_difficulty():
    assert MEDICAL_SUPERVISION_DIFFICULTY == {
        HealthState.SANO: 10,
        HealthState.HERIDO: 15,
        HealthState.INCAPACITADO: 20,
    }


# H73 — «El menor corresponde al daño que se recibe si se tiene éxito en la tirada de Resistencia»
def test_h73_poison():
    assert poison_damage(2, 8, PASS) == 2
    assert poison_damage(2, 8, FAIL) == 8
    with pytest.raises(ValueError, match="no puede superar"):
        poison_damage(9, 8, PASS)


# H74 — «tirada de Aguante a dificultad 10, con un +1 por cada tirada de este tipo después de la primera»
def test_h74_asphyxia():
    assert breath_turns(5) == 10
    assert breath_turns(5, deep_breath=True) == 20
    assert [asphyxia_difficulty(n) for n in (1, 2, 3)] == [10, 11, 12]
    with pytest.raises(ValueError):
        asphyxia_difficulty(0)


# H75 — «será como mucho el daño parcial»
def test_h75_explosions():
    assert explosion_damage(12, 5) == 12
    assert explosion_damage(12, 5, protected=True) == 5
    assert explosion_damage(12, 5, periphery=True) == 5


# H76 — «En caso de crítico, el fuego se extinguirá por completo, y en caso de pifia, el nivel de exposición aumentará al superior»
def test_h76_fire_turns():
    assert FIRE_LEVELS_VERIFIED is False
    assert [level.key for level in DEFAULT_FIRE_LEVELS] == ["menor", "media", "mayor"]
    assert fire_turn(2, PASS).code == "M" and fire_turn(2, PASS).next_level == 1
    assert fire_turn(0, PASS).next_level is None
    assert (fire_turn(1, FAIL).code, fire_turn(1, FAIL).next_level) == ("M", 1)
    assert fire_turn(1, CRIT).next_level is None
    assert fire_turn(1, FUMBLE).next_level == 2
    assert fire_turn(2, FAIL, extinguishing_aspect=True).next_level is None
    with pytest.raises(ValueError):
        fire_turn(3, PASS)


# H95 — «añade la Voluntad del objetivo a la dificultad de la prueba de la habilidad arcana»
def test_h95_resisting_an_arcane_skill():
    assert arcane_difficulty(15, 4) == 19
    assert arcane_difficulty(15) == 15


# H96 — «Provocar daño físico o desequilibrio mental igual al valor CM a una persona que esté a la vista, mCM en caso de que esté en contacto físico»
def test_h96_arcane_effect_codes():
    assert dict(ARCANE_EFFECT_CODES["menor"]) == {"a la vista": "m", "en contacto": "M"}
    assert dict(ARCANE_EFFECT_CODES["mayor"])["en contacto"] == "mCM"
    assert dict(ARCANE_EFFECT_CODES["intermedio"])["hasta diez a la vista"] == "C"
