"""The slash/cross meter of Resistencia (H60–H62) and Estabilidad Mental (H82, H87).

A meter has ``capacity`` boxes; each is empty, slashed (∕, recent damage or
imbalance) or crossed (×, consolidated). Every operation returns a new meter.
"""

from __future__ import annotations

from dataclasses import dataclass


def _count(value: object, what: str) -> int:
    if value.__class__ is not int or value < 0:  # type: ignore[operator]
        raise ValueError(f"{what} debe ser un número entero no negativo, no {value!r}.")
    return value  # type: ignore[return-value]


@dataclass(frozen=True, slots=True)
class Meter:
    capacity: int
    slashes: int = 0
    crosses: int = 0

    def __post_init__(self) -> None:
        _count(self.capacity, "La capacidad del medidor")
        _count(self.slashes, "El número de barras")
        _count(self.crosses, "El número de aspas")
        if self.slashes + self.crosses > self.capacity:
            raise ValueError(
                f"Un medidor de {self.capacity} casillas no puede tener {self.slashes} barras y {self.crosses} aspas."
            )

    @property
    def lost(self) -> int:
        return self.slashes + self.crosses

    @property
    def empty(self) -> int:
        return self.capacity - self.slashes - self.crosses

    # The points the character still has: the empty boxes.
    remaining = empty

    @property
    def boxes(self) -> str:
        """One character per box: crosses, then slashes, then empty boxes."""
        return "×" * self.crosses + "∕" * self.slashes + "·" * self.empty

    def mark(self, points: int) -> Meter:
        """H60/H61/H82 — slash ``points`` empty boxes; each point beyond the empty
        boxes turns one existing slash into a cross."""
        _count(points, "El daño")
        new = min(points, self.empty)
        slashes = self.slashes + new
        converted = min(points - new, slashes)
        return Meter(self.capacity, slashes - converted, self.crosses + converted)

    def slash_all(self) -> Meter:
        """H60 — a failed massive-damage (or trauma, H77) test slashes every box left."""
        return Meter(self.capacity, self.slashes + self.empty, self.crosses)

    def mark_consolidated(self, points: int) -> Meter:
        """K9 — new consolidated damage: cross empty boxes first, then turn slashes
        into crosses for what does not fit."""
        _count(points, "El daño consolidado")
        new = min(points, self.empty)
        converted = min(points - new, self.slashes)
        return Meter(self.capacity, self.slashes - converted, self.crosses + new + converted)

    def shock(self) -> Meter:
        """H62 (shock) / H87 (stress) — erase half the slashes, rounded down, and
        consolidate the rest as crosses."""
        erased = self.slashes // 2
        return Meter(self.capacity, 0, self.crosses + self.slashes - erased)

    # H87 — stress is the mental name of the same operation.
    stress = shock

    def heal(self, points: int) -> Meter:
        """Q12 — recovery erases crosses first, then slashes."""
        _count(points, "La curación")
        crosses = min(points, self.crosses)
        slashes = min(points - crosses, self.slashes)
        return Meter(self.capacity, self.slashes - slashes, self.crosses - crosses)

    def stabilise(self, points: int) -> Meter:
        """H58/H85 — stabilisation erases slashes only."""
        _count(points, "La recuperación")
        return Meter(self.capacity, self.slashes - min(points, self.slashes), self.crosses)

    def cleared(self) -> Meter:
        """H67/H88 — every point back (Sano after a night's sleep, Cuerdo after a week)."""
        return Meter(self.capacity)

    def resized(self, capacity: int) -> Meter:
        """A new capacity (Aguante or Entereza changed): marks that no longer fit
        are dropped, slashes before crosses."""
        _count(capacity, "La capacidad del medidor")
        crosses = min(self.crosses, capacity)
        slashes = min(self.slashes, capacity - crosses)
        return Meter(capacity, slashes, crosses)
