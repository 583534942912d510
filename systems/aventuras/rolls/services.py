"""Hora de Aventuras rolls at the table: the dice from the sheet (A2, A3, A7,
A22, A29), the roll through the signed log, the chachi chain (A5, A12) and
the hero point re-roll (A22, A24), until the roll is final.

Everything that rolls goes through ``rolls.services`` (the signed log); every
number comes from ``rules.aventuras``. Each version of a roll signs what its
card shows (``aventuras_reader``: the faces as read, the tally, the
threshold, the difficulty and what it cancelled, the outcome), so the
permalink, the roll log and an offline verifier read the same roll:

- the roll itself is a ``roll`` entry;
- a hero point re-roll (A22) is a ``reroll`` entry of the dice chosen;
- converting a 6 into a 5 to add a die (A5) is an ``extend`` entry of one
  d6, whose ``converted`` (signed) names the 6's position in the dice.

What is not in the log lives in ``TableRoll.facts``, changed only with that
row locked: the chachis spent on a narrative effect (A12) and whether the
roll is final («¡Ya está!»). Lock order, as at every flow of the table: the
table roll's row, then the sheet's (``heroes.ledger`` locks it), then the
roll log's head (``rolls.services`` takes it last, when it appends).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from django.core.exceptions import ObjectDoesNotExist, ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext

from campaigns.models import Campaign
from campaigns.permissions import campaign_access
from rolls import rollog
from rolls.models import RollEntry
from rolls.services import Reader, earlier_entry, extend_append, reroll_append, roll_append, seed_used
from rules import aventuras
from rules.aventuras import HeroSpend
from sheets.models import Character
from systems.aventuras import signals
from systems.aventuras.heroes import ledger
from systems.aventuras.heroes import services as heroes_services
from systems.aventuras.models import ATTRIBUTE_LABELS, AventurasSheet, AventurasState, HeroMove
from table.models import TableRoll

SYSTEM = "aventuras"
# A8 — the difficulty the forms offer (S004 has no guide, A10: only 0 and 2 have words).
MAX_DIFFICULTY = 10
# What a roll may have before any chachi is converted (the log takes up to 100 dice).
MAX_DICE = 30
# A7 — at most this many effects each way on a roll's row.
MAX_EFFECTS = 5


# The kinds of version of a roll, as its signed game says them.
STEP_ROLL = "tirada"
STEP_REROLL = "repetida"
STEP_CONVERT = "ampliada"


# A10 — the words S004 gives a difficulty (``rules.aventuras.DIFFICULTY_WORDS``), translatable.
DIFFICULTY_WORD_LABELS = {0: gettext_lazy("de las más fáciles"), 2: gettext_lazy("dificililla")}


def difficulty_word(difficulty: int) -> str:
    """A10 — the words S004 gives a difficulty (only 0 and 2 have one)."""
    return str(DIFFICULTY_WORD_LABELS.get(difficulty, ""))


@dataclass(frozen=True)
class RollSetup:
    """What a roll rolls: the dice and the named parts that make them (A2,
    A3, A22, A29), the success threshold and the effects that moved it (A7),
    the difficulty (A8) and what it is rolled for. ``targets`` and
    ``reaction`` are the post row's (A18, reactions)."""

    dice: int
    breakdown: tuple[tuple[str, int], ...]
    threshold: int
    difficulty: int
    attribute: str
    what: str
    action_kind: str = ""
    threshold_effects: tuple[str, ...] = ()
    hero_point: bool = False
    with_experience: bool = False
    tool_id: int | None = None
    targets: tuple = ()
    reaction: Any = None

    @property
    def automatic_failure(self) -> bool:
        # A3 [ENGINE DEFAULT] — no dice is an automatic failure.
        return self.dice == 0

    @property
    def chance(self) -> Fraction:
        # A4, A7, A8 — the exact chance of more successes than the difficulty.
        return aventuras.success_probability(self.dice, self.difficulty, threshold=self.threshold)

    @property
    def chance_converting(self) -> Fraction:
        # A5 — the same, converting every chachi into a 5 and a new die.
        return aventuras.success_probability(self.dice, self.difficulty, threshold=self.threshold, convert_chachis=True)

    @property
    def chance_percent(self) -> float:
        return float(self.chance * 100)

    @property
    def chance_converting_percent(self) -> float:
        return float(self.chance_converting * 100)

    @property
    def difficulty_word(self) -> str:
        return difficulty_word(self.difficulty)


def sheet_of(character: Character | None) -> AventurasSheet:
    """The character's sheet, or a Spanish refusal on the row's attribute."""
    if character is None:
        raise ValidationError(_("Para tirar un atributo hace falta una ficha."), code="attribute")
    try:
        return character.aventuras
    except ObjectDoesNotExist:
        raise ValidationError(
            _("%(name)s no tiene ficha de Hora de Aventuras.") % {"name": character.name}, code="attribute"
        ) from None


def _natural(value: int, name: str, code: str, top: int) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= top:
        raise ValidationError(
            _("%(name)s va de 0 a %(top)d.") % {"name": name, "top": top},
            code=code,
        )
    return value


def _applies(state: AventurasState, action_kind: str) -> bool:
    """A3, A7 — a state touches an action of its kind (or every action)."""
    return not state.applies_to or state.applies_to == action_kind


def _state_parts(
    sheet: AventurasSheet, action_kind: str, ignored: Collection[int] = ()
) -> tuple[list[tuple[str, int]], int, int, list[str]]:
    """The sheet's states that touch the action: their dice (A3) and the
    effects they add to the threshold's (A7); a state a hero point ignores
    this turn (A23, ``ignored``) adds nothing and says so."""
    parts: list[tuple[str, int]] = []
    easier = harder = 0
    effects: list[str] = []
    for state in sheet.states.all():
        if not _applies(state, action_kind):
            continue
        if state.pk in ignored:
            parts.append((_("Estado: %(name)s, ignorado con un punto de Héroe") % {"name": state.name}, 0))
            continue
        if state.modifier:
            parts.append((_("Estado: %(name)s") % {"name": state.name}, state.modifier))
        if state.threshold == AventurasState.Threshold.EASIER:
            easier += 1
            effects.append(_("estado «%(name)s» facilita") % {"name": state.name})
        elif state.threshold == AventurasState.Threshold.HARDER:
            harder += 1
            effects.append(_("estado «%(name)s» dificulta") % {"name": state.name})
    return parts, easier, harder, effects


def _tool_part(character: Character, sheet: AventurasSheet, tool_id: int | None, attribute: str) -> list:
    """A29 — the chosen tool's bonus dice, if it is on the sheet and helps this attribute."""
    if tool_id is None:
        return []
    tool = next((t for t in sheet.tools.all() if t.pk == tool_id), None)
    if tool is None:
        raise ValidationError(
            _("Esa herramienta no está en la ficha de %(name)s.") % {"name": character.name}, code="tool"
        )
    if tool.attribute != attribute:
        raise ValidationError(
            _("%(tool)s sirve para %(attribute)s.")
            % {"tool": tool.name, "attribute": ATTRIBUTE_LABELS[tool.attribute]},
            code="tool",
        )
    return [(tool.name, tool.bonus)]


def roll_setup(
    character: Character | None,
    *,
    attribute: str,
    difficulty: int = 0,
    modifier: int = 0,
    tool_id: int | None = None,
    hero_point: bool = False,
    with_experience: bool = False,
    easier: int = 0,
    harder: int = 0,
    action_kind: str = "",
) -> RollSetup:
    """The dice of an action with ``attribute`` (A1): the score if highlighted,
    else 2 (A2); the sheet's states that touch the action's kind (A3, dice;
    A7, threshold); the tool chosen (A29); the modifier (A3); +2 dice for a
    hero point (A22), paid with 2 XP if ``with_experience`` (A28); the
    effects that ease or harden it (A7); the difficulty (A8).

    Raises ``ValidationError`` (its ``code`` names the row's field) when the
    sheet lacks what is asked or the hero point cannot be paid."""
    if attribute not in aventuras.ATTRIBUTES:
        raise ValidationError(_("Elige el atributo que pide la dirección."), code="attribute")
    sheet = sheet_of(character)
    difficulty = _natural(difficulty, _("La dificultad"), "difficulty", MAX_DIFFICULTY)
    easier = _natural(easier, _("Los efectos que facilitan"), "easier", MAX_EFFECTS)
    harder = _natural(harder, _("Los efectos que dificultan"), "harder", MAX_EFFECTS)
    if action_kind and action_kind not in aventuras.ACTION_KINDS:
        raise ValidationError(_("La acción es física, mental o social."), code="action_kind")
    label = str(ATTRIBUTE_LABELS[attribute])
    highlighted = sheet.is_highlighted(attribute)
    base = sheet.dice_for(attribute)
    parts: list[tuple[str, int]] = [
        (
            _("%(attribute)s (destacado)") % {"attribute": label}
            if highlighted
            else _("%(attribute)s (sin destacar)") % {"attribute": label},
            base,
        )
    ]
    effects: list[str] = []
    if easier:
        effects.append(ngettext("%(n)d que facilita", "%(n)d que facilitan", easier) % {"n": easier})
    if harder:
        effects.append(ngettext("%(n)d que dificulta", "%(n)d que dificultan", harder) % {"n": harder})
    # A23 — a state a hero point ignores this turn does not count.
    ignored = heroes_services.ignored_for_next_roll(character) if sheet.states.all() else set()
    state_parts, state_easier, state_harder, state_effects = _state_parts(sheet, action_kind, ignored)
    parts += state_parts
    easier += state_easier
    harder += state_harder
    effects += state_effects
    parts += _tool_part(character, sheet, tool_id, attribute)
    if modifier:
        parts.append((_("Modificador"), modifier))
    if with_experience and not hero_point:
        raise ValidationError(
            _("Pagar con 2 PX es para el punto de Héroe: marca también «punto de Héroe»."), code="with_experience"
        )
    if hero_point:
        _check_payable(character, sheet, with_experience, code="hero_point")
        # A22 — a hero point adds two dice.
        parts.append((_("Punto de Héroe"), aventuras.HERO_EXTRA_DICE))
    bonus = sum(value for _label, value in parts[1:])
    dice = aventuras.dice_count(sheet.score(attribute), highlighted, bonus)
    if dice > MAX_DICE:
        raise ValidationError(
            _("Una tirada no puede empezar con más de %(n)d dados.") % {"n": MAX_DICE}, code="modifier"
        )
    return RollSetup(
        dice=dice,
        breakdown=tuple(parts),
        threshold=aventuras.success_threshold(easier, harder),
        difficulty=difficulty,
        attribute=attribute,
        what=label,
        action_kind=action_kind,
        threshold_effects=tuple(effects),
        hero_point=hero_point,
        with_experience=with_experience,
        tool_id=tool_id,
    )


def _check_payable(character: Character, sheet: AventurasSheet, with_experience: bool, *, code: str) -> None:
    """Before locking anything: whether the character could pay a hero point
    (A20: a GM character has none; A28: 2 XP for an instant one). The ledger
    checks again with the sheet locked."""
    if not sheet.is_hero:
        raise ValidationError(
            _("%(name)s es un personaje del director: no tiene puntos de Héroe.") % {"name": character.name},
            code=code,
        )
    if with_experience and sheet.experience < aventuras.EXPERIENCE_PER_HERO_POINT:
        raise ValidationError(
            _("Hacen falta dos puntos de Experiencia para un punto de Héroe instantáneo; %(name)s tiene %(xp)d.")
            % {"name": character.name, "xp": sheet.experience},
            code=code,
        )
    if not with_experience and sheet.hero_points < 1:
        raise ValidationError(_("%(name)s no tiene puntos de Héroe que gastar.") % {"name": character.name}, code=code)


# --- The signed game fields ---------------------------------------------------------------


def game_fields(setup: RollSetup, *, difficulty_hidden: bool = False) -> dict[str, Any]:
    """What every version of a roll signs besides its reading: what was
    rolled, why it has its dice, the threshold and the difficulty (``None``
    when the GM hid it: the reading still says whether it succeeded)."""
    return {
        "system": SYSTEM,
        "what": rollog.normalise_purpose(setup.what),
        "attribute": setup.attribute,
        "action_kind": setup.action_kind,
        "breakdown": [[rollog.normalise_purpose(str(label)), value] for label, value in setup.breakdown],
        "threshold": setup.threshold,
        "threshold_effects": [rollog.normalise_purpose(str(e)) for e in setup.threshold_effects],
        "difficulty": None if difficulty_hidden else setup.difficulty,
        "difficulty_hidden": difficulty_hidden,
        "hero_dice": setup.hero_point,
    }


# The signed fields a new version carries over from its parent.
CARRIED = (
    "system",
    "what",
    "attribute",
    "action_kind",
    "breakdown",
    "threshold",
    "threshold_effects",
    "difficulty",
    "difficulty_hidden",
    "hero_dice",
)


def _open_result(resolution: aventuras.Resolution) -> dict[str, Any]:
    # A9 — the successes the difficulty left.
    return {"remaining": [resolution.remaining.normals, resolution.remaining.chachis]}


def _hidden_result(resolution: aventuras.Resolution) -> dict[str, Any]:
    # A6 — a hidden difficulty signs only the chachis left, and only on a success.
    return {"chachis_left": resolution.chachis} if resolution.succeeded else {}


def aventuras_reader(fields: dict[str, Any], *, difficulty: int, converted: Iterable[int] = (), step: str) -> Reader:
    """Signed game fields of a version of an Aventuras roll
    (``game["system"] == "aventuras"``): ``fields`` (``game_fields``), the
    positions of the 6s read as 5 (A5), the faces as read, failures, normal
    successes and chachis (A4, A7), what the difficulty cancelled (A9) and
    whether the action succeeds (A8), read by ``rules.aventuras``.
    ``difficulty`` is the real one, also when ``fields`` hide it.

    A hidden difficulty (``fields["difficulty_hidden"]``) is not worked out
    of the entry, which anyone with its permalink reads: it signs no
    ``remaining`` (the successes left would give the difficulty away), only
    whether the action succeeds (A8) and, when it does, the chachis left for
    its effects (A6, ``chachis_left``). The real remaining is the table
    roll's (``TableRoll.facts``), for the GM."""
    converted = sorted(set(converted))
    hidden = bool(fields.get("difficulty_hidden"))

    def read(dice: list[int]) -> dict[str, Any]:
        state = aventuras.AventurasRoll(tuple(dice), frozenset(converted), threshold=int(fields["threshold"]))
        tally = state.tally
        resolution = aventuras.resolve(tally, difficulty)
        return {
            **fields,
            "step": step,
            "pool": len(dice),
            "converted": converted,
            "values": list(state.values),
            "failures": len(dice) - tally.successes,
            "normals": tally.normals,
            "chachis": tally.chachis,
            "successes": tally.successes,
            **(_hidden_result(resolution) if hidden else _open_result(resolution)),
            "succeeded": resolution.succeeded,
        }

    return read


@dataclass(frozen=True)
class SignedReading:
    """What a card shows of one signed version: the roll as ``rules.aventuras``
    reads it, whether the action succeeds (A8) and, when the reader may know
    them, the successes the difficulty left (A9) and what it cancelled; the
    chachis left for the action's effects (A6) when known."""

    state: aventuras.AventurasRoll
    succeeded: bool
    remaining: aventuras.Tally | None
    cancelled: aventuras.Tally | None
    chachis_left: int | None


def signed_reading(game: dict[str, Any], dice: Sequence[int], *, known_difficulty: int | None = None) -> SignedReading:
    """A signed version as its card shows it. A hidden difficulty leaves the
    remaining and the cancelled unknown, unless ``known_difficulty`` (the
    GM's, from the table roll) is given. Raises ``KeyError``, ``TypeError``
    or ``ValueError`` when the entry is not an Aventuras roll."""
    state = signed_roll(game, dice)
    tally = state.tally
    succeeded = bool(game["succeeded"])
    remaining = None
    if game.get("difficulty_hidden"):
        if known_difficulty is not None:
            remaining = aventuras.resolve(tally, known_difficulty).remaining
    else:
        normals, chachis = (int(n) for n in game["remaining"])
        remaining = aventuras.Tally(normals, chachis)
    if remaining is not None:
        cancelled = aventuras.Tally(tally.normals - remaining.normals, tally.chachis - remaining.chachis)
        left = remaining.chachis if succeeded else 0
    else:
        cancelled = None
        left = int(game["chachis_left"]) if succeeded and "chachis_left" in game else None
    return SignedReading(state, succeeded, remaining, cancelled, left)


def signed_roll(game: dict[str, Any], dice: Sequence[int]) -> aventuras.AventurasRoll:
    """The roll a signed entry holds, for ``rules.aventuras`` to read."""
    return aventuras.AventurasRoll(
        tuple(dice),
        frozenset(int(p) for p in game.get("converted") or []),
        threshold=int(game.get("threshold") or aventuras.NORMAL_THRESHOLD),
    )


def is_aventuras(entry: RollEntry) -> bool:
    return entry.signed_game.get("system") == SYSTEM


# --- Rolling --------------------------------------------------------------------------------


def owner_for(character: Character | None, user):
    """Who answers for a roll made by ``user`` as ``character``: a player
    character's player, else the user (the GM for NPCs)."""
    if character is not None and not character.is_npc:
        return character.owner
    return user


def make_roll(
    *,
    campaign: Campaign,
    user,
    setup: RollSetup,
    purpose: str,
    character: Character,
    scene,
    post=None,
    client_seed: str | None = None,
    position: int = 0,
    kind: str = "check",
    difficulty_hidden: bool = False,
    facts: dict[str, Any] | None = None,
) -> TableRoll:
    """``setup.dice`` d6s through the log, read as an Aventuras roll, with its
    ``TableRoll``, inside the caller's transaction when there is one (the
    post and its rolls commit together). A hero point for +2 dice (A22) is
    paid here, in the same transaction (the turn is the post's, A24; the
    character's latest post in the scene for a roll without a post). A
    post's audience seals the entry. Zero dice is an automatic failure
    (A3): refused, nothing rolled. The roll is final at once when nothing
    is left to decide."""
    if setup.automatic_failure:
        raise ValidationError(_("Con 0 dados la acción falla automáticamente: no hay nada que tirar."), code="modifier")
    with transaction.atomic():
        move = None
        if setup.hero_point:
            # The sheet's row before the log's head (the lock order).
            move = ledger.spend(
                character,
                HeroSpend.ADD_DICE,
                by=user,
                turn=ledger.post_turn(post.pk) if post is not None else ledger.turn_of(character, scene),
                scene=scene,
                why=purpose,
                with_experience=setup.with_experience,
            )
        entry = roll_append(
            campaign=campaign,
            user=user,
            spec=f"{setup.dice}d{aventuras.FACES}",
            purpose=purpose,
            read=aventuras_reader(
                game_fields(setup, difficulty_hidden=difficulty_hidden),
                difficulty=setup.difficulty,
                step=STEP_ROLL,
            ),
            character=character,
            scene=scene,
            post=post,
            client_seed=client_seed,
        )
        # The same client seed sent twice returns the stored entry (a retried
        # form): its table roll already exists too.
        existing = TableRoll.objects.filter(first=entry).first()
        if existing is not None:
            return existing
        tr = TableRoll.objects.create(
            campaign=campaign,
            scene=scene,
            post=post,
            first=entry,
            latest=entry,
            owner=owner_for(character, user),
            character=character,
            position=position,
            kind=kind,
            difficulty=setup.difficulty,
            difficulty_hidden=difficulty_hidden,
            facts={
                **(facts or {}),
                "attribute": setup.attribute,
                "difficulty": setup.difficulty,
                "threshold": setup.threshold,
                "narrative": [],
                "final": False,
                **_reading_facts(entry, setup.difficulty),
            },
        )
        if move is not None:
            move.table_roll = tr
            move.save(update_fields=["table_roll"])
        _settle_if_decided(tr, character=character)
        return tr


def _reading_facts(entry: RollEntry, difficulty: int) -> dict[str, Any]:
    """What the card's actions read of the latest version without loading
    it: the faces as read, the positions converted, whether the version was
    extended (then no re-roll, roll-verification "Not fixed here"), its
    normals and chachis (A4), whether the action succeeds (A8) and what the
    (real) difficulty left (A9) — kept here, not signed, when the difficulty
    is hidden: the GM's card reads it."""
    game = entry.signed_game
    tally = aventuras.Tally(int(game["normals"]), int(game["chachis"]))
    remaining = aventuras.resolve(tally, difficulty).remaining
    return {
        "values": list(game["values"]),
        "converted": list(game["converted"]),
        "extended": entry.kind == RollEntry.Kind.EXTEND or bool(game["converted"]),
        "succeeded": bool(game["succeeded"]),
        "tally": [tally.normals, tally.chachis],
        "remaining": [remaining.normals, remaining.chachis],
    }


def _difficulty_of(table_roll: TableRoll) -> int:
    return int((table_roll.facts or {}).get("difficulty", table_roll.difficulty or 0))


def open_chachis(facts: dict[str, Any]) -> list[int]:
    """A5, A12 — the positions of the 6s not converted nor spent on a narrative effect."""
    narrative = {int(p) for p in facts.get("narrative") or []}
    return [i for i, v in enumerate(facts.get("values") or []) if v == aventuras.CHACHI and i not in narrative]


def is_final(table_roll: TableRoll) -> bool:
    return bool((table_roll.facts or {}).get("final"))


def roll_tally(table_roll: TableRoll) -> aventuras.Tally:
    """The final reading of the roll's latest version. A12 — a chachi spent
    on a narrative effect still counts as a success, but no longer as a
    chachi for the action's effects: it counts as a normal success here
    (``rules.aventuras.spend_on_narrative``). Read from the table roll's
    facts (no query); a roll whose facts predate the tally reads its latest
    version."""
    facts = table_roll.facts or {}
    if "tally" in facts:
        normals, chachis = (int(n) for n in facts["tally"])
    else:
        game = table_roll.latest.signed_game
        normals, chachis = int(game["normals"]), int(game["chachis"])
    narrative = len(facts.get("narrative") or [])
    return aventuras.spend_on_narrative(aventuras.Tally(normals, chachis), narrative)


def chachis_left(table_roll: TableRoll) -> int:
    """The chachis left for the action's effects: none when it fails (A6),
    those the difficulty did not cancel (A9), and not those spent on a
    narrative effect (A12). The only place that counts them: the card's body
    and actions read this."""
    return aventuras.resolve(roll_tally(table_roll), _difficulty_of(table_roll)).chachis


# --- Who may act, and what is left to decide ---------------------------------------------


def may_act(table_roll: TableRoll, user, *, is_gm: bool) -> bool:
    """Who decides what to do with a roll: the player of a player character
    (who owns the roll), or the GM for an NPC's roll."""
    if not getattr(user, "is_authenticated", False):
        return False
    character = table_roll.character
    if character is None or character.is_npc:
        return is_gm or (character is None and table_roll.owner_id == user.pk)
    return table_roll.owner_id == user.pk or character.owner_id == user.pk


def _turn_of(table_roll: TableRoll) -> str:
    """A24 — the turn a point spent on this roll belongs to: its post's."""
    if table_roll.post_id:
        return ledger.post_turn(table_roll.post_id)
    return ledger.turn_of(table_roll.character, table_roll.scene)


def reroll_refusal(table_roll: TableRoll, *, sheet: AventurasSheet | None, rerolled_this_turn: bool) -> str | None:
    """Why a hero point cannot re-roll this roll now (a Spanish message), or
    None: a GM character has no points (A20), one re-roll per turn (A24), a
    point or 2 XP to pay (A22, A28), and never an extended version."""
    facts = table_roll.facts or {}
    if facts.get("extended"):
        return _(
            "Ya has convertido un 6 en esta tirada: una tirada ampliada no se puede repetir "
            "(el registro de tiradas no lo permite)."
        )
    if sheet is None or not sheet.is_hero:
        return _("Los personajes del director no tienen puntos de Héroe.")
    if rerolled_this_turn:
        return _("Ya has gastado un punto de Héroe en «repetir dados» este turno: cada punto, en un uso distinto.")
    if sheet.hero_points < 1 and sheet.experience < aventuras.EXPERIENCE_PER_HERO_POINT:
        return _("No te quedan puntos de Héroe (ni 2 PX para uno instantáneo).")
    return None


def _rerolled_this_turn(table_roll: TableRoll) -> bool:
    return HeroMove.objects.filter(
        character_id=table_roll.character_id,
        turn=_turn_of(table_roll),
        kind=HeroMove.Kind.SPEND,
        use=HeroSpend.REROLL.value,
    ).exists()


def _sheet_or_none(character: Character | None) -> AventurasSheet | None:
    if character is None:
        return None
    return AventurasSheet.objects.filter(pk=character.pk).first()


def _settle_if_decided(table_roll: TableRoll, *, character: Character | None = None) -> None:
    """Final at once when nothing is left to decide: no chachi to convert or
    spend, and no hero re-roll possible."""
    if is_final(table_roll) or open_chachis(table_roll.facts):
        return
    sheet = _sheet_or_none(character or table_roll.character)
    if (
        reroll_refusal(table_roll, sheet=sheet, rerolled_this_turn=_rerolled_this_turn(table_roll)) is None
        and table_roll.character is not None
    ):
        return
    _make_final(table_roll)


def _make_final(table_roll: TableRoll, *, closed_by=None) -> None:
    """The result is final; ``closed_by`` (the GM closing a roll that is not
    theirs to decide) is recorded with the time in the roll's facts, so the
    card can say who closed it and when."""
    facts = {**table_roll.facts, "final": True}
    if closed_by is not None:
        facts |= {
            "settled_by": closed_by.pk,
            "settled_by_name": str(closed_by),
            "settled_at": timezone.now().isoformat(),
        }
    table_roll.facts = facts
    table_roll.save(update_fields=["facts"])
    signals.roll_settled.send(sender=TableRoll, table_roll=table_roll)


# --- The chain: convert, spend on an effect, re-roll, «¡Ya está!» ----------------------------


def lock_table_roll(table_roll: TableRoll) -> TableRoll:
    """The table roll's row, locked until the transaction ends (the chain's
    steps on one roll queue here). The bare row is locked first: a locking
    query that joins ``latest`` would lose the row on PostgreSQL when a
    concurrent step moves ``latest`` while it waits."""
    list(TableRoll.objects.select_for_update().filter(pk=table_roll.pk).values_list("pk", flat=True))
    return (
        TableRoll.objects.select_for_update(of=("self",))
        .select_related("latest", "first", "campaign", "character", "owner", "post", "scene")
        .get(pk=table_roll.pk)
    )


def _locked_to_act(table_roll: TableRoll, user) -> TableRoll:
    """The roll's row locked, once ``user`` may act on it (final or not)."""
    tr = lock_table_roll(table_roll)
    if not is_aventuras(tr.latest):
        raise ValidationError(_("Esta tirada no es de Hora de Aventuras."), code="not_aventuras")
    access = campaign_access(user, tr.campaign)
    if not may_act(tr, user, is_gm=access.is_gm):
        raise ValidationError(
            _("Solo quien hizo la tirada (o la dirección, con sus personajes) decide qué hacer con ella."),
            code="not_yours",
        )
    return tr


def _refuse_final(tr: TableRoll) -> None:
    if is_final(tr):
        raise ValidationError(
            _("La tirada ya está cerrada: su resultado es definitivo y no se puede cambiar."), code="final"
        )


def _locked_for_chain(table_roll: TableRoll, user) -> TableRoll:
    tr = _locked_to_act(table_roll, user)
    _refuse_final(tr)
    return tr


def _is_version_of(tr: TableRoll, entry: RollEntry) -> bool:
    """Whether ``entry`` is one of ``tr``'s versions: its parents lead back
    to the roll's first version (a step per query; only a retry asks)."""
    parent_id = entry.parent_id
    while parent_id is not None:
        if parent_id == tr.first_id:
            return True
        parent_id = RollEntry.objects.filter(pk=parent_id).values_list("parent_id", flat=True).first()
    return False


def _earlier_step(tr: TableRoll, user, client_seed: str | None, kind: str) -> RollEntry | None:
    """The step (a conversion's ``extend``, a hero re-roll's ``reroll``)
    ``client_seed`` already made of ``tr``: a retried form, the browser seed
    being the idempotency key (rollog/v1 §3.3). None for a seed not used yet;
    a seed used for anything else (another roll, another step, another
    user's) is refused in Spanish. The caller holds the roll's lock, so a
    retry racing the first request waits for it and finds its entry; it is
    recognised before the refusals the first request's step now causes
    (the roll closed, the 6 converted, the hero point's use this turn)."""
    earlier = earlier_entry(campaign=tr.campaign, user=user, client_seed=client_seed)
    if earlier is None:
        return None
    if earlier.kind == kind and _is_version_of(tr, earlier):
        return earlier
    raise seed_used()


def _fields_of(entry: RollEntry) -> dict[str, Any]:
    game = entry.signed_game
    return {key: game[key] for key in CARRIED if key in game}


def _chachi_refusal(tr: TableRoll, position: int, *, converting: bool = True) -> str | None:
    values = tr.facts.get("values") or []
    if not isinstance(position, int) or isinstance(position, bool) or not 0 <= position < len(values):
        return _("Ese dado no está en la tirada.")
    if int(position) in {int(p) for p in tr.facts.get("narrative") or []}:
        return _("Ese 6 ya se gastó en un efecto narrativo: no se puede usar otra vez.")
    if position in (tr.facts.get("converted") or []):
        return _("Ese 6 ya se convirtió en un 5.")
    if values[position] != aventuras.CHACHI:
        if converting:
            message = _("Solo se puede convertir un 6 (éxito chachi): el dado %(n)d es un %(value)d.")
        else:
            message = _("Solo se gasta en un efecto un 6 (éxito chachi): el dado %(n)d es un %(value)d.")
        return message % {"n": position + 1, "value": values[position]}
    return None


def convert(*, table_roll: TableRoll, user, position: int, client_seed: str | None = None) -> RollEntry:
    """A5 — count the 6 at ``position`` (0-based, in the dice) as a 5 and add
    one die: an ``extend`` entry of 1d6 whose signed ``converted`` names the
    position. A chachi on the added die may be converted again. Refused in
    Spanish, nothing changed, when the die is not an open 6 or the roll is
    final. A retried form (the same browser ``client_seed``) returns the
    conversion it made, nothing done again."""
    with transaction.atomic():
        tr = _locked_to_act(table_roll, user)
        earlier = _earlier_step(tr, user, client_seed, RollEntry.Kind.EXTEND)
        if earlier is not None:
            return earlier
        _refuse_final(tr)
        refusal = _chachi_refusal(tr, position)
        if refusal is not None:
            raise ValidationError(refusal, code="position")
        parent = tr.latest
        game = parent.signed_game
        entry = extend_append(
            parent=parent,
            user=user,
            spec=f"1d{aventuras.FACES}",
            purpose=parent.purpose,
            read=aventuras_reader(
                _fields_of(parent),
                difficulty=int(tr.facts.get("difficulty", tr.difficulty or 0)),
                converted=[*game.get("converted", []), position],
                step=STEP_CONVERT,
            ),
            extra={"converted": [position]},
            client_seed=client_seed,
        )
        tr.latest = entry
        tr.facts = {**tr.facts, **_reading_facts(entry, _difficulty_of(tr))}
        tr.save(update_fields=["latest", "facts"])
        _settle_if_decided(tr)
        return entry


def spend_on_effect(*, table_roll: TableRoll, user, position: int) -> TableRoll:
    """A12 — spend the chachi at ``position`` on a narrative effect: it still
    counts as a success, but can no longer be converted nor used for the
    action's chachi effects. Recorded in the roll's facts (not the log)."""
    with transaction.atomic():
        tr = _locked_for_chain(table_roll, user)
        refusal = _chachi_refusal(tr, position, converting=False)
        if refusal is not None:
            raise ValidationError(refusal, code="position")
        tr.facts = {**tr.facts, "narrative": sorted({*tr.facts.get("narrative", []), position})}
        tr.save(update_fields=["facts"])
        _settle_if_decided(tr)
        return tr


def hero_reroll(
    *,
    table_roll: TableRoll,
    user,
    positions: Sequence[int],
    with_experience: bool = False,
    client_seed: str | None = None,
) -> RollEntry:
    """A22 — spend a hero point (or, A28, 2 XP for an instant one) to re-roll
    the dice at ``positions``: a ``reroll`` entry, paid in the same
    transaction through the ledger, which refuses a second re-roll this
    turn (A24) or a point the character does not have. Never on an extended
    version (roll-verification "Not fixed here"), never a die spent on a
    narrative effect (A12). A retried form (the same browser
    ``client_seed``) returns the re-roll it made: no second point, no
    second ledger line."""
    with transaction.atomic():
        tr = _locked_to_act(table_roll, user)
        earlier = _earlier_step(tr, user, client_seed, RollEntry.Kind.REROLL)
        if earlier is not None:
            return earlier
        _refuse_final(tr)
        values = tr.facts.get("values") or []
        chosen = sorted(set(positions))
        if not chosen:
            raise ValidationError(_("Elige al menos un dado que repetir."), code="positions")
        if any(not isinstance(p, int) or isinstance(p, bool) or not 0 <= p < len(values) for p in chosen):
            raise ValidationError(_("Ese dado no está en la tirada."), code="positions")
        if set(chosen) & {int(p) for p in tr.facts.get("narrative") or []}:
            raise ValidationError(_("Un 6 gastado en un efecto narrativo ya no se puede repetir."), code="positions")
        if tr.facts.get("extended"):
            raise ValidationError(reroll_refusal(tr, sheet=None, rerolled_this_turn=False) or "", code="extended")
        if tr.character is None:
            raise ValidationError(_("Esta tirada no es de ningún personaje: no hay puntos de Héroe."), code="hero")
        parent = tr.latest
        # The sheet's row (the ledger locks it) before the log's head.
        ledger.spend(
            tr.character,
            HeroSpend.REROLL,
            by=user,
            turn=_turn_of(tr),
            scene=tr.scene,
            table_roll=tr,
            detail=parent.purpose,
            why=ngettext("Repite %(n)d dado de «%(purpose)s»", "Repite %(n)d dados de «%(purpose)s»", len(chosen))
            % {"n": len(chosen), "purpose": parent.purpose},
            with_experience=with_experience,
        )
        entry = reroll_append(
            parent=parent,
            user=user,
            positions=chosen,
            purpose=parent.purpose,
            read=aventuras_reader(
                _fields_of(parent), difficulty=int(tr.facts.get("difficulty", tr.difficulty or 0)), step=STEP_REROLL
            ),
            client_seed=client_seed,
        )
        tr.latest = entry
        tr.facts = {**tr.facts, **_reading_facts(entry, _difficulty_of(tr)), "rerolled": True}
        tr.save(update_fields=["latest", "facts"])
        _settle_if_decided(tr)
        return entry


def settle(table_roll: TableRoll, *, by) -> TableRoll:
    """«¡Ya está!» — the roller (or the GM, for any roll) closes the roll: its
    result is final, the GM narrates a failure (A11) and the chachis left
    are the player's (A6). Sends ``signals.roll_settled`` in the same
    transaction."""
    with transaction.atomic():
        tr = lock_table_roll(table_roll)
        access = campaign_access(by, tr.campaign)
        if not (access.is_gm or may_act(tr, by, is_gm=access.is_gm)):
            raise ValidationError(_("Solo quien hizo la tirada o la dirección pueden cerrarla."), code="not_yours")
        if is_final(tr):
            raise ValidationError(_("La tirada ya está cerrada: ya se dijo «¡Ya está!»."), code="final")
        # The GM's «Cerrar la tirada» on a roll that was someone else's to
        # decide leaves a record; the roller's own «¡Ya está!» does not.
        roller = may_act(tr, by, is_gm=access.is_gm)
        _make_final(tr, closed_by=None if roller else by)
        return tr
