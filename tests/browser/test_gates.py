"""Issue 14's gates, in a real Chromium, on every page a person reaches in the demo.

For each page, at 1280 px and at 360 px wide:

- axe-core (node_modules/axe-core, pinned in package.json) finds no violation
  of any impact under the WCAG 2.0/2.1 A and AA rules and its best practices
  (``AXE_TAGS`` in tests/browser/conftest.py);
- the page is no wider than the window (nothing to scroll sideways);
- the page loaded as itself (200, no redirect) without a console error, an
  uncaught exception or a Content Security Policy violation.

And the HTML each page was served (the response's body, not the DOM after
scripts ran) has no error for the Nu HTML Checker (node_modules/vnu-jar, run
once with Java for all the pages; warnings are allowed and listed).

The demo campaign of ``make run`` (demo/) is loaded once and every page is
visited in one go by a module fixture, with one browser context per person
(visitor, player, GM), and the database is emptied again: pytest-django
empties it after every test that uses the live server, so the pages cannot be
visited one test at a time. Each page and width is still a test of its own,
with a message that names what to fix. New pages join ``PAGES``; the figures
of the last run are written to test-results/gates.json.

Locally these tests skip without Chromium, node_modules or Java; under CI=true
they fail instead.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from django.conf import settings
from django.test import modify_settings, override_settings
from django.urls import reverse
from playwright.sync_api import Browser, BrowserContext, ConsoleMessage, Page

from accounts.models import User
from campaigns import notify
from campaigns import services as campaign_services
from campaigns.models import Campaign, Invitation, Role
from rolls.models import RollEntry
from sheets.models import Character
from tests.browser.conftest import (
    _REPORT_CSP_VIOLATIONS,
    TIMEOUT_MS,
    axe_violations,
    describe_overflow,
    describe_violations,
    describe_vnu,
    horizontal_overflow,
    is_vnu_error,
    log_in,
    require_gate_tools,
    vnu_check,
)

# The database mark makes pytest-django set the test database up even when
# these tests run alone (it sets up only what the collected tests ask for:
# without it the crawl would load the demo into the development database).
# The tests themselves only read what the crawl kept.
pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

WIDTHS = (1280, 360)
FIGURES = Path(__file__).resolve().parents[2] / "test-results" / "gates.json"
HEIGHT = 740  # A common phone's height; the wide window keeps it too.


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
        return cls(
            campaign=campaign,
            player=player,
            gm=gm,
            scene_id=campaign.scenes.get(title=TABLE_SCENE).pk,
            sheet_id=Character.objects.get(campaign=campaign, owner=player).pk,
            permalink=reroll.permalink,
            invitation=invitation,
        )


@dataclass(frozen=True)
class Gate:
    name: str
    who: str  # "visitor" (logged out), "player" or "gm"
    address: Callable[[Demo], str]


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
    # The page a notification e-mail's unsubscribe link opens, logged out.
    Gate(
        "email-unsubscribe",
        "visitor",
        lambda demo: reverse("campaigns:email-unsubscribe", args=[notify.unsubscribe_token(demo.player)]),
    ),
)


# What every gate must catch: an image without a text alternative (axe's
# image-alt), a box wider than a phone, an htmx attribute without its data-
# prefix (invalid HTML).
CANARY = "canary"
CANARY_HTML = """<!doctype html>
<html lang="es"><head><meta charset="utf-8"><title>Canario</title></head>
<body><main><h1>Canario</h1><img src="data:,"><div id="ancho" style="width: 600px">ancho</div>
<div hx-get="/">htmx</div></main></body></html>
"""


@dataclass
class Visit:
    """One page at one width, as the browser got it."""

    url: str = ""
    status: int = 0
    final_url: str = ""
    problems: list[str] = field(default_factory=list)  # console errors, exceptions, CSP violations
    violations: list[dict] = field(default_factory=list)
    overflow: dict = field(default_factory=dict)
    first_post_bottom: float | None = None  # where the first post's header ends, on a scene page
    error: str = ""  # the visit itself failed (a timeout, a crash)


class Crawl:
    """Every page of ``PAGES`` at every width, visited once (``run``), then
    kept for the tests to judge; the HTML is checked on the first ask."""

    def __init__(self, browser: Browser, base_url: str, java: str, folder: Path) -> None:
        self.browser = browser
        self.base_url = base_url
        self.java = java
        self.folder = folder
        self.visits: dict[tuple[str, int], Visit] = {}
        self.served: dict[str, Path] = {}  # page name -> the HTML as the server sent it
        self.failure = ""  # the demo could not be loaded
        self._vnu: dict[str, list[dict]] | None = None
        self._contexts: list[BrowserContext] = []
        self._problems: list[str] = []

    def visit(self, gate: Gate, width: int) -> Visit:
        if self.failure:
            pytest.fail(self.failure, pytrace=False)
        return self.visits[gate.name, width]

    def html_messages(self, gate: Gate) -> list[dict]:
        if self.failure:
            pytest.fail(self.failure, pytrace=False)
        if self._vnu is None:
            # A page known to be invalid goes in with the others, to show the
            # checker really reports errors (test_the_gates_catch_what_they_check).
            canary = self.folder / f"{CANARY}.html"
            canary.write_text(CANARY_HTML, encoding="utf-8")
            files = {**self.served, CANARY: canary}
            checked = vnu_check(self.java, list(files.values()))
            self._vnu = {name: checked[file] for name, file in files.items()}
        if gate.name not in self._vnu:
            pytest.fail(f"{gate.name}: the page was never served, so there is no HTML to check", pytrace=False)
        return self._vnu[gate.name]

    def close(self) -> None:
        for context in self._contexts:
            context.close()
        if self.visits:
            self._write_figures()

    def _write_figures(self) -> None:
        """test-results/gates.json: each page's figures at each width, for the
        closing note of a release (axe violations, widths, vnu errors)."""
        figures = {}
        for gate in PAGES:
            messages = (self._vnu or {}).get(gate.name)
            figures[gate.name] = {
                "who": gate.who,
                "widths": {
                    f"{width}px": {
                        "status": visit.status,
                        "axe_violations": len(visit.violations),
                        "axe_rules": sorted(violation["id"] for violation in visit.violations),
                        "page_width": visit.overflow.get("page"),
                        "error": visit.error,
                    }
                    for width in WIDTHS
                    if (visit := self.visits.get((gate.name, width)))
                },
                "vnu_errors": None if messages is None else sum(is_vnu_error(m) for m in messages),
                "vnu_warnings": None if messages is None else sum(not is_vnu_error(m) for m in messages),
            }
        FIGURES.parent.mkdir(exist_ok=True)
        FIGURES.write_text(json.dumps(figures, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")

    # --- The visit ---------------------------------------------------------------

    def run(self) -> None:
        try:
            demo = Demo.load()
        except Exception as error:  # noqa: BLE001 - every test reports it
            self.failure = f"the demo campaign could not be loaded: {error!r}"
            return
        pages = {
            who: self._page_for(user) for who, user in (("visitor", None), ("player", demo.player), ("gm", demo.gm))
        }
        for gate in PAGES:
            page = pages[gate.who]
            url = gate.address(demo)
            for width in WIDTHS:
                visit = Visit(url=url)
                self.visits[gate.name, width] = visit
                try:
                    self._visit(page, gate, width, visit)
                except Exception as error:  # noqa: BLE001 - the page's tests report it
                    visit.error = f"{type(error).__name__}: {error}"

    def _page_for(self, user: User | None) -> Page:
        """One context per person, logged in once through a session cookie."""
        context = self.browser.new_context(locale="es-ES", base_url=self.base_url)
        self._contexts.append(context)
        context.set_default_timeout(TIMEOUT_MS)
        context.set_default_navigation_timeout(TIMEOUT_MS)
        context.add_init_script(_REPORT_CSP_VIOLATIONS)
        if user is not None:
            log_in(context, user, self.base_url)
        page = context.new_page()
        page.on("console", self._on_console)
        page.on("pageerror", lambda error: self._problems.append(f"uncaught exception: {error}"))
        return page

    def _on_console(self, message: ConsoleMessage) -> None:
        if message.type == "error":
            self._problems.append(f"console error: {message.text}")

    def _visit(self, page: Page, gate: Gate, width: int, visit: Visit) -> None:
        self._problems = visit.problems
        page.set_viewport_size({"width": width, "height": HEIGHT})
        response = page.goto(visit.url)
        page.wait_for_load_state("load")
        visit.status = response.status if response else 0
        visit.final_url = page.url
        if response is not None and gate.name not in self.served:
            served = self.folder / f"{gate.name}.html"
            served.write_bytes(response.body())
            self.served[gate.name] = served
        visit.violations = axe_violations(page)
        visit.overflow = horizontal_overflow(page)
        visit.first_post_bottom = page.evaluate(
            "() => document.querySelector('#post-list article > header')?.getBoundingClientRect().bottom ?? null"
        )
        # A round trip delivers the console events still in flight.
        page.evaluate("() => document.readyState")


@contextmanager
def _site_as_in_a_test(server) -> Iterator[None]:
    """The database open to this module (and the live server's thread) and
    the settings every test runs with (tests/conftest.py's autouse fixtures,
    pytest-django's for the live server), for work done outside any test.
    Whatever is written is committed, so the server sees it on PostgreSQL
    too; everything is emptied afterwards, as after a transactional test."""
    from django.core.cache import cache
    from django.core.management import call_command

    host = urlsplit(server.url).hostname
    with (
        override_settings(
            PASSWORD_HASHERS=["django.contrib.auth.hashers.MD5PasswordHasher"],
            STORAGES={
                **settings.STORAGES,
                "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
            },
        ),
        modify_settings(ALLOWED_HOSTS={"append": host}),
    ):
        cache.clear()
        try:
            yield
        finally:
            call_command("flush", interactive=False, verbosity=0)
            cache.clear()


@pytest.fixture(scope="module")
def crawl(request: pytest.FixtureRequest, browser: Browser, django_db_setup, django_db_blocker) -> Iterator[Crawl]:
    java = require_gate_tools()
    # Asked for here rather than as an argument: a test that names the live
    # server gets pytest-django's transactional database, emptied after each
    # test, and these tests only read what the crawl kept.
    server = request.getfixturevalue("live_server")
    with tempfile.TemporaryDirectory(prefix="hitos-gates-") as folder:
        crawl = Crawl(browser, server.url, java, Path(folder))
        with django_db_blocker.unblock(), _site_as_in_a_test(server):
            crawl.run()
        yield crawl
        crawl.close()


def _loaded(visit: Visit, gate: Gate, width: int) -> None:
    where = f"{gate.name} ({visit.url}) at {width} px"
    assert not visit.error, f"{where}: the visit failed: {visit.error}"
    assert visit.status == 200, f"{where}: answered {visit.status}"
    assert visit.final_url.endswith(visit.url), f"{where}: ended at {visit.final_url} instead"


def _ids(gates) -> list[str]:
    return [gate.name for gate in gates]


@pytest.mark.parametrize("width", WIDTHS, ids=lambda width: f"{width}px")
@pytest.mark.parametrize("gate", PAGES, ids=_ids(PAGES))
def test_page_has_no_accessibility_violation(crawl: Crawl, gate: Gate, width: int):
    visit = crawl.visit(gate, width)
    _loaded(visit, gate, width)
    assert not visit.problems, f"{gate.name} at {width} px: the browser reported:\n" + "\n".join(visit.problems)
    assert not visit.violations, (
        f"{gate.name} ({visit.url}) at {width} px: axe-core found {len(visit.violations)} violation(s):\n"
        + describe_violations(visit.violations)
    )


@pytest.mark.parametrize("width", WIDTHS, ids=lambda width: f"{width}px")
@pytest.mark.parametrize("gate", PAGES, ids=_ids(PAGES))
def test_page_fits_the_window_without_sideways_scroll(crawl: Crawl, gate: Gate, width: int):
    visit = crawl.visit(gate, width)
    _loaded(visit, gate, width)
    overflow = visit.overflow
    assert overflow["page"] <= overflow["viewport"], f"{gate.name} ({visit.url}) at {width} px: " + describe_overflow(
        overflow
    )


SCENES = [gate for gate in PAGES if gate.name.startswith("scene")]


@pytest.mark.parametrize("gate", SCENES, ids=_ids(SCENES))
def test_on_a_phone_the_scene_shows_its_first_post_on_the_first_screen(crawl: Crawl, gate: Gate):
    # The scene's tools fold into one control (hitos/_scene_tools.html) and its
    # secret rolls into a disclosure, so the story starts on the first screen.
    visit = crawl.visit(gate, 360)
    _loaded(visit, gate, 360)
    assert visit.first_post_bottom is not None, f"{gate.name}: no post on the page"
    assert visit.first_post_bottom <= HEIGHT, (
        f"{gate.name} at 360 × {HEIGHT}: the first post's header ends at {visit.first_post_bottom:.0f} px"
    )


@pytest.mark.parametrize("gate", PAGES, ids=_ids(PAGES))
def test_page_html_has_no_error_for_the_nu_checker(crawl: Crawl, gate: Gate):
    messages = crawl.html_messages(gate)
    errors = [message for message in messages if is_vnu_error(message)]
    warnings = [message for message in messages if not is_vnu_error(message)]
    report = f"{gate.name}: {len(errors)} error(s), {len(warnings)} warning(s)"
    if warnings:
        # Allowed, but listed (pytest -rA shows them for a passing test).
        print(report + "\n" + describe_vnu(warnings))
    assert not errors, f"{report} from the Nu HTML Checker:\n" + describe_vnu(errors)


def test_the_gates_catch_what_they_check(crawl: Crawl, page: Page):
    # The same checks on a page known to fail each of them: a gate that
    # cannot fail would pass any page.
    page.set_viewport_size({"width": 360, "height": HEIGHT})
    page.set_content(CANARY_HTML)

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
