"""Issue 16's gates on the Hora de Aventuras pages of the demo, in a real Chromium.

The same gates as issues 14's and 15's (tests/browser/test_gates.py,
tests/browser/test_vaesen_gates.py) on every page a person reaches in the
Aventuras demo campaign (demo/aventuras.py, «El castillo de regaliz»), at
1280 px and at 360 px wide:

- axe-core finds no violation of any impact (``AXE_TAGS`` in conftest.py);
- the page is no wider than the window (nothing to scroll sideways);
- the page loaded as itself (200, no redirect) without a console error, an
  uncaught exception or a Content Security Policy violation;

and the HTML each page was served has no error for the Nu HTML Checker.

The demo is loaded once and every page visited in one go by a module fixture
(tests/browser/gates.py, the same visit), one browser context per person: a
visitor without an account, Ana (Chispa, whose reaction to the Barón's
gumdrop is open, A14, and whose claim of a hero point for her flaw waits for
the GM, A25), Bruno (Grumo, with the state «Pegajoso» por el morro to accept,
A27, and the lock re-rolled with a hero point, A22) and the GM. One sheet more
is sent to the GM (a draft the crawl writes and submits for Ana) so that the
review form is on a page too. Each page and width is a test of its own; the
figures of the last run go to test-results/gates-aventuras.json.

Locally these tests skip without Chromium, node_modules or Java; under
CI=true they fail instead.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pytest
from django.urls import reverse

from accounts.models import User
from campaigns.models import Campaign
from rolls.models import RollEntry
from sheets.models import Character
from table.models import TableRoll
from tests.browser.gates import Crawl, Gate, crawl_fixture, gate_tests

# Not transactional: the tests only read what the crawl kept (tests/browser/gates.py).
pytestmark = [pytest.mark.browser, pytest.mark.django_db]

# The sheet the crawl writes and sends, for the GM's review form.
CANDIDATE = "Mentita, la caramelo de menta"


@dataclass(frozen=True)
class AventurasDemo:
    """What the Aventuras demo campaign holds that the pages' addresses need."""

    campaign: Campaign
    people: dict[str, User | None]  # "visitor", "ana", "bruno", "gm"
    door_scene: int  # «1. La puerta del acertijo»: the riddles and their chachi chains (A5, A30)
    castle_scene: int  # «2. El castillo de regaliz»: the re-roll, the whip, the chase, the open reaction
    chispa: int
    grumo: int
    baron: int  # the GM's villain (A20)
    candidate: int  # Ana's sheet sent to the GM, waiting for review
    chain_roll: int  # the riddle whose chain converts two chachis (A30): Ana's
    gumdrop_roll: int  # the Barón's gumdrop, waiting for Chispa's reaction (A14): the GM's
    extension: str  # a conversion's signed entry (A5): a public extension
    reroll: str  # the hero point re-roll of the failed lock (A22): a public re-roll

    @classmethod
    def load(cls) -> AventurasDemo:
        from demo import aventuras as story
        from demo.campaign import demo_load
        from sheets import services as core
        from systems.aventuras.models import AventurasReaction
        from systems.aventuras.sheet.services import sheet_create

        demo_load()
        campaign = Campaign.objects.get(slug=story.AVENTURAS_CAMPAIGN_SLUG)
        sheets = {c.name: c for c in Character.objects.filter(campaign=campaign).select_related("owner")}
        door = campaign.scenes.get(title=story.DOOR_SCENE)
        castle = campaign.scenes.get(title=story.CASTLE_SCENE)
        ana = User.objects.get(username="ana")
        # A second hero for Ana, written and sent: the GM's review form.
        data = story.SHEETS[story.CHISPA]
        candidate = sheet_create(
            campaign=campaign,
            owner=ana,
            actor=ana,
            data=type(data)(
                fields={**data.fields, "name": CANDIDATE, "concept": "Caramelo de menta"},
                feats=data.feats,
                tools=data.tools,
            ),
        )
        core.sheet_submit(character=candidate, actor=ana)
        # The door opens on the last riddle: its chain ends on a conversion.
        chain = TableRoll.objects.select_related("latest").filter(campaign=campaign, scene=door).latest("id")
        extension = chain.latest
        assert extension.kind == RollEntry.Kind.EXTEND, extension.kind
        reroll = RollEntry.objects.get(
            campaign=campaign, kind=RollEntry.Kind.REROLL, audience=RollEntry.Audience.PUBLIC, post__scene=castle
        )
        gumdrop = AventurasReaction.objects.get(
            action__scene=castle, target=sheets[story.CHISPA], roll__isnull=True, declined_at__isnull=True
        ).action
        return cls(
            campaign=campaign,
            people={"visitor": None, "ana": ana, "bruno": User.objects.get(username="bruno"), "gm": campaign.gm},
            door_scene=door.pk,
            castle_scene=castle.pk,
            chispa=sheets[story.CHISPA].pk,
            grumo=sheets[story.GRUMO].pk,
            baron=sheets[story.BARON].pk,
            candidate=candidate.pk,
            chain_roll=chain.pk,
            gumdrop_roll=gumdrop.pk,
            extension=extension.permalink,
            reroll=reroll.permalink,
        )


def _in_campaign(name: str, *args: str) -> Callable[[AventurasDemo], str]:
    return lambda demo: reverse(name, args=[demo.campaign.slug, *(getattr(demo, arg) for arg in args)])


def _roll(name: str, arg: str) -> Callable[[AventurasDemo], str]:
    return lambda demo: reverse(name, args=[getattr(demo, arg)])


PAGES = (
    Gate("campaign", "ana", _in_campaign("campaigns:campaign-detail")),
    Gate("campaign-visitor", "visitor", _in_campaign("campaigns:campaign-detail")),
    # The riddles: chains of conversions (A5, A30).
    Gate("scene-door-player", "ana", _in_campaign("table:scene-detail", "door_scene")),
    # The castle: Ana's open reaction (A14) and her claim waiting (A25).
    Gate("scene-castle-player", "ana", _in_campaign("table:scene-detail", "castle_scene")),
    # Bruno: the state por el morro to accept (A27).
    Gate("scene-castle-bruno", "bruno", _in_campaign("table:scene-detail", "castle_scene")),
    Gate("scene-castle-gm", "gm", _in_campaign("table:scene-detail", "castle_scene")),
    Gate("scene-castle-visitor", "visitor", _in_campaign("table:scene-detail", "castle_scene")),
    Gate("sheet-list", "ana", _in_campaign("sheets:sheet-list")),
    Gate("sheet-pc", "ana", _in_campaign("sheets:sheet-detail", "chispa")),
    Gate("sheet-pc-visitor", "visitor", _in_campaign("sheets:sheet-detail", "chispa")),
    Gate("sheet-pc-bruno", "bruno", _in_campaign("sheets:sheet-detail", "grumo")),
    Gate("sheet-npc", "gm", _in_campaign("sheets:sheet-detail", "baron")),
    # A sheet sent to the GM: its review form.
    Gate("sheet-review", "gm", _in_campaign("sheets:sheet-detail", "candidate")),
    Gate("sheet-create", "ana", _in_campaign("sheets:sheet-create")),
    Gate("npc-create", "gm", _in_campaign("sheets:npc-create")),
    Gate("sheet-edit", "gm", _in_campaign("sheets:sheet-edit", "baron")),
    # After approval only the GM edits a hero's sheet.
    Gate("sheet-edit-pc", "gm", _in_campaign("sheets:sheet-edit", "chispa")),
    Gate("sheet-print", "ana", _in_campaign("sheets:sheet-print", "chispa")),
    Gate("hero-page", "ana", _in_campaign("aventuras:hero-page", "chispa")),
    Gate("hero-page-gm", "gm", _in_campaign("aventuras:hero-page", "grumo")),
    Gate("heroes-gm", "gm", _in_campaign("aventuras:heroes")),
    Gate("heroes-player", "bruno", _in_campaign("aventuras:heroes")),
    Gate("contests-gm", "gm", _in_campaign("aventuras:contests", "castle_scene")),
    Gate("contests-player", "ana", _in_campaign("aventuras:contests", "castle_scene")),
    Gate("roll-page", "ana", _roll("aventuras:roll", "chain_roll")),
    Gate("roll-page-gm", "gm", _roll("aventuras:roll", "gumdrop_roll")),
    Gate("roll-request", "gm", _in_campaign("table:request-create", "castle_scene")),
    Gate("roll-permalink", "visitor", _roll("rolls:roll-permalink", "extension")),
    Gate("roll-permalink-reroll", "visitor", _roll("rolls:roll-permalink", "reroll")),
    Gate("roll-log", "ana", _in_campaign("rolls:roll-log")),
    Gate("roll-log-scene", "ana", lambda demo: _in_campaign("rolls:roll-log")(demo) + f"?escena={demo.castle_scene}"),
    Gate("dashboard", "gm", _in_campaign("campaigns:dashboard")),
)


class AventurasCrawl(Crawl):
    """The gates' visit of ``PAGES``, with the Aventuras demo's people."""

    pages = PAGES
    figures = "gates-aventuras.json"
    what = "Aventuras demo campaign"

    def build(self) -> tuple[AventurasDemo, dict[str, User | None]]:
        demo = AventurasDemo.load()
        return demo, demo.people


crawl = crawl_fixture(AventurasCrawl)
(
    test_aventuras_crawl_visits_every_page,
    test_aventuras_page_has_no_accessibility_violation,
    test_aventuras_page_fits_the_window_without_sideways_scroll,
    test_aventuras_page_html_has_no_error_for_the_nu_checker,
) = gate_tests(PAGES, count=32)
