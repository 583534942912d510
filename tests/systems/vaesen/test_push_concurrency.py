"""Two pushes of the same failed Vaesen test at once (issue 15, item 3): exactly
one re-roll and one condition (V6, V7). Each thread has its own connection,
as separate web workers would."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError
from django.db import connection

from campaigns.models import Post
from rolls.models import RollEntry
from sheets.models import SheetEvent
from systems.vaesen.rolls import services
from tests.conftest import in_threads
from tests.factories import client_seed, make_post, make_scene

pytestmark = [
    pytest.mark.skipif(
        connection.vendor != "postgresql", reason="needs PostgreSQL row locks (SQLite has one writer at a time)"
    ),
    pytest.mark.django_db(transaction=True),
]

THREADS = 2
TRIES = 40


def test_two_pushes_of_one_roll_make_one_reroll_and_one_condition(vaesen_world):
    world = vaesen_world
    scene = make_scene(world.campaign)
    post = make_post(scene, world.player, voice=Post.Voice.CHARACTER, character=world.pc)
    setup = services.pool_setup(world.pc, attribute="físico", skill="Agilidad", needed=10)
    for _ in range(TRIES):
        table_roll = services.table_test(
            campaign=world.campaign,
            user=world.player,
            setup=setup,
            purpose="Saltar",
            character=world.pc,
            scene=scene,
            post=post,
            client_seed=client_seed(),
        )
        if table_roll.facts["can_push"]:
            break
    entries_before = RollEntry.objects.count()
    # Each thread chooses a different condition: only one of them is marked.
    choices = ["Exhausto", "Herido"]

    def work(n: int):
        return services.push(table_roll=table_roll, user=world.player, condition=choices[n])

    results, errors = in_threads(THREADS, work)
    assert len(results) == 1, errors
    assert len(errors) == 1 and isinstance(errors[0], ValidationError), errors
    assert "ya se forzó" in " ".join(errors[0].messages)
    assert RollEntry.objects.count() == entries_before + 1
    assert RollEntry.objects.filter(kind=RollEntry.Kind.REROLL, parent=table_roll.first).count() == 1
    world.pc.vaesen.refresh_from_db()
    assert len(world.pc.vaesen.physical_conditions) == 1
    assert SheetEvent.objects.filter(character=world.pc).count() == 1
    table_roll.refresh_from_db()
    assert table_roll.latest_id == results[0].pk
