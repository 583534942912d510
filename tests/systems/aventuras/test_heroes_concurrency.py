"""Hero points at once (issue 16, item 4): one point cannot be spent twice,
one use per turn holds under a race (A24), and a gift approved while the
giver spends their last point moves that point once (A26). Each thread has
its own connection, as separate web workers would."""

from __future__ import annotations

import threading

import pytest
from django.core.exceptions import ValidationError
from django.db import connection, connections

from sheets.models import SheetEvent
from systems.aventuras.heroes import services
from systems.aventuras.models import AventurasSheet, AventurasState, HeroMove, HeroRequest

pytestmark = [
    pytest.mark.skipif(
        connection.vendor != "postgresql", reason="needs PostgreSQL row locks (SQLite has one writer at a time)"
    ),
    pytest.mark.django_db(transaction=True),
]

TRIES = 5


def _in_threads(works) -> tuple[list[object], list[BaseException]]:
    barrier = threading.Barrier(len(works))
    results: list[object] = []
    errors: list[BaseException] = []

    def run(work) -> None:
        try:
            barrier.wait(timeout=30)
            results.append(work())
        except BaseException as exc:  # noqa: BLE001 - counted by the test
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run, args=(work,)) for work in works]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not any(thread.is_alive() for thread in threads)
    return results, errors


def _points(character) -> int:
    return AventurasSheet.objects.get(pk=character.pk).hero_points


def test_two_spends_of_the_last_point_at_once_one_is_refused(aventuras_world):
    w = aventuras_world
    howl = w.pc.aventuras.feats.get()
    AventurasSheet.objects.filter(pk=w.pc.pk).update(hero_points=1, health_lost=2)
    results, errors = _in_threads(
        [
            lambda: services.activate_feat(character=w.pc, actor=w.player, scene=w.scene, feat_id=howl.pk),
            lambda: services.recover(character=w.pc, actor=w.gm, scene=w.scene, levels=2, why="Poción"),
        ]
    )
    assert len(results) == 1, errors
    assert len(errors) == 1 and isinstance(errors[0], ValidationError), errors
    assert errors[0].messages == ["Palomita no tiene puntos de Héroe que gastar."]
    assert _points(w.pc) == 0
    assert HeroMove.objects.filter(kind="spend").count() == 1
    sheet = AventurasSheet.objects.get(pk=w.pc.pk)
    # The recovery happened only if its point was spent.
    assert sheet.health_lost == (0 if results[0].use == "recuperarse" else 2)


def test_two_same_use_spends_in_one_turn_at_once_one_is_refused(aventuras_world):
    w = aventuras_world
    hungry = AventurasState.objects.create(sheet_id=w.pc.pk, name="Hambriento", modifier=-1)
    tired = AventurasState.objects.create(sheet_id=w.pc.pk, name="Cansado", modifier=-1)
    for _ in range(TRIES):
        HeroMove.objects.all().delete()
        # The ignored states are read from the history (A23): each try starts without one.
        SheetEvent.objects.filter(character_id=w.pc.pk).delete()
        AventurasSheet.objects.filter(pk=w.pc.pk).update(hero_points=5)
        results, errors = _in_threads(
            [
                lambda: services.ignore_state(character=w.pc, actor=w.player, scene=w.scene, state_id=hungry.pk),
                lambda: services.ignore_state(character=w.pc, actor=w.gm, scene=w.scene, state_id=tired.pk, why="Café"),
            ]
        )
        assert len(results) == 1, errors
        assert len(errors) == 1 and isinstance(errors[0], ValidationError), errors
        assert errors[0].code == "same_use"
        assert _points(w.pc) == 4
        won = hungry if results[0].detail == "Hambriento" else tired
        assert services.ignored_states(w.pc, w.scene) == {won.pk}


def test_a_gift_approved_while_the_giver_spends_their_last_point(aventuras_world):
    w = aventuras_world
    howl = w.pc.aventuras.feats.get()
    for _ in range(TRIES):
        HeroMove.objects.all().delete()
        HeroRequest.objects.all().delete()
        AventurasSheet.objects.filter(pk=w.pc.pk).update(hero_points=1)
        AventurasSheet.objects.filter(pk=w.other_pc.pk).update(hero_points=5)
        w.pc.aventuras.refresh_from_db()
        gift = services.offer_gift(giver=w.pc, receiver=w.other_pc, actor=w.player, why="Me sacó del pozo")
        results, errors = _in_threads(
            [
                lambda gift=gift: services.decide(request_id=gift.pk, campaign=w.campaign, actor=w.gm, accept=True),
                lambda: services.activate_feat(character=w.pc, actor=w.player, scene=w.scene, feat_id=howl.pk),
            ]
        )
        assert len(results) == 1, errors
        assert len(errors) == 1 and isinstance(errors[0], ValidationError), errors
        assert _points(w.pc) == 0
        gift.refresh_from_db()
        if isinstance(results[0], HeroRequest):
            # The gift went first: the spend found no point.
            assert gift.status == "accepted" and _points(w.other_pc) == 6
            assert errors[0].messages == ["Palomita no tiene puntos de Héroe que gastar."]
        else:
            # The spend went first: the approval is refused and the gift still waits.
            assert gift.status == "pending" and _points(w.other_pc) == 5
            assert errors[0].messages == ["Palomita ya no tiene puntos de Héroe que dar."]
        assert sum(m.delta for m in HeroMove.objects.filter(character=w.pc)) == -1
