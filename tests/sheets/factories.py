"""Sheet factories (tests/factories.py belongs to the campaigns feature)."""

import factory

from sheets.models import Aspect, Character, Skill
from tests.factories import CampaignFactory, UserFactory


class CharacterFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Character

    campaign = factory.SubFactory(CampaignFactory)
    owner = factory.SubFactory(UserFactory)
    name = factory.Sequence(lambda n: f"Personaje {n}")
    status = Character.Status.APPROVED
    # Aguante 5 (3 + 4 ÷ 2), Resistencia 15; Entereza 4 + 5 ÷ 2 = 6, Estabilidad 18.
    fortaleza = 3
    reflejos = 6
    voluntad = 4
    intelecto = 5
    drama = 5
    drama_points = 5


class SkillFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Skill

    character = factory.SubFactory(CharacterFactory)
    name = "Pelea"
    category = "combate"
    value = 4


class AspectFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Aspect

    character = factory.SubFactory(CharacterFactory)
    kind = Aspect.Kind.HITO
    phrase = factory.Sequence(lambda n: f"Hito {n}")
