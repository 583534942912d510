import pytest
from django.urls import reverse

from campaigns.models import Membership, Role
from tests.factories import CampaignFactory, UserFactory

pytestmark = pytest.mark.django_db


def test_not_found_page_is_the_sites_own_in_spanish(client):
    response = client.get("/r/no-es-un-enlace/")
    assert response.status_code == 404
    assert "Página no encontrada" in response.text
    assert "Saltar al contenido" in response.text


def test_forbidden_page_shows_the_reason_in_spanish(client):
    campaign = CampaignFactory()
    reader = UserFactory()
    Membership.objects.create(campaign=campaign, user=reader, role=Role.READER)
    client.force_login(reader)
    response = client.get(reverse("campaigns:dashboard", args=[campaign.slug]))
    assert response.status_code == 403
    assert "Solo la dirección de la partida puede hacer esto." in response.text
    assert "No puedes hacer esto" in response.text
