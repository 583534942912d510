"""Issue 15's gates on the Vaesen pages of the demo, in a real Chromium.

The same gates as issue 14's (tests/browser/test_gates.py) on every page a
person reaches in the Vaesen demo campaign (demo/vaesen.py, «Los ahogados de
Svartsjön»), at 1280 px and at 360 px wide:

- axe-core finds no violation of any impact (``AXE_TAGS`` in conftest.py);
- the page is no wider than the window (nothing to scroll sideways);
- the page loaded as itself (200, no redirect) without a console error, an
  uncaught exception or a Content Security Policy violation;

and the HTML each page was served has no error for the Nu HTML Checker.

The demo is loaded once and every page visited in one go by a module fixture
(``test_gates.Crawl``, the same visit), one browser context per person: a
visitor without an account, Ana (Elin), Bruno (Axel, whose failed search waits
to be pushed and whose fear test is open) and the GM. Each page and width is a
test of its own; the figures of the last run go to
test-results/gates-vaesen.json.

Locally these tests skip without Chromium, node_modules or Java; under CI=true
they fail instead.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from django.db.models import F
from django.urls import reverse
from playwright.sync_api import Browser, ConsoleMessage

from accounts.models import User
from campaigns.models import Campaign
from rolls.models import RollEntry
from sheets.models import Character
from table.models import TableRoll
from tests.browser.conftest import (
    describe_overflow,
    describe_violations,
    describe_vnu,
    is_vnu_error,
    require_gate_tools,
)
from tests.browser.test_gates import WIDTHS, Crawl, Visit, _site_as_in_a_test

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

FIGURES = Path(__file__).resolve().parents[2] / "test-results" / "gates-vaesen.json"


@dataclass(frozen=True)
class VaesenDemo:
    """What the Vaesen demo campaign holds that the pages' addresses need."""

    campaign: Campaign
    people: dict[str, User | None]  # "visitor", "ana", "bruno", "gm"
    mill_scene: int  # «1. El molino»: Elin's pushed test, Axel's failed one
    pier_scene: int  # «2. El embarcadero»: the combat and the fear test
    elin: int
    axel: int
    olof: int  # the human NPC
    creature: int  # the bäckahäst
    pushable: int  # Axel's failed search, waiting for Bruno's push
    permalink: str  # Elin's pushed test: a public re-roll
    turn: str  # who plays the PC whose turn it is in the combat: "ana" or "bruno"

    @classmethod
    def load(cls) -> VaesenDemo:
        from demo import vaesen as story
        from demo.campaign import demo_load
        from systems.vaesen.combat import services as combat_services
        from systems.vaesen.models import VaesenCombat

        demo_load(aventuras=False)
        campaign = Campaign.objects.get(slug=story.VAESEN_CAMPAIGN_SLUG)
        sheets = {c.name: c for c in Character.objects.filter(campaign=campaign).select_related("owner")}
        mill = campaign.scenes.get(title=story.MILL_SCENE)
        pier = campaign.scenes.get(title=story.PIER_SCENE)
        pushable = TableRoll.objects.filter(
            campaign=campaign, scene=mill, character=sheets[story.AXEL], first=F("latest")
        ).latest("id")
        pushed = RollEntry.objects.filter(
            campaign=campaign, kind=RollEntry.Kind.REROLL, audience=RollEntry.Audience.PUBLIC, post__scene=mill
        ).first()
        fight = VaesenCombat.objects.get(scene=pier, ended_at__isnull=True)
        acting = combat_services.current(fight, list(fight.combatants.select_related("character__owner")))
        return cls(
            campaign=campaign,
            people={
                "visitor": None,
                "ana": User.objects.get(username="ana"),
                "bruno": User.objects.get(username="bruno"),
                "gm": campaign.gm,
            },
            mill_scene=mill.pk,
            pier_scene=pier.pk,
            elin=sheets[story.ELIN].pk,
            axel=sheets[story.AXEL].pk,
            olof=sheets[story.OLOF].pk,
            creature=sheets[story.CREATURE].pk,
            pushable=pushable.pk,
            permalink=pushed.permalink,
            turn=acting.character.owner.username,
        )


@dataclass(frozen=True)
class Gate:
    name: str
    who: str  # "visitor" (logged out), "ana", "bruno", "gm", or "turn" (the player whose PC acts now)
    address: Callable[[VaesenDemo], str]


def _in_campaign(name: str, *args: str) -> Callable[[VaesenDemo], str]:
    return lambda demo: reverse(name, args=[demo.campaign.slug, *(getattr(demo, arg) for arg in args)])


PAGES = (
    Gate("campaign", "ana", _in_campaign("campaigns:campaign-detail")),
    Gate("campaign-visitor", "visitor", _in_campaign("campaigns:campaign-detail")),
    Gate("scene-player", "ana", _in_campaign("table:scene-detail", "pier_scene")),
    Gate("scene-gm", "gm", _in_campaign("table:scene-detail", "pier_scene")),
    Gate("scene-visitor", "visitor", _in_campaign("table:scene-detail", "pier_scene")),
    # Axel's failed search, with its push form under the card.
    Gate("scene-mill-player", "bruno", _in_campaign("table:scene-detail", "mill_scene")),
    Gate("sheet-list", "ana", _in_campaign("sheets:sheet-list")),
    Gate("sheet-pc", "ana", _in_campaign("sheets:sheet-detail", "elin")),
    Gate("sheet-pc-visitor", "visitor", _in_campaign("sheets:sheet-detail", "elin")),
    Gate("sheet-npc", "gm", _in_campaign("sheets:sheet-detail", "olof")),
    Gate("sheet-creature", "gm", _in_campaign("sheets:sheet-detail", "creature")),
    Gate("sheet-create", "ana", _in_campaign("sheets:sheet-create")),
    Gate("sheet-edit", "gm", _in_campaign("sheets:sheet-edit", "olof")),
    Gate("npc-create", "gm", _in_campaign("sheets:npc-create")),
    Gate("sheet-print", "ana", _in_campaign("sheets:sheet-print", "elin")),
    Gate("push", "bruno", lambda demo: reverse("vaesen:push", args=[demo.pushable])),
    Gate("fear-player", "bruno", _in_campaign("vaesen:fear", "pier_scene")),
    Gate("fear-gm", "gm", _in_campaign("vaesen:fear", "pier_scene")),
    Gate("opposed-gm", "gm", _in_campaign("vaesen:opposed", "pier_scene")),
    Gate("opposed-player", "bruno", _in_campaign("vaesen:opposed", "pier_scene")),
    Gate("healing-gm", "gm", _in_campaign("vaesen:healing", "pier_scene")),
    Gate("healing-player", "ana", _in_campaign("vaesen:healing", "pier_scene")),
    Gate("combat-gm", "gm", _in_campaign("vaesen:combat", "pier_scene")),
    Gate("combat-player", "turn", _in_campaign("vaesen:combat", "pier_scene")),
    Gate("options", "gm", _in_campaign("vaesen:campaign-options")),
    Gate("roll-log", "ana", _in_campaign("rolls:roll-log")),
    Gate("roll-log-scene", "ana", lambda demo: _in_campaign("rolls:roll-log")(demo) + f"?escena={demo.mill_scene}"),
    Gate("roll-permalink", "visitor", lambda demo: reverse("rolls:roll-permalink", args=[demo.permalink])),
)


class VaesenCrawl(Crawl):
    """``test_gates.Crawl``'s visit of ``PAGES``, with the Vaesen demo's people."""

    def run(self) -> None:
        try:
            demo = VaesenDemo.load()
        except Exception as error:  # noqa: BLE001 - every test reports it
            self.failure = f"the Vaesen demo campaign could not be loaded: {error!r}"
            return
        pages = {who: self._page_for(user) for who, user in demo.people.items()}
        pages["turn"] = pages[demo.turn]
        for gate in PAGES:
            url = gate.address(demo)
            for width in WIDTHS:
                visit = Visit(url=url)
                self.visits[gate.name, width] = visit
                try:
                    self._visit(pages[gate.who], gate, width, visit)
                except Exception as error:  # noqa: BLE001 - the page's tests report it
                    visit.error = f"{type(error).__name__}: {error}"

    def _on_console(self, message: ConsoleMessage) -> None:
        # Where, too: a resource that failed to load is named by its address.
        if message.type == "error":
            self._problems.append(f"console error at {message.location.get('url') or '?'}: {message.text}")

    def _write_figures(self) -> None:
        figures = {}
        for gate in PAGES:
            messages = (self._vnu or {}).get(gate.name)
            figures[gate.name] = {
                "who": gate.who,
                "url": self.visits[gate.name, WIDTHS[0]].url if (gate.name, WIDTHS[0]) in self.visits else "",
                "widths": {
                    f"{width}px": {
                        "status": visit.status,
                        "axe_violations": len(visit.violations),
                        "axe_rules": sorted(violation["id"] for violation in visit.violations),
                        "page_width": visit.overflow.get("page"),
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
        FIGURES.parent.mkdir(exist_ok=True)
        FIGURES.write_text(json.dumps(figures, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


@pytest.fixture(scope="module")
def crawl(
    request: pytest.FixtureRequest, browser: Browser, django_db_setup, django_db_blocker
) -> Iterator[VaesenCrawl]:
    java = require_gate_tools()
    server = request.getfixturevalue("live_server")
    with tempfile.TemporaryDirectory(prefix="hitos-vaesen-gates-") as folder:
        crawl = VaesenCrawl(browser, server.url, java, Path(folder))
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
def test_vaesen_page_has_no_accessibility_violation(crawl: VaesenCrawl, gate: Gate, width: int):
    visit = crawl.visit(gate, width)
    _loaded(visit, gate, width)
    assert not visit.problems, f"{gate.name} at {width} px: the browser reported:\n" + "\n".join(visit.problems)
    assert not visit.violations, (
        f"{gate.name} ({visit.url}) at {width} px: axe-core found {len(visit.violations)} violation(s):\n"
        + describe_violations(visit.violations)
    )


@pytest.mark.parametrize("width", WIDTHS, ids=lambda width: f"{width}px")
@pytest.mark.parametrize("gate", PAGES, ids=_ids(PAGES))
def test_vaesen_page_fits_the_window_without_sideways_scroll(crawl: VaesenCrawl, gate: Gate, width: int):
    visit = crawl.visit(gate, width)
    _loaded(visit, gate, width)
    overflow = visit.overflow
    assert overflow["page"] <= overflow["viewport"], f"{gate.name} ({visit.url}) at {width} px: " + describe_overflow(
        overflow
    )


@pytest.mark.parametrize("gate", PAGES, ids=_ids(PAGES))
def test_vaesen_page_html_has_no_error_for_the_nu_checker(crawl: VaesenCrawl, gate: Gate):
    messages = crawl.html_messages(gate)
    errors = [message for message in messages if is_vnu_error(message)]
    warnings = [message for message in messages if not is_vnu_error(message)]
    report = f"{gate.name}: {len(errors)} error(s), {len(warnings)} warning(s)"
    if warnings:
        print(report + "\n" + describe_vnu(warnings))
    assert not errors, f"{report} from the Nu HTML Checker:\n" + describe_vnu(errors)
