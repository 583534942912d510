"""The Vaesen sheet pages at the shared addresses and the sheet's actions in
play: creation → submit → GM review, edit permissions, condition ticks
(V8–V12), critical injuries (V13, V28), NPC Resistencia (V20)."""

import pytest
from django.urls import reverse

from campaigns.models import Visibility
from sheets.models import Character, SheetEvent
from systems.vaesen.models import VaesenEvent, VaesenSheet
from systems.vaesen.sheet.forms import skill_field_name
from tests.factories import CampaignFactory, CharacterFactory
from tests.systems.vaesen.conftest import vaesen_character

HTMX = {"HTTP_HX_REQUEST": "true"}


def sheet_post(**overrides) -> dict:
    """The sheet form's POST for a player character (Físico 3, Precisión 4,
    Lógica 2, Empatía 5; Sigilo 2; lockpicks +1 Sigilo; a revolver)."""
    data = {
        "name": "Rune",
        "archetype": "Cazador",
        "age": "34",
        "motivation": "Vengar a su padre",
        "trauma": "Vio al lindorm",
        "dark_secret": "Desertor",
        "relationships": "Elsa: le debe la vida\nEl cura: no se fía",
        "talents": "Rastreador",
        "insights": "",
        "defects": "",
        "resources": "3",
        "fisico": "3",
        "precision": "4",
        "logica": "2",
        "empatia": "5",
        skill_field_name("Sigilo"): "2",
        "armour": "Abrigo de cuero",
        "armour_protection": "1",
        "armour_agility_penalty": "1",
        "items-TOTAL_FORMS": "1",
        "items-INITIAL_FORMS": "0",
        "items-0-name": "Ganzúas",
        "items-0-bonus": "1",
        "items-0-skill": "Sigilo",
        "items-0-availability": "2",
        "weapons-TOTAL_FORMS": "1",
        "weapons-INITIAL_FORMS": "0",
        "weapons-0-name": "Revólver",
        "weapons-0-skill": "Combate a distancia",
        "weapons-0-damage": "2",
        "weapons-0-bonus": "1",
        "weapons-0-range": "Largo",
        "public_description": "Alto y callado.",
        "private_notes": "",
    }
    return {**data, **overrides}


def url(name, world, character=None, *args):
    if character is None:
        return reverse(name, args=[world.campaign.slug, *args])
    return reverse(name, args=[world.campaign.slug, character.pk, *args])


# --- creation, review -----------------------------------------------------------


def test_a_player_creates_submits_and_the_gm_approves(vaesen_world):
    """V1/V4/V16/V22/V31 — the whole sheet from the form, as a draft; then the review cycle."""
    w = vaesen_world
    player = w.client("other")
    response = player.post(url("sheets:sheet-create", w), sheet_post())
    character = Character.objects.get(name="Rune")
    assert response.status_code == 302 and response["Location"] == character.get_absolute_url()
    sheet = character.vaesen
    assert (character.status, character.owner, character.kind) == ("draft", w.other, "pc")
    assert [sheet.attribute(a) for a in ("físico", "precisión", "lógica", "empatía")] == [3, 4, 2, 5]
    assert (sheet.skill("Sigilo"), sheet.skill("Fuerza"), sheet.skills) == (2, 0, {"Sigilo": 2})
    assert sheet.relationships == ["Elsa: le debe la vida", "El cura: no se fía"]
    assert (sheet.armour_protection, sheet.armour_agility_penalty, sheet.resources) == (1, 1, 3)
    assert [(i.name, i.bonus, i.skill, i.availability) for i in sheet.items.all()] == [("Ganzúas", 1, "Sigilo", 2)]
    assert [(x.name, x.skill, x.damage, x.bonus) for x in sheet.weapons.all()] == [
        ("Revólver", "Combate a distancia", 2, 1)
    ]

    response = player.post(url("sheets:sheet-submit", w, character))
    assert response.status_code == 302
    character.refresh_from_db()
    assert character.status == "submitted"
    # The player may no longer edit it, nor review it.
    assert player.get(url("sheets:sheet-edit", w, character)).status_code == 403
    assert player.post(url("sheets:sheet-review", w, character), {"decision": "approve"}).status_code == 403

    gm = w.client("gm")
    page = gm.get(character.get_absolute_url()).content.decode()
    assert "Revisión de la dirección" in page
    response = gm.post(url("sheets:sheet-review", w, character), {"decision": "approve", "comment": ""})
    assert response.status_code == 302
    character.refresh_from_db()
    assert (character.status, character.reviewed_by) == ("approved", w.gm)
    kinds = list(SheetEvent.objects.filter(character=character).order_by("pk").values_list("kind", "actor"))
    assert kinds == [("created", w.other.pk), ("submitted", w.other.pk), ("approved", w.gm.pk)]


def test_returning_a_sheet_needs_a_comment_in_spanish(vaesen_world):
    w = vaesen_world
    Character.objects.filter(pk=w.pc.pk).update(status="submitted")
    response = w.client("gm").post(url("sheets:sheet-review", w, w.pc), {"decision": "return", "comment": ""})
    assert response.status_code == 200
    assert "Explica qué hay que cambiar." in response.content.decode()
    assert Character.objects.get(pk=w.pc.pk).status == "submitted"


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("fisico", "6", "Escribe un número de 5 o menos."),
        ("logica", "1", "Escribe un número de 2 o más."),
        (skill_field_name("Sigilo"), "6", "Escribe un número de 5 o menos."),
        ("items-0-availability", "6", "Escribe un número de 5 o menos."),
        ("items-0-bonus", "4", "Escribe un número de 3 o menos."),
        ("name", " ", "Este campo es obligatorio."),
    ],
)
def test_out_of_range_values_are_refused_keeping_what_was_typed(vaesen_world, field, value, message):
    """The seed's ranges: attributes 2–5, skills 0–5 (V1, V4); bonus 0–3 (V16), availability 1–5 (V31)."""
    w = vaesen_world
    response = w.client("other").post(url("sheets:sheet-create", w), sheet_post(**{field: value}))
    page = response.content.decode()
    assert response.status_code == 200
    assert message in page and "no se ha guardado nada" in page
    assert 'value="Vengar a su padre"' in page
    assert not Character.objects.filter(name="Rune").exists()


def test_a_reader_cannot_create_and_an_outsider_does_not_see_a_private_campaign(vaesen_world):
    w = vaesen_world
    assert w.client("reader").get(url("sheets:sheet-create", w)).status_code == 403
    assert w.client("outsider").get(url("sheets:sheet-create", w)).status_code == 403
    w.campaign.visibility = Visibility.PRIVATE
    w.campaign.save()
    assert w.client("outsider").get(url("sheets:sheet-create", w)).status_code == 404
    assert w.client("outsider").get(url("sheets:sheet-list", w)).status_code == 404


# --- NPCs and creatures ------------------------------------------------------------


def npc_post(**overrides) -> dict:
    data = {
        "name": "Lobo",
        "npc_kind": "animal",
        "resistance": "4",
        "fear": "",
        "fisico": "6",
        "precision": "3",
        "logica": "1",
        "empatia": "1",
        skill_field_name("Combate cuerpo a cuerpo"): "3",
        "armour": "",
        "armour_protection": "0",
        "armour_agility_penalty": "0",
        "items-TOTAL_FORMS": "0",
        "items-INITIAL_FORMS": "0",
        "weapons-TOTAL_FORMS": "1",
        "weapons-INITIAL_FORMS": "0",
        "weapons-0-name": "Mordisco",
        "weapons-0-skill": "Combate cuerpo a cuerpo",
        "weapons-0-damage": "2",
        "weapons-0-bonus": "0",
        "public_description": "",
        "gm_notes": "Ataca en manada.",
    }
    return {**data, **overrides}


def test_the_gm_creates_an_animal_with_resistencia_and_a_creature_with_fear(vaesen_world):
    """V20 — animals and human NPCs have Resistencia; V26 — a creature has a Fear value."""
    w = vaesen_world
    gm = w.client("gm")
    assert gm.post(url("sheets:npc-create", w), npc_post()).status_code == 302
    wolf = Character.objects.get(name="Lobo")
    assert (wolf.kind, wolf.status, wolf.vaesen.npc_kind, wolf.vaesen.resistance, wolf.vaesen.fisico) == (
        "npc",
        "approved",
        "animal",
        4,
        6,
    )
    assert wolf.vaesen.uses_resistance
    response = gm.post(
        url("sheets:npc-create", w), npc_post(name="Skogsrå", npc_kind="creature", resistance="", fear="3")
    )
    assert response.status_code == 302
    creature = Character.objects.get(name="Skogsrå").vaesen
    assert (creature.fear, creature.resistance, creature.uses_resistance) == (3, None, False)
    page = gm.get(Character.objects.get(name="Skogsrå").get_absolute_url()).content.decode()
    assert "Miedo 3" in page and "Estados físicos" in page


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"npc_kind": "human", "resistance": ""}, "Los PNJ humanos y los animales tienen puntos de Resistencia."),
        ({"npc_kind": "creature", "fear": ""}, "Una criatura tiene un valor de Miedo."),
    ],
)
def test_an_npc_without_its_track_is_refused(vaesen_world, overrides, message):
    w = vaesen_world
    response = w.client("gm").post(url("sheets:npc-create", w), npc_post(**overrides))
    assert response.status_code == 200 and message in response.content.decode()
    assert not Character.objects.filter(name="Lobo").exists()


def test_only_the_gm_creates_npcs(vaesen_world):
    w = vaesen_world
    assert w.client("player").post(url("sheets:npc-create", w), npc_post()).status_code == 403
    assert not Character.objects.filter(name="Lobo").exists()


# --- edit permissions ------------------------------------------------------------


def test_edit_permissions_outsider_404_other_player_403_owner_after_approval_403(vaesen_world):
    w = vaesen_world
    edit = url("sheets:sheet-edit", w, w.pc)
    assert w.client("outsider").get(edit).status_code == 404
    assert w.client("other").get(edit).status_code == 403
    assert w.client("other").post(edit, sheet_post(name="Robada")).status_code == 403
    # Approved: the owner no longer edits it (only its notes).
    assert w.client("player").get(edit).status_code == 403
    assert Character.objects.get(pk=w.pc.pk).name == "Elsa"


def test_the_gm_edits_a_players_sheet_and_the_history_says_why(vaesen_world):
    """Every change by someone other than the owner: who, when, why."""
    w = vaesen_world
    gm = w.client("gm")
    page = gm.get(url("sheets:sheet-edit", w, w.pc)).content.decode()
    assert 'name="reason"' in page and 'value="Elsa"' in page
    response = gm.post(
        url("sheets:sheet-edit", w, w.pc), sheet_post(name="Elsa", fisico="4", reason="Subida de Físico")
    )
    assert response.status_code == 302
    assert VaesenSheet.objects.get(pk=w.pc.pk).fisico == 4
    event = SheetEvent.objects.get(character=w.pc)
    assert (event.kind, event.actor, event.reason) == ("edited", w.gm, "Subida de Físico")


def test_the_owner_edits_a_draft(vaesen_world):
    w = vaesen_world
    Character.objects.filter(pk=w.pc.pk).update(status="draft")
    page = w.client("player").get(url("sheets:sheet-edit", w, w.pc)).content.decode()
    assert 'name="reason"' not in page
    response = w.client("player").post(url("sheets:sheet-edit", w, w.pc), sheet_post(name="Elsa Berg"))
    assert response.status_code == 302
    assert Character.objects.get(pk=w.pc.pk).name == "Elsa Berg"


def test_notes_after_approval(vaesen_world):
    w = vaesen_world
    response = w.client("player").post(url("sheets:sheet-notes", w, w.pc), {"private_notes": "Sospecha del cura."})
    assert response.status_code == 302
    assert Character.objects.get(pk=w.pc.pk).private_notes == "Sospecha del cura."
    assert w.client("other").post(url("sheets:sheet-notes", w, w.pc), {"private_notes": "x"}).status_code == 403
    assert w.client("outsider").post(url("sheets:sheet-notes", w, w.pc), {"private_notes": "x"}).status_code == 404


# --- conditions in play ------------------------------------------------------------


def tick(client, world, character, kind, do, htmx=True, reason=""):
    extra = HTMX if htmx else {}
    return client.post(
        url("vaesen:condition-update", world, character), {"kind": kind, "do": do, "reason": reason}, **extra
    )


def test_the_gm_ticks_a_condition_and_gets_the_fragment_back(vaesen_world):
    """V8/V9 — each tick shows the −1 die it gives to rolls of its type."""
    w = vaesen_world
    response = tick(w.client("gm"), w, w.pc, "físico", "marcar:Herido", reason="Disparo")
    page = response.content.decode()
    assert response.status_code == 200
    assert page.lstrip().startswith('<section id="sheet-play"')
    assert "<html" not in page
    assert page.count("−1 dado a las tiradas físicas") == 3 and page.count("−1 dado a las tiradas mentales") == 3
    assert 'value="quitar:Herido"' in page and 'aria-pressed="true"' in page
    assert "−1 dado</span>" in page
    assert VaesenSheet.objects.get(pk=w.pc.pk).physical_conditions == ["Herido"]
    event = SheetEvent.objects.get(character=w.pc)
    assert (event.actor, event.reason) == (w.gm, "Disparo")


def test_without_htmx_a_tick_redirects_to_the_sheet(vaesen_world):
    w = vaesen_world
    response = tick(w.client("gm"), w, w.pc, "mental", "marcar:Asustado", htmx=False)
    assert response.status_code == 302 and response["Location"] == w.pc.get_absolute_url()
    page = w.client("gm").get(w.pc.get_absolute_url()).content.decode()
    assert 'value="quitar:Asustado"' in page


def test_the_fourth_condition_shows_derrotado_unmistakably(vaesen_world):
    """V10/V11 — a badge with text, and what Broken means."""
    w = vaesen_world
    gm = w.client("gm")
    for _ in range(3):
        tick(gm, w, w.pc, "físico", "sufrir")
    page = tick(gm, w, w.pc, "físico", "sufrir").content.decode()
    assert "DERROTADO FÍSICAMENTE" in page
    assert "Falla automáticamente todas las pruebas" in page
    assert 'value="recuperar"' in page
    assert VaesenSheet.objects.get(pk=w.pc.pk).broken_physical
    # The list shows it too.
    assert "Derrotado físicamente" in gm.get(url("sheets:sheet-list", w)).content.decode()


def test_refusals_show_in_spanish_and_change_nothing(vaesen_world):
    """V8 — ticking a ticked condition, unticking one not ticked."""
    w = vaesen_world
    gm = w.client("gm")
    tick(gm, w, w.pc, "físico", "marcar:Herido")
    events = SheetEvent.objects.count()
    page = tick(gm, w, w.pc, "físico", "marcar:Herido").content.decode()
    assert "«Herido» ya está marcado." in page and 'role="alert"' in page
    page = tick(gm, w, w.pc, "mental", "quitar:Irritado").content.decode()
    assert "«Irritado» no está marcado." in page
    response = tick(gm, w, w.pc, "mental", "quitar:Irritado", htmx=False)
    assert response.status_code == 302
    follow = gm.get(response["Location"]).content.decode()
    assert "«Irritado» no está marcado." in follow
    assert SheetEvent.objects.count() == events
    assert VaesenSheet.objects.get(pk=w.pc.pk).physical_conditions == ["Herido"]
    page = tick(gm, w, w.pc, "mental", "bailar").content.decode()
    assert "Acción desconocida para los estados." in page


def test_who_may_tick_conditions(vaesen_world):
    """As HITOS's meters: the GM always; the owner only when the campaign allows it."""
    w = vaesen_world
    assert tick(w.client("outsider"), w, w.pc, "físico", "sufrir").status_code == 404
    assert tick(w.client("other"), w, w.pc, "físico", "sufrir").status_code == 403
    assert tick(w.client("player"), w, w.pc, "físico", "sufrir").status_code == 403
    assert "condition-form" in w.client("gm").get(w.pc.get_absolute_url()).content.decode()
    assert 'value="sufrir"' not in w.client("player").get(w.pc.get_absolute_url()).content.decode()
    w.campaign.rules_options = {"players_mark_own_conditions": True}
    w.campaign.save()
    assert tick(w.client("player"), w, w.pc, "físico", "sufrir").status_code == 200
    assert VaesenSheet.objects.get(pk=w.pc.pk).physical_conditions == ["Exhausto"]
    assert SheetEvent.objects.get(character=w.pc).actor == w.player


# --- NPC Resistencia and critical injuries -------------------------------------------------


def test_npc_resistance_buttons(vaesen_world):
    """V20 — − / + on Resistencia, with the dice it costs shown."""
    w = vaesen_world
    gm = w.client("gm")
    page = gm.get(w.npc.get_absolute_url()).content.decode()
    assert "<strong>3</strong> de 3 puntos de Resistencia" in page and "Estados físicos" not in page
    page = gm.post(url("vaesen:resistance-update", w, w.npc), {"change": "-1", "reason": "Puñetazo"}, **HTMX)
    page = page.content.decode()
    assert "<strong>2</strong> de 3 puntos de Resistencia" in page and "−1 dado a sus tiradas" in page
    page = gm.post(url("vaesen:resistance-update", w, w.npc), {"change": "1"}, **HTMX).content.decode()
    page = gm.post(url("vaesen:resistance-update", w, w.npc), {"change": "1"}, **HTMX).content.decode()
    assert "Ya tiene todos sus puntos de Resistencia." in page
    assert VaesenSheet.objects.get(pk=w.npc.pk).resistance_lost == 0
    # A player does not even see the GM's NPC.
    assert w.client("player").post(url("vaesen:resistance-update", w, w.npc), {"change": "-1"}).status_code == 404


def test_critical_injuries_with_time_limit_and_treated_toggle(vaesen_world):
    """V13 — written with its d66 result; V28 — its time limit and "tratada"."""
    w = vaesen_world
    gm = w.client("gm")
    data = {
        "kind": "físico",
        "roll": "36",
        "name": "Costillas rotas",
        "effect": "−1 a Agilidad",
        "time_limit": "un día",
    }
    page = gm.post(url("vaesen:injury-create", w, w.pc), data, **HTMX).content.decode()
    assert "Costillas rotas" in page and "Plazo para tratarla: un día" in page and "Sin tratar" in page
    injury = w.pc.vaesen.injuries.get()
    page = gm.post(url("vaesen:injury-update", w, w.pc, injury.pk), {"treated": "1"}, **HTMX).content.decode()
    assert "Tratada" in page and "Marcar sin tratar" in page
    page = gm.post(url("vaesen:injury-update", w, w.pc, injury.pk), {"treated": "1"}, **HTMX).content.decode()
    assert "La herida ya está tratada." in page
    bad = gm.post(url("vaesen:injury-create", w, w.pc), {**data, "roll": "37", "name": "Otra"}).content.decode()
    assert "Una tirada d66 tiene dos cifras del 1 al 6" in bad and 'value="Otra"' in bad
    assert w.pc.vaesen.injuries.count() == 1
    kinds = list(SheetEvent.objects.filter(character=w.pc).values_list("kind", flat=True))
    assert sorted(kinds) == sorted([VaesenEvent.INJURY, VaesenEvent.TREATED])


# --- the pages, whole and as fragments ---------------------------------------------


def test_detail_whole_page_and_fragment(vaesen_world):
    w = vaesen_world
    client = w.client("player")
    page = client.get(w.pc.get_absolute_url()).content.decode()
    assert "<html" in page and "Elsa" in page and "Saber qué le pasó a su hermano" in page
    assert "Sigilo" in page and "Ganzúas" in page and "Heridas críticas" in page
    fragment = client.get(w.pc.get_absolute_url(), **HTMX).content.decode()
    assert fragment.lstrip().startswith('<section id="sheet-play"') and "<html" not in fragment


def test_detail_shows_other_players_only_the_public_part(vaesen_world):
    w = vaesen_world
    page = w.client("other").get(w.pc.get_absolute_url()).content.decode()
    assert "Elsa" in page and "Saber qué le pasó a su hermano" not in page and "Exportar" not in page
    assert w.client("outsider").get(w.npc.get_absolute_url()).status_code == 404
    assert w.client("player").get(w.npc.get_absolute_url()).status_code == 404


def test_list_whole_page_and_fragment(vaesen_world):
    w = vaesen_world
    page = w.client("gm").get(url("sheets:sheet-list", w)).content.decode()
    assert "Elsa" in page and "El molinero" in page and "Resistencia 3/3" in page and "Nuevo PNJ o criatura" in page
    fragment = w.client("gm").get(url("sheets:sheet-list", w), **HTMX).content.decode()
    assert fragment.lstrip().startswith('<div id="sheet-table"') and "<html" not in fragment
    player_page = w.client("player").get(url("sheets:sheet-list", w)).content.decode()
    assert "El molinero" not in player_page


def test_print_view(vaesen_world):
    w = vaesen_world
    page = w.client("player").get(url("sheets:sheet-print", w, w.pc)).content.decode()
    assert "Volver a la ficha" in page and "Precisión" in page and "Ganzúas" in page and "Exhausto" in page
    assert w.client("other").get(url("sheets:sheet-print", w, w.pc)).status_code == 403


def test_query_counts_are_pinned(vaesen_world, django_assert_max_num_queries):
    """The sheet and the list read a constant number of rows, however many sheets there are."""
    w = vaesen_world
    gm = w.client("gm")
    for character in (w.pc, w.npc, w.creature):
        tick(gm, w, character, "físico", "sufrir")
    player = w.client("player")
    with django_assert_max_num_queries(9):
        assert player.get(w.pc.get_absolute_url()).status_code == 200
    # Served from the cache until the sheet changes.
    with django_assert_max_num_queries(4):
        assert player.get(w.pc.get_absolute_url()).status_code == 200
    with django_assert_max_num_queries(8):
        assert gm.get(w.npc.get_absolute_url()).status_code == 200
    for n in range(4):
        vaesen_character(w.campaign, w.other, f"Extra {n}", skills={"Sigilo": 1})
    with django_assert_max_num_queries(5):
        assert gm.get(url("sheets:sheet-list", w)).status_code == 200
    with django_assert_max_num_queries(6):
        assert player.get(url("sheets:sheet-list", w)).status_code == 200
    with django_assert_max_num_queries(8):
        assert player.get(url("sheets:sheet-print", w, w.pc)).status_code == 200


def test_only_the_owner_submits_a_draft(vaesen_world):
    w = vaesen_world
    Character.objects.filter(pk=w.pc.pk).update(status="draft")
    submit = url("sheets:sheet-submit", w, w.pc)
    assert w.client("outsider").post(submit).status_code == 404
    assert w.client("other").post(submit).status_code == 404  # a draft is not public
    assert w.client("gm").post(submit).status_code == 403
    assert w.client("player").post(submit).status_code == 302
    assert w.client("player").post(submit).status_code == 403  # already submitted
    assert list(SheetEvent.objects.filter(character=w.pc).values_list("kind", flat=True)) == ["submitted"]


def test_the_history_names_vaesens_own_changes(vaesen_world):
    """Who, when, why: the shared history page lists the conditions and injuries."""
    w = vaesen_world
    tick(w.client("gm"), w, w.pc, "mental", "marcar:Asustado", reason="Vio al Näcken")
    page = w.client("player").get(url("sheets:sheet-history", w, w.pc)).content.decode()
    assert "estados" in page and "Asustado" in page and "Vio al Näcken" in page


def test_wrong_methods_are_refused(vaesen_world):
    w = vaesen_world
    gm = w.client("gm")
    assert gm.get(url("vaesen:condition-update", w, w.pc)).status_code == 405
    assert gm.get(url("vaesen:resistance-update", w, w.npc)).status_code == 405
    assert gm.get(url("vaesen:injury-create", w, w.pc)).status_code == 405
    assert gm.post(url("sheets:sheet-print", w, w.pc)).status_code == 405
    assert gm.post(url("sheets:sheet-export", w, w.pc)).status_code == 405
    assert gm.get(url("sheets:sheet-submit", w, w.pc)).status_code == 405
    assert gm.delete(url("sheets:sheet-edit", w, w.pc)).status_code == 405


def test_a_hitos_campaign_keeps_its_own_pages(vaesen_world):
    """The shared addresses serve each campaign's own system (sheets.kinds)."""
    w = vaesen_world
    hitos = CampaignFactory(gm=w.gm, system="hitos")
    hitos_sheet = CharacterFactory(campaign=hitos, owner=w.gm, kind="npc")
    page = w.client("gm").get(reverse("sheets:npc-create", args=[hitos.slug])).content.decode()
    assert "Nuevo PNJ o criatura" not in page and "Nuevo PNJ" in page
    assert (
        w.client("gm")
        .post(reverse("vaesen:condition-update", args=[hitos.slug, hitos_sheet.pk]), {"kind": "físico", "do": "sufrir"})
        .status_code
        == 404
    )


def test_the_gm_edits_a_creature(vaesen_world):
    """V26 — the creature's Fear value is part of its stat block."""
    w = vaesen_world
    gm = w.client("gm")
    edit = url("sheets:sheet-edit", w, w.creature)
    page = gm.get(edit).content.decode()
    assert 'name="fear"' in page and 'value="2"' in page and 'name="motivation"' not in page
    data = npc_post(name="El Näcken", npc_kind="creature", resistance="", fear="4", fisico="8")
    assert gm.post(edit, data).status_code == 302
    sheet = VaesenSheet.objects.get(pk=w.creature.pk)
    assert (sheet.fear, sheet.fisico, sheet.npc_kind) == (4, 8, "creature")
    assert SheetEvent.objects.get(character=w.creature).kind == "edited"
