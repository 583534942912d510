"""Finishing touches on Vaesen (issue 15): the GM's dashboard links to the
Vaesen options; Aterrorizado (V27) through the sheet's services, shown on the
sheet in words and ended by the GM; the roll card's legend offers the push
(V6) only on tests that may be pushed, and an initiative card reads as one
(V17, V25); no push while Broken of either kind (V10–V12); an imported file's
bad rows named in Spanish."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse
from pytest_django.asserts import assertContains, assertNotContains

from campaigns.permissions import campaign_access
from sheets.models import Character, SheetEvent
from systems.vaesen.combat import services as combat
from systems.vaesen.fear import services as fear
from systems.vaesen.models import VaesenAction, VaesenCombatant, VaesenEvent, VaesenSheet
from systems.vaesen.rolls import services as rolls
from systems.vaesen.sheet import services
from table.models import TableRoll
from tests.conftest import client_for
from tests.factories import CampaignFactory, client_seed, make_scene
from tests.systems.vaesen.test_combat import queued_dice
from tests.systems.vaesen.test_push import _state, _url, a_roll
from tests.systems.vaesen.test_sheet_archive import _export, _import

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}
PUSH_LEGEND = "puede forzar la tirada una vez"


@pytest.fixture
def scene(vaesen_campaign):
    return make_scene(vaesen_campaign, title="El puente")


def sheet(character) -> VaesenSheet:
    return VaesenSheet.objects.get(pk=character.pk)


# --- 1. the GM's dashboard ---------------------------------------------------------------


def test_the_gm_dashboard_links_to_the_vaesen_options_only_in_a_vaesen_campaign(vaesen_world):
    w = vaesen_world
    options = reverse("vaesen:campaign-options", args=[w.campaign.slug])
    response = w.client("gm").get(reverse("campaigns:dashboard", args=[w.campaign.slug]))
    assertContains(response, "Opciones de Vaesen")
    assertContains(response, options)
    hitos = CampaignFactory(gm=w.gm, slug="otra", system="hitos")
    response = w.client("gm").get(reverse("campaigns:dashboard", args=[hitos.slug]))
    assert response.status_code == 200
    assertNotContains(response, "Opciones de Vaesen")
    assertContains(response, "Opciones de reglas")


# --- 2. Aterrorizado (V27) ------------------------------------------------------------------


def test_v27_terror_set_stores_the_rounds_and_reaction_with_its_sheet_event(vaesen_world):
    w = vaesen_world
    services.terror_set(w.pc, rounds=3, reaction="Parálisis", actor=w.gm, reason="El Näcken canta")
    assert (sheet(w.pc).terrified_rounds, sheet(w.pc).terror_reaction) == (3, "Parálisis")
    event = SheetEvent.objects.get(character=w.pc)
    assert (event.kind, event.actor, event.reason) == (VaesenEvent.CONDITION, w.gm, "El Näcken canta")
    assert event.summary == "Aterrorizado (3 asaltos): Parálisis"
    assert event.before == {"terrified_rounds": 0, "terror_reaction": ""}
    assert event.after == {"terrified_rounds": 3, "terror_reaction": "Parálisis"}


@pytest.mark.parametrize(
    ("rounds", "reaction", "message"),
    [(3, "Baile", "Elige una reacción"), (0, "Huida", "de 1 a 6 asaltos"), (7, "Huida", "de 1 a 6 asaltos")],
)
def test_v27_terror_set_refuses_in_spanish_and_changes_nothing(vaesen_world, rounds, reaction, message):
    w = vaesen_world
    with pytest.raises(ValidationError, match=message):
        services.terror_set(w.pc, rounds=rounds, reaction=reaction, actor=w.gm, reason="")
    assert (sheet(w.pc).terrified_rounds, sheet(w.pc).terror_reaction) == (0, "")
    assert not SheetEvent.objects.exists()


def test_v27_a_failed_fear_test_accepted_goes_through_terror_set(vaesen_world, scene, monkeypatch):
    """The fear flow stores Aterrorizado through the sheet's service (its
    SheetEvent, tied to the 1d6 roll); the sheet says it in words."""
    from tests.systems.vaesen.test_options import queue_d6

    w = vaesen_world
    d6 = queue_d6(monkeypatch)
    test = fear.fear_start(scene=scene, actor=w.gm, characters=[w.pc], fear=1, creature=None, against="Una voz")
    d6.append([1, 2, 3])
    table_roll = fear.fear_roll(
        scene=scene, actor=w.player, test_id=test["id"], character=w.pc, attribute="lógica", client_seed=client_seed()
    )
    calls = []
    real = fear.terror_set
    monkeypatch.setattr(fear, "terror_set", lambda *a, **k: calls.append(k) or real(*a, **k))
    d6.append([3])
    fear.terror_accept(
        table_roll=table_roll, user=w.player, is_gm=False, reaction="Parálisis", client_seed=client_seed()
    )
    assert [(c["rounds"], c["reaction"]) for c in calls] == [(3, "Parálisis")]
    terror = TableRoll.objects.get(pk=table_roll.pk).facts["terror"]
    event = SheetEvent.objects.get(character=w.pc, summary="Aterrorizado (3 asaltos): Parálisis")
    assert (event.actor, event.roll_id) == (w.player, terror["entry"])
    assertContains(w.client("other").get(w.pc.get_absolute_url()), "Aterrorizado (3 asaltos): Parálisis")


def test_v27_the_sheet_print_and_list_say_aterrorizado_in_words(vaesen_world):
    w = vaesen_world
    services.terror_set(w.pc, rounds=1, reaction="Huida", actor=w.gm, reason="")
    page = w.client("player").get(w.pc.get_absolute_url())
    assertContains(page, "Aterrorizado (1 asalto): Huida")
    # Only the GM ends it.
    assertNotContains(page, "Ya no está Aterrorizado")
    assertContains(w.client("gm").get(w.pc.get_absolute_url()), "Ya no está Aterrorizado")
    printed = w.client("player").get(reverse("sheets:sheet-print", args=[w.campaign.slug, w.pc.pk]))
    assertContains(printed, "Aterrorizado (1 asalto): Huida")
    listed = w.client("gm").get(reverse("sheets:sheet-list", args=[w.campaign.slug]))
    assertContains(listed, "Aterrorizado (1 asalto): Huida")


def test_v27_the_gm_ends_aterrorizado_from_the_sheet_with_its_history(vaesen_world):
    w = vaesen_world
    services.terror_set(w.pc, rounds=4, reaction="Desmayo", actor=w.gm, reason="")
    url = reverse("vaesen:terror-update", args=[w.campaign.slug, w.pc.pk])
    assert w.client("outsider").post(url, {"reason": ""}).status_code == 404
    assert w.client("player").post(url, {"reason": ""}).status_code == 403
    assert w.client("other").post(url, {"reason": ""}).status_code == 403
    assert sheet(w.pc).terrified_rounds == 4
    response = w.client("gm").post(url, {"reason": "Pasan los asaltos"}, **HTMX)
    assert response.status_code == 200
    page = response.content.decode()
    assert page.lstrip().startswith('<section id="sheet-play"') and "Aterrorizado (" not in page
    assert (sheet(w.pc).terrified_rounds, sheet(w.pc).terror_reaction) == (0, "")
    event = SheetEvent.objects.filter(character=w.pc).latest("id")
    assert (event.actor, event.reason, event.summary) == (w.gm, "Pasan los asaltos", "Ya no está Aterrorizado")
    assert event.after == {"terrified_rounds": 0, "terror_reaction": ""}
    # Again: refused in Spanish, nothing changed.
    events = SheetEvent.objects.count()
    again = w.client("gm").post(url, {"reason": ""}, **HTMX).content.decode()
    assert "Elsa no está Aterrorizado." in again and 'role="alert"' in again
    assert SheetEvent.objects.count() == events
    # Without htmx: back to the sheet.
    assert w.client("gm").post(url, {"reason": ""})["Location"] == w.pc.get_absolute_url()


def test_v27_aterrorizado_travels_in_the_exported_file(vaesen_world):
    w = vaesen_world
    services.terror_set(w.pc, rounds=2, reaction="Agresión", actor=w.gm, reason="")
    data = _export(w.client("player"), w, w.pc)
    assert data["terror"] == {"terrified_rounds": 2, "terror_reaction": "Agresión"}
    count = Character.objects.count()
    bad = _import(w.client("player"), w, {**data, "name": "Mala", "terror": {"terrified_rounds": 9}})
    assertContains(bad, "Aterrorizado: el formato no es el de una ficha exportada.")
    assert Character.objects.count() == count
    assert _import(w.client("player"), w, {**data, "name": "Elsa (copia)"}).status_code == 302
    copy = VaesenSheet.objects.get(character__name="Elsa (copia)")
    assert (copy.terrified_rounds, copy.terror_reaction) == (2, "Agresión")


# --- 3. the roll card -------------------------------------------------------------------------


def test_v6_the_legend_offers_the_push_on_a_test_in_a_post(vaesen_world, scene):
    w = vaesen_world
    table_roll = a_roll(w, scene)
    assertContains(w.client("gm").get(table_roll.first.get_absolute_url()), PUSH_LEGEND)


def _combat(w, scene, d6, values):
    started = combat.combat_start(scene=scene, access=campaign_access(w.gm, w.campaign), characters=[w.pc, w.npc])
    d6.extend([[v] for v in values])
    return started


def test_v17_an_initiative_card_reads_as_initiative_and_never_offers_a_push(vaesen_world, scene):
    """A d10 of 4 is no failed d6 test: «Iniciativa 4», no successes, no push."""
    w = vaesen_world
    gm = campaign_access(w.gm, w.campaign)
    with queued_dice() as d6:
        started = _combat(w, scene, d6, (4, 9))
        combat.initiative_roll(combat=started, access=gm)
    elsa = VaesenCombatant.objects.get(combat=started, character=w.pc)
    entry = elsa.initiative.latest
    page = w.client("gm").get(entry.get_absolute_url())
    assertContains(page, "Iniciativa 4")
    assertNotContains(page, "la mejor de dos")
    assertNotContains(page, "éxito")
    assertNotContains(page, PUSH_LEGEND)
    badge = w.client("gm").get(reverse("rolls:roll-badge", args=[entry.permalink]))
    assertContains(badge, "4 → Iniciativa 4")


def test_v25_an_initiative_rolled_twice_says_the_best_of_two(vaesen_world, scene):
    w = vaesen_world
    gm = campaign_access(w.gm, w.campaign)
    with queued_dice() as d6:
        started = _combat(w, scene, d6, ())
        VaesenCombatant.objects.filter(combat=started, character=w.pc).update(rolls_twice=True)
        d6.extend([[3, 8], [5]])
        combat.initiative_roll(combat=started, access=gm)
    entry = VaesenCombatant.objects.get(combat=started, character=w.pc).initiative.latest
    assert entry.entry["spec"] == "2d10"
    assertContains(w.client("gm").get(entry.get_absolute_url()), "Iniciativa 8</strong> — la mejor de dos")
    badge = w.client("gm").get(reverse("rolls:roll-badge", args=[entry.permalink]))
    assertContains(badge, "Iniciativa 8 (la mejor de dos)")


def test_v18_an_attack_card_does_not_claim_it_may_be_pushed(vaesen_world, scene):
    """Combat's rolls are settled at once and never pushed here: their
    legend says nothing of pushing, even on a failure."""
    w = vaesen_world
    gm = campaign_access(w.gm, w.campaign)
    with queued_dice() as d6:
        started = _combat(w, scene, d6, (9, 2))
        combat.initiative_roll(combat=started, access=gm)
        elsa = VaesenCombatant.objects.get(combat=started, character=w.pc)
        miller = VaesenCombatant.objects.get(combat=started, character=w.npc)
        action = combat.declare(
            combat=started, access=campaign_access(w.player, w.campaign), actor=elsa, kind="ataque", target=miller
        )
        d6.append([1, 1, 1])
        combat.react(action=action, access=gm, reaction=VaesenAction.Reaction.NONE)
    action.refresh_from_db()
    entry = action.roll.latest
    assert entry.signed_game["success"] is False and entry.signed_game["kind"] == "físico"
    page = w.client("player").get(entry.get_absolute_url())
    assertContains(page, "¿Cómo se lee?")
    assertNotContains(page, PUSH_LEGEND)


# --- 4. no push while Broken of either kind (V10–V12) ---------------------------------------


def test_v12_a_mentally_broken_character_does_not_push_a_physical_test(vaesen_world, scene):
    w = vaesen_world
    table_roll = a_roll(w, scene, attribute="físico", skill="Agilidad")
    VaesenSheet.objects.filter(pk=w.pc.pk).update(
        mental_conditions=["Irritado", "Asustado", "Desesperado"], broken_mental=True
    )
    before = _state(w, table_roll)
    page = client_for(w.player).get(scene.get_absolute_url()).content.decode()
    assert _url(table_roll) not in page
    response = client_for(w.player).post(_url(table_roll), {"condition": "Exhausto"})
    assertContains(response, "Elsa está «Derrotado»: no puede forzar tiradas.")
    assert _state(w, table_roll) == before
    with pytest.raises(ValidationError, match="no puede forzar tiradas"):
        rolls.push(table_roll=table_roll, user=w.player, condition="Exhausto")
    assert _state(w, table_roll) == before
    assert sheet(w.pc).physical_conditions == []


# --- 5. an imported file's bad rows, in Spanish ------------------------------------------------


def test_an_imported_files_bad_rows_are_named_in_spanish(vaesen_world):
    w = vaesen_world
    data = _export(w.client("player"), w, w.pc)
    count = Character.objects.count()
    bad = {
        **data,
        "name": "Mala",
        "weapons": [{**data["weapons"][0], "name": "x" * 81}],
        "items": [data["items"][0], {**data["items"][0], "bonus": 5}],
    }
    page = _import(w.client("player"), w, bad).content.decode()
    assert "La ficha del archivo no es válida" in page
    assert "Arma 1, Arma: " in page and "Objeto 2, Bonificación: " in page
    assert "weapons" not in page.split("La ficha del archivo no es válida")[1].split("</")[0]
    assert "Objeto 1," not in page
    too_many = {**data, "name": "Mala", "weapons": [data["weapons"][0]] * 21}
    page = _import(w.client("player"), w, too_many).content.decode()
    assert "La ficha del archivo no es válida: Armas: " in page
    assert Character.objects.count() == count


def test_a_sheet_form_with_more_weapon_rows_than_allowed_is_refused(vaesen_world):
    """The typed form too: no more than 20 weapons are stored."""
    from tests.systems.vaesen.test_sheet_views import sheet_post

    w = vaesen_world
    post = sheet_post(name="Armería")
    post.update({"weapons-TOTAL_FORMS": "21", "weapons-INITIAL_FORMS": "0"})
    for i in range(21):
        post.update(
            {
                f"weapons-{i}-name": f"Cuchillo {i}",
                f"weapons-{i}-skill": "Combate cuerpo a cuerpo",
                f"weapons-{i}-damage": "1",
                f"weapons-{i}-bonus": "0",
            }
        )
    response = w.client("player").post(reverse("sheets:sheet-create", args=[w.campaign.slug]), post)
    assert response.status_code == 200
    assert not Character.objects.filter(name="Armería").exists()
    post_ok = {**post, "weapons-TOTAL_FORMS": "20"}
    response = w.client("player").post(reverse("sheets:sheet-create", args=[w.campaign.slug]), post_ok)
    assert response.status_code == 302
    assert Character.objects.get(name="Armería").vaesen.weapons.count() == 20
