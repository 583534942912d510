"""The Foundation's journeys in a real Chromium: sign-up, languages, keyboard, phone.

Every test also fails if a page it visited logged a console error, threw an
uncaught exception or violated the Content Security Policy (tests/browser/conftest.py).
"""

import re

import pytest
from playwright.sync_api import Page, expect

from accounts.models import User

pytestmark = pytest.mark.browser

STRONG_PASSWORD = "Lumen-vertebra-77!"


def _field(page: Page, label: str):
    # The label's whole text, give or take the template's whitespace and the
    # asterisk crispy-forms adds to required fields ("Contraseña*").
    return page.get_by_label(re.compile(rf"^\s*{re.escape(label)}\*?\s*$"))


def _password_fields(page: Page):
    return _field(page, "Contraseña"), _field(page, "Contraseña (confirmación)")


def _navbar(page: Page):
    # By landmark, not by its label, which changes with the language.
    return page.get_by_role("banner").get_by_role("navigation")


def test_visitor_signs_up_reads_spanish_switches_to_english_and_logs_out(page: Page):
    page.goto("/")
    expect(page.locator("html")).to_have_attribute("lang", "es")
    page.get_by_role("link", name="Crear cuenta").click()
    expect(page).to_have_url(re.compile(r"/cuenta/alta/$"))

    _field(page, "Nombre de usuario").fill("ana")
    _field(page, "Correo electrónico").fill("ana@example.com")
    password, confirmation = _password_fields(page)
    password.fill(STRONG_PASSWORD)
    confirmation.fill(STRONG_PASSWORD)
    page.get_by_role("button", name="Crear cuenta").click()

    # Back on the home page, signed in, in Spanish.
    expect(page).to_have_url(re.compile(r"/$"))
    expect(page.locator("html")).to_have_attribute("lang", "es")
    expect(page.get_by_role("status")).to_have_text(
        "Te damos la bienvenida a Hitos, ana. Ya puedes unirte a una partida o crear la tuya."
    )
    expect(page.get_by_role("heading", name="Partidas públicas")).to_be_visible()
    expect(_navbar(page).get_by_role("link", name="ana")).to_be_visible()
    expect(_navbar(page).get_by_role("button", name="Cerrar sesión")).to_be_visible()

    # The footer form switches to English and stays on the page.
    page.get_by_label("Idioma").select_option("en")
    page.get_by_role("button", name="Cambiar").click()
    expect(page.locator("html")).to_have_attribute("lang", "en")
    expect(page).to_have_url(re.compile(r"/$"))
    expect(page.get_by_role("heading", name="Public campaigns")).to_be_visible()
    expect(page.get_by_role("link", name="Skip to content")).to_be_attached()
    expect(page.get_by_label("Language")).to_have_value("en")
    expect(page.get_by_role("button", name="Change")).to_be_visible()
    assert User.objects.get(username="ana").language == "en"

    # Logging out keeps the language (cookie) and leaves an anonymous visitor.
    page.get_by_role("button", name="Log out").click()
    expect(page.locator("html")).to_have_attribute("lang", "en")
    expect(_navbar(page).get_by_role("link", name="Log in", exact=True)).to_be_visible()
    expect(_navbar(page).get_by_role("link", name="Sign up")).to_be_visible()
    expect(page.get_by_role("button", name="Log out")).to_have_count(0)
    expect(page.get_by_role("link", name="ana")).to_have_count(0)


def test_sign_up_errors_are_spanish_and_keep_what_the_visitor_typed(page: Page):
    page.goto("/cuenta/alta/")
    _field(page, "Nombre de usuario").fill("ana")
    _field(page, "Correo electrónico").fill("ana@example.com")
    password, confirmation = _password_fields(page)
    password.fill(STRONG_PASSWORD)
    confirmation.fill(STRONG_PASSWORD + "x")
    page.get_by_role("button", name="Crear cuenta").click()

    expect(page).to_have_url(re.compile(r"/cuenta/alta/$"))
    expect(page.locator("html")).to_have_attribute("lang", "es")
    password, confirmation = _password_fields(page)
    # Our own Spanish message (in tú), tied to the field it is about.
    expect(confirmation).to_have_attribute("aria-invalid", "true")
    expect(page.locator("#id_password2_error")).to_have_text(
        "Las dos contraseñas no coinciden: escribe la misma en los dos campos."
    )
    expect(confirmation).to_have_attribute("aria-describedby", re.compile(r"\bid_password2_error\b"))
    # What the visitor typed comes back; the passwords never do.
    expect(_field(page, "Nombre de usuario")).to_have_value("ana")
    expect(_field(page, "Correo electrónico")).to_have_value("ana@example.com")
    expect(password).to_have_value("")
    expect(confirmation).to_have_value("")
    assert not User.objects.exists()


def test_keyboard_user_skips_to_the_content_and_finds_the_labelled_language_select(page: Page):
    page.goto("/")
    skip_link = page.get_by_role("link", name="Saltar al contenido")

    page.keyboard.press("Tab")
    expect(skip_link).to_be_focused()
    # Hidden until focused, then really shown (not a 1-pixel clip).
    box = skip_link.bounding_box()
    assert box is not None and box["width"] > 20 and box["height"] > 10, box

    page.keyboard.press("Enter")
    expect(page).to_have_url(re.compile(r"/#contenido$"))
    expect(page.locator("main#contenido")).to_be_focused()

    language = page.get_by_label("Idioma")
    expect(language).to_have_attribute("name", "language")
    expect(language).to_have_value("es")


def test_phone_layout_opens_the_menu_with_the_toggler(page: Page):
    page.set_viewport_size({"width": 375, "height": 667})
    page.goto("/")
    toggler = _navbar(page).get_by_role("button", name="Abrir el menú")
    log_in = _navbar(page).get_by_role("link", name="Entrar", exact=True)

    expect(toggler).to_be_visible()
    expect(toggler).to_have_attribute("aria-expanded", "false")
    expect(log_in).to_be_hidden()

    # Bootstrap's vendored bundle runs under the CSP, or nothing would open.
    toggler.click()
    expect(toggler).to_have_attribute("aria-expanded", "true")
    expect(log_in).to_be_visible()
    log_in.click()
    expect(page).to_have_url(re.compile(r"/cuenta/entrar/$"))


def test_a_csp_violation_is_reported(page: Page, browser_problems):
    # The watchdog behind every other test: an inline script is refused by
    # the policy, and the refusal is collected.
    page.goto("/")
    page.evaluate(
        """() => {
          const script = document.createElement("script");
          script.textContent = "window.inlineRan = true";
          document.body.append(script);
        }"""
    )
    expect(page.locator("html")).to_have_attribute("lang", "es")
    page.evaluate("() => new Promise((resolve) => setTimeout(resolve, 50))")
    problems = browser_problems.take()
    assert page.evaluate("() => window.inlineRan === undefined")
    assert any("CSP violation: script-src-elem blocked inline" in problem for problem in problems), problems
    # Chromium's own report; its wording changes between versions.
    assert any("Content Security Policy" in problem and "inline script" in problem for problem in problems), problems
