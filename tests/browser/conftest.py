"""Playwright fixtures: Debian's Chromium against pytest-django's live server.

One Chromium runs for the whole ``tests/browser`` package; every test gets a
fresh context (no cookies, Spanish ``Accept-Language``) and a page whose
console errors, uncaught exceptions and Content Security Policy violations are
collected. A test that leaves any of them behind fails with the list.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from playwright.sync_api import Browser, BrowserContext, ConsoleMessage, Page, Playwright, expect, sync_playwright

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


def require(present: bool, reason: str) -> None:
    """Skip the test when a tool it needs is missing, except under CI=true,
    where the browser tests are part of the contract and must never skip."""
    if present:
        return
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI=true but {reason}", pytrace=False)
    pytest.skip(reason)


def _require_chromium() -> None:
    require(
        CHROMIUM.exists(),
        f"{CHROMIUM} is missing: install Debian's Chromium (apt-get install -y chromium) to run the browser tests",
    )


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
    page = watched_page(browser, live_server.url, browser_problems)
    yield page
    page.context.close()


def watched_page(browser: Browser, base_url: str, problems: BrowserProblems, **options) -> Page:
    """A page in a context of its own (another person: ``options`` go to
    ``new_context``, e.g. a viewport), in Spanish, whose console errors,
    uncaught exceptions and CSP violations land in ``problems``."""
    context = browser.new_context(locale="es-ES", base_url=base_url, **options)
    context.set_default_timeout(TIMEOUT_MS)
    context.set_default_navigation_timeout(TIMEOUT_MS)
    context.add_init_script(_REPORT_CSP_VIOLATIONS)
    page = context.new_page()
    page.on("console", problems.on_console)
    page.on("pageerror", lambda error: problems.on_page_error(page, error))
    return page


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


def log_in(context: BrowserContext, user, base_url: str) -> None:
    """Log ``user`` in for every page of ``context`` through a session cookie
    (for tests about what a logged-in page shows, not about logging in)."""
    from django.conf import settings
    from django.test import Client

    client = Client()
    client.force_login(user)
    session = client.cookies[settings.SESSION_COOKIE_NAME].value
    context.add_cookies([{"name": settings.SESSION_COOKIE_NAME, "value": session, "url": base_url}])


# --- The gates: axe-core, the page's width, the Nu HTML Checker ------------------------------
#
# Both checkers are test dependencies pinned in package.json and installed by
# `make test` (npm ci) into node_modules/; nothing is fetched while tests run.

ROOT = Path(__file__).resolve().parents[2]
NODE_MODULES = ROOT / "node_modules"
AXE_JS = NODE_MODULES / "axe-core" / "axe.min.js"
VNU_JAR = NODE_MODULES / "vnu-jar" / "build" / "dist" / "vnu.jar"
# The WCAG 2.0 and 2.1 A and AA rules plus axe's best practices: every rule
# axe runs by default except the experimental ones and a few AAA checks.
AXE_TAGS = ("wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice")
_MISSING_TOOLS = "run `make test` once (it installs them with npm ci from package-lock.json)"


def require_gate_tools() -> str:
    """Skip (fail under CI=true) unless axe-core, the Nu HTML Checker and Java
    are all here; return the path of ``java``."""
    require(AXE_JS.exists(), f"{AXE_JS} is missing: {_MISSING_TOOLS}")
    require(VNU_JAR.exists(), f"{VNU_JAR} is missing: {_MISSING_TOOLS}")
    java = shutil.which("java")
    require(java is not None, "java is missing: the Nu HTML Checker (vnu.jar) runs on Java 11 or later")
    return str(java)


_RUN_AXE = """async (tags) => {
  const results = await axe.run(document, {runOnly: {type: "tag", values: tags}, resultTypes: ["violations"]});
  return results.violations.map((violation) => ({
    id: violation.id,
    impact: violation.impact,
    help: violation.help,
    nodes: violation.nodes.map((node) => ({target: node.target.join(" "), summary: node.failureSummary})),
  }));
}"""


def axe_violations(page: Page) -> list[dict]:
    """Run axe-core on the page as it is shown now; its violations, any impact.

    axe is put in through DevTools (``evaluate``), not a ``<script>`` tag: the
    site's Content Security Policy (script-src 'self') refuses an inline
    script, and turning the policy off (``bypass_csp``) would also let inline
    styles through, so the page checked would not be the page people see."""
    # Colours are measured at rest: no button caught halfway through its
    # hover transition under the pointer that just clicked it (Bootstrap
    # drops its transitions for a reader who asks for reduced motion).
    page.emulate_media(reduced_motion="reduce")
    page.mouse.move(0, 0)
    if not page.evaluate("() => typeof window.axe === 'object'"):
        page.evaluate(AXE_JS.read_text(encoding="utf-8"))
    return page.evaluate(_RUN_AXE, list(AXE_TAGS))


def describe_violations(violations: list[dict]) -> str:
    lines = []
    for violation in violations:
        lines.append(f"{violation['id']} ({violation['impact']}): {violation['help']}")
        for node in violation["nodes"][:8]:
            summary = " ".join(node["summary"].split())
            lines.append(f"    {node['target']}  — {summary}")
        if len(violation["nodes"]) > 8:
            lines.append(f"    … and {len(violation['nodes']) - 8} more")
    return "\n".join(lines)


# The elements that stick out of the viewport on the right (or left), widest
# first, leaving out those inside a box that clips or scrolls them (they do not
# widen the page); and the boxes that scroll sideways inside a page that fits
# (overflow-x auto or scroll, and content wider than the box: a phone reader
# would have to swipe them to read what is hidden). Each is named by tag, id,
# classes and the start of its text.
_OVERFLOW = """() => {
  const viewport = window.innerWidth;
  const page = document.documentElement.scrollWidth;
  const clipped = (element) => {
    for (let box = element.parentElement; box && box !== document.body; box = box.parentElement) {
      if (getComputedStyle(box).overflowX !== "visible") return true;
    }
    return false;
  };
  const name = (element) => {
    let text = element.tagName.toLowerCase();
    if (element.id) text += "#" + element.id;
    for (const cls of element.classList) text += "." + cls;
    const words = (element.textContent || "").trim().replace(/\\s+/g, " ").slice(0, 40);
    return words ? `${text} «${words}»` : text;
  };
  const wide = [];
  for (const element of document.body.querySelectorAll("*")) {
    const box = element.getBoundingClientRect();
    if ((box.right > viewport + 0.5 || box.left < -0.5) && box.width > 0 && !clipped(element)) {
      wide.push({element: name(element), left: Math.round(box.left), right: Math.round(box.right),
                 width: Math.round(box.width)});
    }
  }
  // Text that does not wrap (a long address) sticks out of a box that fits:
  // name the innermost box whose content is wider than itself.
  for (const element of document.body.querySelectorAll("*")) {
    if (element.scrollWidth > element.clientWidth + 1 && element.clientWidth > 0 && !clipped(element)
        && getComputedStyle(element).overflowX === "visible"
        && ![...element.children].some((child) => child.scrollWidth > child.clientWidth + 1)) {
      const box = element.getBoundingClientRect();
      wide.push({element: name(element) + " (its text)", left: Math.round(box.left),
                 right: Math.round(box.left + element.scrollWidth), width: element.scrollWidth});
    }
  }
  wide.sort((a, b) => b.right - a.right || b.width - a.width);
  const scrollers = [];
  for (const element of document.body.querySelectorAll("*")) {
    if (["auto", "scroll"].includes(getComputedStyle(element).overflowX)
        && element.scrollWidth > element.clientWidth + 1) {
      scrollers.push({element: name(element), width: element.clientWidth, content: element.scrollWidth});
    }
  }
  return {viewport, page, widest: wide.slice(0, 6), scrollers};
}"""


def horizontal_overflow(page: Page) -> dict:
    """``{"viewport", "page", "widest", "scrollers"}``: the window's width, the
    document's scroll width, the elements that stick out, widest first, and
    the boxes that scroll sideways."""
    return page.evaluate(_OVERFLOW)


def fits(overflow: dict) -> bool:
    """Nothing to scroll sideways: neither the page nor any box in it."""
    return overflow["page"] <= overflow["viewport"] and not overflow["scrollers"]


def describe_overflow(overflow: dict) -> str:
    lines = [f"the page is {overflow['page']} px wide in a {overflow['viewport']} px window"]
    if overflow["page"] > overflow["viewport"]:
        lines[0] += "; what sticks out:"
        lines += [
            f"    {item['element']}: {item['left']}…{item['right']} px ({item['width']} px wide)"
            for item in overflow["widest"]
        ]
    if overflow["scrollers"]:
        lines.append("what scrolls sideways inside the page:")
        lines += [
            f"    {item['element']}: {item['content']} px of content in a {item['width']} px box"
            for item in overflow["scrollers"]
        ]
    return "\n".join(lines)


def vnu_check(java: str, files: Sequence[Path]) -> dict[Path, list[dict]]:
    """The Nu HTML Checker's messages for each file, in one run of Java
    (starting it takes seconds; checking a page, milliseconds)."""
    command = [java, "-jar", str(VNU_JAR), "--format", "json", "--exit-zero-always", "--stdout"]
    done = subprocess.run([*command, *map(str, files)], capture_output=True, text=True, timeout=300, check=False)
    if done.returncode != 0 or not done.stdout.strip():
        raise RuntimeError(f"vnu.jar failed (exit {done.returncode}): {done.stderr.strip()[:2000]}")
    by_uri = {file.resolve().as_uri(): file for file in files}
    messages: dict[Path, list[dict]] = {file: [] for file in files}
    for message in json.loads(done.stdout)["messages"]:
        uri = message.get("url", "")
        # vnu writes file:/tmp/… where Python writes file:///tmp/….
        file = by_uri.get(uri) or by_uri.get(uri.replace("file:/", "file:///", 1))
        if file is None:
            raise RuntimeError(f"vnu.jar reported on something it was not given: {message}")
        messages[file].append(message)
    return messages


def is_vnu_error(message: dict) -> bool:
    # "error" is a validity error; "non-document-error" means the file could not be checked.
    return message.get("type") in {"error", "non-document-error"}


def describe_vnu(messages: list[dict]) -> str:
    lines = []
    for message in messages:
        kind = message.get("subType") or message["type"]
        where = (
            f"line {message.get('lastLine', '?')}, column {message.get('firstColumn', message.get('lastColumn', '?'))}"
        )
        extract = " ".join(message.get("extract", "").split())
        lines.append(f"    {kind} at {where}: {message['message']}" + (f"  «{extract}»" if extract else ""))
    return "\n".join(lines)


def shown_problems(page: Page, name: str, width: int) -> list[str]:
    """What axe-core and the width check find on the page as shown, worded
    for an assertion message (none: the page passes)."""
    problems = []
    violations = axe_violations(page)
    if violations:
        problems.append(f"{name} at {width} px, axe:\n{describe_violations(violations)}")
    overflow = horizontal_overflow(page)
    if not fits(overflow):
        problems.append(f"{name} at {width} px: {describe_overflow(overflow)}")
    return problems


def served_html_problems(java: str, served: dict[str, str]) -> list[str]:
    """The Nu HTML Checker's errors on each page's HTML as the server sent it
    (``served``: name → HTML), in one run, worded for an assertion message."""
    problems = []
    with tempfile.TemporaryDirectory(prefix="hitos-gates-") as folder:
        files = {name: Path(folder) / f"{name}.html" for name in served}
        for name, file in files.items():
            file.write_text(served[name], encoding="utf-8")
        messages = vnu_check(java, list(files.values()))
        for name, file in files.items():
            errors = [message for message in messages[file] if is_vnu_error(message)]
            if errors:
                problems.append(f"{name}, Nu HTML Checker:\n{describe_vnu(errors)}")
    return problems
