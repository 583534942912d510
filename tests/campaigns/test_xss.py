"""Markup injection is neutralised everywhere user text is shown (issue 4, "Bad input").

Each payload goes in through the real forms, as the people who would type
it: the GM (campaign and scene title and description, aspects, an NPC's
name, an edit, a hide reason), a player (a post body and its out-of-character
note), an applicant (the application text) and another player (a report
reason). The stored HTML may only hold the few tags and attributes
campaigns/markup.py allows, and every page that shows the text holds no
executable markup at all: no script but our own files, no event handler,
no style, no javascript:/data:/vbscript: address, no frame, image or SVG,
nothing dressed as a roll card.
"""

from __future__ import annotations

import re
from html import unescape
from html.parser import HTMLParser

import pytest
from django.urls import reverse
from django.utils.html import escape

from campaigns.models import Application, Campaign, Membership, Post, PostReport, Role
from tests.conftest import client_for
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

PAYLOADS = [
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "<svg onload=alert(1)><circle r=9 /></svg>",
    '<iframe src="javascript:alert(1)"></iframe>',
    "[pincha](javascript:alert(1))",
    "[pincha](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
    "[pincha](vbscript:msgbox(1))",
    '<a href="javascript:alert(1)">pincha</a>',
    "![foto](javascript:alert(1))",
    '![foto](https://example.org/x.png" onerror="alert(1))',
    '[pincha](https://example.org "t\\" onmouseover=\\"alert(1)")',
    '<div class="roll-card">Tirada 3d10: 10 10 10 ¡Crítico!</div>',
    '<p style="width: expression(alert(1)); background:url(javascript:alert(1))">fondo</p>',
    "<style>body{display:none}</style>",
    "&lt;script&gt;alert(1)&lt;/script&gt;",
    "[pincha](&#106;avascript:alert(1))",
    "[pincha](<java script:alert(1)>)",
    '"><script>alert(1)</script>',
    "> > <script>alert(1)</script>\n> > > [pincha](javascript:alert(1))",
    "> cita\n>> <img src=x onerror=alert(1)>\n>>> <svg/onload=alert(1)>",
    "<math><mtext><table><mglyph><style><img src=x onerror=alert(1)>",
    '<a href="&#0000106&#0000097&#0000118&#0000097&#0000115&#0000099&#0000114&#0000105&#0000112&#0000116&#0000058alert(1)">x</a>',
    "\u202e<script>alert(1)</script>",
    "<ſcript>alert(1)</ſcript>",
    "＜script＞alert(1)＜/script＞",
    '[pincha](https://example.org/"onmouseover="alert(1))',
    '<https://example.org/"><script>alert(1)</script>>',
    "<javascript:alert(1)>",
    "[ref][x]\n\n[x]: javascript:alert(1)",
    '<meta http-equiv="refresh" content="0;url=javascript:alert(1)">',
    "{{ request }}{% debug %}",
    '<div class="roll-card" hx-get="/admin/" hx-trigger="load">dados</div>',
]

# What campaigns/markup.py may leave in stored HTML.
STORED_TAGS = {
    "p", "br", "strong", "em", "del", "s", "code", "pre", "blockquote",
    "ul", "ol", "li", "a", "hr", "h3", "h4", "h5", "h6",
}  # fmt: skip
STORED_ATTRIBUTES = {"a": {"href", "title", "rel"}, "ol": {"start"}}
FORBIDDEN_PAGE_TAGS = {"iframe", "svg", "img", "object", "embed", "style", "base", "math", "frame", "frameset"}
URL_ATTRIBUTES = {"href", "src", "action", "formaction", "data", "xlink:href", "poster", "background"}


def _scheme(url: str | None) -> str:
    """The scheme a browser would read in an address ("" for a relative one).

    Browsers trim spaces and control characters around an address and drop
    tabs and newlines inside it before they look for the scheme.
    """
    url = re.sub(r"[\t\n\r]", "", unescape(url or "")).strip("\x00- ")
    match = re.match(r"([a-zA-Z][a-zA-Z0-9+.-]*):", url)
    return match.group(1).lower() if match else ""


# The one drawing the site makes itself: the campaign's pace chart
# (campaigns/pace.py), an inline SVG of these tags only. Names typed by users
# are text inside it; a tag they slipped in would still be caught (its name,
# its on* attributes, its addresses).
CHART_CLASS = "pace-chart"
CHART_TAGS = {"svg", "title", "desc", "g", "rect", "text"}


class _Tags(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, list[tuple[str, str | None]]]] = []
        self.in_chart = False

    def handle_starttag(self, tag, attrs):
        if tag == "svg" and CHART_CLASS in (dict(attrs).get("class") or "").split() and not self.in_chart:
            self.in_chart = True
        if self.in_chart:
            assert tag in CHART_TAGS, tag
            tag = f"chart:{tag}"
        self.tags.append((tag, attrs))

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        if tag == "svg":
            self.in_chart = False

    def handle_endtag(self, tag):
        if tag == "svg":
            self.in_chart = False


def _tags(html: str):
    parser = _Tags()
    parser.feed(html)
    parser.close()
    return parser.tags


def assert_safe_stored_html(html: str) -> None:
    lowered = html.lower()
    for needle in ("<script", "<iframe", "<svg", "<img", "<style", "<object", "<embed"):
        assert needle not in lowered
    for tag, attrs in _tags(html):
        assert tag in STORED_TAGS, tag
        for name, value in attrs:
            assert name in STORED_ATTRIBUTES.get(tag, set()), (tag, name)
            if name == "href":
                assert _scheme(value) in ("", "http", "https", "mailto"), value


def assert_no_executable_markup(page: str) -> None:
    for tag, attrs in _tags(page):
        assert tag not in FORBIDDEN_PAGE_TAGS, tag
        names = {name for name, _ in attrs}
        if tag == "script":
            assert dict(attrs).get("src", "").startswith("/static/"), attrs
        if tag == "meta":
            assert "http-equiv" not in names
        assert not any(name.startswith("on") for name in names), (tag, attrs)
        assert "style" not in names, (tag, attrs)
        assert "roll-card" not in (dict(attrs).get("class") or ""), (tag, attrs)
        for name, value in attrs:
            if name in URL_ATTRIBUTES:
                assert _scheme(value) not in ("javascript", "data", "vbscript"), (tag, name, value)


def _one_line(text: str, limit: int) -> str:
    """What the single-line forms keep of a payload: whitespace folded, cut to fit."""
    return " ".join(text.split())[:limit].strip()


def _feed(payload: str):
    """Type the payload into every form that takes user text, as a real user would."""
    gm = UserFactory(display_name="La Directora")
    gm_client = client_for(gm)
    title = _one_line(payload, 120)
    response = gm_client.post(
        reverse("campaigns:campaign-create"),
        {
            "title": title,
            "system": "hitos",
            "visibility": "public",
            "status": "recruiting",
            "description": payload,
        },
    )
    assert response.status_code == 302, response.context["form"].errors if response.context else ""
    campaign = Campaign.objects.get(gm=gm)
    player, other, applicant = (UserFactory(display_name=n) for n in ("Ana", "Bruno", "Celia"))
    Membership.objects.create(campaign=campaign, user=player, role=Role.PLAYER)
    Membership.objects.create(campaign=campaign, user=other, role=Role.PLAYER)
    response = gm_client.post(
        reverse("campaigns:scene-create", args=[campaign.slug]),
        {"title": title, "description": payload, "everyone": "on", "aspects": payload[:200]},
    )
    assert response.status_code == 302
    scene = campaign.scenes.get(is_offgame=False)
    post_url = reverse("table:post-create", args=[campaign.slug, scene.pk])
    player_client = client_for(player)
    response = player_client.post(
        post_url, {"voice": "ooc", "body": f"{payload}\n\nmarcador", "note": payload, "recipients": "all"}
    )
    assert response.status_code == 302
    post = Post.objects.get(scene=scene, author=player)
    response = gm_client.post(
        post_url, {"voice": "npc", "npc_name": payload[:80], "body": f"marcador {payload}", "recipients": "all"}
    )
    assert response.status_code == 302
    npc_post = Post.objects.get(scene=scene, voice=Post.Voice.NPC)
    response = client_for(applicant).post(
        reverse("campaigns:application-create", args=[campaign.slug]), {"text": payload}
    )
    assert response.status_code == 302
    other_client = client_for(other)
    response = other_client.post(reverse("campaigns:post-report", args=[npc_post.pk]), {"reason": payload[:500]})
    assert response.status_code == 302
    response = gm_client.post(
        reverse("campaigns:post-edit", args=[post.pk]),
        {"body": f"{payload} marcador editado", "note": payload, "reason": payload[:500]},
    )
    assert response.status_code == 302
    response = gm_client.post(reverse("campaigns:post-hide", args=[post.pk]), {"reason": payload[:500]})
    assert response.status_code == 302
    post.refresh_from_db()
    npc_post.refresh_from_db()
    return {
        "campaign": campaign,
        "scene": scene,
        "post": post,
        "npc_post": npc_post,
        "gm_client": gm_client,
        "other_client": other_client,
    }


@pytest.mark.parametrize("payload", PAYLOADS, ids=range(len(PAYLOADS)))
def test_payload_is_neutralised_where_it_is_stored_and_wherever_it_is_shown(payload):
    fed = _feed(payload)
    campaign, scene, post, npc_post = fed["campaign"], fed["scene"], fed["post"], fed["npc_post"]
    gm_client, other_client = fed["gm_client"], fed["other_client"]

    # Stored: only the allowed tags and attributes, safe link targets.
    for html in (
        post.body_html,
        post.note_html,
        npc_post.body_html,
        scene.description_html,
        campaign.description_html,
        *post.revisions.values_list("body_html", flat=True),
        *post.revisions.values_list("note_html", flat=True),
    ):
        assert_safe_stored_html(html)

    one_line = escape(_one_line(payload, 120))
    reason = escape(_one_line(payload, 500))
    pages = {
        "scene (GM)": gm_client.get(scene.get_absolute_url()),
        "scene (other player)": other_client.get(scene.get_absolute_url()),
        "campaign": gm_client.get(campaign.get_absolute_url()),
        "dashboard": gm_client.get(reverse("campaigns:dashboard", args=[campaign.slug])),
        "moderation log": gm_client.get(reverse("campaigns:moderation-log", args=[campaign.slug])),
        "search": gm_client.get(reverse("campaigns:campaign-search", args=[campaign.slug]), {"q": "marcador"}),
        "history": gm_client.get(reverse("campaigns:post-history", args=[post.pk])),
        "home": gm_client.get(reverse("home")),
    }
    for name, response in pages.items():
        assert response.status_code == 200, name
        assert_no_executable_markup(response.text)

    scene_gm, scene_other = pages["scene (GM)"].text, pages["scene (other player)"].text
    # The stored, sanitised HTML is what the pages show, as is.
    assert post.body_html in scene_gm
    assert post.note_html in scene_gm
    assert npc_post.body_html in scene_gm
    assert scene.description_html in scene_gm
    assert campaign.description_html in pages["campaign"].text
    assert post.body_html in pages["history"].text
    # Plain text is shown escaped.
    assert escape(_one_line(payload, 80)) in scene_gm  # the NPC's name
    for aspect in scene.aspects.values_list("phrase", flat=True):
        assert escape(aspect) in scene_gm
    for name in ("scene (GM)", "campaign", "dashboard", "moderation log", "search", "history", "home"):
        assert one_line in pages[name].text, name
    # The hidden post: others see the placeholder and the reason, not the text.
    assert reason in scene_other
    assert post.body_html not in scene_other
    assert reason in pages["moderation log"].text
    assert reason in pages["dashboard"].text
    dashboard = pages["dashboard"].text
    assert escape(Application.objects.get(campaign=campaign).text).replace("\n", "<br>") in dashboard
    assert escape(PostReport.objects.get(post=npc_post).reason) in dashboard
    assert escape(npc_post.speaker_name) in pages["search"].text


def test_there_are_at_least_thirty_payloads():
    assert len(PAYLOADS) >= 30
