"""Concurrent steps of the chachi chain and hero point re-rolls (issue 16,
items 3, 4 and 6): two conversions of the same 6 make one extension (A5);
two re-rolls with one hero point left make one re-roll and one spend (A22),
the other refused in Spanish. Each thread has its own connection, as
separate web workers would."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError
from django.db import connection

from campaigns.models import Post
from rolls.models import RollEntry
from systems.aventuras.models import HeroMove
from systems.aventuras.rolls import services
from tests.conftest import in_threads
from tests.factories import client_seed, make_post

pytestmark = [
    pytest.mark.skipif(
        connection.vendor != "postgresql", reason="needs PostgreSQL row locks (SQLite has one writer at a time)"
    ),
    pytest.mark.django_db(transaction=True),
]

THREADS = 2
TRIES = 60


def _roll(world, *, want=lambda tr: True):
    for _ in range(TRIES):
        post = make_post(world.scene, world.player, voice=Post.Voice.CHARACTER, character=world.pc)
        table_roll = services.make_roll(
            campaign=world.campaign,
            user=world.player,
            setup=services.roll_setup(world.pc, attribute="majo", modifier=2),
            purpose="Saltar el foso",
            character=world.pc,
            scene=world.scene,
            post=post,
            client_seed=client_seed(),
        )
        if want(table_roll):
            return table_roll
    raise AssertionError("no roll as wanted")


def test_two_conversions_of_one_6_make_one_extension(aventuras_world):
    """A5 — the table roll's lock serialises them: one extends, the other is
    refused (the 6 is a 5 now), nothing else written."""
    world = aventuras_world
    # Two 6s: after one conversion the roll is still open (not final).
    table_roll = _roll(world, want=lambda tr: len(services.open_chachis(tr.facts)) >= 2)
    position = services.open_chachis(table_roll.facts)[0]
    before = RollEntry.objects.count()

    def work(_n):
        return services.convert(table_roll=table_roll, user=world.player, position=position, client_seed=client_seed())

    results, errors = in_threads(THREADS, work)
    assert len(results) == 1 and len(errors) == 1, errors
    assert isinstance(errors[0], ValidationError)
    assert errors[0].messages == ["Ese 6 ya se convirtió en un 5."]
    assert RollEntry.objects.count() == before + 1
    assert RollEntry.objects.filter(kind=RollEntry.Kind.EXTEND).count() == 1


def test_two_rerolls_with_one_point_left_make_one_reroll(aventuras_world):
    """A22 — two rolls in different posts, one point left: the sheet's lock
    serialises the spends; one re-roll and one spend, the other refused."""
    world = aventuras_world
    first = _roll(world)
    second = _roll(world)
    sheet = world.pc.aventuras
    sheet.hero_points = 1
    sheet.experience = 0
    sheet.save()
    before = RollEntry.objects.count()
    rolls = [first, second]

    def work(n):
        return services.hero_reroll(table_roll=rolls[n], user=world.player, positions=[0], client_seed=client_seed())

    results, errors = in_threads(THREADS, work)
    assert len(results) == 1 and len(errors) == 1, errors
    assert isinstance(errors[0], ValidationError)
    assert errors[0].messages == ["Palomita no tiene puntos de Héroe que gastar."]
    assert RollEntry.objects.count() == before + 1
    assert HeroMove.objects.count() == 1
    sheet.refresh_from_db()
    assert sheet.hero_points == 0
