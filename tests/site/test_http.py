"""HTTP manners every page keeps (issue 13): HEAD wherever GET works, HTML
and JSON compressed, conditional requests answered with 304."""

from __future__ import annotations

import gzip

import pytest
from django.urls import reverse

from campaigns.models import Post
from tests.conftest import client_for, make_world
from tests.factories import write


@pytest.fixture
def play_pages(db):
    play = make_world()
    slug = play.campaign.slug
    return play, {
        "home": reverse("home"),
        "campaign": reverse("campaigns:campaign-detail", args=[slug]),
        "scene": reverse("table:scene-detail", args=[slug, play.scene.pk]),
        "sheets": reverse("sheets:sheet-list", args=[slug]),
        "sheet": play.ines.get_absolute_url(),
        "history": reverse("sheets:sheet-history", args=[slug, play.ines.pk]),
        "roll log": reverse("rolls:roll-log", args=[slug]),
        "drama": reverse("hitos:drama", args=[slug]),
        "combat": reverse("hitos:combat", args=[slug, play.scene.pk]),
        "horror": reverse("hitos:horror", args=[slug, play.scene.pk]),
        "feed": reverse("campaigns:scene-feed", args=[slug, play.scene.pk]),
        "options": reverse("hitos:campaign-options", args=[slug]),
    }


def test_head_answers_wherever_get_does(play_pages):
    play, pages = play_pages
    client = client_for(play.gm)
    pages["log-in"] = reverse("accounts:login")
    for name, url in pages.items():
        viewer = client_for(None) if name == "log-in" else client
        got, head = viewer.get(url), viewer.head(url)
        assert (name, got.status_code, head.status_code) == (name, 200, 200)
        assert head.content == b""
        assert head["Content-Type"] == got["Content-Type"]


def test_pages_and_json_are_compressed_for_clients_that_accept_it(play_pages):
    play, pages = play_pages
    client = client_for(play.gm)
    response = client.get(pages["scene"], headers={"Accept-Encoding": "gzip"})
    assert response["Content-Encoding"] == "gzip"
    assert play.scene.title in gzip.decompress(response.content).decode()
    assert "Accept-Encoding" in response["Vary"]
    plain = client.get(pages["scene"])
    assert not plain.has_header("Content-Encoding")


def test_a_feed_answers_a_conditional_request_with_304(play_pages):
    play, pages = play_pages
    client = client_for(None)
    first = client.get(pages["feed"])
    assert first.status_code == 200 and first.has_header("ETag") and first.has_header("Last-Modified")
    assert client.get(pages["feed"], headers={"If-None-Match": first["ETag"]}).status_code == 304
    assert client.get(pages["feed"], headers={"If-Modified-Since": first["Last-Modified"]}).status_code == 304
    write(play.scene, play.ana, "Algo nuevo se mueve en el sótano.", voice=Post.Voice.CHARACTER, character=play.ines)
    changed = client.get(pages["feed"], headers={"If-None-Match": first["ETag"]})
    assert changed.status_code == 200
