"""Vaesen tests at the table: a pool of d6s from the sheet, rolled through the
signed log, and pushing a failed test (V1–V11, V15, V16).

Everything that rolls goes through ``rolls.services`` (the signed log); every
number comes from ``rules.vaesen``. The card is built from the signed
``game`` fields alone (``vaesen_reader`` writes them), so a permalink and an
offline verifier read the same test.

Lock order when pushing, as at every flow of the table: the table roll's
row, then the character's row, then the roll log's head (``rolls.services``
takes it last, when it appends).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from campaigns.models import Campaign
from rolls import rollog
from rolls.models import RollEntry
from rolls.services import Reader, earlier_entry, reroll_append, roll_append, seed_used
from rules import vaesen
from rules.dice import FixedDice
from sheets.models import Character
from systems.vaesen.options.tables import injury_for, npc_penalty
from systems.vaesen.sheet.services import add_injury, apply_conditions, kind_word, npc_test_taken
from table.models import TableRoll

# Free pools the GM rolls (the log itself takes up to 100 dice).
MAX_FREE_POOL = 30
MAX_NEEDED = 10

# The attributes as people read them (the rules name them in lower case).
ATTRIBUTE_LABELS = {
    "físico": gettext_lazy("Físico"),
    "precisión": gettext_lazy("Precisión"),
    "lógica": gettext_lazy("Lógica"),
    "empatía": gettext_lazy("Empatía"),
}
# V22 — armour penalises this skill.
AGILITY = "Agilidad"


@dataclass(frozen=True)
class PoolSetup:
    """What a test rolls: the pool, the named parts that make it (for the
    card), what was rolled ("Físico + Agilidad"), the attribute (empty for a
    free pool) and its kind of condition, and the successes needed."""

    pool: int
    breakdown: tuple[tuple[str, int], ...]
    what: str
    attribute: str = ""
    skill: str = ""
    needed: int = 1

    @property
    def kind(self) -> vaesen.ConditionKind | None:
        return vaesen.attribute_kind(self.attribute) if self.attribute else None

    @property
    def floored(self) -> bool:
        """The parts add up to less than one die: one die is rolled anyway (V9)."""
        return sum(value for _label, value in self.breakdown) < self.pool

    @property
    def chance(self) -> Fraction:
        # V2/V3 — the exact chance of at least ``needed`` 6s.
        return vaesen.success_probability(self.pool, self.needed)

    @property
    def chance_percent(self) -> float:
        return float(self.chance * 100)

    @property
    def push_chance(self) -> Fraction | None:
        """The chance when a failure is pushed (V6); None for a free pool,
        which has no attribute to say what pushing would cost (V7)."""
        if self.kind is None:
            return None
        return vaesen.success_probability(self.pool, self.needed, push=True)

    @property
    def push_percent(self) -> float | None:
        chance = self.push_chance
        return None if chance is None else float(chance * 100)


def _sheet(character: Character):
    sheet = getattr(character, "vaesen", None)
    if sheet is None:
        raise ValidationError(_("%(name)s no tiene ficha de Vaesen.") % {"name": character.name}, code="attribute")
    return sheet


def broken_refusal(character: Character | None) -> str | None:
    """Why the character cannot roll at all: Broken by physical harm, every
    test fails by itself (V11); None otherwise."""
    if character is None:
        return None
    sheet = getattr(character, "vaesen", None)
    if sheet is not None and sheet.conditions().fails_every_test:
        return _(
            "%(name)s está «Derrotado» por daño físico: falla automáticamente cualquier prueba, "
            "así que no hay nada que tirar."
        ) % {"name": character.name}
    return None


def pool_setup(
    character: Character | None,
    *,
    attribute: str = "",
    skill: str = "",
    free_pool: int | None = None,
    helpers: int = 0,
    item_id: int | None = None,
    modifier: int = 0,
    needed: int = 1,
) -> PoolSetup:
    """Attribute + skill from the sheet (V1, V4) or a free pool of the GM, the
    help (V15), the chosen equipment's bonus dice (V16), the modifier (V5),
    and the sheet's conditions of the attribute's kind (V9), through
    ``rules.vaesen.pool_size``.

    Raises ``ValidationError`` (its ``code`` names the field to show it on)
    when the sheet lacks what is asked, or when the character is Broken by
    physical harm (V11: every test fails, nothing is rolled).
    """
    attribute = _attribute_of(attribute, skill)
    refusal = broken_refusal(character)
    if refusal is not None:
        raise ValidationError(refusal, code="attribute")
    if not attribute:
        if free_pool is None:
            raise ValidationError(_("Elige un atributo o una reserva libre de dados."), code="attribute")
        if item_id is not None:
            raise ValidationError(_("El equipo solo se usa con un atributo de la ficha."), code="item")
        return _setup(
            [(_("Reserva libre"), free_pool)], [], base=free_pool, needed=needed, helpers=helpers, modifier=modifier
        )
    if character is None:
        raise ValidationError(_("Para tirar un atributo hace falta una ficha."), code="attribute")
    sheet = _sheet(character)
    label = str(ATTRIBUTE_LABELS[attribute])
    parts: list[tuple[str, int]] = [(label, sheet.attribute(attribute))]
    what = [label]
    skill_value = sheet.skill(skill) if skill else 0
    if skill:
        parts.append((skill, skill_value))
        what.append(skill)
    # The sheet's own dice beyond attribute + skill, for ``pool_size``'s modifier.
    extra: list[tuple[str, int]] = []
    if skill == AGILITY and sheet.armour_agility_penalty:
        # V22 — armour penalises Agilidad.
        extra.append((_("Armadura"), -sheet.armour_agility_penalty))
    extra += _item_part(character, sheet, item_id, skill)
    kind = vaesen.attribute_kind(attribute)
    conditions = 0
    if sheet.uses_resistance:
        # V20 — a human NPC or an animal: one die less per Resistencia point
        # lost (Q18 default, every test), or per point lost since its last
        # test (the campaign's option, S003's literal reading).
        mode = npc_penalty(character.campaign)
        lost = vaesen.npc_dice_penalty(sheet.resistance_lost, sheet.resistance_unspent, mode)
        if lost:
            label = (
                _("Resistencia perdida desde su última prueba")
                if mode is vaesen.NpcPenalty.NEXT_TEST
                else _("Resistencia perdida")
            )
            extra.append((label, -lost))
    else:
        # V9 — one die less per condition of the attribute's kind.
        marked = sheet.conditions()
        conditions = marked.penalty(kind)
        if conditions:
            names = ", ".join(c for c in vaesen.CONDITION_NAMES[kind] if c in marked.of(kind))
            parts.append((_("Estados: %(names)s") % {"names": names}, -conditions))
    return _setup(
        parts + extra,
        what,
        base=parts[0][1],
        skill_value=skill_value,
        sheet_modifier=sum(value for _label, value in extra),
        conditions=conditions,
        needed=needed,
        helpers=helpers,
        modifier=modifier,
        attribute=attribute,
        skill=skill,
    )


def _attribute_of(attribute: str, skill: str) -> str:
    """The attribute of the test: the one chosen, or the skill's (each skill
    hangs from one attribute); refused when they do not go together."""
    if attribute and attribute not in vaesen.ATTRIBUTES:
        raise ValidationError(_("Atributo desconocido: «%(name)s».") % {"name": attribute}, code="attribute")
    if not skill:
        return attribute
    if skill not in vaesen.SKILL_ATTRIBUTE:
        raise ValidationError(_("Habilidad desconocida: «%(skill)s».") % {"skill": skill}, code="skill")
    if attribute and vaesen.SKILL_ATTRIBUTE[skill] != attribute:
        raise ValidationError(
            _("%(skill)s se tira con %(attribute)s.")
            % {"skill": skill, "attribute": ATTRIBUTE_LABELS[vaesen.SKILL_ATTRIBUTE[skill]]},
            code="skill",
        )
    return vaesen.SKILL_ATTRIBUTE[skill]


def _item_part(character: Character, sheet, item_id: int | None, skill: str) -> list[tuple[str, int]]:
    """V16 — the chosen piece of equipment's bonus dice, if it is on the
    sheet and helps with this skill."""
    if item_id is None:
        return []
    item = next((i for i in sheet.items.all() if i.pk == item_id), None)
    if item is None:
        raise ValidationError(_("Ese objeto no está en la ficha de %(name)s.") % {"name": character.name}, code="item")
    if item.skill and item.skill != skill:
        raise ValidationError(
            _("%(item)s sirve para %(skill)s.") % {"item": item.name, "skill": item.skill}, code="item"
        )
    return [(item.name, item.bonus)] if item.bonus else []


def _setup(
    parts: list[tuple[str, int]],
    what: list[str],
    *,
    base: int,
    needed: int,
    helpers: int,
    modifier: int,
    skill_value: int = 0,
    sheet_modifier: int = 0,
    conditions: int = 0,
    attribute: str = "",
    skill: str = "",
) -> PoolSetup:
    """The pool from ``rules.vaesen.pool_size`` and the parts the card names:
    the sheet's (``parts``), then the help (V15) and the modifier (V5)."""
    help_dice = vaesen.help_bonus(helpers)
    if help_dice:
        parts.append((_("Ayuda (%(n)s)") % {"n": helpers}, help_dice))
    if modifier:
        parts.append((_("Modificador"), modifier))
    pool = vaesen.pool_size(
        base, skill_value, modifier=modifier + sheet_modifier, conditions=conditions, helpers=helpers
    )
    return PoolSetup(
        pool=pool,
        breakdown=tuple(parts),
        what=" + ".join(what) or _("Reserva libre"),
        attribute=attribute,
        skill=skill,
        needed=needed,
    )


# --- The signed game fields ---------------------------------------------------------------


def game_fields(setup: PoolSetup) -> dict[str, Any]:
    """What a test's entries sign besides the reading: what was rolled and
    why the pool has its size (the re-roll of a push signs them again)."""
    kind = setup.kind
    return {
        "system": "vaesen",
        "what": rollog.normalise_purpose(setup.what),
        "attribute": setup.attribute,
        "skill": setup.skill,
        "kind": kind.value if kind is not None else "",
        "breakdown": [[rollog.normalise_purpose(str(label)), value] for label, value in setup.breakdown],
        "needed": setup.needed,
    }


def vaesen_reader(fields: dict[str, Any], *, pushed: bool = False, condition: str = "", broken: bool = False) -> Reader:
    """Signed game fields of a Vaesen test (``game["system"] == "vaesen"``):
    ``fields`` (``game_fields``), the pool, the successes (every 6, V2), the
    extra successes (V3) and the verdict, read by ``rules.vaesen``; a pushed
    version (V6) also says which condition it cost (V7) and whether that
    made the character Broken (V10)."""

    def read(dice: list[int]) -> dict[str, Any]:
        test = vaesen.PoolRoll(tuple(dice), needed=int(fields["needed"]), pushed=pushed)
        game = {
            **fields,
            "pool": len(dice),
            "successes": test.successes,
            "extra_successes": test.extra_successes,
            "success": test.succeeded,
            "pushed": pushed,
        }
        if pushed:
            game["condition"] = condition
            game["broken"] = broken
        return game

    return read


def signed_test(game: dict[str, Any], dice: Sequence[int]) -> vaesen.PoolRoll:
    """The test a signed entry holds, for ``rules.vaesen`` to judge."""
    kind = game.get("kind") or None
    return vaesen.PoolRoll(
        tuple(dice),
        needed=int(game.get("needed") or 1),
        kind=vaesen.ConditionKind(kind) if kind else None,
        pushed=bool(game.get("pushed")),
    )


# What a feature signs beside a test (``table_test``'s ``game``) and a push signs again:
# the kind of test ("fear", "opposed"), the Fear value and what causes it.
CARRIED = ("test", "fear", "against")


# --- Rolling --------------------------------------------------------------------------------


def injury_name(kind, value: int) -> str:
    """A critical injury the campaign's table does not name (V13)."""
    if vaesen.ConditionKind(kind) is vaesen.ConditionKind.PHYSICAL:
        return _("Herida crítica física %(value)s") % {"value": value}
    return _("Herida crítica mental %(value)s") % {"value": value}


def owner_for(character: Character | None, user):
    """Who answers for a roll made by ``user`` as ``character``: a player
    character's player, else the user (the GM for NPCs and free pools)."""
    if character is not None and not character.is_npc:
        return character.owner
    return user


def table_test(
    *,
    campaign: Campaign,
    user,
    setup: PoolSetup,
    purpose: str,
    character: Character | None = None,
    scene=None,
    post=None,
    client_seed: str | None = None,
    position: int = 0,
    kind: str = "check",
    game: dict[str, Any] | None = None,
    facts: dict[str, Any] | None = None,
) -> TableRoll:
    """``setup.pool`` d6s through the log, read as a Vaesen test, with its
    ``TableRoll``, inside the caller's transaction when there is one (the
    post and its rolls commit together). A post's audience seals the entry
    (``rolls.services.roll_append``). A feature's own test (a fear test, a
    side of an opposed roll …) gives its table roll ``kind``, signs ``game``
    beside the test's fields (``CARRIED`` keys, which a push signs again) and
    keeps its ``facts``."""
    with transaction.atomic():
        # The sheet's row before the log's head (the lock order).
        spend_npc_penalty(character, setup)
        entry = roll_append(
            campaign=campaign,
            user=user,
            spec=f"{setup.pool}d{vaesen.FACES}",
            purpose=purpose,
            read=vaesen_reader({**game_fields(setup), **(game or {})}),
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
        signed = entry.signed_game
        return TableRoll.objects.create(
            campaign=campaign,
            scene=scene,
            post=post,
            first=entry,
            latest=entry,
            owner=owner_for(character, user),
            character=character,
            position=position,
            kind=kind,
            # What the card's actions read without loading the entry.
            facts={
                **(facts or {}),
                "kind": signed["kind"],
                "success": signed["success"],
                "can_push": _may_push(entry),
            },
        )


def spend_npc_penalty(character: Character | None, setup: PoolSetup) -> None:
    """V20 — a human NPC's or an animal's test from its sheet spends the
    Resistencia points lost since its previous test (``NpcPenalty.NEXT_TEST``
    reads them for the next one)."""
    sheet = getattr(character, "vaesen", None) if character is not None else None
    if sheet is not None and setup.attribute and sheet.uses_resistance and sheet.resistance_unspent:
        npc_test_taken(character)


def _may_push(entry: RollEntry) -> bool:
    """The signed test, judged by the rules: failed, not pushed, something to
    re-roll (V6), and an attribute to say what it costs (V7)."""
    game = entry.signed_game
    return bool(game.get("kind")) and signed_test(game, entry.entry["dice"]).can_push


# --- Pushing (V6, V7, V10) ---------------------------------------------------------------------


def lock_table_roll(table_roll: TableRoll) -> TableRoll:
    """The table roll's row, locked until the transaction ends (pushes of one
    roll queue here). The bare row is locked first: a locking query that
    joins ``latest`` would lose the row on PostgreSQL when a concurrent push
    moves ``latest`` while it waits."""
    list(TableRoll.objects.select_for_update().filter(pk=table_roll.pk).values_list("pk", flat=True))
    return (
        TableRoll.objects.select_for_update(of=("self",))
        .select_related("latest", "first", "campaign", "character", "owner", "post")
        .get(pk=table_roll.pk)
    )


def push_refusal(table_roll: TableRoll, user, *, conditions: vaesen.Conditions | None = None) -> str | None:
    """Why ``user`` may not push this roll (a Spanish message), or None:
    only its owner, a player character's test with an attribute, once, right
    after a failure, and not while Broken of either kind (V6, V7, V10–V12). ``conditions``
    are the character's, when the caller has them (else not asked)."""
    facts = table_roll.facts or {}
    if table_roll.owner_id != getattr(user, "pk", None):
        return _("Solo quien hizo la tirada puede forzarla.")
    if not facts.get("kind"):
        return _("Una reserva libre no se puede forzar: no tiene atributo que diga qué estado cuesta.")
    character = table_roll.character
    if character is None or character.is_npc:
        return _("Solo se fuerzan las pruebas de los personajes jugadores.")
    if table_roll.latest_id != table_roll.first_id:
        return _("Esta tirada ya se forzó: solo se puede forzar una vez.")
    if facts.get("success") and not facts.get("tie"):
        # V14 — on an opposed roll's tie either side may push, even with successes.
        return _("Solo se puede forzar una tirada fallida.")
    if not facts.get("can_push"):
        return _("No queda ningún dado que no sea un 6 para repetir.")
    if conditions is not None and (conditions.broken_physical or conditions.broken_mental):
        # Issue 15, item 3 — no push while Broken of either kind (V10–V12), a
        # mentally Broken character's physical test included.
        return _("%(name)s está «Derrotado»: no puede forzar tiradas.") % {"name": character.name}
    return None


def free_conditions(conditions: vaesen.Conditions, kind: vaesen.ConditionKind) -> list[str]:
    """The conditions of ``kind`` a push may still mark, in the text's order (V8)."""
    marked = conditions.of(kind)
    return [name for name in vaesen.CONDITION_NAMES[kind] if name not in marked]


def earlier_push(table_roll: TableRoll, user, client_seed: str | None) -> RollEntry | None:
    """The push ``client_seed`` already made of ``table_roll`` (a retried
    form: the browser seed is the idempotency key, rollog/v1 §3.3), or None
    for a seed not used yet. A seed used for anything else (another roll,
    another user's) is refused in Spanish. The caller holds the table roll's
    lock, so a retry racing the first request waits for it and finds its entry."""
    earlier = earlier_entry(campaign=table_roll.campaign, user=user, client_seed=client_seed)
    if earlier is None:
        return None
    if (
        earlier.kind == RollEntry.Kind.REROLL
        and earlier.parent_id == table_roll.first_id
        and earlier.pk == table_roll.latest_id
    ):
        return earlier
    raise seed_used()


def push(*, table_roll: TableRoll, user, condition: str = "", client_seed: str | None = None) -> RollEntry:
    """Push a failed test (V6): every die but the 6s re-rolled as a
    ``reroll`` entry of the log, and the condition of the attribute's kind
    (V7) marked on the sheet, the player's ``condition`` among the free ones;
    with all three marked, the push makes the character Broken (V10).

    Side effects, in one transaction: the signed entry, the table roll
    pointing at it, and the sheet's conditions with their ``SheetEvent``.
    Refused (``ValidationError``, nothing changed) when ``push_refusal``
    says so or the condition is not a free one. A retried form (the same
    browser ``client_seed``) returns the push it made, nothing paid again.
    """
    with transaction.atomic():
        tr = lock_table_roll(table_roll)
        # A retry is recognised before the refusals: "ya se forzó" is its own push.
        earlier = earlier_push(tr, user, client_seed)
        if earlier is not None:
            return earlier
        refusal = push_refusal(tr, user)
        if refusal is not None:
            raise ValidationError(refusal, code="no_push")
        # The sheet the push marks, locked before the log's head (the lock order).
        character = Character.objects.select_for_update(of=("self",)).select_related("vaesen").get(pk=tr.character_id)
        conditions = _sheet(character).conditions()
        refusal = push_refusal(tr, user, conditions=conditions)
        if refusal is not None:
            raise ValidationError(refusal, code="no_push")
        kind = vaesen.ConditionKind(tr.facts["kind"])
        free = free_conditions(conditions, kind)
        if free and condition not in free:
            raise ValidationError(
                _("Elige uno de los estados libres: %(names)s.") % {"names": ", ".join(free)}, code="condition"
            )
        if not free and condition:
            raise ValidationError(
                _("No queda ningún estado %(kind)s libre: forzar deja al personaje Derrotado.")
                % {"kind": kind_word(kind)},
                code="condition",
            )
        parent = tr.latest
        game = parent.signed_game
        previous = signed_test(game, parent.entry["dice"])
        tie = bool(tr.facts.get("tie")) and not previous.pushed and previous.successes < len(previous.dice)
        if not (previous.can_push or tie):
            raise ValidationError(_("Solo se puede forzar una tirada fallida."), code="no_push")
        # V6 — every die that is not a 6.
        positions = [i for i, die in enumerate(previous.dice) if die != vaesen.SUCCESS_FACE]
        suffered = vaesen.suffer(conditions, kind, 1, choices=[condition] if condition else [])
        fields = {key: game[key] for key in ("system", "what", "attribute", "skill", "kind", "breakdown", "needed")}
        fields.update({key: game[key] for key in CARRIED if key in game})
        taken = suffered.taken[0] if suffered.taken else ""
        entry = reroll_append(
            parent=parent,
            user=user,
            positions=positions,
            purpose=parent.purpose,
            read=vaesen_reader(fields, pushed=True, condition=taken, broken=suffered.became_broken),
            client_seed=client_seed,
        )
        if suffered.became_broken:
            reason = _("Fuerza la tirada «%(purpose)s» y queda Derrotado (%(kind)s)") % {
                "purpose": parent.purpose,
                "kind": kind_word(kind),
            }
        else:
            reason = _("Fuerza la tirada «%(purpose)s»: %(condition)s") % {
                "purpose": parent.purpose,
                "condition": taken,
            }
        apply_conditions(character, suffered.conditions, actor=user, reason=reason, post=tr.post, roll=entry)
        tr.latest = entry
        tr.facts = {
            **tr.facts,
            "success": entry.signed_game["success"],
            "can_push": False,
            "broken": suffered.became_broken,
        }
        tr.save(update_fields=["latest", "facts"])
        if tr.facts.get("partner"):
            retie(tr)
        return entry


def retie(table_roll: TableRoll) -> None:
    """V14 — after one side of an opposed roll is rolled or pushed, both
    sides know whether they are tied (either may then push, once each).
    Takes the other side's row lock after this one's (the lock order of a
    push: the table roll pushed first)."""
    partner = (
        TableRoll.objects.select_for_update(of=("self",)).select_related("latest").get(pk=table_roll.facts["partner"])
    )
    ours = signed_test(table_roll.latest.signed_game, table_roll.latest.entry["dice"]).successes
    theirs = signed_test(partner.latest.signed_game, partner.latest.entry["dice"]).successes
    tie = vaesen.opposed(ours, theirs) is vaesen.Opposed.TIE
    for row in (table_roll, partner):
        test = signed_test(row.latest.signed_game, row.latest.entry["dice"])
        row.facts = {
            **row.facts,
            "tie": tie,
            "can_push": test.can_push or (tie and not test.pushed and test.successes < len(test.dice)),
        }
        row.save(update_fields=["facts"])


# --- The critical injury a push that breaks the character causes (V10, V13) ----------------

INJURY = "injury"


def injury_reader(kind: str, *, of: str) -> Reader:
    """Signed game fields of a critical injury roll: 2d6 read "desglosados"
    (the first die the tens, the second the units: 11–66, V13), its kind and
    the push that caused it (``of``, that version's permalink)."""

    def read(dice: list[int]) -> dict[str, Any]:
        return {
            "system": "vaesen",
            "test": INJURY,
            "kind": kind,
            "d66": vaesen.critical_injury_roll(FixedDice(dice)),
            "of": of,
        }

    return read


def _injury_entry(
    *,
    campaign,
    user,
    character: Character,
    kind: vaesen.ConditionKind,
    purpose: str,
    of: str,
    scene=None,
    post=None,
    client_seed: str | None = None,
    settles_pending: bool = False,
) -> RollEntry:
    """V13 — 2d6 "desglosados" through the log and the injury on the sheet
    (``add_injury``, with its ``SheetEvent``), named, described and timed by
    the campaign's table when it has a row for the value, else left for the
    GM to name. The caller holds the character's row lock."""
    entry = roll_append(
        campaign=campaign,
        user=user,
        spec=f"2d{vaesen.FACES}",
        purpose=purpose[:200],
        read=injury_reader(kind.value, of=of),
        character=character,
        scene=scene,
        post=post,
        client_seed=client_seed,
    )
    value = entry.signed_game["d66"]
    # The campaign's own table names the injury when it has a row for the value.
    row = injury_for(campaign, kind, value)
    add_injury(
        character,
        kind=kind,
        roll_value=value,
        name=row.name if row else injury_name(kind, value),
        effect=row.effect if row else "",
        time_limit=row.time_limit if row else "",
        actor=user,
        reason=purpose[:500],
        roll=entry,
        settles_pending=settles_pending,
    )
    return entry


def sheet_injury_refusal(character: Character, kind: str, *, is_gm: bool) -> str | None:
    """Why the critical injury the sheet's «Sufrir» owes (V10) may not be
    rolled now (a Spanish message), or None: only the GM, once per injury owed."""
    if not is_gm:
        return _("Solo la dirección tira la herida crítica desde la ficha.")
    sheet = getattr(character, "vaesen", None)
    if sheet is None or kind not in sheet.pending_injuries:
        return _("Esta ficha no tiene ninguna herida crítica %(kind)s por tirar.") % {
            "kind": kind_word(kind, agrees="herida")
        }
    return None


def roll_sheet_injury(
    *, character: Character, kind: str, user, is_gm: bool, client_seed: str | None = None
) -> RollEntry:
    """V10, V13 — the critical injury a character Broken by the sheet's
    «Sufrir» suffers: rolled by the GM through the log (the roll log shows
    it) with the browser's ``client_seed`` (None without JavaScript: the
    server's), recorded on the sheet like the one after a push (the
    campaign's table names it) and no longer owed. Refused
    (``ValidationError``, nothing changed) when ``sheet_injury_refusal`` says
    so. A retried form (the same seed) returns the injury roll it made,
    nothing recorded again."""
    with transaction.atomic():
        # The sheet's row before the log's head (the lock order), read after the lock.
        list(Character.objects.select_for_update().filter(pk=character.pk).values_list("pk", flat=True))
        locked = Character.objects.select_related("campaign", "vaesen").get(pk=character.pk)
        earlier = earlier_entry(campaign=locked.campaign, user=user, client_seed=client_seed)
        if earlier is not None:
            # A retried form: the injury this seed rolled for this sheet, nothing recorded again.
            game = earlier.signed_game
            if (
                earlier.character_id != locked.pk
                or game.get("test") != INJURY
                or game.get("kind") != kind
                or game.get("of") != locked.get_absolute_url()
            ):
                raise seed_used()
            return earlier
        refusal = sheet_injury_refusal(locked, kind, is_gm=is_gm)
        if refusal is not None:
            raise ValidationError(refusal, code="no_injury")
        kind = vaesen.ConditionKind(kind)
        purpose = _("Herida crítica (%(kind)s) de %(name)s al quedar Derrotado") % {
            "kind": kind_word(kind, agrees="herida"),
            "name": locked.name,
        }
        return _injury_entry(
            campaign=locked.campaign,
            user=user,
            character=locked,
            kind=kind,
            purpose=purpose,
            of=locked.get_absolute_url(),
            client_seed=client_seed,
            settles_pending=True,
        )


def injury_refusal(table_roll: TableRoll, user, *, is_gm: bool) -> str | None:
    """Why ``user`` may not roll the critical injury of this push (a Spanish
    message), or None: a push that made the character Broken, once, by the
    roll's owner or the GM."""
    facts = table_roll.facts or {}
    if table_roll.owner_id != getattr(user, "pk", None) and not is_gm:
        return _("Solo quien forzó la tirada o la dirección tiran la herida crítica.")
    if not facts.get("broken"):
        return _("Esta tirada no dejó a nadie Derrotado: no hay herida crítica que tirar.")
    if facts.get(INJURY):
        return _("La herida crítica de esta tirada ya se tiró.")
    return None


def roll_injury(*, table_roll: TableRoll, user, is_gm: bool, client_seed: str | None = None) -> TableRoll:
    """V10, V13 — the critical injury of a push that made the character
    Broken (a push, or a failed fear test, V27): 2d6 "desglosados" through
    the log, in the same post, recorded on the sheet (``add_injury``, with its
    ``SheetEvent``) named, described and timed by the campaign's table when it
    has a row for the value (``options.tables``), else left for the GM to
    name. Refused (``ValidationError``) when ``injury_refusal`` says
    so. Side effects, in one transaction: the signed entry, its table roll,
    the injury and the push's facts. A retried form (the same browser
    ``client_seed``) returns the injury it rolled, nothing recorded again."""
    with transaction.atomic():
        tr = lock_table_roll(table_roll)
        earlier = earlier_entry(campaign=tr.campaign, user=user, client_seed=client_seed)
        if earlier is not None:
            # A retried form: the injury this seed rolled for this push, nothing recorded again.
            injury = TableRoll.objects.filter(pk=tr.facts.get(INJURY), first=earlier).first()
            if injury is None:
                raise seed_used()
            return injury
        refusal = injury_refusal(tr, user, is_gm=is_gm)
        if refusal is not None:
            raise ValidationError(refusal, code="no_injury")
        character = Character.objects.select_for_update(of=("self",)).select_related("vaesen").get(pk=tr.character_id)
        kind = vaesen.ConditionKind(tr.facts["kind"])
        purpose = _("Herida crítica (%(kind)s): %(purpose)s") % {
            "kind": kind_word(kind, agrees="herida"),
            "purpose": tr.latest.purpose,
        }
        entry = _injury_entry(
            campaign=tr.campaign,
            user=user,
            character=character,
            kind=kind,
            purpose=purpose,
            of=tr.latest.permalink,
            scene=tr.scene,
            post=tr.post,
            client_seed=client_seed,
        )
        injury = TableRoll.objects.create(
            campaign=tr.campaign,
            scene=tr.scene,
            post=tr.post,
            first=entry,
            latest=entry,
            kind=INJURY,
            owner=tr.owner,
            character=character,
            position=TableRoll.objects.filter(post=tr.post).count() if tr.post_id else 0,
            facts={"kind": kind.value, "success": None, "can_push": False},
        )
        tr.facts = {**tr.facts, INJURY: injury.pk}
        tr.save(update_fields=["facts"])
        return injury
