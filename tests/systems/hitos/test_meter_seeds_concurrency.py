"""The same meter form sent several times at once (a double click, a retried
request): the browser seed is the idempotency key (rollog/v1 §3.3), and the
sheet's row lock queues the copies, so every copy answers with the change the
first made: one mass-damage test, one line in the sheet's history, one
change to the meter (issue 18, item 1). Each thread has its own connection,
as separate web workers would."""

from __future__ import annotations

import pytest
from django.db import connection

from rolls.models import RollEntry
from sheets.models import SheetEvent
from systems.hitos.sheet import services
from table.models import TableRoll
from tests.conftest import in_threads, make_world
from tests.factories import client_seed

pytestmark = [
    pytest.mark.skipif(connection.vendor != "postgresql", reason="needs PostgreSQL row locks"),
    pytest.mark.django_db(transaction=True),
]

COPIES = 6


@pytest.mark.parametrize(("action", "amount", "rolls"), [("damage", 8, 1), ("damage", 2, 0)], ids=["test", "no test"])
def test_copies_of_a_meter_form_change_the_meter_once(action, amount, rolls):
    play = make_world()
    seed = client_seed()

    def work(_n: int):
        return services.meter_apply(
            character=play.ines,
            actor=play.gm,
            meter=services.HEALTH,
            action=action,
            amount=amount,
            client_seed=seed,
        )

    results, errors = in_threads(COPIES, work)
    assert errors == []
    assert len({change.event.pk for change in results}) == 1
    assert SheetEvent.objects.filter(character=play.ines).count() == 1
    assert RollEntry.objects.filter(campaign=play.campaign).rolls().count() == rolls
    assert TableRoll.objects.count() == rolls
    play.ines.refresh_from_db()
    # Aguante 7: eight points either pass the test (8 slashes) or slash all 21 boxes.
    assert play.ines.hitos.health_slashes in ({8, 21} if rolls else {2})
