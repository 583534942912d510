"""Campaigns in a real Chromium: the table's journey and markup that must never run.

The GM browses in the ``page`` fixture's context and each player in one of
their own, so sessions never mix; everyone logs in through the real form.
Every page of every context is watched like the ``page`` fixture's: any
console error, uncaught exception or Content Security Policy violation fails
the test (tests/browser/conftest.py).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from urllib.parse import urlsplit

import pytest
from django.conf import settings
from playwright.sync_api import Browser, Locator, Page, expect

from accounts.models import User
from campaigns.models import Application, Membership, Post
from tests.browser.conftest import _REPORT_CSP_VIOLATIONS, TIMEOUT_MS, BrowserProblems
from tests.factories import UserFactory

pytestmark = pytest.mark.browser

PASSWORD = "clave-de-prueba-123"

# Each one sets window.__xss if it ever runs. The titles also try to break out
# of an attribute (`value="…"`, `title="…"`) before injecting.
XSS_TITLE = '"><img src=x onerror="window.__xss=1"><script>window.__xss=1</script>'
XSS_MARKDOWN = "\n\n".join(
    [
        '<img src=x onerror="window.__xss=1">',
        "<script>window.__xss=1</script>",
        "[x](javascript:window.__xss=1)",
        '<a href="javascript:window.__xss=1">y</a>',
        "<javascript:window.__xss=1>",
        "<svg onload=window.__xss=1></svg>",
        '<div hx-get="/" hx-trigger="load" hx-on:htmx:load="window.__xss=1">z</div>',
    ]
)
# Anything a payload could have left in the page if it were not escaped (the
# one drawing the site makes itself, the pace chart, is ours: svg.pace-chart).
INJECTED = (
    "main img, main script, main svg:not(.pace-chart), main iframe, [onerror], [onload], "
    "[hx-on\\:htmx\\:load], a[href^='javascript' i]"
)

OpenPage = Callable[[], Page]


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


def _settle(*pages: Page) -> None:
    # The conftest's hook waits for the ``page`` fixture's page only: let the
    # others finish loading and deliver their console events before the test ends.
    for page in pages:
        page.wait_for_load_state("load")
        page.evaluate("() => document.readyState")


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


def _post(page: Page, post_id: int) -> Locator:
    return page.locator(f"#mensaje-{post_id}")


def _post_id(page: Page) -> int:
    # A new post redirects to its permalink: the scene page at #mensaje-<id>.
    expect(page).to_have_url(re.compile(r"#mensaje-\d+$"))
    return int(page.url.rsplit("-", 1)[1])


def _write(
    page: Page,
    body: str,
    *,
    note: str = "",
    recipients: str = "Todos los que ven la escena",
    voice: str = "Fuera de personaje",
    npc_name: str = "",
) -> int:
    form = page.get_by_role("region", name="Escribir un mensaje")
    _field(form, "Escribir como").select_option(label=voice)
    if npc_name:
        _field(form, "Nombre del PNJ").fill(npc_name)
    _field(form, "Mensaje").fill(body)
    if note:
        _field(form, "Nota de juego (fuera de personaje)").fill(note)
    _field(form, "Destinatarios").select_option(label=recipients)
    form.get_by_role("button", name="Publicar").click()
    expect(_status(page)).to_have_text("Mensaje publicado.")
    return _post_id(page)


def _join_by_invitation(page: Page, user: User, invitation_url: str) -> None:
    # The link is the GM's consent: one click, no application to approve.
    _log_in(page, user)
    page.goto(invitation_url)
    expect(page.get_by_role("heading", level=1)).to_have_text("Te invitan a «La casa del páramo»")
    page.get_by_role("button", name="Unirme a la partida").click()
    expect(_status(page)).to_contain_text("¡Te damos la bienvenida a «La casa del páramo»! Ya eres jugador.")
    expect(page.get_by_role("heading", level=1)).to_have_text("La casa del páramo")


def test_gm_invites_players_join_the_gm_moderates_and_a_whisper_to_the_gm_stays_private(
    page: Page, open_page: OpenPage
):
    dora = UserFactory(username="dora", display_name="Dora")
    ana = UserFactory(username="ana", display_name="Ana")
    bruno = UserFactory(username="bruno", display_name="Bruno")
    gm = page

    # The GM creates a private campaign and its first scene.
    _log_in(gm, dora, then="/partidas/nueva/")
    _field(gm, "Título").fill("La casa del páramo")
    _field(gm, "Visibilidad").select_option(label="Privada")
    _field(gm, "Descripción").fill("Una partida **corta** en el páramo.")
    gm.get_by_role("button", name="Crear partida").click()
    expect(gm.get_by_role("heading", level=1)).to_have_text("La casa del páramo")
    campaign_url = gm.url

    gm.get_by_role("link", name="Crear la primera escena").click()
    _field(gm, "Título").fill("El molino")
    gm.get_by_role("button", name="Crear escena").click()
    expect(_status(gm)).to_have_text("Escena creada.")
    expect(gm.get_by_role("heading", level=1)).to_have_text("El molino")
    scene_url = gm.url

    # An invitation from the dashboard; its link is read off the page.
    gm.goto(campaign_url)
    gm.get_by_role("link", name="Invitar jugadores").click()
    invitations = gm.get_by_role("region", name="Invitaciones")
    invitations.get_by_role("button", name="Crear invitación").click()
    expect(_status(gm)).to_contain_text("Invitación creada: ")
    link = invitations.locator("code")
    expect(link).to_have_count(1)
    # The link as shared, from SITE_URL; the players open its path on this test's server.
    shared = link.inner_text().strip()
    assert shared.startswith(f"{settings.SITE_URL}/invitacion/")
    invitation_url = urlsplit(shared).path
    assert re.fullmatch(r"/invitacion/[\w-]+/", invitation_url)

    # Two players open the link and are in at once; the GM finds them among the members.
    ana_page, bruno_page = open_page(), open_page()
    _join_by_invitation(ana_page, ana, invitation_url)
    _join_by_invitation(bruno_page, bruno, invitation_url)
    gm.reload()
    expect(gm.get_by_role("region", name="Solicitudes pendientes")).to_contain_text("No hay solicitudes pendientes.")
    expect(gm.get_by_role("region", name="Miembros").locator("article")).to_have_text(
        [re.compile(r"^\s*Ana \(Jugador\)"), re.compile(r"^\s*Bruno \(Jugador\)")]
    )
    assert set(Membership.objects.active().values_list("user__username", flat=True)) == {"ana", "bruno"}
    assert not Application.objects.exists()

    # Ana posts out of character with a game note; Bruno reads both.
    ana_page.goto(scene_url)
    first = _write(ana_page, "Empujo la puerta del *molino*.", note="¿Tiramos ya por **Percepción**?")
    post = _post(ana_page, first)
    expect(post.locator(".user-text").first).to_have_text("Empujo la puerta del molino.")
    expect(post.locator(".user-text em")).to_have_text("molino")
    expect(post.get_by_role("complementary", name="Notas de juego")).to_contain_text("¿Tiramos ya por Percepción?")

    bruno_page.goto(scene_url)
    expect(_post(bruno_page, first)).to_contain_text("Empujo la puerta del molino.")
    expect(_post(bruno_page, first).get_by_role("complementary", name="Notas de juego")).to_contain_text(
        "¿Tiramos ya por Percepción?"
    )

    # The GM hides it with a reason and still reads it.
    gm.goto(scene_url)
    post = _post(gm, first)
    post.get_by_label("Motivo para ocultarlo").fill("Adelanta la escena siguiente")
    post.get_by_role("button", name="Ocultar").click()
    expect(_status(gm)).to_have_text("Mensaje ocultado.")
    placeholder = "Mensaje oculto por la dirección. Motivo: Adelanta la escena siguiente"
    expect(_post(gm, first).get_by_role("note")).to_have_text(placeholder)
    expect(_post(gm, first)).to_contain_text("Empujo la puerta del molino.")
    expect(_post(gm, first).get_by_role("button", name="Volver a mostrar")).to_be_visible()

    # Both players see the placeholder and the reason; only the author still
    # sees her own text and note, Bruno neither.
    ana_page.reload()
    expect(_post(ana_page, first).get_by_role("note")).to_have_text(placeholder)
    expect(_post(ana_page, first)).to_contain_text("Empujo la puerta del molino.")
    bruno_page.reload()
    hidden = _post(bruno_page, first)
    expect(hidden.get_by_role("note")).to_have_text(placeholder)
    expect(hidden).not_to_contain_text("Empujo la puerta")
    expect(hidden).not_to_contain_text("Percepción")
    expect(hidden.get_by_role("complementary", name="Notas de juego")).to_have_count(0)

    # A post for the GM only: Ana and the GM see it, Bruno not even by its link.
    whisper = _write(ana_page, "Escondo la llave del sótano en la bota.", recipients="Solo la dirección")
    expect(_post(ana_page, whisper)).to_contain_text("Solo para la dirección")
    assert Post.objects.get(pk=whisper).recipients == Post.Recipients.GM

    gm.reload()
    expect(_post(gm, whisper)).to_contain_text("Solo para la dirección")
    expect(_post(gm, whisper)).to_contain_text("Escondo la llave del sótano en la bota.")

    bruno_page.reload()
    expect(_post(bruno_page, first)).to_be_visible()
    expect(_post(bruno_page, whisper)).to_have_count(0)
    expect(bruno_page.locator("main")).not_to_contain_text("llave del sótano")
    assert bruno_page.request.get(f"/mensajes/{whisper}/", max_redirects=0).status == 404

    _settle(ana_page, bruno_page)


def test_markup_typed_into_titles_names_posts_and_notes_never_runs(page: Page, open_page: OpenPage):
    dora = UserFactory(username="dora", display_name="Dora")
    ana = UserFactory(username="ana", display_name="Ana")
    gm = page

    def check(p: Page, *texts: str) -> None:
        # The payloads come back as the text that was typed (escaped, not
        # executed), nothing they carry made it into the DOM, nothing ran.
        for text in texts:
            expect(p.locator("main")).to_contain_text(text)
        expect(p.locator(INJECTED)).to_have_count(0)
        assert p.evaluate("window.__xss") is None, p.url

    # The GM types markup into the campaign's and the scene's title and description.
    _log_in(gm, dora, then="/partidas/nueva/")
    _field(gm, "Título").fill(XSS_TITLE)
    _field(gm, "Descripción").fill(XSS_MARKDOWN)
    gm.get_by_role("button", name="Crear partida").click()
    expect(gm.get_by_role("heading", level=1)).to_have_text(XSS_TITLE)
    campaign_url = gm.url
    check(gm, "[x](javascript:window.__xss=1)")

    gm.get_by_role("link", name="Crear la primera escena").click()
    _field(gm, "Título").fill(XSS_TITLE)
    _field(gm, "Descripción").fill(XSS_MARKDOWN)
    gm.get_by_role("button", name="Crear escena").click()
    expect(gm.get_by_role("heading", level=1)).to_have_text(XSS_TITLE)
    scene_url = gm.url
    check(gm, "<svg onload=window.__xss=1></svg>")

    gm.goto(campaign_url + "direccion/")
    invitations = gm.get_by_role("region", name="Invitaciones")
    invitations.get_by_role("button", name="Crear invitación").click()
    expect(_status(gm)).to_contain_text("Invitación creada: ")
    invitation_url = urlsplit(invitations.locator("code").inner_text().strip()).path

    # A player reads the invitation, then applies to the public campaign with
    # markup (an invitation needs no application); the GM answers with markup.
    ana_page = open_page()
    _log_in(ana_page, ana)
    check(ana_page, XSS_TITLE)  # the home page's list of public campaigns
    ana_page.goto(invitation_url)
    check(ana_page, XSS_TITLE, "[x](javascript:window.__xss=1)")
    ana_page.goto(campaign_url + "solicitar/")
    check(ana_page, XSS_TITLE)
    _field(ana_page, "Preséntate").fill(XSS_MARKDOWN)
    ana_page.get_by_role("button", name="Enviar solicitud").click()
    expect(_status(ana_page)).to_contain_text("Solicitud enviada.")

    gm.reload()
    pending = gm.get_by_role("region", name="Solicitudes pendientes")
    check(gm, XSS_TITLE, '<img src=x onerror="window.__xss=1">')
    pending.get_by_label("Respuesta (opcional)").fill(XSS_TITLE)
    pending.get_by_role("button", name="Aceptar").click()
    expect(_status(gm)).to_have_text("Ana ya es miembro de la partida.")

    # The GM writes as an NPC whose name is markup, edits the post and hides it.
    gm.goto(scene_url)
    first = _write(gm, XSS_MARKDOWN, note=XSS_MARKDOWN, voice="PNJ (escribe su nombre)", npc_name=XSS_TITLE[:80])
    post = _post(gm, first)
    expect(post.locator("header")).to_contain_text(XSS_TITLE[:80])
    expect(post.locator(".user-text").first).to_contain_text("<script>window.__xss=1</script>")
    expect(post.get_by_role("complementary", name="Notas de juego")).to_contain_text(
        '<img src=x onerror="window.__xss=1">'
    )
    # Not even the Markdown link becomes a link: a javascript: target is refused.
    expect(post.locator(".user-text a")).to_have_count(0)
    check(gm, "[x](javascript:window.__xss=1)")

    gm.goto(f"/mensajes/{first}/editar/")
    expect(_field(gm, "Mensaje")).to_have_value(XSS_MARKDOWN)
    _field(gm, "Mensaje").fill(XSS_MARKDOWN + "\n\nEl molino, editado.")
    gm.get_by_role("button", name="Guardar cambios").click()
    expect(_status(gm)).to_contain_text("Mensaje editado.")
    gm.goto(f"/mensajes/{first}/historial/")
    check(gm, "<script>window.__xss=1</script>", "El molino, editado.")

    gm.goto(scene_url)
    post = _post(gm, first)
    post.get_by_label("Motivo para ocultarlo").fill("<script>window.__xss=1</script>")
    post.get_by_role("button", name="Ocultar").click()
    expect(_status(gm)).to_have_text("Mensaje ocultado.")
    check(gm, "Motivo: <script>window.__xss=1</script>")

    # Every other page of the GM's that shows these texts; the forms hold them as values.
    for path, texts in (
        ("direccion/", [XSS_TITLE, "<script>window.__xss=1</script>"]),
        ("buscar/?q=molino", [XSS_TITLE]),
        ("moderacion/", [XSS_TITLE, "<script>window.__xss=1</script>"]),
        ("editar/", []),
    ):
        gm.goto(campaign_url + path)
        check(gm, *texts)
    expect(_field(gm, "Título")).to_have_value(XSS_TITLE)
    gm.goto(scene_url + "editar/")
    expect(_field(gm, "Título")).to_have_value(XSS_TITLE)
    check(gm)
    gm.goto("/cuenta/avisos/")
    check(gm, f"Ana quiere unirse a «{XSS_TITLE}».")

    # The player's pages: notifications, her campaigns, the hidden post's placeholder.
    ana_page.goto("/cuenta/avisos/")
    check(ana_page, f"Te han aceptado en «{XSS_TITLE}».", f"Respuesta: {XSS_TITLE}", f"«{XSS_TITLE}»")
    ana_page.goto("/")
    check(ana_page, XSS_TITLE)
    ana_page.goto(scene_url)
    expect(_post(ana_page, first).get_by_role("note")).to_have_text(
        "Mensaje oculto por la dirección. Motivo: <script>window.__xss=1</script>"
    )
    check(ana_page, XSS_TITLE[:80])

    _settle(ana_page)
