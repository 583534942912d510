"""A HITOS roll's card: the body of the table's card frame (``table.cards``)
for rolls whose signed game says ``"system": "hitos"``.

Which dice count and by which rule, and why the roll succeeded or failed,
are the rules' (``HitosRoll.counting``, ``outcome_reason`` in
``rules.hitos``): the card only names them. Everything else the card shows
is decided here (the sum's parts, whether a hidden difficulty may be shown,
what each re-roll's activation was and what paid for it, which activations
the reader may make): the templates only print it, in words a reader who
never played HITOS can follow.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.core.exceptions import PermissionDenied
from django.db.models import Prefetch, Q
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from campaigns.permissions import Access
from rolls.models import RollEntry
from rules import hitos
from sheets.models import Character
from systems.hitos.activations import services as activations
from systems.hitos.checks.services import is_arcane, reroll_refusal, reroll_refusals
from systems.hitos.models import Activation
from table.models import TableRoll

SHORT_HASH = 12

# H1 — what each letter on a die means, for the card's dice (the title of
# their <abbr>; the card's legend says it in full).
DIE_NAMES = {
    "m": gettext_lazy("m: menor, el dado más bajo"),
    "C": gettext_lazy("C: central, el dado del medio"),
    "M": gettext_lazy("M: mayor, el dado más alto"),
}


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


# --- What the card explains: which dice count and why, the total, the outcome in words -------------------

# What an activation was paid with, as the signed entry names it (``Activation.Payment``).
PAYMENT_LABELS = dict(Activation.Payment.choices)


def _counted_name(rule: hitos.Counting, face: int | None) -> str:
    """What counted (``HitosRoll.counting``'s rule), in a few words, for the
    card's sum ("5 (dado C) + 8")."""
    if rule is hitos.Counting.PAIR_SUM:
        return _("pareja de %(face)s, sumada") % {"face": face}
    if rule is hitos.Counting.TRIPLE_SUM:
        return _("trío de %(face)s, sumado") % {"face": face}
    if rule is hitos.Counting.PAIR_NEGATIVE:
        return _("pareja de %(face)s, en negativo") % {"face": face}
    if rule is hitos.Counting.TRIPLE_NEGATIVE:
        return _("trío de %(face)s, en negativo") % {"face": face}
    return _("dado %(letter)s") % {"letter": rule.value}


def _reason(game: dict, margin: int | None) -> hitos.OutcomeReason | None:
    """Why the roll succeeded or failed, from the signed critical and fumble
    levels and verdict (``hitos.outcome_reason``); None when the reader may
    not see the difficulty and the dice alone did not decide."""
    return hitos.outcome_reason(
        critical_level=int(game.get("critical") or 0),
        fumble_level=int(game.get("fumble") or 0),
        margin=margin,
        success=game.get("success"),
    )


def _explained(signed: dict, game: dict, margin: int | None) -> dict[str, Any] | None:
    """What the card's body prints of a 3d10 check: each die as rolled with
    its letter and whether it counts, the rule that picked the value, the
    sum's parts and the outcome's reason. None when the signed dice are not
    a HITOS roll (the body then shows only the signed fields)."""
    dice = signed.get("dice") or []
    try:
        roll = hitos.HitosRoll(tuple(dice), game.get("reading") or hitos.Reading.NORMAL)
    except (TypeError, ValueError):
        return None
    labels = list(game.get("labels") or ())
    if len(labels) != len(dice) or set(labels) != {"m", "C", "M"}:
        labels = list(roll.labels)
    counted = roll.counting()
    group = roll.group
    reason = _reason(game, margin)
    modifier = int(game.get("modifier") or 0)
    return {
        "dice": [
            {"value": die, "letter": letter, "name": DIE_NAMES[letter], "counts": position in counted.positions}
            for position, (die, letter) in enumerate(zip(dice, labels, strict=True))
        ],
        "rule": counted.rule.value,
        "face": group[0] if group is not None else None,
        "counted": _counted_name(counted.rule, group[0] if group is not None else None),
        "modifier_sign": "−" if modifier < 0 else "+",
        "modifier_size": abs(modifier),
        # The template turns the outcome's word into a sentence.
        "outcome": reason.outcome.value if reason is not None else "",
        "margin_size": reason.by if reason is not None else None,
    }


def _activation(signed: dict) -> dict[str, str] | None:
    """A re-roll's activation as people read it: in favour or against, the
    aspect, and what paid for it (the signed code's label; a text no HITOS
    payment code names is shown as signed)."""
    kind = signed.get("activation")
    if kind not in ("positive", "negative"):
        return None
    payment = signed.get("payment") or ""
    return {"kind": kind, "aspect": signed.get("aspect") or "", "payment": PAYMENT_LABELS.get(payment, payment)}


def _explained_chain(chain: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The card's versions, each with its total, outcome and activation, so
    the card says what each re-roll changed."""
    explained = []
    for version in chain:
        signed = version["entry"].entry
        game = signed.get("game") or {}
        explained.append(
            {
                **version,
                "total": game.get("total"),
                "success": game.get("success"),
                "activation_detail": _activation(signed),
            }
        )
    return explained


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


def _actions(
    table_roll: TableRoll, user, access: Access, has_character: HasCharacter, can_reroll: bool
) -> dict[str, Any]:
    """What ``hitos/_roll_actions.html`` offers, from the prefetched activations."""
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
        if access.is_gm and is_arcane(table_roll)
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


def hitos_card(
    base: dict[str, Any],
    *,
    access: Access,
    table_roll: TableRoll | None,
    has_character: HasCharacter,
    can_reroll: bool | None = None,
    known_difficulty: int | None = None,
    with_actions: bool = True,
) -> dict[str, Any]:
    """A HITOS roll's card: the table's frame (``base``) with the kept die, the
    difficulty the reader may see, the margin, and with a table roll (its
    ``activations`` prefetched with ``activations_prefetch``) what the
    reader may do with it. ``can_reroll`` is asked of ``reroll_refusal`` when
    not known; ``known_difficulty`` is a hidden difficulty the caller looked
    up for the GM without the table roll. Without ``with_actions`` the card
    only names its actions template (``roll_actions`` works them out)."""
    entry, game = base["entry"], base["game"]
    difficulty = _shown_difficulty(game, table_roll, access.is_gm, known_difficulty)
    reading = game.get("reading") or hitos.Reading.NORMAL
    actions = NO_ACTIONS
    if table_roll is not None and with_actions:
        if can_reroll is None:
            can_reroll = reroll_refusal(table_roll) is None
        actions = _actions(table_roll, access.user, access, has_character, can_reroll)
    margin = _margin(entry, game, difficulty)
    return {
        **base,
        **actions,
        "body_template": "hitos/_card_body.html",
        "actions_template": "hitos/_roll_actions.html" if table_roll is not None else "",
        "is_gm": access.is_gm,
        "kept": hitos.KEPT_DIE.get(reading, hitos.Counting.CENTRAL).value,
        "difficulty_hidden": game.get("difficulty") == "hidden",
        "shown_difficulty": difficulty,
        "margin": margin,
        "reading": _explained(base["signed_entry"], game, margin),
        "activation": _activation(base["signed_entry"]),
        "chain": _explained_chain(base["chain"]),
    }


def roll_actions(
    table_roll: TableRoll, *, access: Access, has_character: HasCharacter, can_reroll: bool
) -> dict[str, Any]:
    """What ``hitos/_roll_actions.html`` reads (as ``card``) of one roll for
    this reader: its table roll and what the reader may do with it, from the
    prefetched activations (no query beyond ``has_character``'s)."""
    return {
        **_actions(table_roll, access.user, access, has_character, can_reroll),
        "table_roll": table_roll,
        "actions_template": "hitos/_roll_actions.html",
    }


def has_character(access: Access) -> HasCharacter:
    """Whether the reader has an approved character in the campaign, looked
    up once when an action first asks (never for the GM or a reader)."""
    return _has_character(access.user, access.campaign)


def known(value: bool) -> HasCharacter:
    return _known(value)


def page_actions(table_rolls: list[TableRoll], *, access: Access, has_character: bool | None) -> dict[int, dict]:
    """For a page of HITOS cards: each roll's ``hitos_card`` keywords, in at
    most one query for whether the reader has a character and two for
    whether attacks and opposed rolls may still be re-rolled."""
    known_character = _has_character(access.user, access.campaign) if has_character is None else _known(has_character)
    refusals = reroll_refusals(table_rolls)
    return {tr.pk: {"has_character": known_character, "can_reroll": refusals[tr.pk] is None} for tr in table_rolls}


def hidden_difficulties(entries) -> dict[int, int]:
    """For the GM: the real difficulty of the page's hidden-difficulty rolls
    (first and latest versions), from their table rolls, in one query."""
    ids = [e.pk for e in entries if (e.entry.get("game") or {}).get("difficulty") == "hidden"]
    if not ids:
        return {}
    found: dict[int, int] = {}
    for first, latest, difficulty in TableRoll.objects.filter(
        Q(first_id__in=ids) | Q(latest_id__in=ids), difficulty__isnull=False
    ).values_list("first_id", "latest_id", "difficulty"):
        found[first] = found[latest] = difficulty
    return found
