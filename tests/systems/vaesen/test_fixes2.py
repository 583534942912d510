"""The second review of Vaesen (issue 15): the campaign's two options work
(V20 Resistencia lost on the next test only; V17 initiative cards), combat
injuries read the campaign's table (V13), the Vaesen pages answer 404 in a
HITOS campaign, the hand-written d66 is checked (V13), the sheet's «Sufrir»
that breaks offers the critical injury roll (V10), the injury's refusal
names the injury, the admin speaks Spanish, and the card words armour,
combat actions, reactions and opposed rolls rightly (V19–V22, V14)."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse
from pytest_django.asserts import assertContains, assertNotContains

from campaigns.models import Post
from rolls.models import RollEntry
from rules import vaesen
from sheets.models import SheetEvent
from systems.vaesen.combat import services as combat
from systems.vaesen.models import VaesenAction, VaesenCombatant, VaesenInjury, VaesenSheet
from systems.vaesen.options.tables import INITIATIVE_MODE, NPC_PENALTY
from systems.vaesen.rolls import services as rolls
from systems.vaesen.sheet import services as sheets
from systems.vaesen.sheet.forms import InjuryForm
from tests.factories import CampaignFactory, client_seed, make_post, make_scene
from tests.systems.vaesen.conftest import vaesen_character
from tests.systems.vaesen.test_combat import fighter, gm_access, queued_dice, ready, start
from tests.systems.vaesen.test_push import a_roll

pytestmark = pytest.mark.django_db

Kind = VaesenAction.Kind
Reaction = VaesenAction.Reaction
TABLE_ROW = [31, 36, "Costillas rotas", "−1 a Agilidad", "un día"]


@pytest.fixture
def d6():
    with queued_dice() as queue:
        yield queue


@pytest.fixture
def scene(vaesen_campaign):
    return make_scene(vaesen_campaign, title="El puente viejo")


def _options(campaign, **options) -> None:
    campaign.rules_options = {**(campaign.rules_options or {}), **options}
    campaign.save(update_fields=["rules_options"])


def sheet(character) -> VaesenSheet:
    return VaesenSheet.objects.get(pk=character.pk)


# --- 1. V20 — Resistencia lost costs dice on the next test only (NpcPenalty.NEXT_TEST) ----------


def _miller_pool(world) -> rolls.PoolSetup:
    world.npc.refresh_from_db()
    world.npc.vaesen.refresh_from_db()
    return rolls.pool_setup(world.npc, skill="Fuerza")


def test_v20_every_test_by_default_each_point_lost_is_a_die_less_on_every_test(vaesen_world, scene):
    w = vaesen_world
    sheets.resistance_change(character=w.npc, actor=w.gm, change=-2, reason="Un golpe")
    assert _miller_pool(w).pool == 4 + 2 - 2
    rolls.table_test(campaign=w.campaign, user=w.gm, setup=_miller_pool(w), purpose="Empujar", character=w.npc)
    assert _miller_pool(w).pool == 4


def test_v20_next_test_the_points_lost_cost_dice_on_the_next_test_only(vaesen_world, scene):
    w = vaesen_world
    _options(w.campaign, **{NPC_PENALTY: vaesen.NpcPenalty.NEXT_TEST.value})
    assert _miller_pool(w).pool == 6
    sheets.resistance_change(character=w.npc, actor=w.gm, change=-2, reason="Un golpe")
    assert sheet(w.npc).resistance_unspent == 2
    setup = _miller_pool(w)
    assert setup.pool == 4
    assert ("Resistencia perdida desde su última prueba", -2) in setup.breakdown
    table_roll = rolls.table_test(campaign=w.campaign, user=w.gm, setup=setup, purpose="Empujar", character=w.npc)
    assert table_roll.first.signed_game["pool"] == 4
    # The test spent them: the next one has every die again, the points stay lost.
    assert (sheet(w.npc).resistance_unspent, sheet(w.npc).resistance_lost) == (0, 2)
    assert _miller_pool(w).pool == 6
    # A point lost later costs a die on the next test; points given back are not lost any more.
    sheets.resistance_change(character=w.npc, actor=w.gm, change=-1, reason="Otro golpe")
    assert _miller_pool(w).pool == 5
    sheets.resistance_change(character=w.npc, actor=w.gm, change=1, reason="Venda")
    sheets.resistance_change(character=w.npc, actor=w.gm, change=1, reason="Venda")
    assert sheet(w.npc).resistance_unspent == 0 and _miller_pool(w).pool == 6


def test_v20_next_test_a_combat_test_spends_the_points_too(vaesen_world, scene, d6):
    w = vaesen_world
    _options(w.campaign, **{NPC_PENALTY: vaesen.NpcPenalty.NEXT_TEST.value})
    sheets.resistance_change(character=w.npc, actor=w.gm, change=-1, reason="Un golpe")
    fight = ready(w, scene, d6, (2, 9, 5))
    miller, elsa = fighter(fight, w.npc), fighter(fight, w.pc)
    action = combat.declare(combat=fight, access=gm_access(w), actor=miller, kind=Kind.ATTACK, target=elsa)
    d6.extend([[1, 1, 1, 1, 1]])
    combat.react(action=action, access=gm_access(w), reaction=Reaction.NONE)
    action.refresh_from_db()
    assert action.roll.first.signed_game["pool"] == 5
    assert sheet(w.npc).resistance_unspent == 0


# --- 1. V17 — initiative cards (InitiativeMode.CARDS) -------------------------------------------


def test_v17_cards_each_combatant_draws_a_different_card_through_the_log(vaesen_world, scene, d6):
    w = vaesen_world
    _options(w.campaign, **{INITIATIVE_MODE: vaesen.InitiativeMode.CARDS.value})
    fight = start(w, scene)
    # The first die picks among 10 cards, the next among the 9 left, …: 1, 1, 1 → cards 1, 2, 3.
    d6.extend([[1], [1], [1]])
    combat.initiative_roll(combat=fight, access=gm_access(w))
    values = dict(VaesenCombatant.objects.filter(combat=fight).values_list("character__name", "initiative_value"))
    assert values == {"Elsa": 1, "El molinero": 2, "El Näcken": 3}
    order = list(fight.combatants.order_by("order").values_list("character__name", flat=True))
    assert order == ["El Näcken", "El molinero", "Elsa"]
    entries = list(RollEntry.objects.filter(purpose__startswith="Carta de iniciativa").order_by("pk"))
    assert [e.entry["spec"] for e in entries] == ["1d10", "1d9", "1d8"]
    game = entries[1].signed_game
    assert game["mode"] == "cartas" and game["deck"] == list(range(2, 11)) and game["cards"] == [2]
    # No d10 ties to re-roll with cards.
    assert not RollEntry.objects.filter(purpose__startswith="Desempate").exists()
    # A late arrival draws from the cards nobody holds: the 7th of 4…10 is 10.
    karl = vaesen_character(w.campaign, w.other, "Karl")
    combat.combatant_add(combat=fight, access=gm_access(w), character=karl)
    d6.append([7])
    combat.initiative_roll(combat=fight, access=gm_access(w))
    late = RollEntry.objects.filter(purpose__startswith="Carta de iniciativa").latest("pk")
    assert late.entry["spec"] == "1d7" and late.signed_game["initiative"] == 10
    assert fighter(fight, karl).initiative_value == 10


def test_v17_v25_cards_after_an_ambush_two_are_drawn_and_the_best_kept():
    deck = vaesen.initiative_deck([3, 7])
    assert deck == (1, 2, 4, 5, 6, 8, 9, 10)
    assert vaesen.initiative_card_faces(len(deck), twice=True) == (8, 7)
    cards = vaesen.draw_initiative_cards(deck, [1, 7], twice=True)
    assert cards == (1, 10) and vaesen.initiative_card_kept(cards) == 10
    # The deck's last card needs no die; an empty deck is refused.
    assert vaesen.initiative_card_faces(1) == () and vaesen.draw_initiative_cards([5], []) == (5,)
    with pytest.raises(ValueError, match="No quedan cartas"):
        vaesen.initiative_card_faces(0)
    with pytest.raises(ValueError):
        vaesen.draw_initiative_cards(deck, [9])


# --- 2. V13 — a combat injury is named by the campaign's table -----------------------------------


def test_v10_v13_a_combat_injury_reads_the_campaigns_table(vaesen_world, scene, d6):
    w = vaesen_world
    _options(w.campaign, injuries_physical=[TABLE_ROW])
    VaesenSheet.objects.filter(pk=w.pc.pk).update(physical_conditions=["Exhausto", "Magullado", "Herido"])
    fight = ready(w, scene, d6, (2, 9, 5))
    miller, elsa = fighter(fight, w.npc), fighter(fight, w.pc)
    action = combat.declare(combat=fight, access=gm_access(w), actor=miller, kind=Kind.ATTACK, target=elsa)
    d6.extend([[6, 1, 1, 1, 1, 1], [3, 4]])
    combat.react(action=action, access=gm_access(w), reaction=Reaction.NONE)
    injury = VaesenInjury.objects.get(sheet_id=w.pc.pk)
    assert (injury.roll, injury.name, injury.effect, injury.time_limit) == (
        34,
        "Costillas rotas",
        "−1 a Agilidad",
        "un día",
    )
    action.refresh_from_db()
    assert "Costillas rotas" in action.outcome


# --- 4. The Vaesen pages answer 404 in another game's campaign ----------------------------------


@pytest.mark.parametrize("name", ["vaesen:combat", "vaesen:fear", "vaesen:opposed", "vaesen:healing"])
def test_the_vaesen_scene_pages_answer_404_in_a_hitos_campaign(vaesen_world, name):
    w = vaesen_world
    hitos = CampaignFactory(gm=w.gm, slug="hitos-partida", system="hitos")
    hitos_scene = make_scene(hitos, title="Otra")
    response = w.client("gm").get(reverse(name, args=[hitos.slug, hitos_scene.pk]))
    assert response.status_code == 404


def test_the_vaesen_combat_actions_and_options_answer_404_in_a_hitos_campaign(vaesen_world):
    w = vaesen_world
    hitos = CampaignFactory(gm=w.gm, slug="hitos-partida", system="hitos")
    hitos_scene = make_scene(hitos, title="Otra")
    response = w.client("gm").post(reverse("vaesen:combat-start", args=[hitos.slug, hitos_scene.pk]), {})
    assert response.status_code == 404
    assert w.client("gm").get(reverse("vaesen:campaign-options", args=[hitos.slug])).status_code == 404


# --- 5. V13 — a hand-written d66 has two digits from 1 to 6 -------------------------------------


@pytest.mark.parametrize("value", [17, 20, 59, 10, 67])
def test_v13_a_d66_outside_its_values_is_refused_in_spanish(vaesen_world, value):
    w = vaesen_world
    injury = VaesenInjury(sheet=w.pc.vaesen, kind="físico", roll=value, name="Brazo roto")
    with pytest.raises(ValidationError) as caught:
        injury.full_clean()
    assert "dos cifras del 1 al 6" in " ".join(caught.value.message_dict["roll"])
    form = InjuryForm({"kind": "físico", "roll": value, "name": "Brazo roto"})
    assert not form.is_valid() and "roll" in form.errors


@pytest.mark.parametrize("value", [11, 36, 66])
def test_v13_a_d66_with_both_digits_1_to_6_is_accepted(vaesen_world, value):
    w = vaesen_world
    VaesenInjury(sheet=w.pc.vaesen, kind="físico", roll=value, name="Brazo roto").full_clean()


def test_v13_the_sheet_refuses_a_bad_d66_and_gives_back_what_was_typed(vaesen_world):
    w = vaesen_world
    url = reverse("vaesen:injury-create", args=[w.campaign.slug, w.pc.pk])
    response = w.client("gm").post(url, {"kind": "físico", "roll": "59", "name": "Brazo roto", "reason": ""})
    assertContains(response, "dos cifras del 1 al 6")
    assertContains(response, "Brazo roto")
    assert not VaesenInjury.objects.exists()


# --- 6. V10 — the sheet's «Sufrir» that breaks offers the critical injury roll -------------------


def _suffer(client, world):
    url = reverse("vaesen:condition-update", args=[world.campaign.slug, world.pc.pk])
    return client.post(url, {"kind": "físico", "do": "sufrir", "reason": "Cae por el barranco"})


def test_v10_suffering_into_broken_on_the_sheet_offers_the_gm_the_injury_roll(vaesen_world, d6):
    w = vaesen_world
    _options(w.campaign, injuries_physical=[TABLE_ROW])
    VaesenSheet.objects.filter(pk=w.pc.pk).update(physical_conditions=["Exhausto", "Magullado", "Herido"])
    _suffer(w.client("gm"), w)
    assert sheet(w.pc).broken_physical and sheet(w.pc).pending_injuries == ["físico"]
    roll_url = reverse("vaesen:injury-roll", args=[w.campaign.slug, w.pc.pk])
    page = w.client("gm").get(w.pc.get_absolute_url())
    assertContains(page, roll_url)
    assertContains(page, "Tirar la herida crítica")
    player_page = w.client("player").get(w.pc.get_absolute_url())
    assertNotContains(player_page, roll_url)
    assertContains(player_page, "la dirección la tira desde la ficha")
    # Only the GM rolls it.
    assert w.client("player").post(roll_url, {"kind": "físico"}).status_code == 403
    d6.append([3, 5])
    w.client("gm").post(roll_url, {"kind": "físico"})
    entry = RollEntry.objects.get(purpose__startswith="Herida crítica (física) de Elsa")
    assert entry.entry["spec"] == "2d6" and entry.signed_game["d66"] == 35
    injury = VaesenInjury.objects.get(sheet_id=w.pc.pk)
    assert (injury.roll, injury.name, injury.time_limit) == (35, "Costillas rotas", "un día")
    event = SheetEvent.objects.get(character=w.pc, roll=entry)
    assert event.actor == w.gm
    assert sheet(w.pc).pending_injuries == []
    assertNotContains(w.client("gm").get(w.pc.get_absolute_url()), roll_url)
    # Once: a second roll is refused in Spanish, nothing changed.
    before = (RollEntry.objects.count(), VaesenInjury.objects.count(), SheetEvent.objects.count())
    response = w.client("gm").post(roll_url, {"kind": "físico"}, follow=True)
    assertContains(response, "no tiene ninguna herida crítica física por tirar")
    assert (RollEntry.objects.count(), VaesenInjury.objects.count(), SheetEvent.objects.count()) == before


def test_v10_an_injury_written_by_hand_settles_the_one_owed(vaesen_world):
    w = vaesen_world
    VaesenSheet.objects.filter(pk=w.pc.pk).update(physical_conditions=["Exhausto", "Magullado", "Herido"])
    _suffer(w.client("gm"), w)
    assert sheet(w.pc).pending_injuries == ["físico"]
    url = reverse("vaesen:injury-create", args=[w.campaign.slug, w.pc.pk])
    w.client("gm").post(url, {"kind": "físico", "roll": "22", "name": "Pierna rota", "reason": ""})
    assert sheet(w.pc).pending_injuries == []


# --- 7. The injury view's refusal names the injury -----------------------------------------------


def test_v10_the_injury_refusal_to_another_player_names_the_injury(vaesen_world, scene):
    w = vaesen_world
    table_roll = a_roll(w, scene)
    response = w.client("other").post(reverse("vaesen:injury", args=[table_roll.pk]), {})
    assertContains(response, "Solo quien forzó la tirada o la dirección tiran la herida crítica.", status_code=403)
    push = w.client("other").post(reverse("vaesen:push", args=[table_roll.pk]), {})
    assertContains(push, "Solo quien hizo la tirada puede forzarla.", status_code=403)


# --- 8. The admin speaks Spanish ---------------------------------------------------------------------


def test_the_vaesen_fields_have_spanish_verbose_names():
    assert VaesenSheet._meta.get_field("physical_conditions").verbose_name == "estados físicos"
    assert VaesenSheet._meta.get_field("mental_conditions").verbose_name == "estados mentales"
    for field in VaesenCombatant._meta.get_fields():
        if field.concrete and not field.primary_key:
            assert field.verbose_name != field.name.replace("_", " "), field.name


# --- 9. The card's words for armour, combat actions, reactions and opposed rolls -----------------


def _card_page(world, entry) -> str:
    return world.client("gm").get(entry.get_absolute_url()).content.decode()


def test_v21_v22_a_dodged_attack_and_armour_have_no_effects_to_buy(vaesen_world, scene, d6):
    w = vaesen_world
    VaesenSheet.objects.filter(pk=w.npc.pk).update(armour_protection=2, armour="Cuero")
    fight = ready(w, scene, d6, (9, 2, 5))
    elsa, miller = fighter(fight, w.pc), fighter(fight, w.npc)
    weapon = w.pc.vaesen.weapons.get()
    # Elsa's knife (Combate cuerpo a cuerpo 0 + Físico 3): two successes; the miller's parry: one.
    action = combat.declare(
        combat=fight, access=gm_access(w), actor=elsa, kind=Kind.ATTACK, target=miller, weapon=weapon
    )
    d6.extend([[6, 6, 1], [6, 1, 1, 1, 1, 1], [6, 1]])
    combat.react(action=action, access=gm_access(w), reaction=Reaction.PARRY_STRENGTH, reactor=miller)
    action.refresh_from_db()
    attack = _card_page(w, action.roll.first)
    assert "compra" not in attack and ">Éxito<" not in attack
    assert "Cada éxito de la reacción anula uno de estos" in attack
    reaction = _card_page(w, action.reaction_roll.first)
    assert "Anula 1 éxito de la acción." in reaction and "compra" not in reaction
    armour = _card_page(w, action.armour_roll.first)
    assert "La armadura quita 1 punto de daño." in armour and "compra" not in armour and ">Éxito<" not in armour


def test_v14_an_opposed_side_is_compared_not_judged(vaesen_world, scene):
    w = vaesen_world
    post = make_post(scene, w.player, voice=Post.Voice.CHARACTER, character=w.pc)
    table_roll = rolls.table_test(
        campaign=w.campaign,
        user=w.player,
        setup=rolls.pool_setup(w.pc, skill="Sigilo"),
        purpose="Esconderse",
        character=w.pc,
        scene=scene,
        post=post,
        client_seed=client_seed(),
        game={"test": "opposed"},
    )
    page = _card_page(w, table_roll.first)
    assert "gana quien saque más éxitos" in page and "compra" not in page


def test_v20_the_npc_sheet_says_which_test_loses_the_dice(vaesen_world):
    w = vaesen_world
    sheets.resistance_change(character=w.npc, actor=w.gm, change=-2, reason="Un golpe")
    assertContains(w.client("gm").get(w.npc.get_absolute_url()), "−2 dados a sus tiradas")
    _options(w.campaign, **{NPC_PENALTY: vaesen.NpcPenalty.NEXT_TEST.value})
    assertContains(w.client("gm").get(w.npc.get_absolute_url()), "−2 dados a su próxima prueba")
    rolls.table_test(campaign=w.campaign, user=w.gm, setup=_miller_pool(w), purpose="Empujar", character=w.npc)
    page = w.client("gm").get(w.npc.get_absolute_url())
    assertNotContains(page, "a su próxima prueba")
    assertNotContains(page, "a sus tiradas")


def test_v10_the_sheet_injury_roll_refuses_an_unknown_kind_in_spanish(vaesen_world):
    w = vaesen_world
    VaesenSheet.objects.filter(pk=w.pc.pk).update(pending_injuries=["físico"])
    url = reverse("vaesen:injury-roll", args=[w.campaign.slug, w.pc.pk])
    response = w.client("gm").post(url, {"kind": "otro"}, follow=True)
    assertContains(response, "Indica si la herida crítica es física o mental.")
    response = w.client("gm").post(url, {"kind": "mental"}, follow=True)
    assertContains(response, "no tiene ninguna herida crítica mental por tirar")
    assert not RollEntry.objects.exists() and sheet(w.pc).pending_injuries == ["físico"]
