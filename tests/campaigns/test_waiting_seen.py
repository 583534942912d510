"""Whose turn it is as each viewer may see it (second review of issue 17):
what other members read of someone else's item (``Awaited.public_text``),
a whisper or a hidden post that does not show through «A quién esperamos»,
and the direction's htmx actions on the scene's status region (the stale
nudge, the refused deadline form, the region left open after an action)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from campaigns import deadlines, extensions, waiting
from campaigns.extensions import Awaited
from campaigns.models import Nudge, Post
from campaigns.permissions import campaign_access
from tests.factories import write

pytestmark = pytest.mark.django_db

HX = {"HTTP_HX_REQUEST": "true"}


def _status_url(table) -> str:
    return reverse("campaigns:scene-status", args=[table.campaign.slug, table.scene.pk])


def _nudge_url(table) -> str:
    return reverse("campaigns:nudge", args=[table.campaign.slug, table.scene.pk])


def _deadline_url(table) -> str:
    return reverse("campaigns:scene-deadline", args=[table.campaign.slug, table.scene.pk])


def _awaited_ids(table, standing: str) -> list[int]:
    access = campaign_access(table.user(standing), table.campaign)
    return [item.user_id for item in waiting.waiting_in([table.campaign], viewer_access=access)]


def _scene_deadline(table):
    return deadlines.set_deadline(
        campaign=table.campaign,
        scene=table.scene,
        kind=deadlines.SCENE,
        target_id=table.scene.pk,
        due_at=timezone.now() + timedelta(days=2),
        actor=table.gm,
    )


# --- public_text ---------------------------------------------------------------------------


def _provider_with_a_secret(table):
    def provider(campaigns, scene_ids, user_id):
        return [
            Awaited(
                user_id=table.player.pk,
                scene_id=table.scene.pk,
                kind="request",
                text="Tirada de Ana: descubrir al traidor",
                public_text="Tirada pedida por la dirección",
                url="/x",
            )
        ]

    return provider


@pytest.mark.parametrize("standing", ["other", "reader"])
def test_other_members_read_the_public_text_of_someone_elses_item(table, monkeypatch, standing):
    monkeypatch.setattr(extensions, "_waiting", [_provider_with_a_secret(table)])
    html = table.client(standing).get(_status_url(table)).content.decode()
    assert "Tirada pedida por la dirección" in html
    assert "descubrir al traidor" not in html
    (item,) = waiting.waiting_in([table.campaign], viewer_access=campaign_access(table.user(standing), table.campaign))
    assert item.text == "Tirada pedida por la dirección"


@pytest.mark.parametrize("standing", ["player", "cogm", "gm"])
def test_the_awaited_member_and_the_direction_read_the_whole_text(table, monkeypatch, standing):
    monkeypatch.setattr(extensions, "_waiting", [_provider_with_a_secret(table)])
    html = table.client(standing).get(_status_url(table)).content.decode()
    assert "Tirada de Ana: descubrir al traidor" in html


def test_the_campaign_page_shows_others_the_public_text_only(table, monkeypatch):
    monkeypatch.setattr(extensions, "_waiting", [_provider_with_a_secret(table)])
    html = table.client("other").get(table.campaign.get_absolute_url()).content.decode()
    assert "Ana" in html and "descubrir al traidor" not in html


def test_an_item_without_public_text_reads_the_same_for_everyone(table):
    write(table.scene, table.gm, "¿Qué hacéis?")
    html = table.client("other").get(_status_url(table)).content.decode()
    assert "Escribir en «El vestíbulo»" in html


# --- whispers and hidden posts do not show through the list --------------------------------


def test_a_player_who_only_whispered_to_the_direction_is_still_awaited_for_everyone_else(table):
    write(table.scene, table.gm, "¿Qué hacéis?")
    write(table.scene, table.player, "Solo para la dirección: robo la llave.", recipients=Post.Recipients.GM)
    for standing in ("other", "reader"):
        assert _awaited_ids(table, standing) == [table.player.pk, table.other.pk], standing
    for standing in ("gm", "cogm"):
        assert _awaited_ids(table, standing) == [table.other.pk], standing
    # The player knows what she wrote.
    assert _awaited_ids(table, "player") == [table.other.pk]
    html = table.client("other").get(_status_url(table)).content.decode()
    assert "Dar un toque" not in html and "<strong>Ana</strong>" in html


def test_a_whisper_to_chosen_members_or_a_hidden_post_does_not_answer_for_others(table):
    write(table.scene, table.gm, "¿Qué hacéis?")
    write(table.scene, table.player, "Para Bruno.", recipients=Post.Recipients.CHOSEN, chosen=[table.other])
    hidden = write(table.scene, table.other, "Algo que la dirección ocultó.")
    Post.objects.filter(pk=hidden.pk).update(hidden=True)
    assert _awaited_ids(table, "reader") == [table.player.pk, table.other.pk]
    assert _awaited_ids(table, "gm") == []


def test_the_scene_deadline_late_check_counts_only_what_the_viewer_could_read(table):
    _scene_deadline(table)
    write(table.scene, table.player, "Solo para la dirección.", recipients=Post.Recipients.GM)
    write(table.scene, table.other, "A todos.")
    reader_items = waiting.waiting_in([table.campaign], viewer_access=campaign_access(table.reader, table.campaign))
    assert [(item.user_id, item.deadline is not None) for item in reader_items] == [(table.player.pk, True)]
    assert _awaited_ids(table, "gm") == []


def test_the_campaign_page_keeps_each_viewers_own_list(table):
    write(table.scene, table.gm, "¿Qué hacéis?")
    write(table.scene, table.player, "Solo para la dirección.", recipients=Post.Recipients.GM)
    # The direction first (its list is kept for the minute), then a reader.
    gm_html = table.client("gm").get(table.campaign.get_absolute_url()).content.decode()
    reader_html = table.client("reader").get(table.campaign.get_absolute_url()).content.decode()
    assert "Esperando a Bruno" in gm_html
    assert "Ana, Bruno" in reader_html


def test_viewing_as_someone_outside_the_direction_asks_no_more_queries(table, django_assert_num_queries):
    write(table.scene, table.gm, "¿Qué hacéis?")
    gm = campaign_access(table.gm, table.campaign)
    reader = campaign_access(table.reader, table.campaign)
    with CaptureQueriesContext(connection) as as_gm:
        waiting.waiting_in([table.campaign], viewer_access=gm)
    with django_assert_num_queries(len(as_gm)):
        waiting.waiting_in([table.campaign], viewer_access=reader)


# --- the direction's htmx actions ----------------------------------------------------------


@pytest.mark.parametrize("who", ["reader", "outsider", "nobody"])
def test_a_stale_nudge_swaps_the_whole_status_region_not_the_row(table, who):
    write(table.scene, table.gm, "¿Qué hacéis?")
    user = {"reader": table.reader.pk, "outsider": table.outsider.pk, "nobody": ""}[who]
    response = table.client("gm").post(_nudge_url(table), {"user": user}, **HX)
    assert response.status_code == 200
    assert response["HX-Retarget"] == "#estado-escena"
    assert response["HX-Reswap"] == "outerHTML"
    html = response.content.decode()
    assert html.strip().startswith('<div id="estado-escena"')
    assert '<details class="waiting mb-3" open>' in html
    assert not Nudge.objects.exists()


def test_a_nudge_for_a_member_who_answered_meanwhile_swaps_the_region(table):
    write(table.scene, table.gm, "¿Qué hacéis?")
    write(table.scene, table.other, "Ya voy.")
    response = table.client("gm").post(_nudge_url(table), {"user": table.other.pk}, **HX)
    assert response["HX-Retarget"] == "#estado-escena"
    assert "Esta escena no espera nada de Bruno." in response.content.decode()


def test_a_nudge_that_finds_its_row_swaps_only_the_row(table):
    write(table.scene, table.gm, "¿Qué hacéis?")
    response = table.client("gm").post(_nudge_url(table), {"user": table.other.pk}, **HX)
    assert "HX-Retarget" not in response
    assert response.content.decode().strip().startswith(f'<li id="esperando-{table.scene.pk}-{table.other.pk}"')


def test_a_refused_scene_deadline_form_posts_through_htmx_again(table):
    response = table.client("gm").post(_deadline_url(table), {"plazo": "2000-01-01T10:00", "recordar": "86400"}, **HX)
    html = response.content.decode()
    assert response["HX-Retarget"] == f"#plazo-escena-{table.scene.pk}"
    assert f'data-hx-post="{_deadline_url(table)}"' in html
    assert 'data-hx-target="#estado-escena"' in html
    assert 'value="2000-01-01T10:00"' in html


def test_a_refused_scene_deadline_form_without_htmx_stays_a_plain_form(table):
    response = table.client("gm").post(_deadline_url(table), {"plazo": "2000-01-01T10:00", "recordar": "86400"})
    html = response.content.decode()
    assert response.status_code == 200 and "<html" in html
    assert "data-hx-post" not in html.split(f'id="plazo-escena-{table.scene.pk}"')[1].split(">")[0]


def test_the_status_region_comes_back_open_after_giving_a_deadline(table):
    due = timezone.localtime(timezone.now() + timedelta(days=3), deadlines.campaign_zone(table.campaign))
    data = {"plazo": due.strftime("%Y-%m-%dT%H:%M"), "recordar": "86400"}
    html = table.client("gm").post(_deadline_url(table), data, **HX).content.decode()
    assert html.strip().startswith('<div id="estado-escena"')
    assert '<details class="waiting mb-3" open>' in html
    # Loaded by the scene page, it is folded.
    folded = table.client("gm").get(_status_url(table), **HX).content.decode()
    assert '<details class="waiting mb-3">' in folded


def test_the_status_region_comes_back_open_after_withdrawing_a_deadline(table):
    deadline = _scene_deadline(table)
    url = reverse("campaigns:deadline-withdraw", args=[table.campaign.slug, deadline.pk])
    html = table.client("gm").post(url, **HX).content.decode()
    assert html.strip().startswith('<div id="estado-escena"')
    assert '<details class="waiting mb-3" open>' in html
