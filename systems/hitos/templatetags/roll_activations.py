"""Template filters of the roll card's activation actions."""

from django import template

register = template.Library()


@register.filter
def dice_numbers(positions) -> str:
    """Dice positions (0–2) as players count them (1–3)."""
    return ", ".join(str(p + 1) for p in positions or ())
