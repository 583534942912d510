"""HITOS drama point economy and Degeneración."""

import pytest

from rules.hitos_drama import (
    BANK,
    DEGENERACION_LEVELS,
    GM_POOL,
    DegeneracionTrigger,
    Side,
    Transfer,
    add_degeneracion,
    apply_transfers,
    arcane_degeneracion_instead,
    arcane_knowledge_triggers,
    complication_compensation,
    degeneracion_gain,
    degeneracion_level,
    narrative_accepted,
    narrative_activation,
    narrative_refused,
    negative_accepted,
    negative_activation,
    negative_cancelled,
    positive_activation,
    session_refresh,
)
from rules.hitos_options import HitosOptions

ANA = Side("ana")
BRUNO = Side("bruno")
CULTIST = Side("sectario", npc=True)
S001 = HitosOptions(npc_drama="affected_player")


def run(balances, *effects):
    for effect in effects:
        balances = apply_transfers(balances, effect.transfers)
    return balances


# H13 — «que el jugador que activa el aspecto gaste un punto dramático (o que agote el aspecto)»
def test_h13_h14_positive_activation_costs_one_point_or_exhausts():
    assert run({"ana": 3}, positive_activation(ANA)) == {"ana": 2}
    exhaust = positive_activation(ANA, exhaust=True)
    assert (exhaust.transfers, exhaust.exhausts_aspect) == ((), True)


# H27 — «Un jugador solo puede agotar los aspectos de su personaje»
def test_h27_only_own_aspects_can_be_exhausted():
    with pytest.raises(ValueError, match="solo puede agotar los aspectos de su propio personaje"):
        positive_activation(ANA, exhaust=True, own_aspect=False)


def test_activating_without_points_is_a_clear_error_and_changes_nothing():
    balances = {"ana": 0}
    with pytest.raises(ValueError, match="«ana» no tiene puntos dramáticos suficientes"):
        run(balances, positive_activation(ANA))
    assert balances == {"ana": 0}


# H22 — «el personaje que activó el aspecto recuperará el punto que había gastado y, además, recibe el punto dramático gastado por el personaje que canceló la activación»
def test_h22_cancel_nets_activator_plus_one_target_minus_one():
    start = {"ana": 2, "bruno": 2}
    declared = run(start, negative_activation(ANA, BRUNO))
    assert declared == {"ana": 1, "bruno": 2}
    assert run(declared, negative_cancelled(ANA, BRUNO)) == {"ana": 3, "bruno": 1}


# H22 — S001 «aceptar la repetición y ganar un dado de drama o cancelar la repetición gastando un dado de drama propio»
def test_h22_accept_nets_activator_minus_one_target_plus_one():
    assert run({"ana": 2, "bruno": 2}, negative_activation(ANA, BRUNO), negative_accepted(ANA, BRUNO)) == {
        "ana": 1,
        "bruno": 3,
    }


# H24 — «Cualquier punto que ganen lo gana el director de juego, y cualquier punto que gasten proviene del director de juego»
def test_h24_k6_npc_points_use_the_gm_pool():
    start = {GM_POOL: 2, "ana": 1}
    declared = run(start, negative_activation(CULTIST, ANA))
    assert declared == {GM_POOL: 1, "ana": 1}
    assert run(declared, negative_accepted(CULTIST, ANA)) == {GM_POOL: 1, "ana": 2}
    assert run(declared, negative_cancelled(CULTIST, ANA)) == {GM_POOL: 3, "ana": 0}
    # The player turns the tables on an NPC: the GM's pool gains or pays.
    assert run({GM_POOL: 1, "ana": 1}, negative_activation(ANA, CULTIST), negative_accepted(ANA, CULTIST)) == {
        GM_POOL: 2,
        "ana": 0,
    }
    with pytest.raises(ValueError, match="El DJ no tiene puntos dramáticos suficientes"):
        run({GM_POOL: 0}, positive_activation(CULTIST))


# H25 — «tienen la opción de aceptarlo ganado un dado dramático o rechazarlo gastando uno de sus propios dados dramáticos»
# K6 option — S001 «el director de juego entrega un dado dramático al jugar más directamente afectado por la acción del PNJ cuando activa un aspecto»
def test_k6_s001_option_gm_gives_the_affected_player_a_point():
    assert run({"ana": 0}, positive_activation(CULTIST, affected=ANA, options=S001)) == {"ana": 1}
    declared = run({"ana": 1}, negative_activation(CULTIST, ANA, S001))
    assert declared == {"ana": 1}
    assert run(declared, negative_accepted(CULTIST, ANA, S001)) == {"ana": 2}
    assert run(declared, negative_cancelled(CULTIST, ANA, S001)) == {"ana": 0}


# H23 — «el punto dramático que gastas lo gana el personaje afectado, aunque este puede rechazar tu elemento narrativo pagándote un punto dramático»
def test_h23_narrative_element():
    spent = run({"ana": 1, "bruno": 1}, narrative_activation(ANA))
    assert spent == {"ana": 0, "bruno": 1}
    assert run(spent, narrative_accepted(BRUNO)) == {"ana": 0, "bruno": 2}
    # K15 — the literal reading: a refusal gives the activator their point back, nothing more.
    assert run(spent, narrative_refused(ANA, BRUNO)) == {"ana": 1, "bruno": 1}


# K15 — a refused element costs the affected nothing (net 0 for both), even with no points, and an NPC's point returns to the GM's pool
def test_k15_a_refused_narrative_element_is_the_literal_reading():
    spent = run({"ana": 0, GM_POOL: 3}, narrative_activation(CULTIST))
    assert spent == {"ana": 0, GM_POOL: 2}
    assert run(spent, narrative_refused(CULTIST, ANA)) == {"ana": 0, GM_POOL: 3}
    # Not settled like a cancelled negative activation (H22: −1 for the target, +2 for the activator).
    # (which would need a point from Ana, who has none).
    assert narrative_refused(CULTIST, ANA).transfers != negative_cancelled(CULTIST, ANA).transfers


# K17 — «debe agotarse dicho aspecto»: a player may pay a narrative element by exhausting their own aspect
# H27 — «Un jugador solo puede agotar los aspectos de su personaje»
def test_k17_a_narrative_element_may_be_paid_by_exhausting_an_own_aspect():
    exhaust = narrative_activation(ANA, exhaust=True)
    assert (exhaust.transfers, exhaust.exhausts_aspect) == ((), True)
    assert run({"ana": 0, "bruno": 1}, exhaust) == {"ana": 0, "bruno": 1}
    # With a point, nothing is exhausted.
    assert narrative_activation(ANA).exhausts_aspect is False


# K17 / H27 — never another character's aspect, and NPCs or the GM's pool exhaust nothing
def test_k17_only_a_player_exhausts_and_only_their_own_aspect():
    for activator, own in ((ANA, False), (CULTIST, True), (Side(GM_POOL), True)):
        with pytest.raises(ValueError, match="solo puede agotar los aspectos de su propio personaje"):
            narrative_activation(activator, exhaust=True, own_aspect=own)
    # The same rule holds for the GM's pool on a positive activation.
    with pytest.raises(ValueError, match="solo puede agotar"):
        positive_activation(Side(GM_POOL), exhaust=True)


# K17 + K15 — paid by exhaustion, the net is still 0 for both: accepting gains nothing (no point was spent),
# refusing costs the affected nothing and gives the activator the aspect back; the element does not happen.
def test_k17_k15_an_exhausted_element_moves_no_point_when_accepted_or_refused():
    start = {"ana": 2, "bruno": 0}
    exhausted = run(start, narrative_activation(ANA, exhaust=True))
    accepted = narrative_accepted(BRUNO, exhausted=True)
    assert (accepted.transfers, accepted.restores_aspect) == ((), False)
    assert run(exhausted, accepted) == start
    refused = narrative_refused(ANA, BRUNO, exhausted=True)
    assert (refused.transfers, refused.restores_aspect) == ((), True)
    assert run(exhausted, refused) == start
    # Paid with a point, a refusal restores no aspect.
    assert narrative_refused(ANA, BRUNO).restores_aspect is False


# H26 — «Al comienzo de cada sesión de juego, un personaje tendrá tantos puntos dramáticos como su valor de Drama»
# H26 — «se merece una compensación en forma de un punto dramático»
def test_h26_session_refresh_and_complications():
    assert session_refresh(5) == 5
    assert run({"ana": 0}, complication_compensation(ANA)) == {"ana": 1}
    with pytest.raises(ValueError):
        session_refresh(-1)


# H92 — «el jugador puede elegir que su personaje gane un punto de Degeneración en lugar de gastar un punto dramático»
def test_h92_arcane_activation_degeneracion_instead_of_a_point():
    chosen = arcane_degeneracion_instead(ANA)
    assert (chosen.transfers, chosen.degeneracion) == ((), 1)
    # H92 — «El director de juego puede forzar esta elección, pero entonces el jugador recibe un punto dramático adicional»
    forced = positive_activation(ANA, arcane=True, gm_forces_degeneracion=True)
    assert forced.degeneracion == 1
    assert run({"ana": 0}, forced) == {"ana": 1}
    with pytest.raises(ValueError, match="habilidad arcana"):
        positive_activation(ANA, gm_forces_degeneracion=True)


def test_transfers_must_be_positive():
    with pytest.raises(ValueError, match="debe ser positiva"):
        apply_transfers({"ana": 1}, [Transfer("ana", BANK, 0)])


# H90 — «hay diversas formas de que esta puntuación aumente durante el juego, pero ninguna de que disminuya»
# H94 — «Es ya una criatura de los Mitos y como tal no puede interpretarse más por su jugador»
def test_h90_h94_degeneracion_only_rises_and_ten_is_an_npc():
    assert add_degeneracion(3, 1).after == 4
    change = add_degeneracion(9, 2)
    assert (change.after, change.becomes_npc) == (10, True)
    with pytest.raises(ValueError, match="nunca disminuye"):
        add_degeneracion(3, -1)
    with pytest.raises(ValueError, match="entre 0 y 10"):
        add_degeneracion(11, 0)


# H91 — «alcance un múltiplo de cinco, el personaje gana un punto de Degeneración»
def test_h91_reaching_multiples_of_five():
    assert arcane_knowledge_triggers(3, 5) == 1
    assert arcane_knowledge_triggers(5, 9) == 0
    assert arcane_knowledge_triggers(4, 11) == 2
    assert arcane_knowledge_triggers(6, 6) == 0


# H93 — «cuando el personaje pierde todos sus puntos de Resistencia como consecuencia de un daño sobrenatural directo»
# H59 — «Si un personaje llegó al estado moribundo debido a causas sobrenaturales»
# K12 — +1 per triggering event, not per clause.
def test_h93_k12_one_point_per_event():
    horror_that_drives_mad = {DegeneracionTrigger.MIND_LOST, DegeneracionTrigger.ENLOQUECIDO}
    spell_that_kills = {DegeneracionTrigger.BODY_LOST, DegeneracionTrigger.MORIBUNDO}
    assert degeneracion_gain([horror_that_drives_mad]) == 1
    assert degeneracion_gain([horror_that_drives_mad, spell_that_kills, ["activacion_arcana"]]) == 3
    assert degeneracion_gain([set()]) == 0
    with pytest.raises(ValueError):
        degeneracion_gain([["mal_de_ojo"]])


# S001 «Interpretar los puntos de degeneración» — «0: El personaje es completamente humano.»
# H94 — «Es ya una criatura de los Mitos y como tal no puede interpretarse más por su jugador»
def test_degeneracion_levels_are_the_eleven_levels_of_s001_by_stable_id():
    assert len(DEGENERACION_LEVELS) == len(set(DEGENERACION_LEVELS)) == 11
    assert degeneracion_level(0) == "human"
    assert degeneracion_level(1) == "minor_change"
    assert degeneracion_level(10) == "mythos_creature"
    # Ids, not words: nothing in the rules is Spanish or English prose.
    assert all(level.isascii() and " " not in level for level in DEGENERACION_LEVELS)
    for wrong in (-1, 11, True, 2.0):
        with pytest.raises(ValueError, match="La Degeneración debe estar entre 0 y 10"):
            degeneracion_level(wrong)


def test_a_short_account_is_named_in_the_error():
    from rules.hitos_drama import NotEnoughPoints

    with pytest.raises(NotEnoughPoints) as caught:
        apply_transfers({"ana": 2, GM_POOL: 0}, [Transfer("ana", BANK), Transfer(GM_POOL, BANK)])
    assert (caught.value.account, caught.value.have) == (GM_POOL, 0)
    assert isinstance(caught.value, ValueError)
