"""Export → import of a Hora de Aventuras sheet: the file holds the whole
sheet and its state in play, and an import rebuilds it through the same form
checks, in Spanish, making nothing when the file is wrong."""

import json

from django.contrib.messages import get_messages
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from campaigns.archive import campaign_export, campaign_import
from campaigns.permissions import campaign_access
from sheets.models import Character, SheetEvent
from systems.aventuras.models import AventurasEvent, AventurasSheet, AventurasState, HeroMove
from systems.aventuras.sheet import services


def _export(client, world, character) -> dict:
    response = client.get(reverse("sheets:sheet-export", args=[world.campaign.slug, character.pk]))
    assert response.status_code == 200
    assert response["Content-Disposition"] == f'attachment; filename="{character.name.lower().replace(" ", "-")}.json"'
    return json.loads(response.content)


def _import(client, world, data: dict):
    upload = SimpleUploadedFile("ficha.json", json.dumps(data).encode(), content_type="application/json")
    return client.post(reverse("sheets:sheet-import", args=[world.campaign.slug]), {"file": upload})


def _sheet_values(character: Character) -> dict:
    fresh = Character.objects.select_related("aventuras").get(pk=character.pk)
    data = services.sheet_export(fresh, include_gm_notes=True)
    return {k: v for k, v in data.items() if k not in ("name", "status")}


def test_export_then_import_round_trip(aventuras_world):
    """A2/A21/A23/A25/A29 — attributes, highlighted ones, feats, tools, flaw,
    health lost, experience, hero points and states all come back."""
    w = aventuras_world
    services.health_change(character=w.pc, actor=w.gm, change=-2, reason="Caída")
    services.state_add(
        character=w.pc,
        actor=w.gm,
        name="Pegajosa",
        modifier=-1,
        threshold="harder",
        applies_to="social",
        reason="Sirope",
    )
    AventurasSheet.objects.filter(pk=w.pc.pk).update(hero_points=7)
    data = _export(w.client("player"), w, w.pc)
    assert data["format"] == "aventuras-ficha/v1" and "gm_notes" not in data
    assert (data["highlighted"], data["cachas"], data["health_lost"], data["hero_points"]) == (
        ["cachas", "majo"],
        3,
        2,
        7,
    )
    assert data["tools"] == [{"name": "Varita", "attribute": "cerebrito", "bonus": 1, "uses": "magia"}]

    data["name"] = "Palomita (copia)"
    response = _import(w.client("player"), w, data)
    copy = Character.objects.get(name="Palomita (copia)")
    assert response.status_code == 302 and response["Location"] == copy.get_absolute_url()
    assert (copy.status, copy.owner) == ("draft", w.player)
    # A21 — a player's import starts with five hero points and no
    # experience (the GM sets it); the rest comes back as it was.
    assert _sheet_values(copy) == {**_sheet_values(w.pc), "hero_points": 5, "experience": 0}
    assert SheetEvent.objects.get(character=copy).kind == "imported"
    assert not HeroMove.objects.filter(character=copy).exists()


def test_a_player_cannot_import_points_or_experience(aventuras_world):
    """A21 «cada héroe comienza el juego con cinco puntos de Héroe»; only the GM gives experience."""
    w = aventuras_world
    data = _export(w.client("player"), w, w.pc)
    data.update(name="Palomita tramposa", hero_points=999, experience=9999)
    response = _import(w.client("player"), w, data)
    copy = AventurasSheet.objects.get(character__name="Palomita tramposa")
    assert (copy.hero_points, copy.experience) == (5, 0)
    assert not HeroMove.objects.filter(character_id=copy.pk).exists()
    assert [e.kind for e in SheetEvent.objects.filter(character_id=copy.pk)] == ["imported"]
    [note] = [m.message for m in get_messages(response.wsgi_request)]
    assert "Los puntos de Héroe y la Experiencia del archivo no se importan: empieza con 5 puntos" in note


def test_the_gm_import_keeps_and_records_points_and_experience(aventuras_world):
    w = aventuras_world
    data = _export(w.client("gm"), w, w.pc)
    data.update(name="Palomita veterana", hero_points=8, experience=12)
    assert _import(w.client("gm"), w, data).status_code == 302
    copy = AventurasSheet.objects.get(character__name="Palomita veterana")
    assert (copy.hero_points, copy.experience) == (8, 12)
    [move] = HeroMove.objects.filter(character_id=copy.pk)
    assert (move.kind, move.delta, move.points_after, move.why, move.by) == ("adjust", 3, 8, "importada", w.gm)
    events = {e.kind: e for e in SheetEvent.objects.filter(character_id=copy.pk)}
    assert set(events) == {"imported", AventurasEvent.HERO, AventurasEvent.EXPERIENCE}
    xp = events[AventurasEvent.EXPERIENCE]
    assert (xp.before, xp.after, xp.reason, xp.actor) == ({"experience": 0}, {"experience": 12}, "importada", w.gm)
    # Five points in the file: nothing to adjust.
    data.update(name="Palomita normal", hero_points=5, experience=0)
    assert _import(w.client("gm"), w, data).status_code == 302
    plain = AventurasSheet.objects.get(character__name="Palomita normal")
    assert (plain.hero_points, plain.experience) == (5, 0)
    assert not HeroMove.objects.filter(character_id=plain.pk).exists()


def test_a_state_por_el_morro_does_not_travel(aventuras_world):
    """A27 — it lasted a scene of the campaign it came from (and gave its point there)."""
    w = aventuras_world
    AventurasState.objects.create(sheet=w.pc.aventuras, name="Cansado", for_free=True, scene=w.scene)
    AventurasState.objects.create(sheet=w.pc.aventuras, name="Valiente", modifier=1)
    data = _export(w.client("player"), w, w.pc)
    assert [s["for_free"] for s in data["states"]] == [True, False]
    data["name"] = "Palomita bis"
    assert _import(w.client("player"), w, data).status_code == 302
    copy = AventurasSheet.objects.get(character__name="Palomita bis")
    assert [s.name for s in copy.states.all()] == ["Valiente"]


def test_the_gm_round_trips_an_npc_without_hero_points(aventuras_world):
    """A20 — a GM character has none, and an import does not give it any."""
    w = aventuras_world
    data = _export(w.client("gm"), w, w.npc)
    assert data["hero_points"] is None and data["kind"] == "npc"
    data["name"] = "Otro profesor"
    data["hero_points"] = 3
    assert _import(w.client("gm"), w, data).status_code == 302
    copy = AventurasSheet.objects.get(character__name="Otro profesor")
    assert (copy.character.kind, copy.hero_points, copy.espabilado) == ("npc", None, 3)
    response = _import(w.client("player"), w, data)
    assert "Solo la dirección puede importar PNJ." in response.content.decode()


def test_a_broken_file_is_refused_in_spanish_and_nothing_is_made(aventuras_world):
    w = aventuras_world
    data = _export(w.client("player"), w, w.pc)
    count = Character.objects.count()
    cases = [
        ({"cachas": 9}, "Escribe un número de 6 o menos."),
        ({"tools": [{"name": "Espada", "attribute": "cachas", "bonus": 5}]}, "Herramienta 1, Bonificación"),
        ({"highlighted": ["suerte"]}, "«suerte» no es un atributo."),
        ({"health_lost": -1}, "Niveles de salud perdidos: escribe un número entero de 0 a 20."),
        ({"hero_points": "muchos"}, "Puntos de Héroe: escribe un número entero de 0 o más."),
        ({"states": [{"name": "Raro", "modifier": 8}]}, "Estado 1:"),
    ]
    for bad, message in cases:
        page = _import(w.client("player"), w, {**data, "name": "Mala", **bad}).content.decode()
        assert message in page, bad
    page = _import(w.client("player"), w, {"format": "vaesen-ficha/v1"}).content.decode()
    assert "no es una ficha de Hora de Aventuras" in page
    assert Character.objects.count() == count


def test_export_needs_the_private_part(aventuras_world):
    w = aventuras_world
    url = reverse("sheets:sheet-export", args=[w.campaign.slug, w.pc.pk])
    assert w.client("other").get(url).status_code == 403
    assert w.client("outsider").get(url).status_code == 404
    assert "gm_notes" in _export(w.client("gm"), w, w.pc)


def test_the_campaign_archive_carries_the_aventuras_sheets(aventuras_world):
    """The campaign archive's ``sheets`` part (systems/aventuras/archive.py):
    the GM's holds every sheet; importing it rebuilds them, approved ones approved."""
    w = aventuras_world
    services.health_change(character=w.pc, actor=w.gm, change=-1, reason="Caída")
    archive = json.loads(json.dumps(campaign_export(access=campaign_access(w.gm, w.campaign))))
    assert sorted(item["sheet"]["name"] for item in archive["sheets"]) == [
        "Palomita",
        "Profesor Cacahuete",
        "Tarta Dulce",
    ]
    player_archive = campaign_export(access=campaign_access(w.player, w.campaign))
    assert [item["sheet"]["name"] for item in player_archive["sheets"]] == ["Palomita"]

    imported = campaign_import(data=archive, gm=w.gm)
    new = {c.name: c for c in Character.objects.filter(campaign=imported.campaign).select_related("aventuras")}
    assert sorted(new) == ["Palomita", "Profesor Cacahuete", "Tarta Dulce"]
    assert (new["Palomita"].status, new["Palomita"].owner) == ("approved", w.player)
    assert (new["Palomita"].aventuras.health_lost, new["Palomita"].aventuras.hero_points) == (1, 5)
    assert new["Profesor Cacahuete"].aventuras.hero_points is None
    assert [t.name for t in new["Palomita"].aventuras.tools.all()] == ["Varita"]
