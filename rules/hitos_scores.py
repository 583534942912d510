"""HITOS characteristics, derived scores (H29–H37), skill categories (§4.5) and
the Cultos Innombrables creation budget (§4.5, as guidance)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from rules.hitos_options import DEFAULT_OPTIONS, HitosOptions

CHARACTERISTICS: tuple[str, ...] = ("fortaleza", "reflejos", "voluntad", "intelecto")

# §4.5 [ENGINE DEFAULT] — the seven basic skill categories plus the two extra
# ones, by key (their names are the site's to show, in the reader's language:
# Forma Física, Combate, Interacción, Percepción, Subterfugio, Cultura,
# Profesión, Ocultismo, Habilidad Arcana).
SKILL_CATEGORIES: tuple[str, ...] = (
    "forma_fisica",
    "combate",
    "interaccion",
    "percepcion",
    "subterfugio",
    "cultura",
    "profesion",
    "ocultismo",
    "arcana",
)
EXTRA_SKILL_CATEGORIES: frozenset[str] = frozenset({"ocultismo", "arcana"})
_CATEGORY_KEYS = frozenset(SKILL_CATEGORIES)


def check_skill_category(category: str) -> str:
    if category not in _CATEGORY_KEYS:
        keys = ", ".join(SKILL_CATEGORIES)
        raise ValueError(f"Categoría de habilidad desconocida: {category!r}. Se esperaba una de: {keys}.")
    return category


def check_characteristic(value: int, name: str = "La característica") -> int:
    # H29 — "El valor en cada característica oscila entre 1 y 10".
    if value.__class__ is not int or not 1 <= value <= 10:
        raise ValueError(f"{name} debe estar entre 1 y 10, no {value!r}.")
    return value


def check_skill(value: int, name: str = "La habilidad") -> int:
    if value.__class__ is not int or value < 0:
        raise ValueError(f"{name} debe ser un número entero no negativo, no {value!r}.")
    return value


@dataclass(frozen=True, slots=True)
class Characteristics:
    fortaleza: int
    reflejos: int
    voluntad: int
    intelecto: int

    def __post_init__(self) -> None:
        for name in CHARACTERISTICS:
            check_characteristic(getattr(self, name), name.capitalize())


def divide(value: int, divisor: int, options: HitosOptions = DEFAULT_OPTIONS) -> int:
    """K10 / Q6 — halves and quarters: floor by default, half up as an option."""
    if options.rounding == "nearest":
        return (2 * value + divisor) // (2 * divisor)
    return value // divisor


def aguante(fortaleza: int, voluntad: int, options: HitosOptions = DEFAULT_OPTIONS) -> int:
    # H31 — Fortaleza + half Voluntad, rounded down.
    return fortaleza + divide(voluntad, 2, options)


def resistencia(aguante_value: int) -> int:
    # H32 — "tanta Resistencia como su Aguante multiplicado por 3".
    return 3 * aguante_value


def defensa(reflejos: int, combate: int, other_skill: int = 0) -> int:
    # H33 — Reflejos + the higher of the two skills + 5 (second skill [UNVERIFIED]).
    return reflejos + max(combate, other_skill) + 5


def iniciativa(reflejos: int, intelecto: int, options: HitosOptions = DEFAULT_OPTIONS) -> int:
    # H34 — Reflejos + half Intelecto (floor by default, K10).
    return reflejos + divide(intelecto, 2, options)


def melee_damage_bonus(fortaleza: int, combate: int, options: HitosOptions = DEFAULT_OPTIONS) -> int:
    # H35 — melee bonus = (Fortaleza + Combate) / 4.
    return divide(fortaleza + combate, 4, options)


def ranged_damage_bonus(combate: int, options: HitosOptions = DEFAULT_OPTIONS) -> int:
    # H35 — ranged bonus = Combate / 4.
    return divide(combate, 4, options)


def entereza(voluntad: int, intelecto: int, options: HitosOptions = DEFAULT_OPTIONS) -> int:
    # H36 — Voluntad + half Intelecto, rounded down.
    return voluntad + divide(intelecto, 2, options)


def estabilidad(entereza_value: int) -> int:
    # H37 — "es igual al triple de su Entereza".
    return 3 * entereza_value


@dataclass(frozen=True, slots=True)
class DerivedScore:
    """A derived score and its formula, as data: the site names the score and
    the terms in the reader's language.

    ``shape`` places the terms in the formula (``"{} + {} ÷ 2"``); ``terms``
    are the keys of what goes in it (characteristics, skills, other scores:
    ``"fortaleza"``, ``"voluntad"``; ``"defence_skill"`` is the higher of the
    combat and defence skills); ``worked`` is the shape with the character's
    numbers (``"4 + 5 ÷ 2 = 6"``); ``rounding`` is the campaign's rounding
    (``"floor"`` or ``"nearest"``) when the formula divides, else ``None``.
    """

    key: str
    value: int
    shape: str
    terms: tuple[str, ...]
    worked: str
    rounding: str | None = None


def derived_scores(
    characteristics: Characteristics,
    combate: int = 0,
    defence_skill: int = 0,
    options: HitosOptions = DEFAULT_OPTIONS,
) -> dict[str, DerivedScore]:
    """Every derived score of a sheet, with its formula (as data) for display.

    ``combate`` is the Combate skill; ``defence_skill`` the other skill Defensa
    may use when it is higher (H33).
    """
    c = characteristics
    check_skill(combate, "Combate")
    check_skill(defence_skill, "La habilidad de defensa")
    rounding = options.rounding
    ag = aguante(c.fortaleza, c.voluntad, options)
    en = entereza(c.voluntad, c.intelecto, options)
    best = max(combate, defence_skill)
    scores = (
        DerivedScore(
            "aguante",
            ag,
            "{} + {} ÷ 2",
            ("fortaleza", "voluntad"),
            f"{c.fortaleza} + {c.voluntad} ÷ 2 = {ag}",
            rounding,
        ),
        DerivedScore(
            "resistencia",
            resistencia(ag),
            "{} × 3",
            ("aguante",),
            f"{ag} × 3 = {resistencia(ag)}",
        ),
        DerivedScore(
            "defensa",
            defensa(c.reflejos, combate, defence_skill),
            "{} + {} + 5",
            ("reflejos", "defence_skill"),
            f"{c.reflejos} + {best} + 5 = {defensa(c.reflejos, combate, defence_skill)}",
        ),
        DerivedScore(
            "iniciativa",
            iniciativa(c.reflejos, c.intelecto, options),
            "{} + {} ÷ 2",
            ("reflejos", "intelecto"),
            f"{c.reflejos} + {c.intelecto} ÷ 2 = {iniciativa(c.reflejos, c.intelecto, options)}",
            rounding,
        ),
        DerivedScore(
            "bono_cuerpo_a_cuerpo",
            melee_damage_bonus(c.fortaleza, combate, options),
            "({} + {}) ÷ 4",
            ("fortaleza", "combate"),
            f"({c.fortaleza} + {combate}) ÷ 4 = {melee_damage_bonus(c.fortaleza, combate, options)}",
            rounding,
        ),
        DerivedScore(
            "bono_distancia",
            ranged_damage_bonus(combate, options),
            "{} ÷ 4",
            ("combate",),
            f"{combate} ÷ 4 = {ranged_damage_bonus(combate, options)}",
            rounding,
        ),
        DerivedScore(
            "entereza",
            en,
            "{} + {} ÷ 2",
            ("voluntad", "intelecto"),
            f"{c.voluntad} + {c.intelecto} ÷ 2 = {en}",
            rounding,
        ),
        DerivedScore(
            "estabilidad",
            estabilidad(en),
            "{} × 3",
            ("entereza",),
            f"{en} × 3 = {estabilidad(en)}",
        ),
    )
    return {score.key: score for score in scores}


@dataclass(frozen=True, slots=True)
class CreationBudget:
    characteristic_points: int = 20
    skill_points: int = 40
    hitos: int = 4
    citas: int = 1
    drama: int = 5
    complications: int = 1


# §4.5 — the Cultos Innombrables creation steps (GM screen): guidance, not law.
CULTOS_INNOMBRABLES_BUDGET = CreationBudget()


@dataclass(frozen=True, slots=True)
class BudgetWarning:
    """Where a new character departs from the budget: ``key`` is what
    (``"characteristics"``, ``"skills"``, ``"hitos"``, ``"citas"``,
    ``"drama"``, ``"complications"``, or ``"profesion_missing"`` with no
    numbers), ``have`` what the sheet has and ``want`` what the budget says."""

    key: str
    have: int = 0
    want: int = 0


def creation_warnings(
    budget: CreationBudget,
    *,
    characteristics: Characteristics,
    skills: Iterable[tuple[str, int]],
    hitos: int,
    citas: int,
    drama: int,
    complications: int,
) -> list[BudgetWarning]:
    """Where a new character departs from the budget, as data (the site
    words it in the reader's language).

    ``skills`` are (category, value) pairs. These are warnings the GM may
    accept, never errors; bad values (a characteristic of 11, an unknown
    category) still raise ``ValueError``.
    """
    skill_list: Sequence[tuple[str, int]] = list(skills)
    for category, value in skill_list:
        check_skill_category(category)
        check_skill(value)
    warnings = []
    spent = sum(getattr(characteristics, name) for name in CHARACTERISTICS)
    skill_points = sum(value for _, value in skill_list)
    for key, have, want in (
        ("characteristics", spent, budget.characteristic_points),
        ("skills", skill_points, budget.skill_points),
        ("hitos", hitos, budget.hitos),
        ("citas", citas, budget.citas),
        ("drama", drama, budget.drama),
        ("complications", complications, budget.complications),
    ):
        if have != want:
            warnings.append(BudgetWarning(key, have, want))
    # S000 — «Elige al menos una habilidad de profesión para tu personaje».
    if not any(category == "profesion" for category, _ in skill_list):
        warnings.append(BudgetWarning("profesion_missing"))
    return warnings
