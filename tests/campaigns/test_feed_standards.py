"""The Atom feeds as a feed reader and RFC 4287 see them.

Every feed the site serves (a public scene's, a public campaign's, a member's
private one, the GM's private one) is read
by a real parser (feedparser: no ``bozo``) and checked against the elements
RFC 4287 requires: on the feed an id, a title, an updated date and an author
(there or on every entry), and the ``rel="self"`` link it recommends; on each
entry an id, a title, an updated date and content or an alternate link. Ids
are absolute addresses under ``SITE_URL`` (never the request's host), unique
and stable; untrusted text never becomes markup; conditional requests get 304.
"""

import io
import re
import xml.etree.ElementTree as ET
from datetime import timedelta
from html.parser import HTMLParser
from urllib.parse import urlsplit

import feedparser
import pytest
from django.urls import reverse
from django.utils import timezone

from campaigns.feeds import gm_feed_path
from campaigns.models import Membership, Post, Role, Visibility
from tests.factories import CampaignFactory, UserFactory
from tests.factories import add_member as member
from tests.factories import make_post as post
from tests.factories import make_scene as scene

pytestmark = pytest.mark.django_db

SITE = "https://mesa.example"
ATOM = "{http://www.w3.org/2005/Atom}"
# RFC 3339 date-time, as RFC 4287 §3.3 requires for atom:updated and atom:published.
RFC3339 = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$")


@pytest.fixture(autouse=True)
def _site_url(settings):
    settings.SITE_URL = SITE
    # The request comes in on another name: nothing in a feed may follow it.
    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "otro.example"]


@pytest.fixture
def party():
    gm = UserFactory(display_name="La Directora")
    campaign = CampaignFactory(title="La Marca", gm=gm, visibility=Visibility.PUBLIC)
    ana = member(campaign, display_name="Ana")
    bea = member(campaign, display_name="Bea")
    hall = scene(campaign, title="El faro")
    first = post(hall, ana, body="Subo **la escalera**.")
    edited = post(hall, campaign.gm, body="Hace frío.", voice=Post.Voice.NPC, npc_name="El farero")
    Post.objects.filter(pk=edited.pk).update(edited_at=timezone.now() + timedelta(minutes=5))
    hidden = post(hall, bea, body="Texto oculto", hidden=True, hidden_at=timezone.now() + timedelta(minutes=9))
    post(hall, bea, body="Susurro", recipients=Post.Recipients.GM)
    return {"campaign": campaign, "ana": ana, "bea": bea, "scene": hall, "posts": [first, edited, hidden]}


def _scene_feed(party) -> str:
    return reverse("campaigns:scene-feed", args=[party["campaign"].slug, party["scene"].pk])


def _member_feed(party, user) -> str:
    token = Membership.objects.get(user=user, campaign=party["campaign"]).feed_token
    return reverse("campaigns:member-feed", args=[token])


def _campaign_feed(party) -> str:
    return reverse("campaigns:campaign-feed", args=[party["campaign"].slug])


def _feed_urls(party) -> dict[str, str]:
    cogm = member(party["campaign"], role=Role.COGM, display_name="Codirección")
    return {
        "scene": _scene_feed(party),
        "campaign": _campaign_feed(party),
        "player": _member_feed(party, party["ana"]),
        "co-gm": _member_feed(party, cogm),
        "gm": gm_feed_path(party["campaign"]),
    }


def _parsed(response):
    assert response.status_code == 200
    assert response["Content-Type"] == "application/atom+xml; charset=utf-8"
    return feedparser.parse(
        io.BytesIO(response.content),
        response_headers={"content-type": response["Content-Type"]},
        sanitize_html=False,  # What the site sent, not what feedparser would clean.
    )


def _is_site_address(value: str) -> bool:
    parts = urlsplit(value)
    return value.startswith(f"{SITE}/") and parts.scheme == "https" and parts.netloc == "mesa.example"


class _Rfc4287:
    """What a feed lacks of RFC 4287's required elements (and of the
    rel="self" link it recommends), in words, in ``problems``."""

    def __init__(self, document: bytes, self_url: str):
        self.problems: list[str] = []
        root = ET.fromstring(document)
        if root.tag != f"{ATOM}feed":
            self.problems.append(f"the root is {root.tag}, not atom:feed")
            return
        feed_has_author = self.check_head(root, self_url)
        ids = [
            self.check_entry(entry, f"entry {n}", feed_has_author) for n, entry in enumerate(root.iter(f"{ATOM}entry"))
        ]
        if len(ids) != len(set(ids)):
            self.problems.append("two entries share an id")

    def exactly_one(self, parent, name: str, where: str) -> ET.Element | None:
        found = parent.findall(f"{ATOM}{name}")
        if len(found) != 1:
            self.problems.append(f"{where} has {len(found)} atom:{name}, not one")
            return None
        return found[0]

    def check_date(self, element, where: str) -> None:
        if element is not None and not RFC3339.match(element.text or ""):
            self.problems.append(f"{where}'s date {element.text!r} is not RFC 3339")

    def check_authors(self, parent, where: str) -> bool:
        authors = parent.findall(f"{ATOM}author")
        for author in authors:
            names = author.findall(f"{ATOM}name")
            if len(names) != 1 or not (names[0].text or "").strip():
                self.problems.append(f"an author of {where} has no single, non-empty atom:name")
        return bool(authors)

    def check_id(self, parent, where: str) -> str | None:
        found = self.exactly_one(parent, "id", where)
        if found is None:
            return None
        if not _is_site_address(found.text or ""):
            self.problems.append(f"{where}'s id {found.text!r} is not an address under SITE_URL")
        return found.text

    def check_links(self, links, where: str) -> None:
        for link in links:
            if not _is_site_address(link.get("href", "")):
                self.problems.append(f"{where}'s link {link.get('href')!r} is not under SITE_URL")

    def check_head(self, root, self_url: str) -> bool:
        self.check_id(root, "the feed")
        self.exactly_one(root, "title", "the feed")
        self.check_date(self.exactly_one(root, "updated", "the feed"), "the feed")
        has_author = self.check_authors(root, "the feed")
        links = root.findall(f"{ATOM}link")
        selves = [link.get("href") for link in links if link.get("rel") == "self"]
        if selves != [self_url]:
            self.problems.append(f"the feed's rel=self links are {selves}, not [{self_url!r}]")
        if len([link for link in links if link.get("rel", "alternate") == "alternate"]) > 1:
            self.problems.append("the feed has more than one alternate link")
        self.check_links(links, "the feed")
        return has_author

    def check_entry(self, entry, where: str, feed_has_author: bool) -> str | None:
        entry_id = self.check_id(entry, where)
        self.exactly_one(entry, "title", where)
        self.check_date(self.exactly_one(entry, "updated", where), where)
        for published in entry.findall(f"{ATOM}published"):
            self.check_date(published, where)
        if not self.check_authors(entry, where) and not feed_has_author:
            self.problems.append(f"{where} has no author, and neither has the feed")
        links = entry.findall(f"{ATOM}link")
        alternates = [link for link in links if link.get("rel", "alternate") == "alternate"]
        if not entry.findall(f"{ATOM}content") and not alternates:
            self.problems.append(f"{where} has neither atom:content nor an alternate link")
        self.check_links(links, where)
        return entry_id


def rfc4287_problems(document: bytes, self_url: str) -> list[str]:
    return _Rfc4287(document, self_url).problems


# --- the checker itself ------------------------------------------------------------------


def test_the_checker_finds_what_a_feed_lacks():
    bare = (
        b'<feed xmlns="http://www.w3.org/2005/Atom"><title>T</title><updated>2026-13-01</updated>'
        b'<link rel="self" href="http://testserver/f/"/>'
        b"<entry><id>https://mesa.example/p/1/</id><updated>2026-01-01T00:00:00Z</updated></entry>"
        b"<entry><id>https://mesa.example/p/1/</id><title>B</title><updated>2026-01-01T00:00:00Z</updated>"
        b"<author><name>Ana</name></author><content>x</content></entry></feed>"
    )
    assert rfc4287_problems(bare, f"{SITE}/f/") == [
        "the feed has 0 atom:id, not one",
        "the feed's date '2026-13-01' is not RFC 3339",
        "the feed's rel=self links are ['http://testserver/f/'], not ['https://mesa.example/f/']",
        "the feed's link 'http://testserver/f/' is not under SITE_URL",
        "entry 0 has 0 atom:title, not one",
        "entry 0 has no author, and neither has the feed",
        "entry 0 has neither atom:content nor an alternate link",
        "two entries share an id",
    ]


# --- every feed ------------------------------------------------------------------------


@pytest.mark.parametrize("feed", ["scene", "campaign", "player", "co-gm", "gm"])
def test_every_feed_parses_cleanly_and_has_what_rfc_4287_requires(client, party, feed):
    url = _feed_urls(party)[feed]
    response = client.get(url, HTTP_HOST="otro.example")
    parsed = _parsed(response)
    assert parsed.bozo == 0, parsed.get("bozo_exception")
    assert parsed.version == "atom10"
    assert rfc4287_problems(response.content, f"{SITE}{url}") == []
    assert parsed.feed.id == f"{SITE}{url}"
    assert parsed.feed.author == "La Directora"
    page = party["scene"] if feed == "scene" else party["campaign"]
    assert parsed.feed.link == f"{SITE}{page.get_absolute_url()}"
    assert "otro.example" not in response.content.decode() and "testserver" not in response.content.decode()


def test_entries_carry_absolute_permalinks_as_ids_authors_and_dates(client, party):
    first, edited, hidden = party["posts"]
    parsed = _parsed(client.get(_member_feed(party, party["ana"])))
    entries = {entry.id: entry for entry in parsed.entries}
    assert list(entries) == [f"{SITE}/mensajes/{p.pk}/" for p in (hidden, edited, first)]
    for written in (first, edited, hidden):
        entry = entries[f"{SITE}/mensajes/{written.pk}/"]
        assert entry.link == entry.id
        assert entry.published_parsed is not None
    assert entries[f"{SITE}/mensajes/{first.pk}/"].author == "Ana"
    assert entries[f"{SITE}/mensajes/{edited.pk}/"].author == "El farero"
    # A hidden post still has an author, the direction's placeholder, and never its writer's name.
    hidden_entry = entries[f"{SITE}/mensajes/{hidden.pk}/"]
    assert hidden_entry.author == "La dirección de la partida"
    assert hidden_entry.content[0].value == "<p>Mensaje oculto por la dirección.</p>"
    # An edit, and hiding a post, move the entry's updated date so readers fetch it again.
    edited.refresh_from_db()
    hidden.refresh_from_db()
    assert entries[f"{SITE}/mensajes/{edited.pk}/"].updated == edited.edited_at.isoformat()
    assert hidden_entry.updated == hidden.hidden_at.isoformat()
    assert entries[f"{SITE}/mensajes/{first.pk}/"].updated == first.created_at.isoformat()


def test_ids_do_not_change_with_the_host_or_between_feeds(client, party):
    url = _scene_feed(party)
    here = _parsed(client.get(url))
    there = _parsed(client.get(url, HTTP_HOST="otro.example", secure=True))
    assert [e.id for e in here.entries] == [e.id for e in there.entries]
    assert here.feed.id == there.feed.id
    # The same post is the same entry in the public and the private feed.
    private = _parsed(client.get(_member_feed(party, party["ana"])))
    assert {e.id for e in here.entries} <= {e.id for e in private.entries}
    # Two members' feeds are two feeds: their ids differ.
    other = _parsed(client.get(_member_feed(party, party["bea"])))
    assert other.feed.id != private.feed.id
    # The campaign's public feed and the GM's hold the same entries under the same ids.
    campaign_wide = _parsed(client.get(_campaign_feed(party), HTTP_HOST="otro.example"))
    gm = _parsed(client.get(gm_feed_path(party["campaign"]), secure=True))
    assert {e.id for e in here.entries} == {e.id for e in campaign_wide.entries}
    assert {e.id for e in private.entries} <= {e.id for e in gm.entries}
    assert len({private.feed.id, campaign_wide.feed.id, gm.feed.id, here.feed.id}) == 4


@pytest.mark.parametrize("feed", ["scene", "campaign", "gm"])
def test_an_empty_feed_is_still_a_valid_feed(client, feed):
    campaign = CampaignFactory(visibility=Visibility.PUBLIC)
    empty = scene(campaign)
    url, since = {
        "scene": (reverse("campaigns:scene-feed", args=[campaign.slug, empty.pk]), empty.created_at),
        "campaign": (reverse("campaigns:campaign-feed", args=[campaign.slug]), campaign.created_at),
        "gm": (gm_feed_path(campaign), campaign.created_at),
    }[feed]
    response = client.get(url)
    parsed = _parsed(response)
    assert parsed.bozo == 0
    assert parsed.entries == []
    assert rfc4287_problems(response.content, f"{SITE}{url}") == []
    # It dates from what it follows, not from the request: a reader polling it gets 304.
    assert parsed.feed.updated == since.isoformat()
    assert client.get(url, HTTP_IF_NONE_MATCH=response["ETag"]).status_code == 304


# --- untrusted text ------------------------------------------------------------------------


class _Elements(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags: list[str] = []
        self.attributes: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.attributes.extend(name for name, _value in attrs)


@pytest.mark.parametrize("feed", ["scene", "campaign", "member", "gm"])
def test_markup_in_posts_and_names_never_becomes_an_element(client, feed):
    payload = "<script>alert(1)</script><img src=x onerror=alert(1)>"
    campaign = CampaignFactory(title=f"La {payload}", visibility=Visibility.PUBLIC)
    ana = member(campaign, display_name=f"Ana {payload}")
    target = scene(campaign, title=f"Escena {payload}")
    post(target, ana, body=f"Texto {payload}")
    post(target, campaign.gm, body=payload, voice=Post.Voice.NPC, npc_name=payload[:80])
    url = {
        "scene": reverse("campaigns:scene-feed", args=[campaign.slug, target.pk]),
        "campaign": reverse("campaigns:campaign-feed", args=[campaign.slug]),
        "member": reverse("campaigns:member-feed", args=[Membership.objects.get(user=ana).feed_token]),
        "gm": gm_feed_path(campaign),
    }[feed]
    parsed = _parsed(client.get(url))
    assert parsed.bozo == 0
    # Names and titles are plain text: exactly what was typed.
    assert f"La {payload}" in parsed.feed.title
    assert [e.author for e in parsed.entries] == [payload[:80], f"Ana {payload}"]
    assert parsed.entries[0].title_detail.type == "text/plain"
    for entry in parsed.entries:
        [content] = entry.content
        assert content.type == "text/html"
        elements = _Elements()
        elements.feed(content.value)
        assert "script" not in elements.tags and "img" not in elements.tags
        assert not [name for name in elements.attributes if name.startswith("on")]
    assert parsed.entries[1].content[0].value.startswith("<p>Texto")


# --- conditional requests ------------------------------------------------------------------


@pytest.mark.parametrize("feed", ["scene", "campaign", "player", "gm"])
def test_a_reader_that_has_the_feed_gets_304_until_it_changes(client, party, feed):
    url = _feed_urls(party)[feed]
    first = client.get(url)
    etag, modified = first["ETag"], first["Last-Modified"]
    assert client.get(url, HTTP_IF_NONE_MATCH=etag).status_code == 304
    assert client.get(url, HTTP_IF_MODIFIED_SINCE=modified).status_code == 304
    later = timezone.now() + timedelta(hours=1)
    post(party["scene"], party["bea"], body="Algo nuevo")
    Post.objects.filter(body="Algo nuevo").update(created_at=later)
    changed = client.get(url, HTTP_IF_NONE_MATCH=etag)
    assert changed.status_code == 200
    assert "Algo nuevo" in changed.content.decode()
    assert changed["ETag"] != etag
    assert client.get(url, HTTP_IF_MODIFIED_SINCE=modified).status_code == 200


def test_the_scene_feed_queries_do_not_grow_with_the_number_of_posts(client, party, django_assert_max_num_queries):
    url = _scene_feed(party)
    with django_assert_max_num_queries(3) as few:
        client.get(url)
    for _ in range(20):
        post(party["scene"], party["ana"], body="Más")
    with django_assert_max_num_queries(len(few)):
        client.get(url)
