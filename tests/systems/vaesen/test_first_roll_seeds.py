"""Vaesen rolls made from a page carry the browser's seed (issue 18, item 1):
the combat's initiative (ties too), ambush, an action's roll and what it
brings (the reaction, armour, the critical injury of the blow), the
reaction settled once its deadline passed and the sheet's critical injury
store ``client_seed_source: browser``; when one request makes several rolls
the first has the page's seed and each further one a seed derived from it
(``"<first 56>-<n>"``). The seed is the idempotency key (rollog/v1 §3.3): the
same form sent again rolls and marks nothing twice and answers as the first
did. A seed used for another roll is refused in Spanish, nothing changed;
without JavaScript the server makes the seeds, as before."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.db import connection
from django.urls import reverse
from django.utils import timezone
from pytest_django.asserts import assertContains, assertNotContains

from campaigns import deadlines
from campaigns.permissions import campaign_access
from rolls.models import RollEntry
from rolls.services import roll_append
from sheets.models import SheetEvent
from systems.vaesen.combat import reactions, services
from systems.vaesen.combat.forms import AmbushForm, InitiativeForm, ReactForm
from systems.vaesen.models import VaesenAction, VaesenCombatant, VaesenInjury, VaesenSheet
from systems.vaesen.rolls.forms import InjuryForm
from systems.vaesen.rolls.services import roll_sheet_injury
from tests.conftest import client_for, in_threads
from tests.factories import client_seed, make_scene, plain_read
from tests.systems.vaesen.test_combat import fighter, queued_dice, ready, snapshot, start

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}
USED = "Esa semilla ya se usó en otra tirada."
Kind = VaesenAction.Kind
Reaction = VaesenAction.Reaction


@pytest.fixture
def d6():
    with queued_dice() as queue:
        yield queue


@pytest.fixture
def scene(vaesen_campaign):
    return make_scene(vaesen_campaign, title="El molino en llamas")


def url(world, scene, name, *args):
    return reverse(f"vaesen:{name}", args=[world.campaign.slug, scene.pk, *args])


def gm(world):
    return campaign_access(world.gm, world.campaign)


def sources(entries) -> list[tuple[str, str]]:
    return [(e.client_seed, e.entry["client_seed_source"]) for e in entries]


def derived(seed: str, n: int) -> str:
    return seed if n == 0 else f"{seed[:56]}-{n}"


def rolled_after(pk: int):
    return list(RollEntry.objects.filter(pk__gt=pk, kind=RollEntry.Kind.ROLL).order_by("seq"))


def last_pk() -> int:
    last = RollEntry.objects.order_by("-pk").first()
    return last.pk if last else 0


def combat_state(combat):
    """What a retried or refused request must leave as it was."""
    combat.refresh_from_db()
    return (
        snapshot(),
        SheetEvent.objects.count(),
        VaesenInjury.objects.count(),
        list(VaesenSheet.objects.order_by("pk").values_list("physical_conditions", "resistance_lost")),
        (combat.ambush_roll_id, combat.ambush_succeeded),
        list(VaesenAction.objects.order_by("pk").values_list("reaction", "roll", "armour_roll", "injury_roll")),
    )


def _forms(html: str, action: str) -> list[str]:
    return re.findall(rf'<form[^>]*action="{re.escape(action)}"[^>]*>.*?</form>', html, flags=re.S)


def _has_marked_seed(form_html: str) -> bool:
    return bool(re.search(r'<input[^>]*name="client_seed"[^>]*data-client-seed[^>]*>', form_html)) or bool(
        re.search(r'<input[^>]*data-client-seed[^>]*name="client_seed"[^>]*>', form_html)
    )


# --- the forms --------------------------------------------------------------------------


def test_the_forms_that_roll_carry_a_marked_seed_field(vaesen_world, scene, d6):
    world = vaesen_world
    for form_class in (AmbushForm, ReactForm, InitiativeForm, InjuryForm):
        assert form_class.base_fields["client_seed"].widget.attrs == {"data-client-seed": "true"}
    combat = start(world, scene)
    html = client_for(world.gm).get(url(world, scene, "combat")).content.decode()
    for name in ("combat-initiative", "combat-ambush"):
        (form,) = _forms(html, url(world, scene, name, combat.pk))
        assert _has_marked_seed(form), name
    # Passing the turn or ending the combat rolls nothing: no seed.
    (turn,) = _forms(html, url(world, scene, "combat-turn", combat.pk))
    assert not _has_marked_seed(turn)
    d6.extend([[2], [9], [5]])
    services.initiative_roll(combat=combat, access=gm(world))
    action = services.declare(
        combat=combat,
        access=gm(world),
        actor=fighter(combat, world.npc),
        kind=Kind.ATTACK,
        target=fighter(combat, world.pc),
    )
    html = client_for(world.player).get(url(world, scene, "combat")).content.decode()
    answers = _forms(html, url(world, scene, "combat-react", action.pk))
    assert len(answers) >= 2 and all(_has_marked_seed(form) for form in answers)
    # The sheet's critical injury roll (V10).
    VaesenSheet.objects.filter(pk=world.pc.pk).update(pending_injuries=["físico"])
    html = client_for(world.gm).get(world.pc.get_absolute_url()).content.decode()
    (form,) = _forms(html, reverse("vaesen:injury-roll", args=[world.campaign.slug, world.pc.pk]))
    assert _has_marked_seed(form)


# --- initiative ------------------------------------------------------------------------


@pytest.mark.parametrize("htmx", [True, False], ids=["htmx", "page"])
def test_initiative_stores_the_browser_seed_derived_for_each_roll_and_a_retry_rolls_nothing(
    vaesen_world, scene, d6, htmx
):
    world = vaesen_world
    combat = start(world, scene)
    seed = "s" * 64  # the longest seed: the derived ones still fit
    before = last_pk()
    # Elsa 7, the miller 7, the Näcken 3; the tie: Elsa 2, the miller 8.
    d6.extend([[7], [7], [3], [2], [8]])
    extra = HTMX if htmx else {}
    response = client_for(world.gm).post(
        url(world, scene, "combat-initiative", combat.pk), {"client_seed": seed}, **extra
    )
    assert response.status_code == 200 if htmx else 302
    entries = rolled_after(before)
    assert sources(entries) == [(derived(seed, n), "browser") for n in range(5)]
    assert [e.signed_game["tie_break"] for e in entries] == [False, False, False, True, True]
    state = combat_state(combat)
    order = list(combat.combatants.order_by("order").values_list("character__name", flat=True))
    assert order == ["El molinero", "Elsa", "El Näcken"]

    again = client_for(world.gm).post(url(world, scene, "combat-initiative", combat.pk), {"client_seed": seed}, **HTMX)

    assert again.status_code == 200
    assertNotContains(again, "Todos tienen ya su iniciativa")
    assertNotContains(again, USED)
    assert combat_state(combat) == state


def test_without_javascript_the_server_seeds_the_initiative(vaesen_world, scene, d6):
    world = vaesen_world
    combat = start(world, scene)
    before = last_pk()
    d6.extend([[9], [5], [2]])
    client_for(world.gm).post(url(world, scene, "combat-initiative", combat.pk), {"client_seed": ""}, **HTMX)
    entries = rolled_after(before)
    assert len(entries) == 3
    assert {e.entry["client_seed_source"] for e in entries} == {"server"}
    # A second press (nobody left without initiative) is refused as before.
    response = client_for(world.gm).post(url(world, scene, "combat-initiative", combat.pk), {}, **HTMX)
    assertContains(response, "Todos tienen ya su iniciativa")


def test_a_malformed_seed_is_refused_in_spanish_and_nothing_is_rolled(vaesen_world, scene, d6):
    world = vaesen_world
    combat = start(world, scene)
    state = combat_state(combat)
    response = client_for(world.gm).post(
        url(world, scene, "combat-initiative", combat.pk), {"client_seed": "no vale!"}, **HTMX
    )
    assertContains(response, "La semilla del navegador no es válida")
    assert combat_state(combat) == state


def test_a_seed_used_by_another_roll_is_refused_with_nothing_rolled(vaesen_world, scene, d6):
    world = vaesen_world
    combat = start(world, scene)
    # Someone else's seed, and one of the GM's own other rolls.
    seeds = []
    for who in (world.player, world.gm):
        seed = client_seed()
        roll_append(campaign=world.campaign, user=who, spec="1d6", purpose="Otra", read=plain_read, client_seed=seed)
        seeds.append(seed)
    state = combat_state(combat)
    for seed in seeds:
        response = client_for(world.gm).post(
            url(world, scene, "combat-initiative", combat.pk), {"client_seed": seed}, **HTMX
        )
        assertContains(response, USED)
        assert combat_state(combat) == state
        assert not VaesenCombatant.objects.filter(combat=combat, initiative_value__isnull=False).exists()


# --- the ambush ------------------------------------------------------------------------


def test_the_ambush_stores_the_browser_seed_for_both_rolls_and_a_retry_rolls_nothing(vaesen_world, scene, d6):
    world = vaesen_world
    combat = start(world, scene)
    elsa, miller = fighter(combat, world.pc), fighter(combat, world.npc)
    seed = client_seed()
    data = {"roller": elsa.pk, "watcher": miller.pk, "ambushers": [elsa.pk], "client_seed": seed}
    before = last_pk()
    d6.extend([[6, 6, 6, 1, 1, 1, 1], [6, 1, 1]])
    client_for(world.gm).post(url(world, scene, "combat-ambush", combat.pk), data, **HTMX)
    entries = rolled_after(before)
    assert sources(entries) == [(seed, "browser"), (derived(seed, 1), "browser")]
    state = combat_state(combat)
    assert state[4][1] is True
    assert fighter(combat, world.pc).first_action_bonus == 1

    again = client_for(world.gm).post(url(world, scene, "combat-ambush", combat.pk), data, **HTMX)

    assertNotContains(again, "ya se tiró")
    assertNotContains(again, USED)
    assert combat_state(combat) == state
    assert services.ambush(
        combat=combat, access=gm(world), roller=elsa, watcher=miller, ambushers=[elsa], client_seed=seed
    )
    # A new seed is a new ambush: refused, as before.
    data["client_seed"] = client_seed()
    assertContains(client_for(world.gm).post(url(world, scene, "combat-ambush", combat.pk), data, **HTMX), "ya se tiró")
    assert combat_state(combat) == state


def test_without_javascript_the_server_seeds_the_ambush(vaesen_world, scene, d6):
    world = vaesen_world
    combat = start(world, scene)
    elsa, miller = fighter(combat, world.pc), fighter(combat, world.npc)
    before = last_pk()
    d6.extend([[1, 1, 1, 1, 1, 1, 1], [6, 1, 1]])
    client_for(world.gm).post(
        url(world, scene, "combat-ambush", combat.pk), {"roller": elsa.pk, "watcher": miller.pk}, **HTMX
    )
    assert [e.entry["client_seed_source"] for e in rolled_after(before)] == ["server", "server"]


# --- an action and what it brings --------------------------------------------------------


def breaking_blow(world, scene, d6):
    """The miller attacks Elsa, who wears armour and has two physical
    conditions left to none: the blow hits, the armour stops nothing, and
    she is Broken with a critical injury (V10, V19, V22)."""
    sheet = world.pc.vaesen
    sheet.armour, sheet.armour_protection = "Abrigo de cuero", 1
    sheet.physical_conditions = ["Exhausto", "Magullado", "Herido"]
    sheet.save()
    combat = ready(world, scene, d6, (2, 9, 5))
    miller, elsa = fighter(combat, world.npc), fighter(combat, world.pc)
    action = services.declare(combat=combat, access=gm(world), actor=miller, kind=Kind.ATTACK, target=elsa)
    # The attack (Físico 4 + Fuerza 2), the armour's die, the injury's d66.
    d6.extend([[6, 1, 1, 1, 1, 1], [2], [3, 4]])
    return combat, action


@pytest.mark.parametrize("htmx", [True, False], ids=["htmx", "page"])
def test_an_answered_attack_seeds_its_roll_armour_and_injury_and_a_retry_marks_nothing_twice(
    vaesen_world, scene, d6, htmx
):
    world = vaesen_world
    combat, action = breaking_blow(world, scene, d6)
    seed = client_seed()
    before = last_pk()
    extra = HTMX if htmx else {}
    react = url(world, scene, "combat-react", action.pk)
    client_for(world.player).post(react, {"reaction": Reaction.NONE, "client_seed": seed}, **extra)
    entries = rolled_after(before)
    assert sources(entries) == [(derived(seed, n), "browser") for n in range(3)]
    assert [e.signed_game["test"] for e in entries] == ["attack", "armour", "injury"]
    action.refresh_from_db()
    assert action.injury_roll.first == entries[2]
    assert VaesenInjury.objects.get(sheet_id=world.pc.pk).roll == 34
    state = combat_state(combat)

    again = client_for(world.player).post(react, {"reaction": Reaction.NONE, "client_seed": seed}, **HTMX)

    assert again.status_code == 200
    assertNotContains(again, "ya se resolvió")
    assertNotContains(again, USED)
    assert combat_state(combat) == state
    # The service answers a retry with the action as the first request settled it.
    answered = services.react(
        action=action, access=campaign_access(world.player, world.campaign), reaction=Reaction.NONE, client_seed=seed
    )
    assert (answered.pk, answered.outcome) == (action.pk, action.outcome)
    assert combat_state(combat) == state


def test_a_reaction_is_seeded_after_the_action_it_answers(vaesen_world, scene, d6):
    world = vaesen_world
    combat = ready(world, scene, d6, (2, 9, 5))
    miller, elsa = fighter(combat, world.npc), fighter(combat, world.pc)
    action = services.declare(combat=combat, access=gm(world), actor=miller, kind=Kind.ATTACK, target=elsa)
    seed = client_seed()
    before = last_pk()
    # The attack misses (6 dice, no 6); the dodge: Precisión 4 + Agilidad 2.
    d6.extend([[1, 1, 1, 1, 1, 1], [1, 1, 1, 1, 1, 1]])
    client_for(world.player).post(
        url(world, scene, "combat-react", action.pk),
        {"reaction": Reaction.DODGE, "reactor": elsa.pk, "client_seed": seed},
        **HTMX,
    )
    entries = rolled_after(before)
    assert [e.signed_game["test"] for e in entries] == ["attack", "reaction"]
    assert sources(entries) == [(seed, "browser"), (derived(seed, 1), "browser")]
    fast_used = fighter(combat, world.pc).fast_used
    assert fast_used == 1
    state = combat_state(combat)
    client_for(world.player).post(
        url(world, scene, "combat-react", action.pk),
        {"reaction": Reaction.DODGE, "reactor": elsa.pk, "client_seed": seed},
        **HTMX,
    )
    assert combat_state(combat) == state and fighter(combat, world.pc).fast_used == 1


def test_without_javascript_the_server_seeds_the_attack_and_all_it_brings(vaesen_world, scene, d6):
    world = vaesen_world
    combat, action = breaking_blow(world, scene, d6)
    before = last_pk()
    client_for(world.player).post(url(world, scene, "combat-react", action.pk), {"reaction": Reaction.NONE}, **HTMX)
    entries = rolled_after(before)
    assert [e.entry["client_seed_source"] for e in entries] == ["server", "server", "server"]
    assert VaesenInjury.objects.filter(sheet_id=world.pc.pk).count() == 1


def test_a_seed_of_another_action_is_refused_with_nothing_rolled(vaesen_world, scene, d6):
    world = vaesen_world
    combat, action = breaking_blow(world, scene, d6)
    seed = client_seed()
    services.react(action=action, access=gm(world), reaction=Reaction.NONE, client_seed=seed)
    services.next_turn(combat=combat, access=gm(world))
    services.next_turn(combat=combat, access=gm(world))
    services.next_turn(combat=combat, access=gm(world))
    second = services.declare(
        combat=combat,
        access=gm(world),
        actor=fighter(combat, world.npc),
        kind=Kind.ATTACK,
        target=fighter(combat, world.pc),
    )
    state = combat_state(combat)
    response = client_for(world.gm).post(
        url(world, scene, "combat-react", second.pk), {"reaction": Reaction.NONE, "client_seed": seed}, **HTMX
    )
    assertContains(response, USED)
    assert combat_state(combat) == state
    second.refresh_from_db()
    assert second.pending


# --- the reaction settled once its deadline passed ---------------------------------------------


def test_the_settled_reaction_rolls_with_the_directions_browser_seed(vaesen_world, scene, d6):
    world = vaesen_world
    combat, action = breaking_blow(world, scene, d6)
    deadline = reactions.reaction_deadline_set(
        action=action, access=gm(world), due_at=timezone.now() + timedelta(days=1), remind_before=timedelta(hours=2)
    )
    seed = client_seed()
    before = last_pk()
    deadlines.deadline_settle(
        deadline=deadline, key="ninguna", actor=world.gm, now=deadline.due_at + timedelta(minutes=1), client_seed=seed
    )
    entries = rolled_after(before)
    assert sources(entries) == [(derived(seed, n), "browser") for n in range(3)]
    assert {e.user_id for e in entries} == {world.gm.pk}


# --- the sheet's critical injury (V10) ---------------------------------------------------


def test_the_sheet_injury_stores_the_browser_seed_and_a_retry_records_it_once(vaesen_world, d6):
    world = vaesen_world
    VaesenSheet.objects.filter(pk=world.pc.pk).update(
        physical_conditions=["Exhausto", "Magullado", "Herido"], broken_physical=True, pending_injuries=["físico"]
    )
    roll_url = reverse("vaesen:injury-roll", args=[world.campaign.slug, world.pc.pk])
    seed = client_seed()
    d6.append([3, 5])
    client_for(world.gm).post(roll_url, {"kind": "físico", "client_seed": seed}, **HTMX)
    entry = RollEntry.objects.get(client_seed=seed)
    assert entry.entry["client_seed_source"] == "browser" and entry.signed_game["d66"] == 35
    state = (RollEntry.objects.count(), VaesenInjury.objects.count(), SheetEvent.objects.count())

    again = client_for(world.gm).post(roll_url, {"kind": "físico", "client_seed": seed}, **HTMX)

    assertNotContains(again, "por tirar")
    assertNotContains(again, USED)
    assert (RollEntry.objects.count(), VaesenInjury.objects.count(), SheetEvent.objects.count()) == state
    character = world.pc
    assert roll_sheet_injury(character=character, kind="físico", user=world.gm, is_gm=True, client_seed=seed) == entry
    # The same seed for the other kind is another roll: refused in Spanish.
    VaesenSheet.objects.filter(pk=world.pc.pk).update(pending_injuries=["mental"])
    response = client_for(world.gm).post(roll_url, {"kind": "mental", "client_seed": seed}, **HTMX)
    assertContains(response, USED)
    assert (RollEntry.objects.count(), VaesenInjury.objects.count(), SheetEvent.objects.count()) == state


def test_without_javascript_the_server_seeds_the_sheet_injury(vaesen_world, d6):
    world = vaesen_world
    VaesenSheet.objects.filter(pk=world.pc.pk).update(pending_injuries=["físico"])
    roll_url = reverse("vaesen:injury-roll", args=[world.campaign.slug, world.pc.pk])
    d6.append([3, 5])
    client_for(world.gm).post(roll_url, {"kind": "físico"}, **HTMX)
    entry = RollEntry.objects.get(kind=RollEntry.Kind.ROLL, purpose__startswith="Herida crítica")
    assert entry.entry["client_seed_source"] == "server"
    response = client_for(world.gm).post(roll_url, {"kind": "físico", "client_seed": "x" * 65}, **HTMX)
    assertContains(response, "La semilla del navegador no es válida")
    assert VaesenInjury.objects.count() == 1


# --- a retry racing the first request ---------------------------------------------------------


@pytest.mark.skipif(connection.vendor != "postgresql", reason="needs PostgreSQL row locks")
@pytest.mark.django_db(transaction=True)
def test_two_identical_answers_at_once_roll_and_mark_once(vaesen_world):
    """The same answer sent twice at once (a double click, a retry while the
    first still runs): the combat's lock queues them, the second finds the
    first's roll and returns the action it settled, with no error. Each
    thread has its own connection, as separate web workers would."""
    world = vaesen_world
    scene = make_scene(world.campaign, title="El granero")
    combat = services.combat_start(scene=scene, access=gm(world), characters=[world.pc, world.npc])
    services.initiative_roll(combat=combat, access=gm(world))
    combat.refresh_from_db()
    acting = services.current(combat, list(combat.combatants.select_related("character").order_by("order")))
    target = VaesenCombatant.objects.exclude(pk=acting.pk).get(combat=combat)
    action = services.declare(combat=combat, access=gm(world), actor=acting, kind=Kind.ATTACK, target=target)
    seed = client_seed()
    before = last_pk()

    def work(_n: int):
        return services.react(action=action, access=gm(world), reaction=Reaction.NONE, client_seed=seed)

    results, errors = in_threads(2, work)
    assert not errors, errors
    assert len(results) == 2 and results[0].pk == results[1].pk == action.pk
    entries = rolled_after(before)
    assert entries and [e.client_seed for e in entries] == [derived(seed, n) for n in range(len(entries))]
    assert RollEntry.objects.filter(client_seed=seed).count() == 1
    assert SheetEvent.objects.filter(roll__in=entries).count() <= 1
