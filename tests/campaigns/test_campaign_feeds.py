"""The campaign-wide feeds (issue 14): the public one of a public campaign,
the GM's private one (the GM has no membership, so no member feed) and its
renewal from the dashboard, the autodiscovery ``<link>``s the campaign and
scene pages carry for the reader, and the addresses they share, all under
``SITE_URL``. Validity against RFC 4287 is in test_feed_standards.py."""

from __future__ import annotations

import io
import re
from datetime import timedelta

import feedparser
import pytest
from django.contrib.messages import get_messages
from django.core.cache import cache
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from campaigns import feeds, services
from campaigns.feeds import gm_feed_path, gm_feed_token
from campaigns.models import Campaign, Membership, Post, Role
from campaigns.templatetags import site_links
from tests.conftest import client_for
from tests.factories import make_post as post
from tests.factories import make_scene as scene

pytestmark = pytest.mark.django_db

SITE = "https://mesa.example"
LINK = re.compile(r'<link rel="alternate" type="application/atom\+xml" title="([^"]*)" href="([^"]*)">')


@pytest.fixture(autouse=True)
def _site_url(settings):
    settings.SITE_URL = SITE
    # Requests come in on another name: nothing shared may follow it.
    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "otro.example"]


@pytest.fixture
def story(table):
    """Besides the table's scene and post: a whisper to the GM, a message to
    one chosen player, a hidden post, and a scene only Bruno was chosen for."""
    t = table
    whisper = post(t.scene, t.player, body="Solo para la dirección", recipients=Post.Recipients.GM)
    chosen = post(t.scene, t.gm, body="Solo para Bruno", recipients=Post.Recipients.CHOSEN, chosen=[t.other])
    hidden = post(t.scene, t.other, body="Texto ocultado", hidden=True, hidden_at=timezone.now())
    secret_scene = scene(t.campaign, title="La cripta", everyone=False, participants=[t.other])
    secret = post(secret_scene, t.other, body="Bajo solo a la cripta")
    return {"whisper": whisper, "chosen": chosen, "hidden": hidden, "secret": secret, "secret_scene": secret_scene}


def _parsed(response):
    assert response.status_code == 200
    assert response["Content-Type"] == "application/atom+xml; charset=utf-8"
    parsed = feedparser.parse(io.BytesIO(response.content), response_headers={"content-type": response["Content-Type"]})
    assert parsed.bozo == 0, parsed.get("bozo_exception")
    return parsed


def _post_ids(parsed) -> list[int]:
    return [int(entry.id.rstrip("/").rsplit("/", 1)[1]) for entry in parsed.entries]


def _campaign_feed(campaign: Campaign) -> str:
    return reverse("campaigns:campaign-feed", args=[campaign.slug])


# --- the public campaign feed ----------------------------------------------------------


def test_the_campaign_feed_holds_the_public_posts_of_every_open_scene_and_nothing_else(client, table, story):
    other_scene = scene(table.campaign, title="El jardín")
    garden = post(other_scene, table.player, body="Salgo al jardín.")
    parsed = _parsed(client.get(_campaign_feed(table.campaign)))
    offgame_posts = list(
        Post.objects.filter(scene__campaign=table.campaign, scene__is_offgame=True).values_list("pk", flat=True)
    )
    assert _post_ids(parsed) == sorted([garden.pk, table.post.pk, *offgame_posts], reverse=True)
    assert parsed.feed.title == "«La mansión» en Hitos"
    assert parsed.feed.id == f"{SITE}{_campaign_feed(table.campaign)}"
    assert parsed.feed.link == f"{SITE}{table.campaign.get_absolute_url()}"
    # Each entry names its scene.
    by_id = dict(zip(_post_ids(parsed), parsed.entries, strict=True))
    assert [tag.term for tag in by_id[garden.pk].tags] == ["El jardín"]
    assert [tag.term for tag in by_id[table.post.pk].tags] == ["El vestíbulo"]
    text = " ".join(entry.content[0].value for entry in parsed.entries)
    for kept_out in ("Solo para la dirección", "Solo para Bruno", "Texto ocultado", "Bajo solo a la cripta"):
        assert kept_out not in text


def test_a_private_campaign_has_no_public_feed(client, private_table):
    url = _campaign_feed(private_table.campaign)
    assert client.get(url).status_code == 404
    # Not even for its members: theirs is the private feed.
    assert client_for(private_table.player).get(url).status_code == 404
    assert client.get(reverse("campaigns:campaign-feed", args=["no-existe"])).status_code == 404


def test_the_campaign_feed_answers_304_until_a_post_arrives(client, table):
    url = _campaign_feed(table.campaign)
    first = client.get(url)
    assert client.get(url, HTTP_IF_NONE_MATCH=first["ETag"]).status_code == 304
    assert client.get(url, HTTP_IF_MODIFIED_SINCE=first["Last-Modified"]).status_code == 304
    new = post(table.scene, table.other, body="Algo nuevo")
    Post.objects.filter(pk=new.pk).update(created_at=timezone.now() + timedelta(hours=1))
    changed = client.get(url, HTTP_IF_NONE_MATCH=first["ETag"])
    assert changed.status_code == 200
    assert changed["ETag"] != first["ETag"]
    assert "Algo nuevo" in changed.content.decode()


def test_the_campaign_feed_queries_do_not_grow_with_its_posts(client, table, django_assert_max_num_queries):
    # The campaign, its posts, their rolls (``table.feeds``: the posts here have none), and the log's head.
    url = _campaign_feed(table.campaign)
    with django_assert_max_num_queries(4):
        client.get(url)
    for n in range(20):
        post(table.scene, table.player, body=f"Más {n}")
    with django_assert_max_num_queries(4):
        client.get(url)


# --- the GM's private feed -----------------------------------------------------------------


def test_the_gm_feed_holds_everything_in_the_campaign_whispers_included(client, table, story):
    url = gm_feed_path(table.campaign)
    response = client.get(url, HTTP_HOST="otro.example")
    parsed = _parsed(response)
    everything = Post.objects.filter(scene__campaign=table.campaign).order_by("-id").values_list("pk", flat=True)
    assert _post_ids(parsed) == list(everything)
    assert {story["whisper"].pk, story["chosen"].pk, story["secret"].pk} <= set(_post_ids(parsed))
    assert parsed.feed.title == "«La mansión» en Hitos: dirección"
    assert parsed.feed.id == f"{SITE}{url}"
    # A hidden post is a placeholder here too: its text stays on the site.
    hidden = dict(zip(_post_ids(parsed), parsed.entries, strict=True))[story["hidden"].pk]
    assert hidden.content[0].value == "<p>Mensaje oculto por la dirección.</p>"
    assert "Texto ocultado" not in response.content.decode()
    # A secret address: no shared cache keeps it, no search engine lists it.
    assert "private" in response["Cache-Control"]
    assert response["X-Robots-Tag"] == "noindex"


def test_the_gm_feed_answers_304_until_a_whisper_arrives(client, table):
    url = gm_feed_path(table.campaign)
    first = client.get(url)
    assert client.get(url, HTTP_IF_NONE_MATCH=first["ETag"]).status_code == 304
    assert client.get(url, HTTP_IF_MODIFIED_SINCE=first["Last-Modified"]).status_code == 304
    whisper = post(table.scene, table.player, body="Un susurro nuevo", recipients=Post.Recipients.GM)
    Post.objects.filter(pk=whisper.pk).update(created_at=timezone.now() + timedelta(hours=1))
    changed = client.get(url, HTTP_IF_NONE_MATCH=first["ETag"])
    assert changed.status_code == 200
    assert "Un susurro nuevo" in changed.content.decode()


def test_a_wrong_token_or_another_campaigns_id_finds_no_gm_feed(client, table, private_table):
    token = gm_feed_token(table.campaign)
    assert client.get(reverse("campaigns:gm-feed", args=[table.campaign.pk, token[:-1] + "x"])).status_code == 404
    assert client.get(reverse("campaigns:gm-feed", args=[private_table.campaign.pk, token])).status_code == 404
    assert client.get(reverse("campaigns:gm-feed", args=[0, token])).status_code == 404
    # Each campaign's GM token is its own, even for the same GM.
    assert gm_feed_token(table.campaign) != gm_feed_token(private_table.campaign)


def test_renewing_the_key_ends_the_old_address(client, table):
    old = gm_feed_path(table.campaign)
    assert client.get(old).status_code == 200
    feeds.gm_feed_rotate(campaign=table.campaign)
    table.campaign.refresh_from_db()
    assert client.get(old).status_code == 404
    assert client.get(gm_feed_path(table.campaign)).status_code == 200


def test_handing_the_campaign_over_ends_the_previous_gms_address(client, table):
    old = gm_feed_path(table.campaign)
    services.campaign_hand_over(campaign=table.campaign, actor=table.gm, membership=table.membership(table.cogm))
    campaign = Campaign.objects.get(pk=table.campaign.pk)
    assert client.get(old).status_code == 404
    new = gm_feed_path(campaign)
    assert new != old
    assert client.get(new).status_code == 200


def test_a_deactivated_gm_has_no_feed(client, table):
    url = gm_feed_path(table.campaign)
    table.gm.is_active = False
    table.gm.save(update_fields=["is_active"])
    assert client.get(url).status_code == 404


def test_the_gm_feed_queries_do_not_grow_with_its_posts(client, table, story, django_assert_max_num_queries):
    url = gm_feed_path(table.campaign)
    with django_assert_max_num_queries(4):
        client.get(url)
    for n in range(20):
        post(story["secret_scene"], table.other, body=f"Más {n}", recipients=Post.Recipients.GM)
    with django_assert_max_num_queries(4):
        client.get(url)


# --- renewing the GM's address ---------------------------------------------------------------


def _rotate_url(campaign: Campaign) -> str:
    return reverse("campaigns:gm-feed-rotate", args=[campaign.slug])


def test_the_gm_renews_the_address_and_is_told_so(table):
    old_key = table.campaign.gm_feed_key
    client = client_for(table.gm)
    response = client.post(_rotate_url(table.campaign))
    assert response.status_code == 302
    assert response.url == reverse("campaigns:dashboard", args=[table.campaign.slug]) + "#canal-privado"
    assert [str(m) for m in get_messages(response.wsgi_request)] == [
        "Tu canal privado tiene una dirección nueva: la anterior ya no funciona."
    ]
    table.campaign.refresh_from_db()
    assert table.campaign.gm_feed_key != old_key
    assert len(table.campaign.gm_feed_key) == 32


def test_renewing_from_htmx_loads_the_dashboard_again(table):
    client = client_for(table.gm)
    response = client.post(_rotate_url(table.campaign), headers={"HX-Request": "true"})
    assert response.status_code == 200
    assert response["HX-Redirect"] == reverse("campaigns:dashboard", args=[table.campaign.slug]) + "#canal-privado"
    assert response.content == b""


@pytest.mark.parametrize("standing", ["cogm", "player", "reader", "outsider"])
def test_only_the_gm_renews_the_address(table, standing):
    old_key = table.campaign.gm_feed_key
    response = client_for(table.user(standing)).post(_rotate_url(table.campaign))
    assert response.status_code == 403
    table.campaign.refresh_from_db()
    assert table.campaign.gm_feed_key == old_key


def test_an_outsider_of_a_private_campaign_gets_404_and_a_get_gets_405(private_table):
    assert client_for(private_table.outsider).post(_rotate_url(private_table.campaign)).status_code == 404
    assert client_for(private_table.gm).get(_rotate_url(private_table.campaign)).status_code == 405
    anonymous = client_for(None).post(_rotate_url(private_table.campaign))
    assert anonymous.status_code == 302
    assert anonymous.url.startswith(reverse("accounts:login"))


# --- the dashboard -------------------------------------------------------------------------


def test_the_dashboard_shows_the_gm_their_feed_and_shares_invitations_from_site_url(table):
    response = client_for(table.gm).get(
        reverse("campaigns:dashboard", args=[table.campaign.slug]), HTTP_HOST="otro.example"
    )
    html = response.content.decode()
    assert (
        f'<code class="user-select-all text-break" id="gm-feed-url">{SITE}{gm_feed_path(table.campaign)}</code>' in html
    )
    assert f'action="{_rotate_url(table.campaign)}"' in html
    assert f'<code class="user-select-all text-break">{SITE}/invitacion/{table.invitation.token}/</code>' in html
    assert f'href="{SITE}{_campaign_feed(table.campaign)}"' in html
    assert "otro.example" not in html and "testserver" not in html


def test_a_cogm_sees_their_own_feed_on_the_dashboard_and_never_the_gms(table, private_table):
    response = client_for(private_table.cogm).get(reverse("campaigns:dashboard", args=[private_table.campaign.slug]))
    html = response.content.decode()
    token = private_table.membership(private_table.cogm).feed_token
    assert f"{SITE}{reverse('campaigns:member-feed', args=[token])}" in html
    assert gm_feed_token(private_table.campaign) not in html
    assert "gm-feed-rotate" not in html and _rotate_url(private_table.campaign) not in html
    # A private campaign offers no public feed.
    assert _campaign_feed(private_table.campaign) not in html


def test_the_dashboard_asks_no_more_queries_for_the_feed(table, django_assert_max_num_queries):
    client = client_for(table.gm)
    url = reverse("campaigns:dashboard", args=[table.campaign.slug])
    client.get(url)
    # As many as before it showed the feed: the address is computed from the campaign's row
    # (13 since the dashboard shows deadlines that passed, who is away and whose character is
    # taken over: issue 17).
    with django_assert_max_num_queries(13):
        client.get(url)


# --- autodiscovery ------------------------------------------------------------------------


def _links(response) -> list[tuple[str, str]]:
    head = response.content.decode().split("</head>")[0]
    return LINK.findall(head)


def _campaign_page(table) -> str:
    return reverse("campaigns:campaign-detail", args=[table.campaign.slug])


def _scene_page(table, scene_obj=None) -> str:
    return reverse("table:scene-detail", args=[table.campaign.slug, (scene_obj or table.scene).pk])


def _member_feed(table, user) -> str:
    return f"{SITE}{reverse('campaigns:member-feed', args=[table.membership(user).feed_token])}"


def test_a_visitor_of_a_public_campaign_is_offered_its_public_feeds_only(table):
    campaign_feed = ("«La mansión»: mensajes públicos", f"{SITE}{_campaign_feed(table.campaign)}")
    scene_feed = (
        "«El vestíbulo»: mensajes públicos de la escena",
        f"{SITE}{reverse('campaigns:scene-feed', args=[table.campaign.slug, table.scene.pk])}",
    )
    for standing in ("anonymous", "outsider"):
        client = table.client(standing)
        assert _links(client.get(_campaign_page(table), HTTP_HOST="otro.example")) == [campaign_feed]
        assert _links(client.get(_scene_page(table))) == [scene_feed, campaign_feed]


def test_each_member_is_offered_their_own_private_feed_first(table):
    public = [("«La mansión»: mensajes públicos", f"{SITE}{_campaign_feed(table.campaign)}")]
    for standing in ("player", "other", "reader", "cogm"):
        user = table.user(standing)
        links = _links(table.client(standing).get(_campaign_page(table)))
        assert links == [("«La mansión»: tu canal privado", _member_feed(table, user)), *public]
    gm_links = _links(table.client("gm").get(_campaign_page(table)))
    assert gm_links == [
        ("«La mansión»: tu canal privado de dirección", f"{SITE}{gm_feed_path(table.campaign)}"),
        *public,
    ]


def test_no_page_carries_a_private_address_that_is_not_its_readers(table):
    """The campaign page is cached per reader and the head's frame per
    process: read in turn by everyone, no page shows another's token."""
    secrets = {standing: table.membership(table.user(standing)).feed_token for standing in ("player", "other", "cogm")}
    secrets["gm"] = gm_feed_token(table.campaign)
    for _round in range(2):
        for standing in ("anonymous", "outsider", "reader", "player", "other", "cogm", "gm"):
            client = table.client(standing)
            for url in (_campaign_page(table), _scene_page(table)):
                html = client.get(url).content.decode()
                assert [owner for owner, token in secrets.items() if token in html] == (
                    [standing] if standing in secrets else []
                )


def test_a_scene_not_open_to_everyone_announces_no_public_scene_feed(table, story):
    links = _links(table.client("other").get(_scene_page(table, story["secret_scene"])))
    assert links == [
        ("«La mansión»: tu canal privado", _member_feed(table, table.other)),
        ("«La mansión»: mensajes públicos", f"{SITE}{_campaign_feed(table.campaign)}"),
    ]


def test_a_private_campaign_announces_only_the_readers_private_feed(private_table):
    t = private_table
    assert _links(t.client("player").get(_campaign_page(t))) == [
        ("«La mansión»: tu canal privado", _member_feed(t, t.player))
    ]
    assert _links(t.client("gm").get(_scene_page(t))) == [
        ("«La mansión»: tu canal privado de dirección", f"{SITE}{gm_feed_path(t.campaign)}")
    ]


def test_other_pages_announce_no_feed(table):
    for url in (
        reverse("home"),
        reverse("campaigns:dashboard", args=[table.campaign.slug]),
        reverse("campaigns:campaign-search", args=[table.campaign.slug]) + "?q=puerta",
    ):
        assert _links(table.client("gm").get(url)) == []


def test_the_htmx_scene_fragment_has_no_head(table):
    response = table.client("player").get(_scene_page(table), headers={"HX-Request": "true"})
    assert response.status_code == 200
    assert "<head>" not in response.content.decode()
    assert _links(response) == []


@pytest.mark.parametrize("standing", ["anonymous", "player", "gm"])
@pytest.mark.parametrize("page", ["campaign", "scene"])
def test_announcing_the_feeds_asks_the_database_nothing(table, monkeypatch, django_assert_num_queries, standing, page):
    client = table.client(standing)
    url = _campaign_page(table) if page == "campaign" else _scene_page(table)
    client.get(url)  # the caches are warm, as for most visits
    monkeypatch.setattr(site_links, "FEED_PAGES", frozenset())
    cache.clear()  # a page kept whole (a player's scene) is kept again without the links
    client.get(url)
    with CaptureQueriesContext(connection) as without:
        assert _links(client.get(url)) == []
    expected = len(without)  # read before the next request empties the connection's log
    monkeypatch.undo()
    cache.clear()
    client.get(url)
    with django_assert_num_queries(expected):
        assert _links(client.get(url)) != []


def test_a_member_who_left_is_offered_no_private_feed(table):
    membership = table.membership(table.player)
    membership.status = Membership.Status.LEFT
    membership.save(update_fields=["status"])
    links = _links(table.client("player").get(_campaign_page(table)))
    assert links == [("«La mansión»: mensajes públicos", f"{SITE}{_campaign_feed(table.campaign)}")]


def test_a_member_made_co_gm_keeps_their_member_feed(table):
    membership = table.membership(table.player)
    membership.role = Role.COGM
    membership.save(update_fields=["role"])
    links = _links(table.client("player").get(_campaign_page(table)))
    assert links[0] == ("«La mansión»: tu canal privado", _member_feed(table, table.player))


def test_autodiscovery_titles_are_escaped(table):
    table.campaign.title = 'La "mansión" <b>'
    table.campaign.save(update_fields=["title"])
    html = table.client("anonymous").get(_campaign_page(table)).content.decode()
    assert 'title="«La &quot;mansión&quot; &lt;b&gt;»: mensajes públicos"' in html
    assert "<b>" not in html.split("</head>")[0]


def test_the_invitation_message_shares_the_site_url_address(table):
    response = client_for(table.gm).post(
        reverse("campaigns:invitation-create", args=[table.campaign.slug]),
        {"role": "player", "days": 7, "max_uses": 2},
        HTTP_HOST="otro.example",
        follow=True,
    )
    invitation = table.campaign.invitations.latest("pk")
    assert f"Invitación creada: {SITE}/invitacion/{invitation.token}/" in [str(m) for m in response.context["messages"]]
