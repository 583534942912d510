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
(tests/browser/gates.py, the same visit), one browser context per person: a
visitor without an account, Ana (Elin), Bruno (Axel, whose failed search waits
to be pushed and whose fear test is open) and the GM. Each page and width is a
test of its own; the figures of the last run go to
test-results/gates-vaesen.json.

Locally these tests skip without Chromium, node_modules or Java; under CI=true
they fail instead.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pytest
from django.db.models import F
from django.urls import reverse

from accounts.models import User
from campaigns.models import Campaign
from rolls.models import RollEntry
from sheets.models import Character
from table.models import TableRoll
from tests.browser.gates import Crawl, Gate, crawl_fixture, gate_tests

# Not transactional: the tests only read what the crawl kept (tests/browser/gates.py).
pytestmark = [pytest.mark.browser, pytest.mark.django_db]


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
    """The gates' visit of ``PAGES``, with the Vaesen demo's people; "turn"
    is the player whose PC acts now in the combat."""

    pages = PAGES
    figures = "gates-vaesen.json"
    what = "Vaesen demo campaign"

    def build(self) -> tuple[VaesenDemo, dict[str, User | None]]:
        demo = VaesenDemo.load()
        return demo, {**demo.people, "turn": demo.people[demo.turn]}


crawl = crawl_fixture(VaesenCrawl)
(
    test_vaesen_crawl_visits_every_page,
    test_vaesen_page_has_no_accessibility_violation,
    test_vaesen_page_fits_the_window_without_sideways_scroll,
    test_vaesen_page_html_has_no_error_for_the_nu_checker,
) = gate_tests(PAGES, count=28)
