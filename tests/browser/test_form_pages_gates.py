"""Issue 14's gates on the form pages that the demo's crawl
(tests/browser/test_gates.py) does not reach: the aspect re-roll forms, the
GM's roll request and secret roll, a sheet being edited, an empty scene, and
the sheet form grown by "Añadir habilidad" (in place with htmx, and posted
without JavaScript). At 1280 px and 360 px: no axe-core violation and no
sideways scroll; and the HTML the server sent has no error for the Nu HTML
Checker (one run of Java for all of them).

Locally these tests skip without Chromium, node_modules or Java; under
CI=true they fail instead."""

from __future__ import annotations

import pytest
from django.urls import reverse
from playwright.sync_api import Page, expect

from sheets.models import Character
from systems.hitos.checks.services import check_setup, table_check
from tests.browser.conftest import (
    log_in,
    require_gate_tools,
    served_html_problems,
    shown_problems,
)
from tests.browser.gates import HEIGHT, LOADING_LATER, WIDTHS
from tests.conftest import World, make_world
from tests.factories import client_seed, make_scene

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _roll(play: World):
    return table_check(
        campaign=play.campaign,
        user=play.ana,
        setup=check_setup(play.ines, characteristic="reflejos", skill="Sigilo"),
        purpose="Cruzar el vestíbulo sin ruido",
        difficulty=15,
        character=play.ines,
        scene=play.scene,
        post=play.post,
        client_seed=client_seed(),
    )


def _pages(play: World) -> list[tuple[str, str, str]]:
    """(name, who, address) of each page checked."""
    roll = _roll(play)
    empty = make_scene(play.campaign, title="El jardín")
    play.ines.status = Character.Status.DRAFT
    play.ines.save(update_fields=["status"])
    slug = play.campaign.slug
    return [
        ("activation-positive", "ana", reverse("hitos:activation-positive", args=[roll.pk])),
        ("activation-negative", "gm", reverse("hitos:activation-negative", args=[roll.pk])),
        ("roll-request", "gm", reverse("table:request-create", args=[slug, play.scene.pk])),
        ("secret-roll", "gm", reverse("hitos:secret-roll-create", args=[slug, play.scene.pk])),
        ("sheet-edit", "ana", reverse("sheets:sheet-edit", args=[slug, play.ines.pk])),
        ("empty-scene-player", "ana", empty.get_absolute_url()),
        ("empty-scene-reader", "reader", empty.get_absolute_url()),
    ]


def _served(page: Page, address: str) -> str:
    """The HTML the server sent for ``address``."""
    response = page.goto(address)
    assert response is not None and response.status == 200, address
    return response.text()


def test_the_form_pages_pass_the_gates(page: Page, live_server):
    java = require_gate_tools()
    play = make_world()
    pages = _pages(play)
    problems: list[str] = []
    served: dict[str, str] = {}
    # Each page is loaded once in the wide window, then narrowed (tests/browser/gates.py).
    for name, who, address in pages:
        page.set_viewport_size({"width": WIDTHS[0], "height": HEIGHT})
        page.context.clear_cookies()
        log_in(page.context, play.user(who), live_server.url)
        served[name] = _served(page, address)
        # A scene's status comes in through htmx once the page has loaded: checked with it.
        expect(page.locator(LOADING_LATER)).to_have_count(0)
        for width in WIDTHS:
            page.set_viewport_size({"width": width, "height": HEIGHT})
            problems += shown_problems(page, name, width)

    # The new sheet grown to ten skill rows in place, then posted for one more without JavaScript.
    page.set_viewport_size({"width": WIDTHS[0], "height": HEIGHT})
    page.context.clear_cookies()
    log_in(page.context, play.bruno, live_server.url)
    create = reverse("sheets:sheet-create", args=[play.campaign.slug])
    page.goto(create)
    for rows in range(4, 11):
        page.get_by_role("button", name="Añadir habilidad").click()
        expect(page.locator("#filas-skills > fieldset")).to_have_count(rows)
    page.get_by_role("button", name="Añadir arma").click()
    expect(page.locator("#filas-weapons > fieldset")).to_have_count(2)
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": HEIGHT})
        problems += shown_problems(page, "sheet-create-grown", width)

    # Without JavaScript the button posts the form, which comes back with one more row.
    context = page.context.browser.new_context(java_script_enabled=False, base_url=live_server.url)
    try:
        log_in(context, play.bruno, live_server.url)
        plain = context.new_page()
        plain.goto(reverse("sheets:sheet-create", args=[play.campaign.slug]))
        plain.locator("#id_name").fill("Julia Romero")
        with plain.expect_navigation() as navigation:
            plain.get_by_role("button", name="Añadir habilidad").click()
        served["sheet-create-row-posted"] = navigation.value.text()
        expect(plain.locator("#filas-skills > fieldset")).to_have_count(4)
        expect(plain.locator("#id_name")).to_have_value("Julia Romero")
    finally:
        context.close()

    problems += served_html_problems(java, served)
    assert not problems, "\n\n".join(problems)
