"""Template filters of the roll card's activation actions."""

from django import template

from rolls.activations import is_overdue, may_force_degeneracion

register = template.Library()


@register.filter
def overdue(activation) -> bool:
    """Whether the deadline to answer a pending activation has passed."""
    return is_overdue(activation)


@register.filter
def dice_numbers(positions) -> str:
    """Dice positions (0–2) as players count them (1–3)."""
    return ", ".join(str(p + 1) for p in positions or ())


@register.filter
def pending_activation(table_roll):
    """The roll's activation waiting for an answer, read from the prefetched
    ``activations`` (no query when the page prefetched them)."""
    for activation in table_roll.activations.all():
        if activation.status == "pending":
            return activation
    return None


@register.filter
def forceable(table_roll, is_gm) -> list:
    """The roll's activations on which the GM may force Degeneración (H92),
    from the prefetched ``activations``."""
    return [a for a in table_roll.activations.all() if may_force_degeneracion(a, bool(is_gm))]
