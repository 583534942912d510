"""Opposed rolls (issue 15, item 4; V14): the GM sets one up between two
characters (attribute + skill, or an NPC's pool); each side rolls from the
scene through the signed log; more successes wins, said in words; on a tie
either side may push (the push service). Access: outsiders 404, other
members 403; Spanish refusals with nothing changed; queries pinned."""

from __future__ import annotations

import pytest
from django.core.exceptions import PermissionDenied, ValidationError
from django.urls import reverse
from pytest_django.asserts import assertContains

from rolls.models import RollEntry
from systems.vaesen.fear import opposed
from systems.vaesen.rolls import services as rolls
from table.models import TableRoll
from tests.conftest import client_for
from tests.factories import client_seed, make_scene
from tests.systems.vaesen.test_options import queue_d6

pytestmark = pytest.mark.django_db


@pytest.fixture
def d6(monkeypatch):
    return queue_d6(monkeypatch)


@pytest.fixture
def scene(vaesen_campaign):
    return make_scene(vaesen_campaign, title="El mercado")


def page(w, scene) -> str:
    return reverse("vaesen:opposed", args=[w.campaign.slug, scene.pk])


def setup_duel(w, scene):
    return opposed.opposed_start(
        scene=scene,
        actor=w.gm,
        purpose="Echar un pulso",
        sides=[(w.pc, "físico", "Fuerza", None), (w.npc, "", "", 3)],
    )


def roll_side(w, scene, item, side, who):
    return client_for(who).post(
        reverse("vaesen:opposed-roll", args=[w.campaign.slug, scene.pk, item["id"], side]),
        {"client_seed": client_seed()},
    )


def test_v14_more_successes_wins_in_words(vaesen_world, scene, d6):
    w = vaesen_world
    item = setup_duel(w, scene)
    d6.extend([[6, 6, 1], [6, 2, 3]])
    assert roll_side(w, scene, item, 0, w.player).status_code == 302
    assert roll_side(w, scene, item, 1, w.gm).status_code == 302
    first = TableRoll.objects.get(kind=opposed.OPPOSED, character=w.pc)
    second = TableRoll.objects.get(kind=opposed.OPPOSED, character=w.npc)
    assert first.first.signed_game["test"] == "opposed"
    assert (first.facts["partner"], second.facts["partner"]) == (second.pk, first.pk)
    assert opposed.outcome(first, second).value == "primero"
    assert first.facts["tie"] is False
    response = client_for(w.reader).get(page(w, scene))
    assertContains(response, "Gana Elsa.")
    scene.campaign.refresh_from_db()
    assert opposed.open_rolls(scene) == []


def test_v14_on_a_tie_either_side_may_push(vaesen_world, scene, vaesen_other_player, d6):
    w = vaesen_world
    from tests.systems.vaesen.conftest import vaesen_character

    karl = vaesen_character(w.campaign, vaesen_other_player, "Karl", fisico=3, skills={"Fuerza": 0})
    item = opposed.opposed_start(
        scene=scene, actor=w.gm, purpose="Pulso", sides=[(w.pc, "físico", "", None), (karl, "físico", "", None)]
    )
    d6.extend([[6, 1, 2], [6, 3, 4]])
    roll_side(w, scene, item, 0, w.player)
    roll_side(w, scene, item, 1, vaesen_other_player)
    first = TableRoll.objects.get(character=w.pc, kind=opposed.OPPOSED)
    second = TableRoll.objects.get(character=karl, kind=opposed.OPPOSED)
    # Both succeeded with one 6: a tie, so both may push though neither failed.
    assert first.facts["tie"] and second.facts["tie"]
    assert rolls.push_refusal(first, w.player) is None
    assert rolls.push_refusal(second, vaesen_other_player) is None
    assertContains(client_for(w.player).get(page(w, scene)), "Empate: cualquiera de los dos puede forzar su tirada.")
    rolls.push(table_roll=first, user=w.player, condition="Exhausto", client_seed=client_seed())
    first.refresh_from_db()
    second.refresh_from_db()
    pushed = first.latest.signed_game
    assert pushed["pushed"] and pushed["test"] == "opposed"
    # Both sides learn whether they still tie; the pushed one may not push again.
    still_tied = pushed["successes"] == 1
    assert second.facts["tie"] is still_tied
    assert first.facts["can_push"] is False
    with pytest.raises(ValidationError):
        rolls.push(table_roll=first, user=w.player, condition="Magullado")


def test_refusals_are_spanish_and_change_nothing(vaesen_world, scene):
    w = vaesen_world
    with pytest.raises(ValidationError, match="dos personajes distintos"):
        opposed.opposed_start(
            scene=scene, actor=w.gm, purpose="x", sides=[(w.pc, "físico", "", None), (w.pc, "lógica", "", None)]
        )
    with pytest.raises(ValidationError, match="las reservas libres son de los PNJ"):
        opposed.opposed_start(scene=scene, actor=w.gm, purpose="x", sides=[(w.pc, "", "", 3), (w.npc, "", "", 2)])
    with pytest.raises(PermissionDenied):
        setup_duel_as = opposed.opposed_start
        setup_duel_as(scene=scene, actor=w.player, purpose="x", sides=[(w.pc, "físico", "", None), (w.npc, "", "", 2)])
    scene.campaign.refresh_from_db()
    assert opposed.open_rolls(scene) == []
    item = setup_duel(w, scene)
    # Only the GM rolls an NPC's side; a side rolls once.
    assert roll_side(w, scene, item, 1, w.player).status_code == 403
    roll_side(w, scene, item, 0, w.player)
    again = client_for(w.player).post(
        reverse("vaesen:opposed-roll", args=[w.campaign.slug, scene.pk, item["id"], 0]),
        {"client_seed": client_seed()},
        follow=True,
    )
    assertContains(again, "Elsa ya ha tirado.")
    assert RollEntry.objects.filter(campaign=w.campaign, kind="roll").count() == 1


def test_views_access_start_form_and_queries(vaesen_world, scene, d6, django_assert_max_num_queries):
    w = vaesen_world
    w.campaign.visibility = "private"
    w.campaign.save(update_fields=["visibility"])
    start_url = reverse("vaesen:opposed-start", args=[w.campaign.slug, scene.pk])
    assert w.client("outsider").get(page(w, scene)).status_code == 404
    assert w.client("player").post(start_url, {"purpose": "x"}).status_code == 403
    gm = w.client("gm")
    refused = gm.post(start_url, {"purpose": "Un pulso", "character_1": str(w.pc.pk), "character_2": str(w.npc.pk)})
    assert refused.status_code == 200
    assertContains(refused, "Elige un atributo, una habilidad o (un PNJ) una reserva libre.")
    assertContains(refused, 'value="Un pulso"')
    done = gm.post(
        start_url,
        {
            "purpose": "Un pulso",
            "character_1": str(w.pc.pk),
            "skill_1": "Fuerza",
            "character_2": str(w.npc.pk),
            "pool_2": "3",
        },
    )
    assert done.status_code == 302
    scene.campaign.refresh_from_db()
    item = opposed.open_rolls(scene)[0]
    d6.extend([[6, 1, 1], [1, 1, 1]])
    roll_side(w, scene, item, 0, w.player)
    roll_side(w, scene, item, 1, w.gm)
    player = client_for(w.player)
    with django_assert_max_num_queries(12):
        full = player.get(page(w, scene))
    assertContains(full, "Gana Elsa.")
    partial = gm.get(page(w, scene), headers={"HX-Request": "true"})
    assert b"<html" not in partial.content
    assertContains(partial, 'id="opposed-board"')


def test_the_gm_calls_off_an_open_opposed_roll(vaesen_world, scene):
    w = vaesen_world
    item = setup_duel(w, scene)
    close_url = reverse("vaesen:opposed-close", args=[w.campaign.slug, scene.pk, item["id"]])
    assert w.client("player").post(close_url).status_code == 403
    scene.campaign.refresh_from_db()
    assert opposed.open_rolls(scene)
    assert w.client("gm").post(close_url).status_code == 302
    scene.campaign.refresh_from_db()
    assert opposed.open_rolls(scene) == []
    again = roll_side(w, scene, item, 0, w.player)
    assert again.status_code == 302
    assert not TableRoll.objects.filter(kind=opposed.OPPOSED).exists()
