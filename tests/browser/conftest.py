"""Playwright fixtures: Debian's Chromium against pytest-django's live server.

One Chromium runs for the whole ``tests/browser`` package; every test gets a
fresh context (no cookies, Spanish ``Accept-Language``) and a page whose
console errors, uncaught exceptions and Content Security Policy violations are
collected. A test that leaves any of them behind fails with the list.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from playwright.sync_api import Browser, ConsoleMessage, Page, Playwright, expect, sync_playwright

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
# Generous for a loaded CI machine; a passing test never waits this long.
TIMEOUT_MS = 10_000
expect.set_options(timeout=TIMEOUT_MS)

# Chromium reports a CSP violation as a console error, in wording that changes
# between versions ("Refused to …", "Executing inline script violates …").
# This listener reports every violation once more in a stable form, with the
# directive and what was blocked. Init scripts are injected through the
# DevTools protocol, so the page's own CSP does not block this one.
_REPORT_CSP_VIOLATIONS = """
document.addEventListener("securitypolicyviolation", (event) => {
  console.error(
    `CSP violation: ${event.effectiveDirective} blocked ${event.blockedURI || "(inline)"}`
    + ` at ${event.sourceFile || event.documentURI}:${event.lineNumber}`
  );
});
"""


def _require_chromium() -> None:
    if CHROMIUM.exists():
        return
    reason = f"{CHROMIUM} is missing: install Debian's Chromium (apt-get install -y chromium) to run the browser tests"
    # In CI the browser tests are part of the contract: never let them skip.
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI=true but {reason}", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="package")
def playwright() -> Iterator[Playwright]:
    _require_chromium()
    # Playwright's sync API keeps an asyncio loop marked as running in this
    # thread for as long as Playwright is started (between calls too), and
    # Django then refuses ORM calls here with SynchronousOnlyOperation: the
    # tests' own queries and pytest-django's flush after each test. No ORM
    # code runs inside that loop (only Playwright's), so the check is a false
    # alarm here. Package scope keeps both the
    # running loop and this override to the browser tests: Playwright stops,
    # and the variable is restored, before any other package's tests run.
    previous = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    try:
        with sync_playwright() as p:
            yield p
    finally:
        if previous is None:
            del os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"]
        else:
            os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = previous


@pytest.fixture(scope="package")
def browser(playwright: Playwright) -> Iterator[Browser]:
    # Never a browser Playwright downloads: Debian's, with fixed flags.
    browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
    yield browser
    browser.close()


@pytest.fixture(scope="session")
def live_server(django_db_setup, live_server):
    # pytest-django's live server is session-scoped and would otherwise start
    # before the test database exists. Started after it, the server shares
    # the test's in-memory SQLite connection, as Django's LiveServerTestCase
    # does, instead of opening one per request that SQLite's backend never
    # closes (a ResourceWarning, an error under filterwarnings=error).
    # That one connection must not serve two requests at once (a page's
    # htmx preview racing its form's POST broke it now and then: "bad
    # parameter or other API misuse"), so the server answers one at a time,
    # as a browser test needs anyway.
    httpd = live_server.thread.httpd
    app = httpd.get_app()
    lock = threading.Lock()

    def one_at_a_time(environ, start_response):
        with lock:
            return app(environ, start_response)

    httpd.set_app(one_at_a_time)
    return live_server


@dataclass
class BrowserProblems:
    """Console errors, uncaught exceptions and CSP violations seen in a test."""

    entries: list[str] = field(default_factory=list)

    def on_console(self, message: ConsoleMessage) -> None:
        if message.type == "error":
            location = message.location
            # Messages about inline code carry no source URL: name the page.
            source = location.get("url") or (message.page.url if message.page else "?")
            self.entries.append(f"console error at {source}:{location.get('lineNumber', 0)}: {message.text}")

    def on_page_error(self, page: Page, error: Exception) -> None:
        self.entries.append(f"uncaught exception at {page.url}: {error}")

    def take(self) -> list[str]:
        """Return what was collected and start afresh (for tests that provoke problems on purpose)."""
        taken, self.entries = self.entries, []
        return taken


@pytest.fixture
def browser_problems() -> BrowserProblems:
    return BrowserProblems()


@pytest.fixture
def page(
    request: pytest.FixtureRequest, browser: Browser, live_server, browser_problems: BrowserProblems
) -> Iterator[Page]:
    if request.node.get_closest_marker("browser") is None:
        pytest.fail("tests that drive Chromium must be marked @pytest.mark.browser", pytrace=False)
    context = browser.new_context(locale="es-ES", base_url=live_server.url)
    context.set_default_timeout(TIMEOUT_MS)
    context.set_default_navigation_timeout(TIMEOUT_MS)
    context.add_init_script(_REPORT_CSP_VIOLATIONS)
    page = context.new_page()
    page.on("console", browser_problems.on_console)
    page.on("pageerror", lambda error: browser_problems.on_page_error(page, error))
    yield page
    context.close()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    # Checked here rather than in the page fixture's teardown so that a page
    # that logged an error fails the test itself, not its teardown.
    result = yield
    problems: BrowserProblems | None = item.funcargs.get("browser_problems")  # type: ignore[attr-defined]
    page: Page | None = item.funcargs.get("page")  # type: ignore[attr-defined]
    if problems is None or page is None:
        return result
    # Let the last page finish loading (its subresources can still fail),
    # then a round trip to it delivers the console events still in flight.
    page.wait_for_load_state("load")
    page.evaluate("() => document.readyState")
    if problems.entries:
        listed = "\n".join(f"  - {entry}" for entry in problems.entries)
        pytest.fail(f"the browser reported {len(problems.entries)} problem(s):\n{listed}", pytrace=False)
    return result
