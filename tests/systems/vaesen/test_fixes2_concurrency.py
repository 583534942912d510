"""Two healers at once (issue 15, second review, item 3; V29): healing
physical and mental conditions of one patient at the same moment loses
neither, and two healers of the same kind cannot both treat one patient the
same day. Each thread has its own connection, as separate web workers would."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError
from django.db import connection

from rolls import rollog
from systems.vaesen.healing import services
from systems.vaesen.models import VaesenSheet
from table.models import TableRoll
from tests.conftest import in_threads
from tests.factories import client_seed, make_scene
from tests.systems.vaesen.conftest import vaesen_character

pytestmark = [
    pytest.mark.skipif(
        connection.vendor != "postgresql", reason="needs PostgreSQL row locks (SQLite has one writer at a time)"
    ),
    pytest.mark.django_db(transaction=True),
]

TRIES = 8


@pytest.fixture
def sixes(monkeypatch):
    """Every d6 pool the log draws is all sixes: every healing succeeds."""
    real = rollog.dice_for_spec

    def draw(seed, message, spec):
        if spec.endswith("d6"):
            return [6] * int(spec[:-2])
        return real(seed, message, spec)

    monkeypatch.setattr(rollog, "dice_for_spec", draw)


def _healers(world):
    karl = vaesen_character(world.campaign, world.other, "Karl", skills={"Medicina": 2, "Inspiración": 2})
    olof = vaesen_character(world.campaign, world.gm, "Olof", kind="npc", skills={"Medicina": 2, "Inspiración": 2})
    return karl, olof


def test_v29_physical_and_mental_healing_of_one_patient_applied_at_once_lose_nothing(vaesen_world, sixes, monkeypatch):
    """Two successful healings (say, after their pushes) applied at the same
    moment: each reads the patient's conditions under the row lock, so
    neither writes back what the other has just healed."""
    w = vaesen_world
    scene = make_scene(w.campaign, title="La casa segura")
    real_apply = services.apply_effects
    for attempt in range(TRIES):
        karl = vaesen_character(w.campaign, w.other, f"Karl {attempt}", skills={"Medicina": 2})
        olof = vaesen_character(w.campaign, w.gm, f"Olof {attempt}", kind="npc", skills={"Inspiración": 2})
        patient = vaesen_character(
            w.campaign,
            w.player,
            f"Paciente {attempt}",
            physical_conditions=["Exhausto"],
            mental_conditions=["Irritado"],
        )
        # The rolls succeed but are not applied yet (as a pushed success waits for «Aplicar»).
        monkeypatch.setattr(services, "apply_effects", lambda **kwargs: kwargs["table_roll"])
        rolls = [
            services.healing_roll(
                scene=scene, actor=actor, healer=healer, skill=skill, patients=[patient], client_seed=client_seed()
            )
            for actor, healer, skill in ((w.other, karl, "Medicina"), (w.gm, olof, "Inspiración"))
        ]
        monkeypatch.setattr(services, "apply_effects", real_apply)

        def work(n: int, rolls=tuple(rolls), users=(w.other, w.gm)):
            return services.apply_effects(table_roll=rolls[n], user=users[n], is_gm=n == 1)

        results, errors = in_threads(2, work)
        assert not errors, errors
        sheet = VaesenSheet.objects.get(pk=patient.pk)
        assert (sheet.physical_conditions, sheet.mental_conditions) == ([], []), attempt


def test_v29_two_healers_of_one_kind_cannot_both_treat_a_patient(vaesen_world, sixes):
    w = vaesen_world
    scene = make_scene(w.campaign, title="La casa segura")
    karl, olof = _healers(w)
    VaesenSheet.objects.filter(pk=w.pc.pk).update(physical_conditions=["Exhausto", "Magullado"])
    jobs = [(w.other, karl), (w.gm, olof)]

    def work(n: int):
        actor, healer = jobs[n]
        return services.healing_roll(
            scene=scene, actor=actor, healer=healer, skill="Medicina", patients=[w.pc], client_seed=client_seed()
        )

    results, errors = in_threads(2, work)
    assert len(results) == 1, errors
    assert len(errors) == 1 and isinstance(errors[0], ValidationError), errors
    assert "ya ha recibido hoy curación" in " ".join(errors[0].messages)
    assert TableRoll.objects.filter(kind=services.HEALING).count() == 1
