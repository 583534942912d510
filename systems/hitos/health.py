"""The sheet's own tests rolled at the table: the
mass-damage and trauma tests and the healing and recovery rolls are HITOS
checks like any other — a table roll with its card, open to activations and
re-rolls (K16) — and a re-roll re-reads the meter (``checks.table_reroll``
calls ``sheet.services.meter_reread``)."""

from __future__ import annotations

# A module, not its names: the checks re-read the sheet's meters (``sheet.services``).
from systems.hitos.checks import services as checks
from systems.hitos.models import TableRollKind
from table.models import TableRoll


def meter_check(
    *,
    campaign,
    user,
    purpose,
    modifier,
    difficulty,
    breakdown,
    character=None,
    post=None,
    scene=None,
    facts=None,
    client_seed: str | None = None,
):
    """Roll a sheet's test as a table roll; returns its entry and its check.
    ``client_seed``: the page's browser seed (rollog/v1 §3.3); the server
    makes one without it."""
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
        client_seed=client_seed,
    )
    return table_roll.latest, checks.table_result(table_roll)


def meter_check_made(entry):
    """The sheet's test ``entry`` began, as it stands now (after any
    activation's re-roll): its latest entry and its check; None when
    ``entry`` began no sheet's test (a retried meter form finds its roll)."""
    table_roll = (
        TableRoll.objects.select_related("latest", "campaign").filter(first=entry, kind=TableRollKind.METER).first()
    )
    if table_roll is None:
        return None
    return table_roll.latest, checks.table_result(table_roll)
