"""Issue 14, in a real Chromium at 360 px: a new player makes a character
with ten skills in one save. "Añadir habilidad" brings one more row in place
(htmx) and moves the cursor to it; nothing typed is lost, Enter in a field
saves, and the page never scrolls sideways. Fails on any console error or
CSP violation (tests/browser/conftest.py)."""

import re

import pytest
from playwright.sync_api import Page, expect

from campaigns.models import Campaign, Membership, Role
from sheets.models import Character
from tests.factories import CampaignFactory, UserFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
PASSWORD = "clave-de-prueba-123"
PHONE = {"width": 360, "height": 740}

TEN_SKILLS = [
    ("Periodismo", "profesion", "6"),
    ("Pelea", "combate", "3"),
    ("Esquivar", "combate", "2"),
    ("Sigilo", "subterfugio", "3"),
    ("Historia", "cultura", "2"),
    ("Fotografía", "profesion", "2"),
    ("Persuasión", "interaccion", "3"),
    ("Buscar", "percepcion", "3"),
    ("Nadar", "forma_fisica", "1"),
    ("Mitos", "ocultismo", "1"),
]


def _field(page: Page, label: str):
    return page.get_by_label(re.compile(rf"^\s*{re.escape(label)}\*?\s*$"))


def _no_sideways_scroll(page: Page) -> None:
    widths = page.evaluate("() => [document.documentElement.scrollWidth, window.innerWidth]")
    assert widths[0] <= widths[1], widths


def test_a_character_with_ten_skills_in_one_save_on_a_phone(page: Page):
    gm, player = UserFactory(), UserFactory()
    campaign: Campaign = CampaignFactory(gm=gm)
    Membership.objects.create(campaign=campaign, user=player, role=Role.PLAYER)
    page.set_viewport_size(PHONE)
    page.goto("/cuenta/entrar/")
    _field(page, "Nombre de usuario").fill(player.username)
    _field(page, "Contraseña").fill(PASSWORD)
    page.get_by_role("button", name="Entrar").click()

    page.goto(f"/partidas/{campaign.slug}/fichas/nueva/")
    page.evaluate("() => { window.sinRecarga = true; }")
    _field(page, "Nombre").fill("Julia Romero")
    _field(page, "Concepto (aspecto)").fill("Periodista sin miedo")
    rows = page.locator("#filas-skills > fieldset")
    expect(rows).to_have_count(3)
    add = page.get_by_role("button", name="Añadir habilidad")
    for n, (name, category, value) in enumerate(TEN_SKILLS):
        if n >= 3:
            add.click()
            expect(rows).to_have_count(n + 1)
            # The new row takes the cursor.
            expect(page.locator(f"#id_skills-{n}-name")).to_be_focused()
        row = page.get_by_role("group", name=f"Habilidad {n + 1}")
        row.get_by_label(re.compile(r"^\s*Habilidad\*?\s*$")).fill(name)
        row.get_by_label(re.compile(r"^\s*Categoría\*?\s*$")).select_option(category)
        row.get_by_label(re.compile(r"^\s*Valor\*?\s*$")).fill(value)
    expect(page.locator("#id_skills-TOTAL_FORMS")).to_have_value("10")
    # Added in place: the page was never reloaded and what was typed is there.
    assert page.evaluate("() => window.sinRecarga") is True
    expect(_field(page, "Nombre")).to_have_value("Julia Romero")
    _no_sideways_scroll(page)

    # Enter in a field saves the sheet (it adds no row).
    page.locator("#id_skills-9-value").press("Enter")
    expect(page.get_by_role("heading", name="Julia Romero")).to_be_visible()
    character = Character.objects.get(name="Julia Romero")
    saved = sorted((s.name, s.category, str(s.value)) for s in character.skills.all())
    assert saved == sorted(TEN_SKILLS)
