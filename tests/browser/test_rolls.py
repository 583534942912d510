"""Verified rolls in a real Chromium: the in-page check turns green, and the
downloaded JSON passes the offline verifier.

Every test also fails if a page logged a console error, threw an uncaught
exception or violated the Content Security Policy (tests/browser/conftest.py).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings
from playwright.sync_api import Page, expect

from rolls import services
from rolls.models import RollEntry
from systems.hitos import reading as hitos_reading
from tests.conftest import make_world

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
PASSWORD = "clave-de-prueba-123"  # tests.factories.UserFactory


def _verify_offline(path: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "rolls.verify_roll", str(path), settings.ROLLOG_KEYS.public_key_hex],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )


def _in_page_check(page: Page):
    return page.locator("#inpage-check")


def test_a_visitor_sees_a_verified_reroll_and_checks_it_in_the_page_and_offline(page: Page, tmp_path, live_server):
    table = make_world()
    original, _ = hitos_reading.hitos_check_roll(
        campaign=table.campaign,
        user=table.player,
        purpose="Reflejos + Sigilo: cruzar el jardín",
        modifier=8,
        difficulty=15,
        breakdown=[("Reflejos", 5), ("Sigilo", 3)],
        character=table.character,
        scene=table.scene,
        post=table.post,
        client_seed="navegador-1",
    )
    reroll = services.reroll_append(
        parent=original,
        user=table.player,
        positions=[0, 1],
        purpose="Aspecto «Nieta del difunto»",
        read=hitos_reading.hitos_reader(campaign=table.campaign, what="Reflejos + Sigilo", modifier=8, difficulty=15),
        client_seed="navegador-2",
    )

    for entry in (original, reroll):
        page.goto(f"/r/{entry.permalink}/")
        expect(page.get_by_role("heading", name="✓ Tirada verificada")).to_be_visible()
        dice = " · ".join(map(str, entry.entry["dice"]))
        expect(page.locator(".roll-headline")).to_contain_text(f"3d10 → {dice}")
        expect(page.locator("#roll-who")).to_have_text("Ana · Inés Salcedo")
        check = _in_page_check(page)
        # WebCrypto re-derives the dice and checks three Ed25519 signatures (entry, epoch, parent).
        expect(check).to_have_attribute("data-result", "ok")
        expect(check).to_have_text("✓ Comprobado también en tu navegador")
        expect(check).to_have_class(re.compile(r"\btext-success\b"))

    response = page.request.get(f"{live_server.url}/r/{reroll.permalink}.json")
    assert response.ok
    assert response.headers["content-type"] == "application/json; charset=utf-8"
    path = tmp_path / f"{reroll.permalink}.json"
    path.write_bytes(response.body())
    result = _verify_offline(path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.splitlines()[0] == "OK: tirada verificada (rollog/v1)"
    assert f"entrada #{reroll.seq} (repetición de la entrada #{original.seq})" in result.stdout


def test_a_player_rolls_freely_with_a_seed_from_the_browser(page: Page, tmp_path, live_server):
    table = make_world()
    page.goto(f"/cuenta/entrar/?next=/partidas/{table.campaign.slug}/tiradas/libre/")
    page.get_by_label(re.compile(r"^\s*Nombre de usuario\*?\s*$")).fill(table.player.username)
    page.get_by_label(re.compile(r"^\s*Contraseña\*?\s*$")).fill(PASSWORD)
    page.get_by_role("button", name="Entrar").click()
    expect(page.get_by_role("heading", name="Tirada libre")).to_be_visible()

    page.get_by_label(re.compile(r"^\s*Dados\*?\s*$")).fill("2d6+1")
    page.get_by_label("Para qué").fill("Monedas en el bolsillo")
    page.get_by_role("button", name="Tirar").click()

    expect(page).to_have_url(re.compile(r"/r/[a-z2-7]{24}/$"))
    expect(page.get_by_role("status")).to_have_text("Tirada hecha y firmada.")
    expect(_in_page_check(page)).to_have_attribute("data-result", "ok")
    permalink = page.url.rstrip("/").rsplit("/", 1)[1]
    entry = RollEntry.objects.get(permalink=permalink)
    seed = entry.entry["client_seed"]
    # client-seed.js made 16 random bytes and kept a receipt before sending.
    assert entry.entry["client_seed_source"] == "browser"
    assert re.fullmatch(r"[0-9a-f]{32}", seed)
    receipts = json.loads(page.evaluate("() => localStorage.getItem('rollog-receipts')"))
    assert [(r["client_seed"], r["spec"], r["purpose"]) for r in receipts] == [
        (seed, "2d6+1", "Monedas en el bolsillo")
    ]
    assert receipts[0]["seen_head"] == RollEntry.objects.get(campaign=table.campaign, seq=0).entry_hash
    expect(page.locator(".roll-total")).to_have_text(f"Resultado: {entry.entry['game']['total']}")

    response = page.request.get(f"{live_server.url}/r/{permalink}.json")
    path = tmp_path / "libre.json"
    path.write_bytes(response.body())
    result = _verify_offline(path)
    assert result.returncode == 0, result.stdout + result.stderr
