"""Issue 16, "Done when", in a real Chromium at 360 px: the Hora de Aventuras
demo's story played onward as a player and as the GM (demo/aventuras.py,
«El castillo de regaliz»).

Ana (Chispa, la tostada ninja) logs in on a phone, opens the campaign and the
castle scene, and writes a post with an Espabilado roll against difficulty 2
with her «Gorro pensador» (+1 die, A29): before publishing she sees the dice
and the exact chance, with and without converting chachis (A2, A5, A8). Dice
are real, so she acts on what the card shows: she converts every 6 into a 5
and a new die while 6s come (A5), or, when none came, spends a hero point to
re-roll the dice that failed (A22); then «¡Ya está!» closes the roll (A6,
A11). Each step swaps the card in place (htmx), without reloading the page.
Then she answers the Barón's gumdrop that the demo left waiting for her
reaction (A14): she reacts with Espabilado, closes her reaction roll and reads
the outcome (A15–A17).

The GM, on a phone too, accepts Chispa's claim of a hero point for facing her
flaw from the scene's bar (A25: the point lands on the sheet), asks Grumo for
a Cachas roll against difficulty 1 (a request names the attribute and the
difficulty, A1, A8), and sets up a competition in the scene (A13) — Grumo's
Cachas against the Barón's — and rolls the Barón's side.

Each person browses in a context of their own, watched like the ``page``
fixture's: a console error, an uncaught exception or a CSP violation fails
the test (tests/browser/conftest.py).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from django.template.defaultfilters import floatformat
from django.urls import reverse
from django.utils import translation
from playwright.sync_api import Browser, Locator, Page, expect

from campaigns.models import Campaign
from demo import aventuras as story
from demo.campaign import DEMO_PASSWORD, demo_load
from rules.aventuras import HeroSpend
from sheets.models import Character
from systems.aventuras.models import AventurasContest, AventurasReaction, AventurasTool, HeroMove, HeroRequest
from systems.aventuras.rolls import services as roll_services
from table.models import RollRequest, TableRoll
from tests.browser.conftest import BrowserProblems, horizontal_overflow, watched_page

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PHONE = {"width": 360, "height": 740}
DIFFICULTY = 2  # «dificililla» (A10)
# A5 — each 6 converted adds a die, which can be a 6 again: a chain this long
# (each link one chance in six) never comes in practice.
MAX_CONVERSIONS = 12
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
def demo(live_server) -> Campaign:
    demo_load()
    return Campaign.objects.get(slug=story.AVENTURAS_CAMPAIGN_SLUG)


def _field(scope: Page | Locator, label: str) -> Locator:
    # The label's whole text, give or take the asterisk crispy-forms adds to required fields.
    return scope.get_by_label(re.compile(rf"^\s*{re.escape(label)}\*?\s*$"))


def _log_in(page: Page, username: str, then: str) -> None:
    """Log in through the form; on a phone the menu with the user's name is
    folded, so the page reached is what shows it worked."""
    page.goto(f"/cuenta/entrar/?next={then}")
    _field(page, "Nombre de usuario").fill(username)
    _field(page, "Contraseña").fill(DEMO_PASSWORD)
    page.get_by_role("button", name="Entrar").click()
    expect(page).to_have_url(re.compile(rf"{re.escape(then)}$"))


def _fits(page: Page) -> None:
    overflow = horizontal_overflow(page)
    assert overflow["page"] <= overflow["viewport"], overflow


def _percent(value: float) -> str:
    # As the template prints it: floatformat:1, in Spanish.
    with translation.override("es"):
        return floatformat(value, 1)


def _sheet(name: str) -> Character:
    return Character.objects.select_related("aventuras", "owner").get(
        campaign__slug=story.AVENTURAS_CAMPAIGN_SLUG, name=name
    )


def _not_reloaded(page: Page) -> None:
    assert page.evaluate(MARKED), "the page was reloaded: the step should have swapped its part in place (htmx)"


def test_the_aventuras_demo_played_on_a_phone_by_a_player_and_the_gm(page: Page, gm_page: Page, demo: Campaign):
    page.set_viewport_size(PHONE)
    chispa, grumo, baron = _sheet(story.CHISPA), _sheet(story.GRUMO), _sheet(story.BARON)
    castle = demo.scenes.get(title=story.CASTLE_SCENE)
    cap = AventurasTool.objects.get(sheet_id=chispa.pk, name=story.THINKING_CAP)

    # --- Ana logs in and opens the campaign and the castle scene. ------------------------
    _log_in(page, "ana", "/")
    page.get_by_role("region", name="Tus partidas").get_by_role("link", name=story.AVENTURAS_TITLE).click()
    expect(page.get_by_role("heading", name=story.AVENTURAS_TITLE, level=1)).to_be_visible()
    page.get_by_role("link", name=story.CASTLE_SCENE).first.click()
    expect(page).to_have_url(re.compile(re.escape(castle.get_absolute_url())))
    expect(page.get_by_role("heading", name=story.CASTLE_SCENE, level=1)).to_be_visible()
    expect(page.get_by_text("Ana: el Barón le ha lanzado a Chispa una gominola gigante")).to_be_visible()
    _fits(page)

    # --- She writes a post with a roll, seeing the dice and the exact chance first. -----
    # A2 highlighted Espabilado 5, A29 the cap's +1, A8 difficulty 2: the chance is rules.aventuras'.
    setup = roll_services.roll_setup(chispa, attribute="espabilado", difficulty=DIFFICULTY, tool_id=cap.pk)
    assert setup.dice == 6
    form = page.get_by_role("region", name="Escribir un mensaje")
    _field(form, "Escribir como").select_option(label=f"Personaje: {story.CHISPA}")
    _field(form, "Mensaje").fill("Chispa se cala el gorro pensador y busca la salida de la sala de las ollas.")
    form.locator("summary", has_text="Añadir tirada 1").click()
    row = form.locator("#fila-tirada-0")
    _field(row, "Atributo").select_option("espabilado")
    _field(row, "Dificultad").select_option(str(DIFFICULTY))
    _field(row, "Herramienta").select_option(str(cap.pk))
    _field(row, "Para qué").fill("Encontrar la salida entre las ollas")
    _field(row, "Para qué").blur()
    preview = row.locator("#probabilidad-0")
    expect(preview).to_contain_text(f"Probabilidad de éxito: {_percent(setup.chance * 100)} %")
    expect(preview).to_contain_text("6 dados")
    expect(preview).to_contain_text("dificultad 2 (dificililla)")
    expect(preview).to_contain_text(
        f"Convirtiendo cada 6 en un 5 y un dado más: {_percent(setup.chance_converting_percent)} %"
    )
    _fits(page)
    form.get_by_role("button", name="Publicar").click()
    expect(page.locator(".messages").get_by_role("status")).to_have_text("Mensaje publicado.")

    table_roll = TableRoll.objects.select_related("first").filter(campaign=demo, character=chispa).latest("id")
    assert table_roll.first.entry["client_seed_source"] == "browser"
    values = list(table_roll.facts["values"])
    card = page.locator(f"#tirada-{table_roll.pk}")
    expect(card).to_contain_text("Encontrar la salida entre las ollas")
    expect(card.locator(".roll-die-value")).to_have_text([str(v) for v in values])
    expect(card.locator(".roll-pool")).to_contain_text(f"Espabilado (destacado) 5, {story.THINKING_CAP} +1.")
    expect(card.locator(".roll-difficulty")).to_contain_text("Dificultad 2 (dificililla)")
    _fits(page)
    page.evaluate(MARK)

    # Irreversible steps ask first (hx-confirm, a Spanish question): she says yes.
    asked: list[str] = []

    def _accept(dialog) -> None:
        asked.append(dialog.message)
        dialog.accept()

    page.on("dialog", _accept)

    # --- What the dice gave: convert each chachi (A5), or re-roll with a hero point (A22). --
    if roll_services.open_chachis(table_roll.facts):
        conversions = 0
        while roll_services.open_chachis(table_roll.facts) and conversions < MAX_CONVERSIONS:
            position = roll_services.open_chachis(table_roll.facts)[0] + 1
            card.get_by_role("button", name=f"Convertir este 6 (dado {position})").click()
            conversions += 1
            expect(card.locator(".roll-chain-version")).to_have_count(conversions + 1)
            assert asked[-1].startswith(f"¿Convertir el 6 del dado {position} en un 5")
            expect(card.locator(".roll-chain-version").last).to_contain_text(
                f"convierte el 6 del dado {position} en un 5 y añade un dado"
            )
            table_roll.refresh_from_db()
            expect(card.locator(".roll-die-value")).to_have_text([str(v) for v in table_roll.facts["values"]])
        assert not roll_services.open_chachis(table_roll.facts), f"{MAX_CONVERSIONS} 6s in a row"
        # The converted 6s read 5, marked; an extended roll cannot be re-rolled (A22).
        expect(card.locator(".roll-die-converted")).to_have_count(conversions)
        expect(card.get_by_role("button", name="Repetir dados con un punto de Héroe")).to_have_count(0)
    else:
        points = chispa.aventuras.hero_points
        failed = [i + 1 for i, v in enumerate(values) if v < int(table_roll.facts["threshold"])] or [1]
        reroll = card.locator("form.roll-reroll-form")
        expect(reroll.get_by_role("group")).to_contain_text(f"(te quedan {points})")
        for position in failed:
            # Tap-sized buttons named as the card numbers its dice (A22).
            reroll.get_by_text(f"Dado {position}: {values[position - 1]}", exact=True).click()
            expect(reroll.locator(f"#repetir-{table_roll.pk}-{position}")).to_be_checked()
        reroll.get_by_role("button", name="Repetir dados con un punto de Héroe").click()
        chain = card.locator(".roll-chain-version")
        expect(chain).to_have_count(2)
        expect(chain.nth(1)).to_contain_text(f"punto de Héroe: repite los dados {', '.join(map(str, failed))}")
        table_roll.refresh_from_db()
        expect(card.locator(".roll-die-value")).to_have_text([str(v) for v in table_roll.facts["values"]])
        # The dice not chosen stay as they were.
        kept = [v for i, v in enumerate(values) if i + 1 not in failed]
        assert kept == [v for i, v in enumerate(table_roll.facts["values"]) if i + 1 not in failed]
        # A22 — paid with one point, through the ledger.
        chispa.aventuras.refresh_from_db()
        assert chispa.aventuras.hero_points == points - 1
        assert HeroMove.objects.filter(character=chispa, kind=HeroMove.Kind.SPEND, use=HeroSpend.REROLL).exists()
    _not_reloaded(page)

    # --- «¡Ya está!»: the result is final (A6, A11). ------------------------------------
    # A roll with nothing left to decide (no 6 to convert, no re-roll left)
    # closes by itself; otherwise she closes it.
    table_roll.refresh_from_db()
    if not roll_services.is_final(table_roll):
        card.get_by_role("button", name="¡Ya está!").click()
        expect(card.locator(".roll-final")).to_contain_text("Tirada cerrada")
        assert asked[-1].startswith("¿Cerrar la tirada?")
    expect(card.locator(".roll-final")).to_contain_text("Tirada cerrada")
    table_roll.refresh_from_db()
    assert roll_services.is_final(table_roll)
    succeeded = bool(table_roll.facts["succeeded"])
    expect(card.locator(".roll-outcome")).to_contain_text("¡Éxito!" if succeeded else "Fallo")
    expect(card.locator(".roll-final")).to_contain_text(
        "Quien tiró narra el éxito" if succeeded else "El director narra el fallo."
    )
    expect(card.get_by_role("button", name="¡Ya está!")).to_have_count(0)
    _not_reloaded(page)
    _fits(page)

    # --- She reacts to the Barón's gumdrop, from its card (A14). -------------------------
    reaction = AventurasReaction.objects.select_related("action").get(
        action__scene=castle, target=chispa, roll__isnull=True, declined_at__isnull=True
    )
    gumdrop = reaction.action
    page.goto(reverse("campaigns:post-permalink", args=[gumdrop.post_id]))
    row = page.locator(f"#reaccion-{reaction.pk}")
    expect(row).to_contain_text("esperando su reacción")
    page.evaluate(MARK)
    row.locator("summary", has_text="Reaccionar").click()
    _field(row, "Atributo").select_option("espabilado")
    row.get_by_role("button", name="Tirar la reacción").click()
    row = page.locator(f"#reaccion-{reaction.pk}")
    expect(row.locator(".badge").first).to_have_text("reacciona")
    reaction.refresh_from_db()
    assert reaction.roll_id is not None
    answer_roll = TableRoll.objects.get(pk=reaction.roll_id)
    assert answer_roll.kind == "reaction"
    answer = row.locator(f"#tirada-{answer_roll.pk}")
    # A2 — Espabilado is highlighted on her sheet: five dice.
    expect(answer.locator(".roll-die-value")).to_have_text([str(v) for v in answer_roll.facts["values"]])
    assert len(answer_roll.facts["values"]) == 5
    _not_reloaded(page)
    if not roll_services.is_final(answer_roll):
        answer.get_by_role("button", name="¡Ya está!").click()
        expect(page.locator(f"#tirada-{answer_roll.pk} .roll-final")).to_contain_text("Tirada cerrada")
        _not_reloaded(page)
    answer_roll.refresh_from_db()
    assert roll_services.is_final(answer_roll)
    # Both rolls final: the card compares them (A15–A17).
    page.reload()
    result = page.locator(f"#reaccion-{reaction.pk} .aventuras-reaction-result")
    expect(result).to_contain_text(re.compile(r"Bloqueada por completo\.|Le afecta\.|No le afecta\."))
    _fits(page)

    # --- The GM accepts Chispa's claim for facing her flaw, from the scene's bar (A25). ---
    claim = HeroRequest.objects.get(character=chispa, kind=HeroRequest.Kind.FLAW, status=HeroRequest.Status.PENDING)
    chispa.aventuras.refresh_from_db()
    points = chispa.aventuras.hero_points
    _log_in(gm_page, "directora", castle.get_absolute_url())
    expect(gm_page.get_by_role("heading", name=story.CASTLE_SCENE, level=1)).to_be_visible()
    _fits(gm_page)
    gm_page.evaluate(MARK)
    requests = gm_page.locator("details.aventuras-hero-requests")
    requests.locator("summary").click()
    pending = gm_page.locator(f"#peticion-heroe-{claim.pk}")
    expect(pending).to_contain_text(story.CHISPA)
    expect(pending).to_contain_text("decide la dirección")
    pending.get_by_role("button", name="Aceptar").click()
    expect(gm_page.locator(f"#peticion-heroe-{claim.pk}")).to_have_count(0)
    assert gm_page.evaluate(MARKED), "accepting a claim reloaded the page instead of swapping the bar"
    claim.refresh_from_db()
    assert claim.status == HeroRequest.Status.ACCEPTED
    chispa.aventuras.refresh_from_db()
    assert chispa.aventuras.hero_points == points + 1
    # Grumo's state por el morro is still Bruno's to accept (A27).
    assert HeroRequest.objects.filter(character=grumo, kind=HeroRequest.Kind.STATE, status="pending").exists()

    # --- The GM asks Grumo for a Cachas roll against difficulty 1 (A1, A8). --------------
    gm_page.get_by_role("link", name="Pedir una tirada").click()
    expect(gm_page.get_by_role("heading", name="Pedir una tirada", level=1)).to_be_visible()
    request_form = gm_page.locator("#peticion")
    _field(request_form, "Personaje").select_option(label=story.GRUMO)
    _field(request_form, "Atributo").select_option("cachas")
    _field(request_form, "Dificultad").select_option("1")
    _field(request_form, "Para qué").fill("Empujar la olla más grande")
    _fits(gm_page)
    request_form.get_by_role("button", name="Pedir la tirada").click()
    expect(gm_page.get_by_role("heading", name=story.CASTLE_SCENE, level=1)).to_be_visible()
    expect(gm_page.locator(".messages").get_by_role("status")).to_have_text(
        f"Tirada pedida a {story.GRUMO}: se le ha avisado."
    )
    asked = RollRequest.objects.get(scene=castle, character=grumo, purpose="Empujar la olla más grande")
    assert (asked.difficulty, asked.facts["attribute"]) == (1, "cachas")
    expect(gm_page.locator(f"#peticion-{asked.pk}")).to_contain_text(
        f"Empujar la olla más grande — {story.GRUMO}: Cachas, dificultad 1"
    )

    # --- The GM sets up a competition in the scene and rolls the Barón's side (A13). -----
    gm_page.evaluate(MARK)
    contests = gm_page.locator("#aventuras-contests")
    contests.locator("summary", has_text="Preparar una competición o una cooperación").click()
    _field(contests, "Tipo").select_option(label="Competición")
    _field(contests, "Qué se disputa o se hace").fill("Quién vacía antes la olla de gominolas")
    _field(contests, "Participante 1").select_option(label=story.GRUMO)
    contests.locator("#id_attribute_1").select_option("cachas")
    _field(contests, "Participante 2").select_option(label=story.BARON)
    contests.locator("#id_attribute_2").select_option("cachas")
    contests.get_by_role("button", name="Preparar").click()
    contest = gm_page.locator("#aventuras-contests article", has_text="Quién vacía antes la olla de gominolas")
    expect(contest).to_contain_text("esperando tiradas")
    made = AventurasContest.objects.get(scene=castle, title="Quién vacía antes la olla de gominolas")
    assert made.kind == AventurasContest.Kind.COMPETITION
    sides = {side.character_id: side for side in made.contestants.all()}
    assert set(sides) == {grumo.pk, baron.pk}
    the_baron = gm_page.locator(f"#participante-{sides[baron.pk].pk}")
    the_baron.get_by_role("button", name="Tirar Cachas").click()
    the_baron = gm_page.locator(f"#participante-{sides[baron.pk].pk}")
    # A2 — the Barón's Cachas 8 is highlighted: eight dice.
    expect(the_baron.locator(".roll-die-value")).to_have_count(8)
    side = sides[baron.pk]
    side.refresh_from_db()
    assert side.roll is not None
    expect(the_baron.locator(".roll-die-value")).to_have_text([str(v) for v in side.roll.facts["values"]])
    # Grumo's side waits for Bruno.
    expect(gm_page.locator(f"#participante-{sides[grumo.pk].pk}")).to_contain_text("Aún no ha tirado.")
    assert gm_page.evaluate(MARKED), "the competition reloaded the page instead of swapping its section"
    _fits(gm_page)
