"""Hora de Aventuras hero points outside rolls (issue 16, item 4): the ledger
(``heroes.ledger``) and the services (``heroes.services``), A21–A28.

Seed S004, «PUNTOS DE HÉROE»: «Al principio de cualquier aventura, sin
importar cómo terminara la anterior, cada héroe comienza el juego con cinco
puntos de Héroe» (A21); «Ignorar un estado. En cualquier momento, puedes
gastar un punto de Héroe para ignorar un estado durante un turno»,
«Recuperarte … recuperar hasta dos niveles de salud», «Activar una proeza …
que lo necesite» (A23); «Cada turno puedes gastar tantos puntos de Héroe como
quieras … pero para usos distintos» (A24); «si te enfrentas a tu defecto
para ayudar a otros, ganas un punto de Héroe», «Sacrifícate por la causa»
(A25); «este puede darte, si quiere, uno de sus puntos de Héroe. El director
de juego tiene que aprobar el intercambio» (A26); «Un estado por el morro
dura una escena y el personaje que lo recibe gana un punto de Héroe» (A27);
«gastar dos puntos de Experiencia … para comprar un punto de Héroe
instantáneo, pero tendrás que gastarlo inmediatamente» (A28).
"""

from __future__ import annotations

import pytest
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction

from campaigns.models import Post, Scene
from rules.aventuras import HeroGain, HeroSpend
from sheets.models import SheetEvent
from systems.aventuras.heroes import ledger, services
from systems.aventuras.models import AventurasEvent, AventurasSheet, AventurasState, HeroMove, HeroRequest
from tests.factories import make_post, make_scene
from tests.systems.aventuras.conftest import aventuras_character

pytestmark = pytest.mark.django_db


def sheet(character) -> AventurasSheet:
    return AventurasSheet.objects.get(pk=character.pk)


def post_as(world, character, user=None):
    return make_post(world.scene, user or world.player, voice=Post.Voice.CHARACTER, character=character)


def hero_events(character):
    return list(SheetEvent.objects.filter(character=character, kind=AventurasEvent.HERO).order_by("id"))


def state(character, name="Hambriento", **fields):
    return AventurasState.objects.create(sheet_id=character.pk, name=name, modifier=-1, **fields)


def unchanged(character, before: AventurasSheet, moves: int, events: int) -> None:
    """Nothing changed: the points, the XP, the health, no move, no event."""
    now = sheet(character)
    assert (now.hero_points, now.experience, now.health_lost) == (
        before.hero_points,
        before.experience,
        before.health_lost,
    )
    assert HeroMove.objects.count() == moves
    assert SheetEvent.objects.count() == events


# --- the ledger ---------------------------------------------------------------------------


def test_ledger_turn_is_the_latest_post_in_the_scene_or_the_scene_before_it(aventuras_world):
    w = aventuras_world
    # A24 in play by post: a turn is the character's latest post in the scene.
    assert ledger.turn_of(w.pc, w.scene) == f"scene:{w.scene.pk}"
    first = post_as(w, w.pc)
    assert ledger.turn_of(w.pc, w.scene) == f"post:{first.pk}"
    post_as(w, w.other_pc, w.other)  # another hero's post is not Palomita's turn
    assert ledger.turn_of(w.pc, w.scene) == f"post:{first.pk}"
    second = post_as(w, w.pc)
    assert ledger.turn_of(w.pc, w.scene) == ledger.post_turn(second.pk)
    assert ledger.turn_of(w.pc, None) == ""


def test_ledger_spend_records_who_when_why_and_the_points_after(aventuras_world):
    w = aventuras_world
    turn = ledger.turn_of(w.pc, w.scene)
    with transaction.atomic():
        move = ledger.spend(w.pc, HeroSpend.FEAT, by=w.player, turn=turn, scene=w.scene, detail="Aullido", why="¡Auuu!")
    assert sheet(w.pc).hero_points == 4
    assert (move.kind, move.use, move.delta, move.points_after, move.turn) == ("spend", "activar_proeza", -1, 4, turn)
    assert (move.by, move.detail, move.why, move.scene) == (w.player, "Aullido", "¡Auuu!", w.scene)
    [event] = hero_events(w.pc)
    assert event.actor == w.player and event.reason == "¡Auuu!"
    assert "activar una proeza" in event.summary and "Aullido" in event.summary
    assert event.after == {"hero_points": 4}


@pytest.mark.django_db(transaction=True)
def test_ledger_spend_runs_only_inside_a_transaction(aventuras_world):
    w = aventuras_world
    with pytest.raises(RuntimeError):
        ledger.spend(w.pc, HeroSpend.FEAT, by=w.player, turn="t")
    assert sheet(w.pc).hero_points == 5


def test_a24_one_point_per_use_per_turn_any_number_of_uses(aventuras_world):
    w = aventuras_world
    turn = ledger.turn_of(w.pc, w.scene)
    with transaction.atomic():
        ledger.spend(w.pc, HeroSpend.FEAT, by=w.player, turn=turn)
        ledger.spend(w.pc, HeroSpend.RECOVER, by=w.player, turn=turn)
    before, moves, events = sheet(w.pc), HeroMove.objects.count(), SheetEvent.objects.count()
    with pytest.raises(ValidationError) as refused, transaction.atomic():
        ledger.spend(w.pc, HeroSpend.FEAT, by=w.player, turn=turn)
    assert refused.value.code == "same_use"
    assert "Ya has gastado un punto de Héroe en «activar una proeza» este turno" in refused.value.messages[0]
    unchanged(w.pc, before, moves, events)
    # A new post is a new turn: the same use again.
    new_turn = ledger.post_turn(post_as(w, w.pc).pk)
    with transaction.atomic():
        ledger.spend(w.pc, HeroSpend.FEAT, by=w.player, turn=new_turn)
    assert sheet(w.pc).hero_points == 2


def test_ledger_refuses_a_point_the_hero_does_not_have(aventuras_world):
    w = aventuras_world
    AventurasSheet.objects.filter(pk=w.pc.pk).update(hero_points=0)
    before, moves, events = sheet(w.pc), HeroMove.objects.count(), SheetEvent.objects.count()
    with pytest.raises(ValidationError) as refused, transaction.atomic():
        ledger.spend(w.pc, HeroSpend.RECOVER, by=w.player, turn="scene:1")
    assert refused.value.code == "no_points"
    assert refused.value.messages == ["Palomita no tiene puntos de Héroe que gastar."]
    unchanged(w.pc, before, moves, events)


def test_a28_two_xp_buy_an_instant_point_spent_at_once(aventuras_world):
    w = aventuras_world
    AventurasSheet.objects.filter(pk=w.pc.pk).update(hero_points=0, experience=3)
    with transaction.atomic():
        move = ledger.spend(w.pc, HeroSpend.FEAT, by=w.player, turn="t1", with_experience=True)
    now = sheet(w.pc)
    assert (now.hero_points, now.experience) == (0, 1)
    assert (move.delta, move.points_after, move.experience_spent) == (0, 0, 2)
    assert "Compra un punto de Héroe con 2 PX" in hero_events(w.pc)[-1].summary
    # One XP left: no instant point.
    before, moves, events = sheet(w.pc), HeroMove.objects.count(), SheetEvent.objects.count()
    with pytest.raises(ValidationError) as refused, transaction.atomic():
        ledger.spend(w.pc, HeroSpend.RECOVER, by=w.player, turn="t1", with_experience=True)
    assert refused.value.code == "no_experience" and "Palomita tiene 1" in refused.value.messages[0]
    unchanged(w.pc, before, moves, events)
    # A24 holds for bought points too.
    AventurasSheet.objects.filter(pk=w.pc.pk).update(experience=4)
    with pytest.raises(ValidationError) as refused, transaction.atomic():
        ledger.spend(w.pc, HeroSpend.FEAT, by=w.player, turn="t1", with_experience=True)
    assert refused.value.code == "same_use"


def test_a20_a_gm_character_has_no_hero_points(aventuras_world):
    w = aventuras_world
    with pytest.raises(ValidationError) as refused, transaction.atomic():
        ledger.spend(w.npc, HeroSpend.FEAT, by=w.gm, turn="t")
    assert refused.value.code == "no_hero_points"
    with pytest.raises(ValidationError), transaction.atomic():
        ledger.gain(w.npc, by=w.gm, reason=HeroGain.SACRIFICE)
    assert sheet(w.npc).hero_points is None and not HeroMove.objects.exists()


def test_ledger_a_move_the_database_refuses_leaves_the_sheet_as_it_was(aventuras_world, monkeypatch):
    """The database's A24 constraint is the last guard (another request spent
    on this use first): the sheet's points are not lost even when the caller
    catches the refusal and goes on with its transaction."""
    w = aventuras_world
    with transaction.atomic():
        ledger.spend(w.pc, HeroSpend.FEAT, by=w.player, turn="t")
    # As if the other request's move was not seen when the uses were read.
    monkeypatch.setattr(ledger, "_used", lambda character, turn: frozenset())
    with transaction.atomic():
        with pytest.raises(ValidationError) as refused:
            ledger.spend(w.pc, HeroSpend.FEAT, by=w.player, turn="t")
        assert refused.value.code == "same_use"
    assert sheet(w.pc).hero_points == 4
    assert HeroMove.objects.filter(kind="spend").count() == 1


def test_ledger_gain_and_a26_give(aventuras_world):
    w = aventuras_world
    with transaction.atomic():
        move = ledger.gain(w.pc, by=w.gm, reason=HeroGain.FACE_FLAW, why="Resolvió el acertijo")
    assert (move.kind, move.reason, move.delta, move.points_after) == ("gain", "enfrentarse_al_defecto", 1, 6)
    with transaction.atomic():
        given, received = ledger.give(w.pc, w.other_pc, by=w.player, approved_by=w.gm, why="Me salvó")
    assert (given.kind, given.delta, given.points_after, given.approved_by) == ("give", -1, 5, w.gm)
    assert (received.kind, received.delta, received.points_after) == ("receive", 1, 6)
    assert sheet(w.pc).hero_points == 5 and sheet(w.other_pc).hero_points == 6
    AventurasSheet.objects.filter(pk=w.pc.pk).update(hero_points=0)
    before, moves, events = sheet(w.other_pc), HeroMove.objects.count(), SheetEvent.objects.count()
    with pytest.raises(ValidationError) as refused, transaction.atomic():
        ledger.give(w.pc, w.other_pc, by=w.player, approved_by=w.gm)
    assert refused.value.messages == ["Palomita ya no tiene puntos de Héroe que dar."]
    unchanged(w.other_pc, before, moves, events)


# --- A23 spends that are not rolls --------------------------------------------------------


def test_a23_ignore_a_state_for_one_turn(aventuras_world):
    w = aventuras_world
    hungry, tired = state(w.pc), state(w.pc, "Cansado")
    post_as(w, w.pc)
    move = services.ignore_state(character=w.pc, actor=w.player, scene=w.scene, state_id=hungry.pk, why="¡Tengo prisa!")
    assert move.detail == "Hambriento" and move.use == HeroSpend.IGNORE_STATE
    assert services.ignored_states(w.pc, w.scene) == {hungry.pk}
    assert sheet(w.pc).hero_points == 4
    # A24 — a second state in the same turn is the same use: refused, nothing changed.
    before, moves, events = sheet(w.pc), HeroMove.objects.count(), SheetEvent.objects.count()
    with pytest.raises(ValidationError) as refused:
        services.ignore_state(character=w.pc, actor=w.player, scene=w.scene, state_id=tired.pk)
    assert "«ignorar un estado» este turno" in refused.value.messages[0]
    unchanged(w.pc, before, moves, events)
    turn = ledger.turn_of(w.pc, w.scene)
    # The next post is the next turn: the state counts again.
    post_as(w, w.pc)
    assert services.ignored_states(w.pc, w.scene) == set()
    # The caller may name the turn it asks about.
    assert services.ignored_states(w.pc, w.scene, turn=turn) == {hungry.pk}
    # Another scene is another turn.
    other_scene = make_scene(w.campaign, title="El bosque")
    assert services.ignored_states(w.pc, other_scene) == set()


def test_a23_only_a_state_of_the_heros_own_sheet(aventuras_world):
    w = aventuras_world
    theirs = state(w.other_pc)
    before, moves, events = sheet(w.pc), HeroMove.objects.count(), SheetEvent.objects.count()
    with pytest.raises(ValidationError) as refused:
        services.ignore_state(character=w.pc, actor=w.player, scene=w.scene, state_id=theirs.pk)
    assert refused.value.messages == ["Ese estado no está en la ficha de Palomita."]
    unchanged(w.pc, before, moves, events)


def test_a23_recover_up_to_two_health_levels_with_a_health_event(aventuras_world):
    w = aventuras_world
    AventurasSheet.objects.filter(pk=w.pc.pk).update(health_lost=3)
    services.recover(character=w.pc, actor=w.player, scene=w.scene, levels=2, why="Un bocata")
    assert sheet(w.pc).health_lost == 1 and sheet(w.pc).hero_points == 4
    [health] = SheetEvent.objects.filter(character=w.pc, kind=AventurasEvent.HEALTH)
    assert health.before == {"health_lost": 3} and health.after == {"health_lost": 1}
    assert health.actor == w.player and health.reason == "Un bocata"
    assert health.summary.startswith("Recupera 2 niveles de salud")
    # Never below none lost: two levels asked, one lost, one recovered (another turn).
    post_as(w, w.pc)
    move = services.recover(character=w.pc, actor=w.player, scene=w.scene, levels=2)
    assert sheet(w.pc).health_lost == 0 and move.detail == "recupera 1 nivel de salud"
    last = SheetEvent.objects.filter(character=w.pc, kind=AventurasEvent.HEALTH).order_by("-pk").first()
    assert last.summary.startswith("Recupera 1 nivel de salud con")


def test_a23_recover_refusals_change_nothing(aventuras_world):
    w = aventuras_world
    before, moves, events = sheet(w.pc), HeroMove.objects.count(), SheetEvent.objects.count()
    with pytest.raises(ValidationError) as refused:
        services.recover(character=w.pc, actor=w.player, scene=w.scene, levels=1)
    assert refused.value.messages == ["Palomita no ha perdido ningún nivel de salud: no hay nada que recuperar."]
    AventurasSheet.objects.filter(pk=w.pc.pk).update(health_lost=4)
    before = sheet(w.pc)
    with pytest.raises(ValidationError) as refused:
        services.recover(character=w.pc, actor=w.player, scene=w.scene, levels=3)
    assert refused.value.messages == ["Se recuperan uno o dos niveles de salud por punto de Héroe."]
    unchanged(w.pc, before, moves, events)


def test_a23_activate_a_feat_that_needs_a_point(aventuras_world):
    w = aventuras_world
    howl = w.pc.aventuras.feats.get(name="Aullido")
    free = w.pc.aventuras.feats.create(name="Olfato", needs_hero_point=False)
    move = services.activate_feat(character=w.pc, actor=w.player, scene=w.scene, feat_id=howl.pk)
    assert move.detail == "Aullido" and sheet(w.pc).hero_points == 4
    before, moves, events = sheet(w.pc), HeroMove.objects.count(), SheetEvent.objects.count()
    with pytest.raises(ValidationError) as refused:
        services.activate_feat(character=w.pc, actor=w.player, scene=w.scene, feat_id=free.pk)
    assert refused.value.messages == ["La proeza «Olfato» no necesita un punto de Héroe para funcionar."]
    unchanged(w.pc, before, moves, events)


def test_a28_an_off_roll_spend_paid_with_two_xp(aventuras_world):
    w = aventuras_world
    AventurasSheet.objects.filter(pk=w.pc.pk).update(hero_points=0, health_lost=2)
    services.recover(character=w.pc, actor=w.player, scene=w.scene, levels=2, with_experience=True)
    now = sheet(w.pc)
    assert (now.hero_points, now.experience, now.health_lost) == (0, 2, 0)


def test_a23_spending_a_point_the_hero_does_not_have_is_refused(aventuras_world):
    w = aventuras_world
    AventurasSheet.objects.filter(pk=w.pc.pk).update(hero_points=0)
    howl = w.pc.aventuras.feats.get(name="Aullido")
    before, moves, events = sheet(w.pc), HeroMove.objects.count(), SheetEvent.objects.count()
    with pytest.raises(ValidationError) as refused:
        services.activate_feat(character=w.pc, actor=w.player, scene=w.scene, feat_id=howl.pk)
    assert refused.value.messages == ["Palomita no tiene puntos de Héroe que gastar."]
    unchanged(w.pc, before, moves, events)


def test_spends_only_by_whoever_plays_the_hero_in_an_open_scene(aventuras_world):
    w = aventuras_world
    howl = w.pc.aventuras.feats.get(name="Aullido")
    for user in (w.other, w.reader, w.outsider):
        with pytest.raises(PermissionDenied):
            services.activate_feat(character=w.pc, actor=user, scene=w.scene, feat_id=howl.pk)
    Scene.objects.filter(pk=w.scene.pk).update(status=Scene.Status.LOCKED)
    w.scene.refresh_from_db()
    with pytest.raises(ValidationError) as refused:
        services.activate_feat(character=w.pc, actor=w.player, scene=w.scene, feat_id=howl.pk)
    assert refused.value.messages == ["La escena «La puerta del acertijo» está cerrada."]
    assert sheet(w.pc).hero_points == 5 and not HeroMove.objects.exists()
    # The GM plays everyone.
    open_scene = make_scene(w.campaign, title="El bosque")
    services.activate_feat(character=w.pc, actor=w.gm, scene=open_scene, feat_id=howl.pk, why="Asusta al troll")
    assert HeroMove.objects.get().by == w.gm


# --- A25 flaw and sacrifice ---------------------------------------------------------------


def test_a25_the_gm_grants_a_point_with_why(aventuras_world):
    w = aventuras_world
    move = services.grant(character=w.pc, actor=w.gm, kind="flaw", why="Se paró a resolver el acertijo")
    assert (move.kind, move.reason, move.delta, move.approved_by, move.why) == (
        "gain",
        HeroGain.FACE_FLAW,
        1,
        w.gm,
        "Se paró a resolver el acertijo",
    )
    assert sheet(w.pc).hero_points == 6
    with pytest.raises(PermissionDenied):
        services.grant(character=w.pc, actor=w.player, kind="sacrifice", why="yo lo valgo")
    with pytest.raises(ValidationError) as refused:
        services.grant(character=w.pc, actor=w.gm, kind="sacrifice", why="  ")
    assert refused.value.messages == ["Escribe por qué gana el punto de Héroe."]
    assert sheet(w.pc).hero_points == 6


def test_a25_a_player_asks_and_the_gm_decides(aventuras_world):
    w = aventuras_world
    asked = services.ask(character=w.pc, actor=w.player, kind="sacrifice", why="Dejé mi varita para salvarles")
    assert sheet(w.pc).hero_points == 5 and asked.status == "pending"
    with pytest.raises(ValidationError):
        services.ask(character=w.pc, actor=w.player, kind="sacrifice", why="otra vez")
    with pytest.raises(PermissionDenied):
        services.ask(character=w.pc, actor=w.other, kind="flaw", why="por ella")
    with pytest.raises(PermissionDenied):
        services.decide(request_id=asked.pk, campaign=w.campaign, actor=w.player, accept=True)
    decided = services.decide(request_id=asked.pk, campaign=w.campaign, actor=w.gm, accept=True)
    assert decided.status == "accepted" and decided.decided_by == w.gm
    move = HeroMove.objects.get()
    assert (move.reason, move.by, move.approved_by, move.why) == (
        HeroGain.SACRIFICE,
        w.player,
        w.gm,
        "Dejé mi varita para salvarles",
    )
    assert sheet(w.pc).hero_points == 6
    with pytest.raises(ValidationError) as refused:
        services.decide(request_id=asked.pk, campaign=w.campaign, actor=w.gm, accept=True)
    assert refused.value.messages == ["Esa petición ya está aceptada."]
    assert sheet(w.pc).hero_points == 6


def test_a25_a_refused_or_withdrawn_request_moves_nothing(aventuras_world):
    w = aventuras_world
    first = services.ask(character=w.pc, actor=w.player, kind="flaw", why="Me pudo el acertijo")
    services.decide(request_id=first.pk, campaign=w.campaign, actor=w.gm, accept=False)
    second = services.ask(character=w.pc, actor=w.player, kind="flaw", why="Otra vez")
    with pytest.raises(PermissionDenied):
        services.withdraw(request_id=second.pk, campaign=w.campaign, actor=w.gm)
    assert services.withdraw(request_id=second.pk, campaign=w.campaign, actor=w.player).status == "withdrawn"
    assert sheet(w.pc).hero_points == 5 and not HeroMove.objects.exists()


# --- A26 a point from another hero --------------------------------------------------------


def test_a26_a_gift_moves_only_when_the_gm_approves(aventuras_world):
    w = aventuras_world
    gift = services.offer_gift(giver=w.pc, receiver=w.other_pc, actor=w.player, why="Tarta me sacó del pozo")
    assert (sheet(w.pc).hero_points, sheet(w.other_pc).hero_points) == (5, 5)
    for user in (w.player, w.other):
        with pytest.raises(PermissionDenied):
            services.decide(request_id=gift.pk, campaign=w.campaign, actor=user, accept=True)
    services.decide(request_id=gift.pk, campaign=w.campaign, actor=w.gm, accept=True)
    assert (sheet(w.pc).hero_points, sheet(w.other_pc).hero_points) == (4, 6)
    give, receive = HeroMove.objects.order_by("id")
    assert (give.character, give.kind, give.delta, give.by, give.approved_by) == (w.pc, "give", -1, w.player, w.gm)
    assert (receive.character, receive.kind, receive.delta) == (w.other_pc, "receive", 1)


def test_a26_only_your_own_points_and_never_to_yourself(aventuras_world):
    w = aventuras_world
    with pytest.raises(PermissionDenied):
        services.offer_gift(giver=w.pc, receiver=w.other_pc, actor=w.other, why="me lo quedo")
    with pytest.raises(ValidationError) as refused:
        services.offer_gift(giver=w.pc, receiver=w.pc, actor=w.player, why="para mí")
    assert refused.value.messages == ["Un héroe no puede darse un punto de Héroe a sí mismo."]
    with pytest.raises(ValidationError):
        services.offer_gift(giver=w.pc, receiver=w.npc, actor=w.player, why="al profe")
    AventurasSheet.objects.filter(pk=w.pc.pk).update(hero_points=0)
    w.pc.aventuras.refresh_from_db()
    with pytest.raises(ValidationError) as refused:
        services.offer_gift(giver=w.pc, receiver=w.other_pc, actor=w.player, why="gracias")
    assert refused.value.messages == ["Palomita no tiene puntos de Héroe que dar."]
    assert not HeroRequest.objects.exists()


def test_a26_approval_refused_if_the_giver_spent_the_point_meanwhile(aventuras_world):
    w = aventuras_world
    gift = services.offer_gift(giver=w.pc, receiver=w.other_pc, actor=w.player, why="Me ayudó")
    AventurasSheet.objects.filter(pk=w.pc.pk).update(hero_points=0)
    moves, events = HeroMove.objects.count(), SheetEvent.objects.count()
    with pytest.raises(ValidationError) as refused:
        services.decide(request_id=gift.pk, campaign=w.campaign, actor=w.gm, accept=True)
    assert refused.value.messages == ["Palomita ya no tiene puntos de Héroe que dar."]
    gift.refresh_from_db()
    assert gift.status == "pending" and gift.decided_by is None
    assert (sheet(w.pc).hero_points, sheet(w.other_pc).hero_points) == (0, 5)
    assert (HeroMove.objects.count(), SheetEvent.objects.count()) == (moves, events)


# --- A27 a state por el morro -------------------------------------------------------------


def test_a27_the_player_proposes_the_gm_accepts(aventuras_world):
    w = aventuras_world
    proposal = services.propose_state(
        character=w.pc, actor=w.player, state_name="Hambriento", why="No ha desayunado", scene=w.scene
    )
    # The side that proposed does not accept its own proposal.
    with pytest.raises(PermissionDenied):
        services.decide(request_id=proposal.pk, campaign=w.campaign, actor=w.player, accept=True)
    services.decide(request_id=proposal.pk, campaign=w.campaign, actor=w.gm, accept=True)
    hungry = AventurasState.objects.get(sheet_id=w.pc.pk)
    assert (hungry.name, hungry.for_free, hungry.scene) == ("Hambriento", True, w.scene)
    move = HeroMove.objects.get()
    assert (move.reason, move.delta, move.approved_by) == (HeroGain.STATE_FOR_FREE, 1, w.gm)
    assert sheet(w.pc).hero_points == 6
    assert SheetEvent.objects.filter(character=w.pc, kind=AventurasEvent.STATE).count() == 1


def test_a27_the_gm_proposes_the_player_accepts_or_refuses(aventuras_world):
    w = aventuras_world
    proposal = services.propose_state(
        character=w.pc, actor=w.gm, state_name="Cansado", why="Toda la noche jugando con BMO", scene=w.scene
    )
    for user in (w.gm, w.other):
        with pytest.raises(PermissionDenied):
            services.decide(request_id=proposal.pk, campaign=w.campaign, actor=user, accept=True)
    services.decide(request_id=proposal.pk, campaign=w.campaign, actor=w.player, accept=False)
    assert not AventurasState.objects.exists() and sheet(w.pc).hero_points == 5
    again = services.propose_state(character=w.pc, actor=w.gm, state_name="Cansado", why="Sigue", scene=w.scene)
    services.decide(request_id=again.pk, campaign=w.campaign, actor=w.player, accept=True)
    assert AventurasState.objects.get().for_free and sheet(w.pc).hero_points == 6
    # Another player cannot propose a state for Palomita.
    with pytest.raises(PermissionDenied):
        services.propose_state(character=w.pc, actor=w.other, state_name="Triste", why="porque sí", scene=w.scene)


def test_a27_a_new_scene_ends_the_states_por_el_morro_of_the_others(aventuras_world):
    w = aventuras_world
    free = state(w.pc, "Hambriento", for_free=True, scene=w.scene)
    earned = state(w.pc, "Asustado")  # from an action: it stays
    new_scene = make_scene(w.campaign, title="El castillo de caramelo")
    here = state(w.other_pc, "Pegajoso", for_free=True, scene=new_scene)
    services.scene_started(new_scene, actor=w.gm)
    assert set(AventurasState.objects.values_list("pk", flat=True)) == {earned.pk, here.pk}
    [ended] = SheetEvent.objects.filter(kind=AventurasEvent.STATE)
    assert ended.character == w.pc and "«Hambriento» termina" in ended.summary and ended.actor == w.gm
    assert ended.before == {"state": free.pk, "for_free": True}


def test_a27_an_off_game_scene_ends_no_state(aventuras_world):
    # S004: «Un estado por el morro dura una escena» — an off-game scene is no scene of play.
    w = aventuras_world
    free = state(w.pc, "Hambriento", for_free=True, scene=w.scene)
    offgame = Scene.objects.create(campaign=w.campaign, title="Charla", is_offgame=True)
    services.scene_started(offgame, actor=w.gm)
    assert AventurasState.objects.filter(pk=free.pk).exists()
    assert not SheetEvent.objects.filter(kind=AventurasEvent.STATE).exists()


def test_a27_a_parallel_scene_for_other_players_leaves_the_state(aventuras_world):
    w = aventuras_world
    palomita = state(w.pc, "Hambriento", for_free=True, scene=w.scene)
    tarta = state(w.other_pc, "Pegajoso", for_free=True, scene=w.scene)
    parallel = make_scene(w.campaign, title="La cueva de Tarta", everyone=False, participants=[w.other])
    services.scene_started(parallel, actor=w.gm)
    # Tarta Dulce's player moved on to the new scene; Palomita's stays in hers.
    assert list(AventurasState.objects.values_list("pk", flat=True)) == [palomita.pk]
    [ended] = SheetEvent.objects.filter(kind=AventurasEvent.STATE)
    assert ended.character == w.other_pc and ended.before == {"state": tarta.pk, "for_free": True}


def test_a27_a_state_of_an_archived_scene_ends_at_the_next_scene(aventuras_world):
    w = aventuras_world
    palomita = state(w.pc, "Hambriento", for_free=True, scene=w.scene)
    Scene.objects.filter(pk=w.scene.pk).update(status=Scene.Status.ARCHIVED)
    parallel = make_scene(w.campaign, title="La cueva de Tarta", everyone=False, participants=[w.other])
    services.scene_started(parallel, actor=w.gm)
    assert not AventurasState.objects.filter(pk=palomita.pk).exists()
    [ended] = SheetEvent.objects.filter(kind=AventurasEvent.STATE)
    assert ended.character == w.pc


# --- A21 a new adventure -----------------------------------------------------------------


def test_a21_new_adventure_every_hero_back_to_exactly_five(aventuras_world):
    w = aventuras_world
    AventurasSheet.objects.filter(pk=w.pc.pk).update(hero_points=2)
    AventurasSheet.objects.filter(pk=w.other_pc.pk).update(hero_points=7)
    draft = aventuras_character(w.campaign, w.other, "Borrador", status="draft", hero_points=1)
    with pytest.raises(PermissionDenied):
        services.new_adventure(campaign=w.campaign, actor=w.player)
    moves = services.new_adventure(campaign=w.campaign, actor=w.gm)
    assert {m.character_id: m.delta for m in moves} == {w.pc.pk: 3, w.other_pc.pk: -2, draft.pk: 4}
    assert all(m.kind == "adventure" and m.points_after == 5 and m.by == w.gm for m in moves)
    assert [sheet(c).hero_points for c in (w.pc, w.other_pc, draft)] == [5, 5, 5]
    assert sheet(w.npc).hero_points is None
    assert SheetEvent.objects.filter(kind=AventurasEvent.HERO).count() == 3
