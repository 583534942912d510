"""The combat page and its actions: who may see and do what, the full page
and the htmx fragments, constant query counts."""

from __future__ import annotations

import pytest
from django.core.cache import cache
from django.urls import reverse

from campaigns.models import Notification
from campaigns.permissions import campaign_access
from rules import hitos
from sheets.models import SheetEvent
from systems.hitos.combat import services as combat_services
from systems.hitos.models import Attack, Combat, Combatant, HitosEvent, HitosSheet
from tests.conftest import client_for
from tests.factories import client_seed

HTMX = {"HTTP_HX_REQUEST": "true"}


def url(play, name, *args):
    return reverse(f"hitos:{name}", args=[play.campaign.slug, play.scene.pk, *args])


def started(play) -> Combat:
    return combat_services.combat_start(
        scene=play.scene,
        access=campaign_access(play.gm, play.campaign),
        characters=[play.ines, play.tomas, play.npc],
    )


def combatant(combat, character) -> Combatant:
    return Combatant.objects.get(combat=combat, character=character)


def attack_data(combat, attacker, target, weapon_value):
    return {
        "attacker": combatant(combat, attacker).pk,
        "target": combatant(combat, target).pk,
        "weapon": weapon_value,
        "modifier": "0",
        "modifier_reason": "",
        "client_seed": client_seed(),
    }


def make_attack(play, combat, attacker=None, target=None):
    attacker = attacker or play.ines
    target = target or play.npc
    return combat_services.attack_make(
        combat=combat,
        access=campaign_access(play.gm, play.campaign),
        attacker=combatant(combat, attacker),
        target=combatant(combat, target),
        weapon=attacker.weapons.get(),
    )


# --- the page ----------------------------------------------------------------------------


def test_the_gm_sees_the_start_form_when_there_is_no_combat(play):
    response = client_for(play.gm).get(url(play, "combat"))
    assert response.status_code == 200
    html = response.content.decode()
    assert "Empezar un combate" in html
    assert "El mayordomo" in html and "Inés Salcedo" in html
    assert "<html" in html


def test_a_player_without_a_combat_sees_that_there_is_none(play):
    html = client_for(play.ana).get(url(play, "combat")).content.decode()
    assert "No hay ningún combate en esta escena." in html
    assert "Empezar un combate" not in html


def test_the_page_shows_the_tracker_in_order_with_unprepared_badges(play, dice):
    combat = started(play)
    dice.extend([[2, 5, 9], [3, 3, 3], [8, 8, 9]])
    combat_services.initiative_roll(combat=combat, access=campaign_access(play.gm, play.campaign))
    html = client_for(play.reader).get(url(play, "combat")).content.decode()
    assert html.index("El mayordomo") < html.index("Inés Salcedo") < html.index("Tomás Ferrer")
    assert html.count("desprevenido</span>") == 3
    npc = combatant(combat, play.npc)
    assert npc.initiative.latest.get_absolute_url() in html
    # Readers watch; they get no controls.
    assert "Tirar iniciativa" not in html and "Tirar el ataque" not in html


def test_the_htmx_request_gets_the_board_without_the_page(play):
    started(play)
    response = client_for(play.gm).get(url(play, "combat"), **HTMX)
    html = response.content.decode()
    assert response.status_code == 200
    assert html.lstrip().startswith('<div id="combat-board">')
    assert "<html" not in html and "Tirar iniciativa" in html
    assert response["Vary"] and "HX-Request" in response["Vary"]


def test_outsiders_of_a_private_campaign_get_404(private_play):
    play = private_play
    assert client_for(play.outsider).get(url(play, "combat")).status_code == 404
    assert client_for(None).get(url(play, "combat")).status_code == 404


def test_a_scene_the_user_cannot_see_is_404(play):
    play.scene.everyone = False
    play.scene.save()
    assert client_for(play.ana).get(url(play, "combat")).status_code == 404
    assert client_for(play.gm).get(url(play, "combat")).status_code == 200


def test_the_page_is_get_only(play):
    assert client_for(play.gm).post(url(play, "combat")).status_code == 405


@pytest.mark.parametrize("who", ["gm", "ana", "anonymous"])
def test_query_count_stays_constant_as_attacks_and_combatants_grow(play, who, django_assert_max_num_queries):
    from systems.hitos.checks import services as table

    combat = started(play)
    first = make_attack(play, combat)
    table.table_reroll(
        table.lock_table_roll(first.table_roll), user=play.ana, positions=[0], reading=hitos.Reading.POSITIVE
    )
    client = client_for(getattr(play, who, None))
    client.get(url(play, "combat"))
    # 14: the page's queries when it is made (the cache keeps it afterwards:
    # tests/systems/hitos/test_combat_cache.py), among them the re-rolled
    # cards' chains and whether the attacks may still be re-rolled
    # (systems.hitos.checks.services.reroll_refusals).
    cache.clear()
    with django_assert_max_num_queries(14) as small:
        client.get(url(play, "combat"))
    for n in range(3):
        extra = play.npc.__class__.objects.create(
            campaign=play.campaign, owner=play.gm, name=f"Sicario {n}", kind="npc"
        )
        HitosSheet.objects.create(character=extra, damage_code="C")
        combat_services.combatant_add(combat=combat, access=campaign_access(play.gm, play.campaign), character=extra)
        make_attack(play, combat, target=extra)
        later = make_attack(play, combat, attacker=play.tomas)
        # More re-rolled cards (longer chains) cost nothing more either.
        table.table_reroll(
            table.lock_table_roll(later.table_roll), user=play.bruno, positions=[1], reading=hitos.Reading.POSITIVE
        )
        first.table_roll.refresh_from_db()
        table.table_reroll(
            table.lock_table_roll(first.table_roll), user=play.ana, positions=[2], reading=hitos.Reading.POSITIVE
        )
    cache.clear()
    with django_assert_max_num_queries(len(small.captured_queries)):
        response = client.get(url(play, "combat"))
    assert response.content.decode().count('class="roll-card card"') == 7


# --- the GM's actions ----------------------------------------------------------------------


def test_the_gm_starts_a_combat_and_a_second_is_refused(play):
    client = client_for(play.gm)
    data = {"characters": [play.ines.pk, play.npc.pk]}
    response = client.post(url(play, "combat-start"), data)
    assert response.status_code == 302
    combat = Combat.objects.get(scene=play.scene)
    assert [c.character_id for c in combat.combatants.order_by("order")] == [play.ines.pk, play.npc.pk]
    response = client.post(url(play, "combat-start"), data, **HTMX)
    assert "Ya hay un combate en curso en esta escena." in response.content.decode()
    assert Combat.objects.count() == 1


def test_players_and_outsiders_cannot_start_a_combat(play, private_play):
    assert client_for(play.ana).post(url(play, "combat-start"), {"characters": [play.ines.pk]}).status_code == 403
    assert client_for(play.reader).post(url(play, "combat-start"), {}).status_code == 403
    other = private_play
    assert client_for(other.outsider).post(url(other, "combat-start"), {}).status_code == 404
    assert not Combat.objects.exists()


def test_rolling_initiative_with_htmx_returns_the_tracker(play):
    combat = started(play)
    response = client_for(play.gm).post(url(play, "combat-initiative", combat.pk), **HTMX)
    html = response.content.decode()
    assert html.lstrip().startswith('<section id="combat-tracker"')
    assert all(c.initiative_total is not None for c in combat.combatants.all())
    assert client_for(play.ana).post(url(play, "combat-initiative", combat.pk)).status_code == 403


def test_tracker_actions_act_delay_state_round_and_end(play):
    combat = started(play)
    client = client_for(play.gm)
    npc = combatant(combat, play.npc)
    assert client.post(url(play, "combat-combatant-act", npc.pk)).status_code == 302
    assert Combatant.objects.get(pk=npc.pk).has_acted
    client.post(url(play, "combat-combatant-delay", npc.pk), {"position": "1"}, **HTMX)
    assert Combatant.objects.get(pk=npc.pk).order == 0
    response = client.post(url(play, "combat-combatant-delay", npc.pk), {"position": "9"}, **HTMX)
    assert "La posición va de 1 a 3." in response.content.decode()
    client.post(url(play, "combat-combatant-state", npc.pk), {"defenceless": "on"}, **HTMX)
    npc.refresh_from_db()
    assert (npc.defenceless, npc.all_out_defence) == (True, False)
    client.post(url(play, "combat-round", combat.pk))
    client.post(url(play, "combat-end", combat.pk))
    combat.refresh_from_db()
    assert combat.round == 2 and combat.ended_at is not None
    assert client_for(play.ana).post(url(play, "combat-combatant-act", npc.pk)).status_code == 403


def test_adding_and_removing_combatants(play):
    combat = combat_services.combat_start(
        scene=play.scene, access=campaign_access(play.gm, play.campaign), characters=[play.ines]
    )
    client = client_for(play.gm)
    client.post(url(play, "combat-combatant-add", combat.pk), {"character": play.tomas.pk}, **HTMX)
    assert combat.combatants.count() == 2
    tomas = combatant(combat, play.tomas)
    response = client.post(url(play, "combat-combatant-remove", tomas.pk), **HTMX)
    assert response.content.decode().lstrip().startswith('<div id="combat-board">')
    assert combat.combatants.count() == 1


# --- attacks -----------------------------------------------------------------------------


def test_a_player_attacks_with_their_own_character(play, dice):
    combat = started(play)
    dice.append([9, 3, 7])
    client = client_for(play.ana)
    html = client.get(url(play, "combat")).content.decode()
    assert "Tirar el ataque" in html
    weapon = play.ines.weapons.get()
    response = client.post(
        url(play, "combat-attack", combat.pk), attack_data(combat, play.ines, play.npc, f"w{weapon.pk}"), **HTMX
    )
    html = response.content.decode()
    attack = Attack.objects.get()
    assert f'id="attack-{attack.pk}"' in html
    assert "Daño C: 7, bonificación +2, RD −0 = <strong>9</strong>" in html
    # Only the GM applies damage.
    assert "Aplicar daño" not in html
    assert attack.table_roll.owner == play.ana


def test_a_player_cannot_attack_with_someone_elses_character(play):
    combat = started(play)
    weapon = play.tomas.weapons.get()
    response = client_for(play.ana).post(
        url(play, "combat-attack", combat.pk), attack_data(combat, play.tomas, play.npc, f"w{weapon.pk}")
    )
    assert response.status_code == 200
    assert "Escoja una opción válida" in response.content.decode() or "Select a valid choice" in (
        response.content.decode()
    )
    assert not Attack.objects.exists()
    assert client_for(play.reader).post(url(play, "combat-attack", combat.pk), {}).status_code == 403


def test_the_gm_attacks_with_an_npcs_usual_attack_and_applies_the_damage(play, dice):
    combat = started(play)
    dice.extend([[9, 3, 7], [5, 6, 7]])  # the attack; then the mass-damage test
    client = client_for(play.gm)
    npc = combatant(combat, play.npc)
    response = client.post(
        url(play, "combat-attack", combat.pk), attack_data(combat, play.npc, play.tomas, f"npc{npc.pk}")
    )
    attack = Attack.objects.get()
    assert response.status_code == 302 and response["Location"].endswith(f"#attack-{attack.pk}")
    assert (attack.weapon, attack.damage_code) == ("Ataque habitual", "M")
    response = client.post(url(play, "combat-damage-apply", attack.pk), **HTMX)
    html = response.content.decode()
    assert html.lstrip().startswith('<section id="combat-attacks"')
    # M 9 + the NPC's melee bonus (5 + 4) ÷ 4 = 2.
    assert "Daño aplicado: 11" in html
    assert SheetEvent.objects.filter(character=play.tomas, kind=HitosEvent.DAMAGE).count() == 1
    assert Notification.objects.filter(user=play.bruno, kind=Notification.Kind.CHARACTER).count() == 1
    response = client.post(url(play, "combat-damage-apply", attack.pk), **HTMX)
    assert "Este daño ya está aplicado." in response.content.decode()
    assert SheetEvent.objects.filter(character=play.tomas, kind=HitosEvent.DAMAGE).count() == 1


def test_players_cannot_apply_damage_or_decide_effects(play):
    combat = started(play)
    attack = make_attack(play, combat)
    assert client_for(play.ana).post(url(play, "combat-damage-apply", attack.pk)).status_code == 403
    assert client_for(play.ana).post(url(play, "combat-effect", attack.pk), {"decision": "dismiss"}).status_code == 403
    assert client_for(play.gm).get(url(play, "combat-damage-apply", attack.pk)).status_code == 405


def test_the_gm_confirms_a_critical_secuela_with_an_edited_phrase(play, dice):
    combat = started(play)
    dice.append([10, 4, 10])
    attack = make_attack(play, combat)
    client = client_for(play.gm)
    html = client.get(url(play, "combat")).content.decode()
    assert "Propuesta: secuela temporal para El mayordomo (una escena)." in html
    response = client.post(
        url(play, "combat-effect", attack.pk), {"decision": "confirm", "phrase": "Costillas rotas"}, **HTMX
    )
    assert "Propuesta:" not in response.content.decode()
    assert play.npc.aspects.get(kind="temporary").phrase == "Costillas rotas"


def test_a_player_shifts_their_damage_with_an_aspect(play, dice):
    combat = started(play)
    dice.append([9, 3, 7])
    attack = make_attack(play, combat)
    client = client_for(play.ana)
    response = client.post(
        url(play, "combat-attack-shift", attack.pk), {"steps": "1", "aspect": "Ágil como una gata"}, **HTMX
    )
    assert "Daño M: 9, bonificación +2, RD −0 = <strong>11</strong>" in response.content.decode()
    play.ines.refresh_from_db()
    assert play.ines.hitos.drama_points == 2
    response = client.post(url(play, "combat-attack-shift", attack.pk), {"steps": "-1", "aspect": "x"}, **HTMX)
    assert response.status_code == 403
    assert client_for(play.reader).post(url(play, "combat-attack-shift", attack.pk), {}).status_code == 403


@pytest.mark.parametrize("name", ["combat-damage-apply", "combat-effect", "combat-attack-shift"])
def test_an_attack_of_another_scene_is_404(play, name):
    combat = started(play)
    attack = make_attack(play, combat)
    other = play.scene.__class__.objects.create(campaign=play.campaign, title="El jardín")
    address = reverse(f"hitos:{name}", args=[play.campaign.slug, other.pk, attack.pk])
    assert client_for(play.gm).post(address).status_code == 404


def test_anonymous_visitors_of_a_public_campaign_watch_without_controls(play):
    started(play)
    response = client_for(None).get(url(play, "combat"))
    html = response.content.decode()
    assert response.status_code == 200
    assert "Inés Salcedo" in html and "Tirar iniciativa" not in html and "Tirar el ataque" not in html
    assert client_for(None).post(url(play, "combat-start"), {}).status_code == 302
