"""The same import review sent twice at once (a double click): the upload's
row lock queues the copies, so one campaign is made and the other copy goes
to it (issue 29, item 1, review point 5). Each thread has its own
connection, as separate web workers would."""

from __future__ import annotations

import json

import pytest
from django.db import connection
from django.urls import reverse

from campaigns import archive
from campaigns.models import Campaign
from systems.hitos.models import Aspect
from tests.campaigns.test_archive import _export
from tests.conftest import client_for, in_threads, make_world
from tests.factories import AspectFactory

pytestmark = [
    pytest.mark.skipif(connection.vendor != "postgresql", reason="needs PostgreSQL row locks"),
    pytest.mark.django_db(transaction=True),
]


def test_two_imports_of_one_review_at_once_make_one_campaign():
    world = make_world()
    for character in (world.ines, world.tomas):
        AspectFactory(character=character, kind=Aspect.Kind.CONCEPT, phrase="Un concepto")
    exported = _export(world.gm, world.campaign)
    upload = archive.upload_keep(world.gm, json.dumps(exported).encode(), exported)
    review = reverse("campaigns:campaign-import-review", args=[upload.pk])

    def work(_n: int):
        return client_for(world.gm).post(review, {"visibility": "private"})

    results, errors = in_threads(2, work)
    assert errors == []
    made = Campaign.objects.exclude(pk=world.campaign.pk).get()
    assert [response.url for response in results] == [made.get_absolute_url()] * 2
