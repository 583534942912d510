"""Issue 18, "Done when", in a real Chromium: trust in the roll log.

In «La mansión» (``tests.conftest.make_world``) Ana writes a post with a
HITOS roll and then activates her own aspect from the page, re-rolling two
dice. Both entries carry ``client_seed_source = "browser"``: client-seed.js
made both seeds and kept a receipt of each in localStorage. Her browser, the
witness (witness.js), kept the log's head on every visit; when the server
then serves an export where an entry she had seen is rewritten, the red fork
warning shows and the old head stays kept. The e-mails her post sent to the
direction and to Bruno (both asked for e-mails at once) carry the log's
entry number and the first 16 hex digits of its head, so the inboxes are
witnesses too.

Any console error, uncaught exception or Content Security Policy violation
fails the test (tests/browser/conftest.py).
"""

from __future__ import annotations

import base64
import json
import re

import pytest
from django.core import mail
from django.urls import reverse
from playwright.sync_api import Locator, Page, Route, expect

from accounts.models import User
from campaigns.models import Visibility
from rolls.models import CampaignLog, RollEntry
from systems.hitos.activations.services import SHEET_ASPECT
from table.models import TableRoll
from tests.conftest import World, make_world
from tests.factories import roll

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PASSWORD = "clave-de-prueba-123"  # tests.factories.UserFactory
PURPOSE = "Cruzar el vestíbulo sin que me oigan"
SEED = re.compile(r"^[0-9a-f]{32}$")


@pytest.fixture
def world(live_server) -> World:
    world = make_world(Visibility.PRIVATE)
    for user in (world.gm, world.bruno):
        user.email_notifications = User.EmailChoice.IMMEDIATE
        user.save(update_fields=["email_notifications"])
    return world


def _field(scope: Page | Locator, label: str) -> Locator:
    return scope.get_by_label(re.compile(rf"^\s*{re.escape(label)}\*?\s*$"))


def _witness_done(page: Page, state: str) -> None:
    expect(page.locator("[data-rollog-witness]")).to_have_attribute("data-witness", state)


def _kept(page: Page, world: World) -> dict:
    return json.loads(page.evaluate("() => localStorage.getItem('rollog-witness')"))[str(world.campaign.pk)]


def _receipts(page: Page) -> list[dict]:
    return json.loads(page.evaluate("() => localStorage.getItem('rollog-receipts') || '[]'"))


def _rewritten(ref: dict) -> dict:
    entry = json.loads(base64.b64decode(ref["entry_b64"]))
    entry["time"] = "2020-01-01T00:00:00Z"
    raw = json.dumps(entry, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
    return {**ref, "entry_b64": base64.b64encode(raw).decode("ascii")}


def test_browser_seeds_receipts_a_witnessed_head_a_fork_warning_and_heads_in_e_mails(page: Page, world: World):
    scene_url = reverse("table:scene-detail", args=[world.campaign.slug, world.scene.pk])
    mail.outbox.clear()

    # --- Ana logs in and opens the scene: her browser keeps the log's head. ------
    page.goto(f"/cuenta/entrar/?next={scene_url}")
    _field(page, "Nombre de usuario").fill(world.ana.username)
    _field(page, "Contraseña").fill(PASSWORD)
    page.get_by_role("button", name="Entrar").click()
    expect(page.get_by_role("banner").get_by_role("link", name=world.ana.public_name)).to_be_visible()
    _witness_done(page, "kept")
    assert _kept(page, world)["seq"] == 0

    # --- A post with a HITOS roll: the row's seed comes from the browser. ---------
    form = page.get_by_role("region", name="Escribir un mensaje")
    _field(form, "Escribir como").select_option(label="Personaje: Inés Salcedo")
    _field(form, "Mensaje").fill("Me pego a la pared y avanzo sin hacer ruido.")
    form.locator("summary", has_text="Añadir tirada 1").click()
    row = form.locator("#fila-tirada-0")
    _field(row, "Característica").select_option("reflejos")
    _field(row, "Habilidad").select_option("Sigilo")
    _field(row, "Para qué").fill(PURPOSE)
    expect(row.locator("input[name='tirada-0-client_seed']")).to_have_value(SEED)
    form.get_by_role("button", name="Publicar").click()
    expect(page.locator(".messages").get_by_role("status")).to_have_text("Mensaje publicado.")
    # The page after the post: the witness walked the log from the kept head.
    _witness_done(page, "extended")

    table_roll = TableRoll.objects.select_related("first").get(campaign=world.campaign, owner=world.ana)
    first = table_roll.first
    assert first.entry["client_seed_source"] == "browser"
    assert SEED.match(first.entry["client_seed"])

    # --- A positive activation from the page, re-rolling two dice. ---------------
    card = page.locator(f"#tirada-{table_roll.pk}")
    card.get_by_role("link", name="Activar aspecto").click()
    activation = page.locator(f"form#activacion-{table_roll.pk}")
    _field(activation, "Aspecto que activas").select_option(f"{SHEET_ASPECT}{world.ines_aspect.pk}")
    activation.get_by_label(re.compile(r"^\s*Un punto dramático \(Inés Salcedo tiene 3\)")).check()
    activation.locator(f"#dado-{table_roll.pk}-0").check()
    activation.locator(f"#dado-{table_roll.pk}-1").check()
    activation.get_by_role("button", name="Activar y repetir").click()
    expect(card.locator(".roll-chain-version")).to_have_count(2)

    table_roll.refresh_from_db()
    reroll = table_roll.latest
    assert reroll.kind == RollEntry.Kind.REROLL
    assert reroll.parent_id == first.pk
    assert reroll.entry["client_seed_source"] == "browser"
    assert SEED.match(reroll.entry["client_seed"])

    # Both seeds were kept in receipts before they were sent, with the campaign.
    receipts = {r["client_seed"]: r for r in _receipts(page)}
    assert set(receipts) == {first.entry["client_seed"], reroll.entry["client_seed"]}
    for receipt in receipts.values():
        assert receipt["purpose"] == PURPOSE
        assert receipt["campaign"] == world.campaign.slug
        assert receipt["page"] == scene_url
    # Each says which head the page showed: the witness's, checked before sending.
    assert (
        receipts[first.entry["client_seed"]]["seen_head"]
        == RollEntry.objects.get(campaign=world.campaign, seq=0).entry_hash
    )
    assert receipts[reroll.entry["client_seed"]]["seen_head"] == first.entry_hash

    # --- A visit later the head she saw is the re-roll; then the server lies. ----
    page.goto(scene_url)
    _witness_done(page, "extended")
    seen = _kept(page, world)
    assert (seen["seq"], seen["head"]) == (reroll.seq, reroll.entry_hash)
    page.goto(world.campaign.get_absolute_url())
    _witness_done(page, "same")

    # A roll by somebody else moves the head; the export rewrites her re-roll.
    later = roll(world, user=world.bruno)
    assert later.seq == reroll.seq + 1

    def tampered(route: Route) -> None:
        response = route.fetch()
        document = response.json()
        document["entries"] = [_rewritten(document["entries"][0]), *document["entries"][1:]]
        route.fulfill(response=response, json=document)

    page.route("**/tiradas/registro.json*", tampered)
    page.goto(scene_url)
    _witness_done(page, "fork")
    warning = page.locator("[data-witness-warning]")
    expect(warning).to_be_visible()
    expect(warning).to_have_attribute("role", "alert")
    expect(warning).to_contain_text(f"la entrada n.º {reroll.seq}, con cabeza {reroll.entry_hash[:16]}.")
    assert _kept(page, world) == seen

    # --- The e-mails about her post carry the log's entry and head. --------------
    messages = [m for m in mail.outbox if world.campaign.title in m.subject]
    assert sorted(m.to[0] for m in messages) == sorted([world.gm.email, world.bruno.email])
    heads = dict(RollEntry.objects.filter(campaign=world.campaign).values_list("seq", "entry_hash"))
    for message in messages:
        found = re.search(r"entrada n\.º (\d+), cabeza ([0-9a-f]{16})", message.body)
        assert found, message.body
        seq, head = int(found[1]), found[2]
        assert seq >= first.seq
        assert heads[seq][:16] == head
    assert CampaignLog.objects.get(campaign=world.campaign).seq == max(heads)
