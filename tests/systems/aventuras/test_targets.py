"""The «Objetivos» of a player's roll row (A18) offer the heroes and only the
GM's characters the players know of (issue 29, item 2b): those shown in the
scene (speaking, rolling or targeted in a post there everyone reads) and
those the GM marks as known on their sheet. The GM may target them all."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from campaigns.models import Post
from sheets.models import SheetEvent
from systems.aventuras.models import AventurasSheet
from table.models import TableRoll
from tests.conftest import client_for
from tests.factories import client_seed, make_post, make_scene
from tests.systems.aventuras.test_sheet_views import sheet_post

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}


def _option(character) -> str:
    return f'<option value="{character.pk}">{character.name}</option>'


def _form_page(w, who: str) -> str:
    return client_for(getattr(w, who)).get(w.scene.get_absolute_url()).content.decode()


def test_a_player_is_offered_the_heroes_but_not_an_npc_only_the_gm_knows(aventuras_world):
    w = aventuras_world
    page = _form_page(w, "player")
    assert _option(w.pc) in page and _option(w.other_pc) in page
    assert _option(w.npc) not in page
    assert _option(w.npc) in _form_page(w, "gm")


def test_an_npc_who_spoke_in_the_scene_is_offered(aventuras_world):
    w = aventuras_world
    assert _option(w.npc) not in _form_page(w, "player")
    make_post(w.scene, w.gm, body="¡Un acertijo!", voice=Post.Voice.CHARACTER, character=w.npc)
    # The page kept before does not hide it.
    assert _option(w.npc) in _form_page(w, "player")


def test_an_npc_seen_only_in_a_whisper_or_in_another_scene_is_not_offered(aventuras_world):
    w = aventuras_world
    make_post(
        w.scene,
        w.gm,
        body="Psst.",
        voice=Post.Voice.CHARACTER,
        character=w.npc,
        recipients=Post.Recipients.CHOSEN,
        chosen=[w.other],
    )
    elsewhere = make_scene(w.campaign, title="El castillo")
    make_post(elsewhere, w.gm, body="Hola.", voice=Post.Voice.CHARACTER, character=w.npc)
    assert _option(w.npc) not in _form_page(w, "player")


def test_the_gm_marks_an_npc_known_on_its_sheet_logged_and_then_it_is_offered(aventuras_world):
    w = aventuras_world
    assert _option(w.npc) not in _form_page(w, "player")
    edit = reverse("sheets:sheet-edit", args=[w.campaign.slug, w.npc.pk])
    gm = client_for(w.gm)
    assert 'name="known"' in gm.get(edit).content.decode()
    # A hero's sheet has no such box.
    assert 'name="known"' not in gm.get(reverse("sheets:sheet-edit", args=[w.campaign.slug, w.pc.pk])).content.decode()
    response = gm.post(edit, sheet_post(name="Profesor Cacahuete", known="on"))
    assert response.status_code == 302
    assert AventurasSheet.objects.get(pk=w.npc.pk).known is True
    assert SheetEvent.objects.get(character=w.npc).kind == SheetEvent.Kind.EDITED
    assert _option(w.npc) in _form_page(w, "player")


def test_a_player_cannot_target_an_npc_only_the_gm_knows(aventuras_world):
    w = aventuras_world
    url = reverse("table:post-create", args=[w.campaign.slug, w.scene.pk])
    data = {
        "voice": f"character:{w.pc.pk}",
        "body": "Palomita salta sobre el profesor.",
        "recipients": "all",
        "submission_key": client_seed(),
        "tirada-0-attribute": "cachas",
        "tirada-0-difficulty": "0",
        "tirada-0-purpose": "Saltar",
        "tirada-0-targets": str(w.npc.pk),
        "tirada-0-client_seed": client_seed(),
    }
    response = client_for(w.player).post(url, data, **HTMX)
    assert response.status_code == 200
    assert "Ese personaje no está en la partida." in response.content.decode()
    assert not Post.objects.exists() and not TableRoll.objects.exists()


def test_the_targets_are_read_once_for_all_the_rows_of_the_form(aventuras_world):
    """``_targets`` runs for the writer's facts and once for the three rows
    of the form (not once per row)."""

    w = aventuras_world
    client = client_for(w.player)
    with CaptureQueriesContext(connection) as queries:
        assert client.get(w.scene.get_absolute_url()).status_code == 200
    # Who rolled in the scene is one of the three EXISTS of ``_targets``.
    reading_targets = [
        q
        for q in queries.captured_queries
        if 'FROM "sheets_character"' in q["sql"][:600] and 'FROM "table_tableroll"' in q["sql"]
    ]
    assert len(reading_targets) == 2
