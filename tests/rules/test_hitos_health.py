"""HITOS health and sanity: states, massive damage, dying, healing, horror."""

import pytest

from rules.hitos import Reading, check, read_roll
from rules.hitos_health import (
    DYING_DIFFICULTY,
    HORROR_LEVELS,
    MASS_DAMAGE_DIFFICULTY,
    MENTAL_STABILISE_DIFFICULTY,
    HealthState,
    MentalState,
    Painkiller,
    TurnOutcome,
    aguante_test,
    dying_turn,
    health_state,
    horror,
    horror_test_due,
    madness_turn,
    massive_test_due,
    mental_state,
    recover,
    recovery_rule,
    shift_horror,
    stabilise,
    stabilise_mind,
    state_penalty,
    take_damage,
    take_imbalance,
    temporary_secuela_change,
)
from rules.hitos_options import HitosOptions
from rules.meters import Meter


def _check(dice, modifier, difficulty, reading=Reading.NORMAL):
    return check(read_roll(dice, reading), modifier, difficulty)


# H53 — «El personaje ha perdido menos puntos de Resistencia que su puntuación de Aguante»
# H54 — «es mayor o igual que su Aguante, pero menos que el doble»
# H55 — «pero aún le quedan puntos de Resistencia»
@pytest.mark.parametrize(
    ("lost", "state"),
    [
        (0, HealthState.SANO),
        (4, HealthState.SANO),
        (5, HealthState.HERIDO),
        (9, HealthState.HERIDO),
        (10, HealthState.INCAPACITADO),
        (14, HealthState.INCAPACITADO),
        (15, HealthState.MORIBUNDO),
    ],
)
def test_h53_h56_health_states_by_points_lost(lost, state):
    assert health_state(Meter(15, lost, 0), 5) is state
    assert health_state(Meter(15, 0, lost), 5) is state


# H83 — «El personaje ha perdido más puntos de Estabilidad Mental que su Entereza, pero menos que el doble»
# K11 — the default reads lost ≥ Entereza; the literal option leaves lost == E Cuerdo.
@pytest.mark.parametrize(
    ("lost", "default", "literal"),
    [
        (5, MentalState.CUERDO, MentalState.CUERDO),
        (6, MentalState.ALTERADO, MentalState.CUERDO),
        (7, MentalState.ALTERADO, MentalState.ALTERADO),
        (12, MentalState.TRASTORNADO, MentalState.TRASTORNADO),
        (18, MentalState.ENLOQUECIDO, MentalState.ENLOQUECIDO),
    ],
)
def test_h83_k11_mental_states(lost, default, literal):
    meter = Meter(18, lost, 0)
    assert mental_state(meter, 6) is default
    assert mental_state(meter, 6, HitosOptions(alterado_boundary="more_than")) is literal


# H54 — «Todas las acciones del personaje así como su Defensa tienen una penalización de –2»
# H55 — «El personaje sufre un –5 en todas sus acciones así como en su Defensa»
# H66 — «Las primeras anulan 2 puntos de la penalización del personaje»; «Las segundas anulan 5 puntos de la penalización»
def test_h54_h55_h66_penalties_and_painkillers():
    assert state_penalty(HealthState.SANO, MentalState.CUERDO) == 0
    assert state_penalty(HealthState.HERIDO) == -2
    assert state_penalty(HealthState.INCAPACITADO) == -5
    assert state_penalty(HealthState.HERIDO, MentalState.ALTERADO) == -4
    assert state_penalty(HealthState.INCAPACITADO, painkiller=Painkiller.SUAVE) == -3
    assert state_penalty(HealthState.HERIDO, painkiller=Painkiller.FUERTE) == 0
    assert state_penalty(mental=MentalState.TRASTORNADO, painkiller=Painkiller.FUERTE) == 0


# H52 — «Si es igual o superior al mismo, el personaje sufre daño masivo y debe hacer una tirada de Aguante a dificultad 12»
def test_h52_massive_damage_test_is_due_at_aguante_and_passing_marks_the_damage():
    assert MASS_DAMAGE_DIFFICULTY == 12
    assert massive_test_due(4, 5) is False
    assert massive_test_due(5, 5) is True
    with pytest.raises(ValueError, match="hace falta la tirada a dificultad 12"):
        take_damage(Meter(15), 7, aguante=5)
    passed = aguante_test(read_roll([4, 7, 9]), 5, MASS_DAMAGE_DIFFICULTY)
    outcome = take_damage(Meter(15), 7, aguante=5, mass_test=passed)
    assert (outcome.test_due, outcome.test_passed, outcome.after) == (True, True, Meter(15, 7, 0))
    small = take_damage(Meter(15), 3, aguante=5)
    assert (small.test_due, small.test_passed, small.after) == (False, None, Meter(15, 3, 0))


# H52 — «Si falla, pierde todos los puntos de Resistencia que le quedasen»
def test_h52_failed_massive_test_slashes_everything_left():
    failed = aguante_test(read_roll([2, 3, 9]), 5, MASS_DAMAGE_DIFFICULTY)
    outcome = take_damage(Meter(15, 2, 1), 6, aguante=5, mass_test=failed)
    assert outcome.test_passed is False
    assert outcome.after == Meter(15, 14, 1)
    assert health_state(outcome.after, 5) is HealthState.MORIBUNDO
    # Q5 — damage beyond the empty boxes still consolidates.
    overflow = take_damage(Meter(15, 10, 0), 8, aguante=5, mass_test=failed)
    assert overflow.after == Meter(15, 12, 3)


# H77 — «Si falla, sufrirá un trauma y perderá de inmediato todos sus puntos restantes de Estabilidad Mental»
def test_h77_trauma_test():
    failed = aguante_test(read_roll([1, 4, 6]), 6, 12)
    outcome = take_imbalance(Meter(18, 3, 0), 6, entereza=6, trauma_test=failed)
    assert outcome.after == Meter(18, 18, 0)
    assert mental_state(outcome.after, 6) is MentalState.ENLOQUECIDO
    passed = aguante_test(read_roll([6, 6, 2]), 6, 12)
    assert take_imbalance(Meter(18, 3, 0), 6, entereza=6, trauma_test=passed).after == Meter(18, 9, 0)


# H56 — «Si falla, el personaje muere inmediatamente. Si el resultado es un crítico, el personaje se estabiliza»
def test_h56_dying_turn():
    assert DYING_DIFFICULTY == 15
    assert dying_turn(_check([2, 3, 4], 5, 15)) is TurnOutcome.DIES
    assert dying_turn(_check([2, 9, 9], 6, 15)) is TurnOutcome.CONTINUES
    assert dying_turn(_check([10, 10, 1], 0, 15)) is TurnOutcome.STABILISED


# H84 — «caerá inconsciente y pasará al estado trastornado»
def test_h84_madness_turn():
    assert madness_turn(_check([10, 10, 10], 0, 15)) is TurnOutcome.STABILISED
    assert madness_turn(_check([1, 1, 9], 20, 15)) is TurnOutcome.DIES


# H57 — «prueba de Intelecto más una habilidad de atención médica (como Oficio «Médico») a dificultad 12»
# H58 — «el personaje borra tantos puntos de daño como el resultado m de la tirada usada para estabilizarlo»
def test_h57_h58_stabilising_erases_m_slashes_and_counts_as_incapacitado():
    outcome = stabilise(Meter(15, 9, 6), _check([4, 7, 8], 6, 12))
    assert outcome.success is True
    assert (outcome.recovered, outcome.after, outcome.state) == (4, Meter(15, 5, 6), "incapacitado")
    assert outcome.permanent_secuela is True  # K8 default: always
    few = stabilise(Meter(15, 2, 13), _check([6, 7, 8], 6, 12))
    assert (few.recovered, few.after) == (2, Meter(15, 0, 13))


# H58 — «el personaje solo puede recuperar un punto al estabilizarse y»
def test_h58_all_consolidated_recovers_exactly_one_point():
    outcome = stabilise(Meter(15, 0, 15), _check([5, 7, 8], 6, 12))
    assert (outcome.recovered, outcome.after) == (1, Meter(15, 0, 14))


# K3 — S000 «u otra habilidad similar apropiadas, a dificultad 15»; K8 — S001 «llegado al estado moribundo con daño consolidado»
def test_k3_k8_stabilise_options():
    options = HitosOptions(stabilise_difficulty=15, permanent_secuela="if_consolidated")
    with pytest.raises(ValueError, match="dificultad 15, no 12"):
        stabilise(Meter(15, 15, 0), _check([5, 7, 8], 6, 12), options)
    clean = stabilise(Meter(15, 15, 0), _check([5, 7, 8], 8, 15), options)
    assert clean.permanent_secuela is False
    failed = stabilise(Meter(15, 15, 0), _check([2, 3, 8], 8, 15), options)
    assert (failed.success, failed.after, failed.state) == (False, Meter(15, 15, 0), "moribundo")


# H85 — «recupera tantos puntos de Estabilidad Mental como el resultado del dado m»
def test_h85_mental_stabilisation():
    assert MENTAL_STABILISE_DIFFICULTY == {"entereza": 15, "cercano": 12, "terapia": 15}
    outcome = stabilise_mind(Meter(18, 10, 8), _check([3, 6, 9], 7, 12))
    assert (outcome.after, outcome.state, outcome.permanent_secuela) == (Meter(18, 7, 8), "trastornado", True)
    # H85 — «recuperará únicamente un punto de estabilidad»
    assert stabilise_mind(Meter(18, 0, 18), _check([3, 6, 9], 7, 12)).after == Meter(18, 0, 17)


# H67 — «recupera todos los puntos de Resistencia perdidos tras ocho horas de sueño reparador»
def test_h67_sano_heals_everything_after_sleep():
    outcome = recover(Meter(15, 2, 2), HealthState.SANO)
    assert (outcome.after, outcome.recovered) == (Meter(15), 4)


# H68 — «Si tiene éxito recupera tantos puntos de Resistencia como el valor del dado central»
def test_h68_herido_weekly_healing():
    rule = recovery_rule(HealthState.HERIDO)
    assert (rule.difficulty, rule.success, rule.better, rule.worse) == (10, "C", "M", "m")
    meter = Meter(15, 4, 3)  # Herido with Aguante 5
    assert recover(meter, HealthState.HERIDO, _check([2, 4, 7], 6, 10)).after == Meter(15, 3, 0)
    assert recover(meter, HealthState.HERIDO, _check([10, 2, 10], 5, 10)).recovered == 7  # critical → M
    assert recover(meter, HealthState.HERIDO, _check([2, 2, 3], 5, 10)).after == meter  # failure


# H68 / K9 — S001 «Con una pifia sufriría un nuevo daño consolidado igual al resultado del dado M»
def test_h68_k9_fumble_adds_m_big_consolidated_damage():
    outcome = recover(Meter(15, 4, 3), HealthState.HERIDO, _check([1, 1, 6], 5, 10))
    assert (outcome.lost, outcome.after) == (6, Meter(15, 4, 9))
    slashes = HitosOptions(healing_fumble_marks="slashes")
    assert recover(Meter(15, 4, 3), HealthState.HERIDO, _check([1, 1, 6], 5, 10), options=slashes).after == Meter(
        15, 10, 3
    )


# H69 — «Si tiene éxito, recupera una cantidad de puntos de Resistencia igual al resultado de su dado menor»
def test_h69_incapacitado_weekly_healing():
    meter = Meter(15, 2, 10)
    assert recover(meter, HealthState.INCAPACITADO, _check([3, 6, 8], 9, 15)).recovered == 3
    with pytest.raises(ValueError, match="dificultad 15, no 10"):
        recover(meter, HealthState.INCAPACITADO, _check([3, 6, 8], 7, 10))


# H70 — «su recuperación se produce como si su gravedad fuera un grado mayor»
# H70 — «si falla la tirada pierde tantos puntos de Resistencia como el dado central (C)»
def test_h70_insufficient_rest():
    assert recovery_rule(HealthState.SANO, rested=False) == recovery_rule(HealthState.HERIDO)
    assert recovery_rule(HealthState.HERIDO, rested=False) == recovery_rule(HealthState.INCAPACITADO)
    meter = Meter(15, 1, 10)
    kept = recover(meter, HealthState.INCAPACITADO, _check([3, 6, 8], 9, 15), rested=False)
    assert (kept.after, kept.recovered, kept.lost) == (meter, 0, 0)
    lost = recover(meter, HealthState.INCAPACITADO, _check([3, 4, 8], 9, 15), rested=False)
    assert (lost.lost, lost.after) == (4, Meter(15, 1, 14))
    # After an activation that still fails: a positive one loses m, a negative one M (H70).
    helped = recover(meter, HealthState.INCAPACITADO, _check([1, 3, 4], 9, 15, reading=Reading.POSITIVE), rested=False)
    assert helped.lost == 1
    hurt = recover(meter, HealthState.INCAPACITADO, _check([3, 4, 8], 9, 15, reading=Reading.NEGATIVE), rested=False)
    assert hurt.lost == 8


# H88 — «Un personaje alterado realiza cada mes una prueba de Entereza a dificultad 10»
def test_h88_mental_recovery():
    assert recover(Meter(18, 3, 3), MentalState.CUERDO).after == Meter(18)
    assert recover(Meter(18, 0, 8), MentalState.ALTERADO, _check([2, 5, 9], 6, 10)).recovered == 5
    trast = recover(Meter(18, 0, 13), MentalState.TRASTORNADO, _check([2, 5, 9], 10, 15))
    assert trast.recovered == 2
    # H88 — «Si falla sufre una pérdida de Estabilidad Mental igual al resultado del dado C»
    unrested = recover(Meter(18, 0, 13), MentalState.TRASTORNADO, _check([2, 5, 9], 6, 15), rested=False)
    assert unrested.lost == 5
    assert recovery_rule(MentalState.CUERDO, rested=False) == recovery_rule(MentalState.ALTERADO)
    assert recovery_rule(MentalState.ENLOQUECIDO) is None
    with pytest.raises(ValueError, match="Moribundo no se recupera"):
        recover(Meter(15, 15, 0), HealthState.MORIBUNDO, _check([2, 5, 9], 6, 15))


# H79 — «Desasosiego (Fácil // 0 ó 1)»; «Estupor (Media // 1 ó m)»; «Miedo (Media // m ó M)»;
# «Pánico (Difícil // C ó CM)»; «Horror (Muy difícil // M ó mCM)»
def test_h79_horror_levels():
    assert [(h.key, h.difficulty, h.success_loss, h.failure_loss) for h in HORROR_LEVELS] == [
        ("desasosiego", 10, "0", "1"),
        ("estupor", 15, "1", "m"),
        ("miedo", 15, "m", "M"),
        ("panico", 20, "C", "CM"),
        ("horror", 25, "M", "mCM"),
    ]


# H78 — «Uno de menor valor, que se aplica en caso de que se tenga éxito en la prueba, y otro de mayor valor»
def test_h78_loss_is_read_from_the_same_roll():
    success = horror("panico", read_roll([3, 8, 6]), entereza=14)
    assert (success.test.success, success.code, success.loss) == (True, "C", 6)
    failure = horror("panico", read_roll([3, 8, 6]), entereza=8)
    assert (failure.test.success, failure.code, failure.loss) == (False, "CM", 14)
    crit = horror("horror", read_roll([10, 10, 10]), entereza=0)
    assert (crit.test.success, crit.code, crit.loss) == (True, "M", 10)


# H80 — «Los personajes con Degeneración 1 o más no tienen que hacer pruebas de Estabilidad de este nivel»
def test_h80_degeneracion_exempts_from_desasosiego():
    assert horror_test_due("desasosiego", 0) is True
    assert horror_test_due("desasosiego", 1) is False
    assert horror_test_due("estupor", 3) is True
    exempt = horror("desasosiego", None, entereza=5, degeneracion=2)
    assert (exempt.test, exempt.loss) == (None, 0)


# H81 — «podrían usarse otros aspectos de la situación para aumentar el nivel de exposición»
def test_h81_q11_aspects_shift_the_level():
    assert shift_horror("miedo", 1).key == "panico"
    assert shift_horror("miedo", -1).key == "estupor"
    assert shift_horror("horror", 2).key == "horror"
    assert shift_horror("desasosiego", -1).key == "desasosiego"
    lowered = horror("estupor", None, entereza=5, degeneracion=1, shift=-1)
    assert lowered.level.key == "desasosiego" and lowered.test is None
    with pytest.raises(ValueError, match="cambian el nivel"):
        horror("miedo", read_roll([2, 2, 5], Reading.POSITIVE), entereza=5)
    with pytest.raises(ValueError, match="Nivel de horror desconocido"):
        horror("terror", read_roll([2, 2, 5]), entereza=5)


# H65 — «Un personaje incapacitado adquiere una secuela temporal»
# H65 — «El personaje pierde su secuela temporal cuando recupera suficientes puntos de Resistencia para alcanzar el estado sano»
# H89 — «Un personaje adquiere un trastorno temporal siempre que su estado mental alcanza el nivel trastornado»
def test_h65_h89_temporary_secuelas_follow_the_state():
    assert temporary_secuela_change(HealthState.HERIDO, HealthState.INCAPACITADO) == "gana"
    assert temporary_secuela_change(HealthState.SANO, HealthState.MORIBUNDO) == "gana"
    assert temporary_secuela_change(HealthState.INCAPACITADO, HealthState.HERIDO) is None
    assert temporary_secuela_change(HealthState.HERIDO, HealthState.SANO) == "pierde"
    assert temporary_secuela_change(MentalState.ALTERADO, MentalState.TRASTORNADO) == "gana"
    assert temporary_secuela_change(MentalState.TRASTORNADO, MentalState.CUERDO) == "pierde"
    assert temporary_secuela_change(MentalState.CUERDO, MentalState.ALTERADO) is None
    with pytest.raises(ValueError):
        temporary_secuela_change(HealthState.SANO, MentalState.CUERDO)


# K16 — an aspect on a healing or recovery roll is an ordinary activation: the
# activated value decides success and the amount (positive → M or the pair or
# triple sum, negative → m or the negative value, never below 0 recovered).
def test_k16_a_positive_activation_on_a_healing_roll_recovers_its_value():
    meter = Meter(15, 6, 6)  # Herido with Aguante 6
    assert recover(meter, HealthState.HERIDO, _check([2, 4, 7], 6, 10, reading=Reading.POSITIVE)).recovered == 7
    # A pair summed: max(M 6, 2 × 5) = 10.
    assert recover(meter, HealthState.HERIDO, _check([5, 5, 6], 6, 10, reading=Reading.POSITIVE)).recovered == 10
    # Incapacitado: the activated value too (not the H69 table's C).
    incapacitado = Meter(15, 2, 10)
    outcome = recover(incapacitado, HealthState.INCAPACITADO, _check([3, 6, 8], 9, 15, reading=Reading.POSITIVE))
    assert outcome.recovered == 8


def test_k16_the_activated_value_decides_the_success():
    meter = Meter(15, 6, 6)
    # C 4 + 6 = 10 would succeed; read negatively the roll is worth m 2: 2 + 6 = 8 < 10.
    failed = recover(meter, HealthState.HERIDO, _check([2, 4, 7], 6, 10, reading=Reading.NEGATIVE))
    assert (failed.recovered, failed.after) == (0, meter)
    # C 2 + 5 = 7 fails; read positively it is worth M 9: 9 + 5 = 14 succeeds and recovers 9.
    saved = recover(meter, HealthState.HERIDO, _check([1, 2, 9], 5, 10, reading=Reading.POSITIVE))
    assert saved.recovered == 9


def test_k16_a_negative_value_recovers_nothing_never_less():
    # Read negatively a pair of 4 is worth −4 (H19); with Entereza 20 the test still succeeds.
    meter = Meter(20, 5, 5)  # Alterado
    outcome = recover(meter, MentalState.ALTERADO, _check([4, 4, 9], 20, 10, reading=Reading.NEGATIVE))
    assert outcome.test.success and outcome.recovered == 0 and outcome.after == meter


# K18 — the engine's answers to three healing and horror corner cases, kept as the defaults.
def test_k18_a_critical_with_a_negative_aspect_on_a_healing_roll_cancel_out():
    # Double 10 is a critical (H10); with a negative aspect the two cancel and C is recovered.
    meter = Meter(15, 6, 6)  # Herido, 12 points lost
    outcome = recover(meter, HealthState.HERIDO, _check([10, 3, 10], 5, 10, reading=Reading.NEGATIVE))
    assert outcome.recovered == 10  # C of [3, 10, 10], not the negative reading's value (−10, K16)


def test_k18_a_fumble_of_an_incapacitado_without_rest_loses_m():
    outcome = recover(Meter(15, 1, 10), HealthState.INCAPACITADO, _check([1, 1, 7], 9, 15), rested=False)
    assert outcome.lost == 7  # M, not the C of the ordinary failure without rest (H70)


def test_k18_horror_shifts_beyond_the_table_clamp_at_its_ends():
    assert shift_horror("panico", 3).key == "horror"
    assert shift_horror("estupor", -4).key == "desasosiego"
