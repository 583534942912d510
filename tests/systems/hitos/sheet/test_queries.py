"""Pages run a fixed number of queries however big the sheet or the campaign."""

import pytest
from django.urls import reverse

from systems.hitos.models import Aspect
from systems.hitos.sheet import services
from tests.factories import UserFactory
from tests.systems.hitos.sheet.factories import CharacterFactory, SkillFactory

pytestmark = pytest.mark.django_db


def _grow(world, n):
    for i in range(n):
        SkillFactory(character=world.sheet, name=f"Habilidad {i}")
        Aspect.objects.create(character=world.sheet, kind="hito", phrase=f"Hito {i}", position=i)
        services.meter_apply(character=world.sheet, actor=world.gm, meter=services.HEALTH, action="heal", amount=0)


@pytest.mark.parametrize("n", [1, 8])
def test_sheet_page_query_count_is_constant(world, django_assert_max_num_queries, n):
    _grow(world, n)
    client = world.client("gm")
    # session, user, campaign with its sheet options, character, skills, weapons,
    # aspects, open scenes' situation aspects, unread notifications.
    with django_assert_max_num_queries(9):
        response = client.get(world.sheet.get_absolute_url())
    assert response.status_code == 200
    with django_assert_max_num_queries(8):
        partial = client.get(world.sheet.get_absolute_url(), headers={"HX-Request": "true"})
    assert partial.text.lstrip().startswith('<section id="sheet-meters"')


@pytest.mark.parametrize("n", [1, 8])
def test_sheet_list_query_count_is_constant(world, django_assert_max_num_queries, n):
    for _ in range(n):
        character = CharacterFactory(campaign=world.campaign, owner=UserFactory())
        SkillFactory(character=character)
    client = world.client("gm")
    with django_assert_max_num_queries(8):
        response = client.get(reverse("sheets:sheet-list", args=[world.campaign.slug]))
    assert response.status_code == 200 and len(response.context["pcs"]) == n + 1
    with django_assert_max_num_queries(8):
        partial = client.get(reverse("sheets:sheet-list", args=[world.campaign.slug]), headers={"HX-Request": "true"})
    assert partial.text.lstrip().startswith('<div id="sheet-table">')


@pytest.mark.parametrize("n", [1, 8])
def test_history_query_count_is_constant(world, django_assert_max_num_queries, n):
    _grow(world, n)
    client = world.client("player")
    with django_assert_max_num_queries(11):
        response = client.get(reverse("sheets:sheet-history", args=[world.campaign.slug, world.sheet.pk]))
    assert len(response.context["page_obj"]) == n


@pytest.mark.parametrize("n", [1, 8])
def test_meter_action_query_count_is_constant(world, django_assert_max_num_queries, n):
    _grow(world, n)
    client = world.client("gm")
    url = reverse("hitos:meter-update", args=[world.campaign.slug, world.sheet.pk, "resistencia"])
    with django_assert_max_num_queries(18):
        response = client.post(
            url, {"resistencia-action": "damage", "resistencia-amount": "1"}, headers={"HX-Request": "true"}
        )
    assert response.status_code == 200
