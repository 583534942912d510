"""Pushing a failed Vaesen test from its card (issue 15, item 3): once, after a
failure, not on a success, not when Broken (V6, V10, V11); every die but the
6s re-rolled as a ``reroll`` entry; the condition of the attribute's kind
(V7, V8) chosen among the free ones and applied with a ``SheetEvent`` in the
same transaction; a fourth condition makes the character Broken (V10); the
chain original → pushed on the card; refusals in Spanish, nothing changed;
who may push (404 outsiders, 403 other members)."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.exceptions import ValidationError
from django.core.management import call_command
from django.urls import reverse
from pytest_django.asserts import assertContains, assertNotContains

from campaigns.models import Post
from rolls.models import RollEntry
from rules import vaesen
from sheets.models import SheetEvent
from systems.vaesen.rolls import services
from table.models import TableRoll
from tests.conftest import client_for
from tests.factories import client_seed, make_post, make_scene

pytestmark = pytest.mark.django_db

TRIES = 40


@pytest.fixture
def scene(vaesen_campaign):
    return make_scene(vaesen_campaign, title="El puente")


def a_roll(world, scene, *, attribute="físico", skill="Agilidad", needed=10, want=None, recipients="all"):
    """A test of Elsa's in a post of her player's. ``needed`` above the pool
    always fails; ``want`` (a predicate on the first entry's game) retries
    with new dice until it holds."""
    for _ in range(TRIES):
        post = make_post(scene, world.player, voice=Post.Voice.CHARACTER, character=world.pc, recipients=recipients)
        setup = services.pool_setup(world.pc, attribute=attribute, skill=skill, needed=needed)
        table_roll = services.table_test(
            campaign=world.campaign,
            user=world.player,
            setup=setup,
            purpose="Cruzar el puente",
            character=world.pc,
            scene=scene,
            post=post,
            client_seed=client_seed(),
        )
        game = table_roll.first.signed_game
        if want(game) if want else table_roll.facts["can_push"]:
            return table_roll
    raise AssertionError("no roll as wanted")


def _url(table_roll) -> str:
    return reverse("vaesen:push", args=[table_roll.pk])


def _state(world, table_roll):
    """What a refused push must leave as it was."""
    table_roll.refresh_from_db()
    world.pc.vaesen.refresh_from_db()
    sheet = world.pc.vaesen
    return (
        table_roll.latest_id,
        RollEntry.objects.count(),
        SheetEvent.objects.count(),
        tuple(sheet.physical_conditions),
        tuple(sheet.mental_conditions),
        sheet.broken_physical,
    )


# --- the push itself ----------------------------------------------------------------------


def test_a_push_rerolls_every_die_but_the_sixes_and_costs_the_chosen_condition(vaesen_world, scene):
    """V6 — the 6s stay, every other die is re-rolled as a ``reroll`` entry;
    V7 — Físico costs a physical condition, the one the player chooses (V8);
    the sheet's change has its ``SheetEvent``; the log still verifies."""
    world = vaesen_world
    table_roll = a_roll(world, scene)
    first = table_roll.first
    response = client_for(world.player).post(_url(table_roll), {"condition": "Magullado"})
    assert response.status_code == 302
    assert response["Location"] == table_roll.post.get_absolute_url()
    table_roll.refresh_from_db()
    pushed = table_roll.latest
    assert pushed.kind == RollEntry.Kind.REROLL and pushed.parent_id == first.pk
    old, new = first.entry["dice"], pushed.entry["dice"]
    assert pushed.entry["rerolled"] == [i for i, d in enumerate(old) if d != 6]
    assert all(new[i] == 6 for i, d in enumerate(old) if d == 6)
    game = pushed.signed_game
    test = vaesen.PoolRoll(tuple(new), needed=10, pushed=True)
    assert game["system"] == "vaesen" and game["pushed"] is True
    assert game["successes"] == test.successes and game["success"] is False
    assert game["condition"] == "Magullado" and game["broken"] is False
    world.pc.vaesen.refresh_from_db()
    assert world.pc.vaesen.physical_conditions == ["Magullado"]
    event = SheetEvent.objects.get(character=world.pc)
    assert event.actor_id == world.player.pk and event.roll_id == pushed.pk and event.post_id == table_roll.post_id
    assert event.reason == "Fuerza la tirada «Cruzar el puente»: Magullado"
    out = StringIO()
    call_command("verify_rolls", "--campaign", world.campaign.slug, stdout=out, no_color=True)
    assert out.getvalue().startswith(f"OK  {world.campaign.slug}:")


def test_a_mental_attribute_costs_a_mental_condition(vaesen_world, scene):
    """V7 — Lógica or Empatía: a mental condition."""
    world = vaesen_world
    table_roll = a_roll(world, scene, attribute="lógica", skill="")
    services.push(table_roll=table_roll, user=world.player, condition="Asustado")
    world.pc.vaesen.refresh_from_db()
    assert world.pc.vaesen.mental_conditions == ["Asustado"]
    assert world.pc.vaesen.physical_conditions == []


def test_the_card_shows_the_chain_and_offers_no_second_push(vaesen_world, scene):
    """V6 — once per action: the card shows original → pushed and no push form."""
    world = vaesen_world
    table_roll = a_roll(world, scene)
    client = client_for(world.player)
    page = client.get(scene.get_absolute_url()).content.decode()
    assert "Forzar la tirada" in page and 'value="Exhausto"' in page
    services.push(table_roll=table_roll, user=world.player, condition="Exhausto")
    page = client.get(scene.get_absolute_url()).content.decode()
    assert "original:" in page and "forzada: repite los dados" in page
    assert "cuesta «Exhausto»" in page and "roll-chain-old" in page
    assert _url(table_roll) not in page


def test_the_htmx_push_answers_with_the_updated_card(vaesen_world, scene):
    world = vaesen_world
    table_roll = a_roll(world, scene)
    response = client_for(world.player).post(_url(table_roll), {"condition": "Herido"}, headers={"HX-Request": "true"})
    assert response.status_code == 200
    html = response.content.decode()
    assert "<html" not in html and f'id="tirada-{table_roll.pk}"' in html
    assert "cuesta «Herido»" in html and "Forzada" in html
    assert "Forzar la tirada" not in html


def test_the_push_page_offers_the_free_conditions(vaesen_world, scene):
    world = vaesen_world
    world.pc.vaesen.physical_conditions = ["Exhausto"]
    world.pc.vaesen.save()
    table_roll = a_roll(world, scene)
    response = client_for(world.player).get(_url(table_roll))
    assertContains(response, "<html")
    assertContains(response, 'value="Magullado"')
    assertContains(response, 'value="Herido"')
    assertNotContains(response, 'value="Exhausto"')


def test_the_push_form_comes_to_htmx_as_a_fragment(vaesen_world, scene):
    world = vaesen_world
    table_roll = a_roll(world, scene)
    response = client_for(world.player).get(_url(table_roll), headers={"HX-Request": "true"})
    html = response.content.decode()
    assert response.status_code == 200 and "<html" not in html
    assert f'id="forzar-{table_roll.pk}"' in html and 'value="Exhausto"' in html
    assert "HX-Request" in response["Vary"]


def test_a_fourth_condition_makes_the_character_broken(vaesen_world, scene):
    """V10 — with all three physical conditions marked, pushing makes the
    character Broken (the card says so: a critical injury follows)."""
    world = vaesen_world
    table_roll = a_roll(world, scene)
    # Marked after the roll (its pool counted none): the push finds none free.
    sheet = world.pc.vaesen
    sheet.physical_conditions = ["Exhausto", "Magullado", "Herido"]
    sheet.save()
    page = client_for(world.player).get(scene.get_absolute_url()).content.decode()
    assert "si fuerzas, tu personaje queda Derrotado" in page
    response = client_for(world.player).post(_url(table_roll), {}, headers={"HX-Request": "true"})
    assertContains(response, "queda Derrotado")
    sheet.refresh_from_db()
    assert sheet.broken_physical is True
    table_roll.refresh_from_db()
    assert table_roll.latest.signed_game["broken"] is True
    assert SheetEvent.objects.filter(character=world.pc).count() == 1


def _broken_push(world, scene):
    table_roll = a_roll(world, scene)
    sheet = world.pc.vaesen
    sheet.physical_conditions = ["Exhausto", "Magullado", "Herido"]
    sheet.save()
    services.push(table_roll=table_roll, user=world.player)
    table_roll.refresh_from_db()
    return table_roll


def test_the_critical_injury_of_a_breaking_push_is_rolled_from_the_card(vaesen_world, scene):
    """V10, V13 — the card offers "Tirar herida crítica"; 2d6 read as d66
    through the log, in the same post, recorded on the sheet with its
    ``SheetEvent``; once."""
    world = vaesen_world
    table_roll = _broken_push(world, scene)
    injury_url = reverse("vaesen:injury", args=[table_roll.pk])
    page = client_for(world.player).get(scene.get_absolute_url()).content.decode()
    assert "Tirar herida crítica" in page and injury_url in page
    assert injury_url not in client_for(world.other).get(scene.get_absolute_url()).content.decode()
    response = client_for(world.player).post(injury_url, {"client_seed": client_seed()})
    assert response.status_code == 302 and response["Location"] == table_roll.post.get_absolute_url()
    injury_roll = TableRoll.objects.get(kind=services.INJURY)
    entry = injury_roll.first
    tens, units = entry.entry["dice"]
    assert entry.entry["spec"] == "2d6" and entry.post_id == table_roll.post_id
    game = entry.signed_game
    assert game == {
        "system": "vaesen",
        "test": "injury",
        "kind": "físico",
        "d66": tens * 10 + units,
        "of": table_roll.latest.permalink,
    }
    injury = world.pc.vaesen.injuries.get()
    assert injury.roll == tens * 10 + units and injury.kind == "físico"
    assert SheetEvent.objects.filter(character=world.pc, roll=entry).count() == 1
    page = client_for(world.player).get(scene.get_absolute_url()).content.decode()
    assert f"Herida crítica física {tens * 10 + units}" in page
    assert injury_url not in page
    # Once: a second one is refused, nothing rolled.
    entries = RollEntry.objects.count()
    response = client_for(world.player).post(injury_url, {}, follow=True)
    assertContains(response, "La herida crítica de esta tirada ya se tiró.")
    assert RollEntry.objects.count() == entries


def test_the_gm_may_roll_the_injury_and_other_players_may_not(vaesen_world, scene):
    world = vaesen_world
    table_roll = _broken_push(world, scene)
    injury_url = reverse("vaesen:injury", args=[table_roll.pk])
    assert client_for(world.other).post(injury_url, {}).status_code == 403
    assert client_for(world.gm).post(injury_url, {}).status_code == 302
    assert TableRoll.objects.filter(kind=services.INJURY, owner=world.player).count() == 1


def test_no_injury_without_a_breaking_push(vaesen_world, scene):
    world = vaesen_world
    table_roll = a_roll(world, scene)
    services.push(table_roll=table_roll, user=world.player, condition="Exhausto")
    response = client_for(world.player).post(reverse("vaesen:injury", args=[table_roll.pk]), {}, follow=True)
    assertContains(response, "Esta tirada no dejó a nadie Derrotado: no hay herida crítica que tirar.")
    assert not TableRoll.objects.filter(kind=services.INJURY).exists()


# --- refusals: in Spanish, nothing changed --------------------------------------------------


def test_pushing_twice_is_refused(vaesen_world, scene):
    """V6 — once per action."""
    world = vaesen_world
    table_roll = a_roll(world, scene)
    services.push(table_roll=table_roll, user=world.player, condition="Exhausto")
    before = _state(world, table_roll)
    response = client_for(world.player).post(_url(table_roll), {"condition": "Magullado"})
    assertContains(response, "Esta tirada ya se forzó: solo se puede forzar una vez.")
    assert _state(world, table_roll) == before
    with pytest.raises(ValidationError, match="ya se forzó"):
        services.push(table_roll=table_roll, user=world.player, condition="Magullado")


def test_pushing_a_success_is_refused(vaesen_world, scene):
    """V6 — only right after a failure."""
    world = vaesen_world
    table_roll = a_roll(world, scene, needed=1, want=lambda game: game["success"] is True)
    before = _state(world, table_roll)
    response = client_for(world.player).post(
        _url(table_roll), {"condition": "Exhausto"}, headers={"HX-Request": "true"}
    )
    assertContains(response, "Solo se puede forzar una tirada fallida.")
    assert _state(world, table_roll) == before
    page = client_for(world.player).get(scene.get_absolute_url()).content.decode()
    assert _url(table_roll) not in page


def test_a_broken_character_does_not_push(vaesen_world, scene):
    """V10, V11 — Broken: no push offered, and one sent is refused."""
    world = vaesen_world
    table_roll = a_roll(world, scene)
    sheet = world.pc.vaesen
    sheet.physical_conditions = ["Exhausto", "Magullado", "Herido"]
    sheet.broken_physical = True
    sheet.save()
    before = _state(world, table_roll)
    page = client_for(world.player).get(scene.get_absolute_url()).content.decode()
    assert _url(table_roll) not in page
    response = client_for(world.player).post(_url(table_roll), {})
    assertContains(response, "Elsa está «Derrotado»: no puede forzar tiradas.")
    assert _state(world, table_roll) == before


def test_a_condition_already_marked_is_refused(vaesen_world, scene):
    """V9 — each condition taken is a different one."""
    world = vaesen_world
    world.pc.vaesen.physical_conditions = ["Exhausto"]
    world.pc.vaesen.save()
    table_roll = a_roll(world, scene)
    before = _state(world, table_roll)
    response = client_for(world.player).post(_url(table_roll), {"condition": "Exhausto"})
    assertContains(response, "Ese estado no está libre: elige otro.")
    assert _state(world, table_roll) == before
    with pytest.raises(ValidationError, match="Elige uno de los estados libres: Magullado, Herido."):
        services.push(table_roll=table_roll, user=world.player, condition="Exhausto")


# --- who may push --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("who", "status"), [("outsider", 404), ("anonymous", 302), ("other", 403), ("gm", 403), ("reader", 403)]
)
def test_only_the_rolls_owner_pushes(vaesen_world, scene, who, status):
    world = vaesen_world
    table_roll = a_roll(world, scene)
    world.campaign.visibility = "private"
    world.campaign.save()
    before = _state(world, table_roll)
    for method in ("get", "post"):
        response = getattr(world.client(who), method)(_url(table_roll), {"condition": "Exhausto"})
        assert response.status_code == status, (method, response.status_code)
    assert _state(world, table_roll) == before


def test_a_whispered_roll_is_out_of_sight_of_the_others(vaesen_world, scene):
    """A roll in a post to the GM alone: the other player does not see it (404)."""
    world = vaesen_world
    table_roll = a_roll(world, scene, recipients="gm")
    assert world.client("other").post(_url(table_roll), {"condition": "Exhausto"}).status_code == 404
    services.push(table_roll=table_roll, user=world.player, condition="Exhausto")
    table_roll.refresh_from_db()
    # The push is sealed for the same audience as the roll (rollog v1.1 §3.7).
    assert table_roll.latest.is_sealed and table_roll.latest.audience == table_roll.first.audience


def test_a_free_pool_and_an_npc_roll_cannot_be_pushed(vaesen_world, scene):
    world = vaesen_world
    post = make_post(scene, world.gm)
    free = services.table_test(
        campaign=world.campaign,
        user=world.gm,
        setup=services.pool_setup(None, free_pool=3, needed=10),
        purpose="Crecida",
        scene=scene,
        post=post,
    )
    assert "Una reserva libre no se puede forzar" in services.push_refusal(free, world.gm)
    npc_roll = services.table_test(
        campaign=world.campaign,
        user=world.gm,
        setup=services.pool_setup(world.npc, attribute="físico", needed=10),
        purpose="Empujar",
        character=world.npc,
        scene=scene,
        post=post,
    )
    assert TableRoll.objects.get(pk=npc_roll.pk).owner_id == world.gm.pk
    assert services.push_refusal(npc_roll, world.gm) == "Solo se fuerzan las pruebas de los personajes jugadores."
