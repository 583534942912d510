"""The campaign page as the cache keeps it (``campaigns.fragments``): every
change it shows moves its key, each reader gets their own, and its query
count stays constant, made or kept, as the campaign grows (issue 13, item 2)."""

from __future__ import annotations

import re

import pytest
from django.core.cache import cache
from django.test import Client

from campaigns import services
from campaigns.models import Membership, Post, Role, Scene
from sheets.models import Character
from tests.conftest import client_for
from tests.factories import CharacterFactory, UserFactory, add_member, write

pytestmark = pytest.mark.django_db


def without_tokens(html: str) -> str:
    """The page with its CSRF tokens blanked out (each visit gets its own)."""
    return re.sub(r'(csrfmiddlewaretoken" value="|X-CSRFToken": ")[A-Za-z0-9]+', r"\1", html)


def page(table, standing: str = "player") -> str:
    response = table.client(standing).get(table.campaign.get_absolute_url())
    assert response.status_code == 200
    return response.content.decode()


def test_a_second_visit_is_served_from_the_cache(table, django_assert_max_num_queries):
    client = table.client("player")
    first = client.get(table.campaign.get_absolute_url()).content.decode()
    # Session, user, campaign, where the reader's read markers stand (with
    # the navbar's notifications), and nothing else.
    with django_assert_max_num_queries(4):
        again = client.get(table.campaign.get_absolute_url()).content.decode()
    assert without_tokens(again) == without_tokens(first)


def test_a_new_scene_and_a_new_post_show_at_once(table):
    assert "0 nuevos" not in page(table)
    scene = services.scene_create(campaign=table.campaign, title="La biblioteca")
    assert "La biblioteca" in page(table)
    write(scene, table.other, "Hola.")
    html = page(table)
    assert "1 mensaje" in html and "1 nuevo" in html


def test_a_scene_renamed_closed_or_split_shows_at_once(table):
    page(table)
    services.scene_update(
        scene=table.scene,
        actor=table.gm,
        title="El vestíbulo en ruinas",
        description="",
        everyone=True,
        participants=[],
        status=Scene.Status.LOCKED,
        position=table.scene.position,
    )
    html = page(table)
    assert "El vestíbulo en ruinas" in html and "Cerrada" in html
    # Split off to Bruno alone: Ana no longer sees it listed.
    table.scene.participants.set([table.other])
    Scene.objects.filter(pk=table.scene.pk).update(everyone=False)
    table.scene.refresh_from_db()
    table.scene.save()
    assert "El vestíbulo en ruinas" not in page(table)
    assert "El vestíbulo en ruinas" in page(table, "other")


def test_chosen_members_set_after_the_scene_show_at_once(table):
    scene = services.scene_create(campaign=table.campaign, title="El desván", everyone=False, participants=[])
    assert "El desván" not in page(table)
    scene.participants.add(table.player)
    assert "El desván" in page(table)


def test_reading_a_scene_clears_its_new_posts_at_once(table):
    write(table.scene, table.other, "¿Hay alguien?")
    assert "1 nuevo" in page(table)
    table.client("player").get(table.scene.get_absolute_url())
    assert "1 nuevo" not in page(table)


def test_a_whisper_moves_the_counts_of_its_readers_only(table):
    assert "1 mensaje" in page(table) and "1 mensaje" in page(table, "other")
    write(table.scene, table.gm, "Solo para Ana.", recipients=Post.Recipients.CHOSEN, chosen=[table.player])
    assert "2 mensajes" in page(table)
    # Bruno is not told of the whisper to Ana.
    assert "1 mensaje" in page(table, "other")


def test_members_joining_leaving_and_changing_role_show_at_once(table):
    page(table, "anonymous")
    newcomer = add_member(table.campaign, Role.PLAYER, display_name="Carmen")
    assert "Carmen" in page(table, "anonymous")
    services.member_set_role(membership=Membership.objects.get(user=newcomer), actor=table.gm, role=Role.READER)
    assert 'Carmen <span class="small text-body-secondary">(Lector' in page(table, "anonymous")
    services.member_remove(membership=Membership.objects.get(user=newcomer), actor=table.gm, reason="Se fue.")
    assert "Carmen" not in page(table, "anonymous")


def test_a_removed_member_loses_the_members_page_at_once(table):
    assert "Registro de moderación" in page(table)
    services.member_remove(membership=table.membership(table.player), actor=table.gm, reason="Adiós.")
    html = page(table)
    assert "Registro de moderación" not in html
    assert "Dejar la partida" not in html


def test_a_renamed_member_and_an_approved_or_renamed_character_show_at_once(table):
    page(table, "anonymous")
    table.other.display_name = "Bruno el Breve"
    table.other.save()
    assert "Bruno el Breve" in page(table, "anonymous")
    character = CharacterFactory(
        campaign=table.campaign, owner=table.other, name="Tomás", status=Character.Status.SUBMITTED
    )
    assert "Tomás" not in page(table, "anonymous")
    character.status = Character.Status.APPROVED
    character.save()
    assert "Tomás" in page(table, "anonymous")
    character.name = "Tomás Ferrer"
    character.save(update_fields=["name"])
    assert "Tomás Ferrer" in page(table, "anonymous")


def test_the_campaign_edited_shows_at_once(table):
    page(table, "anonymous")
    services.campaign_update(campaign=table.campaign, description="Una casa que **no** quiere visitas.")
    assert "<strong>no</strong> quiere visitas" in page(table, "anonymous")


def test_an_outsiders_application_and_the_campaigns_recruiting_show_at_once(table):
    services.campaign_update(campaign=table.campaign, status="playing")
    assert "Solicitar unirme" not in page(table, "outsider")
    services.campaign_update(campaign=table.campaign, status="recruiting")
    html = page(table, "outsider")
    assert "Solicitar unirme" in html and "Tu solicitud está pendiente" not in html
    services.application_create(campaign=table.campaign, user=table.outsider, text="¿Puedo?")
    html = page(table, "outsider")
    assert "Tu solicitud está pendiente" in html and "Solicitar unirme" not in html


def test_a_page_kept_for_the_gm_never_reaches_a_player(table):
    secret = services.scene_create(campaign=table.campaign, title="La cripta", everyone=False, participants=[])
    write(secret, table.gm, "Lo que nadie sabe.")
    gm_html = page(table, "gm")
    assert "La cripta" in gm_html and "Panel de dirección" in gm_html
    for standing in ("cogm", "player", "reader", "outsider", "anonymous"):
        html = page(table, standing)
        assert "Panel de dirección" not in html or standing == "cogm", standing
        assert ("La cripta" in html) == (standing == "cogm"), standing


def test_each_member_gets_their_own_feed_address(table):
    first, second = page(table, "player"), page(table, "other")
    assert table.membership(table.player).feed_token in first
    assert table.membership(table.player).feed_token not in second
    assert table.membership(table.other).feed_token in second


def test_the_leave_form_of_a_kept_page_carries_each_visits_own_csrf_token(table):
    client = Client(enforce_csrf_checks=True)
    client.force_login(table.player)
    page(table)  # kept for Ana by another visit
    html = client.get(table.campaign.get_absolute_url()).content.decode()
    token = html.split('name="csrfmiddlewaretoken" value="', 2)[2].split('"')[0]
    response = client.post(f"{table.campaign.get_absolute_url()}salir/", {"csrfmiddlewaretoken": token})
    assert response.status_code == 302
    assert not Membership.objects.active().filter(campaign=table.campaign, user=table.player).exists()


@pytest.mark.parametrize("n", [1, 10])
def test_the_query_count_is_constant_as_scenes_posts_and_members_grow(table, django_assert_max_num_queries, n):
    for i in range(n):
        scene = services.scene_create(
            campaign=table.campaign, title=f"Escena {i}", everyone=bool(i % 2), participants=[table.player]
        )
        write(scene, table.other, "Hola.")
        write(scene, table.gm, "Solo tú.", recipients=Post.Recipients.CHOSEN, chosen=[table.other])
        CharacterFactory(campaign=table.campaign, owner=add_member(table.campaign, Role.PLAYER))
    # Made: session, user, campaign, membership (none for the GM), read
    # markers with the navbar's notifications (an outsider: a pending
    # application and the notifications), scenes, post counts, new-post
    # counts (members), members, characters, the GM's name, and for the
    # direction the pending reports (issue 14). Kept: session,
    # user, campaign and the read markers, the membership coming from the
    # cache. Readers without an account: the campaign, and to make it the
    # scenes, post counts, members, characters and the GM's name. Members
    # also make the table's status around the cached page (whom the scenes
    # wait for, with the games' waits and the deadlines; who is away; the
    # pace for the direction; issue 17), kept in turn for a minute.
    made = {"gm": 25, "cogm": 26, "player": 22, "reader": 21, "outsider": 11, "anonymous": 6}
    kept = {"gm": 4, "cogm": 4, "player": 4, "reader": 4, "outsider": 5, "anonymous": 1}
    for standing in made:
        cache.clear()
        client = client_for(table.user(standing))
        with django_assert_max_num_queries(made[standing]):
            assert client.get(table.campaign.get_absolute_url()).status_code == 200
        with django_assert_max_num_queries(kept[standing]):
            assert client.get(table.campaign.get_absolute_url()).status_code == 200


def test_a_scene_is_listed_for_a_new_player_once_they_join(table):
    newcomer = UserFactory(display_name="Carmen")
    assert "Dejar la partida" not in client_for(newcomer).get(table.campaign.get_absolute_url()).content.decode()
    Membership.objects.create(campaign=table.campaign, user=newcomer, role=Role.PLAYER)
    assert "Dejar la partida" in client_for(newcomer).get(table.campaign.get_absolute_url()).content.decode()
