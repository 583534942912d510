"""Second review of the Hora de Aventuras sheet: the GM changing a player's
sheet says why (health, states, the sheet form: who, when, why in the
history), a refused change keeps what was typed on both paths, the access of
every view (404 for outsiders, 403 for members without the right, the login
page for anonymous visitors), and the real sheet page — the hero points
panel included — in a constant number of queries however much it holds.

Unlike test_sheet_views.py, the hero points panel is NOT removed here: these
tests measure and read the page as people get it."""

from __future__ import annotations

import json

import pytest
from django.core.cache import cache
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from campaigns.models import Post, Visibility
from rules.aventuras import HeroGain, HeroSpend
from sheets.models import Character, SheetEvent
from systems.aventuras.heroes import ledger
from systems.aventuras.models import AventurasFeat, AventurasSheet, AventurasState, AventurasTool
from systems.aventuras.sheet import services
from tests.factories import make_post
from tests.systems.aventuras.test_sheet_views import sheet_post, state_post

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}
REASON_MISSING = "Indica el motivo: cambias la ficha de otra persona y queda en su historial."


def url(name, world, character=None, *args):
    if character is None:
        return reverse(name, args=[world.campaign.slug, *args])
    return reverse(name, args=[world.campaign.slug, character.pk, *args])


def private(w) -> None:
    w.campaign.visibility = Visibility.PRIVATE
    w.campaign.save()


def lost(character) -> int:
    return AventurasSheet.objects.get(pk=character.pk).health_lost


# --- the GM says why -----------------------------------------------------------------------


@pytest.mark.parametrize("htmx", [False, True])
def test_the_gm_marks_a_players_health_only_saying_why(aventuras_world, htmx):
    """Who, when, why: the GM's change to Palomita's health needs a reason; her player's does not."""
    w = aventuras_world
    extra = HTMX if htmx else {}
    gm = w.client("gm")
    response = gm.post(url("aventuras:sheet-health", w, w.pc), {"change": "-1", "reason": " "}, **extra)
    page = response.content.decode()
    assert response.status_code == 200 and REASON_MISSING in page and ("<html" in page) is not htmx
    assert lost(w.pc) == 0 and not SheetEvent.objects.exists()
    # The GM's form shows the reason as needed; the owner's does not.
    assert (
        'id="motivo-salud" maxlength="500" class="form-control form-control-sm is-invalid" value=" " required' in page
    )
    owner_page = w.client("player").get(w.pc.get_absolute_url(), **HTMX).content.decode()
    assert 'id="motivo-salud"' in owner_page and " required>" not in owner_page
    response = gm.post(url("aventuras:sheet-health", w, w.pc), {"change": "-1", "reason": "Mordisco"}, **extra)
    assert response.status_code == (200 if htmx else 302)
    assert lost(w.pc) == 1 and SheetEvent.objects.get().reason == "Mordisco"
    # The owner marks without a reason.
    assert w.client("player").post(url("aventuras:sheet-health", w, w.pc), {"change": "-1"}).status_code == 302
    assert lost(w.pc) == 2


@pytest.mark.parametrize("htmx", [False, True])
def test_the_gm_adds_and_removes_a_players_state_only_saying_why(aventuras_world, htmx):
    w = aventuras_world
    extra = HTMX if htmx else {}
    gm = w.client("gm")
    response = gm.post(url("aventuras:sheet-state-add", w, w.pc), state_post(name="Pegajosa"), **extra)
    page = response.content.decode()
    assert response.status_code == 200 and REASON_MISSING in page and 'value="Pegajosa"' in page
    assert not AventurasState.objects.exists()
    gm.post(url("aventuras:sheet-state-add", w, w.pc), state_post(name="Pegajosa", reason="Sirope"), **extra)
    state = AventurasState.objects.get()
    response = gm.post(url("aventuras:sheet-state-remove", w, w.pc, state.pk), {"reason": ""}, **extra)
    assert response.status_code == 200 and REASON_MISSING in response.content.decode()
    assert AventurasState.objects.filter(pk=state.pk).exists()
    gm.post(url("aventuras:sheet-state-remove", w, w.pc, state.pk), {"reason": "Se lavó"}, **extra)
    assert not AventurasState.objects.exists()
    assert list(SheetEvent.objects.order_by("pk").values_list("actor", "reason")) == [
        (w.gm.pk, "Sirope"),
        (w.gm.pk, "Se lavó"),
    ]


def test_the_gm_edits_a_players_sheet_only_saying_why(aventuras_world):
    """The sheet form: the GM's reason is required (the owner's draft asks none)."""
    w = aventuras_world
    gm = w.client("gm")
    data = sheet_post(name="Palomita Loba", highlighted=["cachas", "majo"], cachas="4", majo="4")
    response = gm.post(url("sheets:sheet-edit", w, w.pc), data)
    page = response.content.decode()
    assert response.status_code == 200
    assert "Indica el motivo del cambio: queda en el historial." in page and 'value="Palomita Loba"' in page
    assert Character.objects.get(pk=w.pc.pk).name == "Palomita" and not SheetEvent.objects.exists()
    response = gm.post(url("sheets:sheet-edit", w, w.pc), {**data, "reason": "Cambia de nombre"})
    assert response.status_code == 302
    assert SheetEvent.objects.get().reason == "Cambia de nombre"
    # The GM's own NPC: no reason asked.
    assert 'name="reason"' not in gm.get(url("sheets:sheet-edit", w, w.npc)).content.decode()


# --- a refused change keeps what was typed --------------------------------------------------


@pytest.mark.parametrize("htmx", [False, True])
def test_a_refused_health_change_keeps_its_reason(aventuras_world, htmx):
    w = aventuras_world
    extra = HTMX if htmx else {}
    response = w.client("gm").post(
        url("aventuras:sheet-health", w, w.pc), {"change": "1", "reason": "Una <b>poción</b>"}, **extra
    )
    page = response.content.decode()
    assert response.status_code == 200 and ("<html" in page) is not htmx
    assert "Ya tiene todos sus niveles de salud." in page
    assert 'value="Una &lt;b&gt;poción&lt;/b&gt;"' in page
    assert not SheetEvent.objects.exists()


@pytest.mark.parametrize("htmx", [False, True])
def test_a_refused_state_removal_keeps_its_reason_on_its_row(aventuras_world, htmx):
    w = aventuras_world
    extra = HTMX if htmx else {}
    kept = AventurasState.objects.create(sheet=w.pc.aventuras, name="Hambriento")
    other = AventurasState.objects.create(sheet=w.pc.aventuras, name="Cansado")
    too_long = "Comió " + "x" * 500
    response = w.client("gm").post(url("aventuras:sheet-state-remove", w, w.pc, kept.pk), {"reason": too_long}, **extra)
    page = response.content.decode()
    assert response.status_code == 200 and ("<html" in page) is not htmx
    assert "Demasiado largo: como mucho 500 caracteres (has escrito 506)." in page
    assert page.count(f'value="{too_long}"') == 1
    assert page.index(f'value="{too_long}"') < page.index(url("aventuras:sheet-state-remove", w, w.pc, other.pk))
    assert AventurasState.objects.count() == 2


@pytest.mark.parametrize("htmx", [False, True])
def test_a_refused_experience_keeps_its_reason(aventuras_world, htmx):
    """The GM sets the experience: the full page too (refused → the page with the form as typed)."""
    w = aventuras_world
    extra = HTMX if htmx else {}
    gm = w.client("gm")
    response = gm.post(
        url("aventuras:sheet-experience", w, w.pc), {"experience": "4", "reason": "Sin cambios"}, **extra
    )
    page = response.content.decode()
    assert response.status_code == 200 and ("<html" in page) is not htmx
    assert "Ya tiene 4 puntos de Experiencia." in page and 'value="Sin cambios"' in page
    response = gm.post(url("aventuras:sheet-experience", w, w.pc), {"experience": "6", "reason": "Fin"}, **extra)
    assert response.status_code == (200 if htmx else 302)
    assert AventurasSheet.objects.get(pk=w.pc.pk).experience == 6


def test_refused_notes_keep_the_text(aventuras_world):
    w = aventuras_world
    data = {"private_notes": "x" * 20001, "public_description": "Una mazorca.", "gm_notes": "Aúlla de noche."}
    response = w.client("gm").post(url("sheets:sheet-notes", w, w.pc), data)
    page = response.content.decode()
    assert response.status_code == 200 and "<html" in page
    assert "Aúlla de noche." in page and "x" * 20001 in page and "<details open>" in page
    assert Character.objects.get(pk=w.pc.pk).gm_notes == ""


# --- access ------------------------------------------------------------------------------


@pytest.mark.parametrize("htmx", [False, True])
def test_state_add_and_remove_access(aventuras_world, htmx):
    w = aventuras_world
    extra = HTMX if htmx else {}
    state = AventurasState.objects.create(sheet=w.pc.aventuras, name="Hambriento")
    add = url("aventuras:sheet-state-add", w, w.pc)
    remove = url("aventuras:sheet-state-remove", w, w.pc, state.pk)
    data = state_post(reason="Porque sí")
    for address in (add, remove):
        assert w.client("reader").post(address, data, **extra).status_code == 403
        assert w.client("other").post(address, data, **extra).status_code == 403
        assert w.client("anonymous").post(address, data, **extra).status_code == 302
    private(w)
    for address in (add, remove):
        assert w.client("outsider").post(address, data, **extra).status_code == 404
    # A player does not even see the GM's NPC.
    assert w.client("player").post(url("aventuras:sheet-state-add", w, w.npc), data, **extra).status_code == 404
    assert list(AventurasState.objects.values_list("name", flat=True)) == ["Hambriento"]


def test_experience_access(aventuras_world):
    w = aventuras_world
    data = {"experience": "9", "reason": "Porque sí"}
    address = url("aventuras:sheet-experience", w, w.pc)
    assert w.client("player").post(address, data).status_code == 403
    assert w.client("reader").post(address, data).status_code == 403
    private(w)
    for extra in ({}, HTMX):
        assert w.client("outsider").post(address, data, **extra).status_code == 404
    assert AventurasSheet.objects.get(pk=w.pc.pk).experience == 4


def test_import_access_and_page(aventuras_world):
    w = aventuras_world
    address = url("sheets:sheet-import", w)
    page = w.client("player").get(address).content.decode()
    assert "<html" in page and 'name="file"' in page and 'type="file"' in page
    assert w.client("reader").get(address).status_code == 403
    exported = json.dumps(services.sheet_export(w.pc, include_gm_notes=False)).encode()
    upload = SimpleUploadedFile("palomita.json", exported, content_type="application/json")
    assert w.client("reader").post(address, {"file": upload}).status_code == 403
    response = w.client("anonymous").get(address)
    assert response.status_code == 302 and response["Location"].startswith(reverse("accounts:login"))
    private(w)
    assert w.client("outsider").get(address).status_code == 404
    assert Character.objects.filter(campaign=w.campaign).count() == 3


def test_npc_create_review_and_print_are_hidden_from_outsiders(aventuras_world):
    w = aventuras_world
    private(w)
    Character.objects.filter(pk=w.pc.pk).update(status="submitted")
    outsider = w.client("outsider")
    assert outsider.get(url("sheets:npc-create", w)).status_code == 404
    assert outsider.post(url("sheets:sheet-review", w, w.pc), {"decision": "approve"}).status_code == 404
    assert outsider.get(url("sheets:sheet-print", w, w.pc)).status_code == 404
    assert Character.objects.get(pk=w.pc.pk).status == "submitted"


def test_detail_of_a_private_campaign_is_hidden_from_anonymous_visitors(aventuras_world):
    w = aventuras_world
    private(w)
    for extra in ({}, HTMX):
        assert w.client("anonymous").get(w.pc.get_absolute_url(), **extra).status_code == 404
        assert w.client("outsider").get(w.pc.get_absolute_url(), **extra).status_code == 404


# --- the real page, hero panel included: constant queries ---------------------------------------


def _grow(w, count: int) -> None:
    """``count`` more feats (needing a point), tools, states, posts and hero moves on Palomita."""
    sheet = w.pc.aventuras
    for n in range(count):
        AventurasFeat.objects.create(sheet=sheet, name=f"Proeza {n}", needs_hero_point=True)
        AventurasTool.objects.create(sheet=sheet, name=f"Herramienta {n}", attribute="cachas", bonus=1)
        AventurasState.objects.create(sheet=sheet, name=f"Estado {n}", modifier=-1)
        post = make_post(w.scene, w.player, voice=Post.Voice.CHARACTER, character=w.pc)
        with transaction.atomic():
            ledger.spend(w.pc, HeroSpend.FEAT, by=w.player, turn=ledger.post_turn(post.pk), with_experience=False)
            ledger.gain(w.pc, by=w.gm, reason=HeroGain.SACRIFICE, why=f"Sacrificio {n}")
    AventurasSheet.objects.filter(pk=w.pc.pk).update(health_lost=1)


def _queries(client, address, **extra) -> int:
    cache.clear()
    with CaptureQueriesContext(connection) as captured:
        response = client.get(address, **extra)
    assert response.status_code == 200
    assert 'id="heroes-panel-' in response.content.decode()
    return len(captured)


def test_the_real_sheet_page_keeps_a_constant_number_of_queries(aventuras_world):
    """The sheet with its hero points panel, whole and as the htmx part: the same
    queries with one feat, tool and state as with twelve more of each and their moves."""
    w = aventuras_world
    _grow(w, 1)
    clients = {who: w.client(who) for who in ("player", "gm")}
    address = w.pc.get_absolute_url()
    few = {(who, bool(extra)): _queries(c, address, **extra) for who, c in clients.items() for extra in ({}, HTMX)}
    _grow(w, 12)
    many = {(who, bool(extra)): _queries(c, address, **extra) for who, c in clients.items() for extra in ({}, HTMX)}
    assert many == few, (few, many)
    assert max(few.values()) <= 22
    page = clients["player"].get(address).content.decode()
    assert "Proeza 11" in page and "Herramienta 11" in page and "Estado 11" in page and "Sacrificio 11" in page
