"""Twenty simultaneous activations on a character with one drama point: exactly
one spends it (issue 7, item 13). Each thread has its own connection, as
separate web workers would."""

from __future__ import annotations

import threading

import pytest
from django.core.exceptions import ValidationError
from django.db import connection, connections

from rolls.models import RollEntry
from sheets.models import SheetEvent
from systems.hitos.activations import services as activations
from systems.hitos.checks.services import check_setup, table_check
from systems.hitos.models import Activation, HitosEvent
from tests.conftest import make_world
from tests.factories import client_seed

pytestmark = [
    pytest.mark.skipif(connection.vendor != "postgresql", reason="needs PostgreSQL row locks"),
    pytest.mark.django_db(transaction=True),
]

THREADS = 20


def _in_threads(count: int, work) -> tuple[list[object], list[BaseException]]:
    barrier = threading.Barrier(count)
    results: list[object] = []
    errors: list[BaseException] = []

    def run(n: int) -> None:
        try:
            barrier.wait(timeout=30)
            results.append(work(n))
        except BaseException as exc:  # noqa: BLE001 - counted by the test
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run, args=(n,)) for n in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not any(thread.is_alive() for thread in threads)
    return results, errors


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

    results, errors = _in_threads(THREADS, work)
    assert len(results) == 1
    assert len(errors) == THREADS - 1
    assert all(isinstance(e, ValidationError) for e in errors), errors
    play.ines.refresh_from_db()
    assert play.ines.hitos.drama_points == 0
    assert Activation.objects.count() == 1
    assert RollEntry.objects.count() == entries_before + 1
    assert RollEntry.objects.filter(kind=RollEntry.Kind.REROLL).count() == 1
    assert SheetEvent.objects.filter(character=play.ines, kind=HitosEvent.DRAMA).count() == 1
