"""Conversions and hero point re-rolls seeded by the player's browser, safe
against a retried form (issue 18, item 1): each step from the card stores
the browser's seed (``client_seed_source: browser``) and the same seed sent
again is the same step, answered with the same card: ONE entry, ONE hero
point (or 2 XP), ONE ledger line and ONE line in the sheet's history
(rollog/v1 §3.3: the client seed is the idempotency key), even once the
step closed the roll or used the turn's re-roll (A24). A seed used for
anything else is refused in Spanish, nothing changed; without JavaScript
the server makes the seed, as before."""

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
from systems.aventuras.models import HeroMove
from systems.aventuras.rolls import services
from table.models import TableRoll
from tests.conftest import client_for, in_threads
from tests.factories import client_seed, make_post, plain_read

pytestmark = pytest.mark.django_db

TRIES = 60
HTMX = {"HTTP_HX_REQUEST": "true"}
USED = "Esa semilla ya se usó en otra tirada."


def a_roll(world, *, want=lambda tr: True) -> TableRoll:
    """A roll of Palomita's (6 dice of Majo) in a post of her player's;
    ``want`` (a predicate on the table roll) retries with new dice."""
    for _ in range(TRIES):
        post = make_post(world.scene, world.player, voice=Post.Voice.CHARACTER, character=world.pc)
        table_roll = services.make_roll(
            campaign=world.campaign,
            user=world.player,
            setup=services.roll_setup(world.pc, attribute="majo", modifier=2),
            purpose="Abrir la puerta del acertijo",
            character=world.pc,
            scene=world.scene,
            post=post,
            client_seed=client_seed(),
        )
        if want(table_roll):
            return table_roll
    raise AssertionError("no roll as wanted")


def with_chachi(tr) -> bool:
    return bool(services.open_chachis(tr.facts))


def _state(world, table_roll):
    """What a refused (or retried) step must leave as it was."""
    table_roll.refresh_from_db()
    world.pc.aventuras.refresh_from_db()
    return (
        table_roll.latest_id,
        dict(table_roll.facts),
        RollEntry.objects.count(),
        HeroMove.objects.count(),
        SheetEvent.objects.count(),
        world.pc.aventuras.hero_points,
        world.pc.aventuras.experience,
    )


def _convert(table_roll) -> str:
    return reverse("aventuras:convert", args=[table_roll.pk])


def _reroll(table_roll) -> str:
    return reverse("aventuras:reroll", args=[table_roll.pk])


def test_the_cards_forms_carry_a_marked_seed_field(aventuras_world):
    """client-seed.js fills the fields marked ``data-client-seed``: the
    conversion's and the re-roll's forms under the card are marked."""
    world = aventuras_world
    table_roll = a_roll(world, want=with_chachi)
    page = client_for(world.player).get(reverse("aventuras:roll", args=[table_roll.pk])).content.decode()
    for action in (_convert(table_roll), _reroll(table_roll)):
        form = page[page.index(f'action="{action}"') :]
        form = form[: form.index("</form>")]
        assert 'name="client_seed" value="" data-client-seed="true"' in form


# --- converting a 6 (A5) ------------------------------------------------------------------------


@pytest.mark.parametrize("htmx", [True, False], ids=["htmx", "page"])
def test_a_conversion_stores_the_browser_seed_and_its_retry_is_the_same_conversion(aventuras_world, htmx):
    world = aventuras_world
    table_roll = a_roll(world, want=with_chachi)
    position = services.open_chachis(table_roll.facts)[0]
    seed = client_seed()
    headers = HTMX if htmx else {}
    client = client_for(world.player)
    before = RollEntry.objects.count()
    first = client.post(_convert(table_roll), {"position": position + 1, "client_seed": seed}, **headers)
    table_roll.refresh_from_db()
    entry = table_roll.latest
    assert entry.kind == RollEntry.Kind.EXTEND and entry.parent_id == table_roll.first_id
    assert entry.client_seed == seed
    assert entry.entry["client_seed"] == seed and entry.entry["client_seed_source"] == "browser"
    after_first = _state(world, table_roll)
    assert after_first[2] == before + 1
    # The same form again: the 6 is a 5 now (and the roll may be closed), yet
    # the retry is recognised first and answered as the first request was.
    again = client.post(_convert(table_roll), {"position": position + 1, "client_seed": seed}, **headers)
    assert _state(world, table_roll) == after_first
    assert RollEntry.objects.filter(kind=RollEntry.Kind.EXTEND).count() == 1
    if htmx:
        assert first.status_code == again.status_code == 200
        for response in (first, again):
            assertContains(response, f'id="tirada-{table_roll.pk}"')
            assertContains(response, "(era un 6)")
            assertNotContains(response, "ya se convirtió")
            assertNotContains(response, 'role="alert"')
    else:
        for response in (first, again):
            assert response.status_code == 302 and response["Location"] == table_roll.post.get_absolute_url()


def test_a_retried_conversion_of_a_closed_roll_is_still_the_same_conversion(aventuras_world):
    """A conversion, then «¡Ya está!», then the conversion's form again: the
    same extension back, not «la tirada ya está cerrada»."""
    world = aventuras_world
    table_roll = a_roll(world, want=with_chachi)
    seed = client_seed()
    position = services.open_chachis(table_roll.facts)[0]
    entry = services.convert(table_roll=table_roll, user=world.player, position=position, client_seed=seed)
    table_roll.refresh_from_db()
    if not services.is_final(table_roll):
        services.settle(table_roll, by=world.player)
    before = _state(world, table_roll)
    assert services.convert(table_roll=table_roll, user=world.player, position=position, client_seed=seed) == entry
    assert _state(world, table_roll) == before
    # A new seed on the closed roll is refused as before.
    with pytest.raises(ValidationError, match="La tirada ya está cerrada"):
        services.convert(table_roll=table_roll, user=world.player, position=position, client_seed=client_seed())
    assert _state(world, table_roll) == before


# --- a hero point re-roll (A22, A24, A28) -------------------------------------------------------


@pytest.mark.parametrize("htmx", [True, False], ids=["htmx", "page"])
@pytest.mark.parametrize("with_experience", [False, True], ids=["point", "xp"])
def test_a_hero_reroll_stores_the_browser_seed_and_its_retry_pays_once(aventuras_world, htmx, with_experience):
    world = aventuras_world
    table_roll = a_roll(world)
    seed = client_seed()
    headers = HTMX if htmx else {}
    data = {"positions": [1, 2], "client_seed": seed, **({"with_experience": "on"} if with_experience else {})}
    client = client_for(world.player)
    before = _state(world, table_roll)
    first = client.post(_reroll(table_roll), data, **headers)
    table_roll.refresh_from_db()
    entry = table_roll.latest
    assert entry.kind == RollEntry.Kind.REROLL and entry.parent_id == table_roll.first_id
    assert entry.entry["rerolled"] == [0, 1]
    assert entry.client_seed == seed and entry.entry["client_seed_source"] == "browser"
    after_first = _state(world, table_roll)
    assert after_first[2:5] == (before[2] + 1, before[3] + 1, before[4] + 1)
    if with_experience:
        assert after_first[5:] == (before[5], before[6] - 2)
    else:
        assert after_first[5:] == (before[5] - 1, before[6])
    # The same form again: A24 would refuse a second re-roll this turn, yet
    # the retry is the first re-roll, paid once.
    again = client.post(_reroll(table_roll), data, **headers)
    assert _state(world, table_roll) == after_first
    assert HeroMove.objects.filter(table_roll=table_roll).count() == 1
    assert SheetEvent.objects.filter(character=world.pc).count() == 1
    if htmx:
        assert first.status_code == again.status_code == 200
        for response in (first, again):
            assertContains(response, f'id="tirada-{table_roll.pk}"')
            assertContains(response, "punto de Héroe: repite los dados 1, 2")
            assertNotContains(response, 'role="alert"')
    else:
        for response in (first, again):
            assert response.status_code == 302 and response["Location"] == table_roll.post.get_absolute_url()
        followed = client.get(again["Location"], follow=True)
        assertContains(followed, "Dados repetidos con un punto de Héroe.")


def test_a_new_seed_for_a_second_reroll_this_turn_is_still_refused(aventuras_world):
    """A24 — a second re-roll in the same turn is refused as before."""
    world = aventuras_world
    table_roll = a_roll(world, want=with_chachi)
    services.hero_reroll(table_roll=table_roll, user=world.player, positions=[0], client_seed=client_seed())
    before = _state(world, table_roll)
    response = client_for(world.player).post(
        _reroll(table_roll), {"positions": [1], "client_seed": client_seed()}, **HTMX
    )
    assert response.status_code == 200 and 'role="alert"' in response.content.decode()
    assert _state(world, table_roll) == before


# --- seeds used for something else ------------------------------------------------------------


def test_another_users_seed_is_refused_with_nothing_changed(aventuras_world):
    world = aventuras_world
    table_roll = a_roll(world, want=with_chachi)
    position = services.open_chachis(table_roll.facts)[0]
    theirs = client_seed()
    roll_append(
        campaign=world.campaign, user=world.gm, spec="2d6", purpose="Tirada", read=plain_read, client_seed=theirs
    )
    before = _state(world, table_roll)
    client = client_for(world.player)
    for url, data in (
        (_convert(table_roll), {"position": position + 1, "client_seed": theirs}),
        (_reroll(table_roll), {"positions": [1], "client_seed": theirs}),
    ):
        assertContains(client.post(url, data, **HTMX), USED)
        assertContains(client.post(url, data), USED, status_code=400)
        assert _state(world, table_roll) == before


def test_a_seed_of_another_step_or_roll_of_the_player_is_refused(aventuras_world):
    """The roll's own seed, a conversion's seed sent to the re-roll (and the
    other way round) and a step of another roll are not this step."""
    world = aventuras_world
    other = a_roll(world, want=with_chachi)
    other_step = client_seed()
    services.convert(
        table_roll=other, user=world.player, position=services.open_chachis(other.facts)[0], client_seed=other_step
    )
    table_roll = a_roll(world, want=lambda tr: len(services.open_chachis(tr.facts)) >= 2)
    converted = client_seed()
    first, second = services.open_chachis(table_roll.facts)[:2]
    services.convert(table_roll=table_roll, user=world.player, position=first, client_seed=converted)
    before = _state(world, table_roll)
    for seed in (table_roll.first.client_seed, other_step):
        with pytest.raises(ValidationError, match=USED):
            services.convert(table_roll=table_roll, user=world.player, position=second, client_seed=seed)
        assert _state(world, table_roll) == before
    for seed in (table_roll.first.client_seed, other_step, converted):
        with pytest.raises(ValidationError, match=USED):
            services.hero_reroll(table_roll=table_roll, user=world.player, positions=[0], client_seed=seed)
        assert _state(world, table_roll) == before


# --- without JavaScript ---------------------------------------------------------------------------


def test_without_javascript_the_server_seeds_each_step(aventuras_world):
    world = aventuras_world
    client = client_for(world.player)
    converted = a_roll(world, want=with_chachi)
    position = services.open_chachis(converted.facts)[0]
    response = client.post(_convert(converted), {"position": position + 1})
    assert response.status_code == 302
    converted.refresh_from_db()
    assert converted.latest.kind == RollEntry.Kind.EXTEND
    assert converted.latest.entry["client_seed_source"] == "server"
    table_roll = a_roll(world)
    response = client.post(_reroll(table_roll), {"positions": [1], "client_seed": ""})
    assert response.status_code == 302
    table_roll.refresh_from_db()
    assert table_roll.latest.kind == RollEntry.Kind.REROLL
    assert table_roll.latest.entry["client_seed_source"] == "server"
    # A second re-roll without a seed is no retry: refused (A24, or the roll
    # closed), nothing paid.
    before = _state(world, table_roll)
    response = client.post(_reroll(table_roll), {"positions": [1]}, **HTMX)
    assert 'role="alert"' in response.content.decode()
    assert _state(world, table_roll) == before


# --- a retry racing the first request -----------------------------------------------------------


@pytest.mark.skipif(connection.vendor != "postgresql", reason="needs PostgreSQL row locks")
@pytest.mark.django_db(transaction=True)
def test_two_identical_hero_rerolls_at_once_reroll_and_pay_once(aventuras_world):
    """The same re-roll form sent twice at once: the table roll's lock
    queues them, the second finds the first's entry and returns it. One
    re-roll, one hero point, one ledger line, no error. Each thread has its
    own connection, as separate web workers would."""
    world = aventuras_world
    table_roll = a_roll(world)
    seed = client_seed()
    points = world.pc.aventuras.hero_points
    results, errors = in_threads(
        2, lambda n: services.hero_reroll(table_roll=table_roll, user=world.player, positions=[0, 1], client_seed=seed)
    )
    assert not errors, errors
    assert len(results) == 2 and results[0].pk == results[1].pk
    assert RollEntry.objects.filter(kind=RollEntry.Kind.REROLL).count() == 1
    assert RollEntry.objects.filter(client_seed=seed).count() == 1
    assert HeroMove.objects.filter(table_roll=table_roll).count() == 1
    world.pc.aventuras.refresh_from_db()
    assert world.pc.aventuras.hero_points == points - 1
    table_roll.refresh_from_db()
    assert table_roll.latest_id == results[0].pk
