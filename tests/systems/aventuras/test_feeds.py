"""Issue 16 item 6 — Aventuras rolls are visible in the Atom feeds: each
post's entry lists its rolls (the final version's line, its purpose and its
permalink, where anyone can verify it); a whispered roll reaches only the
feeds of those who may read it; the feeds' queries do not grow with the rolls."""

from __future__ import annotations

import feedparser
import pytest
from django.urls import reverse

from campaigns.feeds import gm_feed_path
from campaigns.models import Campaign, Visibility
from table.models import TableRoll
from tests.conftest import client_for
from tests.factories import client_seed

pytestmark = pytest.mark.django_db


def _post_with_roll(world, *, purpose: str, recipients: str = "all", **extra) -> TableRoll:
    url = reverse("table:post-create", args=[world.campaign.slug, world.scene.pk])
    data = {
        "voice": f"character:{world.pc.pk}",
        "body": "Palomita aúlla.",
        "recipients": recipients,
        "submission_key": client_seed(),
        "tirada-0-attribute": "majo",
        "tirada-0-purpose": purpose,
        "tirada-0-client_seed": client_seed(),
        **extra,
    }
    assert client_for(world.player).post(url, data).status_code == 302
    return TableRoll.objects.filter(character=world.pc).latest("id")


def _entries(client, url) -> list:
    return feedparser.parse(client.get(url).content).entries


def test_the_public_feed_lists_a_posts_rolls_with_their_permalinks(aventuras_world):
    world = aventuras_world
    Campaign.objects.filter(pk=world.campaign.pk).update(visibility=Visibility.PUBLIC)
    roll = _post_with_roll(world, purpose="Convencer a <b>la puerta</b>")
    url = reverse("campaigns:campaign-feed", args=[world.campaign.slug])
    (entry,) = _entries(client_for(None), url)
    content = entry.content[0].value
    assert roll.latest.get_absolute_url() in content
    # The purpose is escaped, and the line is the game's own (A4, A8).
    assert "Convencer a &lt;b&gt;la puerta&lt;/b&gt;" in content
    assert "éxito" in content


def test_a_whispered_roll_is_only_a_link_in_every_feed(aventuras_world):
    """A sealed roll says only «Tirada privada» and its permalink, even in
    the GM's feed: a feed is a copy a feed reader keeps (the permalink shows
    the roll to whoever may read it)."""
    world = aventuras_world
    roll = _post_with_roll(world, purpose="Susurro a la dirección", recipients="gm")
    (entry,) = _entries(client_for(None), gm_feed_path(world.campaign))
    content = entry.content[0].value
    assert roll.latest.get_absolute_url() in content
    assert "Tirada privada" in content
    assert "Susurro a la dirección" not in content


def test_the_feeds_queries_do_not_grow_with_the_rolls(aventuras_world, django_assert_max_num_queries):
    world = aventuras_world
    url = gm_feed_path(world.campaign)
    _post_with_roll(world, purpose="Primera")
    # The campaign, its posts, their rolls, and the roll log's head (issue 18).
    with django_assert_max_num_queries(4):
        client_for(None).get(url)
    for n in range(6):
        _post_with_roll(world, purpose=f"Otra {n}", recipients="gm" if n % 2 else "all")
    with django_assert_max_num_queries(4):
        assert client_for(None).get(url).status_code == 200
