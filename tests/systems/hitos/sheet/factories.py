"""The sheet tests' factories: the shared ones of tests/factories.py, which
already have the defaults these tests count on (an approved character with
Aguante 5, Resistencia 15, Entereza 6, Estabilidad 18 and 5 drama points;
Pelea 4; a hito)."""

from tests.factories import AspectFactory, CharacterFactory, SkillFactory

__all__ = ["AspectFactory", "CharacterFactory", "SkillFactory"]
