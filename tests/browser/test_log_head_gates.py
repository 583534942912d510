"""The gates on the page a campaign's pages answer when its roll log head does
not name its last entry (issue 29, item 4; rolls.middleware): at 1280 px and
360 px, no axe-core violation and no sideways scroll, and the HTML the server
sent has no error for the Nu HTML Checker. Its status is 503, not 200 as the
crawls of tests/browser/gates.py require, hence a file of its own.

It is visited as a player publishes a post with a roll from a scene page
loaded before the head went back: without htmx the answer is the page (which
says nothing was saved); with htmx the explanation comes at the top of the
scene page, which stays where it was with the post as typed. Then as the
scene page, a roll's page and the roll log are opened.

Locally these tests skip without Chromium, node_modules or Java; under
CI=true they fail instead."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse
from playwright.sync_api import Page, expect

from campaigns.models import Post
from rolls.models import CampaignLog, RollEntry
from tests.browser.conftest import BrowserProblems, log_in, require_gate_tools, served_html_problems, shown_problems
from tests.browser.gates import HEIGHT, WIDTHS
from tests.conftest import make_world
from tests.factories import roll
from tests.rolls.test_log_head import PAGE_TITLE, corrupt_head

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


# Chromium logs every answer with an error status as a console error: the
# page's own 503 (and that of the htmx request that led to it) is expected.
OWN_STATUS = "Failed to load resource: the server responded with a status of 503 (Service Unavailable)"


def _check(page: Page, seen: BrowserProblems, name: str, response, served: dict[str, str], problems: list[str]):
    """The page as answered (503, its title) and as shown at each width."""
    assert response is not None and response.status == 503, name
    served[name] = response.text()
    page.evaluate("() => document.readyState")  # delivers the console events still in flight
    problems += [f"{name}: {entry}" for entry in seen.take() if not entry.endswith(OWN_STATUS)]
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": HEIGHT})
        expect(page.get_by_role("heading", level=1)).to_have_text(PAGE_TITLE)
        problems += shown_problems(page, name, width)
    page.set_viewport_size({"width": WIDTHS[0], "height": HEIGHT})


def _post_with_a_roll(page: Page, text: str) -> None:
    form = page.get_by_role("region", name="Escribir un mensaje")
    form.get_by_label("Escribir como").select_option(label="Personaje: Inés Salcedo")
    form.get_by_label(re.compile(r"^\s*Mensaje")).fill(text)
    form.locator("summary", has_text="Añadir tirada 1").click()
    row = form.locator("#fila-tirada-0")
    row.get_by_label(re.compile(r"^\s*Característica")).select_option("reflejos")
    row.get_by_label(re.compile(r"^\s*Para qué")).fill("Saltar la tapia")


def test_the_page_of_a_log_head_that_does_not_add_up_passes_the_gates(page: Page, live_server, browser_problems):
    java = require_gate_tools()
    play = make_world()
    first = roll(play, post=play.post, user=play.ana, purpose="Abrir el arcón")
    roll(play, user=play.ana)
    intact = CampaignLog.objects.filter(campaign=play.campaign).values("seq", "head_hash").get()
    entries = RollEntry.objects.count()
    scene_url = reverse("table:scene-detail", args=[play.campaign.slug, play.scene.pk])
    log_url = reverse("rolls:roll-log", args=[play.campaign.slug])
    problems: list[str] = []
    served: dict[str, str] = {}
    page.set_viewport_size({"width": WIDTHS[0], "height": HEIGHT})
    log_in(page.context, play.ana, live_server.url)

    # A player has the scene open, a post with a roll typed, when the head goes back.
    page.goto(scene_url)
    _post_with_a_roll(page, "Salto la tapia sin mirar atrás.")
    corrupt_head(play.campaign, seq=0)
    # Sent without htmx (htmx sees no submit event): the answer is the page itself.
    form = page.locator("#escribir form")
    with page.expect_navigation() as navigation:
        form.evaluate("form => HTMLFormElement.prototype.submit.call(form)")
    _check(page, browser_problems, "post-with-a-roll", navigation.value, served, problems)
    expect(page.get_by_text("No se ha guardado nada de lo que acabas de enviar.")).to_be_visible()

    # Sent by htmx: the explanation at the top of the scene page, which stays
    # as it was, the post still typed in its form (nothing lost, no address given).
    corrupt_head(play.campaign, **intact)
    page.goto(scene_url)
    _post_with_a_roll(page, "Salto la tapia otra vez.")
    corrupt_head(play.campaign, seq=0)
    page.locator("#escribir").get_by_role("button", name="Publicar").click()
    alert = page.locator("#contenido > .alert-danger")
    expect(alert).to_contain_text(PAGE_TITLE)
    expect(alert).to_contain_text("lo que escribiste sigue en el formulario")
    assert page.url == live_server.url + scene_url
    form = page.get_by_role("region", name="Escribir un mensaje")
    expect(form.get_by_label(re.compile(r"^\s*Mensaje"))).to_have_value("Salto la tapia otra vez.")
    expect(form.locator("#fila-tirada-0").get_by_label(re.compile(r"^\s*Para qué"))).to_have_value("Saltar la tapia")
    page.evaluate("() => document.readyState")
    problems += [f"scene-after-htmx: {entry}" for entry in browser_problems.take()]
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": HEIGHT})
        problems += shown_problems(page, "scene-after-htmx", width)
    page.set_viewport_size({"width": WIDTHS[0], "height": HEIGHT})
    assert not Post.objects.filter(body__startswith="Salto la tapia").exists()
    assert RollEntry.objects.count() == entries

    # Reading: the scene page, a roll's page for a visitor, the roll log.
    _check(page, browser_problems, "scene", page.goto(scene_url), served, problems)
    page.context.clear_cookies()
    _check(page, browser_problems, "roll-permalink-anonymous", page.goto(first.get_absolute_url()), served, problems)
    _check(page, browser_problems, "roll-log-anonymous", page.goto(log_url), served, problems)

    problems += served_html_problems(java, served)
    assert not problems, "\n\n".join(problems)
