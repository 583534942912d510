"""The chachi chain and the hero point re-roll (issue 16, items 3, 4 and 6):
each 6 turned into a 5 adds a die as an ``extend`` entry whose signed
``converted`` names it (A5), again on the added dice; a chachi spent on a
narrative effect still counts as a success (A12); a hero point re-rolls the
dice chosen as a ``reroll`` entry paid through the ledger (A22), once per
turn (A24), with 2 XP if asked (A28), never on an extended version; «¡Ya
está!» makes the result final (A11) and every later step is refused in
Spanish with nothing changed; who may act; the views (404, 403, htmx and
full page); everything verifies offline and stays sealed in a whisper."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.management import call_command
from django.urls import reverse
from pytest_django.asserts import assertContains

from campaigns.models import Post
from rolls.models import RollEntry
from rolls.verify_roll import parse_public_key, verify_bundle
from rules import aventuras
from rules.aventuras import HeroSpend
from systems.aventuras import signals
from systems.aventuras.models import HeroMove
from systems.aventuras.rolls import services
from table.models import TableRoll
from tests.conftest import client_for
from tests.factories import client_seed, make_post

pytestmark = pytest.mark.django_db

TRIES = 60
HTMX = {"HTTP_HX_REQUEST": "true"}


def a_roll(world, *, want=lambda tr: True, attribute="majo", modifier=2, difficulty=0, post=None, recipients="all"):
    """A roll of Palomita's in a post of her player's (6 dice of Majo by
    default); ``want`` (a predicate on the table roll) retries with new dice."""
    for _ in range(TRIES):
        roll_post = post or make_post(
            world.scene, world.player, voice=Post.Voice.CHARACTER, character=world.pc, recipients=recipients
        )
        setup = services.roll_setup(world.pc, attribute=attribute, modifier=modifier, difficulty=difficulty)
        table_roll = services.make_roll(
            campaign=world.campaign,
            user=world.player,
            setup=setup,
            purpose="Abrir la puerta del acertijo",
            character=world.pc,
            scene=world.scene,
            post=roll_post,
            client_seed=client_seed(),
        )
        if want(table_roll):
            return table_roll
    raise AssertionError("no roll as wanted")


def with_chachi(tr) -> bool:
    return bool(services.open_chachis(tr.facts))


def without_chachi(tr) -> bool:
    return not services.open_chachis(tr.facts)


def _state(table_roll):
    """What a refused step must leave as it was."""
    table_roll.refresh_from_db()
    return (
        table_roll.latest_id,
        dict(table_roll.facts),
        RollEntry.objects.count(),
        HeroMove.objects.count(),
    )


@pytest.fixture
def settled():
    """The rolls that became final, as ``signals.roll_settled`` tells."""
    seen: list[int] = []

    def receiver(sender, table_roll, **kwargs):
        seen.append(table_roll.pk)

    signals.roll_settled.connect(receiver)
    yield seen
    signals.roll_settled.disconnect(receiver)


# --- converting a 6 (A5) ------------------------------------------------------------------


def test_converting_a_6_adds_a_die_as_an_extension_signed_with_its_position(aventuras_world):
    """A5 — «puede convertir un resultado de 6 en un 5 y añadir otro dado»."""
    world = aventuras_world
    table_roll = a_roll(world, want=with_chachi)
    parent = table_roll.latest
    position = services.open_chachis(table_roll.facts)[0]
    entry = services.convert(table_roll=table_roll, user=world.player, position=position, client_seed=client_seed())
    assert entry.kind == RollEntry.Kind.EXTEND and entry.parent_id == parent.pk
    assert entry.entry["spec"] == "1d6" and entry.entry["converted"] == [position]
    assert entry.entry["dice"][:-1] == parent.entry["dice"]
    game = entry.signed_game
    assert game["converted"] == [position] and game["values"][position] == aventuras.CONVERTED_VALUE
    state = aventuras.AventurasRoll(tuple(entry.entry["dice"]), frozenset([position]))
    assert (game["normals"], game["chachis"]) == (state.tally.normals, state.tally.chachis)
    table_roll.refresh_from_db()
    assert table_roll.latest_id == entry.pk and table_roll.facts["extended"] is True
    assert table_roll.facts["values"] == list(state.values)


def test_a_chachi_on_an_added_die_converts_again(aventuras_world):
    """A5 — «Mientras sigas obteniendo éxitos chachis puedes convertirlos»."""
    world = aventuras_world
    for _ in range(TRIES):
        table_roll = a_roll(world, want=with_chachi)
        first = services.open_chachis(table_roll.facts)[0]
        entry = services.convert(table_roll=table_roll, user=world.player, position=first)
        if entry.entry["dice"][-1] == aventuras.CHACHI:
            break
    else:
        raise AssertionError("no added 6")
    added = len(entry.entry["dice"]) - 1
    again = services.convert(table_roll=table_roll, user=world.player, position=added)
    assert again.parent_id == entry.pk and again.entry["converted"] == [added]
    assert again.signed_game["converted"] == sorted({first, added})
    out = StringIO()
    call_command("verify_rolls", "--campaign", world.campaign.slug, stdout=out, no_color=True)
    assert out.getvalue().startswith(f"OK  {world.campaign.slug}:")


def test_converting_a_die_that_is_not_a_6_is_refused_and_nothing_changes(aventuras_world):
    world = aventuras_world
    table_roll = a_roll(world, want=lambda tr: any(v != 6 for v in tr.facts["values"]) and with_chachi(tr))
    position = next(i for i, v in enumerate(table_roll.facts["values"]) if v != 6)
    before = _state(table_roll)
    with pytest.raises(ValidationError, match="Solo se puede convertir un 6"):
        services.convert(table_roll=table_roll, user=world.player, position=position)
    with pytest.raises(ValidationError, match="Ese dado no está en la tirada"):
        services.convert(table_roll=table_roll, user=world.player, position=99)
    assert _state(table_roll) == before


def test_a_converted_6_cannot_be_converted_again(aventuras_world):
    world = aventuras_world
    table_roll = a_roll(world, want=lambda tr: len(services.open_chachis(tr.facts)) >= 2)
    position = services.open_chachis(table_roll.facts)[0]
    services.convert(table_roll=table_roll, user=world.player, position=position)
    table_roll.refresh_from_db()
    before = _state(table_roll)
    with pytest.raises(ValidationError, match="Ese 6 ya se convirtió en un 5"):
        services.convert(table_roll=table_roll, user=world.player, position=position)
    assert _state(table_roll) == before


# --- a chachi on a narrative effect (A12) -----------------------------------------------------


def test_a_chachi_spent_on_an_effect_still_counts_as_a_success(aventuras_world):
    """A12 — «seguirá contando como un éxito para la resolución, pero no podrá
    utilizarse para los efectos habituales»: no log entry, no conversion after."""
    world = aventuras_world
    table_roll = a_roll(world, want=lambda tr: len(services.open_chachis(tr.facts)) >= 2)
    position = services.open_chachis(table_roll.facts)[0]
    entries = RollEntry.objects.count()
    tally_before = services.roll_tally(TableRoll.objects.select_related("latest").get(pk=table_roll.pk))
    services.spend_on_effect(table_roll=table_roll, user=world.player, position=position)
    assert RollEntry.objects.count() == entries
    table_roll = TableRoll.objects.select_related("latest").get(pk=table_roll.pk)
    assert table_roll.facts["narrative"] == [position]
    tally = services.roll_tally(table_roll)
    assert tally.successes == tally_before.successes
    assert tally.chachis == tally_before.chachis - 1
    with pytest.raises(ValidationError, match="ya se gastó en un efecto narrativo"):
        services.convert(table_roll=table_roll, user=world.player, position=position)
    with pytest.raises(ValidationError, match="ya se gastó en un efecto narrativo"):
        services.spend_on_effect(table_roll=table_roll, user=world.player, position=position)
    with pytest.raises(ValidationError, match="no se puede repetir"):
        services.hero_reroll(table_roll=table_roll, user=world.player, positions=[position])


# --- hero point re-rolls (A22, A24, A28) -----------------------------------------------------


def test_a_hero_point_rerolls_the_chosen_dice_paid_through_the_ledger(aventuras_world):
    """A22 — «repetir todos los dados que quieras de tu tirada»: a reroll entry
    of those positions, one point spent on the roll's post's turn."""
    world = aventuras_world
    table_roll = a_roll(world)
    parent = table_roll.latest
    entry = services.hero_reroll(table_roll=table_roll, user=world.player, positions=[0, 2], client_seed=client_seed())
    assert entry.kind == RollEntry.Kind.REROLL and entry.parent_id == parent.pk
    assert entry.entry["rerolled"] == [0, 2]
    assert entry.signed_game["step"] == services.STEP_REROLL
    move = HeroMove.objects.get()
    assert move.use == HeroSpend.REROLL and move.table_roll_id == table_roll.pk
    assert move.turn == f"post:{table_roll.post_id}"
    world.pc.aventuras.refresh_from_db()
    assert world.pc.aventuras.hero_points == 4
    out = StringIO()
    call_command("verify_rolls", "--campaign", world.campaign.slug, stdout=out, no_color=True)
    assert out.getvalue().startswith(f"OK  {world.campaign.slug}:")


def test_two_rerolls_in_one_turn_are_refused(aventuras_world):
    """A24 — «no podrías gastar dos puntos para … repetir la tirada dos veces»:
    two rolls of the same post, the second re-roll refused, nothing changed."""
    world = aventuras_world
    post = make_post(world.scene, world.player, voice=Post.Voice.CHARACTER, character=world.pc)
    first = a_roll(world, post=post)
    second = a_roll(world, post=post, want=lambda tr: not services.is_final(tr))
    services.hero_reroll(table_roll=first, user=world.player, positions=[0])
    before = _state(second)
    with pytest.raises(ValidationError, match="«repetir dados» este turno"):
        services.hero_reroll(table_roll=second, user=world.player, positions=[0])
    assert _state(second) == before


def test_add_dice_then_reroll_in_the_same_turn_is_allowed(aventuras_world):
    """A24 — «gastar un punto para añadir dos dados … y a continuación otro para repetir»."""
    world = aventuras_world
    post = make_post(world.scene, world.player, voice=Post.Voice.CHARACTER, character=world.pc)
    setup = services.roll_setup(world.pc, attribute="majo", hero_point=True)
    table_roll = services.make_roll(
        campaign=world.campaign,
        user=world.player,
        setup=setup,
        purpose="Con todo",
        character=world.pc,
        scene=world.scene,
        post=post,
    )
    # Including the added dice (positions 4 and 5).
    services.hero_reroll(table_roll=table_roll, user=world.player, positions=[4, 5])
    assert sorted(HeroMove.objects.values_list("use", flat=True)) == sorted([HeroSpend.ADD_DICE, HeroSpend.REROLL])
    world.pc.aventuras.refresh_from_db()
    assert world.pc.aventuras.hero_points == 3


def test_a_reroll_without_points_is_refused_and_two_xp_pay_it(aventuras_world):
    """A22, A28 — no points: refused in Spanish; 2 XP buy an instant point."""
    world = aventuras_world
    table_roll = a_roll(world)
    sheet = world.pc.aventuras
    sheet.hero_points = 0
    sheet.save()
    before = _state(table_roll)
    with pytest.raises(ValidationError, match="Palomita no tiene puntos de Héroe que gastar."):
        services.hero_reroll(table_roll=table_roll, user=world.player, positions=[1])
    assert _state(table_roll) == before
    services.hero_reroll(table_roll=table_roll, user=world.player, positions=[1], with_experience=True)
    sheet.refresh_from_db()
    assert (sheet.hero_points, sheet.experience) == (0, 2)


def test_an_extended_roll_is_not_rerolled(aventuras_world):
    """roll-verification "Not fixed here": once a 6 is converted, no hero re-roll."""
    world = aventuras_world
    # Two 6s: one converted, the other still open, so the roll is not final yet.
    table_roll = a_roll(world, want=lambda tr: len(services.open_chachis(tr.facts)) >= 2)
    services.convert(table_roll=table_roll, user=world.player, position=services.open_chachis(table_roll.facts)[0])
    table_roll.refresh_from_db()
    assert not services.is_final(table_roll)
    before = _state(table_roll)
    with pytest.raises(ValidationError, match="una tirada ampliada no se puede repetir"):
        services.hero_reroll(table_roll=table_roll, user=world.player, positions=[0])
    assert _state(table_roll) == before


# --- final --------------------------------------------------------------------------------------


def test_ya_esta_makes_the_roll_final_and_every_step_is_refused_after(aventuras_world, settled):
    """«¡Ya está!» — the result is final (A5: decide before the GM narrates)."""
    world = aventuras_world
    table_roll = a_roll(world, want=with_chachi)
    services.settle(table_roll, by=world.player)
    assert settled == [table_roll.pk]
    table_roll.refresh_from_db()
    assert services.is_final(table_roll)
    before = _state(table_roll)
    position = services.open_chachis(table_roll.facts)[0]
    for step in (
        lambda: services.convert(table_roll=table_roll, user=world.player, position=position),
        lambda: services.spend_on_effect(table_roll=table_roll, user=world.player, position=position),
        lambda: services.hero_reroll(table_roll=table_roll, user=world.player, positions=[0]),
    ):
        with pytest.raises(ValidationError, match="La tirada ya está cerrada"):
            step()
    with pytest.raises(ValidationError, match="ya se dijo «¡Ya está!»"):
        services.settle(table_roll, by=world.player)
    assert _state(table_roll) == before
    assert settled == [table_roll.pk]


def test_a_roll_with_nothing_to_decide_is_final_at_once(aventuras_world, settled):
    """No 6 and no hero re-roll possible (0 points, under 2 XP): final when rolled."""
    world = aventuras_world
    sheet = world.pc.aventuras
    sheet.hero_points = 0
    sheet.experience = 1
    sheet.save()
    table_roll = a_roll(world, want=without_chachi)
    assert services.is_final(table_roll) and table_roll.pk in settled


def test_a_reroll_already_paid_this_turn_and_no_6_left_settles_the_roll(aventuras_world, settled):
    """A24 — after the turn's re-roll, a roll with no 6 left has nothing to decide."""
    world = aventuras_world
    for _ in range(TRIES):
        # Each try pays a point: keep one to pay (the dice are random).
        world.pc.aventuras.hero_points = 1
        world.pc.aventuras.save(update_fields=["hero_points"])
        table_roll = a_roll(world)
        services.hero_reroll(table_roll=table_roll, user=world.player, positions=[0])
        table_roll.refresh_from_db()
        if not services.open_chachis(table_roll.facts):
            break
        HeroMove.objects.all().delete()
    assert services.is_final(table_roll) and table_roll.pk in settled


# --- who may act ----------------------------------------------------------------------------------


def test_only_the_roller_acts_and_the_gm_closes_any_roll(aventuras_world):
    world = aventuras_world
    table_roll = a_roll(world, want=with_chachi)
    position = services.open_chachis(table_roll.facts)[0]
    before = _state(table_roll)
    for user in (world.other, world.reader, world.gm):
        with pytest.raises(ValidationError, match="Solo quien hizo la tirada"):
            services.convert(table_roll=table_roll, user=user, position=position)
    with pytest.raises(ValidationError, match="Solo quien hizo la tirada o la dirección"):
        services.settle(table_roll, by=world.other)
    assert _state(table_roll) == before
    services.settle(table_roll, by=world.gm)
    table_roll.refresh_from_db()
    assert services.is_final(table_roll)


# --- the views ------------------------------------------------------------------------------------


def test_the_convert_view_answers_htmx_with_the_card_and_forms_with_a_redirect(aventuras_world):
    world = aventuras_world
    table_roll = a_roll(world, want=lambda tr: len(services.open_chachis(tr.facts)) >= 2)
    first, second = services.open_chachis(table_roll.facts)[:2]
    url = reverse("aventuras:convert", args=[table_roll.pk])
    client = client_for(world.player)
    response = client.post(url, {"position": first + 1, "client_seed": client_seed()}, **HTMX)
    assert response.status_code == 200
    assertContains(response, f'id="tirada-{table_roll.pk}"')
    assertContains(response, "(era un 6)")
    assertContains(response, "convierte el 6 del dado")
    response = client.post(url, {"position": second + 1})
    assert response.status_code == 302 and response["Location"] == table_roll.post.get_absolute_url()
    assert RollEntry.objects.filter(kind=RollEntry.Kind.EXTEND).count() == 2


def test_a_refused_step_shows_the_spanish_reason_in_the_card_or_the_page(aventuras_world):
    world = aventuras_world
    table_roll = a_roll(world, want=lambda tr: any(v != 6 for v in tr.facts["values"]) and with_chachi(tr))
    position = next(i for i, v in enumerate(table_roll.facts["values"]) if v != 6)
    url = reverse("aventuras:convert", args=[table_roll.pk])
    client = client_for(world.player)
    before = _state(table_roll)
    response = client.post(url, {"position": position + 1}, **HTMX)
    assert response.status_code == 200
    assertContains(response, "Solo se puede convertir un 6")
    response = client.post(url, {"position": position + 1})
    assert response.status_code == 400
    assertContains(response, "Solo se puede convertir un 6", status_code=400)
    response = client.post(url, {"position": "x"}, **HTMX)
    assertContains(response, "Elige un dado de la tirada.")
    response = client.post(reverse("aventuras:reroll", args=[table_roll.pk]), {}, **HTMX)
    assertContains(response, "Elige al menos un dado que repetir.")
    assert _state(table_roll) == before


def test_the_chain_views_scope_who_may_act(aventuras_world):
    """404 for outsiders of a private campaign, 403 for the other members
    (and anyone else in a public one); the GM may only close."""
    world = aventuras_world
    world.campaign.visibility = "private"
    world.campaign.save()
    table_roll = a_roll(world, want=with_chachi)
    position = services.open_chachis(table_roll.facts)[0] + 1
    urls = [
        (reverse("aventuras:convert", args=[table_roll.pk]), {"position": position}),
        (reverse("aventuras:effect", args=[table_roll.pk]), {"position": position}),
        (reverse("aventuras:reroll", args=[table_roll.pk]), {"positions": [1]}),
    ]
    for url, data in urls:
        assert client_for(world.outsider).post(url, data).status_code == 404
        for user in (world.other, world.reader, world.gm):
            assert client_for(user).post(url, data).status_code == 403
    settle = reverse("aventuras:settle", args=[table_roll.pk])
    assert client_for(world.outsider).post(settle).status_code == 404
    assert client_for(world.other).post(settle).status_code == 403
    anonymous = world.client("anonymous").post(settle)
    assert anonymous.status_code == 302 and anonymous["Location"].startswith(reverse("accounts:login"))
    response = client_for(world.gm).post(settle, **HTMX)
    assert response.status_code == 200
    assertContains(response, "Tirada cerrada")


def test_the_roll_page_and_its_fragment(aventuras_world):
    world = aventuras_world
    table_roll = a_roll(world, want=with_chachi)
    url = reverse("aventuras:roll", args=[table_roll.pk])
    page = client_for(world.player).get(url)
    assert page.status_code == 200
    assertContains(page, "<html", html=False)
    assertContains(page, "Convertir este 6")
    assertContains(page, "Gastar en un efecto")
    assertContains(page, "Repetir dados con un punto de Héroe")
    assertContains(page, "¡Ya está!")
    fragment = client_for(world.player).get(url, **HTMX)
    assert fragment.status_code == 200 and b"<html" not in fragment.content
    assertContains(fragment, f'id="tirada-{table_roll.pk}"')
    assert client_for(world.other).get(url).status_code == 403
    # A public campaign's outsider reads the roll but may not act on it.
    assert client_for(world.outsider).get(url).status_code == 403
    world.campaign.visibility = "private"
    world.campaign.save()
    assert client_for(world.outsider).get(url).status_code == 404


def test_effect_reroll_and_ya_esta_through_the_views(aventuras_world):
    world = aventuras_world
    table_roll = a_roll(
        world, want=lambda tr: len(services.open_chachis(tr.facts)) >= 1 and len(tr.facts["values"]) > 1
    )
    chachi = services.open_chachis(table_roll.facts)[0]
    other = next(i for i in range(len(table_roll.facts["values"])) if i != chachi)
    client = client_for(world.player)
    response = client.post(reverse("aventuras:effect", args=[table_roll.pk]), {"position": chachi + 1}, **HTMX)
    assertContains(response, "gastado en un efecto narrativo")
    response = client.post(
        reverse("aventuras:reroll", args=[table_roll.pk]), {"positions": [other + 1], "client_seed": client_seed()}
    )
    assert response.status_code == 302
    table_roll.refresh_from_db()
    assert table_roll.latest.kind == RollEntry.Kind.REROLL and table_roll.latest.entry["rerolled"] == [other]
    if not services.is_final(table_roll):
        response = client.post(reverse("aventuras:settle", args=[table_roll.pk]), **HTMX)
        assertContains(response, "Tirada cerrada")
    table_roll.refresh_from_db()
    assert services.is_final(table_roll)
    response = client.post(reverse("aventuras:settle", args=[table_roll.pk]), **HTMX)
    assertContains(response, "ya se dijo «¡Ya está!»")


# --- everything through the log ---------------------------------------------------------------


def test_an_extended_chain_and_a_reroll_verify_offline(aventuras_world):
    """Issue 16, item 6 — the standalone verifier checks an extension and a
    re-roll against their parents."""
    world = aventuras_world
    rerolled = a_roll(world)
    reroll_entry = services.hero_reroll(table_roll=rerolled, user=world.player, positions=[0, 1])
    extended = a_roll(world, want=with_chachi)
    extend_entry = services.convert(
        table_roll=extended, user=world.player, position=services.open_chachis(extended.facts)[0]
    )
    client = client_for(world.other)
    key = parse_public_key(settings.ROLLOG_KEYS.public_key_hex)
    for entry in (reroll_entry, extend_entry):
        bundle = json.loads(client.get(reverse("rolls:roll-json", args=[entry.permalink])).content)
        proof = verify_bundle(bundle, key)
        assert proof.content is not None
        assert proof.content.entry["game"]["system"] == "aventuras"
        assert proof.content.entry["dice"] == entry.entry["dice"]


def test_a_whispered_roll_and_its_chain_are_sealed(aventuras_world):
    """rollog v1.1 §3.7 — the extension is sealed for the roll's audience."""
    world = aventuras_world
    table_roll = a_roll(world, want=with_chachi, recipients="gm")
    assert table_roll.first.is_sealed
    entry = services.convert(
        table_roll=table_roll, user=world.player, position=services.open_chachis(table_roll.facts)[0]
    )
    assert entry.is_sealed and entry.audience == table_roll.first.audience
    # Out of sight of the other player.
    assert client_for(world.other).get(reverse("aventuras:roll", args=[table_roll.pk])).status_code == 404
