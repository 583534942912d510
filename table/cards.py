"""The roll card's context: one partial (``rolls/_roll_card.html``) shows a
roll in a post, on its permalink page and in the campaign's roll log.

Everything the card shows is decided here (which die is kept, the margin,
whether a hidden difficulty may be shown): the template only prints it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from django.contrib.auth.models import AnonymousUser
from django.core.exceptions import PermissionDenied
from django.db.models import Prefetch, Q

from campaigns.permissions import Access, Standing, campaign_access
from rolls.models import Activation, RollEntry, TableRoll
from rules import hitos
from sheets.models import Character
from systems.hitos.activations import services as activations
from systems.hitos.checks.services import reroll_refusal, reroll_refusals

# The die a reading keeps: C normally (H2), M after a positive re-roll (H15),
# m after a negative one (H19).
KEPT_LETTER = {hitos.Reading.NORMAL: "C", hitos.Reading.POSITIVE: "M", hitos.Reading.NEGATIVE: "m"}
SHORT_HASH = 12


def activations_prefetch(prefix: str = "") -> Prefetch:
    """What a card's actions read of each roll's activations (``prefix`` is
    the path to the table roll, e.g. ``"table_roll__"``), so that a page of
    cards costs the same number of queries whatever its length."""
    return Prefetch(
        f"{prefix}activations",
        queryset=Activation.objects.select_related("activator", "activator_character", "target_character").order_by(
            "pk"
        ),
    )


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


# --- What the user may do with the card (asked of ``systems.hitos.activations.services``) -------------------


HasCharacter = Callable[[], bool]


def _once(compute: HasCharacter) -> HasCharacter:
    """``compute``'s answer, worked out the first time it is asked for."""
    known: list[bool] = []

    def answer() -> bool:
        if not known:
            known.append(compute())
        return known[0]

    return answer


def _has_character(user, campaign) -> HasCharacter:
    """Whether the user has an approved character in the campaign (one
    query, the first time it is asked): what the activations services look
    for when a player helps with, or acts against, someone else's roll."""
    return _once(lambda: Character.objects.approved().filter(campaign=campaign, owner=user).exists())


def _known(value: bool) -> HasCharacter:
    return lambda: value


def _permitted(check, *args) -> bool:
    try:
        check(*args)
    except PermissionDenied:
        return False
    return True


def _helps_others(table_roll: TableRoll, user, access: Access) -> bool:
    """A player and a roll that is not theirs: the services then look up the
    player's approved character (``activations._approved_pc``)."""
    character = table_roll.character
    return access.is_player and table_roll.owner_id != user.pk and (character is None or character.owner_id != user.pk)


def _may_activate_positive(table_roll: TableRoll, user, access: Access, has_character: HasCharacter) -> bool:
    """``activations.positive_activator`` without its query: a player helping
    with someone else's player character's roll (or one without a character)
    needs an approved character of their own."""
    character = table_roll.character
    if _helps_others(table_roll, user, access) and (character is None or not character.is_npc):
        return has_character()
    return _permitted(activations.positive_activator, table_roll, user, access)


def _may_activate_negative(table_roll: TableRoll, user, access: Access, has_character: HasCharacter) -> bool:
    """``activations.negative_activator`` without its query: a player acting
    against another's roll needs an approved character of their own."""
    if _helps_others(table_roll, user, access) and table_roll.character is not None:
        return has_character()
    return _permitted(activations.negative_activator, table_roll, user, access)


def _access_for(user, campaign, *, is_gm: bool, is_player: bool) -> Access:
    """The standing the card was told (the services only ask ``is_gm`` and ``is_player``)."""
    if is_gm:
        standing = Standing.COGM
    elif is_player:
        standing = Standing.PLAYER
    else:
        standing = Standing.READER if user.is_authenticated else Standing.ANONYMOUS
    return Access(user, campaign, standing)


def _actions(
    table_roll: TableRoll, user, access: Access, has_character: HasCharacter, can_reroll: bool
) -> dict[str, Any]:
    """What ``rolls/_roll_actions.html`` offers, from the prefetched activations."""
    signed_in = user.is_authenticated
    roll_activations = list(table_roll.activations.all())
    pending = next((a for a in roll_activations if a.status == Activation.Status.PENDING), None)
    idle = signed_in and pending is None and can_reroll
    return {
        "pending": pending,
        "can_answer": signed_in and pending is not None and activations.may_answer(pending, user, access),
        "can_settle": access.is_gm and pending is not None and activations.is_overdue(pending),
        "can_reroll": can_reroll,
        "can_activate_positive": idle and _may_activate_positive(table_roll, user, access, has_character),
        "can_activate_negative": idle and _may_activate_negative(table_roll, user, access, has_character),
        "forceable": [a for a in roll_activations if activations.may_force_degeneracion(a, access.is_gm)]
        if access.is_gm and table_roll.arcane
        else [],
    }


NO_ACTIONS = {
    "pending": None,
    "can_answer": False,
    "can_settle": False,
    "can_reroll": False,
    "can_activate_positive": False,
    "can_activate_negative": False,
    "forceable": [],
}


# --- The card ---------------------------------------------------------------------------


def card_context(
    entry: RollEntry,
    *,
    table_roll: TableRoll | None = None,
    user=None,
    is_gm: bool | None = None,
    is_player: bool = False,
    access: Access | None = None,
    has_character: bool | HasCharacter | None = None,
    can_reroll: bool | None = None,
    versions: Sequence[RollEntry] | None = None,
    compact: bool = False,
    known_difficulty: int | None = None,
) -> dict[str, Any]:
    """What ``rolls/_roll_card.html`` needs for ``entry`` (a roll's latest
    version, or any version on the permalink page), as its ``card``.

    ``is_gm`` is worked out from ``user`` when not given; ``access`` (the
    user's) is built from ``is_gm``/``is_player`` when not given. With a
    table roll (its ``activations`` prefetched with ``activations_prefetch``)
    the card says what the user may do with it, asking ``systems.hitos.activations.services``;
    ``has_character`` is whether the user has an approved character in the
    campaign (looked up once when needed and not given); ``can_reroll``
    whether ``systems.hitos.checks.services.reroll_refusal`` lets the roll be re-rolled
    (asked when not given). ``versions`` (the
    chain up to ``entry``, oldest first) is loaded when not given and the
    entry is a re-roll. ``compact`` leaves out the purpose and the chain (the
    roll log shows them in its own columns). ``known_difficulty`` is a hidden
    difficulty the caller looked up for the GM without the table roll.
    """
    signed = entry.entry
    game = signed.get("game") or {}
    user = user if user is not None else AnonymousUser()
    if is_gm is None:
        campaign = table_roll.campaign if table_roll is not None else entry.campaign
        is_gm = access.is_gm if access is not None else campaign_access(user, campaign).is_gm
    hitos_card = game.get("system") == "hitos"
    difficulty = _shown_difficulty(game, table_roll, is_gm, known_difficulty) if hitos_card else None
    if compact:
        chain: list[dict[str, Any]] = []
    else:
        if versions is None:
            versions = chain_of(entry) if entry.parent_id else [entry]
        chain = [_version(v, current=v.pk == entry.pk) for v in versions] if len(versions) > 1 else []
    reading = game.get("reading") or hitos.Reading.NORMAL
    if table_roll is None:
        actions = NO_ACTIONS
    else:
        if access is None:
            access = _access_for(user, table_roll.campaign, is_gm=is_gm, is_player=is_player)
        if has_character is None:
            has_character = _has_character(user, table_roll.campaign)
        elif isinstance(has_character, bool):
            has_character = _known(has_character)
        if can_reroll is None:
            can_reroll = reroll_refusal(table_roll) is None
        actions = _actions(table_roll, user, access, has_character, can_reroll)
    return {
        **actions,
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


def _chains(table_rolls: list[TableRoll], campaign) -> dict[int, list[RollEntry]]:
    """Each roll's versions, oldest first, in at most one query: the re-rolls
    logged between the first re-rolled roll's first version and the last
    re-rolled roll's latest, of the same characters (a re-roll keeps its
    roll's character), so other rolls of the campaign stay out
    (``first`` and ``latest`` are already loaded)."""
    entries = [tr.first for tr in table_rolls] + [tr.latest for tr in table_rolls]
    rerolled = [tr for tr in table_rolls if tr.latest_id != tr.first_id]
    if rerolled:
        low = min(tr.first.seq for tr in rerolled)
        high = max(tr.latest.seq for tr in rerolled)
        characters = {tr.character_id for tr in rerolled}
        same_character = Q(character_id__in=characters - {None})
        if None in characters:
            same_character |= Q(character__isnull=True)
        entries += RollEntry.objects.filter(
            same_character, campaign=campaign, parent__isnull=False, seq__gt=low, seq__lt=high
        ).select_related("user")
    return chains_by_latest(entries)


def cards_for(
    table_rolls: Iterable[TableRoll],
    *,
    access: Access,
    user=None,
    has_character: bool | None = None,
) -> dict[int, dict[str, Any]]:
    """The card of each table roll of a page, by the table roll's id, in a
    constant number of queries: the rolls come with ``first`` and
    ``latest`` (and their ``user``), ``character`` and ``activations_prefetch()``;
    this adds at most one query for the re-rolls' versions and one for
    whether a player has an approved character (unless ``has_character``
    says it), and at most two for whether attacks and opposed rolls may
    still be re-rolled (``systems.hitos.checks.services.reroll_refusals``)."""
    table_rolls = list(table_rolls)
    if not table_rolls:
        return {}
    campaign = access.campaign
    user = access.user if user is None else user
    for table_roll in table_rolls:
        table_roll.campaign = campaign
    chains = _chains(table_rolls, campaign)
    known = _has_character(user, campaign) if has_character is None else _known(has_character)
    refusals = reroll_refusals(table_rolls)
    return {
        tr.pk: card_context(
            tr.latest,
            table_roll=tr,
            user=user,
            is_gm=access.is_gm,
            is_player=access.is_player,
            access=access,
            has_character=known,
            can_reroll=refusals[tr.pk] is None,
            versions=chains[tr.latest_id],
        )
        for tr in table_rolls
    }
