"""Issue 17, "Done when", in a real Chromium at 360 px: a player announces an
absence; the GM takes over their character for a roll request with a
deadline; the deadline passes and the GM settles it; the player returns,
sees what happened, and takes the character back.

In «La mansión» (``tests.conftest.make_world``), Bruno plays Tomás Ferrer.
On his phone he says what he allows while away («El director puede llevar a
mi personaje si falto») and announces an absence; a first try with the
return before the departure is refused in place (htmx), keeping what he
typed. The GM, on a phone too, sees him away on the dashboard, takes Tomás
over from there, asks Tomás for a roll with a deadline, and, once the
deadline has passed unanswered and the clock has told her, closes the
request unanswered on the settle page («Cerrar sin respuesta»). She also
writes in the scene as Tomás: the post says it was written on Bruno's
behalf. Bruno takes Tomás back («Recuperar mi personaje»), says he is back
(«Ya he vuelto», swapped in place), and reads in his notices what was done
in his name. (Taking the character back comes first: the return itself now
ends a takeover, ``table.takeover.returned_lines``, so there would be no
button left to press after it.)

Each person browses in a context of their own, watched like the ``page``
fixture's: a console error, an uncaught exception or a CSP violation fails
the test (tests/browser/conftest.py).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import formats, timezone
from playwright.sync_api import Browser, Locator, Page, expect

from campaigns import absences, deadlines
from campaigns.models import Absence, Deadline, ModerationAction, ModerationLog, Notification, Post
from table.models import RollRequest, Takeover
from tests.browser.conftest import BrowserProblems, describe_overflow, horizontal_overflow, log_in, watched_page
from tests.conftest import World, make_world

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PHONE = {"width": 360, "height": 740}
NOTE = "de viaje hasta el 12"
PURPOSE = "Forzar la cerradura del sótano"
ON_BEHALF = "Tomás fuerza la cerradura con la navaja mientras los demás vigilan."
# Set on the page before an htmx step; still there after it: no reload.
MARK = "() => { window.sinRecargar = true; }"
MARKED = "() => window.sinRecargar === true"


@pytest.fixture
def gm_page(browser: Browser, live_server, browser_problems: BrowserProblems) -> Iterator[Page]:
    """The GM's page: a second person, set up and watched like the ``page`` fixture's."""
    page = watched_page(browser, live_server.url, browser_problems, viewport=PHONE)
    yield page
    page.wait_for_load_state("load")
    page.evaluate("() => document.readyState")
    page.context.close()


@pytest.fixture
def world(live_server) -> World:
    return make_world()


def _field(scope: Page | Locator, label: str) -> Locator:
    # The label's whole text, give or take the asterisk crispy-forms adds to required fields.
    return scope.get_by_label(re.compile(rf"^\s*{re.escape(label)}\*?\s*$"))


def _fits(page: Page) -> None:
    overflow = horizontal_overflow(page)
    assert overflow["page"] <= overflow["viewport"], describe_overflow(overflow)


def _not_reloaded(page: Page) -> None:
    assert page.evaluate(MARKED), "the page was reloaded: the step should have swapped its part in place (htmx)"


def _message(page: Page) -> Locator:
    return page.locator(".messages").get_by_role("status")


def test_an_absent_players_character_is_carried_a_deadline_settled_and_the_character_taken_back(
    page: Page, gm_page: Page, live_server, world: World
):
    page.set_viewport_size(PHONE)
    campaign, scene = world.campaign, world.scene
    log_in(page.context, world.bruno, live_server.url)
    log_in(gm_page.context, world.gm, live_server.url)
    today = absences.campaign_today(campaign)
    back_on = today + timedelta(days=3)

    # --- Bruno says what he allows while away and announces his absence. ----------------
    page.goto(campaign.get_absolute_url())
    page.get_by_role("link", name="¿Vas a faltar? Avisa de tu ausencia").click()
    expect(page.get_by_role("heading", name="Ausencias", level=1)).to_be_visible()
    expect(page.get_by_text("No has anunciado ninguna ausencia.")).to_be_visible()
    _fits(page)
    consent = page.locator("#si-falto-form")
    consent.get_by_label("El director puede llevar a mi personaje si falto", exact=True).check()
    consent.get_by_role("button", name="Guardar lo que permito").click()
    expect(_message(page)).to_have_text("Guardado lo que permites mientras faltes.")

    form = page.locator("#ausencia-form")
    # The return before the departure: refused in place, in Spanish, keeping what he typed.
    page.evaluate(MARK)
    _field(form, "Desde").fill((today + timedelta(days=2)).isoformat())
    _field(form, "Hasta (incluido)").fill(today.isoformat())
    _field(form, "Nota (opcional)").fill(NOTE)
    form.get_by_role("button", name="Anunciar la ausencia").click()
    form = page.locator("#ausencia-form")
    expect(form.get_by_text("La vuelta no puede ser antes de la salida.")).to_be_visible()
    expect(_field(form, "Nota (opcional)")).to_have_value(NOTE)
    _not_reloaded(page)
    assert not Absence.objects.exists()
    _field(form, "Desde").fill(today.isoformat())
    _field(form, "Hasta (incluido)").fill(back_on.isoformat())
    # Holding his notices for his return is the default.
    expect(_field(form, "Guardar los avisos de esta partida para mi vuelta")).to_be_checked()
    form.get_by_role("button", name="Anunciar la ausencia").click()
    expect(_message(page)).to_have_text("Ausencia anunciada. La dirección ya lo sabe.")
    mine = page.locator("#tus-ausencias-lista li").first
    expect(mine).to_contain_text(NOTE)
    expect(mine.get_by_text("ahora", exact=True)).to_be_visible()
    expect(mine.get_by_role("button", name="Ya he vuelto")).to_be_visible()
    _fits(page)
    absence = Absence.objects.get(campaign=campaign, user=world.bruno)
    assert (absence.starts_on, absence.ends_on, absence.note, absence.hold_notifications) == (
        today,
        back_on,
        NOTE,
        True,
    )

    # --- The GM sees him away on the dashboard and takes Tomás over. ---------------------
    gm_page.goto(reverse("campaigns:dashboard", args=[campaign.slug]))
    away = gm_page.locator("section", has=gm_page.get_by_role("heading", name="Ausencias", exact=True))
    expect(away).to_contain_text(f"Bruno · hasta el {formats.date_format(back_on, 'MONTH_DAY_FORMAT')}: {NOTE}")
    panel = gm_page.locator("section", has=gm_page.get_by_role("heading", name="Personajes de jugadores ausentes"))
    expect(panel).to_contain_text("Tomás Ferrer, de Bruno (ausente hasta el")
    expect(panel).to_contain_text("El director puede llevar a mi personaje si falto")
    _fits(gm_page)
    panel.get_by_role("link", name="Llevar su personaje").click()
    expect(gm_page.get_by_role("heading", name="Llevar el personaje de un ausente", level=1)).to_be_visible()
    takeover_form = gm_page.locator("#llevar-personaje")
    expect(_field(takeover_form, "Personaje")).to_have_value(str(world.tomas.pk))
    expect(_field(takeover_form, "Quién lo lleva")).to_have_value(str(world.gm.pk))
    _field(takeover_form, "Motivo").fill("Bruno está de viaje")
    _fits(gm_page)
    takeover_form.get_by_role("button", name="Llevar su personaje").click()
    expect(_message(gm_page)).to_have_text("La Directora lleva ahora a Tomás Ferrer; su dueño ha sido avisado.")
    panel = gm_page.locator("section", has=gm_page.get_by_role("heading", name="Personajes de jugadores ausentes"))
    expect(panel).to_contain_text("La Directora (dirección) lleva a Tomás Ferrer, de Bruno, desde el")
    takeover = Takeover.objects.get(character=world.tomas)
    assert (takeover.taken_by, takeover.owner, takeover.ended_at) == (world.gm, world.bruno, None)
    assert ModerationLog.objects.filter(action=ModerationAction.TAKEOVER_STARTED, target_user=world.bruno).exists()

    # --- The GM asks Tomás for a roll with a deadline. -----------------------------------
    gm_page.goto(reverse("table:request-create", args=[campaign.slug, scene.pk]))
    request_form = gm_page.locator("form", has=gm_page.get_by_role("button", name="Pedir la tirada"))
    _field(request_form, "Personaje").select_option(label="Tomás Ferrer")
    _field(request_form, "Característica").select_option("reflejos")
    _field(request_form, "Habilidad").fill("Sigilo")
    _field(request_form, "Para qué").fill(PURPOSE)
    due = timezone.localtime(timezone.now() + timedelta(days=2), deadlines.campaign_zone(campaign))
    _field(request_form, "Plazo").fill(due.strftime("%Y-%m-%dT20:00"))
    _field(request_form, "Recordatorio").select_option(label="12 horas antes")
    _fits(gm_page)
    request_form.get_by_role("button", name="Pedir la tirada").click()
    expect(_message(gm_page)).to_have_text("Tirada pedida a Tomás Ferrer: se le ha avisado.")
    asked = RollRequest.objects.get(scene=scene, character=world.tomas, purpose=PURPOSE)
    deadline = Deadline.objects.get(kind="request", target_id=asked.pk)
    assert timezone.localtime(deadline.due_at, deadlines.campaign_zone(campaign)).strftime("%Y-%m-%d %H:%M") == (
        due.strftime("%Y-%m-%d 20:00")
    )
    assert deadline.remind_before == timedelta(hours=12)
    # The scene's status, loaded by htmx, says Tomás's roll is awaited, with its deadline.
    status = gm_page.locator("#estado-escena")
    expect(status.locator(f"#esperando-{scene.pk}-{world.bruno.pk}")).to_contain_text(
        f"Tirada de Tomás Ferrer pedida por la dirección: {PURPOSE}"
    )
    expect(status.locator(f"#esperando-{scene.pk}-{world.bruno.pk}")).to_contain_text("Plazo:")
    expect(status.locator(f"#esperando-{scene.pk}-{world.bruno.pk}")).to_contain_text("ausente hasta el")

    # --- Time travel: the deadline passes unanswered and the clock runs. ------------------
    # Nobody waits two days in a test: the deadline is moved an hour into the
    # past in the database, and the clock's round (``deadlines.sweep``, run
    # every five minutes by the task worker) notices it and tells the direction.
    Deadline.objects.filter(pk=deadline.pk).update(due_at=timezone.now() - timedelta(hours=1))
    deadlines.sweep()
    notice = Notification.objects.get(user=world.gm, kind=Notification.Kind.DEADLINE)
    assert "Decide qué hacer." in notice.text

    # --- The GM gets the notice and settles the deadline: «Cerrar sin respuesta». ----------
    gm_page.goto(reverse("campaigns:notifications"))
    gm_page.get_by_role("link", name=re.compile(r"^Ha vencido el plazo de .*«El vestíbulo» \(La mansión\)")).click()
    expect(gm_page).to_have_url(
        re.compile(re.escape(reverse("campaigns:deadline-settle", args=[campaign.slug, deadline.pk])))
    )
    expect(gm_page.get_by_role("heading", name="Plazo vencido", level=1)).to_be_visible()
    settle = gm_page.locator(f"#resolver-plazo-{deadline.pk}")
    _fits(gm_page)
    # What the rules allow for a request: closing it unanswered; never an answer made up.
    expect(settle.get_by_role("radio")).to_have_count(3)
    expect(settle).to_contain_text("venció hace 1 hora")
    settle.get_by_label("Cerrar sin respuesta").check()
    settle.get_by_role("button", name="Hecho").click()
    expect(_message(gm_page)).to_have_text("Plazo resuelto.")
    expect(gm_page.get_by_role("heading", name="Panel de dirección", level=1)).to_be_visible()
    deadline.refresh_from_db()
    asked.refresh_from_db()
    assert deadline.settled_at is not None and deadline.settled_by == world.gm
    assert not asked.is_open
    expect(gm_page.get_by_text("Vencidos, por resolver")).to_have_count(0)

    # --- The GM writes in the scene as Tomás, on Bruno's behalf. --------------------------
    gm_page.goto(scene.get_absolute_url())
    write = gm_page.get_by_role("region", name="Escribir un mensaje")
    _field(write, "Escribir como").select_option(label="Personaje: Tomás Ferrer (en nombre de Bruno)")
    _field(write, "Mensaje").fill(ON_BEHALF)
    write.get_by_role("button", name="Publicar").click()
    expect(_message(gm_page)).to_have_text("Mensaje publicado.")
    post = Post.objects.get(scene=scene, body=ON_BEHALF)
    assert (post.author, post.character, post.on_behalf_of) == (world.gm, world.tomas, world.bruno)
    shown = gm_page.locator(f"#mensaje-{post.pk}")
    expect(shown).to_contain_text("Escrito por La Directora (dirección) en nombre de Bruno")
    expect(shown).to_contain_text("Tomás Ferrer")
    _fits(gm_page)

    # --- Bruno, about to come back, takes Tomás back: «Recuperar mi personaje». ------------
    # The owner may take the character back at any time, away or not; his
    # return would end the takeover as well (``table.takeover.returned_lines``).
    page.goto(campaign.get_absolute_url())
    carried = page.locator("section", has=page.get_by_role("heading", name="Personajes llevados"))
    expect(carried).to_contain_text("La Directora lleva a tu personaje Tomás Ferrer desde el")
    _fits(page)
    carried.get_by_role("button", name="Recuperar mi personaje").click()
    expect(_message(page)).to_have_text("Tomás Ferrer vuelve a ser tuyo.")
    expect(page.get_by_role("button", name="Recuperar mi personaje")).to_have_count(0)
    takeover.refresh_from_db()
    assert takeover.ended_by == world.bruno and takeover.ended_at is not None
    assert ModerationLog.objects.filter(action=ModerationAction.TAKEOVER_ENDED, actor=world.bruno).exists()

    # --- Bruno comes back: «Ya he vuelto», swapped in place. ------------------------------
    page.goto(reverse("campaigns:absences", args=[campaign.slug]))
    page.evaluate(MARK)
    page.locator(f"#ausencia-{absence.pk}").get_by_role("button", name="Ya he vuelto").click()
    expect(page.get_by_role("button", name="Ya he vuelto")).to_have_count(0)
    _not_reloaded(page)
    absence.refresh_from_db()
    assert absence.returned_at is not None and absence.ends_on == today

    # --- He reads what was done in his name. ---------------------------------------------
    page.goto(reverse("campaigns:notifications"))
    welcome = page.locator("#notification-list li", has_text="Bienvenido de vuelta a «La mansión»")
    expect(welcome).to_have_count(1)
    expect(welcome).to_contain_text("avisos mientras estabas fuera. En tu nombre:")
    expect(welcome).to_contain_text("La Directora (dirección) llevó a Tomás Ferrer del")
    expect(welcome).to_contain_text(f"«El vestíbulo»: La Directora escribió como Tomás Ferrer (mensaje #{post.pk})")
    # The notices held while he was away are in his list too.
    expect(page.get_by_text("Mientras estás fuera, La Directora lleva a Tomás Ferrer (La mansión).")).to_be_visible()
    _fits(page)

    # He writes as Tomás again, in his own name.
    page.goto(scene.get_absolute_url())
    own = _field(page.get_by_role("region", name="Escribir un mensaje"), "Escribir como")
    expect(own.locator("option", has_text="Personaje: Tomás Ferrer")).to_have_count(1)
    expect(own.locator("option", has_text="en nombre de")).to_have_count(0)

    # The GM is told, and may no longer write as Tomás.
    gm_page.goto(reverse("campaigns:notifications"))
    expect(gm_page.get_by_text("Ya no llevas a Tomás Ferrer: Bruno lo ha devuelto.")).to_be_visible()
    gm_page.goto(scene.get_absolute_url())
    voices = _field(gm_page.get_by_role("region", name="Escribir un mensaje"), "Escribir como")
    expect(voices.locator("option", has_text="Tomás Ferrer")).to_have_count(0)


def test_the_welcome_back_notice_fits_a_phone(page: Page, live_server, world: World):
    from campaigns.permissions import campaign_access
    from table import services as table_services
    from tests.table.test_takeover import away, start

    # The journey's end, made through the services: Tomás carried, a post in
    # Bruno's name, Bruno back.
    absence = away(world, world.bruno)
    takeover = start(world)
    table_services.post_with_rolls_create(
        access=campaign_access(world.gm, world.campaign),
        scene=world.scene,
        voice=Post.Voice.CHARACTER,
        body=ON_BEHALF,
        character=world.tomas,
        takeover_id=takeover.pk,
    )
    absences.absence_return(absence=absence)
    page.set_viewport_size(PHONE)
    log_in(page.context, world.bruno, live_server.url)
    page.goto(reverse("campaigns:notifications"))
    expect(page.get_by_text("La Directora escribió como Tomás Ferrer")).to_be_visible()
    _fits(page)
