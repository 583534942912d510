"""The browser gates shared by every crawl file (tests/browser/test_*gates.py).

A crawl file lists its pages (``Gate``: a name, who visits, the address and,
if the gate is about a part of the page, the texts that must be on it),
builds its world in a ``Crawl`` subclass (``build``) and takes from here the
module fixture that visits every page once (``crawl_fixture``) and the three
parametrised tests every page and width must pass (``gate_tests``):

- the page loaded as itself (200, no redirect) without a console error, an
  uncaught exception or a Content Security Policy violation, and axe-core
  finds no violation of any impact (``AXE_TAGS`` in conftest.py);
- nothing scrolls sideways: the page is no wider than the window, and no
  box in it scrolls horizontally (a table in a ``table-responsive`` box
  wider than a phone hides its columns a swipe away; such a table stacks
  its rows instead, as the roll log does);
- the HTML the server sent (the response's body, not the DOM after scripts
  ran) has no error for the Nu HTML Checker, run once with Java for all the
  pages of the file (warnings are allowed and listed).

The world is built once per file and every page visited in one go, with one
browser context per person, and the database is emptied afterwards:
pytest-django empties it after every test that uses the live server, so the
pages cannot be visited one test at a time. Each page is loaded once, in the
wide window, and waits for what htmx brings in when it loads (the scene
page's status); it is then checked as shown at each width in turn, the
window narrowed around the same page. The site sends the same HTML whatever
the width and its scripts never look at the window's size (only CSS media
queries do, and they follow the window), so the narrowed page is the page a
phone loads, without asking the server for it (and its status) again.

A crawl file's tests carry the database mark, so that pytest-django sets the
test database up even when the file runs alone (without it the world would
land in the development database), but not a transactional one, and none of
them names the live server: they only read what the crawl kept, and a
transactional test empties the database after itself, which a hundred-odd
tests per file would do for nothing.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import urlsplit

import pytest
from django.conf import settings
from django.db import connections
from django.test import modify_settings, override_settings
from playwright.sync_api import Browser, BrowserContext, ConsoleMessage, Locator, Page, expect

from accounts.models import User
from tests.browser.conftest import (
    _REPORT_CSP_VIOLATIONS,
    TIMEOUT_MS,
    axe_violations,
    describe_overflow,
    describe_violations,
    describe_vnu,
    fits,
    horizontal_overflow,
    is_vnu_error,
    log_in,
    require_gate_tools,
    vnu_check,
)

WIDTHS = (1280, 360)
HEIGHT = 740  # A common phone's height; the wide window keeps it too.
RESULTS = Path(__file__).resolve().parents[2] / "test-results"

# What every gate must catch: an image without a text alternative (axe's
# image-alt), a box wider than a phone, an htmx attribute without its data-
# prefix (invalid HTML). It goes to the Nu HTML Checker with every crawl's pages.
CANARY = "canary"
CANARY_HTML = """<!doctype html>
<html lang="es"><head><meta charset="utf-8"><title>Canario</title></head>
<body><main><h1>Canario</h1><img src="data:,"><div id="ancho" style="width: 600px">ancho</div>
<div hx-get="/">htmx</div></main></body></html>
"""

# A part htmx fetches once the page has loaded (``data-hx-trigger="load"``):
# the scene page's status. It is swapped for the answer, which has no
# ``data-hx-get``; the page is checked once it is there.
LOADING_LATER = "#estado-escena[data-hx-get]"


@dataclass(frozen=True)
class Gate:
    name: str
    who: str  # whose browser context visits the page: a key of the crawl's ``people``
    address: Callable[[Any], str]  # the page's address in the crawl's world
    shows: tuple[str, ...] = ()  # texts the page must show (the parts checked really are there)
    refuse: Callable[[Page], Locator] | None = None  # fills a form wrongly; it is then posted without htmx


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
    """Every page of ``pages`` at every width, visited once (``run``), then
    kept for the tests to judge; the HTML is checked on the first ask.

    A subclass names its ``pages``, its ``figures`` file (or None) and builds
    its world (``build``: the world the addresses are computed from, and the
    user behind each ``Gate.who``, None for a visitor without an account)."""

    pages: ClassVar[Sequence[Gate]] = ()
    figures: ClassVar[str | None] = None  # a file name under test-results/
    what: ClassVar[str] = "world"  # named when it cannot be built

    def __init__(self, browser: Browser, base_url: str, java: str, folder: Path) -> None:
        self.browser = browser
        self.base_url = base_url
        self.java = java
        self.folder = folder
        self.visits: dict[tuple[str, int], Visit] = {}
        self.served: dict[str, Path] = {}  # page name -> the HTML as the server sent it
        self.failure = ""  # the world could not be built
        self._vnu: dict[str, list[dict]] | None = None
        self._contexts: list[BrowserContext] = []
        self._problems: list[str] = []

    def build(self) -> tuple[Any, dict[str, User | None]]:
        raise NotImplementedError

    # --- What the tests ask ----------------------------------------------------------

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
        if self.visits and self.figures:
            self._write_figures()

    def _write_figures(self) -> None:
        """test-results/<figures>: each page's figures at each width, for the
        closing note of a release (axe violations, widths, vnu errors)."""
        figures = {}
        for gate in self.pages:
            messages = (self._vnu or {}).get(gate.name)
            first = self.visits.get((gate.name, WIDTHS[0]))
            figures[gate.name] = {
                "who": gate.who,
                "url": first.url if first else "",
                "widths": {
                    f"{width}px": {
                        "status": visit.status,
                        "axe_violations": len(visit.violations),
                        "axe_rules": sorted(violation["id"] for violation in visit.violations),
                        "page_width": visit.overflow.get("page"),
                        "sideways_scrollers": len(visit.overflow.get("scrollers", ())),
                        "first_post_bottom": visit.first_post_bottom,
                        "browser_problems": len(visit.problems),
                        "error": visit.error,
                    }
                    for width in WIDTHS
                    if (visit := self.visits.get((gate.name, width)))
                },
                "vnu_errors": None if messages is None else sum(is_vnu_error(m) for m in messages),
                "vnu_warnings": None if messages is None else sum(not is_vnu_error(m) for m in messages),
            }
        RESULTS.mkdir(exist_ok=True)
        (RESULTS / self.figures).write_text(json.dumps(figures, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")

    # --- The visit -------------------------------------------------------------------

    def run(self) -> None:
        try:
            world, people = self.build()
        except Exception as error:  # noqa: BLE001 - every test reports it
            self.failure = f"the {self.what} could not be built: {error!r}"
            return
        # One context per person, even when two names stand for the same one.
        by_user: dict[int | None, Page] = {}
        pages = {}
        for who, user in people.items():
            key = None if user is None else user.pk
            if key not in by_user:
                by_user[key] = self._page_for(user)
            pages[who] = by_user[key]
        for gate in self.pages:
            visits = []
            for width in WIDTHS:
                visit = Visit()
                self.visits[gate.name, width] = visit
                visits.append(visit)
            try:
                url = gate.address(world)
                for visit in visits:
                    visit.url = url
                self._visit(pages[gate.who], gate, visits)
            except Exception as error:  # noqa: BLE001 - the page's tests report it
                for visit in visits:
                    if not visit.overflow:
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
        # Where, too: a resource that failed to load is named by its address.
        if message.type == "error":
            self._problems.append(f"console error at {message.location.get('url') or '?'}: {message.text}")

    def _visit(self, page: Page, gate: Gate, visits: list[Visit]) -> None:
        """Load the page once in the wide window; check it at each width."""
        problems: list[str] = []
        self._problems = problems
        page.set_viewport_size({"width": WIDTHS[0], "height": HEIGHT})
        response = page.goto(visits[0].url)
        page.wait_for_load_state("load")
        if gate.refuse is not None:
            form = gate.refuse(page)
            # Posted as without JavaScript (htmx sees no submit event): the
            # page the server sends back, whole, is the one checked.
            with page.expect_navigation() as navigation:
                form.evaluate("form => HTMLFormElement.prototype.submit.call(form)")
            response = navigation.value
            page.wait_for_load_state("load")
        for visit in visits:
            visit.status = response.status if response else 0
            visit.final_url = page.url
        if response is not None and gate.name not in self.served:
            served = self.folder / f"{gate.name}.html"
            served.write_bytes(response.body())
            self.served[gate.name] = served
        # What htmx brings in on load is part of the page checked; and whatever the gate is about.
        expect(page.locator(LOADING_LATER)).to_have_count(0)
        for text in gate.shows:
            expect(page.get_by_text(text, exact=False).first).to_be_attached()
        for width, visit in zip(WIDTHS, visits, strict=True):
            if width != WIDTHS[0]:
                page.set_viewport_size({"width": width, "height": HEIGHT})
            visit.violations = axe_violations(page)
            visit.first_post_bottom = page.evaluate(
                "() => document.querySelector('#post-list article > header')?.getBoundingClientRect().bottom ?? null"
            )
            # A round trip delivers the console events still in flight.
            page.evaluate("() => document.readyState")
            visit.problems = list(problems)
            visit.overflow = horizontal_overflow(page)


@contextmanager
def site_as_in_a_test(server) -> Iterator[None]:
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


def crawl_fixture(crawl_class: type[Crawl]):
    """The module fixture ``crawl``: ``crawl_class``'s world built and every
    page visited once, for the module's tests to judge."""

    @pytest.fixture(scope="module", name="crawl")
    def crawl(request: pytest.FixtureRequest, browser: Browser, django_db_setup, django_db_blocker) -> Iterator[Crawl]:
        java = require_gate_tools()
        # Asked for here rather than as an argument: a test that names the live
        # server gets pytest-django's transactional database, emptied after each
        # test, and these tests only read what the crawl kept.
        server = request.getfixturevalue("live_server")
        with tempfile.TemporaryDirectory(prefix="hitos-gates-") as folder:
            crawl = crawl_class(browser, server.url, java, Path(folder))
            with django_db_blocker.unblock(), site_as_in_a_test(server):
                crawl.run()
            yield crawl
            crawl.close()
        # The module's tests are not transactional, and nothing else closes
        # the connection they share with the crawl, which pytest-django's
        # closing of the test databases does not see (opened while
        # Playwright's event loop runs): PostgreSQL would refuse to drop a
        # test database still in use at the end of the run.
        connections.close_all()

    return crawl


def loaded(visit: Visit, gate: Gate, width: int) -> None:
    where = f"{gate.name} ({visit.url}) at {width} px"
    assert not visit.error, f"{where}: the visit failed: {visit.error}"
    assert visit.status == 200, f"{where}: answered {visit.status}"
    assert visit.final_url.endswith(visit.url), f"{where}: ended at {visit.final_url} instead"


def ids(gates: Sequence[Gate]) -> list[str]:
    return [gate.name for gate in gates]


def gate_tests(pages: Sequence[Gate], count: int) -> tuple[Callable[..., None], ...]:
    """The gates' tests on ``pages`` (``count`` of them, each name once), for
    a crawl file to name: its page list, then no accessibility violation, no
    sideways scroll, no error for the Nu HTML Checker."""
    by_width = pytest.mark.parametrize("width", WIDTHS, ids=lambda width: f"{width}px")
    by_page = pytest.mark.parametrize("gate", pages, ids=ids(pages))

    def page_list(crawl: Crawl) -> None:
        names = ids(pages)
        assert len(names) == count, f"{len(names)} pages where the gates name {count}: {names}"
        assert len(set(names)) == count, f"a page is listed twice: {names}"
        assert crawl.pages == pages, "the crawl visits another list of pages than the tests judge"
        if not crawl.failure:
            assert set(crawl.visits) == {(name, width) for name in names for width in WIDTHS}

    @by_width
    @by_page
    def no_accessibility_violation(crawl: Crawl, gate: Gate, width: int) -> None:
        visit = crawl.visit(gate, width)
        loaded(visit, gate, width)
        assert not visit.problems, f"{gate.name} at {width} px: the browser reported:\n" + "\n".join(visit.problems)
        assert not visit.violations, (
            f"{gate.name} ({visit.url}) at {width} px: axe-core found {len(visit.violations)} violation(s):\n"
            + describe_violations(visit.violations)
        )

    @by_width
    @by_page
    def fits_the_window(crawl: Crawl, gate: Gate, width: int) -> None:
        visit = crawl.visit(gate, width)
        loaded(visit, gate, width)
        overflow = visit.overflow
        assert overflow["viewport"] == width and fits(overflow), (
            f"{gate.name} ({visit.url}) at {width} px: " + describe_overflow(overflow)
        )

    @by_page
    def html_valid(crawl: Crawl, gate: Gate) -> None:
        messages = crawl.html_messages(gate)
        errors = [message for message in messages if is_vnu_error(message)]
        warnings = [message for message in messages if not is_vnu_error(message)]
        report = f"{gate.name}: {len(errors)} error(s), {len(warnings)} warning(s)"
        if warnings:
            # Allowed, but listed (pytest -rA shows them for a passing test).
            print(report + "\n" + describe_vnu(warnings))
        assert not errors, f"{report} from the Nu HTML Checker:\n" + describe_vnu(errors)

    return page_list, no_accessibility_violation, fits_the_window, html_valid
