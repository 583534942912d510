"""Fixtures for the roll log's model, service, view and command tests.

``table`` is a small campaign with its log open: a GM, two players, a reader
and an outsider, an open scene, a character and two posts (one to everyone,
one whispered to the GM). Rows are made with the ORM so that these tests do
not depend on how the campaign pages build them; the log opens through
``rolls.services.log_open``, as ``campaigns.services.campaign_create`` does.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import pytest
from django.conf import settings
from django.test import Client

from accounts.models import User
from campaigns.models import Campaign, Membership, Post, Role, Scene, Visibility
from rolls import services, verify_roll
from rolls.models import RollEntry
from sheets.models import Character
from tests.factories import CampaignFactory, UserFactory

_seeds = itertools.count(1)


def client_seed() -> str:
    """A fresh, valid browser seed (32 hex digits, as client-seed.js makes)."""
    return f"{next(_seeds):032x}"


def public_key():
    return verify_roll.parse_public_key(settings.ROLLOG_KEYS.public_key_hex)


def plain_read(dice: list[int]) -> dict:
    return {"system": "test", "sum": sum(dice)}


def roll(table: Table, *, user: User | None = None, spec: str = "3d10", purpose: str = "Tirada", **kwargs) -> RollEntry:
    kwargs.setdefault("client_seed", client_seed())
    kwargs.setdefault("scene", table.scene)
    return services.roll_append(
        campaign=table.campaign, user=user or table.player, spec=spec, purpose=purpose, read=plain_read, **kwargs
    )


def client_for(user: User | None) -> Client:
    client = Client()
    if user is not None:
        client.force_login(user)
    return client


@dataclass
class Table:
    campaign: Campaign
    scene: Scene
    gm: User
    player: User
    other: User
    reader: User
    outsider: User
    character: Character
    post: Post
    whisper: Post


def make_table(visibility: str = Visibility.PUBLIC) -> Table:
    gm = UserFactory(display_name="La Directora")
    campaign = CampaignFactory(title="La mansión", gm=gm, visibility=visibility)
    services.log_open(campaign=campaign)
    player = UserFactory(display_name="Ana")
    other = UserFactory(display_name="Bruno")
    reader = UserFactory(display_name="La Lectora")
    for user, role in ((player, Role.PLAYER), (other, Role.PLAYER), (reader, Role.READER)):
        Membership.objects.create(campaign=campaign, user=user, role=role)
    scene = Scene.objects.create(campaign=campaign, title="El vestíbulo")
    character = Character.objects.create(
        campaign=campaign, owner=player, name="Inés Salcedo", status=Character.Status.APPROVED
    )
    post = Post.objects.create(
        scene=scene, author=player, body="Abro la puerta del sótano.", body_html="<p>Abro la puerta del sótano.</p>"
    )
    whisper = Post.objects.create(
        scene=scene,
        author=player,
        body="Le susurro a la directora: robo la llave.",
        body_html="<p>Le susurro a la directora: robo la llave.</p>",
        recipients=Post.Recipients.GM,
    )
    outsider = UserFactory(display_name="Forastera")
    return Table(campaign, scene, gm, player, other, reader, outsider, character, post, whisper)


@pytest.fixture
def table(db) -> Table:
    return make_table(Visibility.PUBLIC)


@pytest.fixture
def private_table(db) -> Table:
    return make_table(Visibility.PRIVATE)


class Clock:
    """``timezone.now`` under the test's control (the log's times and created_at)."""

    def __init__(self, start: datetime):
        self.now = start

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta) -> None:
        self.now += timedelta(**delta)


@pytest.fixture
def clock(monkeypatch) -> Clock:
    fake = Clock(datetime(2031, 3, 14, 18, 0, 0, tzinfo=UTC))
    monkeypatch.setattr("django.utils.timezone.now", fake)
    return fake
