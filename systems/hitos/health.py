"""The sheet's own tests rolled at the table (``sheets.rolling``): the
mass-damage and trauma tests and the healing and recovery rolls are HITOS
checks like any other — a table roll with its card, open to activations and
re-rolls (K16) — and a re-roll re-reads the meter (``checks.table_reroll``
calls ``sheets.services.meter_reread``)."""

from __future__ import annotations

from systems.hitos.checks.services import CheckSetup, owner_for, table_check, table_result
from systems.hitos.models import TableRollKind


def meter_check(
    *, campaign, user, purpose, modifier, difficulty, breakdown, character=None, post=None, scene=None, facts=None
):
    """Roll a sheet's test as a table roll; returns its entry and its check."""
    table_roll = table_check(
        campaign=campaign,
        user=user,
        setup=CheckSetup(modifier, tuple(tuple(part) for part in breakdown), purpose),
        purpose=purpose,
        difficulty=difficulty,
        character=character,
        scene=scene,
        post=post,
        kind=TableRollKind.METER,
        owner=owner_for(character, user),
        facts=facts,
    )
    return table_roll.latest, table_result(table_roll)
