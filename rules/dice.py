"""Sources of randomness for the rules engine.

Every function in ``rules`` that needs dice takes a ``DiceSource``: an object
with a ``roll(faces)`` method returning an integer in ``1..faces``. Tests pass
a :class:`FixedDice`; the site passes :class:`SecretsDice` or, for the
verifiable roll log, a source drawing from the rollog/v1 stream. Dice keep the
order in which they were drawn; sorting them is a reading (see ``hitos``).
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable, Sequence
from typing import Protocol

MIN_FACES = 2
MAX_FACES = 1000


class DiceSource(Protocol):
    def roll(self, faces: int) -> int:
        """Return one die result in ``1..faces``."""
        ...


def check_faces(faces: int) -> int:
    if not isinstance(faces, int) or isinstance(faces, bool):
        raise ValueError(f"Las caras de un dado deben ser un número entero, no {faces!r}.")
    if not MIN_FACES <= faces <= MAX_FACES:
        raise ValueError(f"Un dado debe tener entre {MIN_FACES} y {MAX_FACES} caras, no {faces}.")
    return faces


def check_die(value: int, faces: int) -> int:
    """Validate one die result against its number of faces."""
    check_faces(faces)
    if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= faces:
        raise ValueError(f"Un d{faces} no puede sacar {value!r}: debe estar entre 1 y {faces}.")
    return value


def check_dice(values: Iterable[int], faces: int) -> tuple[int, ...]:
    return tuple(check_die(v, faces) for v in values)


class FixedDice:
    """Yields a fixed sequence of results; for tests and worked examples.

    Each value is checked against the faces asked for, and running out of
    values is an error rather than a silent wrap-around.
    """

    def __init__(self, values: Iterable[int]):
        self._values = list(values)
        self._next = 0

    def roll(self, faces: int) -> int:
        check_faces(faces)
        if self._next >= len(self._values):
            raise ValueError(f"FixedDice se quedó sin valores tras {len(self._values)} tiradas.")
        value = self._values[self._next]
        self._next += 1
        return check_die(value, faces)

    @property
    def remaining(self) -> int:
        return len(self._values) - self._next


class SecretsDice:
    """Unbiased dice from the operating system's CSPRNG (``secrets``)."""

    def roll(self, faces: int) -> int:
        check_faces(faces)
        return secrets.randbelow(faces) + 1


def roll_dice(source: DiceSource, count: int, faces: int) -> tuple[int, ...]:
    """Draw ``count`` dice of ``faces`` faces, in generation order."""
    if count < 0:
        raise ValueError(f"No se puede tirar un número negativo de dados ({count}).")
    check_faces(faces)
    return tuple(check_die(source.roll(faces), faces) for _ in range(count))


def reroll_positions(
    source: DiceSource, dice: Sequence[int], positions: Iterable[int], faces: int
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Re-roll the dice at ``positions`` (0-based, raw order).

    Returns ``(new_dice, drawn)`` where ``drawn`` holds the new values in the
    order of the sorted unique positions, as the roll log records them.
    """
    dice = check_dice(dice, faces)
    chosen = sorted(set(positions))
    if not chosen:
        raise ValueError("Hay que elegir al menos un dado para repetir.")
    for p in chosen:
        if not isinstance(p, int) or not 0 <= p < len(dice):
            raise ValueError(f"La posición {p!r} no existe en una tirada de {len(dice)} dados.")
    result = list(dice)
    drawn = []
    for p in chosen:
        value = check_die(source.roll(faces), faces)
        result[p] = value
        drawn.append(value)
    return tuple(result), tuple(drawn)
