from dataclasses import dataclass

import pytest
from django.test import Client

from campaigns.models import Campaign, Membership, Role
from rolls import rollog
from rolls.models import RollEntry
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


class LoggedRolls:
    """The campaign's real roll log, with chosen dice: each 3d10 the sheet
    rolls (``sheets.services._roll``) draws the next dice set given, is
    signed and appended as usual, and its arguments and entry are kept."""

    def __init__(self, monkeypatch, dice_sets):
        self.queue = [list(d) for d in dice_sets]
        self.calls: list[dict] = []
        self.entries: list[RollEntry] = []
        drawn: dict[str, list[int]] = {}
        real_draw, real_roll = rollog.dice_for_spec, services._roll

        def draw(seed, message, spec):
            # The entry builder draws again to sign: the same roll gets the same dice.
            if message not in drawn:
                drawn[message] = self.queue.pop(0) if self.queue and spec == "3d10" else real_draw(seed, message, spec)
            return list(drawn[message])

        def roll(**kwargs):
            entry, result = real_roll(**kwargs)
            self.calls.append({k: v for k, v in kwargs.items() if k not in ("campaign", "user")})
            self.entries.append(entry)
            return entry, result

        monkeypatch.setattr(rollog, "dice_for_spec", draw)
        monkeypatch.setattr(services, "_roll", roll)


@pytest.fixture
def fake_rolls(monkeypatch):
    """``fake_rolls([6, 7, 8], …)``: the next 3d10 of the real log are these."""

    def install(*dice_sets) -> LoggedRolls:
        return LoggedRolls(monkeypatch, dice_sets)

    return install
