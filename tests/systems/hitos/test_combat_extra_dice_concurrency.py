"""Ten simultaneous «apply the damage» of an attack above mCM (H51): the extra
dice are drawn once, as one extension, and the damage is applied once,
whether the requests are one form retried (the same browser seed) or
different forms. Each thread has its own connection, as separate web
workers would."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError
from django.db import connection

from campaigns.permissions import campaign_access
from rolls.models import RollEntry
from sheets.models import SheetEvent
from systems.hitos.combat import services as combat_services
from systems.hitos.models import Attack, Combatant, HitosEvent
from tests.conftest import chosen_dice, in_threads, make_world
from tests.factories import client_seed

pytestmark = [
    pytest.mark.skipif(connection.vendor != "postgresql", reason="needs PostgreSQL row locks"),
    pytest.mark.django_db(transaction=True),
]

THREADS = 10


@pytest.mark.parametrize("same_seed", [True, False], ids=["one form retried", "ten forms"])
def test_ten_simultaneous_applications_draw_and_apply_once(same_seed):
    play = make_world()
    access = campaign_access(play.gm, play.campaign)
    combat = combat_services.combat_start(scene=play.scene, access=access, characters=[play.ines, play.npc])
    weapon = play.ines.weapons.create(name="Maza de guerra", damage_code="mCM+1d10", melee=True)
    with chosen_dice([9, 3, 7]):
        made = combat_services.attack_make(
            combat=combat,
            access=access,
            attacker=Combatant.objects.get(combat=combat, character=play.ines),
            target=Combatant.objects.get(combat=combat, character=play.npc),
            weapon=weapon,
        )
    seeds = [client_seed()] * THREADS if same_seed else [client_seed() for _ in range(THREADS)]

    def work(n: int):
        return combat_services.damage_apply(
            attack=Attack.objects.get(pk=made.pk), access=campaign_access(play.gm, play.campaign), client_seed=seeds[n]
        ).damage_applied

    results, errors = in_threads(THREADS, work)
    extension = RollEntry.objects.get(kind=RollEntry.Kind.EXTEND)
    applied = Attack.objects.get(pk=made.pk).damage_applied
    assert applied == 19 + extension.entry["drawn"][0] + 2
    assert SheetEvent.objects.filter(character=play.npc, kind=HitosEvent.DAMAGE).count() == 1
    if same_seed:
        # Every retry of the one form shows what the first did.
        assert (errors, results) == ([], [applied] * THREADS)
    else:
        assert results == [applied]
        assert len(errors) == THREADS - 1
        assert all(isinstance(e, ValidationError) and e.code == "applied" for e in errors)
