"""Issue 7, item 12, in a real Chromium: playing HITOS at the table.

A player posts with a roll (the chance shows before publishing), activates an
aspect re-rolling two dice and sees the card and her drama points change in
place; the GM activates a situation aspect against the roll, the player
accepts and both balances move; the GM runs an attack against an NPC and
applies the damage. The player browses in the ``page`` fixture's context and
the GM in a second one, watched the same way: any console error, uncaught
exception or Content Security Policy violation fails the test
(tests/browser/conftest.py).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from django.urls import reverse
from playwright.sync_api import Browser, Locator, Page, expect

from accounts.models import User
from campaigns.models import Campaign
from sheets.models import Character
from systems.hitos.activations.services import SCENE_ASPECT, SHEET_ASPECT
from systems.hitos.campaign import gm_pool
from systems.hitos.checks.services import chance, check_setup
from systems.hitos.combat import services as combat_services
from systems.hitos.models import Activation, Attack, Combatant
from table.models import TableRoll
from tests.browser.conftest import BrowserProblems, watched_page
from tests.conftest import World, make_world

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PASSWORD = "clave-de-prueba-123"  # tests.factories.UserFactory
# An attack against a defenceless target (difficulty 5) with Reflejos 6 +
# Combate 4 misses only on a fumble, and a knife can still do no harm through
# armour: a few tries are plenty, and the test says so if they ever are not.
ATTACK_TRIES = 6


@pytest.fixture
def gm_page(browser: Browser, live_server, browser_problems: BrowserProblems) -> Iterator[Page]:
    """A second person's page, set up and watched like the ``page`` fixture's."""
    page = watched_page(browser, live_server.url, browser_problems)
    yield page
    # The conftest's hook settles the ``page`` fixture's page only.
    page.wait_for_load_state("load")
    page.evaluate("() => document.readyState")
    page.context.close()


def _field(scope: Page | Locator, label: str) -> Locator:
    # The label's whole text, give or take the asterisk crispy-forms adds to required fields.
    return scope.get_by_label(re.compile(rf"^\s*{re.escape(label)}\*?\s*$"))


def _log_in(page: Page, user: User, then: str) -> None:
    page.goto(f"/cuenta/entrar/?next={then}")
    _field(page, "Nombre de usuario").fill(user.username)
    _field(page, "Contraseña").fill(PASSWORD)
    page.get_by_role("button", name="Entrar").click()
    expect(page.get_by_role("banner").get_by_role("link", name=user.public_name)).to_be_visible()


def _mark_page(page: Page) -> None:
    # Survives htmx swaps, not a reload: proves a change happened in place.
    page.evaluate("() => { window.sinRecarga = true; }")


def _not_reloaded(page: Page) -> None:
    assert page.evaluate("() => window.sinRecarga") is True


def _points(n: int) -> str:
    return f"{n} punto dramático" if n == 1 else f"{n} puntos dramáticos"


def _pool(n: int) -> str:
    return f"Reserva de la dirección: {n} punto" + ("" if n == 1 else "s")


def _percent(value) -> str:
    # floatformat:1 in Spanish.
    return f"{float(value * 100):.1f}".replace(".", ",")


@pytest.fixture
def play(live_server) -> World:
    return make_world()


def test_a_roll_an_aspect_reroll_a_negative_activation_and_an_attack_at_the_table(
    page: Page, gm_page: Page, play: World
):
    scene_url = reverse("table:scene-detail", args=[play.campaign.slug, play.scene.pk])
    ines = play.ines

    # --- The player writes a post with a roll, seeing the chance first. -------------
    _log_in(page, play.ana, scene_url)
    expect(page.locator(f"#puntos-ch{ines.pk}")).to_have_text(f"Inés Salcedo: {_points(3)}")
    form = page.get_by_role("region", name="Escribir un mensaje")
    _field(form, "Escribir como").select_option(label="Personaje: Inés Salcedo")
    _field(form, "Mensaje").fill("Me pego a la pared y avanzo sin hacer ruido.")
    form.locator("summary", has_text="Añadir tirada 1").click()
    row = form.locator("#fila-tirada-0")
    _field(row, "Característica").select_option("reflejos")
    _field(row, "Habilidad").select_option("Sigilo")
    _field(row, "Para qué").fill("Cruzar el vestíbulo sin que me oigan")
    expected = chance(check_setup(ines, characteristic="reflejos", skill="Sigilo"), 15, play.campaign)
    preview = row.locator("#probabilidad-0")
    expect(preview).to_contain_text(f"Probabilidad de éxito: {_percent(expected)} %")
    expect(preview).to_contain_text("modificador +9 contra dificultad 15")
    # client-seed.js filled the row's seed with 16 random bytes.
    expect(row.locator("input[name='tirada-0-client_seed']")).to_have_value(re.compile(r"^[0-9a-f]{32}$"))
    form.get_by_role("button", name="Publicar").click()
    expect(page.locator(".messages").get_by_role("status")).to_have_text("Mensaje publicado.")

    table_roll = TableRoll.objects.select_related("first", "post").get(campaign=play.campaign, owner=play.ana)
    assert table_roll.character_id == ines.pk
    assert table_roll.first.entry["client_seed_source"] == "browser"
    card = page.locator(f"#tirada-{table_roll.pk}")
    expect(card).to_contain_text("Cruzar el vestíbulo sin que me oigan")
    expect(card).to_contain_text("Reflejos +6, Sigilo +3")
    expect(card.locator(".roll-die")).to_have_count(3)
    first_dice = table_roll.first.entry["dice"]
    expect(card.locator(".roll-die-value")).to_have_text([str(d) for d in first_dice])
    expect(card.locator(".roll-chain")).to_have_count(0)
    # The card explains itself: which die counts, and a legend one tap away.
    expect(card.locator(".roll-die-kept .roll-die-counts")).to_have_text(["cuenta"])
    expect(card.locator(".roll-reading")).to_have_text("Cuenta el dado central (C), el del medio de los tres.")
    legend = card.locator("details.roll-legend")
    legend.locator("summary").click()
    expect(legend).to_contain_text("el del medio C (central)")

    # --- She activates her own aspect, re-rolling the first two dice with a point. --
    # Nobody activates an aspect against their own roll.
    expect(card.get_by_role("link", name="Activar en contra")).to_have_count(0)
    _mark_page(page)
    card.get_by_role("link", name="Activar aspecto").click()
    activation = page.locator(f"form#activacion-{table_roll.pk}")
    _field(activation, "Aspecto que activas").select_option(f"{SHEET_ASPECT}{play.ines_aspect.pk}")
    activation.get_by_label(re.compile(r"^\s*Un punto dramático \(Inés Salcedo tiene 3\)")).check()
    activation.locator(f"#dado-{table_roll.pk}-0").check()
    activation.locator(f"#dado-{table_roll.pk}-1").check()
    activation.get_by_role("button", name="Activar y repetir").click()

    chain = card.locator(".roll-chain-version")
    expect(chain).to_have_count(2)
    expect(chain.nth(1)).to_contain_text(
        "repite los dados 1, 2 (aspecto «Ágil como una gata» activado a favor; pago: un punto dramático)"
    )
    expect(card.locator(".roll-reading")).to_contain_text("Tras activar un aspecto a favor")
    expect(page.locator(f"#puntos-ch{ines.pk}")).to_have_text(f"Inés Salcedo: {_points(2)}")
    expect(page.locator("form.activation-form")).to_have_count(0)
    _not_reloaded(page)

    table_roll.refresh_from_db()
    reroll = table_roll.latest
    assert reroll.parent_id == table_roll.first_id
    signed = reroll.entry
    assert (signed["activation"], signed["aspect"], signed["rerolled"]) == ("positive", "Ágil como una gata", [0, 1])
    assert signed["dice"][2] == first_dice[2]  # the die not chosen is kept
    expect(chain.nth(0)).to_contain_text(f"original: [{', '.join(map(str, first_dice))}]")
    expect(chain.nth(1)).to_contain_text(f"[{', '.join(map(str, signed['dice']))}]")
    expect(card.locator(".roll-die-value")).to_have_text([str(d) for d in signed["dice"]])
    ines.refresh_from_db()
    assert ines.hitos.drama_points == 2

    # --- The GM activates a situation aspect against the roll (one die). --------------
    _log_in(gm_page, play.gm, scene_url)
    expect(gm_page.locator("#puntos-dj")).to_have_text(_pool(5))
    gm_card = gm_page.locator(f"#tirada-{table_roll.pk}")
    expect(gm_card.get_by_role("link", name="Activar aspecto")).to_have_count(0)
    _mark_page(gm_page)
    gm_card.get_by_role("link", name="Activar en contra").click()
    against = gm_page.locator(f"form#activacion-{table_roll.pk}")
    _field(against, "Aspecto que activas en contra").select_option(f"{SCENE_ASPECT}{play.scene_aspect.pk}")
    against.locator(f"#dado-{table_roll.pk}-2").check()
    _field(against, "Por qué (opcional)").fill("No ve dónde pisa.")
    against.get_by_role("button", name="Activar en contra").click()
    pending = gm_card.locator(".roll-pending")
    expect(pending).to_contain_text("La dirección activa «Oscuridad casi total» en contra: repetir los dados 3.")
    expect(pending).to_contain_text("Esperando respuesta")
    expect(gm_page.locator("#puntos-dj")).to_have_text(_pool(4))
    _not_reloaded(gm_page)
    negative = Activation.objects.get(table_roll=table_roll, kind=Activation.Kind.NEGATIVE)
    assert negative.status == Activation.Status.PENDING

    # --- The player sees it on her page and accepts: +1 point, the die re-rolled. ----
    page.reload()
    _mark_page(page)
    card.get_by_role("button", name="Aceptar (+1 punto)").click()
    expect(chain).to_have_count(3)
    expect(chain.nth(2)).to_contain_text(
        "repite los dados 3 (aspecto «Oscuridad casi total» activado en contra; "
        "pago: un punto de la reserva de la dirección)"
    )
    expect(card.locator(".roll-reading")).to_contain_text("Tras activar un aspecto en contra")
    expect(card.locator(".roll-pending")).to_have_count(0)
    expect(page.locator(f"#puntos-ch{ines.pk}")).to_have_text(f"Inés Salcedo: {_points(3)}")
    _not_reloaded(page)

    negative.refresh_from_db()
    assert negative.status == Activation.Status.ACCEPTED
    table_roll.refresh_from_db()
    accepted = table_roll.latest
    assert accepted.parent_id == reroll.pk
    assert (accepted.entry["activation"], accepted.entry["rerolled"]) == ("negative", [2])
    assert accepted.entry["dice"][:2] == signed["dice"][:2]
    ines.refresh_from_db()
    assert ines.hitos.drama_points == 3
    assert gm_pool(Campaign.objects.get(pk=play.campaign.pk)) == 4
    # After a reload both pages show the balances from the database.
    page.reload()
    expect(page.locator(f"#puntos-ch{ines.pk}")).to_have_text(f"Inés Salcedo: {_points(3)}")
    expect(page.locator(f"#tirada-{table_roll.pk} .roll-chain-version")).to_have_count(3)
    gm_page.reload()
    expect(gm_page.locator("#puntos-dj")).to_have_text(_pool(4))
    expect(gm_page.locator(f"#tirada-{table_roll.pk} .roll-pending")).to_have_count(0)

    # --- The GM runs an attack against the NPC and applies the damage. ---------------
    gm_page.locator(".scene-table").get_by_role("link", name="Combate").click()
    expect(gm_page.get_by_role("heading", name="Empezar un combate")).to_be_visible()
    start = gm_page.locator("#combat-start")
    start.get_by_label("Inés Salcedo").check()
    start.get_by_label("El mayordomo").check()
    _mark_page(gm_page)
    start.get_by_role("button", name="Empezar").click()
    tracker = gm_page.locator("#combat-tracker")
    expect(tracker.get_by_role("heading", name="Asalto 1")).to_be_visible()
    expect(tracker.locator("tbody tr")).to_have_count(2)
    tracker.get_by_role("button", name="Tirar iniciativa").click()
    # Each initiative total links to its roll.
    expect(tracker.locator("tbody tr td:nth-child(3) a")).to_have_text([re.compile(r"^\d+$")] * 2)
    # Only now, the server done with the request: it shares the test's SQLite connection.
    combatants = {c.character_id: c for c in Combatant.objects.filter(combat__scene=play.scene)}
    assert len(combatants) == 2
    assert all(c.initiative_id for c in combatants.values())
    npc_row = tracker.locator(f"#combatant-{combatants[play.npc.pk].pk}")
    npc_row.get_by_label("indefenso", exact=True).check()
    npc_row.get_by_role("button", name="Guardar").click()
    expect(npc_row.locator(".badge", has_text="indefenso")).to_be_visible()
    assert Combatant.objects.get(pk=combatants[play.npc.pk].pk).defenceless

    before = (play.npc.hitos.health_slashes, play.npc.hitos.health_crosses)
    attack_form = gm_page.locator("#combat-attack-form")
    attacks = gm_page.locator("#combat-attacks article")
    harmful = None
    for tried in range(1, ATTACK_TRIES + 1):
        _field(attack_form, "Atacante").select_option(label="Inés Salcedo")
        _field(attack_form, "Objetivo").select_option(label="El mayordomo")
        _field(attack_form, "Arma").select_option(label="Inés Salcedo: Cuchillo (C)")
        attack_form.get_by_role("button", name="Tirar el ataque").click()
        expect(attacks).to_have_count(tried)
        attack = Attack.objects.select_related("table_roll__first").latest("id")
        # client-seed.js filled the seed of the form htmx swapped in.
        assert attack.table_roll.first.entry["client_seed_source"] == "browser"
        assert (attack.attacker_id, attack.target_id) == (combatants[ines.pk].pk, combatants[play.npc.pk].pk)
        newest = gm_page.locator(f"#attack-{attack.pk}")
        expect(newest.locator(f"#tirada-{attack.table_roll_id}")).to_be_visible()
        expect(newest).to_contain_text("Inés Salcedo → El mayordomo · Cuchillo")
        damage = combat_services.attack_damage_for(attack) if combat_services.attack_hits(attack) else None
        if damage is None:
            expect(newest).to_contain_text("Falla: no hay daño.")
            continue
        expect(newest.locator(".combat-damage strong")).to_have_text(str(damage.total))
        if damage.total > 0:
            harmful = (attack, damage.total)
            break
    assert harmful is not None, f"no attack of {ATTACK_TRIES} against a defenceless NPC did any harm"
    attack, total = harmful
    newest = gm_page.locator(f"#attack-{attack.pk}")
    newest.get_by_role("button", name="Aplicar daño").click()
    expect(newest.get_by_text(f"Daño aplicado: {total}")).to_be_visible()
    expect(newest.get_by_role("button", name="Aplicar daño")).to_have_count(0)
    _not_reloaded(gm_page)
    attack.refresh_from_db()
    assert attack.damage_applied == total
    npc = Character.objects.get(pk=play.npc.pk)
    assert (npc.hitos.health_slashes, npc.hitos.health_crosses) != before
    assert npc.hitos.health_slashes + 2 * npc.hitos.health_crosses >= total
