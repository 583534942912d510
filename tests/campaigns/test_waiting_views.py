"""Whose turn it is, on the pages: the scene's status region, the campaign
page, the home page's «Pendiente» and the direction's nudge (its permission
matrix, the htmx row it swaps, its limit), with the queries pinned."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from campaigns import absences, deadlines, extensions
from campaigns.extensions import Awaited
from campaigns.models import Absence, Membership, Notification, Nudge, Role
from tests.conftest import client_for
from tests.factories import CampaignFactory, UserFactory, add_member, make_scene, write

pytestmark = pytest.mark.django_db

HX = {"HTTP_HX_REQUEST": "true"}
STANDINGS = ["anonymous", "outsider", "reader", "player", "other", "cogm", "gm"]
EXPECTED = {
    "public": {"anonymous": 302, "outsider": 403, "reader": 403, "player": 403, "other": 403, "cogm": 302, "gm": 302},
    "private": {"anonymous": 302, "outsider": 404, "reader": 403, "player": 403, "other": 403, "cogm": 302, "gm": 302},
}


def _nudge_url(table) -> str:
    return reverse("campaigns:nudge", args=[table.campaign.slug, table.scene.pk])


def _status_url(table) -> str:
    return reverse("campaigns:scene-status", args=[table.campaign.slug, table.scene.pk])


def _gm_asks(table) -> None:
    write(table.scene, table.gm, "¿Qué hacéis?")


# --- the nudge ---------------------------------------------------------------------------


@pytest.mark.parametrize("visibility", ["public", "private"])
@pytest.mark.parametrize("standing", STANDINGS)
def test_only_the_direction_nudges(request, visibility, standing):
    table = request.getfixturevalue("table" if visibility == "public" else "private_table")
    _gm_asks(table)
    response = table.client(standing).post(_nudge_url(table), {"user": table.other.pk})
    assert response.status_code == EXPECTED[visibility][standing]
    done = EXPECTED[visibility][standing] == 302 and standing != "anonymous"
    assert Nudge.objects.exists() is done
    if standing == "anonymous":
        assert response["Location"].startswith(reverse("accounts:login"))
    elif done:
        assert response["Location"] == _status_url(table)


@pytest.mark.parametrize("standing", ["outsider", "player", "gm"])
def test_a_nudge_is_a_post(private_table, standing):
    assert private_table.client(standing).get(_nudge_url(private_table)).status_code == 405


def test_a_nudge_with_htmx_swaps_its_row_which_then_says_it_was_nudged(table):
    _gm_asks(table)
    response = table.client("gm").post(_nudge_url(table), {"user": table.other.pk}, **HX)
    html = response.content.decode()
    assert html.strip().startswith(f'<li id="esperando-{table.scene.pk}-{table.other.pk}"')
    assert "<html" not in html and "Toque dado hace" in html and "Dar un toque a Bruno" not in html
    notice = Notification.objects.get(kind=Notification.Kind.NUDGE)
    assert (notice.user, notice.text) == (table.other, "La dirección te espera en «El vestíbulo» (La mansión).")


def test_a_second_nudge_within_12_hours_is_refused_with_when_the_next_is_possible(table):
    _gm_asks(table)
    client = table.client("cogm")
    client.post(_nudge_url(table), {"user": table.other.pk})
    response = client.post(_nudge_url(table), {"user": table.other.pk}, **HX)
    html = response.content.decode()
    assert "Ya le diste un toque a Bruno en esta escena. Podrás darle otro a partir del " in html
    assert html.strip().startswith(f'<li id="esperando-{table.scene.pk}-{table.other.pk}"')
    page = client.post(_nudge_url(table), {"user": table.other.pk}, follow=True).content.decode()
    assert "Ya le diste un toque a Bruno" in page
    assert Nudge.objects.count() == 1


def test_nudging_someone_the_scene_does_not_wait_for_or_nobody_is_refused(table):
    _gm_asks(table)
    client = table.client("gm")
    html = client.post(_nudge_url(table), {"user": table.reader.pk}, **HX).content.decode()
    assert html.strip().startswith('<div id="estado-escena"')
    assert "Esta escena no espera nada de La Lectora." in html
    page = client.post(_nudge_url(table), {"user": ""}, follow=True).content.decode()
    assert "Elige a quién dar el toque." in page
    for nobody in ("x", 999999, table.outsider.pk):
        page = client.post(_nudge_url(table), {"user": nobody}, follow=True).content.decode()
        assert "Esa persona no está en la partida." in page
    assert not Nudge.objects.exists()


# --- the scene's status region ----------------------------------------------------------


def test_the_scene_status_says_whom_it_waits_for_with_the_deadline_and_who_is_away(table):
    _gm_asks(table)
    table.player.time_zone = "America/Bogota"
    table.player.save()
    deadlines.set_deadline(
        campaign=table.campaign,
        scene=table.scene,
        kind=deadlines.SCENE,
        target_id=table.scene.pk,
        due_at=timezone.now() + timedelta(days=2, minutes=5),
        actor=table.gm,
    )
    today = absences.campaign_today(table.campaign)
    Absence.objects.create(campaign=table.campaign, user=table.other, starts_on=today, ends_on=today)
    html = table.client("player").get(_status_url(table)).content.decode()
    assert "<html" in html and "A quién esperamos" in html
    assert "Ana" in html and "Bruno" in html and "ausente" in html
    assert "en tu hora (America/Bogota)" in html and "quedan 2 días" in html
    assert "Dar un toque" not in html
    fragment = table.client("gm").get(_status_url(table), **HX).content.decode()
    assert "<html" not in fragment and "Dar un toque a Ana" in fragment and "Dar un toque a Bruno" in fragment


def test_a_private_item_is_shown_only_to_its_member_and_the_direction(table, monkeypatch):
    def provider(campaigns, scene_ids, user_id):
        return [
            Awaited(
                user_id=table.player.pk,
                scene_id=table.scene.pk,
                kind="request",
                text="Tirada secreta de Sigilo",
                url="/x",
                private=True,
            )
        ]

    monkeypatch.setattr(extensions, "_waiting", [provider])
    assert "Tirada secreta de Sigilo" in table.client("player").get(_status_url(table)).content.decode()
    assert "Tirada secreta de Sigilo" in table.client("cogm").get(_status_url(table)).content.decode()
    assert "Tirada secreta de Sigilo" not in table.client("other").get(_status_url(table)).content.decode()


def test_names_are_escaped(table):
    table.other.display_name = "<b>Bruno</b>"
    table.other.save()
    _gm_asks(table)
    html = table.client("gm").get(_status_url(table)).content.decode()
    assert "&lt;b&gt;Bruno&lt;/b&gt;" in html and "<b>Bruno</b>" not in html


# --- the campaign page ------------------------------------------------------------------


def test_the_campaign_page_shows_each_scene_waiting_to_members_only(table):
    _gm_asks(table)
    html = table.client("other").get(table.campaign.get_absolute_url()).content.decode()
    assert "Esperando a" in html and "Ana, Bruno" in html
    outsider = table.client("outsider").get(table.campaign.get_absolute_url()).content.decode()
    assert "Esperando a" not in outsider


# --- the home page --------------------------------------------------------------------------


def test_the_home_page_lists_what_waits_for_the_user(table):
    _gm_asks(table)
    html = table.client("player").get(reverse("home")).content.decode()
    assert "Pendiente" in html and "Escribir en «El vestíbulo»" in html and "La mansión" in html
    write(table.scene, table.player, "Respondo.")
    html = table.client("player").get(reverse("home")).content.decode()
    assert "Nada te espera ahora en tus partidas." in html


def _another_campaign(user, n: int):
    campaign = CampaignFactory(title=f"Partida {n}")
    Membership.objects.create(campaign=campaign, user=user, role=Role.PLAYER)
    other = add_member(campaign)
    scene = make_scene(campaign, title=f"Escena {n}")
    write(scene, campaign.gm, "Os toca.")
    write(scene, other, "Voy.")
    deadlines.set_deadline(
        campaign=campaign,
        scene=scene,
        kind=deadlines.SCENE,
        target_id=scene.pk,
        due_at=timezone.now() + timedelta(days=n),
        actor=campaign.gm,
    )
    return campaign


def test_the_home_pages_queries_do_not_grow_with_the_campaigns(db, django_assert_num_queries):
    ana = UserFactory()
    _another_campaign(ana, 1)
    client = client_for(ana)
    with CaptureQueriesContext(connection) as one:
        html = client.get(reverse("home")).content.decode()
    assert html.count("Escribir en «Escena") == 1
    for n in range(2, 9):
        _another_campaign(ana, n)
    client = client_for(ana)
    with django_assert_num_queries(len(one.captured_queries)):
        html = client.get(reverse("home")).content.decode()
    assert html.count("Escribir en «Escena") == 8
    # Soonest first.
    assert html.index("Escena 1") < html.index("Escena 2") < html.index("Escena 8")


def test_the_scene_status_queries_do_not_grow_with_the_members(table, django_assert_num_queries):
    _gm_asks(table)
    client = table.client("gm")
    with CaptureQueriesContext(connection) as few:
        client.get(_status_url(table))
    for _ in range(6):
        add_member(table.campaign)
    _gm_asks(table)
    with django_assert_num_queries(len(few.captured_queries)):
        html = client.get(_status_url(table)).content.decode()
    assert html.count("Dar un toque a") == 8


def test_someone_who_plays_nowhere_sees_no_pending_section(db):
    html = client_for(UserFactory()).get(reverse("home")).content.decode()
    assert 'id="pendiente"' not in html
