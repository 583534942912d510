"""The drama page lists recent drama point moves to every member; a move
paid for an activation on a sealed roll (one in a whisper to the direction)
quotes the roll's purpose in its reason. A member who cannot read that roll
reads «una tirada privada» instead (``rolls.permissions.readable_ids``, one
query for the whole list); who can read it sees the purpose."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from sheets.models import SheetEvent
from systems.hitos.models import HitosEvent
from tests.conftest import make_world
from tests.factories import roll

pytestmark = pytest.mark.django_db

PURPOSE = "Robar la llave del sótano"


@pytest.fixture
def sealed():
    world = make_world(whisper=True)
    entry = roll(world, user=world.ana, purpose=PURPOSE, post=world.whisper, character=world.ines)
    assert entry.is_sealed
    SheetEvent.objects.create(
        campaign=world.campaign,
        character=world.ines,
        actor=world.ana,
        kind=HitosEvent.DRAMA,
        summary="Drama: 3 → 2",
        reason=f"activa «Ágil como una gata» a favor de «{PURPOSE}»",
        post=world.whisper,
        roll=entry,
    )
    return world


def _page(world, who: str, **headers) -> str:
    response = world.client(who).get(reverse("hitos:drama", args=[world.campaign.slug]), headers=headers)
    assert response.status_code == 200
    return response.content.decode()


def test_a_member_who_cannot_read_the_sealed_roll_does_not_see_its_purpose(sealed):
    html = _page(sealed, "bruno")
    assert PURPOSE not in html
    assert "activa «Ágil como una gata» a favor de una tirada privada" in html
    assert PURPOSE not in _page(sealed, "bruno", **{"HX-Request": "true"})


def test_who_may_read_the_roll_sees_its_purpose(sealed):
    assert PURPOSE in _page(sealed, "ana")
    assert PURPOSE in _page(sealed, "gm")


def test_the_list_costs_one_query_more_however_many_sealed_moves(sealed, django_assert_max_num_queries):

    with CaptureQueriesContext(connection) as one:
        _page(sealed, "bruno")
    event = SheetEvent.objects.get(kind=HitosEvent.DRAMA)
    for _ in range(5):
        event.pk = None
        event.save()
    with django_assert_max_num_queries(len(one.captured_queries)):
        _page(sealed, "bruno")
