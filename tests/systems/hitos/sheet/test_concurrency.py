"""Two damage applications at the same moment both land: the service locks the
sheet row (select_for_update), so the second waits for the first."""

import threading

import pytest
from django.db import connection, connections

from campaigns.models import Membership, Role
from sheets.models import Character, SheetEvent
from systems.hitos.sheet import services
from tests.factories import CampaignFactory, UserFactory
from tests.systems.hitos.sheet.factories import CharacterFactory

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(connection.vendor != "postgresql", reason="needs PostgreSQL row locks"),
]


def test_simultaneous_damage_applications_lose_no_mark():
    gm = UserFactory()
    campaign = CampaignFactory(gm=gm)
    player = UserFactory()
    Membership.objects.create(campaign=campaign, user=player, role=Role.PLAYER)
    sheet = CharacterFactory(campaign=campaign, owner=player)  # Aguante 5: 2 points need no test
    workers = 4
    barrier = threading.Barrier(workers)
    errors = []

    def apply() -> None:
        try:
            barrier.wait(timeout=10)
            services.meter_apply(character=sheet, actor=gm, meter=services.HEALTH, action="damage", amount=2)
        except Exception as exc:  # reported below, in the main thread
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=apply) for _ in range(workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert errors == []
    sheet = Character.objects.get(pk=sheet.pk)
    assert (sheet.hitos.health_slashes, sheet.hitos.health_crosses) == (8, 0)
    befores = sorted(e.before["slashes"] for e in SheetEvent.objects.filter(character=sheet))
    assert befores == [0, 2, 4, 6]
