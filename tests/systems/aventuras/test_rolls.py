"""Hora de Aventuras rolls in posts (issue 16, items 2 and 6): the post form's
row, the dice from the sheet and the exact chance before publishing, with
and without converting chachis (A2, A3, A5, A7, A8, A10, A22, A28, A29),
the signed entry that says "aventuras" and verifies offline (A4, A8, A9,
A30), +2 dice for a hero point paid in the post's transaction (A22, A24),
zero dice (A3) and whispered rolls sealed."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command
from django.template.defaultfilters import floatformat
from django.urls import reverse
from django.utils import translation
from pytest_django.asserts import assertContains, assertNotContains

from rolls.models import RollEntry
from rules import aventuras
from systems.aventuras.models import AventurasState, HeroMove
from systems.aventuras.rolls import services
from table.models import TableRoll
from tests.conftest import client_for
from tests.factories import client_seed

pytestmark = pytest.mark.django_db


def _row(i: int, **fields) -> dict[str, str]:
    return {f"tirada-{i}-{name}": str(value) for name, value in fields.items()}


def _form(character, *, body="Palomita aúlla a la puerta.", recipients="all", **extra) -> dict[str, str]:
    data = {
        "voice": f"character:{character.pk}",
        "body": body,
        "recipients": recipients,
        "submission_key": client_seed(),
    }
    data.update(extra)
    return data


def _percent(dice: int, difficulty: int = 0, *, threshold: int = 4, convert: bool = False) -> str:
    chance = aventuras.success_probability(dice, difficulty, threshold=threshold, convert_chachis=convert)
    with translation.override("es"):
        return floatformat(float(chance * 100), 1)


def _chance(client, scene, character, **row):
    url = reverse("table:post-roll-chance", args=[scene.campaign.slug, scene.pk])
    return client.get(url, {"fila": "0", "voice": f"character:{character.pk}", **_row(0, **row)})


def _publish(client, scene, character, recipients="all", **row):
    url = reverse("table:post-create", args=[scene.campaign.slug, scene.pk])
    return client.post(url, _form(character, recipients=recipients, **_row(0, client_seed=client_seed(), **row)))


# --- the form and the chance before rolling --------------------------------------------------


def test_the_post_form_offers_aventuras_rows(aventuras_world):
    """A1, A8, A29 — attribute, difficulty with the seed's words (A10), kind,
    tool, modifier, threshold effects, hero point, targets."""
    world = aventuras_world
    response = client_for(world.player).get(world.scene.get_absolute_url())
    html = response.content.decode()
    for name in (
        "attribute",
        "difficulty",
        "action_kind",
        "tool",
        "modifier",
        "easier",
        "harder",
        "hero_point",
        "with_experience",
        "targets",
        "purpose",
        "client_seed",
    ):
        assert f'name="tirada-0-{name}"' in html, name
    assertContains(response, "Varita (+1 Cerebrito)")
    # A10 — S004 has no guide: only the words it uses.
    assertContains(response, "0 — de las más fáciles")
    assertContains(response, "2 — dificililla")
    # A player rolls no NPC.
    assert 'name="tirada-0-npc"' not in html


def test_the_chance_is_exact_with_and_without_converting_chachis(aventuras_world):
    """A2, A5, A8 — Majo 4 highlighted: 4 dice against difficulty 2; both chances exact."""
    world = aventuras_world
    response = _chance(client_for(world.player), world.scene, world.pc, attribute="majo", difficulty=2)
    assert response.status_code == 200
    assertContains(response, f"Probabilidad de éxito: {_percent(4, 2)} %")
    assertContains(response, f"Convirtiendo cada 6 en un 5 y un dado más: {_percent(4, 2, convert=True)} %")
    assertContains(response, "Majo (destacado) 4")
    assertContains(response, "dificultad 2 (dificililla)")


def test_an_attribute_not_highlighted_rolls_two_dice_and_bonuses_add(aventuras_world):
    """A2 — Cerebrito not highlighted: 2 dice; A29 the Varita +1; A3 −1; A22 +2."""
    world = aventuras_world
    tool = world.pc.aventuras.tools.get()
    response = _chance(
        client_for(world.player),
        world.scene,
        world.pc,
        attribute="cerebrito",
        tool=tool.pk,
        modifier=-1,
        hero_point="on",
    )
    assertContains(response, "Cerebrito (sin destacar) 2, Varita +1, Modificador -1, Punto de Héroe +2")
    assertContains(response, "4 dados")
    assertContains(response, f"Probabilidad de éxito: {_percent(4)} %")


def test_states_of_the_actions_kind_count_and_threshold_effects_move_it(aventuras_world):
    """A3 — a state's dice on actions of its kind; A7 — easing and hardening
    effects cancel, one direction moves the threshold one step only."""
    world = aventuras_world
    sheet = world.pc.aventuras
    AventurasState.objects.create(sheet=sheet, name="Hambrienta", modifier=-1, applies_to="física")
    AventurasState.objects.create(sheet=sheet, name="Animada", threshold="easier", applies_to="social")
    client = client_for(world.player)
    physical = _chance(client, world.scene, world.pc, attribute="cachas", action_kind="física")
    assertContains(physical, "Estado: Hambrienta -1")
    assertContains(physical, f"Probabilidad de éxito: {_percent(2)} %")
    # Not a physical action: the hungry state does not touch it.
    mental = _chance(client, world.scene, world.pc, attribute="cachas", action_kind="mental")
    assertNotContains(mental, "Hambrienta")
    # A7 — the state eases social actions (3+); two hardening effects make 5+ once (no stacking), the
    # easing state cancels one of them: back to 4+.
    social = _chance(client, world.scene, world.pc, attribute="majo", action_kind="social", harder=2)
    assertContains(social, f"Probabilidad de éxito: {_percent(4, threshold=5)} %")
    social_eased = _chance(client, world.scene, world.pc, attribute="majo", action_kind="social")
    assertContains(social_eased, "éxito con 3 o más")
    assertContains(social_eased, f"Probabilidad de éxito: {_percent(4, threshold=3)} %")
    balanced = _chance(client, world.scene, world.pc, attribute="majo", action_kind="social", harder=1)
    assertNotContains(balanced, "éxito con")
    assertContains(balanced, f"Probabilidad de éxito: {_percent(4)} %")


def test_a_state_ignored_with_a_hero_point_does_not_count_on_the_next_post(aventuras_world):
    """A23 — «ignorar un estado durante un turno»: the point spent after the
    character's latest post counts for the post being written (its rolls are
    planned before it exists); the post after that counts the state again."""
    from systems.aventuras.heroes import services as heroes

    world = aventuras_world
    hungry = AventurasState.objects.create(sheet=world.pc.aventuras, name="Hambrienta", modifier=-1)
    client = client_for(world.player)
    assertContains(_chance(client, world.scene, world.pc, attribute="cachas"), "Estado: Hambrienta -1")
    heroes.ignore_state(character=world.pc, actor=world.player, scene=world.scene, state_id=hungry.pk, why="¡Prisa!")
    ignored = _chance(client, world.scene, world.pc, attribute="cachas")
    assertNotContains(ignored, "Estado: Hambrienta -1")
    assertContains(ignored, "ignorado con un punto de Héroe")
    assertContains(ignored, f"Probabilidad de éxito: {_percent(3)} %")
    assert _publish(client, world.scene, world.pc, attribute="cachas", purpose="Correr").status_code == 302
    roll = TableRoll.objects.get(character=world.pc)
    assert len(roll.latest.entry["dice"]) == 3
    # The turn moved on with that post: the state counts again.
    assertContains(_chance(client, world.scene, world.pc, attribute="cachas"), "Estado: Hambrienta -1")


def test_zero_dice_is_an_automatic_failure_shown_on_the_form(aventuras_world):
    """A3 [ENGINE DEFAULT] — a penalty down to zero dice: nothing to roll."""
    world = aventuras_world
    response = _chance(client_for(world.player), world.scene, world.pc, attribute="cachas", modifier=-3)
    assertContains(response, "Con 0 dados la acción falla automáticamente")
    published = _publish(client_for(world.player), world.scene, world.pc, attribute="cachas", modifier=-3, purpose="x")
    assert published.status_code == 200
    assert not TableRoll.objects.exists() and not RollEntry.objects.exists()


def test_bad_rows_are_refused_in_spanish_and_keep_what_was_typed(aventuras_world):
    world = aventuras_world
    client = client_for(world.player)
    tool = world.pc.aventuras.tools.get()
    # A29 — the Varita is for Cerebrito.
    response = _publish(client, world.scene, world.pc, attribute="cachas", tool=tool.pk, purpose="Romper la puerta")
    assertContains(response, "Varita sirve para Cerebrito.")
    assertContains(response, "Palomita aúlla a la puerta.")
    assertContains(response, 'value="Romper la puerta"')
    response = _publish(client, world.scene, world.pc, purpose="Sin atributo")
    assertContains(response, "Elige el atributo que pide la dirección.")
    response = _publish(client, world.scene, world.pc, attribute="majo", difficulty=99, purpose="Mucho")
    assertContains(response, "La dificultad va de 0 a 10.")
    response = _publish(client, world.scene, world.pc, attribute="majo", with_experience="on", purpose="PX")
    assertContains(response, "Pagar con 2 PX es para el punto de Héroe")
    assert not TableRoll.objects.exists()


# --- publishing ---------------------------------------------------------------------------


def test_a_post_with_an_aventuras_roll_signs_the_reading_and_verifies(aventuras_world):
    """A4, A8, A9 — the entry's signed game says "aventuras", the faces as
    read, failures, successes, chachis, what the difficulty cancelled and
    the outcome the rules give; the log verifies offline."""
    world = aventuras_world
    response = _publish(
        client_for(world.player), world.scene, world.pc, attribute="majo", difficulty=1, purpose="Convencer"
    )
    assert response.status_code == 302
    table_roll = TableRoll.objects.get()
    signed = table_roll.first.entry
    game = signed["game"]
    assert signed["spec"] == "4d6" and len(signed["dice"]) == 4
    state = aventuras.AventurasRoll(tuple(signed["dice"]))
    resolution = aventuras.resolve(state.tally, 1)
    assert game["system"] == "aventuras" and game["attribute"] == "majo"
    assert game["breakdown"] == [["Majo (destacado)", 4]]
    assert game["difficulty"] == 1 and game["threshold"] == 4 and game["converted"] == []
    assert game["values"] == list(signed["dice"])
    assert (game["normals"], game["chachis"]) == (state.tally.normals, state.tally.chachis)
    assert game["failures"] == 4 - state.tally.successes
    assert game["remaining"] == [resolution.remaining.normals, resolution.remaining.chachis]
    assert game["succeeded"] is resolution.succeeded
    assert table_roll.owner_id == world.player.pk and table_roll.character_id == world.pc.pk
    assert table_roll.facts["values"] == list(signed["dice"])
    out = StringIO()
    call_command("verify_rolls", "--campaign", world.campaign.slug, stdout=out, no_color=True)
    assert out.getvalue().startswith(f"OK  {world.campaign.slug}:")


def test_a_hero_point_adds_two_dice_paid_in_the_posts_turn(aventuras_world):
    """A22 — +2 dice before rolling, one point spent, its move tied to the
    roll and to the post's turn (A24)."""
    world = aventuras_world
    response = _publish(
        client_for(world.player), world.scene, world.pc, attribute="majo", hero_point="on", purpose="¡Más!"
    )
    assert response.status_code == 302
    table_roll = TableRoll.objects.get()
    assert table_roll.first.entry["spec"] == "6d6"
    assert table_roll.first.signed_game["hero_dice"] is True
    world.pc.aventuras.refresh_from_db()
    assert world.pc.aventuras.hero_points == 4
    move = HeroMove.objects.get()
    assert move.use == aventuras.HeroSpend.ADD_DICE and move.table_roll_id == table_roll.pk
    assert move.turn == f"post:{table_roll.post_id}"


def test_a_hero_point_can_be_paid_with_two_experience_points(aventuras_world):
    """A28 — 2 XP buy an instant point, spent at once: the points stay."""
    world = aventuras_world
    response = _publish(
        client_for(world.player),
        world.scene,
        world.pc,
        attribute="majo",
        hero_point="on",
        with_experience="on",
        purpose="PX",
    )
    assert response.status_code == 302
    sheet = world.pc.aventuras
    sheet.refresh_from_db()
    assert (sheet.hero_points, sheet.experience) == (5, 2)
    assert TableRoll.objects.get().first.entry["spec"] == "6d6"


def test_two_rows_with_a_hero_point_each_in_one_post_are_refused(aventuras_world):
    """A24 — no +4 dice: two points on the same use in one turn; nothing changed."""
    world = aventuras_world
    url = reverse("table:post-create", args=[world.campaign.slug, world.scene.pk])
    rows = {
        **_row(0, attribute="majo", hero_point="on", purpose="Uno", client_seed=client_seed()),
        **_row(1, attribute="cachas", hero_point="on", purpose="Dos", client_seed=client_seed()),
    }
    response = client_for(world.player).post(url, _form(world.pc, **rows))
    assertContains(response, "Ya has gastado un punto de Héroe en «añadir dos dados» este turno")
    assert not TableRoll.objects.exists() and not HeroMove.objects.exists()
    world.pc.aventuras.refresh_from_db()
    assert world.pc.aventuras.hero_points == 5


def test_a_hero_point_without_points_is_refused(aventuras_world):
    world = aventuras_world
    sheet = world.pc.aventuras
    sheet.hero_points = 0
    sheet.save()
    response = _publish(
        client_for(world.player), world.scene, world.pc, attribute="majo", hero_point="on", purpose="¿?"
    )
    assertContains(response, "Palomita no tiene puntos de Héroe que gastar.")
    assert not TableRoll.objects.exists()


def test_the_gm_rolls_for_an_npc_without_hero_points(aventuras_world):
    """A20 — a GM character has no hero points: its roll is final at once
    when no 6 is left to decide."""
    world = aventuras_world
    url = reverse("table:post-create", args=[world.campaign.slug, world.scene.pk])
    data = {
        "voice": "ooc",
        "body": "El Profesor piensa.",
        "recipients": "all",
        "submission_key": client_seed(),
        **_row(0, npc=world.npc.pk, attribute="espabilado", purpose="Pensar rápido", client_seed=client_seed()),
    }
    response = client_for(world.gm).post(url, data)
    assert response.status_code == 302, response.content.decode()[:2000]
    table_roll = TableRoll.objects.get()
    assert table_roll.character_id == world.npc.pk and table_roll.first.entry["spec"] == "3d6"
    assert services.is_final(table_roll) is (6 not in table_roll.first.entry["dice"])
    response = _chance(
        client_for(world.gm), world.scene, world.pc, npc=world.npc.pk, attribute="cachas", hero_point="on"
    )
    assertContains(response, "es un personaje del director: no tiene puntos de Héroe.")


def test_a_whispered_roll_is_sealed(aventuras_world):
    """Issue 16, item 6 — a roll in a post to the GM alone is sealed."""
    world = aventuras_world
    response = _publish(
        client_for(world.player), world.scene, world.pc, recipients="gm", attribute="majo", purpose="Secreto"
    )
    assert response.status_code == 302
    entry = TableRoll.objects.get().first
    assert entry.is_sealed and entry.audience


def test_the_a30_worked_example_is_read_by_the_rules_engine():
    """A30 — S004's example: «su resultado final es 3, 5, 5, 4. ¡Tres éxitos!
    ¡Palomita ha superado la dificultad!». The dice are the seed's, read by
    the reader every version of a roll signs (the log draws its own dice, so
    the shape is replayed on the reading)."""
    fields = {"system": "aventuras", "threshold": 4, "difficulty": 2}
    first = services.aventuras_reader(fields, difficulty=2, step=services.STEP_ROLL)([3, 6])
    assert (first["normals"], first["chachis"], first["succeeded"]) == (0, 1, False)
    second = services.aventuras_reader(fields, difficulty=2, converted=[1], step=services.STEP_CONVERT)([3, 6, 6])
    # Two successes against difficulty 2: not yet (A8: more than the difficulty).
    assert second["values"] == [3, 5, 6] and second["succeeded"] is False
    # Converting the second 6 too: 3, 5, 5, 4.
    final = services.aventuras_reader(fields, difficulty=2, converted=[1, 2], step=services.STEP_CONVERT)([3, 6, 6, 4])
    assert final["values"] == [3, 5, 5, 4]
    assert (final["successes"], final["chachis"], final["succeeded"]) == (3, 0, True)
    assert final["remaining"] == [1, 0]


# --- targets and reactions (A18; the reactions are systems.aventuras.contests') -----------------


def test_a_roll_with_targets_opens_one_reaction_per_target(aventuras_world, monkeypatch):
    """A18 — «cada personaje que pueda ser afectado reacciona por separado»:
    the row's «objetivos» open a reaction each; the target's next post may
    answer one with its roll («reacciona a»)."""
    from systems.aventuras.contests import reactions
    from systems.aventuras.models import AventurasReaction

    world = aventuras_world
    response = _publish(
        client_for(world.player),
        world.scene,
        world.pc,
        attribute="cachas",
        targets=world.other_pc.pk,
        purpose="Placaje",
    )
    assert response.status_code == 302
    action = TableRoll.objects.get()
    reaction = AventurasReaction.objects.get()
    assert (reaction.action_id, reaction.target_id) == (action.pk, world.other_pc.pk)
    form = client_for(world.other).get(world.scene.get_absolute_url())
    assertContains(form, 'name="tirada-0-reacts_to"')
    assertContains(form, "Tarta Dulce: Placaje")
    answered = []
    monkeypatch.setattr(reactions, "answer", lambda r, tr, *, by: answered.append((r.pk, tr.pk, by.pk)))
    response = _publish(
        client_for(world.other),
        world.scene,
        world.other_pc,
        attribute="espabilado",
        reacts_to=reaction.pk,
        purpose="Esquivar",
    )
    assert response.status_code == 302
    roll = TableRoll.objects.exclude(pk=action.pk).get()
    assert roll.kind == "reaction"
    assert answered == [(reaction.pk, roll.pk, world.other.pk)]


def test_the_gm_acts_on_an_npc_roll(aventuras_world):
    """The GM decides for an NPC's roll: a chachi converted (A5)."""
    world = aventuras_world
    for _ in range(60):
        table_roll = services.make_roll(
            campaign=world.campaign,
            user=world.gm,
            setup=services.roll_setup(world.npc, attribute="espabilado", modifier=3),
            purpose="Huir del lobo",
            character=world.npc,
            scene=world.scene,
            client_seed=client_seed(),
        )
        if services.open_chachis(table_roll.facts):
            break
    assert not services.is_final(table_roll)
    position = services.open_chachis(table_roll.facts)[0]
    entry = services.convert(table_roll=table_roll, user=world.gm, position=position)
    assert entry.entry["converted"] == [position]


def test_a_whispered_action_is_not_offered_to_a_target_who_may_not_read_it(aventuras_world):
    """A18 — the target reacts from its post, but only to actions it may
    read: an action whispered to the GM opens a reaction for Palomita whose
    purpose must not reach her player (``table.access.may_read_table_roll``);
    an action in the open is offered."""
    from systems.aventuras.models import AventurasReaction

    world = aventuras_world
    url = reverse("table:post-create", args=[world.scene.campaign.slug, world.scene.pk])
    whisper = _form(
        world.other_pc,
        body="Tarta Dulce se acerca sin hacer ruido.",
        recipients="chosen",
        chosen=world.gm.pk,
        **_row(
            0, client_seed=client_seed(), attribute="espabilado", targets=world.pc.pk, purpose="Robar el mapa secreto"
        ),
    )
    assert client_for(world.other).post(url, whisper).status_code == 302
    assert AventurasReaction.objects.filter(target=world.pc).count() == 1
    # The same kind of action in the open.
    response = _publish(
        client_for(world.other), world.scene, world.other_pc, attribute="cachas", targets=world.pc.pk, purpose="Placaje"
    )
    assert response.status_code == 302
    page = client_for(world.player).get(world.scene.get_absolute_url())
    assertContains(page, "Palomita: Placaje")
    assertNotContains(page, "Robar el mapa secreto")
    assertContains(client_for(world.gm).get(world.scene.get_absolute_url()), "Robar el mapa secreto")
    # The row's own filter, whatever ``open_for`` offers: by the author's access, in one query.
    from campaigns.permissions import campaign_access
    from systems.aventuras.system import readable_reactions

    every = AventurasReaction.objects.filter(target=world.pc).order_by("pk")

    def purposes(who) -> list[str]:
        shown = readable_reactions(every, campaign_access(who, world.campaign)).select_related("action__first")
        return [r.action.first.purpose for r in shown]

    assert purposes(world.player) == ["Placaje"]
    assert purposes(world.gm) == ["Robar el mapa secreto", "Placaje"]
    # Nor can the hidden one be answered by its id.
    hidden = AventurasReaction.objects.get(action__first__purpose="Robar el mapa secreto")
    response = _publish(
        client_for(world.player), world.scene, world.pc, attribute="cachas", reacts_to=hidden.pk, purpose="Esquivar"
    )
    assert response.status_code == 200
    assertContains(response, "Esa acción ya no espera tu reacción.")


@pytest.mark.parametrize(
    ("easier", "harder", "said"),
    [(1, 0, "1 que facilita"), (2, 0, "2 que facilitan"), (0, 1, "1 que dificulta"), (0, 3, "3 que dificultan")],
)
def test_the_threshold_effects_are_said_in_singular_or_plural(aventuras_world, easier, harder, said):
    """A7 — the effects that ease or harden the action, counted in Spanish."""
    setup = services.roll_setup(aventuras_world.pc, attribute="majo", easier=easier, harder=harder)
    assert setup.threshold_effects == (said,)


def test_a_reaction_opened_after_the_page_was_read_reaches_the_kept_post_form(aventuras_world):
    """A14/A18 — the post form is kept in the cache under what its rows are
    made of; a new action against Palomita (and her answer) must change her
    «Reacciona a» choices at once, not when the cache expires."""
    from systems.aventuras.models import AventurasReaction

    world = aventuras_world
    player = client_for(world.player)
    assertNotContains(player.get(world.scene.get_absolute_url()), "Palomita: Placaje")
    response = _publish(
        client_for(world.other), world.scene, world.other_pc, attribute="cachas", targets=world.pc.pk, purpose="Placaje"
    )
    assert response.status_code == 302
    assertContains(player.get(world.scene.get_absolute_url()), "Palomita: Placaje")
    reaction = AventurasReaction.objects.get(target=world.pc)
    reaction.declined_at = reaction.created_at
    reaction.declined_by = world.player
    reaction.save()
    assertNotContains(player.get(world.scene.get_absolute_url()), "Palomita: Placaje")


def test_the_difficulty_words_are_the_rules_words_and_translated():
    """A8/A10 — the site shows exactly the words S004 gives (0 and 2), in the reader's language."""
    assert {n: str(label) for n, label in services.DIFFICULTY_WORD_LABELS.items()} == aventuras.DIFFICULTY_WORDS
    with translation.override("en"):
        assert services.difficulty_word(2) not in ("", "dificililla")
        assert services.difficulty_word(1) == ""
