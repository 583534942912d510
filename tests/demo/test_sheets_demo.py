import pytest

from campaigns.models import Membership, Role
from demo.sheets import DEMO_NPC, sheets_demo_load
from sheets.models import Character
from tests.factories import CampaignFactory, CharacterFactory, UserFactory

pytestmark = pytest.mark.django_db


def test_demo_sheets_are_approved_one_wounded_and_shaken_and_there_is_an_npc():
    campaign = CampaignFactory()
    ana, bruno = UserFactory(), UserFactory()
    for user, name in ((ana, "Inés Albarrán"), (bruno, "Tomás Quiroga")):
        Membership.objects.create(campaign=campaign, user=user, role=Role.PLAYER)
        CharacterFactory(
            campaign=campaign,
            owner=user,
            name=name,
            status="approved",
            fortaleza=5,
            reflejos=5,
            voluntad=5,
            intelecto=5,
        )
    sheets_demo_load(campaign)
    sheets_demo_load(campaign)  # idempotent
    ines = Character.objects.get(name="Inés Albarrán")
    tomas = Character.objects.get(name="Tomás Quiroga")
    assert ines.status == tomas.status == "approved"
    assert ines.skills.count() == 10 and ines.hitos.health_label == "Sano"
    assert (tomas.hitos.health_label, tomas.hitos.mental_label) == ("Herido", "Alterado")
    assert tomas.events.filter(kind="damage").count() == 2
    npc = Character.objects.get(name=DEMO_NPC)
    assert npc.is_npc and npc.hitos.drama_points == 0 and npc.owner == campaign.gm
