import xml.etree.ElementTree as ET
from html.parser import HTMLParser

import pytest
from django.utils import timezone

from campaigns.markup import render_markdown
from campaigns.models import Membership, Post, Role, Visibility
from tests.factories import CampaignFactory, UserFactory
from tests.factories import add_member as member
from tests.factories import make_post as post
from tests.factories import make_scene as scene

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.campaigns.feed_urls")]


@pytest.fixture(autouse=True)
def _site_url(settings):
    # Links are the public site's, whatever host the request came in on.
    settings.SITE_URL = "https://mesa.example"


ATOM = "{http://www.w3.org/2005/Atom}"

XSS_PAYLOADS = [
    "<script>alert(1)</script>",
    '"><img src=x onerror=alert(1)>',
    "<svg/onload=alert(1)>",
    "javascript:alert(1)",
    "<iframe src=javascript:alert(1)>",
    "]]><script>alert(1)</script>",
    "&lt;script&gt;alert(1)&lt;/script&gt;",
    "<a href='javascript:alert(1)'>x</a>",
    "<body onload=alert(1)>",
    "{{ secret }}{% debug %}",
]


def _scene_feed_url(scene_obj) -> str:
    return f"/test-feeds/{scene_obj.campaign.slug}/escenas/{scene_obj.pk}/atom/"


def _member_feed_url(user, campaign) -> str:
    token = Membership.objects.get(user=user, campaign=campaign).feed_token
    return f"/test-feeds/canal/{token}/"


def _entries(response) -> list[dict[str, str]]:
    assert response.status_code == 200
    assert response["Content-Type"] == "application/atom+xml; charset=utf-8"
    root = ET.fromstring(response.content)
    return [
        {
            "title": entry.findtext(f"{ATOM}title"),
            "content": entry.findtext(f"{ATOM}content"),
            "link": entry.find(f"{ATOM}link").get("href"),
            "author": entry.findtext(f"{ATOM}author/{ATOM}name"),
        }
        for entry in root.iter(f"{ATOM}entry")
    ]


class _TagCollector(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags: list[tuple[str, list[tuple[str, str | None]]]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, attrs))


def _assert_inert_html(html: str) -> None:
    """What a feed reader would render: only harmless tags, no event
    handlers, no script links."""
    collector = _TagCollector()
    collector.feed(html)
    for tag, attrs in collector.tags:
        assert tag in {"p", "strong", "em", "a", "code", "pre", "blockquote", "ul", "ol", "li", "br"}
        for name, value in attrs:
            assert not name.startswith("on")
            assert not (value or "").strip().lower().startswith("javascript:")


@pytest.fixture
def party():
    campaign = CampaignFactory(title="La Marca", visibility=Visibility.PUBLIC)
    ana = member(campaign, display_name="Ana")
    bea = member(campaign, display_name="Bea")
    return campaign, ana, bea


# --- the public scene feed ---------------------------------------------------


def test_a_public_scene_feed_lists_its_public_posts_newest_first_with_the_stored_html(client, party):
    campaign, ana, bea = party
    public = scene(campaign, title="El faro")
    first = post(public, ana, body="Subo **la escalera**.")
    second = post(public, campaign.gm, body="Hace frío.", voice=Post.Voice.NPC, npc_name="El farero")
    # Stored HTML is what the feed carries, never a fresh rendering of the Markdown.
    Post.objects.filter(pk=second.pk).update(body_html="<p>Lo que se guardó.</p>")
    post(public, bea, body="Secreto", recipients=Post.Recipients.GM)
    post(public, bea, body="Solo para Ana", recipients=Post.Recipients.CHOSEN, chosen=[ana])
    post(public, bea, body="Texto oculto", hidden=True, hidden_reason="spoiler")
    post(public, ana, body="Cuerpo", note="Nota de juego secreta")

    response = client.get(_scene_feed_url(public))
    root = ET.fromstring(response.content)
    assert root.findtext(f"{ATOM}title") == "El faro · La Marca"
    entries = _entries(response)
    assert [e["title"] for e in entries][1:] == [f"Mensaje #{second.pk} de El farero", f"Mensaje #{first.pk} de Ana"]
    assert entries[1]["content"] == "<p>Lo que se guardó.</p>"
    assert entries[2]["content"] == "<p>Subo <strong>la escalera</strong>.</p>\n"
    assert entries[2]["link"] == f"https://mesa.example/mensajes/{first.pk}/"
    assert entries[2]["author"] == "Ana"
    text = response.content.decode()
    for secret in ("Secreto", "Solo para Ana", "Texto oculto", "spoiler", "Nota de juego secreta"):
        assert secret not in text


@pytest.mark.parametrize("case", ["private campaign", "split scene", "wrong campaign", "unknown scene"])
def test_the_scene_feed_is_404_unless_anonymous_visitors_may_read_the_scene(client, party, case):
    campaign, ana, bea = party
    target = scene(campaign, everyone=case != "split scene", participants=[ana])
    post(target, ana, body="Dentro")
    url = _scene_feed_url(target)
    if case == "private campaign":
        campaign.visibility = Visibility.PRIVATE
        campaign.save()
    elif case == "wrong campaign":
        url = url.replace(campaign.slug, CampaignFactory().slug)
    elif case == "unknown scene":
        url = url.replace(f"/{target.pk}/", f"/{target.pk + 1000}/")
    response = client.get(url)
    assert response.status_code == 404
    assert b"Dentro" not in response.content


@pytest.mark.parametrize("payload", XSS_PAYLOADS)
def test_markup_in_titles_npc_names_and_bodies_stays_inert_in_the_scene_feed(client, payload):
    campaign = CampaignFactory(title=f"Partida {payload}")
    target = scene(campaign, title=f"Escena {payload}")
    written = post(target, campaign.gm, body=f"Texto {payload}", voice=Post.Voice.NPC, npc_name=payload[:80])

    response = client.get(_scene_feed_url(target))
    raw = response.content.decode()
    for dangerous in ("<script", "<img", "<svg", "<iframe", "<body", "<a href"):
        assert dangerous not in raw.lower()
    root = ET.fromstring(response.content)
    # Titles come back as exactly the text typed: plain text, never markup.
    assert root.findtext(f"{ATOM}title") == f"Escena {payload} · Partida {payload}"
    [entry] = _entries(response)
    assert entry["title"] == f"Mensaje #{written.pk} de {payload[:80]}"
    assert entry["author"] == payload[:80]
    # The content is the sanitised HTML stored with the post.
    assert entry["content"] == render_markdown(f"Texto {payload}")
    _assert_inert_html(entry["content"])


# --- the member's private feed -----------------------------------------------


def test_a_member_feed_has_everything_that_member_may_read_and_nothing_else(client, party):
    campaign, ana, bea = party
    everyone = scene(campaign, title="Todos")
    with_ana = scene(campaign, title="Con Ana", everyone=False, participants=[ana])
    with_bea = scene(campaign, title="Con Bea", everyone=False, participants=[bea])
    readable = [
        post(everyone, bea, body="Para todos"),
        post(with_ana, campaign.gm, body="Grupo de Ana"),
        post(everyone, bea, body="Solo para Ana", recipients=Post.Recipients.CHOSEN, chosen=[ana]),
        post(everyone, ana, body="Mi susurro a la dirección", recipients=Post.Recipients.GM),
        # Readable, but its out-of-character note stays on the site.
        post(everyone, bea, body="Cuerpo", note="Nota de juego de Bea"),
    ]
    post(with_bea, campaign.gm, body="Grupo de Bea")
    post(everyone, bea, body="Susurro de Bea", recipients=Post.Recipients.GM)
    post(everyone, campaign.gm, body="Solo para Bea", recipients=Post.Recipients.CHOSEN, chosen=[bea])
    other_campaign = CampaignFactory()
    post(scene(other_campaign), other_campaign.gm, body="Otra partida")

    response = client.get(_member_feed_url(ana, campaign))
    entries = _entries(response)
    assert ET.fromstring(response.content).findtext(f"{ATOM}title") == "«La Marca» en Hitos"
    assert [e["title"] for e in entries] == [f"Mensaje #{p.pk} de {p.speaker_name}" for p in reversed(readable)]
    assert [e["content"] for e in entries] == [p.body_html for p in reversed(readable)]
    text = response.content.decode()
    for secret in ("Grupo de Bea", "Susurro de Bea", "Solo para Bea", "Nota de juego de Bea", "Otra partida"):
        assert secret not in text


def test_hidden_posts_are_placeholders_without_text_even_for_their_author_and_the_direction(client, party):
    campaign, ana, bea = party
    hidden = post(scene(campaign), ana, body="Lo que escribí", hidden=True, hidden_reason="spoiler")
    cogm = member(campaign, role=Role.COGM)
    for reader in (ana, bea, cogm):
        [entry] = _entries(client.get(_member_feed_url(reader, campaign)))
        assert entry == {
            "title": f"Mensaje #{hidden.pk} (oculto)",
            "content": "<p>Mensaje oculto por la dirección.</p>",
            "link": f"https://mesa.example/mensajes/{hidden.pk}/",
            # Atom needs an author: the placeholder is the direction's, the writer is not named.
            "author": "La dirección de la partida",
        }


def test_a_co_gm_feed_includes_every_scene_and_whisper(client, party):
    campaign, ana, bea = party
    cogm = member(campaign, role=Role.COGM)
    post(scene(campaign, everyone=False, participants=[bea]), bea, body="Grupo de Bea")
    post(scene(campaign), ana, body="Susurro", recipients=Post.Recipients.GM)
    post(scene(campaign), ana, body="Elegido", recipients=Post.Recipients.CHOSEN, chosen=[bea])
    text = client.get(_member_feed_url(cogm, campaign)).content.decode()
    assert "Grupo de Bea" in text and "Susurro" in text and "Elegido" in text


@pytest.mark.parametrize("status", [Membership.Status.LEFT, Membership.Status.REMOVED])
def test_the_token_of_a_member_who_left_or_was_removed_stops_working(client, party, status):
    campaign, ana, bea = party
    post(scene(campaign), bea, body="Para todos")
    url = _member_feed_url(ana, campaign)
    Membership.objects.filter(user=ana).update(status=status, ended_at=timezone.now())
    response = client.get(url)
    assert response.status_code == 404
    assert b"Para todos" not in response.content


def test_an_unknown_token_or_an_inactive_account_is_404(client, party):
    campaign, ana, bea = party
    post(scene(campaign), bea, body="Para todos")
    assert client.get("/test-feeds/canal/no-existe/").status_code == 404
    url = _member_feed_url(ana, campaign)
    ana.is_active = False
    ana.save()
    assert client.get(url).status_code == 404


def test_the_member_feed_of_a_private_campaign_works_without_signing_in(client):
    campaign = CampaignFactory(visibility=Visibility.PRIVATE)
    ana = member(campaign)
    post(scene(campaign), campaign.gm, body="Bienvenidos")
    response = client.get(_member_feed_url(ana, campaign))
    [entry] = _entries(response)
    assert entry["content"] == "<p>Bienvenidos</p>\n"
    assert "private" in response["Cache-Control"]
    assert response["X-Robots-Tag"] == "noindex"


@pytest.mark.parametrize("payload", XSS_PAYLOADS)
def test_markup_stays_inert_in_the_member_feed(client, payload):
    campaign = CampaignFactory(title=payload, visibility=Visibility.PRIVATE)
    ana = member(campaign)
    post(scene(campaign, title=payload), campaign.gm, body=payload, voice=Post.Voice.NPC, npc_name=payload[:80])
    response = client.get(_member_feed_url(ana, campaign))
    raw = response.content.decode().lower()
    for dangerous in ("<script", "<img", "<svg", "<iframe", "<body", "<a href"):
        assert dangerous not in raw
    assert ET.fromstring(response.content).findtext(f"{ATOM}title") == f"«{payload}» en Hitos"
    [entry] = _entries(response)
    assert entry["content"] == render_markdown(payload)
    _assert_inert_html(entry["content"])


def test_the_member_feed_queries_do_not_grow_with_the_number_of_posts(client, party, django_assert_max_num_queries):
    campaign, ana, bea = party
    target = scene(campaign)
    for _ in range(3):
        post(target, bea, body="Uno", voice=Post.Voice.NPC, npc_name="PNJ")
    url = _member_feed_url(ana, campaign)
    with django_assert_max_num_queries(6) as few:
        client.get(url)
    for _ in range(20):
        post(target, bea, body="Más")
    with django_assert_max_num_queries(len(few)):
        client.get(url)


def test_the_outsiders_scene_feed_is_not_a_way_into_a_members_feed(client, party):
    campaign, ana, bea = party
    outsider = UserFactory()
    client.force_login(outsider)
    assert client.get("/test-feeds/canal/" + "x" * 32 + "/").status_code == 404
