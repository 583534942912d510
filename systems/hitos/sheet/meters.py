"""The two meters of a HITOS sheet as data: Resistencia (health, H52–H70) and
Estabilidad Mental (sanity, H77–H89).

Everything that differs between them lives in one ``MeterKind`` each, so the
meter services in ``systems.hitos.sheet.services`` are written once and never branch on
the meter's name. The arithmetic stays in ``rules/``: a kind only says which
rules function, score and difficulty belong to its meter.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.utils.translation import gettext_lazy as _

from rules.hitos_health import (
    MASS_DAMAGE_DIFFICULTY,
    STATE_LABELS,
    TRAUMA_DIFFICULTY,
    HealthState,
    LossOutcome,
    MentalState,
    take_damage,
    take_imbalance,
)
from rules.meters import Meter
from systems.hitos.models import HitosEvent, HitosSheet

HEALTH = "resistencia"
MENTAL = "estabilidad"


@dataclass(frozen=True)
class MeterKind:
    """One meter of the sheet and everything that sets it apart from the other.

    - ``key``: its name in URLs, form prefixes and exported files;
      ``label``: its name for people.
    - ``slashes_field`` / ``crosses_field``: the ``HitosSheet`` fields holding
      its marks; ``meter_property`` / ``state_property``: the ``HitosSheet``
      properties reading them through ``rules/`` (the meter resized to its
      capacity, and the state with its penalty). The methods take the sheet.
    - ``threshold``: the derived score whose size sets the rows and the tests
      (``HitosSheet.aguante`` / ``.entereza``; also the keyword ``take`` wants),
      shown as ``threshold_label`` in a roll's breakdown.
    - ``loss``, ``shock``, ``recovery``: the meter's own actions for marking a
      loss (damage H60 / imbalance H82), consolidating after rest (shock H62 /
      stress H87) and the periodic roll (weekly healing H67–H70 / monthly
      recovery H88). An action is named by the ``SheetEvent`` kind it records;
      ``stabilise`` and ``heal`` are the same on both meters.
    - ``take``: the rules function marking a loss; ``test_keyword``,
      ``test_difficulty`` and ``test_purpose``: the mass-damage (H52) or
      trauma (H77) test it needs, rolled through the campaign's log, when the
      loss reaches the threshold.
    - ``recovery_purpose``: what the periodic roll says in the log;
      ``whole_state``: the state that, with rest, recovers every point without
      a roll (Sano H67, Cuerdo H88).
    """

    key: str
    label: str
    slashes_field: str
    crosses_field: str
    meter_property: str
    state_property: str
    threshold: str
    threshold_label: str
    loss: HitosEvent
    shock: HitosEvent
    recovery: HitosEvent
    take: Callable[..., LossOutcome]
    test_keyword: str
    test_difficulty: int
    test_purpose: str
    recovery_purpose: str
    whole_state: str

    @property
    def actions(self) -> tuple[HitosEvent, ...]:
        """Every action on this meter, in the order the meter form offers them."""
        return (self.loss, self.shock, HitosEvent.STABILISE, HitosEvent.HEAL, self.recovery)

    @property
    def fields(self) -> list[str]:
        return [self.slashes_field, self.crosses_field]

    def meter(self, sheet: HitosSheet) -> Meter:
        return getattr(sheet, self.meter_property)

    def state(self, sheet: HitosSheet) -> HealthState | MentalState:
        return getattr(sheet, self.state_property)

    def threshold_of(self, sheet: HitosSheet) -> int:
        return getattr(sheet, self.threshold)

    def marks(self, sheet: HitosSheet) -> tuple[int, int]:
        """The slashes and crosses stored on the sheet."""
        return getattr(sheet, self.slashes_field), getattr(sheet, self.crosses_field)

    def store(self, sheet: HitosSheet, meter: Meter) -> list[str]:
        """Put ``meter``'s marks on ``sheet`` (unsaved); returns the fields to save."""
        setattr(sheet, self.slashes_field, meter.slashes)
        setattr(sheet, self.crosses_field, meter.crosses)
        return self.fields

    def take_loss(self, meter: Meter, amount: int, *, threshold: int, test) -> LossOutcome:
        """``take_damage`` / ``take_imbalance`` under their own keywords."""
        return self.take(meter, amount, **{self.threshold: threshold, self.test_keyword: test})

    def snapshot(self, sheet: HitosSheet) -> dict[str, Any]:
        """The meter as a ``SheetEvent`` records it before and after a change."""
        meter = self.meter(sheet)
        return {
            "boxes": meter.boxes,
            "slashes": meter.slashes,
            "crosses": meter.crosses,
            "state": STATE_LABELS[self.state(sheet)],
        }


RESISTENCIA = MeterKind(
    key=HEALTH,
    label=_("Resistencia"),
    slashes_field="health_slashes",
    crosses_field="health_crosses",
    meter_property="health_meter",
    state_property="health_state",
    threshold="aguante",
    threshold_label=_("Aguante"),
    loss=HitosEvent.DAMAGE,
    shock=HitosEvent.SHOCK,
    recovery=HitosEvent.HEALING_ROLL,
    take=take_damage,
    test_keyword="mass_test",
    test_difficulty=MASS_DAMAGE_DIFFICULTY,
    test_purpose=_("Prueba de daño masivo de %(name)s (Aguante contra 12)"),
    recovery_purpose=_("Curación semanal de %(name)s (Aguante)"),
    whole_state=HealthState.SANO,
)

ESTABILIDAD = MeterKind(
    key=MENTAL,
    label=_("Estabilidad Mental"),
    slashes_field="mental_slashes",
    crosses_field="mental_crosses",
    meter_property="mental_meter",
    state_property="mental_state",
    threshold="entereza",
    threshold_label=_("Entereza"),
    loss=HitosEvent.IMBALANCE,
    shock=HitosEvent.STRESS,
    recovery=HitosEvent.RECOVERY_ROLL,
    take=take_imbalance,
    test_keyword="trauma_test",
    test_difficulty=TRAUMA_DIFFICULTY,
    test_purpose=_("Prueba de trauma de %(name)s (Entereza contra 12)"),
    recovery_purpose=_("Recuperación mental mensual de %(name)s (Entereza)"),
    whole_state=MentalState.CUERDO,
)

METERS: dict[str, MeterKind] = {kind.key: kind for kind in (RESISTENCIA, ESTABILIDAD)}

# The actions by meter, as the meter form and ``services.meter_apply`` name them.
METER_ACTIONS: dict[str, tuple[str, ...]] = {
    kind.key: tuple(action.value for action in kind.actions) for kind in METERS.values()
}
NEEDS_AMOUNT = frozenset(
    {*(kind.loss.value for kind in METERS.values()), HitosEvent.STABILISE.value, HitosEvent.HEAL.value}
)
