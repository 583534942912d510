"""The browser as a witness of the roll log (rollog/v1 §3.8; static/js/witness.js).

A player's browser keeps the last ``(seq, head)`` it saw of the campaign's
log; each visit checks that the log it is shown extends it. The server's
answers are tampered with ``page.route`` as a dishonest operator would: an
entry the browser already saw rewritten, or the last entries dropped (the
head too). Both bring the red warning and leave the old head kept.

Every test also fails on a console error, an uncaught exception or a CSP
violation (tests/browser/conftest.py).
"""

from __future__ import annotations

import base64
import json

import pytest
from django.urls import reverse
from playwright.sync_api import Page, Route, expect

from campaigns.models import Visibility
from rolls.models import CampaignLog, RollEntry
from tests.browser.conftest import (
    AXE_JS,
    axe_violations,
    describe_overflow,
    describe_violations,
    horizontal_overflow,
    log_in,
    require,
)
from tests.conftest import World, make_world
from tests.factories import roll

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

EXPORT = "**/tiradas/registro.json*"
HEAD = "**/tiradas/cabeza.json"


@pytest.fixture
def world(live_server) -> World:
    return make_world(Visibility.PRIVATE)


def witness(page: Page):
    return page.locator("[data-rollog-witness]")


def kept(page: Page, world: World) -> dict | None:
    stored = json.loads(page.evaluate("() => localStorage.getItem('rollog-witness') || '{}'"))
    return stored.get(str(world.campaign.pk))


def visit(page: Page, world: World, state: str) -> None:
    """Open the campaign's page and wait until the witness is done with it."""
    page.goto(world.campaign.get_absolute_url())
    expect(witness(page)).to_have_attribute("data-witness", state)


def head_of(world: World) -> tuple[int, str]:
    log = CampaignLog.objects.get(campaign=world.campaign)
    return log.seq, log.head_hash


def rewrite(ref: dict) -> dict:
    """The same entry with one signed field changed (another time): another hash."""
    entry = json.loads(base64.b64decode(ref["entry_b64"]))
    entry["time"] = "2020-01-01T00:00:00Z"
    raw = json.dumps(entry, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
    return {**ref, "entry_b64": base64.b64encode(raw).decode("ascii")}


def serve_export(page: Page, change) -> None:
    """Serve the real export with its entries passed through ``change``."""

    def handle(route: Route) -> None:
        response = route.fetch()
        document = response.json()
        document["entries"] = change(document["entries"])
        route.fulfill(response=response, json=document)

    page.route(EXPORT, handle)


def test_the_browser_keeps_the_head_then_sees_the_log_extend_it(page: Page, world: World, live_server):
    log_in(page.context, world.player, live_server.url)
    # A page with no campaign has nothing to witness.
    page.goto(reverse("home"))
    expect(witness(page)).to_have_count(0)

    visit(page, world, "kept")
    seq, head = head_of(world)
    assert (seq, kept(page, world)["seq"], kept(page, world)["head"]) == (0, 0, head)
    assert kept(page, world)["campaign"] == world.campaign.roll_log.log_id

    visit(page, world, "same")
    first = roll(world)
    second = roll(world)
    visit(page, world, "extended")
    assert (kept(page, world)["seq"], kept(page, world)["head"]) == (second.seq, second.entry_hash)
    assert first.seq == 1
    expect(page.locator("[data-witness-warning]")).to_be_hidden()
    # The head it checked goes into the receipts of the page's rolls.
    expect(witness(page)).to_have_attribute("data-head", second.entry_hash)


def test_an_entry_rewritten_after_the_kept_head_shows_the_fork_warning(page: Page, world: World, live_server):
    log_in(page.context, world.player, live_server.url)
    seen = roll(world)
    visit(page, world, "kept")
    before = kept(page, world)
    assert before["seq"] == seen.seq
    roll(world)
    roll(world)

    # The kept entry comes back with another hash.
    serve_export(page, lambda entries: [rewrite(entries[0]), *entries[1:]])
    visit(page, world, "fork")
    warning = page.get_by_role("alert")
    expect(warning).to_be_visible()
    expect(warning).to_have_class("alert alert-danger")
    expect(warning).to_contain_text(
        "El registro de tiradas de esta partida ya no continúa el que este navegador vio el"
    )
    expect(warning).to_contain_text(f"la entrada n.º {seen.seq}, con cabeza {seen.entry_hash[:16]}.")
    expect(warning).to_contain_text("No borres los datos de este navegador")
    download = warning.get_by_role("link", name="Descarga ahora el registro de la partida y guárdalo.")
    export = reverse("rolls:log-export", args=[world.campaign.slug])
    expect(download).to_have_attribute("href", f"{export}?desde={seen.seq}")
    expect(warning).to_contain_text("Avisa a la dirección de la partida y a quienes llevan el sitio.")
    expect(warning).to_contain_text("punto de control diario")
    assert kept(page, world) == before
    # The warning as shown passes axe and fits a phone.
    require(AXE_JS.exists(), f"{AXE_JS} is missing: run `make test` once")
    page.set_viewport_size({"width": 360, "height": 740})
    violations = axe_violations(page)
    assert not violations, describe_violations(violations)
    overflow = horizontal_overflow(page)
    assert overflow["page"] <= overflow["viewport"], describe_overflow(overflow)

    # A link broken further on (an entry rewritten after the kept one) is a fork too.
    page.unroute(EXPORT)
    serve_export(page, lambda entries: [entries[0], rewrite(entries[1]), *entries[2:]])
    visit(page, world, "fork")
    assert kept(page, world) == before

    # The honest log again: it still extends the kept head, and the new one is kept.
    page.unroute(EXPORT)
    visit(page, world, "extended")
    expect(page.locator("[data-witness-warning]")).to_be_hidden()
    assert kept(page, world)["seq"] == seen.seq + 2


def test_dropped_entries_and_a_lower_head_show_the_fork_warning(page: Page, world: World, live_server):
    log_in(page.context, world.player, live_server.url)
    roll(world)
    seen = roll(world)
    visit(page, world, "kept")
    before = kept(page, world)
    assert before["seq"] == seen.seq == 2
    earlier = RollEntry.objects.get(campaign=world.campaign, seq=1)

    # The operator drops the last entry and winds the head back to the one before it.
    def lower_head(route: Route) -> None:
        route.fulfill(json={"campaign": before["campaign"], "seq": earlier.seq, "head": earlier.entry_hash})

    page.route(HEAD, lower_head)
    serve_export(page, lambda entries: [e for e in entries if json.loads(base64.b64decode(e["entry_b64"]))["seq"] < 2])
    visit(page, world, "fork")
    expect(page.get_by_role("alert")).to_contain_text(f"la entrada n.º 2, con cabeza {seen.entry_hash[:16]}.")
    assert kept(page, world) == before

    # Later rolls with the entry still missing from the export: the head moved
    # on, the export stops short of it.
    page.unroute(HEAD)
    roll(world)
    visit(page, world, "fork")
    assert kept(page, world) == before


def test_the_warning_stays_hidden_and_nothing_is_kept_without_a_log(page: Page, live_server):
    from tests.factories import CampaignFactory

    campaign = CampaignFactory(visibility=Visibility.PUBLIC)
    page.goto(campaign.get_absolute_url())
    expect(witness(page)).to_have_attribute("data-witness", "none")
    expect(page.locator("[data-witness-warning]")).to_be_hidden()
    assert page.evaluate("() => localStorage.getItem('rollog-witness')") is None


def test_a_walk_too_long_for_one_visit_keeps_what_it_checked_and_goes_on_later(page: Page, world: World, live_server):
    """Past MAX_PAGES (20) pages of export, the browser keeps the last entry it
    checked (it extends the kept head too) and walks on from there next time."""
    log_in(page.context, world.player, live_server.url)
    visit(page, world, "kept")
    entries = [roll(world) for _ in range(24)]

    def one_entry_per_page(route: Route) -> None:
        # The real export, cut into pages of one entry: 24 pages to walk.
        response = route.fetch()
        document = response.json()
        start = document["start"]
        export = reverse("rolls:log-export", args=[world.campaign.slug])
        document["entries"] = document["entries"][:1]
        # `next` names another host: the walk asks this site all the same.
        last = start >= entries[-1].seq
        document["next"] = None if last else f"http://elsewhere.example{export}?desde={start + 1}"
        route.fulfill(response=response, json=document)

    page.route(EXPORT, one_entry_per_page)
    visit(page, world, "later")
    # 20 pages from entry 0: entries 0–19 checked, entry 19 kept.
    assert (kept(page, world)["seq"], kept(page, world)["head"]) == (entries[18].seq, entries[18].entry_hash)
    visit(page, world, "extended")
    assert (kept(page, world)["seq"], kept(page, world)["head"]) == (entries[-1].seq, entries[-1].entry_hash)
    expect(page.locator("[data-witness-warning]")).to_be_hidden()
