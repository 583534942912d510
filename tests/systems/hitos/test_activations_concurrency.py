"""Twenty simultaneous activations on a character with one drama point: exactly
one spends it (issue 7, item 13). Each thread has its own connection, as
separate web workers would."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError
from django.db import connection

from rolls.models import RollEntry
from sheets.models import SheetEvent
from systems.hitos.activations import services as activations
from systems.hitos.checks.services import check_setup, table_check
from systems.hitos.models import Activation, HitosEvent
from tests.conftest import in_threads, make_world
from tests.factories import client_seed

pytestmark = [
    pytest.mark.skipif(connection.vendor != "postgresql", reason="needs PostgreSQL row locks"),
    pytest.mark.django_db(transaction=True),
]

THREADS = 20


@pytest.mark.parametrize("same_roll", [True, False], ids=["one roll", "twenty rolls"])
def test_twenty_activations_spend_the_last_point_once(same_roll):
    play = make_world()
    play.ines.hitos.drama_points = 1
    play.ines.hitos.save(update_fields=["drama_points"])
    setup = check_setup(play.ines, characteristic="reflejos", skill="Sigilo")
    count = 1 if same_roll else THREADS
    rolls = [
        table_check(
            campaign=play.campaign,
            user=play.ana,
            setup=setup,
            purpose="Correr",
            difficulty=15,
            character=play.ines,
            scene=play.scene,
            post=play.post,
            client_seed=client_seed(),
        )
        for _ in range(count)
    ]
    entries_before = RollEntry.objects.count()

    def work(n: int):
        return activations.activate_positive(
            table_roll=rolls[n % count],
            user=play.ana,
            aspect_choice=f"s{play.scene_aspect.pk}",
            positions=[0, 1, 2],
            payment="point",
        )

    results, errors = in_threads(THREADS, work)
    assert len(results) == 1
    assert len(errors) == THREADS - 1
    assert all(isinstance(e, ValidationError) for e in errors), errors
    play.ines.refresh_from_db()
    assert play.ines.hitos.drama_points == 0
    assert Activation.objects.count() == 1
    assert RollEntry.objects.count() == entries_before + 1
    assert RollEntry.objects.filter(kind=RollEntry.Kind.REROLL).count() == 1
    assert SheetEvent.objects.filter(character=play.ines, kind=HitosEvent.DRAMA).count() == 1
