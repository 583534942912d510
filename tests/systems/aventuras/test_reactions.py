"""Reactions (A14–A18): free and optional, one per target, compared one by one.

S004: «Las reacciones son gratis […] pero son opcionales»; «la tirada de
acción tiene que superar la dificultad o los éxitos de la tirada de
reacción, lo que sea mayor»; «Si la tirada de reacción es mayor que la
tirada de acción, entonces el defensor bloquea totalmente la acción»; «se
realiza una única tirada para el personaje que realiza la acción, pero cada
personaje que pueda ser afectado reacciona por separado».
"""

from __future__ import annotations

import pytest
from django.core.exceptions import PermissionDenied, ValidationError

from campaigns.permissions import campaign_access
from rules.aventuras import Tally
from systems.aventuras.contests import reactions
from systems.aventuras.models import AventurasReaction
from systems.aventuras.rolls import services as rolls
from table.models import TableRoll
from tests.factories import CampaignFactory, UserFactory, make_post
from tests.systems.aventuras.conftest import aventuras_character
from tests.systems.aventuras.test_contests import queue_d6


@pytest.fixture
def d6(monkeypatch):
    return queue_d6(monkeypatch)


def access_of(world, who):
    return campaign_access(getattr(world, who), world.campaign)


def action_roll(world, character, who, attribute="cachas", difficulty=0):
    setup = rolls.roll_setup(character, attribute=attribute, difficulty=difficulty)
    return rolls.make_roll(
        campaign=world.campaign,
        user=getattr(world, who),
        setup=setup,
        purpose="Atizar al ogro",
        character=character,
        scene=world.scene,
    )


def loaded(table_roll):
    return TableRoll.objects.select_related("first__user", "latest__user", "owner", "character").get(pk=table_roll.pk)


# --- A15–A17, pure ----------------------------------------------------------------------------


def test_a15_the_action_must_beat_the_greater_of_difficulty_and_reaction():
    # Difficulty 1, reaction 2 successes: the action needs 3.
    r = reactions.result(Tally(normals=2), Tally(normals=2), 1)
    assert r["counted"] == 2 and r["by_reaction"]
    assert not r["succeeded"]  # a tie fails (A8)
    assert not r["blocked"]  # not more than the action: not a full block
    r = reactions.result(Tally(normals=3), Tally(normals=1), 2)
    assert r["counted"] == 2 and not r["by_reaction"]
    assert r["succeeded"]


def test_a16_a_bigger_reaction_blocks_completely():
    r = reactions.result(Tally(normals=1), Tally(normals=1, chachis=1), 0)
    assert r["blocked"] and not r["succeeded"]


def test_a17_normals_cancel_normals_first_chachis_cancel_chachis_first():
    # Action 2 normals + 2 chachis; reaction 1 normal + 1 chachi: left 1 + 1.
    r = reactions.result(Tally(normals=2, chachis=2), Tally(normals=1, chachis=1), 0)
    assert r["succeeded"]
    assert r["remaining"] == Tally(normals=1, chachis=1)
    # Reaction 3 normals against 2 normals + 2 chachis: the third normal takes a chachi.
    r = reactions.result(Tally(normals=2, chachis=2), Tally(normals=3), 0)
    assert r["remaining"] == Tally(normals=0, chachis=1)


def test_a14_no_reaction_is_the_difficulty_alone():
    r = reactions.result(Tally(normals=2), None, 1)
    assert r["counted"] == 1 and r["succeeded"] and not r["blocked"]


# --- open, answer, decline -------------------------------------------------------------------


def test_a18_one_reaction_per_target(aventuras_world, d6):
    world = aventuras_world
    d6.extend([[4, 4, 1]])
    action = action_roll(world, world.pc, "player")
    made = reactions.open_reactions(action, [world.other_pc, world.npc, world.npc], by=world.player)
    assert [r.target for r in made] == [world.other_pc, world.npc]
    assert list(reactions.open_for(world.npc)) == [made[1]]
    assert list(reactions.open_for(world.pc)) == []


def test_reacting_to_your_own_action_is_refused(aventuras_world, d6):
    world = aventuras_world
    d6.extend([[4, 4, 1]])
    action = action_roll(world, world.pc, "player")
    with pytest.raises(ValidationError, match="propia acción"):
        reactions.open_reactions(action, [world.pc], by=world.player)
    assert not AventurasReaction.objects.exists()


def test_a_target_not_in_the_campaign_is_refused(aventuras_world, d6):
    world = aventuras_world
    stranger = aventuras_character(CampaignFactory(system="aventuras"), UserFactory(), "Rey Hielo")
    d6.extend([[4, 4, 1]])
    action = action_roll(world, world.pc, "player")
    with pytest.raises(ValidationError, match="no es un personaje de esta partida"):
        reactions.open_reactions(action, [world.npc, stranger], by=world.player)
    assert not AventurasReaction.objects.exists()


def test_a14_declining_then_reacting_is_refused(aventuras_world, d6):
    world = aventuras_world
    d6.extend([[4, 4, 1]])
    action = action_roll(world, world.pc, "player")
    (reaction,) = reactions.open_reactions(action, [world.npc], by=world.player)
    with pytest.raises(PermissionDenied):
        reactions.decline(reaction=reaction, access=access_of(world, "player"))
    reactions.decline(reaction=reaction, access=access_of(world, "gm"))
    count = TableRoll.objects.count()
    with pytest.raises(ValidationError, match="decidido no reaccionar"):
        reactions.react(reaction=reaction, access=access_of(world, "gm"), attribute="espabilado")
    assert TableRoll.objects.count() == count
    with pytest.raises(ValidationError, match="decidido no reaccionar"):
        reactions.decline(reaction=reaction, access=access_of(world, "gm"))


def test_reacting_twice_is_refused(aventuras_world, d6):
    world = aventuras_world
    d6.extend([[4, 4, 1], [1, 2, 3]])
    action = action_roll(world, world.pc, "player")
    (reaction,) = reactions.open_reactions(action, [world.npc], by=world.player)
    reactions.react(reaction=reaction, access=access_of(world, "gm"), attribute="espabilado")
    with pytest.raises(ValidationError, match="ya ha reaccionado"):
        reactions.react(reaction=reaction, access=access_of(world, "gm"), attribute="espabilado")
    with pytest.raises(ValidationError, match="ya ha reaccionado"):
        reactions.decline(reaction=reaction, access=access_of(world, "gm"))


def test_answer_from_a_post_checks_the_roll_and_who_answers(aventuras_world, d6):
    world = aventuras_world
    d6.extend([[4, 4, 1], [5, 5, 1], [5, 5]])
    action = action_roll(world, world.npc, "gm", attribute="espabilado")
    (reaction,) = reactions.open_reactions(action, [world.other_pc], by=world.gm)
    palomita = action_roll(world, world.pc, "player")
    with pytest.raises(ValidationError, match="objetivo de la acción"):
        reactions.answer(reaction, palomita, by=world.player)
    tarta = action_roll(world, world.other_pc, "other")
    with pytest.raises(PermissionDenied):
        reactions.answer(reaction, tarta, by=world.player)
    reactions.answer(reaction, tarta, by=world.other)
    reaction.refresh_from_db()
    assert reaction.roll_id == tarta.pk


# --- the card --------------------------------------------------------------------------------


def test_card_shows_each_target_and_the_result_once_final(aventuras_world, d6):
    # One action (3 normals, difficulty 1) against two targets (A18): Tarta
    # Dulce reacts with 4 successes (blocks it, A16); the Profesor declines (A14).
    world = aventuras_world
    d6.extend([[4, 5, 4], [5, 5, 4, 4]])
    action = action_roll(world, world.pc, "player", attribute="cachas", difficulty=1)
    tarta, profe = reactions.open_reactions(action, [world.other_pc, world.npc], by=world.player)
    reactions.react(reaction=tarta, access=access_of(world, "other"), attribute="espabilado")
    part = reactions.card_reactions([loaded(action)], access=access_of(world, "gm"))[action.pk]
    states = {row["target"].pk: row["state"] for row in part["rows"]}
    assert states == {world.other_pc.pk: "rolled", world.npc.pk: "waiting"}
    assert all(row["result"] is None for row in part["rows"])  # nothing final yet
    gm_rows = {row["target"].pk: row for row in part["rows"]}
    assert gm_rows[world.npc.pk]["can_answer"] and not gm_rows[world.other_pc.pk]["can_answer"]
    reactions.decline(reaction=profe, access=access_of(world, "gm"))
    rolls.settle(action, by=world.player)
    rolls.settle(reactions_roll(tarta), by=world.other)
    part = reactions.card_reactions([loaded(action)], access=access_of(world, "reader"))[action.pk]
    results = {row["target"].pk: row["result"] for row in part["rows"]}
    assert results[world.other_pc.pk]["blocked"] and results[world.other_pc.pk]["counted"] == 4
    assert results[world.npc.pk]["succeeded"] and results[world.npc.pk]["counted"] == 1
    assert results[world.npc.pk]["remaining"] == Tally(normals=2)
    assert not any(row["can_answer"] for row in part["rows"])


def reactions_roll(reaction):
    reaction.refresh_from_db()
    return TableRoll.objects.get(pk=reaction.roll_id)


def test_card_reactions_in_constant_queries(aventuras_world, d6, django_assert_max_num_queries):
    world = aventuras_world
    actions = []
    for _i in range(4):
        d6.extend([[4, 4, 1], [4, 1, 1]])
        action = action_roll(world, world.pc, "player")
        (reaction,) = reactions.open_reactions(action, [world.npc], by=world.player)
        reactions.react(reaction=reaction, access=access_of(world, "gm"), attribute="espabilado")
        actions.append(loaded(action))
    access = access_of(world, "gm")
    with django_assert_max_num_queries(12):
        few = reactions.card_reactions(actions[:1], access=access)
    with django_assert_max_num_queries(12):
        many = reactions.card_reactions(actions, access=access)
    assert len(few) == 1 and len(many) == 4


# --- private posts (issue 16 review) ------------------------------------------------------


def _post_roll(world, character, who, post, attribute="espabilado"):
    setup = rolls.roll_setup(character, attribute=attribute)
    return rolls.make_roll(
        campaign=world.campaign,
        user=getattr(world, who),
        setup=setup,
        purpose="Me aparto",
        character=character,
        scene=world.scene,
        post=post,
    )


def _render_part(part, action):
    from django.template.loader import render_to_string

    return render_to_string("aventuras/reactions/_card_part.html", {"card": {"reactions": part, "table_roll": action}})


def test_a_private_reaction_shows_no_numbers_to_who_may_not_read_it(aventuras_world, d6):
    # The Profesor acts in public (difficulty 1, 3 successes); Palomita
    # reacts from a post to the GM only (2 successes): the action still
    # hits her. The reader and the other player learn that she reacted and
    # that the action hit, never her dice or the counts.
    world = aventuras_world
    d6.extend([[5, 5, 4], [4, 4]])
    action = action_roll(world, world.npc, "gm", attribute="espabilado", difficulty=1)
    (reaction,) = reactions.open_reactions(action, [world.pc], by=world.gm)
    post = make_post(world.scene, world.player, recipients="gm", body="Me aparto de un salto.")
    answer = _post_roll(world, world.pc, "player", post)
    reactions.answer(reaction, answer, by=world.player)
    for table_roll, who in ((action, world.gm), (reactions_roll(reaction), world.player)):
        table_roll.refresh_from_db()
        if not rolls.is_final(table_roll):
            rolls.settle(table_roll, by=who)
    for who in ("reader", "other"):
        (row,) = reactions.card_reactions([loaded(action)], access=access_of(world, who))[action.pk]["rows"]
        assert row["private"] and row["card"] is None
        assert row["result"]["succeeded"] and row["result"]["private"]
        html = _render_part({"rows": [row]}, action)
        assert "reacciona (tirada privada)" in html
        assert "Le afecta." in html
        assert "éxito" not in html and "Quedan" not in html and "dificultad" not in html
    for who in ("gm", "player"):
        (row,) = reactions.card_reactions([loaded(action)], access=access_of(world, who))[action.pk]["rows"]
        assert not row["private"] and row["card"] is not None
        html = _render_part({"rows": [row]}, action)
        assert "tirada privada" not in html and "Queda 1 éxito normal" in html


def test_the_reaction_to_a_private_action_is_sealed_like_the_action(aventuras_world, d6):
    # Palomita acts in a post to the GM only; the Profesor's reaction
    # («Reaccionar») is no more public than the action: same post, same seal.
    world = aventuras_world
    d6.extend([[4, 4, 1], [5, 1, 1]])
    post = make_post(world.scene, world.player, recipients="gm", body="Le atizo a escondidas.")
    action = _post_roll(world, world.pc, "player", post, attribute="cachas")
    assert action.first.is_sealed
    (reaction,) = reactions.open_reactions(action, [world.npc], by=world.player)
    made = reactions.react(reaction=reaction, access=access_of(world, "gm"), attribute="espabilado")
    assert made.post_id == post.pk
    assert made.first.is_sealed and made.first.audience == action.first.audience
    from rolls.permissions import can_read_roll

    assert not can_read_roll(access_of(world, "other"), made.first)
    assert not can_read_roll(access_of(world, "reader"), made.first)
    assert can_read_roll(access_of(world, "player"), made.first)


def test_a_reaction_to_a_public_action_stays_out_of_posts(aventuras_world, d6):
    world = aventuras_world
    d6.extend([[4, 4, 1], [5, 1, 1]])
    post = make_post(world.scene, world.player, body="Le atizo.")
    action = _post_roll(world, world.pc, "player", post, attribute="cachas")
    (reaction,) = reactions.open_reactions(action, [world.npc], by=world.player)
    made = reactions.react(reaction=reaction, access=access_of(world, "gm"), attribute="espabilado")
    assert made.post_id is None and not made.first.is_sealed


def test_a_target_only_reacts_to_an_action_its_owner_may_read(aventuras_world, d6):
    # The Profesor acts against Tarta Dulce in a post to the GM only: her
    # player cannot read it, so it is not offered and «Reaccionar» is refused.
    world = aventuras_world
    d6.extend([[4, 4, 1], [4, 1, 1]])
    hidden_post = make_post(world.scene, world.gm, recipients="gm", body="El Profesor trama algo.")
    hidden = _post_roll(world, world.npc, "gm", hidden_post)
    (secret,) = reactions.open_reactions(hidden, [world.other_pc], by=world.gm)
    public = action_roll(world, world.npc, "gm", attribute="espabilado")
    (open_one,) = reactions.open_reactions(public, [world.other_pc], by=world.gm)
    assert list(reactions.open_for(world.other_pc)) == [open_one]
    # A whisper to Tarta Dulce's player is in her sight; the GM reads everything.
    d6.extend([[4, 1, 1]])
    whisper = make_post(world.scene, world.gm, recipients="chosen", chosen=[world.other], body="Psst.")
    (whispered,) = reactions.open_reactions(_post_roll(world, world.npc, "gm", whisper), [world.other_pc], by=world.gm)
    assert set(reactions.open_for(world.other_pc)) == {open_one, whispered}
    reactions.open_reactions(hidden, [world.pc], by=world.gm)
    assert list(reactions.open_for(world.pc)) == []
    count = TableRoll.objects.count()
    with pytest.raises(PermissionDenied):
        reactions.react(reaction=secret, access=access_of(world, "other"), attribute="espabilado")
    assert TableRoll.objects.count() == count


def test_the_card_counts_one_success_in_the_singular():
    # A15 — a reaction of 1 success over difficulty 0: «superar el 1 éxito», never «los 1 éxitos».
    from types import SimpleNamespace

    res = {**reactions.result(Tally(normals=1), Tally(normals=1), 0), "hidden": False, "private": False}
    row = {
        "reaction": SimpleNamespace(pk=1),
        "target": SimpleNamespace(name="Tarta Dulce"),
        "state": "rolled",
        "private": False,
        "result": res,
    }
    html = _render_part({"rows": [row]}, SimpleNamespace(pk=1))
    assert "superar el 1 éxito de la reacción" in html and "los 1 éxitos" not in html
    res = {**reactions.result(Tally(normals=3), Tally(normals=2), 0), "hidden": False, "private": False}
    html = _render_part({"rows": [{**row, "result": res}]}, SimpleNamespace(pk=1))
    assert "superar los 2 éxitos de la reacción" in html


def test_the_card_says_what_is_left_in_the_singular_and_the_plural():
    # A17 — what gets through: «Queda 1 éxito normal y 1 chachi», never «1 éxitos».
    from types import SimpleNamespace

    def left(action, reaction):
        res = {**reactions.result(action, reaction, 0), "hidden": False, "private": False}
        row = {
            "reaction": SimpleNamespace(pk=1),
            "target": SimpleNamespace(name="Tarta Dulce"),
            "state": "rolled",
            "private": False,
            "result": res,
        }
        html = _render_part({"rows": [row]}, SimpleNamespace(pk=1))
        return " ".join(html.split())

    one = left(Tally(normals=2, chachis=1), Tally(normals=1))
    assert "Queda 1 éxito normal y 1 chachi." in one and "1 éxitos" not in one and "1 chachis" not in one
    many = left(Tally(normals=3, chachis=2), Tally())
    assert "Quedan 3 éxitos normales y 2 chachis." in many
    none_left = left(Tally(chachis=1), Tally())
    assert "Quedan 0 éxitos normales y 1 chachi." in none_left
