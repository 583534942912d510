"""A Vaesen test's card: the body of the table's card frame (``table.cards``)
for rolls whose signed game says ``"system": "vaesen"``.

The body reads the SIGNED entry only (its dice and ``game``: what was rolled,
the pool's parts, the successes needed, the verdict, the push and what it
cost), so a permalink, the roll log and a post show the same test. Which
dice are successes and how many extra successes there are is
``rules.vaesen``'s (``PoolRoll``); the templates only print it. With a table
roll, the card also says whether its reader may push it (V6, V7), from the
roll's facts and, in one query for a whole page, the sheets' conditions.
"""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from campaigns.permissions import Access
from rolls.models import RollEntry
from rules import vaesen
from systems.vaesen.models import VaesenSheet
from systems.vaesen.rolls.services import INJURY, free_conditions, injury_refusal, push_refusal, signed_test
from table.models import TableRoll

# The fear test's kinds (``systems.vaesen.fear.services``), as its signed game says them.
FEAR = "fear"
TERROR = "terror"
# Combat's rolls that are no d6 test (``systems.vaesen.combat.services``).
INITIATIVE = "initiative"
ARMOUR = "armour"
# The tests whose failure may be pushed (V6), as their signed game says them: a
# test in a post (no "test"), a fear test (V26), a side of an opposed roll
# (V14), a treatment (V28) or a day's healing (V29). Combat's rolls are settled
# as soon as they are rolled and never pushed; initiative, armour, critical
# injuries and the rounds Aterrorizado are no test of an attribute.
PUSHABLE_TESTS = ("", FEAR, "opposed", "treatment", "healing")
# What a test's successes mean, by its signed "test" (issue 15): most tests
# succeed with the successes needed and buy effects with the extra ones (V3);
# armour dice each take one point of damage off (V22); a combat action's
# successes are what a reaction may cancel, one each (V21, V23, V24); a
# reaction's cancel the action's; the sides of an opposed roll are compared
# (V14, the ambush's Sigilo against Vigilancia too, V25).
REACTION = "reaction"
ACTION_TESTS = ("attack", "apresar", "liberarse", "huir")
OPPOSED_TESTS = ("opposed", "ambush", "ambush_watch")


def verdict_kind(game: dict[str, Any]) -> str:
    """How the card words the test's result: "test" (success or failure,
    extra successes buy effects), "armour", "action", "reaction" or "opposed"."""
    test = game.get("test") or ""
    if test == ARMOUR:
        return "armour"
    if test in ACTION_TESTS:
        return "action"
    if test == REACTION:
        return "reaction"
    if test in OPPOSED_TESTS:
        return "opposed"
    return "test"


def may_push(game: dict[str, Any]) -> bool:
    """Whether the rules let a failure of this signed test be pushed at all
    (an attribute to say what it costs, V7, and a kind of test that is pushed
    here); whether this reader may push this roll now is ``push_refusal``'s."""
    return bool(game.get("kind")) and (game.get("test") or "") in PUSHABLE_TESTS


def _explained(dice: list[int], game: dict[str, Any]) -> dict[str, Any] | None:
    """What the body prints of a test: each die as rolled and whether it is a
    success (V2), the successes, those needed and the extra ones (V3). None
    when the signed dice are not a d6 pool (the body then shows the signed
    fields as they are)."""
    try:
        test = signed_test(game, dice)
    except (TypeError, ValueError):
        return None
    return {
        "dice": [{"value": die, "success": die == vaesen.SUCCESS_FACE} for die in test.dice],
        "successes": test.successes,
        "needed": test.needed,
        "extra_successes": test.extra_successes,
        "success": test.succeeded,
        "pushed": test.pushed,
        "short": max(test.needed - test.successes, 0),
    }


def _explained_chain(chain: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The card's versions (original → pushed), each with its successes,
    verdict and, for a push, the condition it cost."""
    explained = []
    for version in chain:
        game = version["entry"].entry.get("game") or {}
        explained.append(
            {
                **version,
                "successes": game.get("successes"),
                "success": game.get("success"),
                "pushed": bool(game.get("pushed")),
                "condition": game.get("condition") or "",
                "broken": bool(game.get("broken")),
            }
        )
    return explained


NO_ACTIONS: dict[str, Any] = {
    "can_push": False,
    "push_free": [],
    "push_kind": "",
    "push_breaks": False,
    "can_roll_injury": False,
}


def _actions(table_roll: TableRoll, access: Access, sheets: dict[int, VaesenSheet]) -> dict[str, Any]:
    """Whether the reader may push the roll, which conditions they may choose
    and whether pushing makes the character Broken (V10), from ``sheets``
    (the page's, by character id); or, after a push that did, whether they
    may roll its critical injury (V13)."""
    if not access.user.is_authenticated:
        return NO_ACTIONS
    if injury_refusal(table_roll, access.user, is_gm=access.is_gm) is None:
        return {**NO_ACTIONS, "can_roll_injury": True}
    sheet = sheets.get(table_roll.character_id or 0)
    if sheet is None:
        return NO_ACTIONS
    conditions = sheet.conditions()
    if push_refusal(table_roll, access.user, conditions=conditions) is not None:
        return NO_ACTIONS
    kind = vaesen.ConditionKind(table_roll.facts["kind"])
    free = free_conditions(conditions, kind)
    return {"can_push": True, "push_free": free, "push_kind": kind.value, "push_breaks": not free}


def _pushable(table_roll: TableRoll, access: Access) -> bool:
    """Whether the roll may be pushed by the reader as far as the table roll
    alone tells (the sheet still has its say): no query."""
    return (
        access.user.is_authenticated
        and table_roll.character_id is not None
        and push_refusal(table_roll, access.user) is None
    )


def page_sheets(table_rolls: list[TableRoll], access: Access) -> dict[int, VaesenSheet]:
    """The conditions of the characters whose rolls the reader may push, by
    character id: one query, none when the page has no such roll."""
    ids = {tr.character_id for tr in table_rolls if _pushable(tr, access)}
    if not ids:
        return {}
    fields = ("character_id", "physical_conditions", "mental_conditions", "broken_physical", "broken_mental")
    return {sheet.character_id: sheet for sheet in VaesenSheet.objects.filter(character_id__in=ids).only(*fields)}


def page_actions(table_rolls: list[TableRoll], *, access: Access) -> dict[int, dict[str, Any]]:
    """What ``vaesen/_roll_actions.html`` reads (as ``card``) of each roll of
    a page for this reader, in at most one query."""
    sheets = page_sheets(table_rolls, access)
    return {
        tr.pk: {**_actions(tr, access, sheets), "table_roll": tr, "actions_template": "vaesen/_roll_actions.html"}
        for tr in table_rolls
    }


def vaesen_card(
    base: dict[str, Any],
    *,
    access: Access,
    table_roll: TableRoll | None,
    actions: dict[str, Any] | None = None,
    with_actions: bool = True,
) -> dict[str, Any]:
    """A Vaesen test's card: the table's frame (``base``) with the dice, the
    successes and the verdict in words, the chain original → pushed, and
    with a table roll what the reader may do with it (``actions`` when the
    page worked them out; one query otherwise). Without ``with_actions`` the
    card only names its actions template (``page_actions`` fills it)."""
    signed = base["signed_entry"]
    game = base["game"]
    if table_roll is not None and with_actions and actions is None:
        actions = _actions(table_roll, access, page_sheets([table_roll], access))
    return {
        **base,
        **NO_ACTIONS,
        **(actions or {}),
        "body_template": "vaesen/_card_body.html",
        "actions_template": "vaesen/_roll_actions.html" if table_roll is not None else "",
        "test": (
            _explained(list(signed.get("dice") or []), game)
            if game.get("test") not in (INJURY, TERROR, INITIATIVE)
            else None
        ),
        "injury": game if game.get("test") == INJURY else None,
        # V17, V25 — the d10 kept (the best of two after an ambush).
        "initiative": game if game.get("test") == INITIATIVE else None,
        "armour": game.get("test") == ARMOUR,
        "verdict": verdict_kind(game),
        # The legend says a failure may be pushed only on a test that may be.
        "may_push": may_push(game),
        # V27 — the 1d6 rounds Aterrorizado after a failed fear test.
        "terror": game if game.get("test") == TERROR else None,
        # V26 — a fear test's extra successes do nothing.
        "fear": game.get("test") == FEAR,
        "chain": _explained_chain(base["chain"]),
    }


def badge_line(game: dict[str, Any], signed_entry: dict[str, Any]) -> str:
    """The badge's line: the dice, the successes against those needed and the
    verdict (``rules.vaesen`` reads them again from the signed dice)."""
    dice = list(signed_entry.get("dice") or [])
    line = " · ".join(map(str, dice))
    if game.get("test") == INJURY:
        return f"{line} → {_('herida crítica')} {game.get('d66')}"
    if game.get("test") == TERROR:
        return f"{line} → {_('Aterrorizado')} ({game.get('reaction', '')})"
    if game.get("test") == INITIATIVE:
        best = f" ({_('la mejor de dos')})" if game.get("twice") else ""
        if game.get("mode") == vaesen.InitiativeMode.CARDS:
            cards = ", ".join(str(c) for c in game.get("cards") or [])
            return f"{_('Cartas')} {cards} → {_('Iniciativa')} {game.get('initiative')}{best}"
        return f"{line} → {_('Iniciativa')} {game.get('initiative')}{best}"
    try:
        test = signed_test(game, dice)
    except (TypeError, ValueError):
        return line
    successes = ngettext("%(n)d éxito", "%(n)d éxitos", test.successes) % {"n": test.successes}
    pushed = f" ({_('forzada')})" if test.pushed else ""
    if verdict_kind(game) != "test":
        # Armour, combat actions, reactions and opposed sides have no verdict of their own.
        return f"{line} → {successes}{pushed}"
    verdict = _("éxito") if test.succeeded else _("fallo")
    return f"{line} → {successes} / {test.needed}{pushed} {verdict}"


def entries_card(entries: list[RollEntry], bases: dict[int, dict], *, access: Access) -> dict[int, dict[str, Any]]:
    """The roll log's compact cards: no table roll, no actions, no query."""
    return {e.pk: vaesen_card(bases[e.pk], access=access, table_roll=None) for e in entries}
