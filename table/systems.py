"""All the table knows about games: the registry of game systems and the
interface each one gives the table.

A game system is a Django app under ``systems/`` (``systems/<key>``).
Its ``AppConfig.ready()`` registers one ``GameSystem`` here; the table then
asks the campaign's system (``for_campaign``) or the system that signed a
roll (``for_game``, from the entry's ``game["system"]``), and never imports
a system. The campaign form offers the registered systems
(``choices``), and a campaign whose system is not installed gets a table
with no rolls of its own (posts still work).

The key is shared by ``Campaign.system``, the signed entry's
``game["system"]`` and the system's URL namespace.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from django import forms
from django.core.exceptions import ImproperlyConfigured

if TYPE_CHECKING:
    from campaigns.models import Campaign, Scene
    from campaigns.permissions import Access
    from rolls.models import RollEntry
    from table.models import RollRequest, TableRoll
    from table.post_rolls import PlannedRoll


class GameSystem:
    """The interface: a system subclasses this and fills in what it has.
    Every method documents what the table passes and expects; the base
    answers "this game has none" where that makes sense, and raises where a
    system that offers rolls must answer."""

    key: str = ""
    label: str = ""
    # What a chance is made of, under the preview's figure (context: ``plan``).
    chance_template: str = ""

    # --- characters -----------------------------------------------------------------

    def characters(self, queryset):
        """``queryset`` of characters with what this system reads of them
        (its sheet, its rows) loaded with them, in a constant number of
        queries: the table passes every character list it offers through it."""
        return queryset

    # --- the post form ------------------------------------------------------------

    def roll_row(
        self, data, *, prefix: str, characters: Sequence, npcs: dict | None, scene_id: int | None = None
    ) -> forms.Form:
        """One "añadir tirada" row of the post form (``characters``: the
        author's approved characters; ``npcs``: by id, for the GM;
        ``scene_id``: the scene the post goes to). A bound row says
        ``cleaned_data["used"]`` when the author filled it in."""
        raise NotImplementedError(f"{self.key}: no roll rows")

    def roll_rows(
        self, data, *, prefixes: Sequence[str], characters: Sequence, npcs: dict | None, scene_id: int | None = None
    ) -> list[forms.Form]:
        """The post form's rows, one per prefix (``roll_row``); a system
        whose rows read the same things works them out once here."""
        return [
            self.roll_row(data, prefix=prefix, characters=characters, npcs=npcs, scene_id=scene_id)
            for prefix in prefixes
        ]

    def writer_facts(self, characters: Sequence, npcs: Sequence, scene_id: int | None = None) -> tuple:
        """Plain values the post form's rows show beyond the characters, the
        NPCs and the GM's requests (e.g. the reactions waiting for one of
        them, the characters an action in ``scene_id`` may target), so that
        the form kept in the cache changes when they do. A constant number
        of queries; called when the writer is built."""
        return ()

    def plan(self, row: forms.Form, *, speaking_as) -> PlannedRoll:
        """A valid, used row as a planned roll. Raises ``ValidationError``
        whose ``code`` names the row's field to show it on."""
        raise NotImplementedError(f"{self.key}: no roll rows")

    def chance(self, plan: PlannedRoll, campaign: Campaign) -> Fraction | None:
        """The chance of success before rolling (never rolls); None if the
        game has no such figure."""
        return None

    def roll(self, plan: PlannedRoll, *, post, user, position: int) -> TableRoll:
        """Roll a planned roll of ``post`` through the signed log, inside the
        caller's transaction."""
        raise NotImplementedError(f"{self.key}: no rolls")

    # --- the GM's roll requests ------------------------------------------------------

    def request_form(self, data=None, *, characters: Sequence) -> forms.Form | None:
        """The GM's "pedir una tirada" form, or None when the game has none."""
        return None

    def request_fields(self, cleaned: dict) -> dict:
        """What a valid request form stores on ``RollRequest``."""
        raise NotImplementedError(f"{self.key}: no roll requests")

    def request_plan(self, request: RollRequest, *, client_seed: str | None) -> PlannedRoll:
        """The one roll that answers ``request``: everything comes from it."""
        raise NotImplementedError(f"{self.key}: no roll requests")

    # --- cards ---------------------------------------------------------------------

    def card_prefetches(self, prefix: str = "") -> list:
        """Prefetches a page of this system's table rolls needs for their cards."""
        return []

    def card(self, base: dict[str, Any], *, access: Access, table_roll: TableRoll | None) -> dict[str, Any]:
        """One card: the table's frame ``base`` with this system's body
        (``body_template``) and, with a table roll, its actions."""
        return base

    def page_cards(
        self, table_rolls: list[TableRoll], bases: dict[int, dict], *, access: Access, has_character: bool | None
    ) -> dict[int, dict[str, Any]]:
        """A page of cards, by table roll id, in a constant number of queries."""
        return {tr.pk: self.card(bases[tr.pk], access=access, table_roll=tr) for tr in table_rolls}

    def page_card_bodies(
        self, table_rolls: list[TableRoll], bases: dict[int, dict], *, access: Access
    ) -> dict[int, dict[str, Any]]:
        """A page of cards as every reader of the same class sees them (the
        GM may see more, e.g. a hidden difficulty), by table roll id, with no
        query of their own: the frame and this system's body, and in
        ``actions_template`` where the reader's actions go, without working
        them out (the scene page keeps these in its cached posts and adds
        ``page_actions`` for each reader). A system whose cards have actions
        overrides this and ``page_actions``."""
        return {tr.pk: self.card(bases[tr.pk], access=access, table_roll=tr) for tr in table_rolls}

    def page_actions(
        self, table_rolls: list[TableRoll], *, access: Access, has_character: bool | None
    ) -> dict[int, dict[str, Any]]:
        """What the reader may do with each roll of a page, by table roll id:
        the ``card`` its ``actions_template`` reads (its ``table_roll`` and
        the system's own keys), in a constant number of queries (the table
        rolls come with ``card_prefetches()`` and their ``character``).
        ``has_character`` as for ``page_cards``. None here: no actions."""
        return {}

    def log_cards(
        self, entries: list[RollEntry], bases: dict[int, dict], *, access: Access
    ) -> dict[int, dict[str, Any]]:
        """The roll log's compact cards, by entry id, in constant queries."""
        return {e.pk: self.card(bases[e.pk], access=access, table_roll=None) for e in entries}

    def badge_line(self, game: dict[str, Any], signed_entry: dict[str, Any]) -> str | None:
        """The one line of the roll's badge (an SVG pasted into other
        forums), from the signed entry; None for the log's plain line."""
        return None

    # --- the scene page --------------------------------------------------------------

    def scene_context(self, scene: Scene, access: Access, *, characters: Sequence) -> dict[str, Any]:
        """What the system adds to the scene page: a header under the scene's
        description (``scene_header_template``), its tools
        (``scene_tools_template``), its points (``balances_template``), its
        sections (``scene_sections_template``) and anything those templates
        read. An off-game scene gets no tools."""
        return {}

    def scene_started(self, scene: Scene, *, actor) -> None:
        """A new scene begins (whoever started it): end what lasts a scene."""


_systems: dict[str, GameSystem] = {}


def register(system: GameSystem) -> None:
    """Called once from the system's ``AppConfig.ready()``."""
    if not system.key:
        raise ImproperlyConfigured(f"{type(system).__name__} has no key")
    known = _systems.get(system.key)
    if known is not None and type(known) is not type(system):
        raise ImproperlyConfigured(f"two game systems use the key {system.key!r}")
    _systems[system.key] = system


def get(key: str) -> GameSystem | None:
    return _systems.get(key)


def for_campaign(campaign: Campaign) -> GameSystem | None:
    return _systems.get(campaign.system)


def for_game(game: dict) -> GameSystem | None:
    """The system that signed a roll's ``game`` fields."""
    return _systems.get(game.get("system", ""))


def installed() -> list[GameSystem]:
    return list(_systems.values())
