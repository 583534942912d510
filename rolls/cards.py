"""The roll card's context: one partial (``rolls/_roll_card.html``) shows a
roll in a post, on its permalink page and in the campaign's roll log.

Everything the card shows is decided here (which die is kept, the margin,
whether a hidden difficulty may be shown): the template only prints it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from campaigns.models import Membership, Role
from rolls.models import RollEntry, TableRoll
from rules import hitos

# The die a reading keeps: C normally (H2), M after a positive re-roll (H15),
# m after a negative one (H19).
KEPT_LETTER = {hitos.Reading.NORMAL: "C", hitos.Reading.POSITIVE: "M", hitos.Reading.NEGATIVE: "m"}
SHORT_HASH = 12


def is_gm_of(user, campaign) -> bool:
    """The GM or a co-GM of ``campaign`` (no query for the GM)."""
    if user is None or not user.is_authenticated:
        return False
    if campaign.gm_id == user.pk:
        return True
    return Membership.objects.active().filter(campaign=campaign, user=user, role=Role.COGM).exists()


def chain_of(entry: RollEntry) -> list[RollEntry]:
    """Every version of the roll up to ``entry``, oldest first (one query per
    version: for a single card; pages with many use ``chains_by_latest``)."""
    versions = [entry]
    node = entry
    while node.parent_id:
        node = RollEntry.objects.select_related("user").get(pk=node.parent_id)
        versions.insert(0, node)
    return versions


def chains_by_latest(entries: Iterable[RollEntry]) -> dict[int, list[RollEntry]]:
    """For rows loaded together (every entry of some posts), each entry's chain
    of versions up to itself, oldest first, keyed by the entry's id."""
    by_id = {e.pk: e for e in entries}
    chains: dict[int, list[RollEntry]] = {}
    for entry in by_id.values():
        versions = [entry]
        node = entry
        while node.parent_id and node.parent_id in by_id:
            node = by_id[node.parent_id]
            versions.insert(0, node)
        chains[entry.pk] = versions
    return chains


def _version(entry: RollEntry, *, current: bool) -> dict[str, Any]:
    signed = entry.entry
    return {
        "entry": entry,
        "seq": signed.get("seq"),
        "dice": signed.get("dice") or [],
        "reroll": signed.get("kind") == RollEntry.Kind.REROLL,
        "rerolled": entry.rerolled_dice_numbers,
        "activation": signed.get("activation") or "",
        "aspect": signed.get("aspect") or "",
        "current": current,
    }


def _shown_difficulty(game: dict, table_roll: TableRoll | None, is_gm: bool, known: int | None = None) -> int | None:
    """The difficulty the reader may see as a number: a hidden one only to the
    GM, and only when the table roll (which keeps it) or ``known`` is at hand."""
    difficulty = game.get("difficulty")
    if difficulty == "hidden":
        if not is_gm:
            return None
        if table_roll is not None and table_roll.difficulty is not None:
            return table_roll.difficulty
        return known
    if isinstance(difficulty, int) and not isinstance(difficulty, bool):
        return difficulty
    return None


def _margin(entry: RollEntry, game: dict, difficulty: int | None) -> int | None:
    if difficulty is None:
        return None
    dice = entry.entry.get("dice") or []
    try:
        roll = hitos.HitosRoll(tuple(dice), game.get("reading") or hitos.Reading.NORMAL)
    except ValueError:
        return None
    return hitos.check(roll, int(game.get("modifier") or 0), difficulty).margin


def card_context(
    entry: RollEntry,
    *,
    table_roll: TableRoll | None = None,
    user=None,
    is_gm: bool | None = None,
    is_player: bool = False,
    versions: Sequence[RollEntry] | None = None,
    compact: bool = False,
    known_difficulty: int | None = None,
) -> dict[str, Any]:
    """What ``rolls/_roll_card.html`` needs for ``entry`` (a roll's latest
    version, or any version on the permalink page).

    ``is_gm`` is worked out from ``user`` when not given; ``versions`` (the
    chain up to ``entry``, oldest first) is loaded when not given and the
    entry is a re-roll. ``compact`` leaves out the purpose and the chain (the
    roll log shows them in its own columns). ``known_difficulty`` is a hidden
    difficulty the caller looked up for the GM without the table roll.
    """
    signed = entry.entry
    game = signed.get("game") or {}
    if is_gm is None:
        campaign = table_roll.campaign if table_roll is not None else entry.campaign
        is_gm = is_gm_of(user, campaign)
    hitos_card = game.get("system") == "hitos"
    difficulty = _shown_difficulty(game, table_roll, is_gm, known_difficulty) if hitos_card else None
    if compact:
        chain: list[dict[str, Any]] = []
    else:
        if versions is None:
            versions = chain_of(entry) if entry.parent_id else [entry]
        chain = [_version(v, current=v.pk == entry.pk) for v in versions] if len(versions) > 1 else []
    reading = game.get("reading") or hitos.Reading.NORMAL
    return {
        "entry": entry,
        "signed_entry": signed,
        "game": game,
        "table_roll": table_roll,
        "user": user,
        "is_gm": is_gm,
        "is_player": is_player,
        "kept": KEPT_LETTER.get(reading, "C") if hitos_card else "",
        "difficulty_hidden": game.get("difficulty") == "hidden",
        "shown_difficulty": difficulty,
        "margin": _margin(entry, game, difficulty) if hitos_card else None,
        "chain": chain,
        "short_hash": entry.entry_hash[:SHORT_HASH],
        "compact": compact,
        "card_id": f"tirada-{table_roll.pk}" if table_roll is not None else f"roll-card-{entry.permalink}",
    }
