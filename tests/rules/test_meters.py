"""The slash/cross meter of Resistencia and Estabilidad Mental."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rules.hitos_health import HealthState, health_state
from rules.meters import Meter


@st.composite
def meters(draw):
    capacity = draw(st.integers(0, 45))
    crosses = draw(st.integers(0, capacity))
    slashes = draw(st.integers(0, capacity - crosses))
    return Meter(capacity, slashes, crosses)


points = st.integers(0, 60)


# H60 — «tacha con una barra diagonal (∕) tantos espacios en el medidor de puntos de Resistencia»
def test_h60_damage_is_marked_with_slashes():
    meter = Meter(15).mark(4)
    assert (meter.slashes, meter.crosses, meter.empty, meter.lost) == (4, 0, 11, 4)
    assert meter.boxes == "∕∕∕∕" + "·" * 11


# H60 — «si el personaje ha sufrido daño masivo debes tachar todos los puntos de Resistencia que le queden»
def test_h60_slash_all_marks_every_empty_box():
    assert Meter(15, 3, 2).slash_all() == Meter(15, 13, 2)


# H61 — «convierte en un aspa (×) una barra existente del medidor por cada punto de daño extra que supere el total»
def test_h61_overflow_turns_slashes_into_crosses():
    assert Meter(15, 4, 4).mark(9) == Meter(15, 9, 6)
    assert Meter(15, 10, 0).mark(8) == Meter(15, 12, 3)
    # Overflow beyond every slash has nothing left to consolidate.
    assert Meter(5, 1, 3).mark(10) == Meter(5, 0, 5)


# H62 — «Borra del medidor de puntos de Resistencia la mitad del daño que tengas marcado con barras diagonales (redondeando hacia abajo)»
def test_h62_shock_erases_half_the_slashes_rounded_down_and_crosses_the_rest():
    assert Meter(15, 7, 0).shock() == Meter(15, 0, 4)
    assert Meter(15, 6, 2).shock() == Meter(15, 0, 5)
    assert Meter(15, 1, 0).shock() == Meter(15, 0, 1)


# H87 — «consolida el desequilibrio restante marcándolos con aspas (×)»
def test_h87_stress_is_the_same_operation_on_the_mental_meter():
    assert Meter(18, 9, 1).stress() == Meter(18, 0, 6)


# H82 — «el desequilibrio restante se emplea para consolidar el existente convirtiendo las barras en aspas (×)»
def test_h82_mental_overflow_consolidates_like_the_physical_meter():
    assert Meter(12, 10, 0).mark(5) == Meter(12, 9, 3)


# Q12 — healing erases crosses first; H58 — stabilisation erases slashes only.
def test_healing_removes_crosses_first_and_stabilising_only_slashes():
    assert Meter(15, 3, 4).heal(5) == Meter(15, 2, 0)
    assert Meter(15, 3, 4).heal(50) == Meter(15)
    assert Meter(15, 3, 4).stabilise(2) == Meter(15, 1, 4)
    assert Meter(15, 3, 4).stabilise(9) == Meter(15, 0, 4)
    assert Meter(15, 3, 4).cleared() == Meter(15)


# K9 — S001 «Con una pifia sufriría un nuevo daño consolidado igual al resultado del dado M»
def test_k9_consolidated_damage_crosses_empty_boxes_then_slashes():
    assert Meter(10, 2, 1).mark_consolidated(4) == Meter(10, 2, 5)
    assert Meter(10, 6, 1).mark_consolidated(5) == Meter(10, 4, 6)


def test_resizing_drops_marks_that_no_longer_fit_slashes_first():
    assert Meter(15, 5, 8).resized(10) == Meter(10, 2, 8)
    assert Meter(15, 5, 8).resized(18) == Meter(18, 5, 8)


# The meter sequence of issue 6: Aguante 5, Resistencia 15.
def test_meter_sequence_with_aguante_5():
    meter = Meter(15).mark(7)
    assert health_state(meter, 5) is HealthState.HERIDO
    meter = meter.shock()
    assert meter == Meter(15, 0, 4)
    assert health_state(meter, 5) is HealthState.SANO
    meter = meter.mark(4)
    assert health_state(meter, 5) is HealthState.HERIDO
    meter = meter.mark(9)  # the massive-damage test was passed
    assert meter == Meter(15, 9, 6)
    assert health_state(meter, 5) is HealthState.MORIBUNDO


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((-1,), "La capacidad del medidor debe ser un número entero no negativo"),
        ((5, -1, 0), "El número de barras"),
        ((5, 0, -2), "El número de aspas"),
        ((5, 4, 2), "no puede tener 4 barras y 2 aspas"),
        ((5.0,), "La capacidad del medidor"),
        ((True,), "La capacidad del medidor"),
    ],
)
def test_bad_meters_are_clear_errors(args, message):
    with pytest.raises(ValueError, match=message):
        Meter(*args)


def test_negative_points_are_clear_errors():
    with pytest.raises(ValueError, match="El daño debe ser un número entero no negativo"):
        Meter(10).mark(-1)
    with pytest.raises(ValueError, match="La curación"):
        Meter(10).heal(-3)


@settings(max_examples=150, deadline=None)
@given(meters(), st.lists(st.tuples(st.sampled_from(["mark", "cons", "heal", "stab", "shock", "all"]), points)))
def test_a_meter_never_holds_more_marks_than_its_capacity(meter, operations):
    for name, n in operations:
        if name == "mark":
            after = meter.mark(n)
            assert after.lost == min(meter.capacity, meter.lost + n)
        elif name == "cons":
            after = meter.mark_consolidated(n)
        elif name == "heal":
            after = meter.heal(n)
            assert after.lost == max(0, meter.lost - n)
        elif name == "stab":
            after = meter.stabilise(n)
            assert after.crosses == meter.crosses
        elif name == "shock":
            after = meter.shock()
        else:
            after = meter.slash_all()
        assert 0 <= after.slashes + after.crosses <= after.capacity == meter.capacity
        assert after.crosses >= meter.crosses or name in ("heal",)
        meter = after


@settings(max_examples=150, deadline=None)
@given(meters())
def test_shock_never_increases_the_points_lost(meter):
    after = meter.shock()
    assert after.lost <= meter.lost
    assert after.lost == meter.crosses + meter.slashes - meter.slashes // 2
    assert after.slashes == 0


@settings(max_examples=200, deadline=None)
@given(meters(), points)
def test_marking_consolidates_only_what_overflows(meter, n):
    after = meter.mark(n)
    overflow = max(0, n - meter.empty)
    assert after.crosses == meter.crosses + min(overflow, meter.slashes + min(n, meter.empty))
