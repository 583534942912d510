"""A sheet's export and import round-trip everything the sheet holds, or the
import says plainly what it resets."""

import json

import pytest
from django.contrib.messages import get_messages
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from sheets.models import Character, SheetEvent
from systems.hitos.models import Aspect
from systems.hitos.sheet import services
from tests.systems.hitos.sheet.factories import CharacterFactory

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


def _upload(data: dict) -> SimpleUploadedFile:
    return SimpleUploadedFile("ficha.json", json.dumps(data).encode(), content_type="application/json")


def _export(world, who: str, character) -> dict:
    response = world.client(who).get(_url("sheet-export", world, character.pk))
    assert response.status_code == 200
    return json.loads(response.content)


def _import(world, who: str, data: dict):
    return world.client(who).post(_url("sheet-import", world), {"file": _upload(data)})


def _messages(response) -> list[str]:
    return [m.message for m in get_messages(response.wsgi_request)]


def _sheet_in_play(world) -> Character:
    """Inés (Aguante 5, Resistencia 15; Entereza 6, Estabilidad 18) with every
    part of a sheet filled in, damaged on both meters, with a temporary
    aspect and exhausted aspects."""
    sheet, gm = world.sheet, world.gm
    services.sheet_update(
        character=sheet,
        actor=gm,
        data=services.SheetData(
            fields={
                "cita": "Nadie vuelve igual.",
                "degeneracion": 2,
                "armour": "Chaqueta de cuero",
                "rd": 1,
                "secuelas": [{"text": "Mareos", "permanent": False}, {"text": "Cojera", "permanent": True}],
                "public_description": "Pelo gris.",
                "private_notes": "Teme al agua.",
            },
            concept="Médica rural",
            traits={"fortaleza": "Correosa", "voluntad": "Terca"},
            hitos=["Salvó a un pueblo", "Vio al hombre de negro"],
            complications=["Deudas"],
            skills=[("Medicina", "profesion", 6), ("Pelea", "combate", 2)],
            weapons=[("Bisturí", "m", True, "Afilado")],
        ),
    )
    # Resistencia: 4 slashes, shock → 2 crosses, 3 more slashes. Estabilidad: 5, stress → 3 crosses, 2 slashes.
    services.meter_mark(character=sheet, actor=gm, meter=services.HEALTH, amount=4)
    services.meter_shock(character=sheet, actor=gm, meter=services.HEALTH)
    services.meter_mark(character=sheet, actor=gm, meter=services.HEALTH, amount=3)
    services.meter_mark(character=sheet, actor=gm, meter=services.MENTAL, amount=5)
    services.meter_shock(character=sheet, actor=gm, meter=services.MENTAL)
    services.meter_mark(character=sheet, actor=gm, meter=services.MENTAL, amount=2)
    temporary = services.aspect_add_temporary(
        character=sheet, actor=gm, phrase="Empapada", duration=Aspect.Duration.STORY, origin="La riada"
    )
    services.aspect_add_temporary(character=sheet, actor=gm, phrase="Alerta", duration=Aspect.Duration.SCENE)
    services.aspect_change(aspect=temporary, actor=gm, action="exhaust", until=Aspect.Duration.SESSION)
    for kind, until in (("hito", Aspect.Duration.STORY), ("trait", Aspect.Duration.SESSION)):
        aspect = sheet.aspects.filter(kind=kind).order_by("position").last()
        services.aspect_change(aspect=aspect, actor=gm, action="exhaust", until=until)
    sheet.refresh_from_db()
    return sheet


def test_a_sheet_in_play_round_trips_through_export_and_import(world):
    sheet = _sheet_in_play(world)
    assert (
        sheet.hitos.health_slashes,
        sheet.hitos.health_crosses,
        sheet.hitos.mental_slashes,
        sheet.hitos.mental_crosses,
    ) == (3, 2, 2, 3)
    exported = _export(world, "player", sheet)
    assert exported["meters"] == {
        "resistencia": {"slashes": 3, "crosses": 2},
        "estabilidad": {"slashes": 2, "crosses": 3},
    }
    assert exported["temporary_aspects"] == [
        {"phrase": "Empapada", "duration": "story", "origin": "La riada", "exhausted_until": "session"},
        {"phrase": "Alerta", "duration": "scene", "origin": "", "exhausted_until": ""},
    ]
    assert exported["exhausted_aspects"] == [
        {"kind": "hito", "characteristic": "", "phrase": "Vio al hombre de negro", "exhausted_until": "story"},
        {"kind": "trait", "characteristic": "voluntad", "phrase": "Terca", "exhausted_until": "session"},
    ]

    response = _import(world, "other", exported)

    copy = Character.objects.get(owner=world.other)
    assert response.status_code == 302 and response["Location"] == copy.get_absolute_url()
    assert _messages(response) == ["Ficha importada como borrador."]
    copy = Character.objects.prefetch_related("skills", "weapons", "aspects").get(pk=copy.pk)
    again = services.sheet_export(copy, include_gm_notes=False)
    assert again == {**exported, "status": "draft"}
    assert copy.hitos.health_meter.boxes == "××∕∕∕··········" and copy.hitos.health_label == "Herido"
    assert copy.hitos.mental_meter.boxes == "×××∕∕·············" and copy.hitos.mental_label == "Cuerdo"
    assert sorted(
        copy.aspects.filter(kind="temporary").values_list("phrase", "duration", "origin", "exhausted_until")
    ) == [
        ("Alerta", "scene", "", ""),
        ("Empapada", "story", "La riada", "session"),
    ]
    assert list(copy.aspects.exclude(exhausted_until="").exclude(kind="temporary").values_list("kind", "phrase")) == [
        ("hito", "Vio al hombre de negro"),
        ("trait", "Terca"),
    ]
    assert list(SheetEvent.objects.filter(character=copy).values_list("kind", flat=True)) == ["imported"]


def test_a_new_session_recovers_what_an_imported_sheet_had_exhausted(world):
    """The imported flags are the real thing: the next session and story
    clear them as for any sheet."""
    _import(world, "other", _export(world, "player", _sheet_in_play(world)))
    copy = Character.objects.get(owner=world.other)
    services.campaign_new_session(campaign=world.campaign, actor=world.gm)
    assert set(copy.aspects.active().exclude(exhausted_until="").values_list("phrase", flat=True)) == {
        "Vio al hombre de negro"
    }
    assert list(copy.aspects.active().filter(kind="temporary").values_list("phrase", flat=True)) == ["Empapada"]


def test_an_npc_round_trips_with_its_wounds_and_no_sanity_note(world):
    npc = CharacterFactory(
        campaign=world.campaign, owner=world.gm, kind="npc", name="Sectario", drama=0, drama_points=0
    )
    services.meter_mark(character=npc, actor=world.gm, meter=services.HEALTH, amount=4)
    services.aspect_add_temporary(character=npc, actor=world.gm, phrase="Cegado", duration=Aspect.Duration.SCENE)
    exported = _export(world, "gm", npc)

    response = _import(world, "gm", exported)

    copy = Character.objects.exclude(pk=npc.pk).get(name="Sectario")
    assert response.status_code == 302 and _messages(response) == ["PNJ importado."]
    assert (copy.kind, copy.status, copy.hitos.health_slashes) == ("npc", "approved", 4)
    assert copy.aspects.get(kind="temporary").phrase == "Cegado"


def _old_file(world) -> dict:
    """An export from before the meters, temporary aspects and exhausted
    flags were in the file."""
    data = _export(world, "player", _sheet_in_play(world))
    for key in ("meters", "temporary_aspects", "exhausted_aspects"):
        del data[key]
    return data


def test_an_old_file_imports_and_the_message_says_what_was_reset(world):
    data = _old_file(world)
    data["drama_points"] = 2

    response = _import(world, "other", data)

    copy = Character.objects.get(owner=world.other)
    assert response.status_code == 302
    assert _messages(response) == [
        "Ficha importada como borrador. "
        "El archivo no trae las marcas de Resistencia: empieza sin marcas. "
        "El archivo no trae las marcas de Estabilidad Mental: empieza sin marcas. "
        "El archivo no trae los aspectos temporales: la ficha empieza sin ninguno. "
        "El archivo no dice qué aspectos estaban agotados: ninguno empieza agotado. "
        "Los puntos dramáticos empiezan en 5, su Drama (H26); el archivo tenía 2."
    ]
    assert (
        copy.hitos.health_slashes,
        copy.hitos.health_crosses,
        copy.hitos.mental_slashes,
        copy.hitos.mental_crosses,
    ) == (0, 0, 0, 0)
    assert copy.hitos.drama_points == 5
    assert not copy.aspects.filter(kind="temporary").exists()
    assert not copy.aspects.exclude(exhausted_until="").exists()
    assert list(copy.aspects.filter(kind="hito").values_list("phrase", flat=True)) == [
        "Salvó a un pueblo",
        "Vio al hombre de negro",
    ]


def test_a_file_from_before_the_exhausted_flags_keeps_its_marks_and_temporary_aspects(world):
    """Files exported before this change already carried the meters and the
    temporary aspects, without exhaustion."""
    data = _export(world, "player", _sheet_in_play(world))
    del data["exhausted_aspects"]
    for aspect in data["temporary_aspects"]:
        del aspect["exhausted_until"]

    response = _import(world, "other", data)

    copy = Character.objects.get(owner=world.other)
    assert _messages(response) == [
        "Ficha importada como borrador. El archivo no dice qué aspectos estaban agotados: ninguno empieza agotado."
    ]
    assert (
        copy.hitos.health_slashes,
        copy.hitos.health_crosses,
        copy.hitos.mental_slashes,
        copy.hitos.mental_crosses,
    ) == (3, 2, 2, 3)
    assert copy.aspects.filter(kind="temporary").count() == 2
    assert not copy.aspects.exclude(exhausted_until="").exists()


def test_marks_that_do_not_fit_the_new_meter_are_dropped_and_said(world):
    data = _export(world, "player", _sheet_in_play(world))
    data["meters"] = {"resistencia": {"slashes": 10, "crosses": 9}}

    response = _import(world, "other", data)

    copy = Character.objects.get(owner=world.other)
    assert _messages(response) == [
        "Ficha importada como borrador. "
        "Las marcas de Resistencia que no caben en sus 15 casillas se han descartado. "
        "El archivo no trae las marcas de Estabilidad Mental: empieza sin marcas."
    ]
    assert (copy.hitos.health_slashes, copy.hitos.health_crosses) == (6, 9)


def test_a_player_importing_the_gms_export_is_told_the_gm_notes_stay_behind(world):
    sheet = _sheet_in_play(world)
    sheet.gm_notes = "Es la culpable."
    sheet.save()
    data = _export(world, "gm", sheet)
    assert data["gm_notes"] == "Es la culpable."

    response = _import(world, "other", data)

    copy = Character.objects.get(owner=world.other)
    assert copy.gm_notes == ""
    assert _messages(response) == [
        "Ficha importada como borrador. "
        "Las notas de la dirección del archivo no se importan: solo la dirección puede importarlas."
    ]


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        (
            {"meters": {"resistencia": {"slashes": -1, "crosses": 0}}},
            "Resistencia: las barras y las aspas deben ser números enteros de 0 o más.",
        ),
        (
            {"meters": {"estabilidad": {"slashes": "3", "crosses": 0}}},
            "Estabilidad Mental: las barras y las aspas deben ser números enteros de 0 o más.",
        ),
        (
            {"meters": {"resistencia": {"slashes": 2.5, "crosses": True}}},
            "Resistencia: las barras y las aspas deben ser números enteros de 0 o más.",
        ),
        ({"meters": [3, 2]}, "Medidores: el formato no es el de una ficha exportada."),
        ({"temporary_aspects": "Empapada"}, "Aspectos temporales: el formato no es el de una ficha exportada."),
        ({"temporary_aspects": ["Empapada"]}, "Aspecto temporal 1: el formato no es el de una ficha exportada."),
        (
            {"temporary_aspects": [{"phrase": "Empapada", "duration": "scene"}] * 101},
            "Aspectos temporales: como mucho 100 (el archivo trae 101).",
        ),
        (
            {"temporary_aspects": [{"phrase": "Empapada", "duration": "forever"}]},
            "Aspecto temporal 1, duración: Escoja una opción válida. forever no es una de las opciones disponibles.",
        ),
        (
            {"temporary_aspects": [{"phrase": "", "duration": "scene"}]},
            "Aspecto temporal 1, aspecto: Este campo es obligatorio.",
        ),
        (
            {"temporary_aspects": [{"phrase": "x" * 201, "duration": "scene"}]},
            "Aspecto temporal 1, aspecto: Demasiado largo: como mucho 200 caracteres (has escrito 201).",
        ),
        (
            {"temporary_aspects": [{"phrase": "Empapada", "duration": "scene", "exhausted_until": "scene"}]},
            "Aspecto temporal 1, agotado hasta: Un aspecto se agota hasta la próxima sesión o la próxima historia.",
        ),
        (
            {"exhausted_aspects": [{"kind": "temporary", "phrase": "Empapada", "exhausted_until": "session"}]},
            "Aspecto agotado 1: el formato no es el de una ficha exportada.",
        ),
        (
            {"exhausted_aspects": [{"kind": "trait", "characteristic": "suerte", "phrase": "Terca"}]},
            "Aspecto agotado 1: el formato no es el de una ficha exportada.",
        ),
        (
            {"exhausted_aspects": [{"kind": "hito", "phrase": "Salvó a un pueblo", "exhausted_until": "scene"}]},
            "Aspecto agotado 1, agotado hasta: Un aspecto se agota hasta la próxima sesión o la próxima historia.",
        ),
        (
            {"exhausted_aspects": [{"kind": "hito", "phrase": "Ganó la lotería", "exhausted_until": "story"}]},
            "El aspecto agotado «Ganó la lotería» no está entre los aspectos de la ficha.",
        ),
    ],
)
def test_bad_play_values_are_spanish_errors_and_nothing_is_saved(world, changes, message):
    data = {**_export(world, "player", _sheet_in_play(world)), **changes}
    events, aspects = SheetEvent.objects.count(), Aspect.objects.count()

    response = _import(world, "other", data)

    assert response.status_code == 200
    assert message in response.content.decode()
    assert not Character.objects.filter(owner=world.other).exists()
    assert (SheetEvent.objects.count(), Aspect.objects.count()) == (events, aspects)


def test_every_bad_value_of_a_file_is_listed_at_once(world):
    data = {
        **_export(world, "player", _sheet_in_play(world)),
        "meters": {"resistencia": {"slashes": -2}},
        "temporary_aspects": [{"phrase": "Bien", "duration": "scene"}, {"phrase": 3}],
    }
    response = _import(world, "other", data)
    page = response.content.decode()
    assert "Resistencia: las barras y las aspas deben ser números enteros de 0 o más." in page
    assert "Aspecto temporal 2: el formato no es el de una ficha exportada." in page
    assert not Character.objects.filter(owner=world.other).exists()
