"""HITOS at the table: checks rolled from a character's sheet, their re-rolls,
and drama points moved between characters and the GM's pool.

Everything that rolls goes through ``rolls.services`` (the signed log); every
number comes from ``rules/``. Each write function runs in the caller's
transaction or opens one; drama points and the roll that spends them commit
together.

Lock order, for every flow at the table (so two of them never deadlock): the
flow's own row (a table roll, an attack, a horror exposure), then the campaign
row (the GM's pool), then character rows by id, then the roll log's head
(``rolls.services`` takes it last, when it appends).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Q
from django.utils.translation import gettext as _

from campaigns.models import Campaign
from rolls.models import RollEntry
from rolls.services import reroll_append
from rules import hitos
from rules.hitos_drama import GM_POOL, Side
from rules.probability import success_probability
from sheets.models import Character
from systems.hitos.models import CHARACTERISTIC_FIELDS, CHARACTERISTIC_LABELS, Attack, TableRollKind
from systems.hitos.reading import campaign_options, hitos_check_roll, hitos_reader

# A module, not its names: the sheet's services roll through this one (``health``).
from systems.hitos.sheet import services as sheet_services
from table.models import TableRoll

ARCANE_CATEGORIES = frozenset({"arcana"})


# --- What is rolled: the modifier and its breakdown ------------------------------------


@dataclass(frozen=True)
class CheckSetup:
    """A check's modifier, the named parts that make it (for the card), what
    was rolled ("Reflejos + Sigilo") and whether an arcane skill is used."""

    modifier: int
    breakdown: tuple[tuple[str, int], ...]
    what: str
    arcane: bool = False


def check_setup(
    character: Character | None,
    *,
    characteristic: str = "",
    skill: str = "",
    free_modifier: int | None = None,
    extra: Iterable[tuple[str, int]] = (),
    penalties: bool = True,
) -> CheckSetup:
    """Characteristic + skill from the sheet (or a free modifier), the extra
    modifiers with their reasons and the sheet's health and mental penalties
    (H54, H55, H83), applied by themselves.

    Raises ``ValidationError`` with a Spanish message when the sheet has no
    such characteristic or skill.
    """
    parts: list[tuple[str, int]] = []
    what: list[str] = []
    arcane = False
    if free_modifier is not None and not characteristic:
        parts.append((_("Modificador"), int(free_modifier)))
    else:
        if characteristic not in CHARACTERISTIC_FIELDS or character is None:
            raise ValidationError(_("Elige una característica de la ficha."), code="characteristic")
        label = str(CHARACTERISTIC_LABELS[characteristic])
        parts.append((label, getattr(character.hitos, characteristic)))
        what.append(label)
        if skill:
            found = next((s for s in character.skills.all() if s.name == skill), None)
            if found is None:
                raise ValidationError(
                    _("La ficha de %(name)s no tiene la habilidad «%(skill)s».")
                    % {"name": character.name, "skill": skill},
                    code="skill",
                )
            parts.append((found.name, found.value))
            what.append(found.name)
            arcane = found.category in ARCANE_CATEGORIES
    for reason, value in extra:
        if value:
            parts.append((reason.strip() or _("Modificador"), int(value)))
    if penalties and character is not None:
        sheet = character.hitos
        if sheet.health_penalty:
            parts.append((_("Salud: %(state)s") % {"state": sheet.health_label}, sheet.health_penalty))
        if not character.is_npc and sheet.mental_penalty:
            parts.append((_("Mente: %(state)s") % {"state": sheet.mental_label}, sheet.mental_penalty))
    modifier = sum(value for _label, value in parts)
    return CheckSetup(modifier, tuple(parts), " + ".join(what) or _("Tirada"), arcane)


def chance(setup: CheckSetup, difficulty: int, campaign: Campaign):
    """The exact chance of success (a Fraction) of a check, from ``rules/``."""
    return success_probability(setup.modifier, difficulty, strict=campaign_options(campaign).strict_success)


# --- Rolling and re-rolling --------------------------------------------------------------


def table_check(
    *,
    campaign: Campaign,
    user,
    setup: CheckSetup,
    purpose: str,
    difficulty: int | None,
    difficulty_hidden: bool = False,
    character: Character | None = None,
    scene=None,
    post=None,
    kind: str = TableRollKind.CHECK,
    client_seed: str | None = None,
    position: int = 0,
    owner=None,
    facts: dict | None = None,
) -> TableRoll:
    """3d10 through the log, read as a HITOS check, with its ``TableRoll``.

    ``user`` rolls (the log says so); ``owner`` is who answers for the roll at
    the table (activations against it, re-rolls as its character): by default
    the user, the character's player when the GM rolls for a player character.
    Runs inside the caller's transaction when there is one (the post and its
    rolls, an attack and its record, commit together).
    """
    with transaction.atomic():
        # The one way a HITOS check enters the log (secret rolls take it too).
        entry, _result = hitos_check_roll(
            campaign=campaign,
            user=user,
            purpose=purpose,
            modifier=setup.modifier,
            difficulty=difficulty,
            difficulty_hidden=difficulty_hidden,
            breakdown=setup.breakdown,
            what=setup.what,
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
        return TableRoll.objects.create(
            campaign=campaign,
            scene=scene,
            post=post,
            first=entry,
            latest=entry,
            kind=kind,
            owner=owner or user,
            character=character,
            difficulty=difficulty,
            difficulty_hidden=difficulty_hidden,
            position=position,
            facts={"modifier": setup.modifier, "arcane": setup.arcane, **(facts or {})},
        )


def roll_modifier(table_roll: TableRoll) -> int:
    """The check's whole modifier, kept with the table roll (a re-roll reads
    the new dice with it)."""
    return int(table_roll.facts.get("modifier", 0))


def is_arcane(table_roll: TableRoll) -> bool:
    """An action with an arcane skill: activations on it may take
    Degeneración (H92)."""
    return bool(table_roll.facts.get("arcane", False))


def owner_for(character: Character | None, user):
    """Who answers for a roll made by ``user`` as ``character``: a player
    character's player, else the user (the GM for NPCs)."""
    if character is not None and not character.is_npc:
        return character.owner
    return user


def lock_table_roll(table_roll: TableRoll) -> TableRoll:
    """The table roll's row, locked until the transaction ends (activations
    on one roll queue here). Call inside ``transaction.atomic``.

    The bare row is locked first: a locking query that joins ``latest`` would
    lose the row on PostgreSQL when a concurrent re-roll moves ``latest``
    while it waits (the re-check of the join finds no match)."""
    list(TableRoll.objects.select_for_update().filter(pk=table_roll.pk).values_list("pk", flat=True))
    return (
        TableRoll.objects.select_for_update(of=("self",))
        .select_related("latest", "first", "campaign", "character", "owner")
        .get(pk=table_roll.pk)
    )


def reroll_refusals(table_rolls: Iterable[TableRoll]) -> dict[int, str | None]:
    """Why each roll may no longer be re-rolled (a Spanish message), or None,
    by table roll id, in at most three queries however many rolls:

    - horror exposures never (Q11: aspects shift the level instead);
    - initiative never (the combat's order was settled from those dice, H40);
    - an attack once its damage is applied or its effect decided;
    - an opposed roll when a tie-break round followed it.

    Every re-roll goes through ``table_reroll``, which asks this first; the
    activation forms and the roll cards ask it too."""
    from systems.hitos.models import OpposedRoll

    table_rolls = list(table_rolls)
    refusals: dict[int, str | None] = {tr.pk: None for tr in table_rolls}
    attacks = [tr.pk for tr in table_rolls if tr.kind == TableRollKind.ATTACK]
    opposed = [tr.pk for tr in table_rolls if tr.kind == TableRollKind.OPPOSED]
    resolved = set()
    if attacks:
        resolved = set(
            Attack.objects.filter(table_roll__in=attacks)
            .filter(Q(damage_applied__isnull=False) | Q(effect_decided=True))
            .values_list("table_roll_id", flat=True)
        )
    superseded = set()
    if opposed:
        rounds = list(
            OpposedRoll.objects.filter(Q(first__in=opposed) | Q(second__in=opposed)).values_list(
                "pk", "first_id", "second_id"
            )
        )
        followed = set(
            OpposedRoll.objects.filter(tiebreak_of__in=[pk for pk, _a, _b in rounds]).values_list(
                "tiebreak_of_id", flat=True
            )
        )
        superseded = {side for pk, first, second in rounds if pk in followed for side in (first, second)}
    for tr in table_rolls:
        if tr.kind == TableRollKind.HORROR:
            refusals[tr.pk] = _("En una prueba de horror los aspectos no repiten dados: mueven el nivel de horror.")
        elif tr.kind == TableRollKind.INITIATIVE:
            refusals[tr.pk] = _("La iniciativa ya ordenó el combate: no se repite con aspectos.")
        elif tr.pk in resolved:
            refusals[tr.pk] = _("El daño de este ataque ya está resuelto: la tirada no se puede repetir.")
        elif tr.pk in superseded:
            refusals[tr.pk] = _("Ese empate ya se deshizo con nuevas tiradas: actúa sobre la última ronda.")
    return refusals


def reroll_refusal(table_roll: TableRoll) -> str | None:
    """``reroll_refusals`` for one roll."""
    return reroll_refusals([table_roll])[table_roll.pk]


def table_reroll(
    table_roll: TableRoll,
    *,
    user,
    positions: Sequence[int],
    reading: hitos.Reading,
    purpose: str = "",
    activation: str | None = None,
    aspect: str = "",
    target_user=None,
    paid_by=None,
    payment: str = "",
    client_seed: str | None = None,
) -> RollEntry:
    """Re-roll ``positions`` (0–2) of the latest version, read with ``reading``
    (H15 positive, H19 negative); the table roll then points at the new entry,
    and an opposed round is read again (a tie the action does not allow gets
    its tie-break, H9). ``client_seed`` is the browser's seed for the new
    dice (rollog/v1 §3.3; None without JavaScript: the server makes one);
    a tie-break it brings derives its rolls' seeds from it. Refused
    (``ValidationError``) when ``reroll_refusal`` says so. The caller holds
    the lock from ``lock_table_roll`` and, for a browser seed, has asked
    ``rolls.services.earlier_entry`` first: a retry must not pay again."""
    refusal = reroll_refusal(table_roll)
    if refusal is not None:
        raise ValidationError(refusal, code="no_reroll")
    if table_roll.kind == TableRollKind.METER and table_roll.character_id:
        # The sheet the re-read changes, locked before the log's head (the lock order).
        list(Character.objects.select_for_update().filter(pk=table_roll.character_id).values_list("pk", flat=True))
    parent = table_roll.latest
    game = parent.signed_game
    read = hitos_reader(
        campaign=table_roll.campaign,
        what=game.get("what", ""),
        modifier=roll_modifier(table_roll),
        difficulty=table_roll.difficulty,
        difficulty_hidden=table_roll.difficulty_hidden,
        breakdown=[tuple(part) for part in game.get("breakdown", [])],
        reading=reading,
    )
    entry = reroll_append(
        parent=parent,
        user=user,
        positions=positions,
        purpose=purpose or parent.purpose,
        read=read,
        activation=activation,
        aspect=aspect,
        target_user=target_user,
        paid_by=paid_by,
        payment=payment,
        client_seed=client_seed,
    )
    table_roll.latest = entry
    table_roll.save(update_fields=["latest"])
    if table_roll.kind == TableRollKind.OPPOSED:
        from systems.hitos.opposed import services as opposed

        opposed.after_reroll(table_roll, actor=user, client_seed=client_seed)
    elif table_roll.kind == TableRollKind.METER:
        sheet_services.meter_reread(
            previous=parent, entry=entry, check=table_result(table_roll), facts=table_roll.facts, actor=user
        )
    return entry


def table_result(table_roll: TableRoll) -> hitos.CheckResult:
    """The check as its latest version reads (after any re-roll)."""
    entry = table_roll.latest
    reading = entry.signed_game.get("reading") or hitos.Reading.NORMAL
    roll = hitos.HitosRoll(tuple(entry.entry["dice"]), reading)
    return hitos.check(
        roll, roll_modifier(table_roll), table_roll.difficulty or 0, campaign_options(table_roll.campaign)
    )


def parse_positions(values: Iterable[str]) -> list[int]:
    """Dice positions from a form (``0``–``2``); anything else is refused."""
    positions: list[int] = []
    for value in values:
        text = str(value).strip()
        if not (text.isascii() and text.isdigit()) or int(text) > 2:
            raise ValidationError(_("Los dados se eligen por su posición: 0, 1 o 2."), code="bad_positions")
        positions.append(int(text))
    if not positions:
        raise ValidationError(_("Elige al menos un dado que repetir."), code="bad_positions")
    return sorted(set(positions))


# --- Drama points: moved by the sheet services (which own them); the parties here -----


def side_for(character: Character | None) -> Side:
    """The party of an activation: a character (NPCs use the GM's pool, H24)
    or, with no character, the GM's pool itself."""
    if character is None:
        return Side(GM_POOL)
    return Side(sheet_services.drama_account(character), npc=character.is_npc)
