"""The sheets' world and chosen dice.

``world`` is a campaign («La cripta») with its GM, two players, a reader, an
outsider and the player's approved sheet «Inés» (the shared factories'
defaults: no skills, no roll log opened yet). It is smaller than the table's
world (tests/conftest.py ``make_world``) on purpose: the sheet tests count on
a bare sheet. ``fake_rolls`` runs the real roll log with chosen dice.
"""

from dataclasses import dataclass

import pytest
from django.test import Client

from accounts.models import User
from campaigns.models import Campaign, Role
from rolls import rollog
from rolls.models import RollEntry
from sheets.models import Character
from systems.hitos.sheet import services
from tests.conftest import client_for
from tests.factories import CampaignFactory, CharacterFactory, UserFactory, add_member


@dataclass
class World:
    campaign: Campaign
    gm: User
    player: User
    other: User
    reader: User
    outsider: User
    sheet: Character

    def client(self, who: str) -> Client:
        """A test client logged in as ``who`` ("gm", "player", …; "anonymous": not logged in)."""
        return client_for(None if who == "anonymous" else getattr(self, who))


@pytest.fixture
def world(db) -> World:
    gm = UserFactory()
    campaign = CampaignFactory(gm=gm, title="La cripta")
    player = add_member(campaign, Role.PLAYER)
    other = add_member(campaign, Role.PLAYER)
    reader = add_member(campaign, Role.READER)
    outsider = UserFactory()
    sheet = CharacterFactory(campaign=campaign, owner=player, name="Inés")
    return World(campaign, gm, player, other, reader, outsider, sheet)


class LoggedRolls:
    """The campaign's real roll log, with chosen dice: each 3d10 the sheet
    rolls (``services.meter_check``) draws the next dice set given, is
    signed and appended as usual, and its arguments and entry are kept."""

    def __init__(self, monkeypatch, dice_sets):
        self.queue = [list(d) for d in dice_sets]
        self.calls: list[dict] = []
        self.entries: list[RollEntry] = []
        drawn: dict[str, list[int]] = {}
        real_draw, real_roll = rollog.dice_for_spec, services.meter_check

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
        monkeypatch.setattr(services, "meter_check", roll)


@pytest.fixture
def fake_rolls(monkeypatch):
    """``fake_rolls([6, 7, 8], …)``: the next 3d10 of the real log are these."""

    def install(*dice_sets) -> LoggedRolls:
        return LoggedRolls(monkeypatch, dice_sets)

    return install
