"""Fear tests (issue 15, item 4): the GM starts one in a scene against a
creature or a Fear value for the PCs present; each player answers from the
scene with Lógica or Empatía (V26: +1 die per companion neither Broken nor
Aterrorizado, max +3; −1 per mental condition; Fear successes needed; the
exact chance shown first); a failure may be pushed once with a mental
condition, then accepted (V27: 1d6 rounds Aterrorizado through the log, Fear −
successes mental conditions, the reaction stored, Broken → a mental critical
injury). Access: outsiders 404, other members 403; Spanish refusals with
nothing changed; the page's queries pinned."""

from __future__ import annotations

import pytest
from django.core.exceptions import PermissionDenied, ValidationError
from django.urls import reverse
from pytest_django.asserts import assertContains, assertNotContains

from rolls.models import RollEntry
from sheets.models import SheetEvent
from systems.vaesen.fear import services
from systems.vaesen.models import VaesenInjury, VaesenSheet
from systems.vaesen.rolls import services as rolls
from table.models import TableRoll
from tests.conftest import client_for
from tests.factories import client_seed, make_scene
from tests.systems.vaesen.conftest import vaesen_character
from tests.systems.vaesen.test_options import queue_d6

pytestmark = pytest.mark.django_db


@pytest.fixture
def d6(monkeypatch):
    return queue_d6(monkeypatch)


@pytest.fixture
def scene(vaesen_campaign):
    return make_scene(vaesen_campaign, title="El lago")


@pytest.fixture
def friend(vaesen_campaign, vaesen_other_player):
    return vaesen_character(vaesen_campaign, vaesen_other_player, "Karl", logica=2, empatia=4)


def page(w, scene) -> str:
    return reverse("vaesen:fear", args=[w.campaign.slug, scene.pk])


def start(w, scene, *characters, fear=None, creature=None, against="El Näcken"):
    return services.fear_start(
        scene=scene, actor=w.gm, characters=list(characters), fear=fear, creature=creature, against=against
    )


def roll_url(w, scene, test, character) -> str:
    return reverse("vaesen:fear-roll", args=[w.campaign.slug, scene.pk, test["id"], character.pk])


def open_tests(scene):
    scene.campaign.refresh_from_db()
    return services.open_tests(scene)


def sheet(character) -> VaesenSheet:
    return VaesenSheet.objects.get(pk=character.pk)


def test_v26_the_pool_counts_companions_up_to_three_and_mental_conditions(vaesen_world, friend):
    w = vaesen_world
    others = [vaesen_character(w.campaign, w.other, f"Otro {n}") for n in range(4)]
    setup = services.fear_setup(w.pc, attribute="lógica", fear=2, present=[w.pc, friend, *others])
    # Lógica 3 + 3 (five companions, at most +3).
    assert (setup.pool, setup.needed, setup.kind.value) == (6, 2, "mental")
    # Broken or Aterrorizado companions do not count; mental conditions cost a die each.
    VaesenSheet.objects.filter(pk__in=[o.pk for o in others[:3]]).update(broken_mental=True)
    VaesenSheet.objects.filter(pk=others[3].pk).update(terrified_rounds=2)
    VaesenSheet.objects.filter(pk=w.pc.pk).update(mental_conditions=["Irritado"])
    present = [c.__class__.objects.select_related("vaesen").get(pk=c.pk) for c in (w.pc, friend, *others)]
    setup = services.fear_setup(present[0], attribute="empatía", fear=2, present=present)
    assert setup.pool == 2 + 1 - 1
    assert [label for label, _v in setup.breakdown] == ["Empatía", "Compañeros presentes (1)", "Estados: Irritado"]
    with pytest.raises(ValidationError, match="Lógica o con Empatía"):
        services.fear_setup(w.pc, attribute="físico", fear=2, present=[w.pc])


def test_v26_the_page_shows_the_exact_chance_before_rolling(vaesen_world, scene, friend):
    w = vaesen_world
    test = start(w, scene, w.pc, friend, creature=w.creature)
    assert test["fear"] == 2
    response = w.client("player").get(page(w, scene))
    # Elsa: Lógica 3 + 1 companion = 4 dice, 2 successes needed.
    chance = float(rolls.vaesen.success_probability(4, 2) * 100)
    assertContains(response, f"probabilidad {chance:.1f} %".replace(".", ","))
    assertContains(response, roll_url(w, scene, test, w.pc))
    # Karl's row has no button for Elsa's player.
    assertNotContains(response, roll_url(w, scene, test, friend))


def test_v26_v27_a_failed_test_accepted_terrifies_and_costs_mental_conditions(vaesen_world, scene, friend, d6):
    w = vaesen_world
    test = start(w, scene, w.pc, friend, fear=3, against="Una voz en el agua")
    refused = w.client("player").post(roll_url(w, scene, test, w.pc), {"attribute": "físico"}, follow=True)
    assertContains(refused, "La prueba de Miedo se tira con Lógica o con Empatía.")
    d6.append([6, 2, 3, 1])
    response = w.client("player").post(
        roll_url(w, scene, test, w.pc), {"attribute": "lógica", "client_seed": client_seed()}
    )
    assert response.status_code == 302
    table_roll = TableRoll.objects.get(kind=services.FEAR, character=w.pc)
    game = table_roll.first.signed_game
    assert (game["test"], game["fear"], game["needed"], game["successes"], game["success"]) == ("fear", 3, 3, 1, False)
    assert table_roll.facts["can_push"] is True
    # The open test now waits only for Karl.
    assert open_tests(scene)[0]["rolled"] == {str(w.pc.pk): table_roll.pk}
    url = reverse("vaesen:fear-terror", args=[w.campaign.slug, scene.pk, table_roll.pk])
    # Another member may not accept it; a reaction not in the list is refused in Spanish, nothing changed.
    assert client_for(w.other).post(url, {"reaction": "Huida"}).status_code == 403
    bad = w.client("player").post(url, {"reaction": "Baile"}, follow=True)
    assertContains(bad, "Elige una reacción: Huida, Parálisis, Desmayo o Agresión.")
    assert (sheet(w.pc).terrified_rounds, sheet(w.pc).mental_conditions) == (0, [])
    d6.append([4])
    assert w.client("player").post(url, {"reaction": "Huida", "client_seed": client_seed()}).status_code == 302
    pc = sheet(w.pc)
    # V27 — Fear 3 − 1 success = 2 mental conditions; 1d6 = 4 rounds; the reaction chosen.
    assert pc.mental_conditions == ["Irritado", "Asustado"]
    assert (pc.terrified_rounds, pc.terror_reaction) == (4, "Huida")
    entry = RollEntry.objects.get(pk=TableRoll.objects.get(pk=table_roll.pk).facts["terror"]["entry"])
    assert entry.signed_game == {
        "system": "vaesen",
        "test": "terror",
        "rounds": 4,
        "reaction": "Huida",
        "of": table_roll.first.permalink,
    }
    events = SheetEvent.objects.filter(character=w.pc, roll=entry)
    assert events.count() == 2
    assert all(e.actor == w.player for e in events)
    # Accepting twice is refused, nothing changed.
    again = w.client("player").post(url, {"reaction": "Desmayo", "client_seed": client_seed()}, follow=True)
    assertContains(again, "ya se aceptó")
    assert sheet(w.pc).terror_reaction == "Huida"
    # The card says what happened.
    assertContains(w.client("player").get(page(w, scene)), "Aterrorizado 4 asaltos: Huida.")


def test_v26_a_fear_test_may_be_pushed_once_with_a_mental_condition(vaesen_world, scene, d6):
    w = vaesen_world
    test = start(w, scene, w.pc, fear=1)
    d6.append([1, 2, 3])
    table_roll = services.fear_roll(
        scene=scene, actor=w.player, test_id=test["id"], character=w.pc, attribute="lógica", client_seed=client_seed()
    )
    assert services.open_tests(scene) == []
    rolls.push(table_roll=table_roll, user=w.player, condition="Asustado", client_seed=client_seed())
    table_roll.refresh_from_db()
    pushed = table_roll.latest.signed_game
    assert (pushed["test"], pushed["fear"], pushed["pushed"], pushed["condition"]) == ("fear", 1, True, "Asustado")
    assert sheet(w.pc).mental_conditions == ["Asustado"]
    with pytest.raises(ValidationError, match="solo se puede forzar una vez"):
        rolls.push(table_roll=table_roll, user=w.player, condition="Irritado")
    if pushed["success"]:
        # A passed test has no terror to accept.
        with pytest.raises(ValidationError, match="se superó"):
            services.terror_accept(table_roll=table_roll, user=w.player, is_gm=False, reaction="Huida")
    else:
        # V27 — Fear 1 − 0 successes: one more mental condition.
        d6.append([5])
        services.terror_accept(table_roll=table_roll, user=w.player, is_gm=False, reaction="Agresión")
        assert sheet(w.pc).mental_conditions == ["Irritado", "Asustado"]


def test_v27_broken_by_fear_asks_for_a_mental_critical_injury_from_the_table(vaesen_world, scene, d6):
    w = vaesen_world
    w.campaign.rules_options = {"injuries_mental": [[11, 66, "Pesadillas", "No duerme", ""]]}
    w.campaign.save(update_fields=["rules_options"])
    VaesenSheet.objects.filter(pk=w.pc.pk).update(mental_conditions=["Irritado", "Asustado"])
    test = start(w, scene, w.pc, fear=3)
    d6.append([1])
    table_roll = services.fear_roll(
        scene=scene, actor=w.gm, test_id=test["id"], character=w.pc, attribute="empatía", client_seed=client_seed()
    )
    d6.append([2])
    services.terror_accept(table_roll=table_roll, user=w.gm, is_gm=True, reaction="Parálisis")
    pc = sheet(w.pc)
    assert pc.broken_mental and pc.mental_conditions == ["Irritado", "Asustado", "Desesperado"]
    table_roll.refresh_from_db()
    assert table_roll.facts["broken"] is True
    assert rolls.injury_refusal(table_roll, w.player, is_gm=False) is None
    d6.append([3, 5])
    rolls.roll_injury(table_roll=table_roll, user=w.player, is_gm=False, client_seed=client_seed())
    injury = VaesenInjury.objects.get(sheet=w.pc.vaesen)
    assert (injury.kind, injury.roll, injury.name) == ("mental", 35, "Pesadillas")


def test_refusals_are_spanish_and_change_nothing(vaesen_world, scene, friend):
    w = vaesen_world
    with pytest.raises(ValidationError, match="Elige una criatura o indica el valor de Miedo"):
        start(w, scene, w.pc)
    with pytest.raises(ValidationError, match="no es un personaje jugador aprobado"):
        start(w, scene, w.npc, fear=2)
    with pytest.raises(PermissionDenied):
        services.fear_start(scene=scene, actor=w.player, characters=[w.pc], fear=2, creature=None, against="x")
    assert services.open_tests(scene) == []
    test = start(w, scene, w.pc, fear=2)
    with pytest.raises(PermissionDenied):
        services.fear_roll(scene=scene, actor=w.other, test_id=test["id"], character=w.pc, attribute="lógica")
    with pytest.raises(ValidationError, match="no está en esta prueba"):
        services.fear_roll(scene=scene, actor=w.other, test_id=test["id"], character=friend, attribute="lógica")
    VaesenSheet.objects.filter(pk=w.pc.pk).update(broken_physical=True)
    w.pc.refresh_from_db()
    with pytest.raises(ValidationError, match="Derrotado"):
        services.fear_roll(scene=scene, actor=w.player, test_id=test["id"], character=w.pc, attribute="lógica")
    assert not TableRoll.objects.filter(kind=services.FEAR).exists()
    assert RollEntry.objects.filter(campaign=w.campaign).count() == 0


def test_views_access_and_the_gm_start_form(vaesen_world, scene, django_assert_max_num_queries):
    w = vaesen_world
    w.campaign.visibility = "private"
    w.campaign.save(update_fields=["visibility"])
    start_url = reverse("vaesen:fear-start", args=[w.campaign.slug, scene.pk])
    assert w.client("outsider").get(page(w, scene)).status_code == 404
    assert w.client("outsider").post(start_url, {}).status_code == 404
    assert w.client("player").post(start_url, {"fear": "2", "against": "x", "characters": [w.pc.pk]}).status_code == 403
    assert services.open_tests(scene) == []
    gm = w.client("gm")
    # A refused form comes back with what was typed and the Spanish error.
    refused = gm.post(start_url, {"against": "Un grito"})
    assert refused.status_code == 200
    assertContains(refused, "Elige al menos un personaje presente.")
    assertContains(refused, 'value="Un grito"')
    done = gm.post(start_url, {"creature": str(w.creature.pk), "characters": [str(w.pc.pk)]})
    assert done.status_code == 302
    test = open_tests(scene)[0]
    assert (test["fear"], test["against"]) == (2, "El Näcken")
    assert w.client("reader").post(roll_url(w, scene, test, w.pc), {"attribute": "lógica"}).status_code == 403
    # Full page and htmx partial, queries pinned.
    player = client_for(w.player)
    with django_assert_max_num_queries(9):
        full = player.get(page(w, scene))
    assertContains(full, "<html", html=False)
    partial = gm.get(page(w, scene), headers={"HX-Request": "true"})
    assert b"<html" not in partial.content
    assertContains(partial, 'id="fear-board"')


def test_the_scene_tools_link_combat_fear_opposed_healing_and_the_gm_options(vaesen_world, scene):
    w = vaesen_world
    gm_page = w.client("gm").get(scene.get_absolute_url())
    assert gm_page.context["scene_tools_template"] == "vaesen/_scene_tools.html"
    html = gm_page.content.decode()
    for name in ("vaesen:combat", "vaesen:fear", "vaesen:opposed", "vaesen:healing"):
        assert reverse(name, args=[w.campaign.slug, scene.pk]) in html
    assert reverse("vaesen:campaign-options", args=[w.campaign.slug]) in html
    player_html = w.client("player").get(scene.get_absolute_url()).content.decode()
    assert reverse("vaesen:fear", args=[w.campaign.slug, scene.pk]) in player_html
    assert reverse("vaesen:campaign-options", args=[w.campaign.slug]) not in player_html


def test_the_page_reads_a_constant_number_of_rows_with_rolled_tests(
    vaesen_world, scene, friend, d6, django_assert_max_num_queries
):
    """V26 — the rolled tests' cards (with their push and terror forms) in a few queries, however many."""
    w = vaesen_world
    for _ in range(3):
        test = start(w, scene, w.pc, friend, fear=3)
        d6.extend([[1, 1, 1, 1], [1, 1, 1, 1, 1]])
        services.fear_roll(scene=scene, actor=w.gm, test_id=test["id"], character=w.pc, attribute="lógica")
        services.fear_roll(scene=scene, actor=w.gm, test_id=test["id"], character=friend, attribute="empatía")
    player = client_for(w.player)
    with django_assert_max_num_queries(11):
        response = player.get(page(w, scene))
    assertContains(response, "Aceptar el fallo y tirar los asaltos", count=3)
    assertContains(response, "Forzar la tirada")


def test_htmx_refusal_comes_back_as_the_board_and_the_gm_closes_a_test(vaesen_world, scene):
    w = vaesen_world
    gm = w.client("gm")
    start_url = reverse("vaesen:fear-start", args=[w.campaign.slug, scene.pk])
    refused = gm.post(start_url, {"fear": "11", "against": "Algo"}, headers={"HX-Request": "true"})
    assert refused.status_code == 200
    assert b"<html" not in refused.content
    assertContains(refused, 'id="fear-board"')
    assertContains(refused, 'value="Algo"')
    test = start(w, scene, w.pc, fear=2)
    close_url = reverse("vaesen:fear-close", args=[w.campaign.slug, scene.pk, test["id"]])
    assert w.client("player").post(close_url).status_code == 403
    assert open_tests(scene)
    assert gm.post(close_url).status_code == 302
    assert open_tests(scene) == []
    closed = gm.post(close_url, follow=True)
    assertContains(closed, "Esa prueba ya está cerrada")


def test_anonymous_reads_a_public_scene_and_another_game_gets_404(vaesen_world, scene, play):
    w = vaesen_world
    start(w, scene, w.pc, fear=2)
    anonymous = w.client("anonymous").get(page(w, scene))
    assert anonymous.status_code == 200
    assertContains(anonymous, "pendiente")
    other_game = reverse("vaesen:fear", args=[play.campaign.slug, play.scene.pk])
    assert client_for(play.gm).get(other_game).status_code == 404
