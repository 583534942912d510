import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from sheets.models import Character, SheetEvent
from systems.hitos.models import Aspect, HitosSheet
from tests.systems.hitos.sheet.factories import SkillFactory

pytestmark = pytest.mark.django_db


def _namespace(name: str) -> str:
    """HITOS's own sheet actions live in its namespace; the shared pages in ``sheets``."""
    return (
        "hitos"
        if name in {"meter-update", "drama-update", "aspect-create", "aspect-update", "session-new", "scene-new"}
        else "sheets"
    )


def _url(name, world, *args):
    return reverse(f"{_namespace(name)}:{name}", args=[world.campaign.slug, *args])


def _sheet_post(**overrides):
    data = {
        "name": "Julia Romero",
        "concept": "Periodista sin miedo",
        "cita": "La verdad no se entierra.",
        "fortaleza": "4",
        "trait_fortaleza": "Correosa",
        "reflejos": "5",
        "trait_reflejos": "Atenta",
        "voluntad": "6",
        "trait_voluntad": "Terca",
        "intelecto": "5",
        "trait_intelecto": "Curiosa",
        "hitos": "Destapó un escándalo\nSobrevivió a un incendio",
        "complications": "Deudas de juego",
        "drama": "5",
        "degeneracion": "0",
        "armour": "",
        "rd": "0",
        "secuelas_temporales": "",
        "secuelas_permanentes": "",
        "public_description": "Alta, con gabardina.",
        "private_notes": "",
        "skills-TOTAL_FORMS": "2",
        "skills-INITIAL_FORMS": "0",
        "skills-MIN_NUM_FORMS": "0",
        "skills-MAX_NUM_FORMS": "40",
        "skills-0-name": "Periodismo",
        "skills-0-category": "profesion",
        "skills-0-value": "6",
        "skills-1-name": "Pelea",
        "skills-1-category": "combate",
        "skills-1-value": "3",
        "weapons-TOTAL_FORMS": "1",
        "weapons-INITIAL_FORMS": "0",
        "weapons-MIN_NUM_FORMS": "0",
        "weapons-MAX_NUM_FORMS": "20",
        "weapons-0-name": "Navaja",
        "weapons-0-damage_code": "C",
        "weapons-0-melee": "1",
        "weapons-0-notes": "",
    }
    data.update(overrides)
    return data


def test_player_creates_a_sheet_and_the_rules_compute_its_scores(world):
    client = world.client("player")
    page = client.get(_url("sheet-create", world))
    assert page.status_code == 200
    assert 'id="sheet-preview"' in page.text and "css/sheets.css" in page.text
    response = client.post(_url("sheet-create", world), _sheet_post())
    character = Character.objects.get(name="Julia Romero")
    assert response.status_code == 302 and response.url == character.get_absolute_url()
    assert character.status == "draft" and character.owner == world.player and character.hitos.drama_points == 5
    assert character.hitos.aguante == 7 and character.hitos.entereza == 8
    assert character.hitos.scores["defensa"].value == 5 + 3 + 5
    assert [(s.name, s.category, s.value) for s in character.skills.all()] == [
        ("Periodismo", "profesion", 6),
        ("Pelea", "combate", 3),
    ]
    phrases = {(a.kind, a.phrase) for a in character.aspects.all()}
    assert ("concept", "Periodista sin miedo") in phrases and ("trait", "Terca") in phrases
    assert ("hito", "Sobrevivió a un incendio") in phrases and ("complication", "Deudas de juego") in phrases
    assert character.weapons.get().damage_code == "C"
    assert SheetEvent.objects.get(character=character).kind == "created"


def test_the_derived_scores_update_before_saving_with_htmx(world):
    client = world.client("player")
    response = client.post(
        _url("sheet-create", world),
        _sheet_post(fortaleza="9", voluntad="8", preview="1"),
        headers={"HX-Request": "true"},
    )
    assert response.status_code == 200
    assert response.text.lstrip().startswith('<section id="sheet-preview"')
    assert "<html" not in response.text
    # Aguante 9 + 8 ÷ 2 = 13, shown with its formula.
    assert '<span class="derived-value" data-score="aguante">13</span>' in response.text
    assert "9 + 8 ÷ 2 = 13" in response.text
    assert "Características: 27 puntos repartidos; la partida prevé 20." in response.text
    assert not Character.objects.filter(name="Julia Romero").exists()


def test_the_preview_works_without_javascript_and_keeps_what_was_typed(world):
    response = world.client("player").post(_url("sheet-create", world), _sheet_post(fortaleza="9", preview="1"))
    assert response.status_code == 200
    assert 'value="9"' in response.text and "9 + 6 ÷ 2 = 12" in response.text
    assert not Character.objects.filter(name="Julia Romero").exists()


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("fortaleza", "11", "Fortaleza debe estar entre 1 y 10, no 11."),
        ("intelecto", "0", "Intelecto debe estar entre 1 y 10, no 0."),
        ("reflejos", "mucho", "Escribe un número entero entre 1 y 10."),
        ("skills-1-category", "magia", "Escoja una opción válida"),
        ("weapons-0-damage_code", "2d6", "Código de daño desconocido"),
    ],
)
def test_bad_sheet_input_saves_nothing_and_keeps_what_was_typed(world, field, value, message):
    response = world.client("player").post(_url("sheet-create", world), _sheet_post(**{field: value}))
    assert response.status_code == 200
    assert message in response.text
    assert "Revisa los campos marcados: no se ha guardado nada." in response.text
    assert f'value="{value}"' in response.text or f'<option value="{value}"' not in response.text
    assert "Julia Romero" in response.text
    assert not Character.objects.filter(name="Julia Romero").exists()


def test_budget_warnings_are_guidance_and_profesion_is_asked_for(world):
    data = _sheet_post(**{"skills-0-category": "cultura"})
    response = world.client("player").post(_url("sheet-create", world), data, follow=True)
    assert response.status_code == 200
    assert "Falta al menos una habilidad de Profesión." in response.text
    assert "Habilidades: 9 puntos repartidos; la partida prevé 40." in response.text
    assert Character.objects.filter(name="Julia Romero").exists()


def test_submit_review_return_and_approve(world):
    sheet = world.sheet
    sheet.status = "draft"
    sheet.save()
    player, gm = world.client("player"), world.client("gm")
    assert player.post(_url("sheet-submit", world, sheet.pk)).status_code == 302
    sheet.refresh_from_db()
    assert sheet.status == "submitted"
    # While it waits, the owner no longer edits it.
    assert player.get(_url("sheet-edit", world, sheet.pk)).status_code == 403
    page = gm.get(sheet.get_absolute_url())
    assert "Revisión de la dirección" in page.text
    response = gm.post(_url("sheet-review", world, sheet.pk), {"decision": "return", "comment": ""})
    assert response.status_code == 200 and "Explica qué hay que cambiar." in response.text
    gm.post(_url("sheet-review", world, sheet.pk), {"decision": "return", "comment": "Falta la <b>profesión</b>"})
    sheet.refresh_from_db()
    assert sheet.status == "returned" and sheet.review_comment == "Falta la <b>profesión</b>"
    page = player.get(sheet.get_absolute_url())
    assert "Falta la &lt;b&gt;profesión&lt;/b&gt;" in page.text
    assert player.get(_url("sheet-edit", world, sheet.pk)).status_code == 200
    player.post(_url("sheet-submit", world, sheet.pk))
    response = gm.post(_url("sheet-review", world, sheet.pk), {"decision": "approve", "comment": ""})
    assert response.status_code == 200
    assert "La ficha se aparta del presupuesto de creación" in response.text
    sheet.refresh_from_db()
    assert sheet.status == "submitted"
    gm.post(_url("sheet-review", world, sheet.pk), {"decision": "approve", "comment": "", "accept_budget": "on"})
    sheet.refresh_from_db()
    assert sheet.status == "approved" and sheet.hitos.budget_accepted and sheet.reviewed_by == world.gm
    assert player.get(_url("sheet-edit", world, sheet.pk)).status_code == 403
    kinds = list(SheetEvent.objects.filter(character=sheet).order_by("id").values_list("kind", flat=True))
    assert kinds == ["submitted", "returned", "submitted", "approved"]
    texts = list(world.player.notifications.order_by("id").values_list("text", flat=True))
    assert texts == [
        "La dirección te ha devuelto la ficha «Inés»: Falta la <b>profesión</b>",
        "La dirección ha aprobado tu ficha «Inés».",
    ]
    assert list(Character.objects.filter(campaign=world.campaign).submitted()) == []


def test_after_approval_the_owner_still_edits_notes(world):
    response = world.client("player").post(
        _url("sheet-notes", world, world.sheet.pk),
        {"private_notes": "Sospecho del mayordomo", "public_description": "Lleva sombrero"},
    )
    assert response.status_code == 302
    world.sheet.refresh_from_db()
    assert world.sheet.private_notes == "Sospecho del mayordomo"
    assert world.sheet.public_description == "Lleva sombrero"


def test_gm_edits_an_approved_sheet_and_marks_that_no_longer_fit_are_dropped(world):
    sheet = world.sheet
    sheet.hitos.health_slashes = 14
    sheet.hitos.save()
    data = _sheet_post(name="Inés", fortaleza="2", voluntad="4", drama_points="3", gm_notes="Es la heredera")
    response = world.client("gm").post(_url("sheet-edit", world, sheet.pk), data)
    assert response.status_code == 302
    sheet.refresh_from_db()
    assert sheet.hitos.fortaleza == 2 and sheet.hitos.health_meter.capacity == 12 and sheet.hitos.health_slashes == 12
    assert sheet.hitos.drama_points == 3 and sheet.gm_notes == "Es la heredera"
    assert SheetEvent.objects.filter(character=sheet, kind="edited", actor=world.gm).exists()


def test_sheet_page_shows_meters_with_a_text_equivalent_and_escapes_names(world):
    sheet = world.sheet
    sheet.name = '<script>alert("x")</script>'
    sheet.hitos.health_slashes, sheet.hitos.health_crosses = 4, 3
    sheet.save()
    sheet.hitos.save()
    Aspect.objects.create(character=sheet, kind="hito", phrase="<img src=x onerror=alert(1)>")
    response = world.client("player").get(sheet.get_absolute_url())
    assert response.status_code == 200
    text = response.text
    assert '<script>alert("x")</script>' not in text and "&lt;script&gt;" in text
    assert "<img src=x" not in text
    assert "Resistencia: 4 barras y 3 aspas en 15 casillas; quedan 8." in text
    assert "Estado: Herido." in text and "Penalización -2 a todas las acciones." in text
    assert text.count('class="meter-box is-cross"') == 3 and text.count('class="meter-box is-slash"') == 4
    assert "llena: Incapacitado" in text


def test_sheet_detail_htmx_returns_only_the_meters(world):
    response = world.client("player").get(world.sheet.get_absolute_url(), headers={"HX-Request": "true"})
    assert response.status_code == 200
    assert response.text.lstrip().startswith('<section id="sheet-meters"')
    assert "<html" not in response.text


def test_gm_applies_damage_without_javascript_post_redirect_get(world):
    response = world.client("gm").post(
        _url("meter-update", world, world.sheet.pk, "resistencia"),
        {"resistencia-action": "damage", "resistencia-amount": "3", "resistencia-reason": "Mordisco"},
    )
    assert response.status_code == 302 and response.url == world.sheet.get_absolute_url()
    world.sheet.refresh_from_db()
    assert world.sheet.hitos.health_slashes == 3
    event = SheetEvent.objects.get(character=world.sheet)
    assert (event.kind, event.reason, event.actor) == ("damage", "Mordisco", world.gm)


def test_gm_applies_nine_damage_with_htmx_and_sees_the_roll_and_the_state(world, fake_rolls):
    rolls = fake_rolls([5, 7, 8])  # 7 + 5 = 12: passed
    response = world.client("gm").post(
        _url("meter-update", world, world.sheet.pk, "resistencia"),
        {"resistencia-action": "damage", "resistencia-amount": "9"},
        headers={"HX-Request": "true"},
    )
    assert response.status_code == 200
    assert response.text.lstrip().startswith('<section id="sheet-meters"')
    assert "5 · 7 · 8" in response.text and "éxito" in response.text
    assert rolls.entries[0].get_absolute_url() in response.text
    assert "Resistencia: 9 barras y 0 aspas en 15 casillas; quedan 6." in response.text
    assert "Estado: Herido." in response.text


@pytest.mark.parametrize(
    ("amount", "message"),
    [
        ("-3", "La cantidad no puede ser negativa."),
        ("tres", "Escribe un número entero de 0 o más."),
        ("", "Indica la cantidad."),
    ],
)
def test_bad_damage_is_a_spanish_field_error_and_nothing_changes(world, amount, message):
    for headers in ({}, {"HX-Request": "true"}):
        response = world.client("gm").post(
            _url("meter-update", world, world.sheet.pk, "resistencia"),
            {"resistencia-action": "damage", "resistencia-amount": amount, "resistencia-reason": "Caída"},
            headers=headers,
        )
        assert response.status_code == 200
        assert message in response.text
        assert 'value="Caída"' in response.text
    world.sheet.refresh_from_db()
    assert world.sheet.hitos.health_slashes == 0
    assert not SheetEvent.objects.exists()


def test_roll_actions_fail_closed_in_the_view(world, monkeypatch):
    from django.core.exceptions import ValidationError

    from systems.hitos.sheet import services

    def unavailable(**kwargs):
        raise ValidationError("El registro de tiradas no admite la tirada: no se ha aplicado nada.")

    monkeypatch.setattr(services, "meter_check", unavailable)
    response = world.client("gm").post(
        _url("meter-update", world, world.sheet.pk, "resistencia"),
        {"resistencia-action": "damage", "resistencia-amount": "9"},
    )
    assert response.status_code == 200
    assert "El registro de tiradas no admite la tirada" in response.text
    world.sheet.refresh_from_db()
    assert world.sheet.hitos.health_slashes == 0


def test_owner_marks_own_meters_only_when_the_campaign_allows_it(world):
    url = _url("meter-update", world, world.sheet.pk, "estabilidad")
    data = {"estabilidad-action": "imbalance", "estabilidad-amount": "2"}
    assert world.client("player").post(url, data).status_code == 403
    world.campaign.rules_options = {"players_mark_own_meters": True}
    world.campaign.save(update_fields=["rules_options"])
    assert world.client("player").post(url, data).status_code == 302
    world.sheet.refresh_from_db()
    assert world.sheet.hitos.mental_slashes == 2
    assert world.client("other").post(url, data).status_code == 403


def test_drama_points_spend_and_never_below_zero(world):
    url = _url("drama-update", world, world.sheet.pk)
    client = world.client("gm")
    response = client.post(
        url, {"drama-change": "-1", "drama-reason": "Activa «Terca»"}, headers={"HX-Request": "true"}
    )
    assert response.status_code == 200 and response.text.lstrip().startswith('<section id="sheet-aspects"')
    world.sheet.refresh_from_db()
    assert world.sheet.hitos.drama_points == 4
    world.sheet.hitos.drama_points = 0
    world.sheet.hitos.save()
    response = client.post(url, {"drama-change": "-1"})
    assert response.status_code == 200 and "no tiene puntos dramáticos suficientes (0)" in response.text
    world.sheet.refresh_from_db()
    assert world.sheet.hitos.drama_points == 0


def test_aspects_exhaust_and_recover_and_temporary_aspects_end(world):
    hito = Aspect.objects.create(character=world.sheet, kind="hito", phrase="Sobrevivió a la guerra")
    client = world.client("gm")
    response = client.post(
        _url("aspect-update", world, world.sheet.pk, hito.pk), {"action": "exhaust", "until": "story"}
    )
    assert response.status_code == 302
    hito.refresh_from_db()
    assert hito.exhausted_until == "story"
    client.post(_url("aspect-update", world, world.sheet.pk, hito.pk), {"action": "recover"})
    hito.refresh_from_db()
    assert not hito.exhausted
    response = client.post(
        _url("aspect-create", world, world.sheet.pk),
        {"aspect-phrase": "Empapada", "aspect-duration": "scene", "aspect-origin": "La lluvia"},
        headers={"HX-Request": "true"},
    )
    assert response.status_code == 200 and "Empapada" in response.text
    temp = Aspect.objects.get(phrase="Empapada")
    response = client.post(_url("aspect-update", world, world.sheet.pk, hito.pk), {"action": "end"})
    assert response.status_code == 200 and "Solo se pueden retirar los aspectos temporales." in response.text
    client.post(_url("aspect-update", world, world.sheet.pk, temp.pk), {"action": "end"})
    temp.refresh_from_db()
    assert temp.ended_at is not None


def test_new_session_refreshes_drama_and_ends_session_aspects(world):
    sheet = world.sheet
    sheet.hitos.drama_points = 1
    sheet.hitos.save()
    scene_aspect = Aspect.objects.create(character=sheet, kind="temporary", phrase="Mareada", duration="scene")
    session_aspect = Aspect.objects.create(character=sheet, kind="temporary", phrase="Herida leve", duration="session")
    story_aspect = Aspect.objects.create(character=sheet, kind="temporary", phrase="Maldita", duration="story")
    tired = Aspect.objects.create(character=sheet, kind="hito", phrase="Boxeadora", exhausted_until="session")
    long_tired = Aspect.objects.create(
        character=sheet, kind="hito", phrase="Heredera", exhausted_until="story", position=1
    )
    response = world.client("gm").post(_url("session-new", world), {"reason": "Sesión 2"})
    assert response.status_code == 302
    sheet.refresh_from_db()
    assert sheet.hitos.drama_points == 5
    for aspect in (scene_aspect, session_aspect, story_aspect, tired, long_tired):
        aspect.refresh_from_db()
    assert scene_aspect.ended_at and session_aspect.ended_at and story_aspect.ended_at is None
    assert not tired.exhausted and long_tired.exhausted
    campaign_event = SheetEvent.objects.get(campaign=world.campaign, character__isnull=True)
    assert campaign_event.kind == "new_session" and campaign_event.reason == "Sesión 2"
    page = world.client("gm").get(_url("sheet-list", world))
    assert "1 fichas renovadas, 2 aspectos temporales terminados, 1 aspectos recuperados" in page.text


def test_new_scene_ends_scene_long_aspects_only(world):
    a = Aspect.objects.create(character=world.sheet, kind="temporary", phrase="Cegada", duration="scene")
    b = Aspect.objects.create(character=world.sheet, kind="temporary", phrase="Cansada", duration="session")
    world.client("gm").post(_url("scene-new", world), {"reason": ""})
    a.refresh_from_db()
    b.refresh_from_db()
    assert a.ended_at and b.ended_at is None


def test_gm_creates_an_npc_stat_block_without_drama(world):
    data = {
        "name": "Sectario",
        "concept": "Fanático",
        "fortaleza": "5",
        "reflejos": "4",
        "voluntad": "3",
        "intelecto": "3",
        "rd": "1",
        "damage_code": "C",
        "gm_notes": "",
        "skills-TOTAL_FORMS": "1",
        "skills-INITIAL_FORMS": "0",
        "skills-0-name": "Cuchillo",
        "skills-0-category": "combate",
        "skills-0-value": "3",
    }
    response = world.client("gm").post(_url("npc-create", world), data)
    npc = Character.objects.get(name="Sectario")
    assert response.status_code == 302
    assert npc.is_npc and npc.status == "approved" and npc.hitos.drama_points == 0 and npc.hitos.drama == 0
    assert npc.hitos.aguante == 6 and npc.hitos.scores["defensa"].value == 4 + 3 + 5
    page = world.client("gm").get(npc.get_absolute_url())
    assert "Estabilidad Mental" not in page.text and "Puntos dramáticos" not in page.text
    bad = world.client("gm").post(_url("npc-create", world), {**data, "damage_code": "XYZ", "name": "Otro"})
    assert bad.status_code == 200 and "Código de daño desconocido" in bad.text
    assert world.client("player").get(npc.get_absolute_url()).status_code == 404
    assert world.client("gm").post(_url("drama-update", world, npc.pk), {"drama-change": "1"}).status_code == 403


def test_history_lists_who_when_why_and_the_post(world):
    world.client("gm").post(
        _url("meter-update", world, world.sheet.pk, "resistencia"),
        {"resistencia-action": "damage", "resistencia-amount": "2", "resistencia-reason": "<b>Zarpazo</b>"},
    )
    response = world.client("player").get(_url("sheet-history", world, world.sheet.pk))
    assert response.status_code == 200
    assert "&lt;b&gt;Zarpazo&lt;/b&gt;" in response.text
    assert "∕∕·············" in response.text and world.gm.public_name in response.text
    partial = world.client("player").get(_url("sheet-history", world, world.sheet.pk), headers={"HX-Request": "true"})
    assert partial.text.lstrip().startswith('<div id="history-entries">') and "<html" not in partial.text


def test_export_json_and_import_it_back(world):
    SkillFactory(character=world.sheet, name="Medicina", category="profesion", value=5)
    Aspect.objects.create(character=world.sheet, kind="concept", phrase="Heredera")
    world.sheet.gm_notes = "Secreto"
    world.sheet.save()
    response = world.client("player").get(_url("sheet-export", world, world.sheet.pk))
    assert response.status_code == 200 and response["Content-Type"].startswith("application/json")
    data = json.loads(response.content)
    assert data["format"] == "hitos-ficha/v1" and data["name"] == "Inés" and "gm_notes" not in data
    assert data["skills"] == [{"name": "Medicina", "category": "profesion", "value": 5}]
    upload = SimpleUploadedFile("ines.json", json.dumps(data).encode(), content_type="application/json")
    response = world.client("other").post(_url("sheet-import", world), {"file": upload})
    copy = Character.objects.get(owner=world.other)
    assert response.status_code == 302
    assert copy.status == "draft" and copy.name == "Inés" and copy.skills.get().name == "Medicina"
    assert copy.aspects.get(kind="concept").phrase == "Heredera"
    assert SheetEvent.objects.get(character=copy).kind == "imported"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"esto no es json", "El archivo no es una ficha de HITOS exportada desde este sitio."),
        (b'{"hola": 1}', "El archivo no es una ficha de HITOS exportada desde este sitio."),
        (
            b'{"format": "hitos-ficha/v1", "name": "X", "concept": "Y", "drama": 5, '
            b'"characteristics": {"fortaleza": 12, "reflejos": 5, "voluntad": 5, "intelecto": 5}}',
            "Fortaleza debe estar entre 1 y 10, no 12.",
        ),
        (
            b'{"format": "hitos-ficha/v1", "name": "X", "concept": "Y", "drama": 5, '
            b'"characteristics": {"fortaleza": 5, "reflejos": 5, "voluntad": 5, "intelecto": 5}, '
            b'"skills": [{"name": "Magia", "category": "hechiceria", "value": 3}]}',
            "Escoja una opción válida",
        ),
    ],
)
def test_import_of_something_that_is_not_a_sheet_saves_nothing(world, content, message):
    upload = SimpleUploadedFile("x.json", content, content_type="application/json")
    response = world.client("player").post(_url("sheet-import", world), {"file": upload})
    assert response.status_code == 200
    assert message in response.text
    assert Character.objects.count() == 1


def test_print_page_is_standalone_html(world):
    response = world.client("gm").get(_url("sheet-print", world, world.sheet.pk))
    assert response.status_code == 200
    assert 'class="sheet-print"' in response.text and "Resistencia: 0 barras" in response.text
    assert 'id="menu-principal"' not in response.text


def test_sheet_options_change_what_members_see(world):
    client = world.client("other")
    assert world.sheet.name in client.get(_url("sheet-list", world)).text
    assert client.get(world.sheet.get_absolute_url()).status_code == 200
    world.client("gm").post(_url("sheet-options", world), {"visibility": "gm"})
    assert client.get(world.sheet.get_absolute_url()).status_code == 404
    assert world.sheet.name not in client.get(_url("sheet-list", world)).text


def test_other_members_see_only_the_public_part(world):
    sheet = world.sheet
    sheet.private_notes = "Nota secreta"
    sheet.gm_notes = "Nota del DJ"
    sheet.hitos.health_slashes = 6
    sheet.save()
    sheet.hitos.save()
    Aspect.objects.create(character=sheet, kind="hito", phrase="Hito público")
    Aspect.objects.create(character=sheet, kind="complication", phrase="Complicación privada")
    text = world.client("other").get(sheet.get_absolute_url()).text
    assert "Hito público" in text and "Resistencia: Herido" in text
    for secret in ("Nota secreta", "Nota del DJ", "Complicación privada", "Puntuaciones derivadas", "meter-box"):
        assert secret not in text
    owner_text = world.client("player").get(sheet.get_absolute_url()).text
    assert "Nota secreta" in owner_text and "Nota del DJ" not in owner_text
    assert "Nota del DJ" in world.client("gm").get(sheet.get_absolute_url()).text


def test_a_history_restore_request_gets_the_whole_page(world):
    response = world.client("player").get(
        world.sheet.get_absolute_url(), headers={"HX-Request": "true", "HX-History-Restore-Request": "true"}
    )
    assert "<html" in response.text
    assert "HX-Request" in response["Vary"]


def test_aspect_action_with_htmx_returns_the_aspects_fragment(world):
    hito = Aspect.objects.create(character=world.sheet, kind="hito", phrase="Boxeadora")
    response = world.client("gm").post(
        _url("aspect-update", world, world.sheet.pk, hito.pk),
        {"action": "exhaust", "until": "session"},
        headers={"HX-Request": "true"},
    )
    assert response.status_code == 200
    assert response.text.lstrip().startswith('<section id="sheet-aspects"') and "<html" not in response.text
    assert "agotado hasta la próxima sesión" in response.text


def test_edit_preview_with_htmx_returns_the_scores_of_what_is_typed(world):
    response = world.client("gm").post(
        _url("sheet-edit", world, world.sheet.pk),
        _sheet_post(name="Inés", intelecto="10", preview="1"),
        headers={"HX-Request": "true"},
    )
    assert response.status_code == 200 and "<html" not in response.text
    assert "6 + 10 ÷ 2 = 11" in response.text  # Entereza
    world.sheet.refresh_from_db()
    assert world.sheet.hitos.intelecto == 5


def test_npc_preview_with_htmx(world):
    data = {
        "name": "Perro",
        "fortaleza": "6",
        "reflejos": "6",
        "voluntad": "2",
        "intelecto": "1",
        "rd": "0",
        "skills-TOTAL_FORMS": "0",
        "skills-INITIAL_FORMS": "0",
        "preview": "1",
    }
    response = world.client("gm").post(_url("npc-create", world), data, headers={"HX-Request": "true"})
    assert response.status_code == 200 and "6 + 2 ÷ 2 = 7" in response.text and "<html" not in response.text
    assert not Character.objects.filter(name="Perro").exists()


def test_gm_edits_an_npc_through_the_same_url(world):
    npc = Character.objects.create(campaign=world.campaign, owner=world.gm, name="Perro", kind="npc", status="approved")
    HitosSheet.objects.create(character=npc, drama=0, drama_points=0)
    page = world.client("gm").get(_url("sheet-edit", world, npc.pk))
    assert page.status_code == 200 and "Código de daño" in page.text and "Complicaciones" not in page.text
    data = {
        "name": "Perro rabioso",
        "fortaleza": "6",
        "reflejos": "6",
        "voluntad": "2",
        "intelecto": "1",
        "rd": "0",
        "damage_code": "mM",
        "skills-TOTAL_FORMS": "0",
        "skills-INITIAL_FORMS": "0",
    }
    assert world.client("gm").post(_url("sheet-edit", world, npc.pk), data).status_code == 302
    npc.refresh_from_db()
    assert (npc.name, npc.hitos.damage_code, npc.hitos.aguante) == ("Perro rabioso", "mM", 7)


def test_a_dying_character_gets_no_periodic_healing_roll(world, fake_rolls):
    rolls = fake_rolls()
    world.sheet.hitos.health_slashes = 15
    world.sheet.hitos.save()
    response = world.client("gm").post(
        _url("meter-update", world, world.sheet.pk, "resistencia"),
        {"resistencia-action": "healing_roll", "resistencia-rested": "on"},
    )
    assert response.status_code == 200
    assert "El estado Moribundo no se recupera con tiradas periódicas." in response.text
    assert rolls.calls == []


def test_npcs_never_show_up_as_approved_characters_on_the_campaign_page(world):
    npc = Character.objects.create(
        campaign=world.campaign, owner=world.gm, name="El Innombrable", kind="npc", status="approved"
    )
    HitosSheet.objects.create(character=npc, drama=0, drama_points=0)
    assert list(Character.objects.filter(campaign=world.campaign).approved()) == [world.sheet]
    page = world.client("player").get(world.campaign.get_absolute_url())
    assert "Inés" in page.text and "El Innombrable" not in page.text


def test_marks_that_no_longer_fit_do_not_break_the_page(world):
    # Lowered in the admin, outside the services: 20 marks on a 15-box meter.
    HitosSheet.objects.filter(pk=world.sheet.pk).update(health_slashes=12, health_crosses=8)
    response = world.client("gm").get(world.sheet.get_absolute_url())
    assert response.status_code == 200
    assert "Resistencia: 7 barras y 8 aspas en 15 casillas; quedan 0." in response.text


def test_preview_keeps_the_scores_while_a_skill_row_is_half_typed(world):
    response = world.client("player").post(
        _url("sheet-create", world),
        _sheet_post(**{"skills-1-category": "magia", "preview": "1"}),
        headers={"HX-Request": "true"},
    )
    assert '<span class="derived-value" data-score="aguante">7</span>' in response.text


def test_when_the_campaign_forbids_it_the_owner_cannot_change_the_description_after_approval(world):
    world.client("gm").post(_url("sheet-options", world), {"visibility": "members"})  # box left unticked
    page = world.client("player").get(world.sheet.get_absolute_url())
    assert 'name="private_notes"' in page.text and 'name="public_description"' not in page.text
    world.client("player").post(
        _url("sheet-notes", world, world.sheet.pk), {"private_notes": "Nota", "public_description": "Cambiada"}
    )
    world.sheet.refresh_from_db()
    assert world.sheet.private_notes == "Nota" and world.sheet.public_description == ""
