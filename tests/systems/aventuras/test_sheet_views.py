"""The Hora de Aventuras sheet pages at the shared addresses and the sheet's
actions in play: creation → submit → GM review (hero starts with five hero
points, A21), highlighted attributes and their dice (A2), feats (A23), tools
(A29), flaw (A25), the GM's characters without hero points (A20), health
levels, states (A3, A7; «por el morro», A27) and experience."""

import pytest
from django.urls import reverse

from campaigns.models import Visibility
from sheets.models import Character, SheetEvent
from systems.aventuras.models import AventurasEvent, AventurasSheet, AventurasState
from tests.factories import CampaignFactory, CharacterFactory
from tests.systems.aventuras.conftest import aventuras_character

HTMX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture(autouse=True)
def own_pages_only(monkeypatch):
    """These tests pin the sheet's own pages (and their queries): the hero
    points panel (``heroes.panel.sheet_panel``) is tested by its package."""
    monkeypatch.setattr("systems.aventuras.sheet.views.sheet_panel", lambda character, access: {})


def sheet_post(**overrides) -> dict:
    """The sheet form's POST for a hero: Finn, Cachas 4 and Espabilado 3
    highlighted; the feat «Puñetazo heroico»; a sword +1 to Cachas."""
    data = {
        "name": "Finn",
        "concept": "Humano aventurero",
        "highlighted": ["cachas", "espabilado"],
        "cachas": "4",
        "cerebrito": "",
        "espabilado": "3",
        "majo": "",
        "health": "5",
        "flaw": "Impulsivo",
        "flaw_earns": "Gana un punto si se lanza sin pensar para salvar a alguien",
        "feats-TOTAL_FORMS": "1",
        "feats-INITIAL_FORMS": "0",
        "feats-0-name": "Puñetazo heroico",
        "feats-0-description": "Tumba a un enemigo",
        "feats-0-needs_hero_point": "on",
        "tools-TOTAL_FORMS": "1",
        "tools-INITIAL_FORMS": "0",
        "tools-0-name": "Espada de demonio",
        "tools-0-attribute": "cachas",
        "tools-0-bonus": "1",
        "tools-0-uses": "zurrar a los malos",
        "public_description": "Lleva un gorro de oso.",
        "private_notes": "",
    }
    return {**data, **overrides}


def url(name, world, character=None, *args):
    if character is None:
        return reverse(name, args=[world.campaign.slug, *args])
    return reverse(name, args=[world.campaign.slug, character.pk, *args])


# --- creation, review -----------------------------------------------------------


def test_a_player_creates_submits_and_the_gm_approves(aventuras_world):
    """A2/A21/A23/A25/A29 — the whole sheet from the form, as a draft with
    five hero points; then the review cycle."""
    w = aventuras_world
    player = w.client("other")
    response = player.post(url("sheets:sheet-create", w), sheet_post())
    character = Character.objects.get(name="Finn")
    assert response.status_code == 302 and response["Location"] == character.get_absolute_url()
    sheet = character.aventuras
    assert (character.status, character.owner, character.kind) == ("draft", w.other, "pc")
    assert sheet.highlighted == ["cachas", "espabilado"]
    # A2 — «tirará tantos dados como la puntuación que tenga en el atributo y, si no lo tiene, entonces tirará dos dados».
    assert [sheet.dice_for(a) for a in ("cachas", "cerebrito", "espabilado", "majo")] == [4, 2, 3, 2]
    # A21 — «cada héroe comienza el juego con cinco puntos de Héroe».
    assert (sheet.hero_points, sheet.experience, sheet.health, sheet.health_lost) == (5, 0, 5, 0)
    assert (sheet.flaw, sheet.concept) == ("Impulsivo", "Humano aventurero")
    assert [(f.name, f.needs_hero_point) for f in sheet.feats.all()] == [("Puñetazo heroico", True)]
    assert [(t.name, t.attribute, t.bonus, t.uses) for t in sheet.tools.all()] == [
        ("Espada de demonio", "cachas", 1, "zurrar a los malos")
    ]

    assert player.post(url("sheets:sheet-submit", w, character)).status_code == 302
    character.refresh_from_db()
    assert character.status == "submitted"
    assert player.get(url("sheets:sheet-edit", w, character)).status_code == 403
    assert player.post(url("sheets:sheet-review", w, character), {"decision": "approve"}).status_code == 403

    gm = w.client("gm")
    assert "Revisión de la dirección" in gm.get(character.get_absolute_url()).content.decode()
    response = gm.post(url("sheets:sheet-review", w, character), {"decision": "approve", "comment": ""})
    assert response.status_code == 302
    character.refresh_from_db()
    assert (character.status, character.reviewed_by) == ("approved", w.gm)
    kinds = list(SheetEvent.objects.filter(character=character).order_by("pk").values_list("kind", "actor"))
    assert kinds == [("created", w.other.pk), ("submitted", w.other.pk), ("approved", w.gm.pk)]


def test_returning_a_sheet_needs_a_comment_in_spanish(aventuras_world):
    w = aventuras_world
    Character.objects.filter(pk=w.pc.pk).update(status="submitted")
    response = w.client("gm").post(url("sheets:sheet-review", w, w.pc), {"decision": "return", "comment": ""})
    assert response.status_code == 200
    assert "Explica qué hay que cambiar." in response.content.decode()
    assert Character.objects.get(pk=w.pc.pk).status == "submitted"


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        # [ENGINE DEFAULT] a hero's highlighted score is 1–6.
        ({"cachas": "7"}, "Escribe un número de 6 o menos."),
        ({"espabilado": "0"}, "Escribe un número de 1 o más."),
        ({"espabilado": ""}, "Un atributo destacado necesita su puntuación."),
        ({"highlighted": ["fuerza"]}, "«fuerza» no es un atributo."),
        # A29 — a tool gives +1 to +3.
        ({"tools-0-bonus": "4"}, "Escribe un número de 3 o menos."),
        ({"tools-0-attribute": "suerte"}, "Esa opción no está en la lista."),
        ({"health": "0"}, "Escribe un número de 1 o más."),
        ({"name": " "}, "Este campo es obligatorio."),
    ],
)
def test_bad_values_are_refused_in_spanish_keeping_what_was_typed(aventuras_world, overrides, message):
    w = aventuras_world
    response = w.client("other").post(url("sheets:sheet-create", w), sheet_post(**overrides))
    page = response.content.decode()
    assert response.status_code == 200
    assert message in page and "no se ha guardado nada" in page
    assert 'value="Impulsivo"' in page and "Puñetazo heroico" in page
    assert not Character.objects.filter(name="Finn").exists()


def test_an_attribute_not_highlighted_rolls_two_whatever_was_typed(aventuras_world):
    """A2 — «si no lo tiene, entonces tirará dos dados»: the score typed for it is not kept."""
    w = aventuras_world
    w.client("other").post(url("sheets:sheet-create", w), sheet_post(majo="6"))
    sheet = AventurasSheet.objects.get(character__name="Finn")
    assert (sheet.majo, sheet.dice_for("majo"), sheet.is_highlighted("majo")) == (2, 2, False)


def test_a_reader_cannot_create_and_an_outsider_does_not_see_a_private_campaign(aventuras_world):
    w = aventuras_world
    assert w.client("reader").get(url("sheets:sheet-create", w)).status_code == 403
    assert w.client("outsider").get(url("sheets:sheet-create", w)).status_code == 403
    w.campaign.visibility = Visibility.PRIVATE
    w.campaign.save()
    assert w.client("outsider").get(url("sheets:sheet-create", w)).status_code == 404
    assert w.client("outsider").get(url("sheets:sheet-list", w)).status_code == 404


# --- the GM's characters ------------------------------------------------------------


def npc_post(**overrides) -> dict:
    data = {
        "name": "Rey Helado",
        "concept": "Mago de hielo",
        "highlighted": ["cerebrito"],
        "cerebrito": "8",
        "health": "6",
        "feats-TOTAL_FORMS": "0",
        "feats-INITIAL_FORMS": "0",
        "tools-TOTAL_FORMS": "0",
        "tools-INITIAL_FORMS": "0",
        "public_description": "",
        "gm_notes": "Secuestra princesas.",
    }
    return {**data, **overrides}


def test_the_gm_creates_an_npc_without_hero_points(aventuras_world):
    """A20 — «los personajes del director de juego no tienen puntos de Héroe»; NPC scores up to 10."""
    w = aventuras_world
    gm = w.client("gm")
    page = gm.get(url("sheets:npc-create", w)).content.decode()
    assert 'name="flaw"' not in page and "Nuevo PNJ" in page
    assert gm.post(url("sheets:npc-create", w), npc_post()).status_code == 302
    king = Character.objects.get(name="Rey Helado")
    assert (king.kind, king.status, king.aventuras.hero_points, king.aventuras.dice_for("cerebrito")) == (
        "npc",
        "approved",
        None,
        8,
    )
    assert king.gm_notes == "Secuestra princesas."
    page = gm.get(king.get_absolute_url()).content.decode()
    assert "no tienen puntos de Héroe (A20)" in page
    response = gm.post(url("sheets:npc-create", w), npc_post(name="Otro", cerebrito="11"))
    assert "Escribe un número de 10 o menos." in response.content.decode()


def test_only_the_gm_creates_npcs(aventuras_world):
    w = aventuras_world
    assert w.client("player").post(url("sheets:npc-create", w), npc_post()).status_code == 403
    assert not Character.objects.filter(name="Rey Helado").exists()


# --- edit permissions ------------------------------------------------------------


def test_edit_permissions_outsider_404_other_player_403_owner_after_approval_403(aventuras_world):
    w = aventuras_world
    edit = url("sheets:sheet-edit", w, w.pc)
    assert w.client("outsider").get(edit).status_code == 404
    assert w.client("other").get(edit).status_code == 403
    assert w.client("other").post(edit, sheet_post(name="Robada")).status_code == 403
    assert w.client("player").get(edit).status_code == 403
    assert Character.objects.get(pk=w.pc.pk).name == "Palomita"


def test_the_gm_edits_a_players_sheet_and_the_history_says_why(aventuras_world):
    """Who, when, why; the form never touches the hero points (A21: only the ledger moves them)."""
    w = aventuras_world
    gm = w.client("gm")
    page = gm.get(url("sheets:sheet-edit", w, w.pc)).content.decode()
    assert 'name="reason"' in page and 'value="Palomita"' in page and 'name="hero_points"' not in page
    data = sheet_post(name="Palomita", highlighted=["cachas", "majo"], cachas="4", majo="4", reason="Sube Cachas")
    data["hero_points"] = "99"
    response = gm.post(url("sheets:sheet-edit", w, w.pc), data)
    assert response.status_code == 302
    sheet = AventurasSheet.objects.get(pk=w.pc.pk)
    assert (sheet.cachas, sheet.hero_points, sheet.experience) == (4, 5, 4)
    event = SheetEvent.objects.get(character=w.pc)
    assert (event.kind, event.actor, event.reason) == ("edited", w.gm, "Sube Cachas")


def test_the_owner_edits_a_draft(aventuras_world):
    w = aventuras_world
    Character.objects.filter(pk=w.pc.pk).update(status="draft")
    page = w.client("player").get(url("sheets:sheet-edit", w, w.pc)).content.decode()
    assert 'name="reason"' not in page and "Aullido" in page and "Varita" in page
    response = w.client("player").post(url("sheets:sheet-edit", w, w.pc), sheet_post(name="Palomita Loba"))
    assert response.status_code == 302
    assert Character.objects.get(pk=w.pc.pk).name == "Palomita Loba"


def test_notes_after_approval(aventuras_world):
    w = aventuras_world
    response = w.client("player").post(url("sheets:sheet-notes", w, w.pc), {"private_notes": "Odia los acertijos."})
    assert response.status_code == 302
    assert Character.objects.get(pk=w.pc.pk).private_notes == "Odia los acertijos."
    assert w.client("other").post(url("sheets:sheet-notes", w, w.pc), {"private_notes": "x"}).status_code == 403
    assert w.client("outsider").post(url("sheets:sheet-notes", w, w.pc), {"private_notes": "x"}).status_code == 404


# --- health in play ---------------------------------------------------------------------


def health(client, world, character, change, htmx=True, reason=""):
    extra = HTMX if htmx else {}
    return client.post(url("aventuras:sheet-health", world, character), {"change": change, "reason": reason}, **extra)


def test_the_gm_marks_a_health_level_and_gets_the_fragment_back(aventuras_world):
    w = aventuras_world
    response = health(w.client("gm"), w, w.pc, "-1", reason="Mordisco de un troll")
    page = response.content.decode()
    assert response.status_code == 200
    assert page.lstrip().startswith('<section id="sheet-play"') and "<html" not in page
    assert "<strong>4</strong> de 5 niveles de salud" in page
    assert AventurasSheet.objects.get(pk=w.pc.pk).health_lost == 1
    event = SheetEvent.objects.get(character=w.pc)
    assert (event.kind, event.actor, event.reason, event.summary) == (
        AventurasEvent.HEALTH,
        w.gm,
        "Mordisco de un troll",
        "Salud 4/5",
    )


def test_without_htmx_health_redirects_and_refusals_come_back_in_spanish(aventuras_world):
    w = aventuras_world
    player = w.client("player")
    response = health(player, w, w.pc, "-1", htmx=False)
    assert response.status_code == 302 and response["Location"] == w.pc.get_absolute_url()
    assert health(player, w, w.pc, "1", htmx=False).status_code == 302
    SheetEvent.objects.filter(character=w.pc).delete()
    # Refused: the whole page again with the refusal in Spanish (and what was typed).
    response = health(player, w, w.pc, "1", htmx=False, reason="Una siesta")
    page = response.content.decode()
    assert response.status_code == 200 and "<html" in page
    assert "Ya tiene todos sus niveles de salud." in page and 'value="Una siesta"' in page
    page = health(player, w, w.pc, "5").content.decode()
    assert "Indica si pierde o recupera niveles de salud." in page and 'role="alert"' in page
    assert not SheetEvent.objects.filter(character=w.pc).exists()


def test_who_may_mark_health(aventuras_world):
    """The GM or the owner; nobody else."""
    w = aventuras_world
    assert health(w.client("outsider"), w, w.pc, "-1").status_code == 404
    assert health(w.client("other"), w, w.pc, "-1").status_code == 403
    assert health(w.client("reader"), w, w.pc, "-1").status_code == 403
    assert health(w.client("player"), w, w.pc, "-1").status_code == 200
    assert SheetEvent.objects.get(character=w.pc).actor == w.player
    assert 'value="-1"' not in w.client("other").get(w.pc.get_absolute_url()).content.decode()
    # A player does not even see the GM's NPC.
    assert health(w.client("player"), w, w.npc, "-1").status_code == 404


# --- states in play ---------------------------------------------------------------------


def state_post(**overrides) -> dict:
    return {"name": "Hambriento", "modifier": "-1", "threshold": "harder", "applies_to": "física", **overrides}


def test_a_state_with_its_dice_threshold_and_actions(aventuras_world):
    """A3 — «una penalización de –1, tiras un dado menos»; A7 — «solo con 5 o más»."""
    w = aventuras_world
    gm = w.client("gm")
    response = gm.post(url("aventuras:sheet-state-add", w, w.pc), state_post(reason="No desayunó"), **HTMX)
    page = response.content.decode()
    assert response.status_code == 200 and page.lstrip().startswith('<section id="sheet-play"')
    assert "Hambriento" in page and "−1 dado" in page and "éxito solo con 5 o más" in page
    assert "acciones de tipo física" in page
    state = AventurasState.objects.get(sheet=w.pc.aventuras)
    assert (state.modifier, state.threshold, state.applies_to, state.for_free) == (-1, "harder", "física", False)
    event = SheetEvent.objects.get(character=w.pc)
    assert (event.kind, event.reason) == (AventurasEvent.STATE, "No desayunó")

    page = gm.post(url("aventuras:sheet-state-remove", w, w.pc, state.pk), {"reason": "Comió"}, **HTMX)
    assert "Sin estados." in page.content.decode()
    assert not AventurasState.objects.filter(pk=state.pk).exists()
    assert SheetEvent.objects.filter(character=w.pc, kind=AventurasEvent.STATE).count() == 2


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"modifier": "6"}, "Escribe un número de 5 o menos."),
        ({"threshold": "imposible"}, "Esa opción no está en la lista."),
        ({"applies_to": "mágica"}, "Esa opción no está en la lista."),
        ({"name": "  "}, "Este campo es obligatorio."),
    ],
)
def test_a_bad_state_is_refused_keeping_what_was_typed(aventuras_world, overrides, message):
    w = aventuras_world
    data = state_post(name="Cansadísimo", **overrides) if "name" not in overrides else state_post(**overrides)
    for extra in (HTMX, {}):
        response = w.client("player").post(url("aventuras:sheet-state-add", w, w.pc), data, **extra)
        page = response.content.decode()
        assert response.status_code == 200 and message in page
        # Django's own «Escoja una opción válida» (usted) never shows: the site says it in tú.
        assert "Escoja" not in page
        if "name" not in overrides:
            assert 'value="Cansadísimo"' in page
    assert not AventurasState.objects.exists()


def test_a_state_por_el_morro_shows_its_badge_and_scene_and_only_the_gm_removes_it(aventuras_world):
    """A27 — «Un estado por el morro dura una escena»: the sheet shows it, the owner may not take it off."""
    w = aventuras_world
    state = AventurasState.objects.create(
        sheet=w.pc.aventuras, name="Cansado", modifier=-1, for_free=True, scene=w.scene
    )
    page = w.client("player").get(w.pc.get_absolute_url()).content.decode()
    assert "por el morro" in page and "Dura la escena «La puerta del acertijo» (A27)." in page
    assert url("aventuras:sheet-state-remove", w, w.pc, state.pk) not in page
    response = w.client("player").post(url("aventuras:sheet-state-remove", w, w.pc, state.pk), {}, **HTMX)
    assert "solo la dirección puede quitarlo antes" in response.content.decode()
    assert AventurasState.objects.filter(pk=state.pk).exists()
    w.client("gm").post(url("aventuras:sheet-state-remove", w, w.pc, state.pk), {"reason": "Acaba la escena"})
    assert not AventurasState.objects.filter(pk=state.pk).exists()


def test_the_state_form_never_makes_one_por_el_morro(aventuras_world):
    """A27 — that one gives a hero point: the hero points package makes it."""
    w = aventuras_world
    w.client("gm").post(url("aventuras:sheet-state-add", w, w.pc), state_post(for_free="on", reason="Sin comer"))
    assert AventurasState.objects.get().for_free is False
    assert AventurasSheet.objects.get(pk=w.pc.pk).hero_points == 5


def test_a_state_of_another_sheet_is_not_removed(aventuras_world):
    w = aventuras_world
    other = AventurasState.objects.create(sheet=w.other_pc.aventuras, name="Pegajosa")
    page = w.client("gm").post(url("aventuras:sheet-state-remove", w, w.pc, other.pk), {"reason": "Ya comió"}, **HTMX)
    page = page.content.decode()
    assert "Ese estado no está en esta ficha." in page
    assert AventurasState.objects.filter(pk=other.pk).exists()


# --- experience ---------------------------------------------------------------------------


def test_the_gm_sets_experience_with_a_reason(aventuras_world):
    w = aventuras_world
    gm = w.client("gm")
    page = gm.post(url("aventuras:sheet-experience", w, w.pc), {"experience": "6", "reason": ""}, **HTMX)
    assert "Indica el motivo." in page.content.decode()
    page = gm.post(url("aventuras:sheet-experience", w, w.pc), {"experience": "6", "reason": "Fin de aventura"}, **HTMX)
    assert page.status_code == 200
    assert AventurasSheet.objects.get(pk=w.pc.pk).experience == 6
    event = SheetEvent.objects.get(character=w.pc)
    assert (event.kind, event.reason, event.before, event.after) == (
        AventurasEvent.EXPERIENCE,
        "Fin de aventura",
        {"experience": 4},
        {"experience": 6},
    )
    assert w.client("player").post(url("aventuras:sheet-experience", w, w.pc), {"experience": "60"}).status_code == 403
    assert 'name="experience"' not in w.client("player").get(w.pc.get_absolute_url()).content.decode()


# --- the pages, whole and as fragments ---------------------------------------------


def test_detail_whole_page_and_fragment(aventuras_world):
    """A2 — each attribute with the dice it rolls; A21 — the hero points, read only."""
    w = aventuras_world
    client = w.client("player")
    page = client.get(w.pc.get_absolute_url()).content.decode()
    assert "<html" in page and "Palomita" in page and "Mazorca lobo" in page
    assert "destacado · 3" in page and "destacado · 4" in page
    assert page.count("2 dados") >= 2 and "3 dados" in page and "4 dados" in page
    assert "5 puntos de Héroe" in page and "Aullido" in page and "necesita un punto de Héroe" in page
    assert "+1 a Cerebrito" in page and "Le pueden los acertijos" in page
    fragment = client.get(w.pc.get_absolute_url(), **HTMX).content.decode()
    assert fragment.lstrip().startswith('<section id="sheet-play"') and "<html" not in fragment


def test_the_hero_points_panel_is_included_with_what_it_reads(aventuras_world, monkeypatch):
    """The hero points package's panel goes in the sheet's part in play, with its context."""
    w = aventuras_world
    seen = []

    def panel(character, access):
        seen.append((character.pk, access.is_gm))
        return {"aventuras_heroes_template": "aventuras/sheet/_state.html", "sheet": character.aventuras}

    monkeypatch.setattr("systems.aventuras.sheet.views.sheet_panel", panel)
    fragment = w.client("gm").get(w.pc.get_absolute_url(), **HTMX).content.decode()
    assert '<span class="sheet-state">Salud 5/5</span>' in fragment
    assert seen == [(w.pc.pk, True)]


def test_detail_shows_other_players_only_the_public_part(aventuras_world):
    w = aventuras_world
    page = w.client("other").get(w.pc.get_absolute_url()).content.decode()
    assert "Palomita" in page and "Le pueden los acertijos" not in page and "Exportar" not in page
    assert w.client("outsider").get(w.npc.get_absolute_url()).status_code == 404
    assert w.client("player").get(w.npc.get_absolute_url()).status_code == 404


def test_untrusted_text_is_escaped(aventuras_world):
    w = aventuras_world
    AventurasState.objects.create(sheet=w.pc.aventuras, name="<script>alert(1)</script>")
    page = w.client("gm").get(w.pc.get_absolute_url()).content.decode()
    assert "<script>alert(1)</script>" not in page and "&lt;script&gt;" in page


def test_list_whole_page_and_fragment(aventuras_world):
    w = aventuras_world
    page = w.client("gm").get(url("sheets:sheet-list", w)).content.decode()
    assert "Palomita" in page and "Profesor Cacahuete" in page and "Salud 5/5" in page and "Nuevo PNJ" in page
    fragment = w.client("gm").get(url("sheets:sheet-list", w), **HTMX).content.decode()
    assert fragment.lstrip().startswith('<div id="sheet-table"') and "<html" not in fragment
    assert "Profesor Cacahuete" not in w.client("player").get(url("sheets:sheet-list", w)).content.decode()


def test_print_view(aventuras_world):
    w = aventuras_world
    AventurasState.objects.create(sheet=w.pc.aventuras, name="Cansado", for_free=True, scene=w.scene)
    page = w.client("player").get(url("sheets:sheet-print", w, w.pc)).content.decode()
    assert "Volver a la ficha" in page and "Cerebrito" in page and "Varita" in page and "Aullido" in page
    assert "Cansado (por el morro)" in page
    assert w.client("other").get(url("sheets:sheet-print", w, w.pc)).status_code == 403


def test_query_counts_are_pinned(aventuras_world, django_assert_max_num_queries):
    """The sheet and the list read a constant number of rows, however many sheets and states there are."""
    w = aventuras_world
    gm = w.client("gm")
    for n in range(3):
        gm.post(url("aventuras:sheet-state-add", w, w.pc), state_post(name=f"Estado {n}", reason="Pelea"))
    AventurasState.objects.create(sheet=w.pc.aventuras, name="Cansado", for_free=True, scene=w.scene)
    player = w.client("player")
    with django_assert_max_num_queries(10):
        assert player.get(w.pc.get_absolute_url()).status_code == 200
    with django_assert_max_num_queries(4):
        assert player.get(w.pc.get_absolute_url()).status_code == 200
    with django_assert_max_num_queries(10):
        assert gm.get(w.npc.get_absolute_url()).status_code == 200
    for n in range(4):
        aventuras_character(w.campaign, w.other, f"Extra {n}")
    with django_assert_max_num_queries(5):
        assert gm.get(url("sheets:sheet-list", w)).status_code == 200
    with django_assert_max_num_queries(6):
        assert player.get(url("sheets:sheet-list", w)).status_code == 200
    with django_assert_max_num_queries(9):
        assert player.get(url("sheets:sheet-print", w, w.pc)).status_code == 200
    with django_assert_max_num_queries(17):
        response = gm.post(url("aventuras:sheet-health", w, w.pc), {"change": "-1", "reason": "Mordisco"}, **HTMX)
        assert response.status_code == 200
    assert AventurasSheet.objects.get(pk=w.pc.pk).health_lost == 1


def test_only_the_owner_submits_a_draft(aventuras_world):
    w = aventuras_world
    Character.objects.filter(pk=w.pc.pk).update(status="draft")
    submit = url("sheets:sheet-submit", w, w.pc)
    assert w.client("outsider").post(submit).status_code == 404
    assert w.client("other").post(submit).status_code == 404
    assert w.client("gm").post(submit).status_code == 403
    assert w.client("player").post(submit).status_code == 302
    assert w.client("player").post(submit).status_code == 403
    assert list(SheetEvent.objects.filter(character=w.pc).values_list("kind", flat=True)) == ["submitted"]


def test_the_history_names_the_changes_in_play(aventuras_world):
    """Who, when, why: the shared history page lists health, states and experience."""
    w = aventuras_world
    gm = w.client("gm")
    health(gm, w, w.pc, "-1", reason="Golpe del Rey Helado")
    gm.post(url("aventuras:sheet-state-add", w, w.pc), state_post(reason="Sin desayuno"))
    page = w.client("player").get(url("sheets:sheet-history", w, w.pc)).content.decode()
    assert "salud" in page and "Golpe del Rey Helado" in page
    assert "estados" in page and "Hambriento" in page and "Sin desayuno" in page


def test_wrong_methods_are_refused(aventuras_world):
    w = aventuras_world
    gm = w.client("gm")
    assert gm.get(url("aventuras:sheet-health", w, w.pc)).status_code == 405
    assert gm.get(url("aventuras:sheet-state-add", w, w.pc)).status_code == 405
    assert gm.get(url("aventuras:sheet-experience", w, w.pc)).status_code == 405
    assert gm.post(url("sheets:sheet-print", w, w.pc)).status_code == 405
    assert gm.post(url("sheets:sheet-export", w, w.pc)).status_code == 405
    assert gm.get(url("sheets:sheet-submit", w, w.pc)).status_code == 405


def test_the_actions_in_play_resolve_to_this_sheets_views(aventuras_world):
    """No other address (another system's, or another package's) shadows the sheet's actions."""
    from django.urls import resolve

    from systems.aventuras.sheet import views

    w = aventuras_world
    assert resolve(url("aventuras:sheet-health", w, w.pc)).func is views.health_update
    assert resolve(url("aventuras:sheet-state-add", w, w.pc)).func is views.state_create
    assert resolve(url("aventuras:sheet-state-remove", w, w.pc, 7)).func is views.state_delete
    assert resolve(url("aventuras:sheet-experience", w, w.pc)).func is views.experience_update


def test_another_systems_campaign_keeps_its_own_pages(aventuras_world):
    w = aventuras_world
    hitos = CampaignFactory(gm=w.gm, system="hitos")
    hitos_sheet = CharacterFactory(campaign=hitos, owner=w.gm, kind="npc")
    response = w.client("gm").post(
        reverse("aventuras:sheet-health", args=[hitos.slug, hitos_sheet.pk]), {"change": "-1"}
    )
    assert response.status_code == 404
