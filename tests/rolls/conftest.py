"""Fixtures for the roll log's model, service, view and command tests.

``table`` is the world of tests/conftest.py (a campaign with its log open: a
GM, two players, a reader and an outsider, an open scene, the players'
characters) with a second post, whispered to the GM. The tests call its
player ``table.player``, the other player ``table.other`` and Ana's character
``table.character``. Rolls are appended with ``tests.factories.roll``.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.conf import settings

from campaigns.models import Visibility
from rolls import verify_roll
from tests.conftest import World, make_world


def public_key():
    return verify_roll.parse_public_key(settings.ROLLOG_KEYS.public_key_hex)


def make_table(visibility: str = Visibility.PUBLIC) -> World:
    return make_world(visibility, whisper=True)


@pytest.fixture
def table(db) -> World:
    return make_table(Visibility.PUBLIC)


@pytest.fixture
def private_table(db) -> World:
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
