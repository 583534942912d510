"""Issue 14, item 3, in a real Chromium at 360 px: exactly a newcomer's path.

A GM signs up, creates a campaign and its first scene and makes an
invitation; a person opens the link logged out, signs up from it and lands
in the campaign as a member with a welcome that names the next step; they create a character with ten skills (rows added in
place), the GM approves it, and they post with a roll and re-roll it with an
aspect. Every page on the way fits the phone's width. Fails on any console
error, uncaught exception or CSP violation (tests/browser/conftest.py).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Browser, Locator, Page, expect

from campaigns.models import Membership, Role
from sheets.models import Character
from table.models import TableRoll
from tests.browser.conftest import BrowserProblems, describe_overflow, horizontal_overflow, watched_page
from tests.systems.hitos.sheet.browser.test_sheet_skill_rows_journey import TEN_SKILLS

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PHONE = {"width": 360, "height": 740}
STRONG_PASSWORD = "Lumen-vertebra-77!"


@pytest.fixture
def newcomer_page(browser: Browser, live_server, browser_problems: BrowserProblems) -> Iterator[Page]:
    """A second person, on a phone of their own, watched like the ``page`` fixture."""
    page = watched_page(browser, live_server.url, browser_problems, viewport=PHONE)
    yield page
    page.wait_for_load_state("load")
    page.evaluate("() => document.readyState")
    page.context.close()


def _field(scope: Page | Locator, label: str) -> Locator:
    # The label's whole text, give or take the asterisk crispy-forms adds to required fields.
    return scope.get_by_label(re.compile(rf"^\s*{re.escape(label)}\*?\s*$"))


def _status(page: Page) -> Locator:
    return page.locator(".messages").get_by_role("status")


def _fits(page: Page) -> None:
    """Nothing on the page makes a phone scroll sideways."""
    page.wait_for_load_state("load")
    overflow = horizontal_overflow(page)
    assert overflow["page"] <= overflow["viewport"], f"{page.url}: {describe_overflow(overflow)}"


def _sign_up(page: Page, username: str) -> None:
    _field(page, "Nombre de usuario").fill(username)
    _field(page, "Correo electrónico").fill(f"{username}@example.com")
    _field(page, "Contraseña").fill(STRONG_PASSWORD)
    _field(page, "Contraseña (confirmación)").fill(STRONG_PASSWORD)
    _fits(page)
    page.get_by_role("button", name="Crear cuenta").click()


def test_a_newcomer_follows_an_invitation_makes_a_character_and_plays_on_a_phone(page: Page, newcomer_page: Page):
    gm = page
    gm.set_viewport_size(PHONE)

    # --- The GM signs up and creates a campaign, its first scene and an invitation. ---
    gm.goto("/cuenta/alta/")
    _sign_up(gm, "dora")
    expect(_status(gm)).to_contain_text("Te damos la bienvenida a Hitos, dora.")
    _fits(gm)
    gm.goto("/partidas/nueva/")
    _field(gm, "Título").fill("La casa del páramo")
    _field(gm, "Visibilidad").select_option(label="Privada")
    _fits(gm)
    gm.get_by_role("button", name="Crear partida").click()
    expect(gm.get_by_role("heading", level=1)).to_have_text("La casa del páramo")
    campaign_url = gm.url
    _fits(gm)

    gm.get_by_role("link", name="Crear la primera escena").click()
    _field(gm, "Título").fill("El molino")
    gm.get_by_role("button", name="Crear escena").click()
    expect(gm.get_by_role("heading", level=1)).to_have_text("El molino")
    scene_url = gm.url

    gm.goto(campaign_url)
    gm.get_by_role("link", name="Invitar jugadores").click()
    invitations = gm.get_by_role("region", name="Invitaciones")
    invitations.get_by_role("button", name="Crear invitación").click()
    expect(_status(gm)).to_contain_text("Invitación creada: ")
    # The link as shared (from SITE_URL); the person opens it on this test's server.
    invitation_path = urlsplit(invitations.locator("code").inner_text().strip()).path
    assert re.fullmatch(r"/invitacion/[\w-]+/", invitation_path)
    _fits(gm)

    # --- A person opens the link logged out, signs up from it and joins in one click. ---
    me = newcomer_page
    me.goto(invitation_path)
    expect(me.get_by_role("heading", level=1)).to_have_text("Te invitan a «La casa del páramo»")
    _fits(me)
    # Opening the link changed nothing: it takes signing up (or logging in) from it.
    assert not Membership.objects.filter(user__username="lucia").exists()
    me.get_by_role("link", name="Crear cuenta y unirme").click()
    _sign_up(me, "lucia")
    # Signed up from the link: a member at once, in the campaign, told the next step.
    expect(me.get_by_role("heading", level=1)).to_have_text("La casa del páramo")
    welcome = _status(me).filter(has_text="Ya eres jugador")
    expect(welcome).to_contain_text("¡Te damos la bienvenida a «La casa del páramo»! Ya eres jugador.")
    membership = Membership.objects.active().get(user__username="lucia")
    assert membership.role == Role.PLAYER
    _fits(me)

    # --- The welcome's link leads to a new character, made with ten skills in one save. ---
    welcome.get_by_role("link", name="crea tu personaje").click()
    _field(me, "Nombre").fill("Lucía Vidal")
    _field(me, "Concepto (aspecto)").fill("Fotógrafa que no se asusta")
    _field(me, "Fortaleza").fill("3")
    _field(me, "Reflejos").fill("4")
    _field(me, "Voluntad").fill("4")
    _field(me, "Intelecto").fill("3")
    rows = me.locator("#filas-skills > fieldset")
    add = me.get_by_role("button", name="Añadir habilidad")
    for n, (name, category, value) in enumerate(TEN_SKILLS):
        if n >= rows.count():
            add.click()
            expect(rows).to_have_count(n + 1)
        row = me.get_by_role("group", name=f"Habilidad {n + 1}")
        row.get_by_label(re.compile(r"^\s*Habilidad\*?\s*$")).fill(name)
        row.get_by_label(re.compile(r"^\s*Categoría\*?\s*$")).select_option(category)
        row.get_by_label(re.compile(r"^\s*Valor\*?\s*$")).fill(value)
    _fits(me)
    me.get_by_role("button", name="Crear", exact=True).click()
    expect(me.get_by_role("heading", name="Lucía Vidal")).to_be_visible()
    character = Character.objects.get(name="Lucía Vidal")
    assert character.skills.count() == 10
    _fits(me)
    me.get_by_role("button", name="Enviar a la dirección").click()
    expect(me.locator(".sheet-status")).to_have_text("Enviada")

    # --- The GM approves it (accepting the budget's departures, if any). ---
    gm.goto(character.get_absolute_url())
    gm.get_by_label("Aprobar").check()
    gm.get_by_role("button", name="Enviar la revisión").click()
    budget = gm.get_by_label("Acepto las desviaciones del presupuesto de creación")
    if gm.locator(".sheet-status").inner_text().strip() != "Aprobada":
        gm.get_by_label("Aprobar").check()
        budget.check()
        gm.get_by_role("button", name="Enviar la revisión").click()
    expect(gm.locator(".sheet-status")).to_have_text("Aprobada")

    # --- In the scene, a post with a roll: the card explains itself. ---
    me.goto(scene_url)
    _fits(me)
    form = me.get_by_role("region", name="Escribir un mensaje")
    _field(form, "Escribir como").select_option(label="Personaje: Lucía Vidal")
    # A player never sees what only the GM may use.
    expect(_field(form, "Nombre del PNJ")).to_have_count(0)
    _field(form, "Mensaje").fill("Levanto la cámara y busco huellas en el barro.")
    form.locator("summary", has_text="Añadir tirada 1").click()
    row = form.locator("#fila-tirada-0")
    _field(row, "Característica").select_option("intelecto")
    _field(row, "Habilidad").select_option("Buscar")
    _field(row, "Para qué").fill("Encontrar las huellas")
    expect(row.locator("#probabilidad-0")).to_contain_text("Probabilidad de éxito")
    _fits(me)
    form.get_by_role("button", name="Publicar").click()
    expect(_status(me)).to_have_text("Mensaje publicado.")
    table_roll = TableRoll.objects.get(campaign__slug=campaign_url.rstrip("/").rsplit("/", 1)[1])
    card = me.locator(f"#tirada-{table_roll.pk}")
    expect(card).to_contain_text("Encontrar las huellas")
    expect(card.locator(".roll-die")).to_have_count(3)
    expect(card.locator(".roll-reading")).to_have_text("Cuenta el dado central (C), el del medio de los tres.")
    expect(card.locator(".roll-outcome, .roll-card-outcome").first).to_contain_text(re.compile("Éxito|Fallo"))
    _fits(me)

    # --- She re-rolls two dice with her concept, paid with a drama point, in place. ---
    me.evaluate("() => { window.sinRecarga = true; }")
    card.get_by_role("link", name="Activar aspecto").click()
    activation = me.locator(f"form#activacion-{table_roll.pk}")
    # Her concept is her only aspect: it is the one offered.
    _field(activation, "Aspecto que activas").select_option(label="Fotógrafa que no se asusta (Lucía Vidal)")
    activation.get_by_label(re.compile(r"^\s*Un punto dramático \(Lucía Vidal tiene \d+\)")).check()
    activation.locator(f"#dado-{table_roll.pk}-0").check()
    activation.locator(f"#dado-{table_roll.pk}-1").check()
    _fits(me)
    activation.get_by_role("button", name="Activar y repetir").click()
    chain = card.locator(".roll-chain-version")
    expect(chain).to_have_count(2)
    expect(chain.nth(1)).to_contain_text("aspecto «Fotógrafa que no se asusta» activado a favor")
    assert me.evaluate("() => window.sinRecarga") is True
    table_roll.refresh_from_db()
    assert table_roll.latest.entry["rerolled"] == [0, 1]
    _fits(me)
