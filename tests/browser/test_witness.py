"""The browser as a witness of the roll log (rollog/v1 §3.8; static/js/witness.js).

A player's browser keeps the last ``(seq, head)`` it saw of the campaign's
log; each visit checks that the log it is shown extends it. The server's
answers are tampered with ``page.route`` as a dishonest operator would: an
entry the browser already saw rewritten, the last entries dropped (the head
too), a new entry forged with a zero signature, an entry older than the kept
head edited (found by the walk from entry 0, at most once a day), another
signing key than the one pinned on first sight. Each brings the red warning
and leaves what was kept as it was.

Every test also fails on a console error, an uncaught exception or a CSP
violation (tests/browser/conftest.py).
"""

from __future__ import annotations

import base64
import hashlib
import json
from datetime import UTC, datetime, timedelta

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from django.conf import settings
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
from tests.browser.test_verify_js import NO_ED25519
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


def seq_of(ref: dict) -> int:
    return json.loads(base64.b64decode(ref["entry_b64"]))["seq"]


def hash_of(ref: dict) -> str:
    return hashlib.sha256(b"rollog/v1/entry\n" + base64.b64decode(ref["entry_b64"])).hexdigest()


def zero_signed(ref: dict) -> dict:
    """The entry rewritten with a zero signature: what someone without the key can serve."""
    return {**rewrite(ref), "sig": "0" * 128}


def resigned(ref: dict) -> dict:
    """The entry rewritten and signed again with the site's own key: what an operator holding it can serve."""
    forged = rewrite(ref)
    digest = bytes.fromhex(hash_of(forged))
    return {**forged, "sig": settings.ROLLOG_KEYS.signing_key.sign(b"rollog/v1/sig\n" + digest).hex()}


def at_seq(seq: int, change):
    """An export change that passes the entry numbered ``seq`` through ``change``, wherever the page starts."""
    return lambda entries: [change(e) if seq_of(e) == seq else e for e in entries]


def a_day_later(page: Page) -> None:
    """The browser's clock a day on: the walk from entry 0 is due again."""
    page.clock.set_fixed_time(datetime.now(UTC) + timedelta(days=1, minutes=5))


def serve_export(page: Page, change) -> None:
    """Serve the real export with its entries passed through ``change``."""

    def handle(route: Route) -> None:
        response = route.fetch()
        document = response.json()
        document["entries"] = change(document["entries"])
        route.fulfill(response=response, json=document)

    page.route(EXPORT, handle)


def serve_head(page: Page, **changes) -> None:
    """Serve the real head with some of its fields changed."""

    def handle(route: Route) -> None:
        response = route.fetch()
        route.fulfill(response=response, json={**response.json(), **changes})

    page.route(HEAD, handle)


def serve_one_entry_per_page(
    page: Page, world: World, last_seq: int, change=lambda entries: entries, broken=lambda start: False
) -> None:
    """Serve the real export cut into pages of one entry (passed through ``change``), up to ``last_seq``;
    the pages whose start ``broken`` names answer something that is not JSON (a network failure)."""

    def handle(route: Route) -> None:
        response = route.fetch()
        document = response.json()
        start = document["start"]
        if broken(start):
            route.fulfill(status=200, content_type="application/json", body="{")
            return
        export = reverse("rolls:log-export", args=[world.campaign.slug])
        document["entries"] = change(document["entries"][:1])
        # `next` names another host: the walk asks this site all the same.
        document["next"] = None if start >= last_seq else f"http://elsewhere.example{export}?desde={start + 1}"
        route.fulfill(response=response, json=document)

    page.route(EXPORT, handle)


def passes_axe_on_a_phone(page: Page) -> None:
    """The page as shown (the warning or notice included) has no axe violation and fits 360 px."""
    require(AXE_JS.exists(), f"{AXE_JS} is missing: run `make test` once")
    page.set_viewport_size({"width": 360, "height": 740})
    violations = axe_violations(page)
    assert not violations, describe_violations(violations)
    overflow = horizontal_overflow(page)
    assert overflow["page"] <= overflow["viewport"], describe_overflow(overflow)


def test_the_browser_keeps_the_head_then_sees_the_log_extend_it(page: Page, world: World, live_server):
    log_in(page.context, world.player, live_server.url)
    # A page with no campaign has nothing to witness.
    page.goto(reverse("home"))
    expect(witness(page)).to_have_count(0)

    visit(page, world, "kept")
    seq, head = head_of(world)
    assert (seq, kept(page, world)["seq"], kept(page, world)["head"]) == (0, 0, head)
    assert kept(page, world)["campaign"] == world.campaign.roll_log.log_id
    # The key is pinned on first sight, and the signatures were checked.
    assert kept(page, world)["key"] == settings.ROLLOG_KEYS.public_key_hex
    expect(witness(page)).to_have_attribute("data-signatures", "checked")
    expect(page.locator("[data-witness-unsigned]")).to_be_hidden()

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
    passes_axe_on_a_phone(page)

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
    serve_head(page, seq=earlier.seq, head=earlier.entry_hash)
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

    serve_one_entry_per_page(page, world, entries[-1].seq)
    visit(page, world, "later")
    # 20 pages from entry 0: entries 0–19 checked, entry 19 kept.
    assert (kept(page, world)["seq"], kept(page, world)["head"]) == (entries[18].seq, entries[18].entry_hash)
    visit(page, world, "extended")
    assert (kept(page, world)["seq"], kept(page, world)["head"]) == (entries[-1].seq, entries[-1].entry_hash)
    expect(page.locator("[data-witness-warning]")).to_be_hidden()


def test_a_new_entry_with_a_zero_signature_shows_the_fork_warning(page: Page, world: World, live_server):
    log_in(page.context, world.player, live_server.url)
    roll(world)
    visit(page, world, "kept")
    before = kept(page, world)
    last = roll(world)

    # The next entry is forged: it links to the kept head and the head names
    # it, but its signature is zeros.
    forged = zero_signed(last.signed.ref())
    serve_export(page, at_seq(last.seq, lambda ref: forged))
    serve_head(page, head=hash_of(forged))
    visit(page, world, "fork")
    expect(page.get_by_role("alert")).to_contain_text(
        f"la entrada n.º {before['seq']}, con cabeza {before['head'][:16]}."
    )
    assert kept(page, world) == before

    # The same entry signed with the site's key: the chain holds, so the
    # warning above came from the signature alone.
    page.unroute(EXPORT)
    page.unroute(HEAD)
    signed = resigned(last.signed.ref())
    serve_export(page, at_seq(last.seq, lambda ref: signed))
    serve_head(page, head=hash_of(signed))
    visit(page, world, "extended")
    assert (kept(page, world)["seq"], kept(page, world)["head"]) == (last.seq, hash_of(signed))


def test_an_entry_older_than_the_kept_head_edited_shows_the_fork_warning(page: Page, world: World, live_server):
    log_in(page.context, world.player, live_server.url)
    older = roll(world)
    roll(world)
    roll(world)
    # First sight: the head is kept and the log walked from entry 0 up to it.
    visit(page, world, "kept")
    before = kept(page, world)
    assert before["seq"] == 3
    roll(world)

    # Entry 1, two before the kept head, is edited; the entries after it are
    # untouched, so the walk from the kept head on sees nothing wrong.
    a_day_later(page)
    serve_export(page, at_seq(older.seq, rewrite))
    visit(page, world, "fork")
    warning = page.get_by_role("alert")
    expect(warning).to_contain_text(f"la entrada n.º 3, con cabeza {before['head'][:16]}.")
    # The download starts at the last entry known good, before the edited one: entry 0.
    export = reverse("rolls:log-export", args=[world.campaign.slug])
    expect(warning.get_by_role("link")).to_have_attribute("href", f"{export}?desde=0")
    # The new entry, checked from the kept head before the walk from 0, is kept; the walk's day is not.
    extended = kept(page, world)
    assert (extended["seq"], extended["key"], extended["audited"]) == (4, before["key"], before["audited"])

    # Edited and signed again with the site's key: the signature holds, the
    # link from entry 2 breaks; the download starts at the edited entry.
    page.unroute(EXPORT)
    serve_export(page, at_seq(older.seq, resigned))
    visit(page, world, "fork")
    expect(warning.get_by_role("link")).to_have_attribute("href", f"{export}?desde={older.seq}")
    assert kept(page, world) == extended

    # The honest log: it still ends at the kept head, and the walk from 0 is done again.
    page.unroute(EXPORT)
    visit(page, world, "same")
    expect(page.locator("[data-witness-warning]")).to_be_hidden()
    assert kept(page, world)["seq"] == 4
    assert kept(page, world)["audited"] > before["audited"]


def test_another_key_than_the_pinned_one_shows_the_fork_warning(page: Page, world: World, live_server):
    log_in(page.context, world.player, live_server.url)
    visit(page, world, "kept")
    before = kept(page, world)
    other = Ed25519PrivateKey.generate().public_key().public_bytes_raw().hex()
    serve_head(page, public_key=other)
    visit(page, world, "fork")
    expect(page.get_by_role("alert")).to_be_visible()
    assert kept(page, world) == before
    assert before["key"] == settings.ROLLOG_KEYS.public_key_hex


def test_a_browser_without_ed25519_says_it_cannot_check_signatures(page: Page, world: World, live_server):
    page.context.add_init_script(NO_ED25519)
    log_in(page.context, world.player, live_server.url)
    visit(page, world, "kept")
    expect(witness(page)).to_have_attribute("data-signatures", "unsupported")
    notice = page.locator("[data-witness-unsigned]")
    expect(notice).to_be_visible()
    expect(notice).to_have_text(
        "Este navegador no sabe comprobar las firmas Ed25519: vigila que el registro de tiradas de la partida siga"
        " al que ya vio, pero no puede detectar una entrada con una firma falsa. Para eso, usa un navegador actual"
        " o comprueba el registro con verify_log.py."
    )
    # The notice as shown passes axe and fits a phone.
    passes_axe_on_a_phone(page)

    # It still walks the chain: a broken link is a fork.
    before = kept(page, world)
    roll(world)
    roll(world)
    serve_export(page, lambda entries: [entries[0], rewrite(entries[1]), *entries[2:]])
    visit(page, world, "fork")
    expect(notice).to_be_visible()
    assert kept(page, world) == before


def test_the_walk_from_entry_zero_goes_on_across_visits_and_catches_an_edit_a_day_later(
    page: Page, world: World, live_server
):
    log_in(page.context, world.player, live_server.url)
    entries = [roll(world) for _ in range(24)]
    serve_one_entry_per_page(page, world, entries[-1].seq)
    # First sight of a 25-entry log in pages of one: the walk from entry 0
    # reads 20 pages (entries 0–19) and keeps where it stopped.
    visit(page, world, "kept")
    assert kept(page, world)["audit"] == {"seq": 19, "hash": entries[18].entry_hash}
    assert "audited" not in kept(page, world)
    # The next visit goes on from there up to the kept head.
    visit(page, world, "same")
    before = kept(page, world)
    assert before["audit"] is None and before["audited"]
    # Marks of every 64th position it checked: entry 0 here.
    assert before["marks"] == {"0": RollEntry.objects.get(campaign=world.campaign, seq=0).entry_hash}

    # Entry 5 signed again with another time: found the next day. The walk
    # kept where it got after each page (entry 5 as served: two versions of
    # it seen), never the head or the day of the last walk that got there.
    page.unroute(EXPORT)
    serve_one_entry_per_page(page, world, entries[-1].seq, at_seq(5, resigned))
    a_day_later(page)
    visit(page, world, "fork")
    after = kept(page, world)
    assert {**after, "audit": None} == before
    assert after["audit"]["seq"] == 5


def test_a_log_that_fails_on_first_sight_says_it_does_not_verify(page: Page, world: World, live_server):
    """Nothing was kept before: the warning names no date or head this browser saw, and keeps no promise about them."""
    log_in(page.context, world.player, live_server.url)
    forged = roll(world)
    last = roll(world)
    serve_export(page, at_seq(forged.seq, zero_signed))
    visit(page, world, "fork")
    warning = page.get_by_role("alert")
    expect(warning).to_contain_text("Aviso: el registro de tiradas de esta partida no se verifica")
    expect(warning).to_contain_text(
        "Una de sus entradas tiene una firma o un enlace con la anterior que no son correctos"
    )
    shown = warning.inner_text()
    for claim in ("ya no continúa", "ha cambiado a tus espaldas", "No borres los datos", "la cabeza de arriba"):
        assert claim not in shown, claim
    export = reverse("rolls:log-export", args=[world.campaign.slug])
    expect(warning.get_by_role("link")).to_have_attribute("href", f"{export}?desde=0")
    # The head and the key were kept on first sight, before the walk from entry 0 found the forgery.
    assert (kept(page, world)["seq"], kept(page, world)["head"]) == (last.seq, last.entry_hash)
    assert kept(page, world)["key"] == settings.ROLLOG_KEYS.public_key_hex
    assert "audited" not in kept(page, world)
    # This warning as shown passes axe and fits a phone.
    passes_axe_on_a_phone(page)


def test_what_a_visit_established_is_kept_when_the_walk_from_entry_zero_breaks_off(
    page: Page, world: World, live_server
):
    log_in(page.context, world.player, live_server.url)
    entries = [roll(world) for _ in range(24)]
    # First sight; the walk from entry 0 breaks off at entry 10 (not JSON).
    serve_one_entry_per_page(page, world, entries[-1].seq, broken=lambda start: start >= 10)
    visit(page, world, "offline")
    first = kept(page, world)
    assert first is not None, "nothing was kept"
    assert (first["seq"], first["head"], first["key"]) == (
        24,
        entries[-1].entry_hash,
        settings.ROLLOG_KEYS.public_key_hex,
    )
    # Where the walk got, after each page: entry 9.
    assert first["audit"] == {"seq": 9, "hash": entries[8].entry_hash}
    expect(witness(page)).to_have_attribute("data-head", entries[-1].entry_hash)

    # A new entry: the step from the kept head is kept though the walk from 0 breaks off again.
    newest = roll(world)
    page.unroute(EXPORT)
    serve_one_entry_per_page(page, world, newest.seq, broken=lambda start: start < 24)
    visit(page, world, "offline")
    assert (kept(page, world)["seq"], kept(page, world)["head"]) == (newest.seq, newest.entry_hash)
    assert kept(page, world)["audit"] == first["audit"]
    expect(witness(page)).to_have_attribute("data-head", newest.entry_hash)

    # The network back: the walk goes on from entry 9 and gets to the kept head.
    page.unroute(EXPORT)
    serve_one_entry_per_page(page, world, newest.seq)
    visit(page, world, "same")
    assert kept(page, world)["audit"] is None and kept(page, world)["audited"]
    expect(page.locator("[data-witness-warning]")).to_be_hidden()


def test_a_walk_from_entry_zero_dated_ahead_of_the_clock_is_due(page: Page, world: World, live_server):
    """`audited` saved while the device's clock was ahead: the walk is due, not put off until that time."""
    log_in(page.context, world.player, live_server.url)
    older = roll(world)
    roll(world)
    visit(page, world, "kept")
    ahead = (datetime.now(UTC) + timedelta(days=3)).isoformat()
    page.evaluate(
        """([id, time]) => {
            const store = JSON.parse(localStorage.getItem("rollog-witness"));
            store[id].audited = time;
            localStorage.setItem("rollog-witness", JSON.stringify(store));
        }""",
        [str(world.campaign.pk), ahead],
    )
    serve_export(page, at_seq(older.seq, rewrite))
    visit(page, world, "fork")
    expect(page.get_by_role("alert")).to_be_visible()


def test_export_pages_with_no_entries_that_name_a_next_one_show_the_fork_warning(page: Page, world: World, live_server):
    """Empty pages that only point on would use up the visit's pages and silence the walk: they are a broken log."""
    log_in(page.context, world.player, live_server.url)
    visit(page, world, "kept")
    before = kept(page, world)
    roll(world)
    roll(world)
    export = reverse("rolls:log-export", args=[world.campaign.slug])

    def handle(route: Route) -> None:
        response = route.fetch()
        route.fulfill(response=response, json={**response.json(), "entries": [], "next": f"{export}?desde=0"})

    page.route(EXPORT, handle)
    visit(page, world, "fork")
    expect(page.get_by_role("alert")).to_be_visible()
    assert kept(page, world) == before


def test_a_head_without_a_key_once_one_is_pinned_shows_the_fork_warning(page: Page, world: World, live_server):
    log_in(page.context, world.player, live_server.url)
    visit(page, world, "kept")
    before = kept(page, world)
    for public_key in (None, "", "zz" * 32, "00" * 31):
        page.unroute(HEAD)
        serve_head(page, public_key=public_key)
        visit(page, world, "fork")
        expect(page.get_by_role("alert")).to_contain_text("ha cambiado a tus espaldas")
        assert kept(page, world) == before, public_key


def test_a_head_without_a_key_on_first_sight_keeps_nothing(page: Page, world: World, live_server):
    log_in(page.context, world.player, live_server.url)
    serve_head(page, public_key=None)
    visit(page, world, "offline")
    expect(page.locator("[data-witness-warning]")).to_be_hidden()
    assert kept(page, world) is None


# A browser with Ed25519 that refuses the key it is given: a bad key, not a browser that cannot check.
REFUSED_KEY = NO_ED25519.replace('"no Ed25519", "NotSupportedError"', '"bad key", "DataError"')


def test_a_key_a_browser_with_ed25519_refuses_shows_the_red_warning(page: Page, world: World, live_server):
    assert REFUSED_KEY != NO_ED25519
    page.context.add_init_script(REFUSED_KEY)
    log_in(page.context, world.player, live_server.url)
    visit(page, world, "fork")
    expect(page.get_by_role("alert")).to_contain_text("no se verifica")
    expect(page.locator("[data-witness-unsigned]")).to_be_hidden()
    assert witness(page).get_attribute("data-signatures") is None
