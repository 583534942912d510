"""Issue 15, "Done when", in a real Chromium at 360 px: the Vaesen demo's story
played as a player and as the GM (demo/vaesen.py, «Los ahogados de Svartsjön»).

Bruno (Axel Lindqvist) logs in on a phone, opens the campaign and the pier
scene, writes a post with a Físico + Fuerza test (he sees the dice and the
exact chance before publishing, V1–V3), reads the card (the dice, each 6 a
success, the verdict in words) and, when it fails, pushes it choosing a
physical condition (V6, V7): the card shows original → forzada and his sheet
the condition ticked. Rolls are random: he posts again until a test fails,
a bounded number of times (three successes of six dice or fewer are needed,
about one test in sixteen succeeds). He answers the fear test the demo left
open for Axel (V26) and, on Axel's turn, attacks Olof in the combat (V18).

The GM, on a phone too, passes the combat's turns until it is Axel's, answers
the attack for Olof (a reaction, V21) and passes the turn, prepares an opposed
test (V14) and ticks a condition on the creature's sheet.

Each person browses in a context of their own, watched like the ``page``
fixture's: a console error, an uncaught exception or a CSP violation fails
the test (tests/browser/conftest.py).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from django.urls import reverse
from playwright.sync_api import Browser, Locator, Page, expect

from campaigns.models import Campaign
from demo import vaesen as story
from demo.campaign import DEMO_PASSWORD, demo_load
from rules import vaesen as rules
from sheets.models import Character
from systems.vaesen.combat import services as combat_services
from systems.vaesen.models import VaesenAction, VaesenCombat, VaesenSheet
from systems.vaesen.rolls import services as roll_services
from table.models import TableRoll
from tests.browser.conftest import BrowserProblems, horizontal_overflow, watched_page

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PHONE = {"width": 360, "height": 740}
# Físico + Fuerza needing three successes: six dice or fewer (a condition
# takes one off) succeed about once in sixteen tests, so six tries all
# succeeding happen about once in twenty million runs.
NEEDED = 3
POST_TRIES = 6
TURN_TRIES = 4  # at most one whole round of three combatants to reach Axel


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
    demo_load(aventuras=False)
    return Campaign.objects.get(slug=story.VAESEN_CAMPAIGN_SLUG)


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


def _percent(value) -> str:
    # floatformat:1 in Spanish.
    return f"{float(value * 100):.1f}".replace(".", ",")


def _sheet(name: str) -> Character:
    return Character.objects.select_related("vaesen", "owner").get(campaign__slug=story.VAESEN_CAMPAIGN_SLUG, name=name)


def _tool(page: Page, name: str) -> None:
    """Open one of the scene's Vaesen tools from the phone's «Herramientas» menu."""
    menu = page.locator("details.scene-tools-menu")
    menu.locator("summary").click()
    menu.get_by_role("link", name=name, exact=True).click()


def _acting(fight: VaesenCombat) -> str:
    fight.refresh_from_db()
    return combat_services.current(fight, list(fight.combatants.select_related("character"))).character.name


def test_the_vaesen_demo_played_on_a_phone_by_a_player_and_the_gm(page: Page, gm_page: Page, demo: Campaign):
    page.set_viewport_size(PHONE)
    axel, olof = _sheet(story.AXEL), _sheet(story.OLOF)
    pier = demo.scenes.get(title=story.PIER_SCENE)
    fight = VaesenCombat.objects.get(scene=pier, ended_at__isnull=True)

    # --- Bruno logs in and opens the campaign and the pier scene. ------------------------
    _log_in(page, "bruno", "/")
    page.get_by_role("region", name="Tus partidas").get_by_role("link", name=story.VAESEN_TITLE).click()
    expect(page.get_by_role("heading", name=story.VAESEN_TITLE, level=1)).to_be_visible()
    page.get_by_role("link", name=story.PIER_SCENE).first.click()
    expect(page.get_by_role("heading", name=story.PIER_SCENE, level=1)).to_be_visible()
    expect(page.get_by_text("Bruno: Axel tiene pendiente la prueba de Miedo")).to_be_visible()
    _fits(page)

    # --- He writes a post with a test, seeing the dice and the chance first (V1–V3). -------
    setup = roll_services.pool_setup(axel, attribute="físico", skill="Fuerza", needed=NEEDED)
    failed = None
    for tried in range(1, POST_TRIES + 1):
        form = page.get_by_role("region", name="Escribir un mensaje")
        _field(form, "Escribir como").select_option(label=f"Personaje: {story.AXEL}")
        _field(form, "Mensaje").fill(f"Axel agarra el bichero de Olof e intenta arrancárselo de las manos ({tried}).")
        form.locator("summary", has_text="Añadir tirada 1").click()
        row = form.locator("#fila-tirada-0")
        _field(row, "Atributo").select_option("físico")
        _field(row, "Habilidad").select_option("Fuerza")
        _field(row, "Éxitos necesarios").fill(str(NEEDED))
        _field(row, "Para qué").fill("Arrancarle el bichero a Olof")
        _field(row, "Para qué").blur()
        preview = row.locator("#probabilidad-0")
        expect(preview).to_contain_text(f"Probabilidad de éxito: {_percent(setup.chance)} %")
        expect(preview).to_contain_text(f"{setup.pool} dados, hacen falta {NEEDED} éxitos")
        expect(preview).to_contain_text("Forzando tras un fallo:")
        _fits(page)
        form.get_by_role("button", name="Publicar").click()
        expect(page.locator(".messages").get_by_role("status")).to_have_text("Mensaje publicado.")

        table_roll = TableRoll.objects.select_related("first").filter(campaign=demo, character=axel).latest("id")
        assert table_roll.first.entry["client_seed_source"] == "browser"
        dice = table_roll.first.entry["dice"]
        sixes = dice.count(6)
        card = page.locator(f"#tirada-{table_roll.pk}")
        expect(card).to_contain_text("Arrancarle el bichero a Olof")
        expect(card.locator(".roll-die-value")).to_have_text([str(d) for d in dice])
        # Each 6, and only a 6, is marked as a success.
        expect(card.locator(".roll-die-kept .roll-die-counts")).to_have_text(["éxito"] * sixes)
        expect(card.locator(".roll-pool")).to_contain_text(f"{setup.pool} dados: Físico 4, Fuerza +2")
        successes = f"{sixes} éxito" if sixes == 1 else f"{sixes} éxitos"
        expect(card.locator(".roll-total")).to_contain_text(f"{successes} (hacen falta {NEEDED})")
        if sixes >= NEEDED:
            expect(card.locator(".roll-outcome")).to_contain_text("Éxito")
            expect(card.get_by_role("button", name="Forzar la tirada")).to_have_count(0)
            continue
        short = NEEDED - sixes
        expect(card.locator(".roll-outcome")).to_contain_text(
            "Fallo " + (f"Falta {short} éxito." if short == 1 else f"Faltan {short} éxitos.")
        )
        failed = table_roll
        break
    assert failed is not None, f"{POST_TRIES} tests in a row needing {NEEDED} successes all succeeded"

    # --- He pushes it, choosing a physical condition (V6, V7). -----------------------------
    free = roll_services.free_conditions(axel.vaesen.conditions(), rules.ConditionKind.PHYSICAL)
    chosen = free[-1]
    card = page.locator(f"#tirada-{failed.pk}")
    push = card.locator("form.roll-push-form")
    expect(push.get_by_role("group")).to_contain_text("Forzar la tirada cuesta un estado físico")
    expect(push.get_by_role("radio")).to_have_count(len(free))
    push.get_by_role("radio", name=chosen).check()
    push.get_by_role("button", name="Forzar la tirada").click()
    chain = card.locator(".roll-chain-version")
    expect(chain).to_have_count(2)
    failed.refresh_from_db()
    pushed = failed.latest
    assert pushed.parent_id == failed.first_id
    assert pushed.entry["game"]["condition"] == chosen
    first_dice = failed.first.entry["dice"]
    expect(chain.nth(0)).to_contain_text(f"original: [{', '.join(map(str, first_dice))}]")
    expect(chain.nth(1)).to_contain_text("forzada: repite los dados")
    expect(chain.nth(1)).to_contain_text(f"(cuesta «{chosen}»)")
    expect(chain.nth(1)).to_contain_text(f"[{', '.join(map(str, pushed.entry['dice']))}]")
    expect(card.locator(".roll-outcome")).to_contain_text("Forzada")
    expect(card.get_by_role("button", name="Forzar la tirada")).to_have_count(0)
    # The 6s stay: only the other dice were rolled again.
    assert all(again == 6 for before, again in zip(first_dice, pushed.entry["dice"], strict=True) if before == 6)

    # The condition is ticked on his sheet.
    page.goto(axel.get_absolute_url())
    expect(page.get_by_role("heading", name=story.AXEL, level=1)).to_be_visible()
    ticked = page.locator(".sheet-conditions[data-kind='físico'] .sheet-condition.is-ticked")
    expect(ticked.filter(has_text=chosen)).to_have_count(1)
    # Only the GM marks conditions by hand: the player reads «(marcado)».
    states = page.get_by_role("region", name="Estados").get_by_role("listitem").filter(has_text=chosen)
    expect(states).to_contain_text(f"{chosen} (marcado)")
    _fits(page)

    # --- He answers the fear test the demo left open for Axel (V26). -----------------------
    page.goto(pier.get_absolute_url())
    _tool(page, "Miedo")
    expect(page.get_by_role("heading", name="Pruebas de Miedo", level=1)).to_be_visible()
    test = page.locator("article[id^='miedo-']", has_text=story.CREATURE)
    answer = test.locator("li", has_text=story.AXEL)
    expect(answer.get_by_role("radio")).to_have_count(2)
    expect(answer).to_contain_text("probabilidad")
    answer.get_by_role("radio", name=re.compile(r"^Empatía")).check()
    answer.get_by_role("button", name="Tirar la prueba de Miedo").click()
    expect(page.locator(".messages").get_by_role("status")).to_have_text("Prueba de Miedo tirada.")
    fear_roll = TableRoll.objects.filter(campaign=demo, character=axel).latest("id")
    assert fear_roll.first.entry["game"]["test"] == "fear"
    fear_card = page.locator(f"#miedo-tirada-{fear_roll.pk} #tirada-{fear_roll.pk}")
    expect(fear_card).to_contain_text(f"Prueba de Miedo de {story.AXEL}: {story.CREATURE}")
    expect(fear_card).to_contain_text("Empatía contra el Miedo")
    expect(fear_card.locator(".roll-outcome")).to_contain_text(
        "Supera el miedo." if fear_roll.first.entry["game"]["success"] else "Fallo"
    )
    # Everyone has answered: the test is no longer open.
    expect(page.get_by_text("No hay pruebas de Miedo abiertas en esta escena.")).to_be_visible()
    _fits(page)

    # --- The GM passes the combat's turns until it is Axel's. ------------------------------
    combat_url = reverse("vaesen:combat", args=[demo.slug, pier.pk])
    _log_in(gm_page, "directora", combat_url)
    expect(gm_page.get_by_role("heading", name="Combate", level=1)).to_be_visible()
    tracker = gm_page.locator("#combat-tracker")
    for _ in range(TURN_TRIES):
        acting = _acting(fight)
        expect(tracker.locator(".badge", has_text="Turno de")).to_have_text(f"Turno de {acting}")
        if acting == story.AXEL:
            break
        tracker.get_by_role("button", name="Siguiente turno").click()
        expect(tracker.locator(".badge", has_text="Turno de")).not_to_have_text(f"Turno de {acting}")
    assert _acting(fight) == story.AXEL
    _fits(gm_page)

    # --- On Axel's turn, Bruno attacks Olof with his sabre (V18). --------------------------
    page.goto(combat_url)
    expect(page.locator("#combat-tracker .badge", has_text="Turno de")).to_have_text(f"Turno de {story.AXEL}")
    declare = page.locator("#combat-declare")
    expect(_field(declare, "Quién actúa")).to_have_value(str(fight.combatants.get(character=axel).pk))
    _field(declare, "Acción").select_option(label="Ataque")
    _field(declare, "Contra").select_option(label=story.OLOF)
    sabre = axel.vaesen.weapons.get(name="Sable de caballería")
    _field(declare, "Arma").select_option(f"w{sabre.pk}")
    declare.get_by_role("button", name="Declarar la acción").click()
    attack_heading = f"Ataque de {story.AXEL} → {story.OLOF}"
    mine = page.locator("#combat-actions article", has_text=attack_heading).first
    expect(mine).to_contain_text("Esperando la reacción")
    action = VaesenAction.objects.filter(combat=fight).latest("id")
    assert (action.actor.character_id, action.target.character_id, action.weapon) == (axel.pk, olof.pk, sabre.name)
    expect(mine).to_contain_text(f"Combate cuerpo a cuerpo · {sabre.name} · daño {sabre.damage}")
    _fits(page)

    # --- The GM answers for Olof, and the attack is settled (V21). ------------------------
    gm_page.reload()
    gm_action = gm_page.locator(f"#accion-{action.pk}")
    expect(gm_action).to_contain_text("Esperando la reacción")
    gm_action.get_by_role("button", name="Sin reacción").click()
    gm_action = gm_page.locator(f"#accion-{action.pk}")
    expect(gm_action.locator(".combat-outcome")).to_contain_text(re.compile(r"Lo consigue|No lo consigue"))
    action.refresh_from_db()
    assert not action.pending
    expect(gm_action.locator(f"#tirada-{action.roll_id}")).to_be_visible()
    olof.vaesen.refresh_from_db()
    if action.succeeded:
        expect(gm_page.locator(f"#combatant-{action.target_id}")).to_contain_text(
            f"Resistencia {olof.vaesen.resistance_left}/{olof.vaesen.resistance}"
        )
    # Then the next turn.
    tracker.get_by_role("button", name="Siguiente turno").click()
    expect(tracker.locator(".badge", has_text="Turno de")).not_to_have_text(f"Turno de {story.AXEL}")
    expect(tracker.locator(".badge", has_text="Turno de")).to_have_text(f"Turno de {_acting(fight)}")

    # --- The GM prepares an opposed test (V14). ------------------------------------------
    gm_page.goto(pier.get_absolute_url())
    _tool(gm_page, "Enfrentadas")
    expect(gm_page.get_by_role("heading", name="Tiradas enfrentadas", level=1)).to_be_visible()
    opposed = gm_page.locator("#opposed-board form").first
    _field(opposed, "Qué se disputan").fill("Olof y Axel forcejean por el bichero")
    gm_page.locator("#id_character_1").select_option(label=story.OLOF)
    gm_page.locator("#id_attribute_1").select_option("físico")
    gm_page.locator("#id_skill_1").select_option("Fuerza")
    gm_page.locator("#id_character_2").select_option(label=story.AXEL)
    gm_page.locator("#id_attribute_2").select_option("físico")
    gm_page.locator("#id_skill_2").select_option("Fuerza")
    opposed.get_by_role("button", name="Preparar").click()
    expect(gm_page.get_by_text("Tirada enfrentada preparada: cada bando tira desde la escena.")).to_be_visible()
    item = gm_page.locator("article[id^='enfrentada-']", has_text="Olof y Axel forcejean por el bichero")
    expect(item.locator("li")).to_have_count(2)
    expect(item).to_contain_text(story.OLOF)
    expect(item).to_contain_text(story.AXEL)
    _fits(gm_page)

    # --- The GM ticks a condition on the creature's sheet. ------------------------------
    creature = _sheet(story.CREATURE)
    gm_page.goto(creature.get_absolute_url())
    expect(gm_page.get_by_role("heading", name=story.CREATURE, level=1)).to_be_visible()
    mental = gm_page.locator(".sheet-conditions[data-kind='mental']")
    mental.get_by_role("button", name="Asustado", exact=True).click()
    expect(mental.get_by_role("button", name="Asustado", exact=True)).to_have_attribute("aria-pressed", "true")
    expect(mental.locator(".sheet-condition.is-ticked")).to_have_text([re.compile("Asustado")])
    assert "Asustado" in VaesenSheet.objects.get(character=creature).conditions().mental
    _fits(gm_page)
