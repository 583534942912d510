"""Damage and loss codes read from a HITOS roll: m, C, M, mC, mM, CM, mCM.

A code names the sorted dice of the roll whose values are added (H44, H78,
H96). Loss codes of the horror table may also be a constant ("0", "1"). Above
mCM the texts add extra dice of direct damage (H51): written ``mCM+2d10``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

# The die codes the engine accepts, in canonical spelling (§4.2 plus mC).
DICE_CODES: tuple[str, ...] = ("m", "C", "M", "mC", "mM", "CM", "mCM")

# Exact expected values of m, C and M on 3d10 (§4.2): 3.025, 5.5, 7.975.
_EXPECTED = {"m": Fraction(3025, 1000), "C": Fraction(55, 10), "M": Fraction(7975, 1000)}
_EXPECTED_D10 = Fraction(11, 2)
# The roll a code reads: 3d10 (H1). Extra dice come after these three.
ROLL_DICE = 3
# H51 — "tantos dados adicionales como parezca apropiado": the engine caps
# them so that the roll and its extra dice stay within the 100 dice a roll of
# the signed log may have (rollog/v1 §3.4b) [ENGINE DEFAULT].
MAX_EXTRA_DICE = 97
EXTRA_DIE_FACES = 10


@dataclass(frozen=True, slots=True)
class DamageCode:
    dice: str = ""
    extra_dice: int = 0
    constant: int = 0

    @property
    def text(self) -> str:
        if not self.dice:
            return str(self.constant)
        if self.extra_dice:
            return f"{self.dice}+{self.extra_dice}d10"
        return self.dice

    @property
    def expected(self) -> Fraction:
        return sum((_EXPECTED[letter] for letter in self.dice), Fraction(self.constant)) + (
            self.extra_dice * _EXPECTED_D10
        )

    def __str__(self) -> str:
        return self.text


def _unknown(code: object) -> ValueError:
    return ValueError(
        f"Código de daño desconocido: {code!r}. Se esperaba uno de "
        f"{', '.join(DICE_CODES)}, mCM+Nd10 o un número entero no negativo."
    )


def parse_damage_code(code: str | DamageCode) -> DamageCode:
    if isinstance(code, DamageCode):
        return code
    if not isinstance(code, str):
        raise _unknown(code)
    text = code.strip()
    if text.isdigit():
        return DamageCode(constant=int(text))
    base, plus, extra = text.partition("+")
    if base not in DICE_CODES:
        raise _unknown(code)
    if not plus:
        return DamageCode(dice=base)
    # H51 — extra direct-damage dice only exist above mCM.
    count = extra.strip().lower().removesuffix("d10").removesuffix("d")
    if base != "mCM" or not (count.isascii() and count.isdigit()) or int(count) < 1:
        raise _unknown(code)
    if int(count) > MAX_EXTRA_DICE:
        raise ValueError(f"Demasiados dados adicionales en {text!r}: como mucho mCM+{MAX_EXTRA_DICE}d10.")
    return DamageCode(dice=base, extra_dice=int(count))


def extra_dice_spec(code: str | DamageCode) -> str:
    """H51 — the pool of the extra dice a code reads besides its roll
    (``"2d10"`` for ``mCM+2d10``), or ``""`` when it needs none."""
    parsed = parse_damage_code(code)
    return f"{parsed.extra_dice}d{EXTRA_DIE_FACES}" if parsed.extra_dice else ""


def split_pool(code: str | DamageCode, dice: Sequence[int]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """H51 — a roll extended with the extra dice its code asks for, read as
    the code reads it: the first three dice are the roll (m, C and M come
    from them alone), the dice after them the extra d10s, in the order they
    were drawn. Refused when the pool does not hold exactly those dice."""
    parsed = parse_damage_code(code)
    pool = tuple(dice)
    if len(pool) != ROLL_DICE + parsed.extra_dice:
        raise ValueError(
            f"El código {parsed.text} se lee de {ROLL_DICE + parsed.extra_dice} dados "
            f"(la tirada y {parsed.extra_dice} adicionales), no de {len(pool)}."
        )
    return pool[:ROLL_DICE], pool[ROLL_DICE:]


def code_value(code: str | DamageCode, m: int, c: int, big_m: int, extra_dice: Sequence[int] = ()) -> int:
    """The sum the code names, given the sorted dice ``m ≤ c ≤ big_m`` of the roll
    and the values of any extra dice the code asks for."""
    parsed = parse_damage_code(code)
    if len(extra_dice) != parsed.extra_dice:
        raise ValueError(
            f"El código {parsed.text} necesita {parsed.extra_dice} dados adicionales, no {len(extra_dice)}."
        )
    for value in extra_dice:
        if value.__class__ is not int or not 1 <= value <= 10:
            raise ValueError(f"Un d10 no puede sacar {value!r}: debe estar entre 1 y 10.")
    total = parsed.constant + sum(extra_dice)
    if "m" in parsed.dice:
        total += m
    if "C" in parsed.dice:
        total += c
    if "M" in parsed.dice:
        total += big_m
    return total


def shift_code(code: str | DamageCode, steps: int, ladder: Sequence[str]) -> DamageCode:
    """H46 — move a damage code ``steps`` levels up (+) or down (−) the ladder.

    Above the top, if the top is mCM, each step adds one extra die (H51, §4.2);
    below the bottom the damage is 0 [UNVERIFIED]. A code missing from the
    ladder (say mC on the default one) is placed by its expected value.
    """
    parsed = parse_damage_code(code)
    codes = [parse_damage_code(c) for c in ladder]
    texts = [c.text for c in codes]
    top_is_mcm = texts[-1] == "mCM"
    if parsed.dice == "mCM" and parsed.extra_dice and top_is_mcm:
        rank = len(codes) - 1 + parsed.extra_dice
    elif parsed.text in texts:
        rank = texts.index(parsed.text)
    elif not parsed.dice and parsed.constant == 0:
        rank = -1
    elif not parsed.dice:
        raise ValueError(f"No se puede desplazar un daño fijo ({parsed.text}) por la escala.")
    else:
        # Place between neighbours by expected value: one step up is the first
        # entry above it, one step down the last entry below it.
        above = next((i for i, c in enumerate(codes) if c.expected > parsed.expected), len(codes))
        if steps == 0:
            return parsed
        rank = above - 1 + steps if steps > 0 else above + steps
        return _at_rank(rank, codes, top_is_mcm)
    return _at_rank(rank + steps, codes, top_is_mcm)


def _at_rank(rank: int, codes: list[DamageCode], top_is_mcm: bool) -> DamageCode:
    if rank < 0:
        return DamageCode(constant=0)
    if rank < len(codes):
        return codes[rank]
    if top_is_mcm:
        return DamageCode(dice="mCM", extra_dice=rank - len(codes) + 1)
    return codes[-1]
