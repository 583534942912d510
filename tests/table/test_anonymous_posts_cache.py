"""Readers without an account get the scene's page of posts rendered once
per version of the scene (issue 13), and never a stale one: each change to
what the page shows moves the version."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from campaigns import services as forum
from campaigns.models import Post
from campaigns.permissions import campaign_access
from rolls.models import RollEntry
from systems.hitos.activations import services as activations
from systems.hitos.checks.services import check_setup, table_check
from systems.hitos.secret import services as secret
from tests.conftest import client_for, make_world
from tests.factories import client_seed, write


@pytest.fixture
def play(db):
    return make_world()


@pytest.fixture
def roll(play):
    return table_check(
        campaign=play.campaign,
        user=play.ana,
        setup=check_setup(play.ines, characteristic="reflejos", skill="Sigilo"),
        purpose="Cruzar el vestíbulo sin ruido",
        difficulty=15,
        character=play.ines,
        scene=play.scene,
        post=play.post,
        client_seed=client_seed(),
    )


def page(play) -> str:
    return client_for(None).get(play.scene.get_absolute_url()).text


def posts_part(html: str) -> str:
    return html[html.index('id="post-list"') : html.index('id="new-posts-bar"')]


def test_a_second_reader_gets_the_page_of_posts_without_a_post_query(play, roll):
    first = page(play)
    with CaptureQueriesContext(connection) as queries:
        second = page(play)
    assert posts_part(second) == posts_part(first)
    # No query reads posts or their rolls (a subquery of the secret rolls' list may name posts).
    tables = {q["sql"].split(" FROM ", 1)[-1].split()[0] for q in queries.captured_queries}
    assert not tables & {'"campaigns_post"', '"table_tableroll"'}


def test_a_new_post_shows_at_once(play):
    page(play)
    write(play.scene, play.bruno, "Tomás enciende la lámpara.", voice=Post.Voice.CHARACTER, character=play.tomas)
    assert "Tomás enciende la lámpara." in page(play)


def test_an_edit_shows_at_once(play):
    page(play)
    forum.post_edit(access=campaign_access(play.ana, play.campaign), post=play.post, body="Texto corregido.", note="")
    assert "Texto corregido." in page(play)


def test_a_hidden_post_hides_at_once(play):
    assert play.post.body_html.strip()[:20] in page(play)
    forum.post_hide(post=play.post, actor=play.gm, reason="Fuera de tono")
    text = page(play)
    assert "Mensaje oculto por la dirección" in text and "Fuera de tono" in text


def test_a_reroll_shows_its_new_version_at_once(play, roll):
    assert roll.latest.permalink in page(play)
    activations.activate_positive(
        table_roll=roll, user=play.ana, aspect_choice=f"a{play.ines_aspect.pk}", positions=[0], payment="point"
    )
    roll.refresh_from_db()
    assert roll.latest_id != roll.first_id
    assert roll.latest.permalink in page(play)


def test_an_activation_answer_shows_at_once(play, roll):
    activation = activations.activate_negative(
        table_roll=roll, user=play.gm, aspect_choice=f"a{play.ines_aspect.pk}", positions=[1]
    )
    before = page(play)
    activations.answer_negative(activation=activation, user=play.ana, accept=True)
    roll.refresh_from_db()
    after = page(play)
    assert posts_part(after) != posts_part(before)
    assert RollEntry.objects.get(pk=roll.latest_id).permalink in after


def test_each_language_has_its_own_page(play):
    spanish = page(play)
    english = client_for(None).get(play.scene.get_absolute_url(), headers={"Accept-Language": "en"}).text
    assert spanish != english


def test_a_revealed_secret_roll_shows_at_once(play):
    entry = secret.secret_free_roll(scene=play.scene, user=play.gm, notation="1d6", purpose="Lo que acecha")
    assert "Lo que acecha" not in page(play)
    secret.secret_roll_reveal(entry=entry, user=play.gm, access=campaign_access(play.gm, play.campaign))
    assert "Lo que acecha" in page(play)
