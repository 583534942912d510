import pytest
from django.urls import reverse

from tests.factories import CampaignFactory, UserFactory

pytestmark = pytest.mark.django_db


def test_home_explains_the_empty_state_when_there_are_no_public_campaigns(client):
    response = client.get(reverse("home"))
    assert response.status_code == 200
    assert response.headers["Content-Language"] == "es"
    assert "Aún no hay partidas públicas." in response.text
    assert "Tus partidas" not in response.text


def test_home_lists_public_campaigns_but_not_private_ones(client):
    CampaignFactory(title="La cripta pública")
    CampaignFactory(title="El secreto del DJ", visibility="private")
    response = client.get(reverse("home"))
    assert "La cripta pública" in response.text
    assert "El secreto del DJ" not in response.text


def test_home_lists_the_signed_in_users_own_campaigns_including_private(client):
    gm = UserFactory()
    CampaignFactory(title="Mi partida privada", visibility="private", gm=gm)
    client.force_login(gm)
    response = client.get(reverse("home"))
    mine = response.context["my_campaigns"]
    assert [c.title for c in mine] == ["Mi partida privada"]
    assert "Tus partidas" in response.text


def test_home_escapes_campaign_titles(client):
    CampaignFactory(title='<script>alert("x")</script>')
    response = client.get(reverse("home"))
    assert '<script>alert("x")</script>' not in response.text
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in response.text


def test_home_paginates_public_campaigns(client):
    CampaignFactory.create_batch(25)
    first = client.get(reverse("home"))
    assert len(first.context["public_campaigns"]) == 20
    assert "Página 1 de 2" in first.text
    second = client.get(reverse("home"), {"pagina": 2})
    assert len(second.context["public_campaigns"]) == 5


@pytest.mark.parametrize("count", [1, 15])
def test_home_query_count_is_constant_as_campaigns_are_added(client, django_assert_max_num_queries, count):
    gm = UserFactory()
    CampaignFactory.create_batch(count)
    CampaignFactory.create_batch(count, gm=gm)
    client.force_login(gm)
    # session, user, unread notifications, count of public campaigns, the page
    # of them, the user's own, their new-post counts; what waits for the user
    # in their campaigns («Pendiente», issue 17: the forum's waits, the games',
    # the deadlines, their absences).
    with django_assert_max_num_queries(14):
        response = client.get(reverse("home"))
    assert len(response.context["my_campaigns"]) == count


def test_home_rejects_post(client):
    assert client.post(reverse("home")).status_code == 405


def test_campaign_page_shows_a_public_campaign_to_anonymous_readers(client):
    campaign = CampaignFactory(title="Sombras sobre Madrid")
    response = client.get(campaign.get_absolute_url())
    assert response.status_code == 200
    assert "Sombras sobre Madrid" in response.text
    assert campaign.gm.public_name in response.text


def test_private_campaign_is_a_404_for_outsiders_and_visible_to_its_gm(client):
    campaign = CampaignFactory(visibility="private")
    assert client.get(campaign.get_absolute_url()).status_code == 404
    client.force_login(UserFactory())
    assert client.get(campaign.get_absolute_url()).status_code == 404
    client.force_login(campaign.gm)
    assert client.get(campaign.get_absolute_url()).status_code == 200
