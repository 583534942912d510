"""What HITOS's rules hand back as keys and numbers, worded for people in the
reader's language: the derived scores and their formulas, the skill
categories, the creation budget's warnings, what each Degeneración level
means (S001) and the steps of a Defensa in combat. ``rules/`` never imports
Django, so its data is translated here, when a page is rendered."""

from __future__ import annotations

from dataclasses import dataclass

from django.utils.translation import gettext, pgettext_lazy
from django.utils.translation import gettext_lazy as _

from rules.hitos_drama import degeneracion_level
from rules.hitos_scores import SKILL_CATEGORIES, BudgetWarning, DerivedScore

# --- skill categories (§4.5) ---------------------------------------------------------

SKILL_CATEGORY_LABELS = {
    "forma_fisica": _("Forma Física"),
    "combate": _("Combate"),
    "interaccion": _("Interacción"),
    "percepcion": _("Percepción"),
    "subterfugio": _("Subterfugio"),
    "cultura": _("Cultura"),
    "profesion": _("Profesión"),
    "ocultismo": _("Ocultismo"),
    "arcana": _("Habilidad Arcana"),
}
SKILL_CATEGORY_CHOICES = [(key, SKILL_CATEGORY_LABELS[key]) for key in SKILL_CATEGORIES]

# --- derived scores (H31–H37) --------------------------------------------------------

SCORE_LABELS = {
    "aguante": _("Aguante"),
    "resistencia": _("Resistencia"),
    "defensa": _("Defensa"),
    "iniciativa": _("Iniciativa"),
    "bono_cuerpo_a_cuerpo": _("Bonificación al daño cuerpo a cuerpo"),
    "bono_distancia": _("Bonificación al daño a distancia"),
    "entereza": _("Entereza"),
    "estabilidad": _("Estabilidad Mental"),
}
# The terms of the formulas: characteristics, skills and other scores.
TERM_LABELS = {
    "fortaleza": _("Fortaleza"),
    "reflejos": _("Reflejos"),
    "voluntad": _("Voluntad"),
    "intelecto": _("Intelecto"),
    "combate": _("Combate"),
    "defence_skill": _("la habilidad de combate o defensa más alta"),
    "aguante": _("Aguante"),
    "entereza": _("Entereza"),
}
ROUNDING_LABELS = {"floor": _("redondeando hacia abajo"), "nearest": _("redondeando")}


@dataclass(frozen=True, slots=True)
class ShownScore:
    """A derived score as a sheet shows it: the rules' numbers, and its name
    and formula in the active language (worded when read)."""

    score: DerivedScore

    @property
    def key(self) -> str:
        return self.score.key

    @property
    def value(self) -> int:
        return self.score.value

    @property
    def worked(self) -> str:
        return self.score.worked

    @property
    def label(self) -> str:
        return str(SCORE_LABELS[self.score.key])

    @property
    def formula(self) -> str:
        """The rule in words, e.g. «Fortaleza + Voluntad ÷ 2 (redondeando hacia abajo)»."""
        formula = self.score.shape.format(*(str(TERM_LABELS[term]) for term in self.score.terms))
        if self.score.rounding is None:
            return formula
        return f"{formula} ({ROUNDING_LABELS[self.score.rounding]})"


def shown_scores(scores: dict[str, DerivedScore]) -> dict[str, ShownScore]:
    return {key: ShownScore(score) for key, score in scores.items()}


# --- health and mental states (H53–H56, H83) ------------------------------------------

STATE_LABELS = {
    "sano": _("Sano"),
    "herido": _("Herido"),
    "incapacitado": _("Incapacitado"),
    "moribundo": _("Moribundo"),
    "cuerdo": _("Cuerdo"),
    "alterado": _("Alterado"),
    "trastornado": _("Trastornado"),
    "enloquecido": _("Enloquecido"),
}


def state_label(state: str) -> str:
    """A health or mental state (``rules.hitos_health``) in the active language."""
    return str(STATE_LABELS[state])


# --- the creation budget (§4.5) ------------------------------------------------------


def budget_warning_text(warning: BudgetWarning) -> str:
    """A budget warning in the active language."""
    values = {"have": warning.have, "want": warning.want}
    match warning.key:
        case "characteristics":
            return gettext("Características: %(have)s puntos repartidos; la partida prevé %(want)s.") % values
        case "skills":
            return gettext("Habilidades: %(have)s puntos repartidos; la partida prevé %(want)s.") % values
        case "hitos":
            return gettext("Hitos: %(have)s; la partida prevé %(want)s.") % values
        case "citas":
            return gettext("Citas: %(have)s; la partida prevé %(want)s.") % values
        case "drama":
            return gettext("Drama: %(have)s; la partida prevé %(want)s.") % values
        case "complications":
            return gettext("Complicaciones: %(have)s; la partida prevé %(want)s.") % values
        case "profesion_missing":
            return gettext("Falta al menos una habilidad de Profesión.")
    raise ValueError(f"Unknown budget warning: {warning.key!r}.")


def budget_warning_texts(warnings: list[BudgetWarning]) -> list[str]:
    return [budget_warning_text(warning) for warning in warnings]


# --- Degeneración (S001 «Interpretar los puntos de degeneración») ---------------------

# S001's words for each level, verbatim in Spanish.
DEGENERACION_TEXTS = {
    "human": _("El personaje es completamente humano."),
    "minor_change": _(
        "El personaje sufre un cambio menor, ya sea físico o psíquico, que incluso a él le costará reconocer. Por su naturaleza puede obviarse, o confundirse fácilmente con un síntoma de una enfermedad poco grave y completamente normal, como un sarpullido, dolores de cabeza o de estómago puntuales, tener sueños extraños con cierta frecuencia, perder más pelo de lo normal, necesitar beber agua frecuentemente, etcétera."
    ),
    "noticed_change": _(
        "El cambio avanza lo suficiente como para que el personaje se dé cuenta de que no es normal. En cualquier caso, sigue siendo bastante fácil ocultarlo."
    ),
    "second_change": _(
        "Además del cambio que ya tenía, comienza a desarrollar otro cambio nuevo, también fácil de ocultar, pero que, por su combinación con el anterior, puede provocar sospechas o ser muy incómodo."
    ),
    "hard_to_hide": _(
        "Ambos cambios se han extendido lo suficiente como para que sea difícil, aunque no imposible, ocultarlos. Otras personas los interpretarán como un problema de salud física o mental, pero no necesariamente lo considerarán fuera de lo «normal»."
    ),
    "evident": _(
        "Los cambios son tan pronunciados que comienzan a ser evidentes y llamativos. Para cualquier observador que entienda sobre los Mitos, su naturaleza estará clara. Para otras personas, empieza a ser algo suficientemente extraño como para evitar al personaje todo lo posible o recurrir a médicos o psiquiatras. Deberían haberse cambiado a estas alturas uno o dos rasgos físicos del personaje para adecuarlos a su nuevo estado."
    ),
    "inhuman": _(
        "El personaje ha perdido la mayoría de su humanidad. Si su afección era solo física, ahora también empieza a ser psíquica, y viceversa. Si ya tenía cuerpo y mente afectados, los cambios se agudizan. Las alteraciones son repugnantes y aquellos inclinados a creer en el bien y el mal las calificarían como «malignas»."
    ),
    "human_exception": _(
        "Ahora la excepción es la parte humana, ya sea del cuerpo, la mente u ambos. La naturaleza del cambio será evidente. Por ejemplo, si la Degeneración está convirtiendo al personaje en una criatura anfibia, cualquiera se daría cuenta de que está más cerca de ser un hombre rana que de un humano. En este estado, el personaje difícilmente podría ser considerado como humano por un forense. Además, su corrupción empieza a dejar una huella indescriptible y maligna, pero casi palpable, en los lugares que frecuenta."
    ),
    "aberrant": _(
        "Llegados a este punto, solo unos pocos rasgos físicos o mentales del personaje deberían seguir siendo humanos, dos o tres como mucho. El resto de él es claramente aberrante y antinatural. Casi cualquiera que lo viera pensaría que se trata de un monstruo o un alienígena, y no sería fácil creer que en algún momento fue humano. Su entorno habitual estará claramente corrompido. Por ejemplo, si viviera en una vieja casa, la gente sentiría un rechazo a siquiera acercarse a ella, aun sin conocer su fama o las leyendas ni saber de su habitante."
    ),
    "abominable": _(
        "En este nivel de Degeneración el personaje solo mantiene una mínima conexión con lo humano. El resto de él es abominable y, de hecho, su maligna presencia es algo casi palpable, aunque no sea visible. Esta corrupción afecta de una forma muy grave a todo su entorno habitual y deja una huella detectable allá por donde pasa."
    ),
    "mythos_creature": _(
        "Finalmente, el personaje ha perdido su último vestigio de humanidad. Su aspecto físico es grotescamente monstruoso y resulta a la par repulsivo y perturbador. Su mente es ya totalmente alienígena y sus motivos y razones son incomprensibles para un ser humano normal. Sus alteraciones impiden que pueda comunicarse con criaturas que no son como él y sus costumbres, alimentación y ciclo vital son totalmente ajenos a los de un ser humano. Puede que ahora el personaje sea inmortal o de una gran longevidad, capaz de respirar gases tóxicos o viajar instantáneamente en el tiempo y el espacio, pero ha roto hasta el más fino hilo que lo atara a nuestra realidad. Es ya una criatura de los Mitos y como tal no puede interpretarse más por su jugador. En adelante será un personaje no jugador controlado por del director de juego."
    ),
}


def degeneracion_text(level: int) -> str:
    """What Degeneración ``level`` (0–10) means, in the active language."""
    return str(DEGENERACION_TEXTS[degeneracion_level(level)])


# --- combat (H38, H43, H48, H49) -----------------------------------------------------

# The steps of a Defensa (``rules.hitos_combat.defence_difficulty``), stored by key in ``Attack.defence``.
DEFENCE_PART_LABELS = {
    "desprevenido": _("desprevenido"),
    "defensa total": _("defensa total"),
    "indefenso": _("indefenso"),
    "estado": _("estado"),
}
# What a critical or fumble proposes (``rules.hitos_combat.critical_effect``), and for how long.
EFFECT_KIND_LABELS = {
    "secuela temporal": pgettext_lazy("a proposed effect", "secuela temporal"),
    "aspecto negativo": pgettext_lazy("a proposed effect", "aspecto negativo"),
    "aspecto beneficioso": pgettext_lazy("a proposed effect", "aspecto beneficioso"),
    "aspecto perjudicial": pgettext_lazy("a proposed effect", "aspecto perjudicial"),
}
EFFECT_DURATION_LABELS = {"escena": _("una escena"), "sesión": _("una sesión")}


def defence_parts(defence: dict) -> list[tuple[str, int]]:
    """The named steps of a stored Defensa, named in the active language
    (a key this version does not know is shown as stored)."""
    return [(str(DEFENCE_PART_LABELS.get(key, key)), value) for key, value in defence.get("parts", [])]
