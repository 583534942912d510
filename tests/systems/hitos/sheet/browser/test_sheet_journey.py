"""Issue 6, item 12, in a real Chromium: a player creates and submits a sheet,
the GM approves it, applies 9 damage to a character with Aguante 5 and sees the
mass-damage roll, the boxes and the state change without a reload; the meter
actions work with the keyboard alone. Fails on any console error or CSP
violation (tests/browser/conftest.py)."""

import re

import pytest
from playwright.sync_api import Page, expect

from campaigns.models import Campaign, Membership, Role
from sheets.models import Character
from systems.hitos.models import HitosSheet
from tests.factories import CampaignFactory, UserFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
PASSWORD = "clave-de-prueba-123"


def _login(page: Page, user) -> None:
    page.context.clear_cookies()
    page.goto("/cuenta/entrar/")
    page.get_by_label(re.compile(r"^\s*Nombre de usuario")).fill(user.username)
    page.get_by_label(re.compile(r"^\s*Contraseña")).fill(PASSWORD)
    page.get_by_role("button", name="Entrar").click()


def _field(page: Page, label: str):
    return page.get_by_label(re.compile(rf"^\s*{re.escape(label)}\*?\s*$"))


def test_create_submit_approve_and_take_nine_damage(page: Page):
    gm, player = UserFactory(), UserFactory()
    campaign: Campaign = CampaignFactory(gm=gm)
    Membership.objects.create(campaign=campaign, user=player, role=Role.PLAYER)

    _login(page, player)
    page.goto(f"/partidas/{campaign.slug}/fichas/nueva/")
    _field(page, "Nombre").fill("Julia Romero")
    _field(page, "Concepto (aspecto)").fill("Periodista sin miedo")
    _field(page, "Fortaleza").fill("3")
    _field(page, "Voluntad").fill("4")
    # The derived scores follow the typing (htmx), before anything is saved.
    expect(page.locator('[data-score="aguante"]')).to_have_text("5")
    expect(page.get_by_text("3 + 4 ÷ 2 = 5")).to_be_visible()
    page.locator("#id_skills-0-name").fill("Periodismo")
    page.locator("#id_skills-0-category").select_option("profesion")
    page.locator("#id_skills-0-value").fill("6")
    page.get_by_role("button", name="Crear").click()
    expect(page.get_by_role("heading", name="Julia Romero")).to_be_visible()
    page.get_by_role("button", name="Enviar a la dirección").click()
    expect(page.locator(".sheet-status")).to_have_text("Enviada")
    sheet = Character.objects.get(name="Julia Romero")

    _login(page, gm)
    page.goto(sheet.get_absolute_url())
    page.get_by_label("Aprobar").check()
    page.get_by_role("button", name="Enviar la revisión").click()
    # The sheet departs from the Cultos Innombrables budget: the GM must accept it.
    expect(page.get_by_text("La ficha se aparta del presupuesto de creación")).to_be_visible()
    page.get_by_label("Aprobar").check()
    page.get_by_label("Acepto las desviaciones del presupuesto de creación").check()
    page.get_by_role("button", name="Enviar la revisión").click()
    expect(page.locator(".sheet-status")).to_have_text("Aprobada")

    # Keyboard only: fill the damage form and press Enter; the fragment swaps in place.
    page.evaluate("() => { window.sinRecarga = true; }")
    page.locator("#id_resistencia-action").focus()
    page.keyboard.press("Tab")
    page.keyboard.type("9")
    page.keyboard.press("Enter")
    roll = page.locator(".sheet-roll")
    expect(roll).to_contain_text("Prueba de daño masivo de Julia Romero")
    expect(roll.get_by_role("link", name="ver la tirada")).to_be_visible()
    passed = "éxito" in roll.inner_text()
    expected = "9 barras y 0 aspas en 15 casillas" if passed else "15 barras y 0 aspas en 15 casillas"
    expect(page.locator("#meter-resistencia")).to_contain_text(expected)
    expect(page.locator("#meter-resistencia .meter-state")).to_have_text("Herido · -2" if passed else "Moribundo · -5")
    assert page.evaluate("() => window.sinRecarga") is True
    assert page.locator("#meter-resistencia .meter-box.is-slash").count() == (9 if passed else 15)
    sheet.refresh_from_db()
    assert sheet.hitos.health_slashes == (9 if passed else 15)


def test_the_sheet_is_readable_on_a_phone(page: Page):
    gm = UserFactory()
    campaign = CampaignFactory(gm=gm)
    player = UserFactory()
    Membership.objects.create(campaign=campaign, user=player, role=Role.PLAYER)
    sheet = Character.objects.create(campaign=campaign, owner=player, name="Tomás", status="approved")
    HitosSheet.objects.create(character=sheet, fortaleza=5, voluntad=5, health_slashes=8, health_crosses=3)
    page.set_viewport_size({"width": 360, "height": 740})
    _login(page, gm)
    page.goto(sheet.get_absolute_url())
    meter = page.locator("#meter-resistencia .meter-rows")
    expect(meter).to_be_visible()
    # No horizontal scrolling: the boxes wrap inside the phone's width.
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 360
    box = page.locator("#meter-resistencia .meter-box").first.bounding_box()
    assert box["width"] >= 20 and box["height"] >= 20
    page.screenshot(path="/tmp/sheet-phone.png", full_page=True)
