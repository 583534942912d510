"""Issue 11 in a real Chromium: a whisper with a roll stays private.

A player writes a post to one chosen member with a roll attached (its chance
shown before publishing, its seed made by the browser). The roll is a sealed
entry of the log (rollog v1.1 §3.7). Then, each in a context of their own:

- the author and the recipient read the post, its roll card and the roll's
  permalink, whose in-page check verifies the content ("ok");
- another player of the campaign and a visitor who is not logged in see
  neither the post nor the roll's content anywhere (scene, roll log,
  permalink, its ``.json`` bundle, the log export): the permalink says
  "Tirada privada" and its in-page check verifies the chain position only
  ("sealed").

A unique marker in the purpose (and another in the post's text) shows where
the content went. Every persona also gets the permalink at 360 px wide
without horizontal scroll, and every page is watched like the ``page``
fixture's: any console error, uncaught exception or Content Security Policy
violation fails the test, named with the persona that met it.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import pytest
from django.urls import reverse
from playwright.sync_api import Browser, Locator, Page, expect

from accounts.models import User
from campaigns.models import Campaign, Membership, Post, Role, Scene, Visibility
from rolls import services as roll_services
from rolls.models import RollEntry
from sheets.models import Character
from systems.hitos.checks.services import chance, check_setup
from systems.hitos.models import HitosSheet, Skill
from table.models import TableRoll
from tests.browser.conftest import _REPORT_CSP_VIOLATIONS, TIMEOUT_MS, BrowserProblems
from tests.factories import CampaignFactory, UserFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PASSWORD = "clave-de-prueba-123"  # tests.factories.UserFactory
MARKER = "MARCA-susurro"
PURPOSE = f"Forzar la cerradura {MARKER}"
BODY_MARKER = "CUERPO-susurro"
BODY = f"Me arrodillo ante la puerta del archivo y saco las ganzúas. {BODY_MARKER}"
SCENE_TITLE = "El archivo de la torre"
CHARACTER = "Inés Salcedo"
AUTHOR = "Ana Montoya"
RECIPIENT = "Bruno Lasa"
OTHER = "Carla Ibarra"
PUBLIC_POST = "Llegamos a la torre al anochecer."
PUBLIC_ROLL = "Vigilar la escalera"
# Everything of the whisper and its roll that must not reach anyone else.
SECRETS = (MARKER, BODY_MARKER)
LABEL_OK = "Comprobado también en tu navegador"
LABEL_SEALED = "Comprobada en tu navegador: posición en la cadena verificada, contenido no revelado"
NARROW = {"width": 360, "height": 800}
WIDE = {"width": 1280, "height": 720}  # Playwright's default viewport

OpenPage = Callable[[], Page]


@dataclass
class Tower:
    campaign: Campaign
    scene: Scene
    gm: User
    author: User
    recipient: User
    other: User
    ines: Character  # the author's character


def _character(campaign: Campaign, owner: User, name: str) -> Character:
    character = Character.objects.create(
        campaign=campaign,
        owner=owner,
        name=name,
        status=Character.Status.APPROVED,
    )
    HitosSheet.objects.create(
        character=character, fortaleza=5, reflejos=6, voluntad=5, intelecto=7, drama=5, drama_points=3
    )
    Skill.objects.create(character=character, name="Cerrajería", category="subterfugio", value=4)
    Skill.objects.create(character=character, name="Sigilo", category="subterfugio", value=3)
    return character


@pytest.fixture
def tower(live_server) -> Tower:
    """A public campaign with its log open: a GM, three players with approved
    characters, an open scene every member sees, a public post and a public
    roll in it (so that the pages a non-recipient opens are not empty)."""
    gm = UserFactory(display_name="La Directora")
    campaign = CampaignFactory(title="La torre del archivo", gm=gm, visibility=Visibility.PUBLIC)
    roll_services.log_open(campaign=campaign)
    author = UserFactory(display_name=AUTHOR)
    recipient = UserFactory(display_name=RECIPIENT)
    other = UserFactory(display_name=OTHER)
    for member in (author, recipient, other):
        Membership.objects.create(campaign=campaign, user=member, role=Role.PLAYER)
    scene = Scene.objects.create(campaign=campaign, title=SCENE_TITLE)
    assert scene.everyone and scene.status == Scene.Status.OPEN
    ines = _character(campaign, author, CHARACTER)
    tomas = _character(campaign, recipient, "Tomás Ferrer")
    _character(campaign, other, "Lucía Prieto")
    Post.objects.create(
        scene=scene, author=recipient, character=tomas, body=PUBLIC_POST, body_html=f"<p>{PUBLIC_POST}</p>"
    )
    roll_services.free_roll(
        campaign=campaign, user=other, text="3d10", purpose=PUBLIC_ROLL, scene=scene, client_seed="f" * 32
    )
    return Tower(campaign, scene, gm, author, recipient, other, ines)


@pytest.fixture
def open_page(browser: Browser, live_server, browser_problems: BrowserProblems) -> Iterator[OpenPage]:
    """Open a page in a new context (another person), set up and watched like ``page``."""
    contexts = []

    def open_() -> Page:
        context = browser.new_context(locale="es-ES", base_url=live_server.url)
        context.set_default_timeout(TIMEOUT_MS)
        context.set_default_navigation_timeout(TIMEOUT_MS)
        context.add_init_script(_REPORT_CSP_VIOLATIONS)
        contexts.append(context)
        page = context.new_page()
        page.on("console", browser_problems.on_console)
        page.on("pageerror", lambda error: browser_problems.on_page_error(page, error))
        return page

    yield open_
    for context in contexts:
        context.close()


def _field(scope: Page | Locator, label: str) -> Locator:
    # The label's whole text, give or take the asterisk crispy-forms adds to required fields.
    return scope.get_by_label(re.compile(rf"^\s*{re.escape(label)}\*?\s*$"))


def _status(page: Page) -> Locator:
    return page.locator(".messages").get_by_role("status")


def _log_in(page: Page, user: User, then: str = "/") -> None:
    page.goto(f"/cuenta/entrar/?next={then}")
    _field(page, "Nombre de usuario").fill(user.username)
    _field(page, "Contraseña").fill(PASSWORD)
    page.get_by_role("button", name="Entrar").click()
    expect(page.get_by_role("banner").get_by_role("link", name=user.public_name)).to_be_visible()


def _post_id(page: Page) -> int:
    # A new post redirects to its permalink: the scene page at #mensaje-<id>.
    expect(page).to_have_url(re.compile(r"#mensaje-\d+$"))
    return int(page.url.rsplit("-", 1)[1])


def _percent(value) -> str:
    # floatformat:1 in Spanish.
    return f"{float(value * 100):.1f}".replace(".", ",")


def _no_problems(persona: str, page: Page, problems: BrowserProblems) -> None:
    """No console error, uncaught exception or CSP violation so far, named by persona."""
    # Let the page finish loading; a round trip delivers the events in flight.
    page.wait_for_load_state("load")
    page.evaluate("() => document.readyState")
    assert not problems.entries, f"{persona}: the browser reported:\n" + "\n".join(problems.entries)


def _no_horizontal_scroll(persona: str, page: Page) -> None:
    widths = page.evaluate(
        "() => [document.documentElement.scrollWidth, document.documentElement.clientWidth, window.innerWidth]"
    )
    scroll_width, client_width, inner_width = widths
    assert inner_width == NARROW["width"], widths
    assert scroll_width <= client_width, f"{persona}: {page.url} scrolls sideways at 360 px ({widths})"


def _page_bundle(page: Page) -> dict:
    """The §3.10 bundle the permalink page embeds for its in-page check."""
    return json.loads(page.locator("#roll-bundle").text_content() or "null")


def _fetch_json(page: Page, url: str) -> tuple[dict, str]:
    """A JSON document fetched with this browser's cookies."""
    response = page.request.get(url)
    assert response.status == 200, (url, response.status)
    text = response.text()
    return json.loads(text), text


def _open_permalink(persona: str, page: Page, url: str) -> Locator:
    """The roll's permalink at 360 px wide: no sideways scroll, the in-page check done."""
    page.set_viewport_size(NARROW)
    page.goto(url)
    check = page.locator("#inpage-check")
    # verify-roll.js sets data-result once its check ends ("ok", "sealed", "fail", "unsupported").
    page.wait_for_function(
        "() => ['ok', 'sealed', 'fail', 'unsupported'].includes(document.getElementById('inpage-check')?.dataset.result)",
        timeout=TIMEOUT_MS,
    )
    _no_horizontal_scroll(persona, page)
    return check


def _reader_sees_the_roll(persona: str, page: Page, entry: RollEntry) -> None:
    """A reader allowed to read the post: the permalink shows and verifies the content."""
    check = _open_permalink(persona, page, entry.get_absolute_url())
    expect(check).to_have_attribute("data-result", "ok")
    expect(check.locator(".inpage-status")).to_contain_text(LABEL_OK)
    heading = page.get_by_role("heading", level=1)
    expect(heading).to_contain_text("Tirada verificada")
    expect(heading).not_to_contain_text("Tirada privada")
    main = page.locator("main")
    expect(main.locator(".roll-card-purpose")).to_have_text(PURPOSE)
    expect(main.locator("#roll-sealed")).to_contain_text("Tirada privada: solo la ven quienes pueden leer su mensaje.")
    expect(main.locator(".roll-card .roll-die-value")).to_have_text([str(d) for d in entry.entry["dice"]])
    expect(main.locator("#roll-who")).to_have_text(f"{AUTHOR} · {CHARACTER}")
    expect(main.locator("#roll-where")).to_contain_text(SCENE_TITLE)
    expect(main.locator("#roll-post .roll-post-text")).to_contain_text(BODY_MARKER)
    opening = base64.b64encode(bytes(entry.opening)).decode("ascii")
    assert _page_bundle(page)["opening_b64"] == opening, persona
    bundle, _text = _fetch_json(page, reverse("rolls:roll-json", args=[entry.permalink]))
    assert bundle["opening_b64"] == opening, persona
    page.set_viewport_size(WIDE)


def _outsider_sees_only_the_slot(persona: str, page: Page, entry: RollEntry) -> None:
    """Anyone else holding the link: "Tirada privada", the chain position, no content."""
    check = _open_permalink(persona, page, entry.get_absolute_url())
    expect(check).to_have_attribute("data-result", "sealed")
    expect(check.locator(".inpage-status")).to_contain_text(LABEL_SEALED)
    expect(page.get_by_role("heading", level=1)).to_have_text(re.compile(r"^\s*Tirada privada\s*$"))
    expect(page.locator("#roll-position")).to_contain_text(f"#{entry.seq} ")
    expect(page.locator("#roll-chain-check")).to_contain_text("firma, ranura y semilla correctas")
    main = page.locator("main")
    for text in (*SECRETS, SCENE_TITLE, CHARACTER, AUTHOR, "Cerrajería"):
        expect(main).not_to_contain_text(text)
    expect(main.locator(".roll-card, .roll-die")).to_have_count(0)
    # Nor anywhere in the page's source: its title, the embedded bundle, attributes.
    html = page.content()
    for text in (*SECRETS, SCENE_TITLE, CHARACTER, AUTHOR):
        assert text not in html, f"{persona}: {text!r} in the permalink's HTML"
    embedded = _page_bundle(page)
    assert embedded["opening_b64"] is None, persona
    assert embedded["parent"] is None and embedded["children"] == [], persona
    bundle, text = _fetch_json(page, reverse("rolls:roll-json", args=[entry.permalink]))
    assert bundle["opening_b64"] is None, persona
    for secret in (*SECRETS, SCENE_TITLE, CHARACTER, AUTHOR):
        assert secret not in text, f"{persona}: {secret!r} in the .json bundle"
    page.set_viewport_size(WIDE)


def _scene_without_the_whisper(persona: str, page: Page, scene_url: str, post_id: int) -> None:
    page.goto(scene_url)
    expect(page.get_by_role("heading", level=1)).to_contain_text(SCENE_TITLE)
    main = page.locator("main")
    expect(main).to_contain_text(PUBLIC_POST)  # the scene's public post, read as usual
    expect(page.locator(f"#mensaje-{post_id}")).to_have_count(0)
    expect(page.locator(".post-whisper")).to_have_count(0)
    for text in SECRETS:
        expect(main).not_to_contain_text(text)
    html = page.content()
    for text in SECRETS:
        assert text not in html, f"{persona}: {text!r} in the scene page's HTML"


def _roll_log_without_the_roll(persona: str, page: Page, log_url: str, entry: RollEntry) -> None:
    page.goto(log_url)
    expect(page.get_by_role("heading", level=1)).to_have_text("Registro de tiradas")
    main = page.locator("main")
    expect(main).to_contain_text(PUBLIC_ROLL)  # the public roll is listed
    expect(main.locator(f"a[href='{entry.get_absolute_url()}']")).to_have_count(0)
    # The filters offer only what the listed rolls contain.
    expect(page.locator("#filtro-personaje option", has_text=CHARACTER)).to_have_count(0)
    expect(page.locator("#filtro-jugador option", has_text=AUTHOR)).to_have_count(0)
    for text in (*SECRETS, CHARACTER, AUTHOR):
        expect(main).not_to_contain_text(text)
    html = page.content()
    for text in (*SECRETS, CHARACTER, AUTHOR):
        assert text not in html, f"{persona}: {text!r} in the roll log's HTML"


def _export_openings(page: Page, export_url: str) -> tuple[list, str]:
    """The log export as this browser gets it: the whisper roll's ``opening_b64`` values."""
    document, text = _fetch_json(page, export_url)
    sealed = [ref for ref in document["entries"] if "opening_b64" in ref]
    assert len(sealed) == 1, document
    return [ref["opening_b64"] for ref in sealed], text


def test_a_whisper_with_a_roll_is_read_by_its_recipient_and_sealed_for_everyone_else(
    page: Page, open_page: OpenPage, browser_problems: BrowserProblems, tower: Tower
):
    slug = tower.campaign.slug
    scene_url = reverse("table:scene-detail", args=[slug, tower.scene.pk])
    log_url = reverse("rolls:roll-log", args=[slug])
    export_url = reverse("rolls:log-export", args=[slug])

    # --- The author whispers to one player, with a roll. ------------------------------
    author = page
    _log_in(author, tower.author, scene_url)
    form = author.get_by_role("region", name="Escribir un mensaje")
    _field(form, "Escribir como").select_option(label=f"Personaje: {CHARACTER}")
    _field(form, "Mensaje").fill(BODY)
    _field(form, "Destinatarios").select_option(label="Miembros elegidos")
    # The members offered are the GM and the other players, never the author.
    chosen = form.get_by_role("checkbox")
    expect(chosen).to_have_count(3)
    expect(form.get_by_role("checkbox", name=AUTHOR)).to_have_count(0)
    form.get_by_role("checkbox", name=RECIPIENT, exact=True).check()
    form.locator("summary", has_text="Añadir tirada 1").click()
    row = form.locator("#fila-tirada-0")
    preview = row.locator("#probabilidad-0")
    # Each change in the row asks the server for the chance (htmx). The live
    # server shares the test's SQLite connection between its threads, so each
    # preview is waited for before the next request: none may overlap.
    _field(row, "Característica").select_option("reflejos")
    expect(preview).to_contain_text("modificador +6 contra dificultad 15")
    _field(row, "Habilidad").select_option("Cerrajería")
    expected = chance(check_setup(tower.ines, characteristic="reflejos", skill="Cerrajería"), 15, tower.campaign)
    expect(preview).to_contain_text(f"Probabilidad de éxito: {_percent(expected)} %")
    expect(preview).to_contain_text("modificador +10 contra dificultad 15")
    purpose = _field(row, "Para qué")
    purpose.fill(PURPOSE)
    # Leaving the field is a change too: let its preview come back before publishing.
    with author.expect_response(lambda response: "/probabilidad/" in response.url):
        purpose.blur()
    expect(preview).to_contain_text(f"Probabilidad de éxito: {_percent(expected)} %")
    # client-seed.js filled the row's seed with 16 random bytes (a sealed roll needs 32 characters).
    seed_field = row.locator("input[name='tirada-0-client_seed']")
    expect(seed_field).to_have_value(re.compile(r"^[0-9a-f]{32}$"))
    seed = seed_field.input_value()
    form.get_by_role("button", name="Publicar").click()
    expect(_status(author)).to_have_text("Mensaje publicado.")
    post_id = _post_id(author)

    post = Post.objects.get(pk=post_id)
    assert post.recipients == Post.Recipients.CHOSEN
    assert list(post.chosen_recipients.all()) == [tower.recipient]
    table_roll = TableRoll.objects.select_related("first").get(post=post)
    entry = table_roll.first
    assert entry.is_sealed and entry.audience == RollEntry.Audience.RECIPIENTS
    assert entry.entry["purpose"] == PURPOSE
    assert (entry.entry["client_seed"], entry.entry["client_seed_source"]) == (seed, "browser")
    # The chain carries the slot and a commitment, nothing of the content.
    assert entry.outer["kind"] == "sealed"
    assert MARKER not in json.dumps(entry.outer, ensure_ascii=False)

    # --- The author reads her whisper, its roll card and the permalink. ----------------
    whisper = author.locator(f"#mensaje-{post_id}")
    expect(whisper).to_contain_text(BODY_MARKER)
    expect(whisper).to_contain_text(f"Para: {RECIPIENT} y la dirección")
    card = whisper.locator(f"#tirada-{table_roll.pk}")
    expect(card.locator(".roll-card-purpose")).to_have_text(PURPOSE)
    expect(card.locator(".roll-die-value")).to_have_text([str(d) for d in entry.entry["dice"]])
    link = card.locator(".roll-signature a")
    expect(link).to_have_attribute("href", entry.get_absolute_url())
    link.click()
    expect(author).to_have_url(re.compile(re.escape(entry.get_absolute_url()) + "$"))
    _reader_sees_the_roll("the author", author, entry)
    author.goto(log_url)
    expect(author.locator("main")).to_contain_text(MARKER)
    openings, _text = _export_openings(author, export_url)
    assert openings == [base64.b64encode(bytes(entry.opening)).decode("ascii")]
    _no_problems("the author", author, browser_problems)

    # --- The recipient reads it all too. -----------------------------------------------
    recipient = open_page()
    _log_in(recipient, tower.recipient, scene_url)
    whisper = recipient.locator(f"#mensaje-{post_id}")
    expect(whisper).to_contain_text(BODY_MARKER)
    card = whisper.locator(f"#tirada-{table_roll.pk}")
    expect(card.locator(".roll-card-purpose")).to_have_text(PURPOSE)
    expect(card.locator(".roll-die-value")).to_have_text([str(d) for d in entry.entry["dice"]])
    card.locator(".roll-signature a").click()
    expect(recipient).to_have_url(re.compile(re.escape(entry.get_absolute_url()) + "$"))
    _reader_sees_the_roll("the recipient", recipient, entry)
    recipient.goto(log_url)
    expect(recipient.locator("main")).to_contain_text(MARKER)
    openings, _text = _export_openings(recipient, export_url)
    assert openings == [base64.b64encode(bytes(entry.opening)).decode("ascii")]
    _no_problems("the recipient", recipient, browser_problems)

    # --- Another player: no post, no content, a sealed permalink. ----------------------
    other = open_page()
    _log_in(other, tower.other, scene_url)
    _scene_without_the_whisper("another player", other, scene_url, post_id)
    _outsider_sees_only_the_slot("another player", other, entry)
    _roll_log_without_the_roll("another player", other, log_url, entry)
    openings, text = _export_openings(other, export_url)
    assert openings == [None]
    assert MARKER not in text
    _no_problems("another player", other, browser_problems)

    # --- Logged out: the same. ----------------------------------------------------------
    visitor = open_page()
    visitor.goto(scene_url)
    expect(visitor.get_by_role("banner").get_by_role("link", name="Entrar")).to_be_visible()
    _scene_without_the_whisper("a visitor", visitor, scene_url, post_id)
    _outsider_sees_only_the_slot("a visitor", visitor, entry)
    _roll_log_without_the_roll("a visitor", visitor, log_url, entry)
    openings, text = _export_openings(visitor, export_url)
    assert openings == [None]
    assert MARKER not in text
    _no_problems("a visitor", visitor, browser_problems)
