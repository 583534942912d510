"""The "hay mensajes nuevos" poll answers from the scene's version in the
cache when nothing was published (issue 13): no post is read."""

from __future__ import annotations

import re

import pytest
from django.core.cache import cache
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from campaigns.models import Post, Visibility
from campaigns.versions import scene_version
from tests.conftest import client_for, make_world
from tests.factories import write

HX = {"HX-Request": "true"}


@pytest.fixture
def play(db):
    cache.clear()
    return make_world()


@pytest.fixture
def private_play(db):
    return make_world(Visibility.PRIVATE)


def _poll_url(play) -> str:
    return reverse("table:scene-poll", args=[play.campaign.slug, play.scene.pk])


def _bar_version(html: str) -> str:
    return re.search(r"[?&](?:amp;)?v=(\d+)", html).group(1)


def test_nothing_published_answers_204_without_reading_a_post(play):
    client = client_for(play.ana)
    page = client.get(play.scene.get_absolute_url())
    version = _bar_version(page.text)
    with CaptureQueriesContext(connection) as queries:
        response = client.get(_poll_url(play), {"despues": play.post.pk, "v": version}, headers=HX)
    assert response.status_code == 204
    assert response.content == b""
    assert not [q for q in queries.captured_queries if "campaigns_post" in q["sql"]]


def test_a_new_post_moves_the_version_and_the_poll_counts_it(play, django_capture_on_commit_callbacks):
    client = client_for(play.ana)
    version = _bar_version(client.get(play.scene.get_absolute_url()).text)
    with django_capture_on_commit_callbacks(execute=True):
        write(play.scene, play.bruno, "Alguien baja la escalera.", voice=Post.Voice.CHARACTER, character=play.tomas)
    response = client.get(_poll_url(play), {"despues": play.post.pk, "v": version}, headers=HX)
    assert response.status_code == 200
    assert response.context["new_count"] == 1
    assert _bar_version(response.text) == str(scene_version(play.scene.pk)) != version
    again = client.get(_poll_url(play), {"despues": play.post.pk, "v": _bar_version(response.text)}, headers=HX)
    assert again.status_code == 204


def test_the_version_moves_when_a_post_is_written_and_again_when_it_commits(play, django_capture_on_commit_callbacks):
    before = scene_version(play.scene.pk)
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        write(play.scene, play.bruno, "Llega.")
        during = scene_version(play.scene.pk)
    # A reader between the two kept nothing under the version that follows the commit.
    assert before != during != scene_version(play.scene.pk)
    assert callbacks


def test_a_version_lost_by_the_cache_never_matches_an_old_one(play):
    old = scene_version(play.scene.pk)
    cache.clear()
    assert scene_version(play.scene.pk) != old
    response = client_for(play.ana).get(_poll_url(play), {"despues": play.post.pk, "v": old}, headers=HX)
    assert response.status_code == 200


def test_an_outsider_gets_404_whatever_version_they_send(private_play):
    version = scene_version(private_play.scene.pk)
    response = client_for(private_play.outsider).get(_poll_url(private_play), {"v": version})
    assert response.status_code == 404
