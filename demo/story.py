"""What the demo's narrator says after each roll, chosen from the roll's real
outcome, and the horror level the demo can afford.

The demo's dice are real (signed, in the log, different on every load), so
the story cannot be written in advance: each narration below is picked from
what the dice gave. Nothing here rolls or writes; ``demo.table`` does, through
the project's services, and posts these texts as the narrator.
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import combinations_with_replacement

from rules import hitos
from rules.hitos_health import (
    HORROR_LEVELS,
    HealthState,
    HorrorLevel,
    horror,
    massive_test_due,
    shift_horror,
)
from rules.hitos_options import DEFAULT_OPTIONS, HitosOptions
from rules.meters import Meter

# The narrator's name on the demo's posts (an NPC voice of the GM).
NARRATOR = "Narración"

# Every distinct 3d10 roll; the order of the dice does not change a horror
# test (its value and loss code read the sorted dice).
_ALL_ROLLS = tuple(
    hitos.HitosRoll(dice) for dice in combinations_with_replacement(range(1, hitos.FACES + 1), hitos.DICE)
)


def horror_is_safe(
    level: HorrorLevel,
    *,
    meter: Meter,
    entereza: int,
    degeneracion: int,
    modifier: int = 0,
    options: HitosOptions = DEFAULT_OPTIONS,
) -> bool:
    """Whatever the dice, an exposure at ``level`` (already shifted) leaves the
    sanity meter with boxes to spare and calls for no trauma test (H77): a
    failed trauma test slashes every box left, which would leave the
    character Enloquecido from the start of the demo. ``modifier`` is what the
    exposure test adds to Entereza (``systems.hitos.horror.services.exposure_setup``)."""
    for roll in _ALL_ROLLS:
        loss = horror(
            level, roll, entereza=entereza, degeneracion=degeneracion, modifier=modifier, options=options
        ).loss
        if massive_test_due(loss, entereza) or meter.mark(loss).empty == 0:
            return False
    return True


def safe_horror_level(
    exposed: Iterable[tuple[object, int, int]], *, options: HitosOptions = DEFAULT_OPTIONS
) -> HorrorLevel | None:
    """The strongest level of ``rules.hitos_health.HORROR_LEVELS`` that is
    safe (``horror_is_safe``) for every exposed character once their aspect
    shift (H81) moves it; ``exposed`` holds (``HitosSheet``, shift, the
    test's modifier beyond Entereza) triples.
    None when not even the mildest is."""
    exposed = list(exposed)
    for level in reversed(HORROR_LEVELS):
        if all(
            horror_is_safe(
                shift_horror(level, shift),
                meter=sheet.mental_meter,
                entereza=sheet.entereza,
                degeneracion=sheet.degeneracion,
                modifier=modifier,
                options=options,
            )
            for sheet, shift, modifier in exposed
        ):
            return level
    return None


def _points(n: int) -> str:
    return f"{n} punto" if n == 1 else f"{n} puntos"


# --- Scene «1. La verja oxidada» ------------------------------------------------------


def garden_narration(*, footprints: bool, stealth: bool, coins: int) -> str:
    """After Inés's Percepción (re-rolled), Tomás's Sigilo and the coachman's coins."""
    lines = [
        "En el barro junto a la verja hay huellas recientes: botas de hombre, que van hacia la casa y no vuelven."
        if footprints
        else "La lluvia ha convertido el barro en una sopa: si alguien pasó por aquí, no dejó rastro que Inés sepa leer.",
        "Tomás cruza el jardín pegado al seto y nadie en la casa parece darse cuenta."
        if stealth
        else "A mitad del jardín, la grava cruje bajo las botas de Tomás; en una ventana del piso alto "
        "se mueve una cortina.",
        f"Antes de irse, el cochero se vacía el bolsillo en la mano y cuenta sus monedas: {coins}. "
        "No le dan ni para vino; escupe al suelo y arrea a los caballos.",
    ]
    return "\n\n".join(lines)


# --- Scene «2. El sótano» -------------------------------------------------------------


def ledger_narration(*, success: bool) -> str:
    if success:
        return (
            "Entre columnas de cifras, Inés encuentra un pago que se repite cada mes desde 1903, "
            "siempre el día de luna nueva: *«Para el pozo.»*"
        )
    return (
        "Las cifras bailan a la luz del farol y la letra del abuelo es imposible. "
        "Inés solo saca en claro que pagaba algo cada mes, siempre el mismo día."
    )


def steps_narration(*, success: bool) -> str:
    if success:
        return "Tomás pisa el musgo, se tambalea y recupera el equilibrio con una mano en la pared."
    return (
        "El pie de Tomás se va sobre el musgo y baja los últimos escalones resbalando. "
        "Se levanta con el orgullo magullado; el farol, por suerte, sigue encendido."
    )


def attack_narration(*, shots: int, damage: int | None, state: str) -> str:
    """``damage``: what the hit did after RD (None when no shot hit);
    ``state``: the creature's health state once it is applied (a failed
    mass-damage test, H52, may leave it Moribundo)."""
    tried = "Tomás dispara una vez." if shots == 1 else f"Tomás dispara {shots} veces."
    if damage is None:
        return (
            f"{tried} Las balas se pierden en la oscuridad y la cosa del pozo sigue subiendo, "
            "sin prisa, como si supiera que tiene toda la noche."
        )
    if damage == 0:
        return f"{tried} Una bala le acierta, pero no le atraviesa la piel. La cosa ni se detiene."
    hit = f"{tried} Una bala le acierta y le hace {_points(damage)} de daño."
    effect = {
        HealthState.SANO: "La cosa ni se detiene: mira la herida con curiosidad y sigue avanzando.",
        HealthState.HERIDO: "La cosa chilla, un sonido de agua en una tubería, y retrocede hacia el brocal.",
        HealthState.INCAPACITADO: "La cosa se dobla sobre sí misma y se arrastra a duras penas junto al pozo.",
        HealthState.MORIBUNDO: "Es demasiado para ella: la cosa se desploma junto al brocal y su respiración "
        "es un gorgoteo cada vez más débil.",
    }[state]
    return f"{hit} {effect}"


def horror_narration(exposures: Iterable[tuple[str, bool, bool, int]]) -> str:
    """One sentence per exposed character: (name, exempt, passed, points lost)."""
    lines = []
    for name, exempt, passed, lost in exposures:
        if exempt:
            lines.append(f"{name} ha visto cosas peores: ni se inmuta.")
        elif passed and lost:
            lines.append(
                f"A {name} se le encoge el estómago, pero aguanta: pierde {_points(lost)} de Estabilidad mental."
            )
        elif lost:
            lines.append(
                f"A {name} se le hiela la sangre y algo se le quiebra por dentro: "
                f"pierde {_points(lost)} de Estabilidad mental."
            )
        elif passed:
            lines.append(f"{name} aguanta la mirada de la cosa sin perder la calma.")
        else:
            lines.append(
                f"{name} se estremece, pero se repone enseguida: no pierde ningún punto de Estabilidad mental."
            )
    return "\n\n".join(lines)


def key_narration(*, success: bool) -> str:
    if success:
        return (
            "Los dedos de Inés encuentran la llave y la sueltan del cinturón sin un ruido. "
            "Es de hierro, y está fría como el agua del pozo."
        )
    return (
        "La mano de Inés roza el cinturón; la cabeza de la cosa gira hacia ella y Inés se aparta a tiempo. "
        "La llave sigue donde estaba."
    )


def steps_left_narration(*, steps: int) -> str:
    if steps == 1:
        return "Solo falta un escalón hasta el agua negra del fondo."
    return f"Faltan {steps} escalones hasta el agua negra del fondo."
