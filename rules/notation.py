"""Generic dice notation for the forum's free roll.

Grammar (case-insensitive, spaces allowed between terms)::

    expression := ["-"] term (("+" | "-") term)*
    term       := dice | number
    dice       := [count] "d" faces ["!"] [keep] [compare]
    keep       := ("kh" | "kl" | "dh" | "dl" | "k") number     "k" means "kh"
    compare    := (">=" | "<=" | ">" | "<" | "=") number

``4d6kh3`` keeps the three highest of four d6; ``2d20kl1`` the lowest;
``3d10!`` explodes: every die showing its highest face draws one more die;
``6d6>=5`` counts the dice showing 5 or more. An expression either adds or
counts successes: in a counting expression every dice term has a comparison
and constants add or remove successes.

Limits: at most 100 characters, faces 2–1000 and at most 100 dice per roll.
The written dice count towards the limit when parsing; explosions draw extra
dice only while the roll holds fewer than 100, and the result says
``truncated`` when an explosion was cut short.

Dice are drawn as the roll log draws them (rollog v1.1 §3.4b): every written
die term by term, left to right; then, walking the dice from the first, each
exploding die that shows its highest face adds one more die at the end.
Keep and drop act on all the dice of a term (explosion dice included); among
equal values the earlier die is kept (or dropped) first.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from enum import StrEnum

from rules.dice import MAX_FACES, MIN_FACES, DiceSource, check_die

MAX_LENGTH = 100
MAX_DICE = 100
MAX_CONSTANT = 1_000_000


class NotationError(ValueError):
    """A notation error; ``position`` is 1-based in the text as written."""

    def __init__(self, position: int, message: str):
        self.position = position
        self.detail = message
        super().__init__(f"posición {position}: {message}")


class KeepMode(StrEnum):
    KEEP_HIGHEST = "kh"
    KEEP_LOWEST = "kl"
    DROP_HIGHEST = "dh"
    DROP_LOWEST = "dl"


class Comparison(StrEnum):
    GE = ">="
    LE = "<="
    GT = ">"
    LT = "<"
    EQ = "="

    def test(self, value: int, target: int) -> bool:
        match self:
            case Comparison.GE:
                return value >= target
            case Comparison.LE:
                return value <= target
            case Comparison.GT:
                return value > target
            case Comparison.LT:
                return value < target
        return value == target


@dataclass(frozen=True)
class Dice:
    count: int
    faces: int
    sign: int = 1
    explode: bool = False
    keep: KeepMode | None = None
    keep_count: int = 0
    compare: Comparison | None = None
    target: int = 0

    def text(self) -> str:
        out = f"{self.count}d{self.faces}"
        if self.explode:
            out += "!"
        if self.keep is not None:
            out += f"{self.keep}{self.keep_count}"
        if self.compare is not None:
            out += f"{self.compare}{self.target}"
        return out


@dataclass(frozen=True)
class Constant:
    value: int
    sign: int = 1

    def text(self) -> str:
        return str(self.value)


Term = Dice | Constant


@dataclass(frozen=True)
class Expression:
    terms: tuple[Term, ...]

    @property
    def counts_successes(self) -> bool:
        return any(isinstance(t, Dice) and t.compare is not None for t in self.terms)

    @property
    def dice_count(self) -> int:
        """The dice as written (explosions may add more when rolled)."""
        return sum(t.count for t in self.terms if isinstance(t, Dice))

    @property
    def explodes(self) -> bool:
        return any(isinstance(t, Dice) and t.explode for t in self.terms)

    def canonical(self) -> str:
        out = ""
        for i, term in enumerate(self.terms):
            if term.sign < 0:
                out += "-"
            elif i:
                out += "+"
            out += term.text()
        return out

    def __str__(self) -> str:
        return self.canonical()

    def faces(self) -> tuple[int, ...]:
        """The faces of every die in the order they are drawn (no explosions)."""
        if self.explodes:
            raise ValueError("Una tirada con dados explosivos no tiene una lista fija de dados.")
        return tuple(t.faces for t in self.terms if isinstance(t, Dice) for _ in range(t.count))

    def pool_spec(self) -> str:
        """The dice pool for the roll log, e.g. ``2d6+1d8`` or ``3d10!`` (signs and options dropped)."""
        return "+".join(f"{t.count}d{t.faces}{'!' if t.explode else ''}" for t in self.terms if isinstance(t, Dice))


# --- Parsing -------------------------------------------------------------------

_SPACE = re.compile(r"\s*")
_NUMBER = re.compile(r"[0-9]+")
_KEEP = re.compile(r"kh|kl|dh|dl|k", re.IGNORECASE)
_COMPARE = re.compile(r">=|<=|>|<|=")


class _Parser:
    def __init__(self, text: str):
        self.text = text
        self.pos = 0

    def error(self, message: str, at: int | None = None) -> NotationError:
        return NotationError((self.pos if at is None else at) + 1, message)

    def skip_space(self) -> None:
        self.pos = _SPACE.match(self.text, self.pos).end()

    def peek(self, pattern: re.Pattern[str]) -> re.Match[str] | None:
        return pattern.match(self.text, self.pos)

    def number(self, what: str = "un número") -> tuple[int, int]:
        m = self.peek(_NUMBER)
        if m is None:
            raise self.error(f"se esperaba {what}")
        if len(m.group()) > 7:
            raise self.error("el número es demasiado grande")
        self.pos = m.end()
        return int(m.group()), m.start()

    def expression(self) -> Expression:
        terms: list[Term] = []
        starts: list[int] = []
        self.skip_space()
        sign = 1
        if self.text.startswith("-", self.pos):
            sign = -1
            self.pos += 1
        while True:
            self.skip_space()
            starts.append(self.pos)
            terms.append(self.term(sign))
            self.skip_space()
            if self.pos >= len(self.text):
                break
            ch = self.text[self.pos]
            if ch not in "+-":
                raise self.error(f"se esperaba «+» o «-» y no «{self.text[self.pos]}»")
            sign = 1 if ch == "+" else -1
            self.pos += 1
        self.check_whole(terms, starts)
        return Expression(tuple(terms))

    def term(self, sign: int) -> Term:
        if self.pos >= len(self.text):
            raise self.error("se esperaba un número o una tirada (p. ej. 2d6)")
        count = 1
        if self.text[self.pos] not in "dD":
            count, start = self.count()
            if self.text[self.pos : self.pos + 1].lower() != "d":
                if count > MAX_CONSTANT:
                    raise self.error(f"una constante no puede pasar de {MAX_CONSTANT}", start)
                return Constant(count, sign)
            if count < 1:
                raise self.error("hay que tirar al menos un dado", start)
            if count > MAX_DICE:
                raise self.error(f"no se pueden tirar más de {MAX_DICE} dados", start)
        self.pos += 1  # the "d"
        faces, start = self.number("el número de caras")
        if not MIN_FACES <= faces <= MAX_FACES:
            raise self.error(
                f"un dado debe tener entre {MIN_FACES} y {MAX_FACES} caras, no {faces}",
                start,
            )
        explode = self.text.startswith("!", self.pos)
        self.pos += explode
        dice = Dice(count, faces, sign, explode)
        if (m := self.peek(_KEEP)) is not None:
            dice = self.keep(dice, m)
        if (m := self.peek(_COMPARE)) is not None:
            dice = self.compare(dice, m)
        return dice

    def count(self) -> tuple[int, int]:
        if self.peek(_NUMBER) is None:
            raise self.error("se esperaba un número o una tirada (p. ej. 2d6)")
        return self.number()

    def keep(self, dice: Dice, m: re.Match) -> Dice:
        """The ``kh``/``kl``/``dh``/``dl`` suffix: how many dice count."""
        self.pos = m.end()
        mode = KeepMode("kh" if m.group().lower() == "k" else m.group().lower())
        n, start = self.number()
        count = dice.count
        if mode in (KeepMode.KEEP_HIGHEST, KeepMode.KEEP_LOWEST):
            if not 1 <= n <= count:
                raise self.error(f"se pueden conservar de 1 a {count} dados", start)
        elif not 1 <= n < count:
            raise self.error(
                f"se pueden descartar de 1 a {count - 1} dados" if count > 1 else "no se puede descartar el único dado",
                start,
            )
        return replace(dice, keep=mode, keep_count=n)

    def compare(self, dice: Dice, m: re.Match) -> Dice:
        """The ``>=N``-style suffix: the dice are counted as successes."""
        self.pos = m.end()
        target, start = self.number()
        if not 1 <= target <= dice.faces:
            raise self.error(f"el umbral debe estar entre 1 y {dice.faces}", start)
        return replace(dice, compare=Comparison(m.group()), target=target)

    def check_whole(self, terms: list[Term], starts: list[int]) -> None:
        total = 0
        for term, start in zip(terms, starts, strict=True):
            if isinstance(term, Dice):
                total += term.count
                if total > MAX_DICE:
                    raise self.error(f"no se pueden tirar más de {MAX_DICE} dados", start)
        counting = [isinstance(t, Dice) and t.compare is not None for t in terms]
        if any(counting):
            for term, start, counts in zip(terms, starts, counting, strict=True):
                if isinstance(term, Dice) and not counts:
                    raise self.error(
                        "no se pueden mezclar sumas de dados con recuentos de éxitos",
                        start,
                    )


def parse(text: str) -> Expression:
    if not isinstance(text, str):
        raise NotationError(1, "la tirada debe ser un texto")
    if len(text) > MAX_LENGTH:
        raise NotationError(
            MAX_LENGTH + 1,
            f"la tirada tiene {len(text)} caracteres y el máximo es {MAX_LENGTH}",
        )
    return _Parser(text).expression()


# --- Evaluation ----------------------------------------------------------------


@dataclass(frozen=True)
class RolledDie:
    value: int
    faces: int
    term: int
    kept: bool = True
    exploded: bool = False
    from_explosion: bool = False
    success: bool | None = None


@dataclass(frozen=True)
class RollResult:
    expression: Expression
    dice: tuple[RolledDie, ...]
    total: int
    truncated: bool = False

    @property
    def counts_successes(self) -> bool:
        return self.expression.counts_successes

    @property
    def text(self) -> str:
        return self.expression.canonical()

    def detail(self) -> str:
        """A one-line reading, e.g. ``4d6kh3: [6, 4, (1), 3] = 13``.

        Dropped dice are in parentheses, explosions are marked with ``!``.
        """
        parts: list[str] = []
        for index, term in enumerate(self.expression.terms):
            if isinstance(term, Constant):
                parts.append(str(term.value))
                continue
            shown = []
            for d in self.dice:
                if d.term != index:
                    continue
                s = f"{d.value}{'!' if d.exploded else ''}"
                shown.append(s if d.kept else f"({s})")
            parts.append(f"[{', '.join(shown)}]")
        out = ""
        for i, (term, part) in enumerate(zip(self.expression.terms, parts, strict=True)):
            out += ("-" if term.sign < 0 else ("+" if i else "")) + part
        label = "éxitos" if self.counts_successes else ""
        tail = f" {label}" if label else ""
        cut = " (explosiones cortadas en 100 dados)" if self.truncated else ""
        return f"{self.text}: {out} = {self.total}{tail}{cut}"


def _kept_flags(values: list[int], mode: KeepMode | None, n: int) -> list[bool]:
    if mode is None:
        return [True] * len(values)
    by_high = sorted(range(len(values)), key=lambda i: (-values[i], i))
    by_low = sorted(range(len(values)), key=lambda i: (values[i], i))
    match mode:
        case KeepMode.KEEP_HIGHEST:
            chosen, keep = by_high[:n], True
        case KeepMode.KEEP_LOWEST:
            chosen, keep = by_low[:n], True
        case KeepMode.DROP_HIGHEST:
            chosen, keep = by_high[:n], False
        case _:
            chosen, keep = by_low[:n], False
    picked = set(chosen)
    return [(i in picked) == keep for i in range(len(values))]


def evaluate(expr: Expression, source: DiceSource) -> RollResult:
    """Draw the dice in the roll log's order (rollog v1.1 §3.4b) and read them.

    Every written die first, term by term; then one walk over the growing
    list from the first die: each die of an exploding term that shows its
    highest face adds one more die of its term at the end (added dice may
    explode in turn), while the roll holds fewer than MAX_DICE dice.
    """
    values: list[int] = []
    terms: list[int] = []  # the term of each die, by position
    for index, term in enumerate(expr.terms):
        if isinstance(term, Dice):
            for _ in range(term.count):
                values.append(check_die(source.roll(term.faces), term.faces))
                terms.append(index)
    exploded = [False] * len(values)
    from_explosion = [False] * len(values)
    truncated = False
    position = 0
    while position < len(values):
        term = expr.terms[terms[position]]
        assert isinstance(term, Dice)
        if term.explode and values[position] == term.faces:
            if len(values) >= MAX_DICE:
                truncated = True
            else:
                exploded[position] = True
                values.append(check_die(source.roll(term.faces), term.faces))
                terms.append(terms[position])
                exploded.append(False)
                from_explosion.append(True)
        position += 1
    kept = [True] * len(values)
    for index, term in enumerate(expr.terms):
        if isinstance(term, Dice):
            mine = [i for i, t in enumerate(terms) if t == index]
            for i, flag in zip(mine, _kept_flags([values[i] for i in mine], term.keep, term.keep_count), strict=True):
                kept[i] = flag
    total = sum(term.sign * term.value for term in expr.terms if isinstance(term, Constant))
    dice: list[RolledDie] = []
    for i, value in enumerate(values):
        term = expr.terms[terms[i]]
        success = None
        if term.compare is not None:
            success = kept[i] and term.compare.test(value, term.target)
        dice.append(RolledDie(value, term.faces, terms[i], kept[i], exploded[i], from_explosion[i], success))
        if kept[i]:
            total += term.sign * (int(success) if success is not None else value)
    return RollResult(expr, tuple(dice), total, truncated)


def roll(text: str, source: DiceSource) -> RollResult:
    return evaluate(parse(text), source)
