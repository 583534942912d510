"""The same activation form sent several times at once (a double click, a
retried request): the browser seed is the idempotency key (rollog/v1 §3.3),
so every copy answers with the one activation the first made, and the point
is paid once (issue 18, item 1). Each thread has its own connection, as
separate web workers would."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from campaigns.models import Deadline
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

COPIES = 6


def _roll(play):
    return table_check(
        campaign=play.campaign,
        user=play.ana,
        setup=check_setup(play.ines, characteristic="reflejos", skill="Sigilo"),
        purpose="Correr",
        difficulty=15,
        character=play.ines,
        scene=play.scene,
        post=play.post,
        client_seed=client_seed(),
    )


def _counts() -> tuple[int, int, int]:
    return (
        RollEntry.objects.filter(kind=RollEntry.Kind.REROLL).count(),
        SheetEvent.objects.filter(kind=HitosEvent.DRAMA).count(),
        Activation.objects.count(),
    )


def test_copies_of_a_positive_activation_pay_once():
    play = make_world()
    roll = _roll(play)
    seed = client_seed()

    def work(_n: int):
        return activations.activate_positive(
            table_roll=roll,
            user=play.ana,
            aspect_choice=f"s{play.scene_aspect.pk}",
            positions=[0, 1, 2],
            payment="point",
            client_seed=seed,
        )

    results, errors = in_threads(COPIES, work)
    assert errors == []
    assert len({activation.pk for activation in results}) == 1
    assert _counts() == (1, 1, 1)
    play.ines.refresh_from_db()
    assert play.ines.hitos.drama_points == 2
    assert RollEntry.objects.get(kind=RollEntry.Kind.REROLL).client_seed == seed


def test_copies_of_an_acceptance_reroll_once():
    play = make_world()
    activation = activations.activate_negative(
        table_roll=_roll(play), user=play.gm, aspect_choice=f"a{play.ines_aspect.pk}", positions=[0]
    )
    before = _counts()
    seed = client_seed()

    def work(_n: int):
        return activations.answer_negative(activation=activation, user=play.ana, accept=True, client_seed=seed)

    results, errors = in_threads(COPIES, work)
    assert errors == []
    assert {a.pk for a in results} == {activation.pk}
    assert _counts() == (before[0] + 1, before[1] + 1, before[2])
    play.ines.refresh_from_db()
    assert play.ines.hitos.drama_points == 4


def test_copies_of_the_directions_settling_reroll_once(monkeypatch):
    play = make_world()
    activation = activations.activate_negative(
        table_roll=_roll(play), user=play.gm, aspect_choice=f"a{play.ines_aspect.pk}", positions=[0]
    )
    later = timezone.now() + timedelta(hours=49)
    monkeypatch.setattr(timezone, "now", lambda: later)
    before = _counts()
    seed = client_seed()

    def work(_n: int):
        return activations.settle_negative(activation=activation, user=play.gm, client_seed=seed)

    results, errors = in_threads(COPIES, work)
    assert errors == []
    assert {a.pk for a in results} == {activation.pk}
    assert all(a.status == Activation.Status.ACCEPTED for a in results)
    assert _counts() == (before[0] + 1, before[1] + 1, before[2])
    assert Deadline.objects.get().settled_by == play.gm
