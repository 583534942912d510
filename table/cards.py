"""The roll card: one frame (``table/_roll_card.html``) shows a roll in a
post, on its permalink page, in the campaign's roll log and on the game
systems' pages (combat, horror …).

The frame is the table's: the purpose, the signature and the versions. The
body, and the actions a reader may take, come from the game system that
signed the roll (its entry's ``game["system"]``, never the campaign's, as a
permalink has no table roll): ``table.systems``. A roll no system reads (a
free roll, or a game no longer installed) shows the log's plain body.

Every builder takes the reader's ``Access``; nothing costs a query the
caller did not ask for, and a page of cards costs the same number of
queries whatever its length (``cards_for``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from django.db.models import Q

from campaigns.permissions import Access
from rolls.models import RollEntry
from table import systems
from table.models import TableRoll

SHORT_HASH = 12


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


def frame(
    entry: RollEntry,
    *,
    table_roll: TableRoll | None = None,
    versions: Sequence[RollEntry] | None = None,
    compact: bool = False,
) -> dict[str, Any]:
    """What every card shows, whatever its game: ``entry`` (a roll's latest
    version, or any version on the permalink page), its signature and, unless
    ``compact`` (the roll log has its own columns), its chain of versions
    (``versions``, oldest first, loaded when not given and ``entry`` is a
    re-roll)."""
    signed = entry.entry
    chain: list[dict[str, Any]] = []
    if not compact:
        if versions is None:
            versions = chain_of(entry) if entry.parent_id else [entry]
        if len(versions) > 1:
            chain = [_version(v, current=v.pk == entry.pk) for v in versions]
    return {
        "entry": entry,
        "signed_entry": signed,
        "game": signed.get("game") or {},
        "table_roll": table_roll,
        "chain": chain,
        "short_hash": entry.entry_hash[:SHORT_HASH],
        "compact": compact,
        "card_id": f"tirada-{table_roll.pk}" if table_roll is not None else f"roll-card-{entry.permalink}",
        "body_template": "",
        "actions_template": "",
    }


def card(
    entry: RollEntry,
    *,
    access: Access,
    table_roll: TableRoll | None = None,
    versions: Sequence[RollEntry] | None = None,
    compact: bool = False,
) -> dict[str, Any]:
    """One roll's card for the reader ``access`` (a permalink, an answer to
    an htmx action). With a table roll, its system's actions are worked out
    too (a few queries: pages use ``cards_for``)."""
    base = frame(entry, table_roll=table_roll, versions=versions, compact=compact)
    system = systems.for_game(base["game"])
    return base if system is None else system.card(base, access=access, table_roll=table_roll)


def permalink_card(entry: RollEntry, *, access: Access, versions: Sequence[RollEntry]) -> dict[str, Any]:
    """A version's card on its permalink page. The actions act on a roll's
    latest version: only there is the table roll (and its actions) given."""
    table_roll = (
        TableRoll.objects.filter(first=versions[0], latest=entry)
        .select_related("character", "owner")
        .prefetch_related(*card_prefetches(entry.campaign))
        .first()
    )
    if table_roll is not None:
        table_roll.campaign = entry.campaign
    return card(entry, access=access, table_roll=table_roll, versions=versions)


def badge_line(signed_entry: dict[str, Any]) -> str | None:
    """The badge's line from the system that signed the roll (None: the log's own)."""
    game = signed_entry.get("game") or {}
    system = systems.for_game(game)
    return system.badge_line(game, signed_entry) if system is not None else None


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


def card_prefetches(campaign, prefix: str = "") -> list:
    """What the campaign's system reads of each table roll for its cards'
    actions (``prefix`` is the path to the table roll, e.g. ``"table_roll__"``)."""
    system = systems.for_campaign(campaign)
    return system.card_prefetches(prefix) if system is not None else []


def cards_for(
    table_rolls: Iterable[TableRoll], *, access: Access, has_character: bool | None = None
) -> dict[int, dict[str, Any]]:
    """The card of each table roll of a page, by the table roll's id, in a
    constant number of queries: the rolls come with ``first`` and ``latest``
    (and their ``user``), ``character`` and ``card_prefetches()``; this adds
    at most one query for the re-rolls' versions, and the system's page
    queries (``GameSystem.page_cards``). ``has_character`` is whether the
    reader has an approved character in the campaign, when the caller knows."""
    table_rolls = list(table_rolls)
    if not table_rolls:
        return {}
    campaign = access.campaign
    for table_roll in table_rolls:
        table_roll.campaign = campaign
    chains = _chains(table_rolls, campaign)
    bases = {tr.pk: frame(tr.latest, table_roll=tr, versions=chains[tr.latest_id]) for tr in table_rolls}
    cards = dict(bases)
    for system, rolls in _by_system(table_rolls, bases):
        cards.update(system.page_cards(rolls, bases, access=access, has_character=has_character))
    return cards


# What a card reads of each version of a roll (``frame``, the systems' bodies
# and ``table/_roll_card.html``): the signed entry and its links.
CARD_ENTRY_FIELDS = ("id", "parent", "audience", "entry_bytes", "signature", "opening", "entry_hash", "permalink")


def card_versions(table_rolls: Sequence[TableRoll]) -> dict[int, list[RollEntry]]:
    """Each table roll's versions, oldest first, by table roll id, with only
    the columns a card reads and each entry loaded once (a roll never
    re-rolled has one entry, both its first and its latest): one query for
    rolls made in posts (a re-roll keeps its roll's post), and one more per
    step back along a chain whose versions are not all in a post."""
    rerolled_posts = {tr.post_id for tr in table_rolls if tr.latest_id != tr.first_id and tr.post_id is not None}
    condition = Q(pk__in={tr.first_id for tr in table_rolls} | {tr.latest_id for tr in table_rolls})
    if rerolled_posts:
        condition |= Q(post_id__in=rerolled_posts, parent__isnull=False)
    by_id = {e.pk: e for e in RollEntry.objects.filter(condition).only(*CARD_ENTRY_FIELDS)}
    chains = {tr.pk: _loaded_chain(tr, by_id) for tr in table_rolls}
    while missing := {c[0].parent_id for c in chains.values() if c[0].parent_id and c[0].parent_id not in by_id}:
        found = list(RollEntry.objects.filter(pk__in=missing).only(*CARD_ENTRY_FIELDS))
        if not found:
            break
        by_id.update((e.pk, e) for e in found)
        chains = {tr.pk: _loaded_chain(tr, by_id) for tr in table_rolls}
    return chains


def _loaded_chain(table_roll: TableRoll, by_id: dict[int, RollEntry]) -> list[RollEntry]:
    """The roll's versions among ``by_id``, from its latest back to its first
    or to the first one not loaded yet."""
    versions = [by_id[table_roll.latest_id]]
    while versions[0].pk != table_roll.first_id and versions[0].parent_id in by_id:
        versions.insert(0, by_id[versions[0].parent_id])
    return versions


def card_bodies(table_rolls: Iterable[TableRoll], *, access: Access) -> dict[int, dict[str, Any]]:
    """The cards of a page's table rolls as every reader of ``access``'s
    class sees them, by table roll id, without the reader's own actions
    (``GameSystem.page_card_bodies``; ``roll_actions`` adds them): the
    versions in ``card_versions``' queries, nothing more."""
    table_rolls = list(table_rolls)
    if not table_rolls:
        return {}
    for table_roll in table_rolls:
        table_roll.campaign = access.campaign
    chains = card_versions(table_rolls)
    bases = {tr.pk: frame(chains[tr.pk][-1], table_roll=tr, versions=chains[tr.pk]) for tr in table_rolls}
    cards = dict(bases)
    for system, rolls in _by_system(table_rolls, bases):
        cards.update(system.page_card_bodies(rolls, bases, access=access))
    return cards


def roll_actions(
    table_rolls: Iterable[TableRoll], *, access: Access, has_character: bool | None = None
) -> dict[int, dict[str, Any]]:
    """What the reader may do with each table roll of a page, by table roll
    id: the ``card`` the roll's actions template reads, from the campaign's
    system (which made the rolls at its table), in a constant number of
    queries; the rolls come with ``character`` and ``card_prefetches()``."""
    table_rolls = list(table_rolls)
    system = systems.for_campaign(access.campaign)
    if not table_rolls or system is None:
        return {}
    for table_roll in table_rolls:
        table_roll.campaign = access.campaign
    return system.page_actions(table_rolls, access=access, has_character=has_character)


def log_cards(entries: Sequence[RollEntry], *, access: Access) -> dict[int, dict[str, Any]]:
    """Compact cards of a page of the roll log, by entry id (no actions: the
    log is for reading), with the systems' page queries."""
    bases = {entry.pk: frame(entry, compact=True) for entry in entries}
    cards = dict(bases)
    for system, group in _by_system(entries, bases):
        cards.update(system.log_cards(group, bases, access=access))
    return cards


def _by_system(rows: Sequence, bases: dict[int, dict[str, Any]]) -> list[tuple[systems.GameSystem, list]]:
    """The rows of a page grouped by the installed system that signed each
    one's roll (rows no installed system reads keep their plain frame)."""
    groups: dict[str, list] = {}
    for row in rows:
        groups.setdefault(bases[row.pk]["game"].get("system", ""), []).append(row)
    return [(systems.get(key), group) for key, group in groups.items() if systems.get(key) is not None]
