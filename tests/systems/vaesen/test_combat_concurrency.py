"""Two simultaneous attacks on the same turn make one (V18: one slow action
per turn), and two simultaneous answers to one attack roll it once (V21).
Each thread has its own connection, as separate web workers would."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError
from django.db import connection

from campaigns.permissions import campaign_access
from rolls.models import RollEntry
from systems.vaesen.combat import services
from systems.vaesen.models import VaesenAction, VaesenCombatant
from tests.conftest import in_threads
from tests.factories import make_scene

pytestmark = [
    pytest.mark.skipif(
        connection.vendor != "postgresql", reason="needs PostgreSQL row locks (SQLite has one writer at a time)"
    ),
    pytest.mark.django_db(transaction=True),
]


def _ready(world):
    scene = make_scene(world.campaign, title="El granero")
    gm = campaign_access(world.gm, world.campaign)
    combat = services.combat_start(scene=scene, access=gm, characters=[world.pc, world.npc])
    services.initiative_roll(combat=combat, access=gm)
    combat.refresh_from_db()
    acting = services.current(combat, list(combat.combatants.select_related("character").order_by("order")))
    target = VaesenCombatant.objects.exclude(pk=acting.pk).get(combat=combat)
    return combat, gm, acting, target


def test_v18_two_simultaneous_attacks_on_the_same_turn_make_one(vaesen_world):
    combat, gm, acting, target = _ready(vaesen_world)

    def work(_n: int):
        return services.declare(combat=combat, access=gm, actor=acting, kind=VaesenAction.Kind.ATTACK, target=target)

    results, errors = in_threads(2, work)
    assert len(results) == 1, errors
    assert len(errors) == 1 and isinstance(errors[0], ValidationError), errors
    assert "acción lenta" in " ".join(errors[0].messages)
    assert VaesenAction.objects.count() == 1
    assert VaesenCombatant.objects.get(pk=acting.pk).slow_used == 1


def test_v21_two_simultaneous_answers_roll_the_attack_once(vaesen_world):
    combat, gm, acting, target = _ready(vaesen_world)
    action = services.declare(combat=combat, access=gm, actor=acting, kind=VaesenAction.Kind.ATTACK, target=target)
    before = RollEntry.objects.count()

    def work(_n: int):
        return services.react(action=action, access=gm, reaction=VaesenAction.Reaction.NONE)

    results, errors = in_threads(2, work)
    assert len(results) == 1, errors
    assert len(errors) == 1 and "ya se resolvió" in " ".join(errors[0].messages)
    assert RollEntry.objects.count() - before in (1, 2)  # the attack, and the armour if any
    assert VaesenAction.objects.get().roll is not None
