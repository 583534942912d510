"""The sheet's own tests rolled at the table: the
mass-damage and trauma tests and the healing and recovery rolls are HITOS
checks like any other — a table roll with its card, open to activations and
re-rolls (K16) — and a re-roll re-reads the meter (``checks.table_reroll``
calls ``sheet.services.meter_reread``)."""

from __future__ import annotations

# A module, not its names: the checks re-read the sheet's meters (``sheet.services``).
from systems.hitos.checks import services as checks
from systems.hitos.models import TableRollKind


def meter_check(
    *, campaign, user, purpose, modifier, difficulty, breakdown, character=None, post=None, scene=None, facts=None
):
    """Roll a sheet's test as a table roll; returns its entry and its check."""
    table_roll = checks.table_check(
        campaign=campaign,
        user=user,
        setup=checks.CheckSetup(modifier, tuple(tuple(part) for part in breakdown), purpose),
        purpose=purpose,
        difficulty=difficulty,
        character=character,
        scene=scene,
        post=post,
        kind=TableRollKind.METER,
        owner=checks.owner_for(character, user),
        facts=facts,
    )
    return table_roll.latest, checks.table_result(table_roll)
