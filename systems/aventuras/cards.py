"""An Aventuras roll's card: the body of the table's card frame
(``table.cards``) for rolls whose signed game says ``"system": "aventuras"``,
and what its reader may do with it.

The body reads the SIGNED entries only (each version's dice and ``game``:
the faces as read, the converted 6s, failures, successes and chachis, the
threshold, the difficulty and what it cancelled, the outcome), so a
permalink, the roll log and a post show the same roll; which die is what is
``rules.aventuras``'s, the templates only print it. The actions (convert a
6, spend it on an effect, re-roll with a hero point, «¡Ya está!») and what
depends on the roll being final (the GM narrates a failure, A11; the chachis
left, A6) come from the table roll's facts and, in at most two queries for a
page, the sheets' hero points and the re-rolls already paid this turn. The
scene page keeps the bodies in its cached posts and adds the actions for
each reader (``page_card_bodies`` / ``page_actions``).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.utils.dateparse import parse_datetime
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from campaigns.permissions import Access
from rolls.models import RollEntry
from rules import aventuras
from systems.aventuras.contests import reactions
from systems.aventuras.heroes import ledger
from systems.aventuras.models import AventurasSheet, HeroMove
from systems.aventuras.rolls import services
from table import cards as table_cards
from table.models import TableRoll

BODY_TEMPLATE = "aventuras/rolls/_card_body.html"
ACTIONS_TEMPLATE = "aventuras/rolls/_roll_actions.html"

OUTCOME_CLASS = {
    aventuras.Outcome.FAILURE: "fallo",
    aventuras.Outcome.SUCCESS: "exito",
    aventuras.Outcome.CHACHI: "chachi",
}


def explained(
    game: dict[str, Any], dice: list[int], *, known_difficulty: int | None = None, chachis_left: int | None = None
) -> dict[str, Any] | None:
    """What the body prints of a version: each die as rolled and as read (a
    converted 6 reads 5, A5) with its outcome (A4, A7), the counts, the
    threshold when moved (A7), the difficulty and what it cancelled (A9),
    whether the action succeeds (A8) and the chachis left for its effects
    (A6). A hidden difficulty shows none of what would give it away, unless
    ``known_difficulty`` (the GM's) is given; ``chachis_left`` is the table
    roll's (``services.chachis_left``, A12) for its latest version. None
    when the signed dice are not an Aventuras roll (the body then shows the
    signed fields as they are)."""
    try:
        reading = services.signed_reading(game, dice, known_difficulty=known_difficulty)
    except (KeyError, TypeError, ValueError):
        return None
    state = reading.state
    tally = state.tally
    cancelled = reading.cancelled
    converted = state.converted
    outcomes = state.outcomes
    return {
        "dice": [
            {
                "position": i + 1,
                "raw": raw,
                "value": value,
                "outcome": OUTCOME_CLASS[outcome],
                "converted": i in converted,
            }
            for i, (raw, value, outcome) in enumerate(zip(state.dice, state.values, outcomes, strict=True))
        ],
        "failures": len(state.dice) - tally.successes,
        "normals": tally.normals,
        "chachis": tally.chachis,
        "successes": tally.successes,
        "threshold": state.threshold,
        "threshold_moved": state.threshold != aventuras.NORMAL_THRESHOLD,
        "difficulty": game.get("difficulty"),
        "hidden": bool(game.get("difficulty_hidden")),
        "difficulty_word": services.difficulty_word(game["difficulty"])
        if isinstance(game.get("difficulty"), int)
        else "",
        "cancelled_normals": cancelled.normals if cancelled is not None else 0,
        "cancelled_chachis": cancelled.chachis if cancelled is not None else 0,
        "chachis_left": (chachis_left if chachis_left is not None else reading.chachis_left) or 0,
        "succeeded": reading.succeeded,
        "converted_count": len(converted),
    }


def _explained_chain(chain: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The card's versions (roll → re-roll → extension …), each with what it did."""
    explained_chain = []
    for version in chain:
        signed = version["entry"].entry
        game = signed.get("game") or {}
        step = game.get("step") or services.STEP_ROLL
        explained_chain.append(
            {
                **version,
                "step": step,
                "values": game.get("values") or version["dice"],
                "converted_now": [int(p) + 1 for p in signed.get("converted") or []],
                "successes": game.get("successes"),
                "succeeded": game.get("succeeded"),
            }
        )
    return explained_chain


def aventuras_card(
    base: dict[str, Any],
    *,
    access: Access,
    table_roll: TableRoll | None,
    actions: dict[str, Any] | None = None,
    with_actions: bool = True,
) -> dict[str, Any]:
    """An Aventuras roll's card: the table's frame (``base``) with the body,
    and with a table roll what the reader may do with it (``actions`` when
    the page worked them out; a few queries otherwise). Without
    ``with_actions`` the card only names its actions template
    (``page_actions`` fills it)."""
    signed = base["signed_entry"]
    game = base["game"]
    if table_roll is not None and with_actions and actions is None:
        actions = page_actions([table_roll], access=access)[table_roll.pk]
    known = None
    if game.get("difficulty_hidden") and access.is_gm and table_roll is not None:
        # The GM sees the difficulty the player does not, and what it cancelled.
        known = table_roll.difficulty
    latest = table_roll is not None and base["entry"].pk == table_roll.latest_id
    roll = explained(
        game,
        list(signed.get("dice") or []),
        known_difficulty=known,
        # A12 — the latest version's chachis left, narrative ones taken out.
        chachis_left=services.chachis_left(table_roll) if latest else None,
    )
    return {
        **base,
        **(actions or {}),
        "body_template": BODY_TEMPLATE,
        "actions_template": ACTIONS_TEMPLATE if table_roll is not None else "",
        "roll": roll,
        "known_difficulty": known,
        "chain": _explained_chain(base["chain"]),
    }


# --- What the reader may do ------------------------------------------------------------------


def _open(table_roll: TableRoll, access: Access) -> bool:
    """Whether the reader may still act on the roll, as the table roll alone tells."""
    return not services.is_final(table_roll) and services.may_act(table_roll, access.user, is_gm=access.is_gm)


def _page_sheets(table_rolls: list[TableRoll], access: Access) -> dict[int, AventurasSheet]:
    """The hero points of the characters whose open rolls the reader may
    re-roll, by character id: one query, none without such a roll."""
    ids = {
        tr.character_id
        for tr in table_rolls
        if tr.character_id and _open(tr, access) and not (tr.facts or {}).get("extended")
    }
    if not ids:
        return {}
    fields = ("character_id", "hero_points", "experience")
    return {sheet.character_id: sheet for sheet in AventurasSheet.objects.filter(pk__in=ids).only(*fields)}


def _turn(table_roll: TableRoll) -> str:
    if table_roll.post_id:
        return ledger.post_turn(table_roll.post_id)
    return ledger.turn_of(table_roll.character, table_roll.scene)


def _page_rerolls(table_rolls: list[TableRoll], sheets: dict[int, AventurasSheet]) -> set[tuple[int, str]]:
    """A24 — (character id, turn) of the re-rolls already paid: one query."""
    wanted = {(tr.character_id, _turn(tr)) for tr in table_rolls if tr.character_id in sheets}
    if not wanted:
        return set()
    rows = HeroMove.objects.filter(
        character_id__in={c for c, _t in wanted},
        turn__in={t for _c, t in wanted},
        kind=HeroMove.Kind.SPEND,
        use=aventuras.HeroSpend.REROLL.value,
    ).values_list("character_id", "turn")
    return set(rows)


def _actions(
    table_roll: TableRoll, access: Access, sheets: dict[int, AventurasSheet], rerolls: set[tuple[int, str]]
) -> dict[str, Any]:
    facts = table_roll.facts or {}
    final = services.is_final(table_roll)
    acting = _open(table_roll, access)
    narrative = sorted(int(p) for p in facts.get("narrative") or [])
    chachis = services.open_chachis(facts) if acting else []
    refusal = ""
    can_reroll = False
    sheet = sheets.get(table_roll.character_id or 0)
    if acting:
        refusal = (
            services.reroll_refusal(
                table_roll, sheet=sheet, rerolled_this_turn=(table_roll.character_id, _turn(table_roll)) in rerolls
            )
            if sheet is not None or facts.get("extended")
            else _("Los personajes del director no tienen puntos de Héroe.")
        ) or ""
        can_reroll = not refusal
    succeeded = bool(facts.get("succeeded"))
    return {
        "table_roll": table_roll,
        "actions_template": ACTIONS_TEMPLATE,
        "final": final,
        "may_act": acting,
        # The GM may close any roll; whoever may act closes their own.
        "may_close": not final and (acting or access.is_gm),
        "values": [
            {"index": i, "position": i + 1, "value": v, "narrative": i in narrative}
            for i, v in enumerate(facts.get("values") or [])
        ],
        "open_chachis": [i + 1 for i in chachis],
        "open_chachi_indexes": chachis,
        "narrative": [i + 1 for i in narrative],
        "can_reroll": can_reroll,
        "reroll_refusal": refusal if acting else "",
        "can_pay_xp": bool(sheet and sheet.is_hero and sheet.experience >= aventuras.EXPERIENCE_PER_HERO_POINT),
        "hero_points": sheet.hero_points if sheet is not None else None,
        "succeeded": succeeded,
        # A6, A9, A12 — counted once, by the service.
        "chachis_left": services.chachis_left(table_roll) if final else 0,
        # A11 — the GM always narrates a failure.
        "gm_narrates": final and not succeeded,
        # The GM's «Cerrar la tirada» on a roll that was not theirs (``services.settle``).
        "closed_by_gm": final and bool(facts.get("settled_by")),
        "closed_at": _closed_at(facts) if final else None,
    }


def _closed_at(facts: dict[str, Any]) -> datetime | None:
    """When the GM closed the roll, as ``services.settle`` recorded it."""
    value = facts.get("settled_at")
    return parse_datetime(value) if isinstance(value, str) else None


def page_actions(table_rolls: list[TableRoll], *, access: Access) -> dict[int, dict[str, Any]]:
    """What ``aventuras/rolls/_roll_actions.html`` reads (as ``card``) of each
    roll of a page for this reader, in a constant number of queries (at most
    two, and the reactions' own)."""
    table_rolls = list(table_rolls)
    sheets = _page_sheets(table_rolls, access)
    rerolls = _page_rerolls(table_rolls, sheets)
    shown = reactions.card_reactions(table_rolls, access=access) if table_rolls else {}
    return {
        tr.pk: {**_actions(tr, access, sheets, rerolls), "reactions": shown.get(tr.pk) or None} for tr in table_rolls
    }


def cards_for(table_rolls, *, access: Access) -> dict[int, dict[str, Any]]:
    """Whole cards (body and the reader's actions) of some Aventuras rolls,
    by table roll id, in a constant number of queries: for pages that show
    rolls made without a post (a contest's sides, a reaction).
    ``aventuras/rolls/_roll_body.html`` renders one (``card``)."""
    table_rolls = list(table_rolls)
    if not table_rolls:
        return {}
    bodies = table_cards.card_bodies(table_rolls, access=access)
    actions = page_actions(table_rolls, access=access)
    return {tr.pk: {**bodies[tr.pk], **actions[tr.pk]} for tr in table_rolls}


def badge_line(game: dict[str, Any], signed_entry: dict[str, Any]) -> str:
    """The badge's line, short enough for its 300 px (about 45 characters):
    the successes and chachis (A4), the difficulty (A8; a hidden one shows
    no number) and the outcome in words, e.g. «5 éxitos (1 chachi), dif. 2:
    éxito» (from the signed entry). The dice are on the permalink."""
    dice = list(signed_entry.get("dice") or [])
    roll = explained(game, dice)
    if roll is None:
        return " · ".join(map(str, dice))
    line = ngettext("%(n)d éxito", "%(n)d éxitos", roll["successes"]) % {"n": roll["successes"]}
    if roll["chachis"]:
        line += " (%s)" % (ngettext("%(n)d chachi", "%(n)d chachis", roll["chachis"]) % {"n": roll["chachis"]})
    if roll["hidden"]:
        difficulty = _("dif. oculta")
    else:
        difficulty = _("dif. %(n)s") % {"n": roll["difficulty"]}
    verdict = _("éxito") if roll["succeeded"] else _("fallo")
    return f"{line}, {difficulty}: {verdict}"


def entries_card(entries: list[RollEntry], bases: dict[int, dict], *, access: Access) -> dict[int, dict[str, Any]]:
    """The roll log's compact cards: no table roll, no actions, no query."""
    return {e.pk: aventuras_card(bases[e.pk], access=access, table_roll=None) for e in entries}
