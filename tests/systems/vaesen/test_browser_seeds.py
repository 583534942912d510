"""Pushes seeded by the player's browser, safe against a retried form (issue
18, item 1): a push from the card or from its own page stores the browser's
seed (``client_seed_source: browser``) and the same seed sent again is the
same push, answered with the same card, with ONE re-roll, ONE condition and
ONE line in the sheet's history (rollog/v1 §3.3: the client seed is the
idempotency key); so is the critical injury a breaking push causes. A seed
used for anything else is refused in Spanish, nothing changed; without
JavaScript the server makes the seed, as before."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError
from django.db import connection
from django.urls import reverse
from pytest_django.asserts import assertContains, assertNotContains

from campaigns.models import Post
from rolls.models import RollEntry
from rolls.services import roll_append
from sheets.models import SheetEvent
from systems.vaesen.rolls import services
from table.models import TableRoll
from tests.conftest import client_for, in_threads
from tests.factories import client_seed, make_post, make_scene, plain_read

pytestmark = pytest.mark.django_db

TRIES = 40
HTMX = {"HTTP_HX_REQUEST": "true"}
USED = "Esa semilla ya se usó en otra tirada."


@pytest.fixture
def scene(vaesen_campaign):
    return make_scene(vaesen_campaign, title="El puente")


def a_failed_roll(world, scene) -> TableRoll:
    """A test of Elsa's that failed and may be pushed (needing 10 successes)."""
    for _ in range(TRIES):
        post = make_post(scene, world.player, voice=Post.Voice.CHARACTER, character=world.pc)
        table_roll = services.table_test(
            campaign=world.campaign,
            user=world.player,
            setup=services.pool_setup(world.pc, attribute="físico", skill="Agilidad", needed=10),
            purpose="Cruzar el puente",
            character=world.pc,
            scene=scene,
            post=post,
            client_seed=client_seed(),
        )
        if table_roll.facts["can_push"]:
            return table_roll
    raise AssertionError("no roll that may be pushed")


def _url(table_roll) -> str:
    return reverse("vaesen:push", args=[table_roll.pk])


def _state(world, table_roll):
    """What a refused (or retried) push must leave as it was."""
    table_roll.refresh_from_db()
    world.pc.vaesen.refresh_from_db()
    sheet = world.pc.vaesen
    return (
        table_roll.latest_id,
        dict(table_roll.facts),
        RollEntry.objects.count(),
        SheetEvent.objects.count(),
        tuple(sheet.physical_conditions),
        tuple(sheet.mental_conditions),
        sheet.broken_physical,
        sheet.injuries.count(),
    )


def test_the_card_and_the_push_page_carry_a_marked_seed_field(vaesen_world, scene):
    """client-seed.js fills the fields marked ``data-client-seed``: the card's
    push form and the push page's form are marked."""
    world = vaesen_world
    table_roll = a_failed_roll(world, scene)
    page = client_for(world.player).get(scene.get_absolute_url()).content.decode()
    form = page[page.index(f'action="{_url(table_roll)}"') :]
    form = form[: form.index("</form>")]
    assert 'name="client_seed"' in form and 'data-client-seed="true"' in form
    response = client_for(world.player).get(_url(table_roll))
    assertContains(response, 'data-client-seed="true"')


@pytest.mark.parametrize("htmx", [True, False], ids=["htmx", "page"])
def test_a_push_stores_the_browser_seed_and_its_retry_is_the_same_push(vaesen_world, scene, htmx):
    world = vaesen_world
    table_roll = a_failed_roll(world, scene)
    seed = client_seed()
    headers = HTMX if htmx else {}
    client = client_for(world.player)
    before = RollEntry.objects.count()
    first = client.post(_url(table_roll), {"condition": "Magullado", "client_seed": seed}, **headers)
    table_roll.refresh_from_db()
    pushed = table_roll.latest
    assert pushed.kind == RollEntry.Kind.REROLL and pushed.parent_id == table_roll.first_id
    assert pushed.client_seed == seed
    assert pushed.entry["client_seed"] == seed and pushed.entry["client_seed_source"] == "browser"
    after_first = _state(world, table_roll)
    assert after_first[2] == before + 1
    # The same form again (a retried request, even choosing another condition):
    # the same push, nothing paid again, the same answer.
    again = client.post(_url(table_roll), {"condition": "Herido", "client_seed": seed}, **headers)
    assert _state(world, table_roll) == after_first
    assert RollEntry.objects.filter(kind=RollEntry.Kind.REROLL, parent=table_roll.first).count() == 1
    world.pc.vaesen.refresh_from_db()
    assert world.pc.vaesen.physical_conditions == ["Magullado"]
    assert SheetEvent.objects.filter(character=world.pc).count() == 1
    if htmx:
        assert first.status_code == again.status_code == 200
        for response in (first, again):
            assertContains(response, f'id="tirada-{table_roll.pk}"')
            assertContains(response, "cuesta «Magullado»")
            assertNotContains(response, "ya se forzó")
            assertNotContains(response, 'role="alert"')
    else:
        for response in (first, again):
            assert response.status_code == 302 and response["Location"] == table_roll.post.get_absolute_url()
        followed = client.get(again["Location"], follow=True)
        assertContains(followed, "Tirada forzada.")
        assertNotContains(followed, "ya se forzó")


def test_a_new_seed_on_a_pushed_roll_is_still_refused(vaesen_world, scene):
    """V6 — once: only the seed that pushed it gets the push back."""
    world = vaesen_world
    table_roll = a_failed_roll(world, scene)
    services.push(table_roll=table_roll, user=world.player, condition="Exhausto", client_seed=client_seed())
    before = _state(world, table_roll)
    response = client_for(world.player).post(_url(table_roll), {"client_seed": client_seed()}, **HTMX)
    assertContains(response, "Esta tirada ya se forzó: solo se puede forzar una vez.")
    response = client_for(world.player).post(_url(table_roll), {"client_seed": client_seed()})
    assertContains(response, "Esta tirada ya se forzó: solo se puede forzar una vez.")
    assert _state(world, table_roll) == before


def test_another_users_seed_is_refused_with_nothing_changed(vaesen_world, scene):
    world = vaesen_world
    table_roll = a_failed_roll(world, scene)
    theirs = client_seed()
    roll_append(
        campaign=world.campaign, user=world.gm, spec="2d6", purpose="Tirada", read=plain_read, client_seed=theirs
    )
    before = _state(world, table_roll)
    response = client_for(world.player).post(_url(table_roll), {"condition": "Herido", "client_seed": theirs}, **HTMX)
    assertContains(response, USED)
    response = client_for(world.player).post(_url(table_roll), {"condition": "Herido", "client_seed": theirs})
    assertContains(response, USED)
    assert _state(world, table_roll) == before
    assert table_roll.latest_id == table_roll.first_id


def test_a_seed_of_the_players_own_other_roll_or_push_is_refused(vaesen_world, scene):
    """The seed of the roll itself, or of the push of another roll, is not
    this push: refused, nothing changed."""
    world = vaesen_world
    pushed_before = a_failed_roll(world, scene)
    used_by_push = client_seed()
    services.push(table_roll=pushed_before, user=world.player, condition="Exhausto", client_seed=used_by_push)
    table_roll = a_failed_roll(world, scene)
    before = _state(world, table_roll)
    for seed in (table_roll.first.client_seed, used_by_push):
        with pytest.raises(ValidationError, match=USED):
            services.push(table_roll=table_roll, user=world.player, condition="Herido", client_seed=seed)
        assert _state(world, table_roll) == before


def test_without_javascript_the_server_seeds_the_push(vaesen_world, scene):
    """No seed (no JavaScript): the server makes one and says so; a second
    POST is refused, as a push is once."""
    world = vaesen_world
    table_roll = a_failed_roll(world, scene)
    response = client_for(world.player).post(_url(table_roll), {"condition": "Herido", "client_seed": ""})
    assert response.status_code == 302
    table_roll.refresh_from_db()
    assert table_roll.latest.kind == RollEntry.Kind.REROLL
    assert table_roll.latest.entry["client_seed_source"] == "server"
    before = _state(world, table_roll)
    response = client_for(world.player).post(_url(table_roll), {"condition": "Exhausto"}, **HTMX)
    assertContains(response, "ya se forzó")
    assert _state(world, table_roll) == before


def _broken(world, scene) -> TableRoll:
    table_roll = a_failed_roll(world, scene)
    sheet = world.pc.vaesen
    sheet.physical_conditions = ["Exhausto", "Magullado", "Herido"]
    sheet.save()
    services.push(table_roll=table_roll, user=world.player, client_seed=client_seed())
    table_roll.refresh_from_db()
    return table_roll


def test_a_retried_critical_injury_is_rolled_and_recorded_once(vaesen_world, scene):
    """V13 — the injury a breaking push causes: the browser's seed, and the
    same form again gives the same injury, no second one on the sheet."""
    world = vaesen_world
    table_roll = _broken(world, scene)
    url = reverse("vaesen:injury", args=[table_roll.pk])
    seed = client_seed()
    client = client_for(world.player)
    response = client.post(url, {"client_seed": seed})
    assert response.status_code == 302
    injury = TableRoll.objects.get(kind=services.INJURY)
    assert injury.first.client_seed == seed and injury.first.entry["client_seed_source"] == "browser"
    before = _state(world, table_roll)
    response = client.post(url, {"client_seed": seed}, follow=True)
    assertContains(response, "Herida crítica tirada: queda anotada en la ficha.")
    assertNotContains(response, "ya se tiró")
    assert _state(world, table_roll) == before
    assert TableRoll.objects.filter(kind=services.INJURY).count() == 1
    assert world.pc.vaesen.injuries.count() == 1
    # The push's own seed is not the injury's: refused, nothing changed.
    response = client.post(url, {"client_seed": table_roll.latest.client_seed}, follow=True)
    assertContains(response, USED)
    assert _state(world, table_roll) == before


# --- a retry racing the first request ---------------------------------------------------------


@pytest.mark.skipif(connection.vendor != "postgresql", reason="needs PostgreSQL row locks")
@pytest.mark.django_db(transaction=True)
def test_two_identical_pushes_at_once_push_and_pay_once(vaesen_world):
    """The same form sent twice at once (a double click, a retry while the
    first request still runs): the table roll's lock queues them, the second
    finds the first's entry and returns it. One re-roll, one condition, one
    history line, no error. Each thread has its own connection, as separate
    web workers would."""
    world = vaesen_world
    table_roll = a_failed_roll(world, make_scene(world.campaign))
    seed = client_seed()
    conditions = ("Exhausto", "Herido")
    results, errors = in_threads(
        2,
        lambda n: services.push(table_roll=table_roll, user=world.player, condition=conditions[n], client_seed=seed),
    )
    assert not errors, errors
    assert len(results) == 2 and results[0].pk == results[1].pk
    assert RollEntry.objects.filter(kind=RollEntry.Kind.REROLL, parent=table_roll.first).count() == 1
    assert RollEntry.objects.filter(client_seed=seed).count() == 1
    world.pc.vaesen.refresh_from_db()
    assert len(world.pc.vaesen.physical_conditions) == 1
    assert SheetEvent.objects.filter(character=world.pc).count() == 1
    table_roll.refresh_from_db()
    assert table_roll.latest_id == results[0].pk
