"""Issue 14, on a phone (360 × 740) in a real Chromium: the scene's tools fold
into one "Herramientas" control so the first post is in view, and every action
of the combat page is reachable without scrolling sideways. Issue 29: the
tables of the sheet lists, a sheet's history and the hero-point ledger stack
their rows, each value labelled with its column's header, and pass the gates
(axe-core, the width check, the Nu HTML Checker); the width check also catches
a box that scrolls sideways inside a page that fits.

Every test also fails if a page logged a console error, threw an uncaught
exception or violated the Content Security Policy (tests/browser/conftest.py).
"""

from __future__ import annotations

import re

import pytest
from django.db.models import Count
from django.urls import reverse
from playwright.sync_api import Page, expect

from accounts.models import User
from campaigns.models import Campaign
from campaigns.permissions import campaign_access
from sheets.models import Character
from systems.hitos.combat import services as combat_services
from tests.browser.conftest import (
    describe_overflow,
    fits,
    horizontal_overflow,
    log_in,
    require_gate_tools,
    served_html_problems,
    shown_problems,
)
from tests.conftest import World, make_world

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PHONE = {"width": 360, "height": 740}
DESKTOP = {"width": 1280, "height": 800}
TOOLS = ("Combate", "Pruebas de horror", "Tiradas enfrentadas", "Puntos dramáticos")
COMBAT_ACTIONS = ("Actúa", "Retrasa", "Guardar", "Quitar")


@pytest.fixture
def play(live_server) -> World:
    return make_world()


def _fits(page: Page) -> None:
    overflow = horizontal_overflow(page)
    assert fits(overflow), describe_overflow(overflow)


# A page that fits a phone, with a box that scrolls sideways (as Bootstrap's
# table-responsive box did around a table too wide for a phone), a box whose
# content fits and one that clips what is too wide instead of scrolling it.
SCROLLING_BOX = """<!doctype html>
<html lang="es"><head><meta charset="utf-8"><title>Caja</title></head>
<body><main><h1>Caja</h1>
<div id="desliza" style="overflow-x: auto"><div style="width: 600px">ancho</div></div>
<div id="cabe" style="overflow-x: auto"><div style="width: 100px">estrecho</div></div>
<div id="recorta" style="overflow-x: hidden"><div style="width: 600px">recortado</div></div>
</main></body></html>
"""


def test_the_width_check_names_a_box_that_scrolls_sideways_in_a_page_that_fits(page: Page):
    page.set_viewport_size(PHONE)
    page.set_content(SCROLLING_BOX)
    overflow = horizontal_overflow(page)

    assert overflow["page"] == overflow["viewport"] == PHONE["width"]
    assert overflow["scrollers"] == [{"element": "div#desliza «ancho»", "width": PHONE["width"] - 16, "content": 600}]
    assert not fits(overflow)
    assert "div#desliza «ancho»: 600 px of content in a 344 px box" in describe_overflow(overflow)


# The cells of a table's body as a reader sees them: the column's header and
# the label the cell shows before its value (none: "none"), and how its row is laid out.
_CELLS = """(table) => {
  const headers = [...table.tHead.rows[0].cells].map((cell) => cell.textContent.trim());
  return [...table.tBodies[0].rows].flatMap((row) => [...row.cells].map((cell, index) => ({
    header: headers[index], label: getComputedStyle(cell, "::before").content, row: getComputedStyle(row).display,
  })));
}"""


def _stacked_tables() -> list[tuple[str, User, str, str]]:
    """(name, who, address, the table) of each page with a table that stacks on a phone:
    the sheet lists of the three demo games, for a player and for the GM, the
    history of the HITOS sheet that has the most, and the hero-point ledger of
    Grumo on his sheet (Bruno) and hero page (GM)."""
    from demo import aventuras, vaesen
    from demo.campaign import DEMO_CAMPAIGN_SLUG, demo_load

    demo_load()
    ana = User.objects.get(username="ana")
    pages = []
    for slug in (DEMO_CAMPAIGN_SLUG, vaesen.VAESEN_CAMPAIGN_SLUG, aventuras.AVENTURAS_CAMPAIGN_SLUG):
        campaign = Campaign.objects.get(slug=slug)
        address = reverse("sheets:sheet-list", args=[slug])
        pages += [
            (f"sheet-list-{slug}-player", ana, address, "#sheet-table table"),
            (f"sheet-list-{slug}-gm", campaign.gm, address, "#sheet-table table"),
        ]
    changed = (
        Character.objects.filter(campaign__slug=DEMO_CAMPAIGN_SLUG)
        .select_related("campaign__gm")
        .annotate(changes=Count("events"))
        .latest("changes")
    )
    history = reverse("sheets:sheet-history", args=[DEMO_CAMPAIGN_SLUG, changed.pk])
    pages.append(("sheet-history-gm", changed.campaign.gm, history, "#history-entries table"))
    grumo = Character.objects.select_related("owner", "campaign__gm").get(name=aventuras.GRUMO)
    slug = aventuras.AVENTURAS_CAMPAIGN_SLUG
    ledger = f"#heroes-panel-{grumo.pk} table"
    pages += [
        ("hero-ledger-sheet-bruno", grumo.owner, reverse("sheets:sheet-detail", args=[slug, grumo.pk]), ledger),
        (
            "hero-ledger-hero-page-gm",
            grumo.campaign.gm,
            reverse("aventuras:hero-page", args=[slug, grumo.pk]),
            ledger,
        ),
    ]
    return pages


def test_on_a_phone_the_tables_stack_their_rows_with_labels_and_pass_the_gates(page: Page, live_server):
    java = require_gate_tools()
    problems: list[str] = []
    served: dict[str, str] = {}
    for name, who, address, selector in _stacked_tables():
        page.context.clear_cookies()
        log_in(page.context, who, live_server.url)
        # Loaded wide, then narrowed, as the gates do (tests/browser/gates.py).
        page.set_viewport_size(DESKTOP)
        response = page.goto(address)
        assert response is not None and response.status == 200, (name, address)
        served[name] = response.text()
        problems += shown_problems(page, name, DESKTOP["width"])
        table = page.locator(selector)
        expect(table).to_have_count(1)
        cells = table.evaluate(_CELLS)
        assert cells, f"{name}: the table has no cells"
        # Wide: a table, its header row in view, no label repeated in the cells.
        expect(table.locator("thead")).to_be_visible()
        if {(cell["label"], cell["row"]) for cell in cells} != {("none", "table-row")}:
            problems.append(f"{name} at {DESKTOP['width']} px: {cells}")

        page.set_viewport_size(PHONE)
        problems += shown_problems(page, name, PHONE["width"])
        # A phone: each row a card, each value after its column's header; and
        # still a table with its column headers to a screen reader.
        cells = table.evaluate(_CELLS)
        wrong = {
            (cell["header"], cell["label"], cell["row"])
            for cell in cells
            if (cell["label"], cell["row"]) != (f'"{cell["header"]}: "', "block")
        }
        if wrong:
            problems.append(f"{name} at {PHONE['width']} px, cells (header, label, row) not stacked: {sorted(wrong)}")
        expect(table.and_(page.get_by_role("table"))).to_have_count(1)
        for cell in cells:
            expect(table.get_by_role("columnheader", name=cell["header"], exact=True)).to_have_count(1)
    problems += served_html_problems(java, served)
    assert not problems, "\n\n".join(problems)


def test_on_a_phone_the_scene_tools_are_one_control_and_the_first_post_is_in_view(page: Page, play: World, live_server):
    log_in(page.context, play.ana, live_server.url)
    page.set_viewport_size(PHONE)
    page.goto(reverse("table:scene-detail", args=[play.campaign.slug, play.scene.pk]))
    bar = page.get_by_role("navigation", name="La mesa")
    tools = bar.locator("summary", has_text="Herramientas")

    # One compact control; the tools themselves wait behind it.
    expect(tools).to_be_visible()
    for name in TOOLS:
        expect(bar.get_by_role("link", name=name, exact=True)).to_be_hidden()
    # The first post starts on the first screen: its header is in full view.
    header = page.locator(f"#mensaje-{play.post.pk} > header")
    expect(header).to_be_visible()
    box = header.bounding_box()
    assert box is not None and box["y"] + box["height"] <= PHONE["height"], box
    _fits(page)

    # One tap away, each one a link of its own, and nothing wider than the phone.
    tools.click()
    for name in TOOLS:
        link = bar.get_by_role("link", name=name, exact=True)
        expect(link).to_be_visible()
        link_box = link.bounding_box()
        assert link_box is not None and link_box["x"] + link_box["width"] <= PHONE["width"], (name, link_box)
    _fits(page)
    bar.get_by_role("link", name="Combate", exact=True).click()
    expect(page).to_have_url(re.compile(rf"/escenas/{play.scene.pk}/combate/$"))
    expect(page.get_by_role("heading", name="Combate", level=1)).to_be_visible()


def test_on_a_wide_screen_the_scene_tools_are_a_row_of_buttons(page: Page, play: World, live_server):
    log_in(page.context, play.ana, live_server.url)
    page.set_viewport_size(DESKTOP)
    page.goto(reverse("table:scene-detail", args=[play.campaign.slug, play.scene.pk]))
    bar = page.get_by_role("navigation", name="La mesa")

    expect(bar.locator("summary", has_text="Herramientas")).to_be_hidden()
    for name in TOOLS:
        expect(bar.get_by_role("link", name=name, exact=True)).to_be_visible()


def test_on_a_phone_every_combat_action_is_reachable_without_sideways_scroll(page: Page, play: World, live_server):
    fight = combat_services.combat_start(
        scene=play.scene,
        access=campaign_access(play.gm, play.campaign),
        characters=[play.ines, play.tomas, play.npc],
    )
    combatants = list(fight.combatants.order_by("pk"))
    log_in(page.context, play.gm, live_server.url)
    page.set_viewport_size(PHONE)
    page.goto(reverse("hitos:combat", args=[play.campaign.slug, play.scene.pk]))
    _fits(page)

    # Still a table to a screen reader, with its Acciones column…
    table = page.get_by_role("table")
    expect(table).to_have_count(1)
    expect(table.get_by_role("columnheader", name="Acciones")).to_have_count(1)
    expect(table.get_by_role("row")).to_have_count(1 + len(combatants))
    # …and on screen every action of every combatant is in view.
    for combatant in combatants:
        row = page.locator(f"#combatant-{combatant.pk}")
        for name in COMBAT_ACTIONS:
            button = row.get_by_role("button", name=name, exact=True)
            expect(button).to_be_visible()
            box = button.bounding_box()
            assert box is not None and 0 <= box["x"] and box["x"] + box["width"] <= PHONE["width"], (
                combatant.character.name,
                name,
                box,
            )
        position = row.get_by_label("Actúa en el puesto")
        expect(position).to_be_visible()

    # An action works from there, in place: Tomás acts and is no longer unprepared.
    tomas = next(c for c in combatants if c.character_id == play.tomas.pk)
    row = page.locator(f"#combatant-{tomas.pk}")
    expect(row.get_by_text("desprevenido")).to_be_visible()
    row.get_by_role("button", name="Actúa", exact=True).click()
    expect(row.get_by_text("desprevenido")).to_have_count(0)
    expect(row.get_by_role("button", name="Actúa", exact=True)).to_have_count(0)
    _fits(page)
