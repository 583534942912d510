"""How a HITOS check reads in the signed log: the game fields signed into
each entry (``game["system"] == "hitos"``), and a 3d10 check appended through
the log's ``roll_append`` with them. The log itself knows no game: it signs
whatever fields a reader gives it (``rolls.services.Reader``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from campaigns.models import Campaign
from rolls import rollog
from rolls.models import RollEntry
from rolls.services import Reader, roll_append
from rules import hitos
from rules.hitos_options import HitosOptions
from systems.hitos.campaign import rules_options


def campaign_options(campaign: Campaign) -> HitosOptions:
    return rules_options(campaign)


def hitos_reader(
    *,
    campaign: Campaign,
    what: str,
    modifier: int,
    difficulty: int | None,
    difficulty_hidden: bool = False,
    breakdown: Sequence[tuple[str, int]] = (),
    reading: hitos.Reading = hitos.Reading.NORMAL,
    options: HitosOptions | None = None,
) -> Reader:
    """Signed game fields of a HITOS check: what was rolled, the modifier
    breakdown, the difficulty (or that it is hidden) and the reading.

    A hidden difficulty is not written into the entry, which anyone holding
    the permalink can read; only whether the check succeeded is.
    """
    if options is None:
        options = campaign_options(campaign)

    def read(dice: list[int]) -> dict[str, Any]:
        result = hitos.check(hitos.HitosRoll(tuple(dice), reading), modifier, difficulty or 0, options)
        data = result.to_dict()
        fields = {
            "system": "hitos",
            "what": rollog.normalise_purpose(what),
            "breakdown": [[rollog.normalise_purpose(str(label)), value] for label, value in breakdown],
            "reading": data["reading"],
            "labels": data["labels"],
            "m": data["m"],
            "C": data["C"],
            "M": data["M"],
            "value": data["value"],
            "modifier": modifier,
            "total": data["total"],
            "critical": data["critical_level"],
            "fumble": data["fumble_level"],
        }
        if difficulty is None:
            fields["difficulty"] = None
        else:
            fields["difficulty"] = "hidden" if difficulty_hidden else difficulty
            fields["success"] = result.success
        return fields

    return read


# No transaction of its own: roll_append is the only write and has one (a
# nested atomic block would cost a savepoint round trip per roll).
def hitos_check_roll(
    *,
    campaign: Campaign,
    user,
    purpose: str,
    modifier: int,
    difficulty: int | None,
    difficulty_hidden: bool = False,
    breakdown: Sequence[tuple[str, int]] = (),
    what: str | None = None,
    character=None,
    scene=None,
    post=None,
    secret: bool = False,
    client_seed: str | None = None,
    seen: str | None = None,
) -> tuple[RollEntry, hitos.CheckResult]:
    """3d10 through the log, read as a HITOS check with the campaign's options.

    ``what`` is what was rolled ("Reflejos + Sigilo"); it defaults to ``purpose``.
    """
    options = campaign_options(campaign)
    read = hitos_reader(
        campaign=campaign,
        options=options,
        what=purpose if what is None else what,
        modifier=modifier,
        difficulty=difficulty,
        difficulty_hidden=difficulty_hidden,
        breakdown=breakdown,
    )
    entry = roll_append(
        campaign=campaign,
        user=user,
        spec="3d10",
        purpose=purpose,
        read=read,
        character=character,
        scene=scene,
        post=post,
        secret=secret,
        client_seed=client_seed,
        seen=seen,
    )
    dice = tuple(entry.entry["dice"])
    result = hitos.check(hitos.HitosRoll(dice), modifier, difficulty or 0, options)
    return entry, result
