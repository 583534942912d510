"""Template filters of HITOS at the table: the roll card's activation actions,
the GM's pool."""

from django import template

from systems.hitos import campaign as campaign_state

register = template.Library()


@register.filter
def dice_numbers(positions) -> str:
    """Dice positions (0–2) as players count them (1–3)."""
    return ", ".join(str(p + 1) for p in positions or ())


@register.filter
def gm_pool(campaign) -> int:
    """The GM's drama points (H24) of a HITOS campaign."""
    return campaign_state.gm_pool(campaign)
