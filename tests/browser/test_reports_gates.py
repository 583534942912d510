"""Issue 14's gates on what a report adds to the pages (tests/browser/test_gates.py
crawls the demo, which has no report): the GM's campaign page with its
"denuncias pendientes" callout, the GM's notices with the report, and the
reporter's notices with the outcome. At 1280 px and 360 px: the callout is
shown, no axe-core violation and no sideways scroll; and the HTML the server
sent has no error for the Nu HTML Checker.

Locally these tests skip without Chromium, node_modules or Java; under
CI=true they fail instead."""

from __future__ import annotations

import pytest
from django.urls import reverse
from playwright.sync_api import Page, expect

from campaigns import services
from tests.browser.conftest import (
    log_in,
    require_gate_tools,
    served_html_problems,
    shown_problems,
)
from tests.browser.gates import HEIGHT, WIDTHS
from tests.conftest import make_world
from tests.factories import write

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_pages_a_report_changes_pass_the_gates(page: Page, live_server):
    java = require_gate_tools()
    play = make_world()
    # One report still waiting for the direction, one it has dismissed.
    services.post_report(
        post=play.post, reporter=play.bruno, reason="Se adelanta a lo que la escena aún no ha contado."
    )
    dismissed = services.post_report(
        post=write(play.scene, play.ana, "Miro por la ventana."), reporter=play.reader, reason="Spoiler."
    )
    services.report_resolve(report=dismissed, actor=play.gm, reason="Nada que ocultar.")
    pages = [
        ("campaign-gm", "gm", play.campaign.get_absolute_url()),
        ("notifications-gm", "gm", reverse("campaigns:notifications")),
        ("notifications-reporter", "reader", reverse("campaigns:notifications")),
    ]
    problems: list[str] = []
    served: dict[str, str] = {}
    for name, who, address in pages:
        # Loaded once in the wide window, then narrowed (tests/browser/gates.py).
        page.set_viewport_size({"width": WIDTHS[0], "height": HEIGHT})
        page.context.clear_cookies()
        log_in(page.context, play.user(who), live_server.url)
        response = page.goto(address)
        assert response is not None and response.status == 200, address
        served[name] = response.text()
        for width in WIDTHS:
            page.set_viewport_size({"width": width, "height": HEIGHT})
            if name == "campaign-gm":
                expect(page.get_by_role("link", name="1 denuncia pendiente")).to_be_visible()
            elif name == "notifications-gm":
                expect(page.get_by_text("Bruno ha denunciado el mensaje")).to_be_visible()
            else:
                expect(page.get_by_text("ha decidido no ocultarlo")).to_be_visible()
            problems += shown_problems(page, name, width)

    problems += served_html_problems(java, served)
    assert not problems, "\n\n".join(problems)
