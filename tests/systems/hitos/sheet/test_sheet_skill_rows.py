"""The sheet form grows one skill (or weapon) row at a time (issue 14): with
htmx "Añadir habilidad" fetches one more row and moves the formset's row
count out of band (``sheet_row``); without JavaScript the same button posts
the form, which comes back with one more empty row and everything typed,
unchecked and unsaved. A character with ten skills is made in one save."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from campaigns.models import Visibility
from sheets.models import Character, SheetEvent
from tests.systems.hitos.sheet.factories import SkillFactory
from tests.systems.hitos.sheet.test_views_sheet import _sheet_post

pytestmark = pytest.mark.django_db

HTMX = {"HX-Request": "true"}

TEN_SKILLS = [
    ("Periodismo", "profesion", 6),
    ("Pelea", "combate", 3),
    ("Esquivar", "combate", 2),
    ("Sigilo", "subterfugio", 3),
    ("Historia", "cultura", 2),
    ("Fotografía", "profesion", 2),
    ("Persuasión", "interaccion", 3),
    ("Buscar", "percepcion", 3),
    ("Nadar", "forma_fisica", 1),
    ("Mitos", "ocultismo", 1),
]


def _create_url(world) -> str:
    return reverse("sheets:sheet-create", args=[world.campaign.slug])


def _row_url(world, rows: str = "habilidades") -> str:
    return reverse("hitos:sheet-row", args=[world.campaign.slug, rows])


def _skills(rows) -> dict[str, str]:
    data = {"skills-TOTAL_FORMS": str(len(rows)), "skills-INITIAL_FORMS": "0"}
    for i, (name, category, value) in enumerate(rows):
        data |= {f"skills-{i}-name": name, f"skills-{i}-category": category, f"skills-{i}-value": str(value)}
    return data


def _input(html: str, name: str) -> str:
    """The ``<input>`` tag of field ``name``."""
    found = re.search(rf'<input [^>]*name="{re.escape(name)}"[^>]*>', html)
    assert found is not None, name
    return found.group(0)


def _row_ids(html: str, prefix: str = "skills") -> list[int]:
    return [int(n) for n in re.findall(rf'<fieldset class="sheet-row[^"]*" id="fila-{prefix}-(\d+)"', html)]


# --- The page ------------------------------------------------------------------------------------


def test_the_new_sheet_offers_labelled_rows_and_a_button_for_one_more(world):
    html = world.client("player").get(_create_url(world)).content.decode()
    assert _row_ids(html) == [0, 1, 2] and _row_ids(html, "weapons") == [0]
    for legend in ("Habilidad 1", "Habilidad 3", "Arma 1"):
        assert f'<legend class="fs-6 fw-semibold mb-0">{legend}</legend>' in html
    # Every field of a row has its own label (no table header standing for it).
    for field in ("name", "category", "value", "DELETE"):
        assert f'for="id_skills-2-{field}"' in html
    assert "<th" not in html and "__prefix__" not in html
    button = re.search(r'<button type="submit" name="add_skill"[^>]*>', html).group(0)
    assert f'data-hx-get="{_row_url(world)}"' in button
    assert 'data-hx-include="#id_skills-TOTAL_FORMS"' in button
    assert 'data-hx-target="#filas-skills"' in button and 'data-hx-swap="beforeend"' in button
    assert 'name="add_weapon"' in html and f'data-hx-get="{_row_url(world, "armas")}"' in html
    # Enter in a field saves: the form's first submit button is a hidden "Crear".
    assert html.index('<button type="submit" hidden>Crear</button>') < html.index('name="add_skill"')


def test_an_npc_stat_block_adds_skills_but_has_no_weapons(world):
    html = world.client("gm").get(reverse("sheets:npc-create", args=[world.campaign.slug])).content.decode()
    assert 'name="add_skill"' in html and 'name="add_weapon"' not in html


# --- One more row with htmx ----------------------------------------------------------------------


def test_htmx_gets_one_more_empty_row_and_the_new_row_count(world):
    response = world.client("player").get(_row_url(world), {"skills-TOTAL_FORMS": "3"}, headers=HTMX)
    html = response.content.decode()
    assert response.status_code == 200
    assert "<html" not in html and "<form" not in html
    assert _row_ids(html) == [3]
    assert '<legend class="fs-6 fw-semibold mb-0">Habilidad 4</legend>' in html
    assert " autofocus" in _input(html, "skills-3-name") and 'id="id_skills-3-name"' in _input(html, "skills-3-name")
    assert 'name="skills-3-category"' in html and 'name="skills-3-value"' in html
    assert 'name="skills-3-DELETE"' in html
    assert (
        '<input type="hidden" name="skills-TOTAL_FORMS" value="4" id="id_skills-TOTAL_FORMS" data-hx-swap-oob="true">'
        in html
    )
    assert "Has llegado al máximo" not in html
    assert "HX-Request" in response["Vary"]


def test_htmx_gets_one_more_weapon_row(world):
    response = world.client("player").get(_row_url(world, "armas"), {"weapons-TOTAL_FORMS": "1"}, headers=HTMX)
    html = response.content.decode()
    assert _row_ids(html, "weapons") == [1]
    assert '<legend class="fs-6 fw-semibold mb-0">Arma 2</legend>' in html
    assert 'name="weapons-1-damage_code"' in html and 'name="weapons-1-melee"' in html
    assert 'value="2" id="id_weapons-TOTAL_FORMS" data-hx-swap-oob="true"' in html


def test_the_last_row_allowed_takes_the_button_away(world):
    client = world.client("player")
    html = client.get(_row_url(world), {"skills-TOTAL_FORMS": "39"}, headers=HTMX).content.decode()
    assert _row_ids(html) == [39]
    assert (
        '<p id="anadir-skills" class="small text-body-secondary" data-hx-swap-oob="true">'
        "Has llegado al máximo de 40 habilidades.</p>" in html
    )
    response = client.get(_row_url(world), {"skills-TOTAL_FORMS": "40"}, headers=HTMX)
    assert response.status_code == 400
    assert response.content.decode() == "No se pueden añadir más filas: como mucho 40."


@pytest.mark.parametrize("total", ["", "tres", "-1", "²", "12345"])
def test_a_row_count_that_is_not_a_number_is_a_bad_request(world, total):
    response = world.client("player").get(_row_url(world), {"skills-TOTAL_FORMS": total}, headers=HTMX)
    assert response.status_code == 400
    assert response.content.decode() == "Falta el número de filas que tiene el formulario."


def test_only_skills_and_weapons_grow(world):
    response = world.client("player").get(_row_url(world, "aspectos"), {"aspectos-TOTAL_FORMS": "1"}, headers=HTMX)
    assert response.status_code == 404


def test_without_htmx_the_address_leads_to_the_new_sheet_form(world):
    response = world.client("player").get(_row_url(world), {"skills-TOTAL_FORMS": "3"})
    assert response.status_code == 302 and response.url == _create_url(world)


def test_who_may_ask_for_a_row(world):
    params = {"skills-TOTAL_FORMS": "3"}
    for role in ("player", "gm"):
        assert world.client(role).get(_row_url(world), params, headers=HTMX).status_code == 200, role
    # A reader makes no sheet; a visitor of a public campaign sees it but makes none.
    for role in ("reader", "outsider"):
        assert world.client(role).get(_row_url(world), params, headers=HTMX).status_code == 403, role
    anonymous = world.client("anonymous").get(_row_url(world), params, headers=HTMX)
    assert anonymous.status_code == 302 and anonymous.url.startswith(reverse("accounts:login"))
    world.campaign.visibility = Visibility.PRIVATE
    world.campaign.save(update_fields=["visibility"])
    assert world.client("outsider").get(_row_url(world), params, headers=HTMX).status_code == 404
    assert world.client("outsider").get(_row_url(world), params).status_code == 404
    assert world.client("reader").get(_row_url(world), params).status_code == 403


def test_a_row_is_only_read(world):
    response = world.client("player").post(_row_url(world), {"skills-TOTAL_FORMS": "3"}, headers=HTMX)
    assert response.status_code == 405


def test_a_row_costs_pinned_queries(world, django_assert_max_num_queries):
    client = world.client("player")
    client.get(_row_url(world), {"skills-TOTAL_FORMS": "3"}, headers=HTMX)
    # The session and its user, the campaign, the membership, the sheet options.
    with django_assert_max_num_queries(5):
        client.get(_row_url(world), {"skills-TOTAL_FORMS": "4"}, headers=HTMX)


# --- Ten skills in one save ----------------------------------------------------------------------


def test_a_character_with_ten_skills_is_made_in_one_save(world):
    client = world.client("player")
    page = client.get(_create_url(world)).content.decode()
    rows = len(_row_ids(page))
    # "Añadir habilidad" until there are ten rows, as the browser does it.
    while rows < len(TEN_SKILLS):
        fragment = client.get(_row_url(world), {"skills-TOTAL_FORMS": str(rows)}, headers=HTMX).content.decode()
        rows += 1
        assert f'value="{rows}" id="id_skills-TOTAL_FORMS"' in fragment
    response = client.post(_create_url(world), _sheet_post(**_skills(TEN_SKILLS)))
    character = Character.objects.get(name="Julia Romero")
    assert response.status_code == 302 and response.url == character.get_absolute_url()
    assert sorted((s.name, s.category, s.value) for s in character.skills.all()) == sorted(TEN_SKILLS)


# --- One more row without JavaScript -------------------------------------------------------------


def test_without_javascript_the_button_brings_the_form_back_with_one_more_row(world):
    data = _sheet_post(**_skills(TEN_SKILLS[:3]), name="", add_skill="1")
    response = world.client("player").post(_create_url(world), data)
    html = response.content.decode()
    assert response.status_code == 200
    assert _row_ids(html) == [0, 1, 2, 3]
    assert 'name="skills-TOTAL_FORMS" value="4"' in html
    # Everything typed is kept; the new row is empty and focused.
    for value in ("Periodismo", "Esquivar", "Periodista sin miedo", "Alta, con gabardina.", "Navaja"):
        assert f'value="{value}"' in html or f"{value}</textarea>" in html, value
    assert " autofocus" in _input(html, "skills-3-name")
    assert " autofocus" not in _input(html, "skills-2-name")
    # Nothing is checked yet (the name is still empty) and nothing is saved.
    assert "Revisa los campos marcados" not in html and "Este campo es obligatorio" not in html
    assert "is-invalid" not in html
    assert not Character.objects.filter(campaign=world.campaign).exclude(pk=world.sheet.pk).exists()


def test_without_javascript_a_weapon_row_is_added_the_same_way(world):
    response = world.client("player").post(_create_url(world), _sheet_post(add_weapon="1"))
    html = response.content.decode()
    assert _row_ids(html, "weapons") == [0, 1] and _row_ids(html) == [0, 1]
    assert 'value="Navaja"' in html
    assert not Character.objects.filter(name="Julia Romero").exists()


def test_without_javascript_the_rows_stop_at_the_limit(world):
    rows = [(f"Oficio {n}", "profesion", 1) for n in range(40)]
    response = world.client("player").post(_create_url(world), _sheet_post(**_skills(rows), add_skill="1"))
    html = response.content.decode()
    assert len(_row_ids(html)) == 40 and 'name="add_skill"' not in html
    assert "Has llegado al máximo de 40 habilidades." in html


def test_editing_a_sheet_adds_a_row_and_keeps_its_skills_unsaved(world):
    world.sheet.status = Character.Status.DRAFT
    world.sheet.save(update_fields=["status"])
    SkillFactory(character=world.sheet, name="Medicina", category="profesion", value=4)
    url = reverse("sheets:sheet-edit", args=[world.campaign.slug, world.sheet.pk])
    client = world.client("player")
    page = client.get(url).content.decode()
    assert 'value="Medicina"' in page and _row_ids(page) == [0, 1, 2, 3]
    events = SheetEvent.objects.count()
    data = _sheet_post(
        **{
            "skills-TOTAL_FORMS": "1",
            "skills-INITIAL_FORMS": "1",
            "skills-0-name": "Medicina forense",
            "skills-0-category": "profesion",
            "skills-0-value": "5",
        },
        add_skill="1",
    )
    html = client.post(url, data).content.decode()
    assert _row_ids(html) == [0, 1] and 'value="Medicina forense"' in html
    world.sheet.refresh_from_db()
    assert [s.name for s in world.sheet.skills.all()] == ["Medicina"]
    assert SheetEvent.objects.count() == events


def test_the_gm_adds_a_skill_row_to_an_npc_without_saving_it(world):
    url = reverse("sheets:npc-create", args=[world.campaign.slug])
    data = {
        "name": "El sepulturero",
        "fortaleza": "6",
        "reflejos": "4",
        "voluntad": "5",
        "intelecto": "3",
        "rd": "0",
        **_skills([("Cavar", "forma_fisica", 4)]),
    }
    client = world.client("gm")
    for button in ("add_skill", "add_weapon"):
        html = client.post(url, {**data, button: "1"}).content.decode()
        assert 'value="El sepulturero"' in html and 'value="Cavar"' in html
        assert _row_ids(html) == ([0, 1] if button == "add_skill" else [0])
    assert not Character.objects.filter(name="El sepulturero").exists()
    assert client.post(url, data).status_code == 302
    assert Character.objects.get(name="El sepulturero").skills.get().name == "Cavar"
