from dataclasses import dataclass

import pytest
from django.test import Client

from campaigns.models import Campaign, Membership, Role
from rules.dice import FixedDice
from rules.hitos import check, roll_3d10
from sheets import services
from sheets.models import Character
from tests.factories import CampaignFactory, UserFactory
from tests.sheets.factories import CharacterFactory


@dataclass
class World:
    campaign: Campaign
    gm: object
    player: object
    other: object
    reader: object
    outsider: object
    sheet: Character

    def client(self, who: str) -> Client:
        client = Client()
        if who != "anonymous":
            client.force_login(getattr(self, who))
        return client


@pytest.fixture
def world(db) -> World:
    gm = UserFactory()
    campaign = CampaignFactory(gm=gm, title="La cripta")
    player, other, reader, outsider = UserFactory(), UserFactory(), UserFactory(), UserFactory()
    Membership.objects.create(campaign=campaign, user=player, role=Role.PLAYER)
    Membership.objects.create(campaign=campaign, user=other, role=Role.PLAYER)
    Membership.objects.create(campaign=campaign, user=reader, role=Role.READER)
    sheet = CharacterFactory(campaign=campaign, owner=player, name="Inés")
    return World(campaign, gm, player, other, reader, outsider, sheet)


@dataclass
class FakeEntry:
    pk: int
    dice: list
    purpose: str
    permalink: str = "abc123"

    def get_absolute_url(self) -> str:
        return f"/tiradas/{self.permalink}/"


class FakeRolls:
    """Stands in for rolls.services.hitos_check_roll with chosen dice."""

    def __init__(self, *dice_sets):
        self.dice_sets = list(dice_sets)
        self.calls = []

    def __call__(self, *, campaign, user, purpose, modifier, difficulty, **kwargs):
        dice = self.dice_sets.pop(0)
        result = check(roll_3d10(FixedDice(dice)), modifier, difficulty)
        self.calls.append({"purpose": purpose, "modifier": modifier, "difficulty": difficulty, **kwargs})
        return FakeEntry(len(self.calls), list(dice), purpose), result


@pytest.fixture
def fake_rolls(monkeypatch):
    def install(*dice_sets) -> FakeRolls:
        fake = FakeRolls(*dice_sets)
        monkeypatch.setattr(services, "_roll", fake)
        return fake

    return install
