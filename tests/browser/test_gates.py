"""Issue 14's gates, in a real Chromium, on every page a person reaches in the demo.

For each page, at 1280 px and at 360 px wide:

- axe-core (node_modules/axe-core, pinned in package.json) finds no violation
  of any impact under the WCAG 2.0/2.1 A and AA rules and its best practices
  (``AXE_TAGS`` in tests/browser/conftest.py);
- nothing scrolls sideways: the page is no wider than the window and no box
  in it scrolls horizontally;
- the page loaded as itself (200, no redirect) without a console error, an
  uncaught exception or a Content Security Policy violation.

And the HTML each page was served (the response's body, not the DOM after
scripts ran) has no error for the Nu HTML Checker (node_modules/vnu-jar, run
once with Java for all the pages; warnings are allowed and listed).

The demo campaign of ``make run`` (demo/) is loaded once and every page is
visited in one go by a module fixture (tests/browser/gates.py, shared by every
crawl file), with one browser context per person (visitor, player, GM), and
the database is emptied again: pytest-django empties it after every test that
uses the live server, so the pages cannot be visited one test at a time. Each
page is loaded once and checked in the wide window, then narrowed to a
phone's. Each page and width is still a test of its own, with a message that
names what to fix. New pages join ``PAGES`` (and its count); the figures of
the last run are written to test-results/gates.json.

Locally these tests skip without Chromium, node_modules or Java; under CI=true
they fail instead.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone
from playwright.sync_api import Browser, Page

from accounts.models import User
from campaigns import archive, notify
from campaigns import services as campaign_services
from campaigns.models import Campaign, Invitation, Role
from campaigns.permissions import campaign_access
from rolls import checkpoints
from rolls.checkpoints import publish_checkpoints
from rolls.models import RollEntry
from sheets.models import Character
from tests.browser.conftest import (
    axe_violations,
    describe_overflow,
    describe_violations,
    describe_vnu,
    horizontal_overflow,
    is_vnu_error,
)
from tests.browser.gates import CANARY, CANARY_HTML, HEIGHT, WIDTHS, Crawl, Gate, crawl_fixture, gate_tests, ids, loaded

# The database mark makes pytest-django set the test database up even when
# these tests run alone (it sets up only what the collected tests ask for:
# without it the crawl would load the demo into the development database).
# The tests themselves only read what the crawl kept, so the mark is not a
# transactional one: a transactional test empties the database after itself,
# hundreds of times here (tests/browser/gates.py).
pytestmark = [pytest.mark.browser, pytest.mark.django_db]


@dataclass(frozen=True)
class Demo:
    """What the demo campaign holds that the pages' addresses need."""

    campaign: Campaign
    player: User  # Ana, who plays Inés
    gm: User
    scene_id: int  # "2. El sótano": posts with rolls, activations, a combat, secret rolls
    sheet_id: int  # Inés's sheet
    permalink: str  # a public re-roll (an aspect activation) in that scene
    invitation: Invitation
    upload_id: int  # Ana's export of the campaign, uploaded to be imported

    @classmethod
    def load(cls) -> Demo:
        from demo.campaign import demo_load
        from demo.table import TABLE_SCENE

        _, campaign = demo_load()
        gm = campaign.gm
        player = User.objects.get(username="ana")
        reroll = RollEntry.objects.filter(
            campaign=campaign, kind=RollEntry.Kind.REROLL, audience=RollEntry.Audience.PUBLIC, post__isnull=False
        ).first()
        invitation = campaign_services.invitation_create(
            campaign=campaign, actor=gm, role=Role.PLAYER, days=7, max_uses=5
        )
        # Tomorrow's clock signs today's checkpoint, so its page lists one.
        publish_checkpoints(now=timezone.now() + timedelta(days=1))
        exported = campaign_services.campaign_export(access=campaign_access(player, campaign))
        upload = archive.upload_keep(player, json.dumps(exported).encode(), exported)
        return cls(
            campaign=campaign,
            player=player,
            gm=gm,
            scene_id=campaign.scenes.get(title=TABLE_SCENE).pk,
            sheet_id=Character.objects.get(campaign=campaign, owner=player).pk,
            permalink=reroll.permalink,
            invitation=invitation,
            upload_id=upload.pk,
        )


def _in_campaign(name: str, *args) -> Callable[[Demo], str]:
    return lambda demo: reverse(name, args=[demo.campaign.slug, *(getattr(demo, arg) for arg in args)])


PAGES = (
    Gate("home", "visitor", lambda demo: reverse("home")),
    Gate("home-player", "player", lambda demo: reverse("home")),
    Gate("log-in", "visitor", lambda demo: reverse("accounts:login")),
    Gate("sign-up", "visitor", lambda demo: reverse("accounts:signup")),
    Gate("invitation", "visitor", lambda demo: demo.invitation.get_absolute_url()),
    Gate("campaign", "player", _in_campaign("campaigns:campaign-detail")),
    Gate("scene-player", "player", _in_campaign("table:scene-detail", "scene_id")),
    Gate("scene-gm", "gm", _in_campaign("table:scene-detail", "scene_id")),
    Gate("sheet", "player", _in_campaign("sheets:sheet-detail", "sheet_id")),
    Gate("roll-permalink", "visitor", lambda demo: reverse("rolls:roll-permalink", args=[demo.permalink])),
    Gate("roll-log", "player", _in_campaign("rolls:roll-log")),
    Gate("checkpoints", "player", _in_campaign("rolls:checkpoints")),
    Gate("combat", "gm", _in_campaign("hitos:combat", "scene_id")),
    Gate("drama", "gm", _in_campaign("hitos:drama")),
    Gate("notifications", "player", lambda demo: reverse("campaigns:notifications")),
    Gate("search", "player", lambda demo: _in_campaign("campaigns:campaign-search")(demo) + "?q=farol"),
    Gate("dashboard", "gm", _in_campaign("campaigns:dashboard")),
    # Beyond issue 14's list: the other pages of the demo's menus.
    Gate("profile", "player", lambda demo: reverse("accounts:profile")),
    Gate("sheet-list", "player", _in_campaign("sheets:sheet-list")),
    Gate("sheet-create", "player", _in_campaign("sheets:sheet-create")),
    Gate("npc-create", "gm", _in_campaign("sheets:npc-create")),
    Gate("horror", "gm", _in_campaign("hitos:horror", "scene_id")),
    Gate("opposed", "gm", _in_campaign("hitos:opposed", "scene_id")),
    Gate("moderation-log", "gm", _in_campaign("campaigns:moderation-log")),
    Gate("campaign-import", "player", lambda demo: reverse("campaigns:campaign-import")),
    Gate(
        "campaign-import-review",
        "player",
        lambda demo: reverse("campaigns:campaign-import-review", args=[demo.upload_id]),
    ),
    # The page a notification e-mail's unsubscribe link opens, logged out.
    Gate(
        "email-unsubscribe",
        "visitor",
        lambda demo: reverse("campaigns:email-unsubscribe", args=[notify.unsubscribe_token(demo.player)]),
    ),
    # The page a checkpoint e-mail's unsubscribe link opens, logged out (issue 18).
    Gate(
        "checkpoint-unsubscribe",
        "visitor",
        lambda demo: reverse(
            "rolls:checkpoint-unsubscribe", args=[checkpoints.unsubscribe_token(demo.player, demo.campaign)]
        ),
    ),
)


class DemoCrawl(Crawl):
    """The gates' visit of ``PAGES`` in the demo, as a visitor, Ana and the GM."""

    pages = PAGES
    figures = "gates.json"
    what = "demo campaign"

    def build(self) -> tuple[Demo, dict[str, User | None]]:
        demo = Demo.load()
        return demo, {"visitor": None, "player": demo.player, "gm": demo.gm}


crawl = crawl_fixture(DemoCrawl)
(
    test_the_crawl_visits_every_page,
    test_page_has_no_accessibility_violation,
    test_page_fits_the_window_without_sideways_scroll,
    test_page_html_has_no_error_for_the_nu_checker,
) = gate_tests(PAGES, count=28)


SCENES = [gate for gate in PAGES if gate.name.startswith("scene")]


@pytest.mark.parametrize("gate", SCENES, ids=ids(SCENES))
def test_on_a_phone_the_scene_shows_its_first_post_on_the_first_screen(crawl: DemoCrawl, gate: Gate):
    # The scene's tools fold into one control (hitos/_scene_tools.html) and its
    # secret rolls into a disclosure, so the story starts on the first screen.
    visit = crawl.visit(gate, 360)
    loaded(visit, gate, 360)
    assert visit.first_post_bottom is not None, f"{gate.name}: no post on the page"
    assert visit.first_post_bottom <= HEIGHT, (
        f"{gate.name} at 360 × {HEIGHT}: the first post's header ends at {visit.first_post_bottom:.0f} px"
    )


def test_the_gates_catch_what_they_check(crawl: DemoCrawl, browser: Browser):
    # The same checks on a page known to fail each of them: a gate that
    # cannot fail would pass any page. (A page of its own rather than the
    # ``page`` fixture, whose live server would empty the database after the
    # test, like a database mark.)
    context = browser.new_context(locale="es-ES")
    try:
        _catches_what_it_checks(crawl, context.new_page())
    finally:
        context.close()


def _catches_what_it_checks(crawl: DemoCrawl, page: Page) -> None:
    # Loaded in the wide window and then narrowed, as the crawl does: the
    # box that fits at 1280 px sticks out once the window is a phone's.
    page.set_viewport_size({"width": WIDTHS[0], "height": HEIGHT})
    page.set_content(CANARY_HTML)
    wide = horizontal_overflow(page)
    assert wide["page"] <= wide["viewport"] == WIDTHS[0], describe_overflow(wide)
    page.set_viewport_size({"width": 360, "height": HEIGHT})

    violations = axe_violations(page)
    assert [violation["id"] for violation in violations] == ["image-alt"], describe_violations(violations)
    assert violations[0]["nodes"][0]["target"] == "img"
    overflow = horizontal_overflow(page)
    assert overflow["page"] > overflow["viewport"] == 360
    assert overflow["widest"][0]["element"] == "div#ancho «ancho»", describe_overflow(overflow)
    errors = [message for message in crawl.html_messages(Gate(CANARY, "visitor", str)) if is_vnu_error(message)]
    assert [message["lastLine"] for message in errors] == [3, 4], describe_vnu(errors)
    assert "“alt” attribute" in errors[0]["message"]
    assert "Attribute “hx-get” not allowed" in errors[1]["message"]
