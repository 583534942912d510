"""Export → import of a Vaesen sheet: the file holds the whole sheet and its
state in play, and an import rebuilds it through the same form checks."""

import json

from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from campaigns.archive import campaign_export, campaign_import
from campaigns.permissions import campaign_access
from rules.vaesen import Conditions
from sheets.models import Character, SheetEvent
from systems.vaesen.models import VaesenSheet
from systems.vaesen.sheet import services


def _export(client, world, character) -> dict:
    response = client.get(reverse("sheets:sheet-export", args=[world.campaign.slug, character.pk]))
    assert response.status_code == 200
    assert response["Content-Disposition"] == f'attachment; filename="{character.name.lower().replace(" ", "-")}.json"'
    return json.loads(response.content)


def _import(client, world, data: dict):
    upload = SimpleUploadedFile("ficha.json", json.dumps(data).encode(), content_type="application/json")
    return client.post(reverse("sheets:sheet-import", args=[world.campaign.slug]), {"file": upload})


def _sheet_values(character: Character) -> dict:
    data = services.sheet_export(Character.objects.select_related("vaesen").get(pk=character.pk), include_gm_notes=True)
    return {k: v for k, v in data.items() if k not in ("name", "status")}


def test_export_then_import_round_trip(vaesen_world):
    """V8/V10/V13/V16/V22/V31 — everything on the sheet comes back, conditions and injuries included."""
    w = vaesen_world
    sheet = w.pc.vaesen
    sheet.insights = ["Ve a los muertos"]
    sheet.armour, sheet.armour_protection, sheet.armour_agility_penalty = "Coraza", 2, 1
    sheet.save()
    services.apply_conditions(
        w.pc, Conditions(physical=frozenset({"Herido"}), broken_mental=True), actor=w.gm, reason="Miedo"
    )
    services.add_injury(
        w.pc, kind="mental", roll_value=23, name="Pánico", effect="", time_limit="un asalto", actor=w.gm, reason=""
    )
    data = _export(w.client("player"), w, w.pc)
    assert data["format"] == "vaesen-ficha/v1" and "gm_notes" not in data
    assert data["conditions"]["physical"] == ["Herido"] and data["injuries"][0]["time_limit"] == "un asalto"

    data["name"] = "Elsa (copia)"
    response = _import(w.client("player"), w, data)
    copy = Character.objects.get(name="Elsa (copia)")
    assert response.status_code == 302 and response["Location"] == copy.get_absolute_url()
    assert (copy.status, copy.owner) == ("draft", w.player)
    assert _sheet_values(copy) == _sheet_values(w.pc)
    assert SheetEvent.objects.get(character=copy).kind == "imported"


def test_the_gm_round_trips_an_npc_with_its_resistencia(vaesen_world):
    """V20 — an NPC's Resistencia and the points it lost travel with it."""
    w = vaesen_world
    services.resistance_change(character=w.npc, actor=w.gm, change=-1)
    data = _export(w.client("gm"), w, w.npc)
    data["name"] = "Otro molinero"
    assert _import(w.client("gm"), w, data).status_code == 302
    copy = VaesenSheet.objects.get(character__name="Otro molinero")
    assert (copy.character.kind, copy.resistance, copy.resistance_lost, copy.npc_kind) == ("npc", 3, 1, "human")
    # A player may not import an NPC.
    response = _import(w.client("player"), w, data)
    assert "Solo la dirección puede importar PNJ." in response.content.decode()


def test_v10_v20_the_injuries_owed_and_the_points_lost_since_the_last_test_travel_too(vaesen_world):
    w = vaesen_world
    npc = w.npc.vaesen
    npc.resistance_lost, npc.resistance_unspent, npc.pending_injuries = 2, 1, ["físico"]
    npc.save()
    data = _export(w.client("gm"), w, w.npc)
    assert (data["resistance_unspent"], data["pending_injuries"]) == (1, ["físico"])
    data["name"] = "Molinero importado"
    assert _import(w.client("gm"), w, data).status_code == 302
    copy = VaesenSheet.objects.get(character__name="Molinero importado")
    assert (copy.resistance_lost, copy.resistance_unspent, copy.pending_injuries) == (2, 1, ["físico"])
    # Files exported before these fields existed still import, with nothing owed.
    older = {k: v for k, v in data.items() if k not in ("resistance_unspent", "pending_injuries")}
    older["name"] = "Molinero antiguo"
    assert _import(w.client("gm"), w, older).status_code == 302
    old = VaesenSheet.objects.get(character__name="Molinero antiguo")
    assert (old.resistance_unspent, old.pending_injuries) == (0, [])
    count = Character.objects.count()
    for bad in ({"pending_injuries": ["espiritual"]}, {"resistance_unspent": 3}, {"pending_injuries": "físico"}):
        page = _import(w.client("gm"), w, {**data, "name": "Malo", **bad}).content.decode()
        assert "el formato no es el de una ficha exportada" in page
    assert Character.objects.count() == count


def test_a_broken_file_is_refused_in_spanish_and_nothing_is_made(vaesen_world):
    w = vaesen_world
    data = _export(w.client("player"), w, w.pc)
    count = Character.objects.count()
    bad_attribute = {**data, "name": "Mala", "fisico": 9}
    page = _import(w.client("player"), w, bad_attribute).content.decode()
    assert "La ficha del archivo no es válida" in page and "Escribe un número de 5 o menos." in page
    bad_condition = {**data, "conditions": {"physical": ["Cansado"]}}
    page = _import(w.client("player"), w, bad_condition).content.decode()
    assert "Estados: solo valen" in page
    page = _import(w.client("player"), w, {"format": "hitos-ficha/v1"}).content.decode()
    assert "no es una ficha de Vaesen" in page
    assert Character.objects.count() == count


def test_export_needs_the_private_part(vaesen_world):
    w = vaesen_world
    url = reverse("sheets:sheet-export", args=[w.campaign.slug, w.pc.pk])
    assert w.client("other").get(url).status_code == 403
    assert w.client("outsider").get(url).status_code == 404
    assert "gm_notes" in _export(w.client("gm"), w, w.pc)


def test_the_campaign_archive_carries_the_vaesen_sheets(vaesen_world):
    """The campaign archive's ``sheets`` part (systems/vaesen/archive.py):
    the GM's archive holds every sheet; importing it rebuilds them, the
    approved one approved, with their conditions and injuries."""
    w = vaesen_world
    services.apply_conditions(w.pc, Conditions(mental=frozenset({"Asustado"})), actor=w.gm, reason="")
    archive = json.loads(json.dumps(campaign_export(access=campaign_access(w.gm, w.campaign))))
    assert sorted(item["sheet"]["name"] for item in archive["sheets"]) == ["El Näcken", "El molinero", "Elsa"]
    player_archive = campaign_export(access=campaign_access(w.player, w.campaign))
    assert [item["sheet"]["name"] for item in player_archive["sheets"]] == ["Elsa"]

    imported = campaign_import(data=archive, gm=w.gm)
    new = {c.name: c for c in Character.objects.filter(campaign=imported.campaign).select_related("vaesen")}
    assert sorted(new) == ["El Näcken", "El molinero", "Elsa"]
    assert (new["Elsa"].status, new["Elsa"].owner) == ("approved", w.player)
    assert new["Elsa"].vaesen.mental_conditions == ["Asustado"]
    assert (new["El Näcken"].vaesen.fear, new["El molinero"].vaesen.resistance) == (2, 3)
