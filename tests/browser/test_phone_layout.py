"""Issue 14, on a phone (360 × 740) in a real Chromium: the scene's tools fold
into one "Herramientas" control so the first post is in view, and every action
of the combat page is reachable without scrolling sideways.

Every test also fails if a page logged a console error, threw an uncaught
exception or violated the Content Security Policy (tests/browser/conftest.py).
"""

from __future__ import annotations

import re

import pytest
from django.urls import reverse
from playwright.sync_api import Page, expect

from campaigns.permissions import campaign_access
from systems.hitos.combat import services as combat_services
from tests.browser.conftest import describe_overflow, horizontal_overflow, log_in
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
    assert overflow["page"] <= overflow["viewport"], describe_overflow(overflow)


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
