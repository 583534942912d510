"""The combat page as the cache keeps it (``campaigns.fragments``): every
move at the table (a combat started, initiative, a round, an attack, a
re-roll, damage applied, a combatant's state, the end) moves its key, the
GM's controls never reach a player, a pending activation's deadline ends
what is kept, and its query count stays constant, made or kept (issue 13,
item 2)."""

from __future__ import annotations

from unittest import mock

import pytest
from django.core.cache import cache
from django.utils import timezone

from campaigns import fragments
from campaigns.permissions import campaign_access
from rules import hitos
from systems.hitos.activations import services as activations
from systems.hitos.checks import services as checks
from systems.hitos.combat import services as combat_services
from tests.conftest import client_for
from tests.systems.hitos.test_combat_views import combatant, make_attack, started, url

pytestmark = pytest.mark.django_db


def board(play, user=None, **headers) -> str:
    response = client_for(user).get(url(play, "combat"), headers=headers)
    assert response.status_code == 200
    return response.content.decode()


def gm(play):
    return campaign_access(play.gm, play.campaign)


def test_a_combat_started_and_its_initiative_show_at_once(play, dice):
    assert "No hay ningún combate" in board(play, play.ana)
    combat = started(play)
    assert "Asalto 1" in board(play, play.ana)
    assert board(play, play.ana).count("—</td>") == 3
    dice.extend([[2, 5, 9], [3, 3, 3], [8, 8, 9]])
    combat_services.initiative_roll(combat=combat, access=gm(play))
    html = board(play, play.ana)
    assert html.index("El mayordomo") < html.index("Inés Salcedo") < html.index("Tomás Ferrer")


def test_a_new_round_clears_states_set_in_bulk(play):
    combat = started(play)
    combat_services.combatant_set(
        combatant=combatant(combat, play.ines),
        access=gm(play),
        all_out_defence=True,
        defenceless=False,
        out_of_combat=False,
    )
    assert "defensa total</span>" in board(play, play.ana)
    # next_round saves the combat and clears the states with QuerySet.update.
    combat_services.next_round(combat=combat, access=gm(play))
    html = board(play, play.ana)
    assert "Asalto 2" in html and "defensa total</span>" not in html


def test_an_attack_a_reroll_and_applied_damage_show_at_once(play):
    combat = started(play)
    assert "Todavía no hay ataques" in board(play, play.ana)
    attack = make_attack(play, combat)
    html = board(play, play.ana)
    assert f'id="attack-{attack.pk}"' in html
    assert "Todavía no hay ataques" not in html
    checks.table_reroll(
        checks.lock_table_roll(attack.table_roll), user=play.ana, positions=[0], reading=hitos.Reading.POSITIVE
    )
    attack.table_roll.refresh_from_db()
    assert attack.table_roll.latest.get_absolute_url() in board(play, play.ana)
    while combat_services.attack_damage_for(attack) is None:
        attack = make_attack(play, combat)
    combat_services.damage_apply(attack=attack, access=gm(play))
    assert "Daño aplicado" in board(play, play.ana)


def test_the_end_of_the_combat_shows_at_once(play):
    combat = started(play)
    assert "Terminado" not in board(play, play.ana)
    combat_services.combat_end(combat=combat, access=gm(play))
    assert "Terminado" in board(play, play.ana)


def test_the_gms_board_never_reaches_a_player_or_a_reader(play):
    started(play)
    assert "Tirar iniciativa" in board(play, play.gm)
    for user in (play.ana, play.reader, None):
        html = board(play, user)
        assert "Tirar iniciativa" not in html and "Quitar" not in html
    # Each player's own attack form, with their own character.
    assert "Tirar el ataque" in board(play, play.ana)
    assert "Tirar el ataque" not in board(play, play.reader)


def test_the_htmx_board_and_the_page_are_kept_apart(play):
    started(play)
    fragment = board(play, play.gm, HX_Request="true")
    page = board(play, play.gm)
    assert fragment.lstrip().startswith('<div id="combat-board">') and "<html" not in fragment
    assert "<html" in page


def test_a_pending_activation_is_kept_only_until_its_deadline(play):
    combat = started(play)
    attack = make_attack(play, combat)
    activation = activations.activate_negative(
        table_roll=attack.table_roll, user=play.gm, aspect_choice=f"a{play.ines_aspect.pk}", positions=[0]
    )
    with mock.patch.object(cache, "set", wraps=cache.set) as kept:
        board(play, play.gm)
    [seconds] = [call.args[2] for call in kept.call_args_list if call.args[0].startswith("fragment:combat-page:")]
    left = (activation.deadline - timezone.now()).total_seconds()
    assert 0 < seconds <= min(fragments.FRAGMENT_SECONDS, left + 1)


@pytest.mark.parametrize("who", ["gm", "ana", "anonymous"])
def test_the_query_count_is_constant_as_attacks_grow(play, who, django_assert_max_num_queries):
    client = client_for(getattr(play, who, None))
    combat = started(play)
    # Made: the page's queries (tests/systems/hitos/test_combat_views.py).
    # Kept: session, user, campaign, membership (a player), the scene,
    # notifications.
    kept = {"gm": 5, "ana": 6, "anonymous": 2}[who]
    counts = []
    for _ in range(2):
        make_attack(play, combat)
        make_attack(play, combat, attacker=play.tomas)
        cache.clear()
        with django_assert_max_num_queries(14) as made:
            client.get(url(play, "combat"))
        counts.append(len(made))
        with django_assert_max_num_queries(kept):
            client.get(url(play, "combat"))
    assert counts[0] == counts[1]
