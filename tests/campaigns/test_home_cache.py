"""The home page as the cache keeps it (``campaigns.fragments``): everyone's
list of public campaigns and each user's own list move with every change
they show, and the query count stays constant, made or kept, as campaigns
are added (issue 13, item 2)."""

from __future__ import annotations

import pytest
from django.core.cache import cache
from django.urls import reverse

from campaigns import services
from campaigns.models import Campaign, Membership, Role, Visibility
from tests.conftest import client_for
from tests.factories import CampaignFactory, UserFactory, add_member, write

pytestmark = pytest.mark.django_db


def home(user=None, **params) -> str:
    response = client_for(user).get(reverse("home"), params)
    assert response.status_code == 200
    return response.content.decode()


def test_a_new_edited_hidden_or_deleted_public_campaign_shows_at_once(db):
    assert "Aún no hay partidas públicas" in home()
    campaign = CampaignFactory(title="La mansión")
    assert "La mansión" in home()
    services.campaign_update(campaign=campaign, title="La mansión encantada")
    assert "La mansión encantada" in home()
    services.campaign_update(campaign=campaign, visibility=Visibility.PRIVATE)
    assert "La mansión" not in home()
    services.campaign_update(campaign=campaign, visibility=Visibility.PUBLIC)
    assert "La mansión" in home()
    Campaign.objects.get(pk=campaign.pk).delete()
    assert "La mansión" not in home()


def test_a_renamed_gm_and_a_handed_over_campaign_show_at_once(db):
    gm = UserFactory(display_name="La Directora")
    campaign = CampaignFactory(title="La mansión", gm=gm)
    assert "dirige La Directora" in home()
    gm.display_name = "Doña Directora"
    gm.save()
    assert "dirige Doña Directora" in home()
    heir = add_member(campaign, Role.PLAYER, display_name="El Heredero")
    services.campaign_hand_over(campaign=campaign, actor=gm, membership=Membership.objects.get(user=heir))
    assert "dirige El Heredero" in home()


def test_a_log_in_does_not_move_the_list(db, django_assert_max_num_queries):
    CampaignFactory.create_batch(3)
    someone = UserFactory()
    home()
    client_for(someone)  # a log-in saves the user's last_login
    someone.save(update_fields=["last_login"])
    with django_assert_max_num_queries(0):
        home()


def test_every_page_of_the_list_is_its_own(db):
    for n in range(25):
        CampaignFactory(title=f"Partida número {n:02d}")
    assert "Partida número 24" in home() and "Partida número 04" not in home()
    second = home(pagina=2)
    assert "Partida número 04" in second and "Partida número 24" not in second
    # An odd page number is read as Django's paginator reads it.
    assert "Partida número 24" in home(pagina="uno")


def test_my_campaigns_follow_joining_leaving_and_new_posts(db):
    me = UserFactory()
    campaign = services.campaign_create(gm=UserFactory(), title="La cripta", system="hitos", visibility="private")
    scene = services.scene_create(campaign=campaign, title="Escena")
    assert "La cripta" not in home(me)
    Membership.objects.create(campaign=campaign, user=me, role=Role.PLAYER)
    assert "La cripta" in home(me)
    write(scene, campaign.gm, "Nuevo.")
    assert "1 nuevo" in home(me)
    # Reading the scene clears it.
    client_for(me).get(scene.get_absolute_url())
    assert "1 nuevo" not in home(me)
    services.campaign_update(campaign=campaign, title="La cripta olvidada")
    assert "La cripta olvidada" in home(me)
    services.membership_leave(membership=Membership.objects.get(user=me))
    assert "La cripta" not in home(me)


def test_a_campaign_i_create_is_listed_at_once(db):
    me = UserFactory()
    assert "Todavía no juegas" in home(me)
    services.campaign_create(gm=me, title="Mi partida", system="hitos", visibility="private")
    assert "Mi partida" in home(me)


def test_my_list_never_reaches_another_user(db):
    me, other = UserFactory(), UserFactory()
    services.campaign_create(gm=me, title="Secreta", system="hitos", visibility="private")
    assert "Secreta" in home(me)
    assert "Secreta" not in home(other)
    assert "Secreta" not in home()


@pytest.mark.parametrize("n", [1, 12])
def test_the_query_count_is_constant_as_campaigns_grow(db, django_assert_max_num_queries, n):
    me = UserFactory()
    for i in range(n):
        public = CampaignFactory(title=f"Pública {i}")
        services.scene_create(campaign=public, title="Escena")
        mine = services.campaign_create(gm=UserFactory(), title=f"Mía {i}", system="hitos", visibility="private")
        Membership.objects.create(campaign=mine, user=me)
        write(services.scene_create(campaign=mine, title="Escena"), mine.gm, "Nuevo.")
    client, anonymous = client_for(me), client_for(None)
    # Made, signed in: session, user, the user's campaigns, the read markers
    # (with the navbar's notifications), the new-post counts, the count and
    # the page of public campaigns, and what waits for the user («Pendiente»,
    # issue 17), kept in turn for a minute. Kept: session, user, read markers.
    with django_assert_max_num_queries(19):
        client.get(reverse("home"))
    with django_assert_max_num_queries(3):
        response = client.get(reverse("home"))
    assert response.content.decode().count("1 nuevo") == n
    cache.clear()
    with django_assert_max_num_queries(2):
        anonymous.get(reverse("home"))
    with django_assert_max_num_queries(0):
        anonymous.get(reverse("home"))
