"""HITOS combat in a scene: the initiative tracker, attacks and their damage.

Every roll goes through the signed log (``systems.hitos.checks.services``), every number comes
from ``rules.hitos_combat``, every mark on a sheet goes through
``systems.hitos.sheet.services``. Each write function runs in one transaction.

Who may do what is decided here too (views also check, so that a partial
never shows what the user may not do): the GM runs the combat; a player may
attack with their own character and spend their own character's drama point
to shift the damage of an attack that concerns it.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _

from campaigns import deadlines
from campaigns.models import Scene
from campaigns.permissions import Access
from rolls.models import RollEntry
from rolls.services import Seeds, earlier_entry, extend_append, seed_used
from rules import hitos
from rules.hitos_codes import DamageCode, extra_dice_spec, parse_damage_code, shift_code, split_pool
from rules.hitos_combat import (
    CriticalEffect,
    DamageResult,
    InitiativeEntry,
    attack_damage,
    critical_effect,
    defence_difficulty,
    initiative_order,
    initiative_total,
)
from rules.hitos_drama import positive_activation
from rules.hitos_health import massive_test_due
from sheets.models import Character, SheetEvent
from sheets.permissions import can_play_character
from systems.hitos import notify
from systems.hitos.checks.services import (
    CheckSetup,
    check_setup,
    lock_table_roll,
    owner_for,
    roll_modifier,
    side_for,
    table_check,
    table_result,
)
from systems.hitos.models import Activation, Aspect, Attack, Combat, Combatant, HitosEvent, TableRollKind
from systems.hitos.models import Weapon as SheetWeapon
from systems.hitos.reading import campaign_options
from systems.hitos.sheet import services as sheet_services
from systems.hitos.sheet.meters import METERS
from systems.hitos.sheet.services import drama_move
from table.models import TableRoll

# H40 — ties still standing after this many roll-offs keep the order they
# were added in (a table would have settled it long before).
MAX_ROLL_OFFS = 10
# H46 — each aspect moves the code one step; more than three is never a table's intent.
MAX_SHIFT = 3
COMBAT_SKILL_CATEGORY = "combate"
NPC_ATTACK = "npc"
# The kind of ``campaigns.models.Deadline`` a combat's round is given (target: the combat).
ROUND_DEADLINE = "round"


def combat_url(combat: Combat) -> str:
    return reverse("hitos:combat", args=[combat.campaign.slug, combat.scene_id])


def combat_characters(campaign):
    """Who can take part: approved player characters and the campaign's NPCs."""
    return Character.objects.filter(campaign=campaign).in_play().order_by("-kind", "name", "id")


def _require_gm(access: Access) -> None:
    if not access.is_gm:
        raise PermissionDenied(_("Solo la dirección de la partida dirige el combate."))


def _require_open(combat: Combat) -> None:
    if combat.ended_at is not None:
        raise ValidationError(_("Este combate ya ha terminado."), code="ended")


def _lock(combat: Combat) -> Combat:
    """The combat's row, locked: tracker changes on one combat queue here."""
    locked = Combat.objects.select_for_update(of=("self",)).select_related("campaign", "scene").get(pk=combat.pk)
    _require_open(locked)
    return locked


def _ordered(combat: Combat) -> list[Combatant]:
    return list(
        combat.combatants.select_for_update(of=("self",))
        .select_related("character__campaign", "character__hitos")
        .order_by("order", "id")
    )


def _round_answered(combat: Combat) -> None:
    """Once no player character is waited for in the round (each acted,
    holds its action or is out of the fight), its deadline needs nothing
    more. Whose turn it is: ``systems.hitos.combat.turns``."""
    waited = (
        combat.combatants.filter(delaying=False, out_of_combat=False)
        .exclude(acted_round=combat.round)
        .exclude(character__kind=Character.Kind.NPC)
        .exists()
    )
    if not waited:
        deadlines.withdraw(ROUND_DEADLINE, combat.pk)


def _renumber(combatants: list[Combatant]) -> None:
    for position, combatant in enumerate(combatants):
        if combatant.order != position:
            combatant.order = position
            combatant.save(update_fields=["order"])


# --- the tracker ---------------------------------------------------------------------


def combat_start(*, scene: Scene, access: Access, characters) -> Combat:
    """The GM opens a combat in the scene with these characters (one open
    combat per scene). Everyone starts unprepared (H38)."""
    _require_gm(access)
    with transaction.atomic():
        # Lock the scene so that two GMs starting at once make one combat.
        Scene.objects.select_for_update().get(pk=scene.pk)
        if Combat.objects.filter(scene=scene, ended_at__isnull=True).exists():
            raise ValidationError(_("Ya hay un combate en curso en esta escena."), code="open_combat")
        combat = Combat.objects.create(campaign=scene.campaign, scene=scene, started_by=access.user)
        for order, character in enumerate(characters):
            _add(combat, character, order)
    return combat


def _add(combat: Combat, character: Character, order: int) -> Combatant:
    if not character.is_in_play(combat.campaign):
        raise ValidationError(_("Solo combaten personajes aprobados y PNJ de la partida."), code="character")
    if combat.combatants.filter(character=character).exists():
        raise ValidationError(_("%(name)s ya está en el combate.") % {"name": character.name}, code="duplicate")
    combatant = Combatant(combat=combat, character=character, order=order)
    combatant.full_clean()
    combatant.save()
    return combatant


def combatant_add(*, combat: Combat, access: Access, character: Character) -> Combatant:
    """A late arrival joins at the end of the order, unprepared (H38)."""
    _require_gm(access)
    with transaction.atomic():
        locked = _lock(combat)
        return _add(locked, character, len(_ordered(locked)))


def combatant_remove(*, combatant: Combatant, access: Access) -> None:
    """Leaves the tracker. Attacks it made or received go with it."""
    _require_gm(access)
    with transaction.atomic():
        locked = _lock(combatant.combat)
        combatant.delete()
        _renumber(_ordered(locked))


def _initiative_setup(character: Character) -> tuple[CheckSetup, int]:
    """H40 — C + Iniciativa; the state penalty applies to every roll (H54, H55)."""
    score = character.hitos.scores["iniciativa"].value
    with_penalties = check_setup(character, free_modifier=score)
    label = _("Iniciativa")
    setup = CheckSetup(with_penalties.modifier, ((label, score), *with_penalties.breakdown[1:]), label)
    return setup, score


def _initiative_value(table_roll: TableRoll, score: int) -> int:
    entry = table_roll.latest
    roll = hitos.HitosRoll(tuple(entry.entry["dice"]))
    return initiative_total(roll, score, roll_modifier(table_roll) - score)


def initiative_roll(*, combat: Combat, access: Access, client_seed: str | None = None) -> list[Combatant]:
    """Rolls initiative through the log for every combatant without one (H40),
    then orders everyone: highest total first; ties by the Iniciativa score
    (K5 default), then roll-offs among the still tied only, each one a logged
    roll. Someone joining later is placed by their total among the others,
    whose order (delays included, H41) stays as it was. Returns the
    combatants in their new order.

    ``client_seed`` (the page's browser seed) rolls the first initiative of
    the request; each further roll, roll-offs included, derives its own from
    it (``Seeds``). The same form sent again (the same seed, which rolled a
    combatant's initiative) returns the order as it stands, nothing rolled
    again."""
    _require_gm(access)
    seeds = Seeds(client_seed)
    with transaction.atomic():
        locked = _lock(combat)
        combatants = _ordered(locked)
        earlier = earlier_entry(campaign=locked.campaign, user=access.user, client_seed=seeds.first)
        if earlier is not None:
            if not locked.combatants.filter(initiative__first=earlier).exists():
                raise seed_used()
            return combatants
        placed = [c for c in combatants if c.initiative_total is not None]
        for combatant in combatants:
            if combatant.initiative_id is not None:
                continue
            setup, score = _initiative_setup(combatant.character)
            table_roll = table_check(
                campaign=locked.campaign,
                user=access.user,
                setup=setup,
                purpose=_("Iniciativa de %(name)s") % {"name": combatant.character.name},
                difficulty=None,
                character=combatant.character,
                scene=locked.scene,
                kind=TableRollKind.INITIATIVE,
                client_seed=seeds.next(),
            )
            combatant.initiative = table_roll
            combatant.initiative_total = _initiative_value(table_roll, score)
            combatant.save(update_fields=["initiative", "initiative_total"])
        placed_ids = {c.pk for c in placed}
        rolled = [c for c in combatants if c.initiative_total is not None and c.pk not in placed_ids]
        waiting = [c for c in combatants if c.initiative_total is None]
        ordered = list(placed)
        for newcomer in _initiative_sequence(locked, rolled, access, seeds):
            # Before the first one placed with a lower total; after equals.
            at = next(
                (i for i, c in enumerate(ordered) if c.initiative_total < newcomer.initiative_total), len(ordered)
            )
            ordered.insert(at, newcomer)
        ordered += waiting
        _renumber(ordered)
    return ordered


def _initiative_sequence(combat: Combat, combatants: list[Combatant], access: Access, seeds: Seeds) -> list[Combatant]:
    options = campaign_options(combat.campaign)
    by_id = {str(c.pk): c for c in combatants}
    entries = [
        InitiativeEntry(str(c.pk), c.initiative_total, c.character.hitos.scores["iniciativa"].value) for c in combatants
    ]
    ordered: list[Combatant] = []
    for group in initiative_order(entries, options):
        ordered.extend(by_id[entry.id] for entry in _settle(combat, group, access, options, seeds))
    return ordered


def _settle(combat: Combat, group, access: Access, options, seeds: Seeds, depth: int = 0) -> list[InitiativeEntry]:
    """H40 — a group still tied rolls again among its members only (a new
    initiative roll each, through the log), until nobody is tied."""
    if len(group) == 1:
        return list(group)
    if depth >= MAX_ROLL_OFFS:
        return sorted(group, key=lambda entry: int(entry.id))
    roll_offs = []
    for entry in group:
        combatant = Combatant.objects.select_related("character").get(pk=int(entry.id))
        setup, score = _initiative_setup(combatant.character)
        table_roll = table_check(
            campaign=combat.campaign,
            user=access.user,
            setup=setup,
            purpose=_("Desempate de iniciativa de %(name)s") % {"name": combatant.character.name},
            difficulty=None,
            character=combatant.character,
            scene=combat.scene,
            kind=TableRollKind.INITIATIVE,
            client_seed=seeds.next(),
        )
        roll_offs.append(InitiativeEntry(entry.id, _initiative_value(table_roll, score), entry.score))
    settled: list[InitiativeEntry] = []
    for subgroup in initiative_order(roll_offs, options):
        settled.extend(_settle(combat, subgroup, access, options, seeds, depth + 1))
    return settled


def combatant_act(*, combatant: Combatant, access: Access) -> Combatant:
    """The character acts: no longer unprepared (H38), no longer delaying."""
    _require_gm(access)
    with transaction.atomic():
        locked = _lock(combatant.combat)
        combatant.has_acted = True
        combatant.acted_round = locked.round
        combatant.delaying = False
        combatant.save(update_fields=["has_acted", "acted_round", "delaying"])
        _round_answered(locked)
    return combatant


def combatant_delay(*, combatant: Combatant, access: Access, position: int | None = None) -> list[Combatant]:
    """H41 — with no position the character holds its action (``delaying``);
    with one (0 = first) it acts there, and that becomes its place in the
    order for the rest of the combat."""
    _require_gm(access)
    with transaction.atomic():
        locked = _lock(combatant.combat)
        combatants = _ordered(locked)
        current = next(c for c in combatants if c.pk == combatant.pk)
        if position is None:
            current.delaying = True
            current.save(update_fields=["delaying"])
            _round_answered(locked)
            return combatants
        if not 0 <= position < len(combatants):
            raise ValidationError(_("La posición va de 1 a %(n)s.") % {"n": len(combatants)}, code="position")
        combatants.remove(current)
        combatants.insert(position, current)
        current.delaying = False
        current.has_acted = True
        current.acted_round = locked.round
        current.save(update_fields=["delaying", "has_acted", "acted_round"])
        _renumber(combatants)
        _round_answered(locked)
    return combatants


def combatant_set(
    *,
    combatant: Combatant,
    access: Access,
    all_out_defence: bool,
    defenceless: bool,
    out_of_combat: bool,
) -> Combatant:
    """The target's situation for the next attacks (H43)."""
    _require_gm(access)
    with transaction.atomic():
        locked = _lock(combatant.combat)
        combatant.all_out_defence = all_out_defence
        combatant.defenceless = defenceless
        combatant.out_of_combat = out_of_combat
        combatant.save(update_fields=["all_out_defence", "defenceless", "out_of_combat"])
        _round_answered(locked)
    return combatant


def next_round(*, combat: Combat, access: Access) -> Combat:
    """A new round: total defence lasted one round (H43), held actions end."""
    _require_gm(access)
    with transaction.atomic():
        locked = _lock(combat)
        locked.round += 1
        locked.save(update_fields=["round"])
        locked.combatants.update(all_out_defence=False, delaying=False)
        # A new round: the last one's deadline is over (the direction gives this one its own).
        deadlines.withdraw(ROUND_DEADLINE, locked.pk)
    combat.round = locked.round
    return locked


def combat_end(*, combat: Combat, access: Access) -> Combat:
    _require_gm(access)
    with transaction.atomic():
        locked = _lock(combat)
        locked.ended_at = timezone.now()
        locked.save(update_fields=["ended_at"])
        deadlines.withdraw(ROUND_DEADLINE, locked.pk, now=locked.ended_at)
    combat.ended_at = locked.ended_at
    return locked


# --- attacks -------------------------------------------------------------------------


def can_attack_with(access: Access, combatant: Combatant) -> bool:
    """The GM attacks with anyone; a player with their own character only."""
    return can_play_character(access, combatant.character)


def combat_skill(character: Character):
    """The character's best Combate skill (what Defensa and the bonuses use)."""
    skills = [s for s in character.skills.all() if s.category == COMBAT_SKILL_CATEGORY]
    return max(skills, key=lambda s: s.value, default=None)


@dataclass(frozen=True)
class WeaponChoice:
    name: str
    code: str
    melee: bool


def weapon_choice(character: Character, weapon: SheetWeapon | str) -> WeaponChoice:
    """A weapon of the sheet, or ``"npc"``: the NPC's usual attack (its damage code, in melee)."""
    if weapon == NPC_ATTACK:
        if not (character.is_npc and character.hitos.damage_code):
            raise ValidationError(_("%(name)s no tiene un ataque habitual.") % {"name": character.name})
        return WeaponChoice(_("Ataque habitual"), character.hitos.damage_code, True)
    if not isinstance(weapon, SheetWeapon) or weapon.character_id != character.pk:
        raise ValidationError(_("Esa arma no es de %(name)s.") % {"name": character.name}, code="weapon")
    return WeaponChoice(weapon.name, weapon.damage_code, weapon.melee)


def _check_code(code: str) -> None:
    """A code the combat can read: above mCM too (H51), whose extra d10s are
    drawn through the log when the damage is applied (``damage_apply``)."""
    try:
        parse_damage_code(code)
    except ValueError as exc:
        raise ValidationError(str(exc), code="code") from None


def attack_make(
    *,
    combat: Combat,
    access: Access,
    attacker: Combatant,
    target: Combatant,
    weapon: SheetWeapon | str,
    extra: list[tuple[str, int]] | tuple = (),
    all_out_defence: bool | None = None,
    defenceless: bool | None = None,
    client_seed: str | None = None,
) -> Attack:
    """H42 — Reflejos + Combate (+ modifiers, − the attacker's state penalty)
    against the target's Defensa (H43: unprepared −2, total defence +4,
    defenceless 5; its state penalty too). The flags default to the target's
    on the tracker. Side effects: one roll in the log, the ``Attack`` and
    the attacker marked as having acted (no longer unprepared)."""
    if attacker.combat_id != combat.pk or target.combat_id != combat.pk:
        raise ValidationError(_("Los dos tienen que estar en este combate."), code="combatant")
    if not can_attack_with(access, attacker):
        raise PermissionDenied(_("Solo atacas con tu propio personaje."))
    if attacker.pk == target.pk:
        raise ValidationError(_("Un personaje no se ataca a sí mismo."), code="self")
    if attacker.out_of_combat:
        raise ValidationError(_("%(name)s está fuera de combate.") % {"name": attacker.character.name})
    attacking = attacker.character
    defending = target.character
    chosen = weapon_choice(attacking, weapon)
    _check_code(chosen.code)
    options = campaign_options(combat.campaign)
    skill = combat_skill(attacking)
    defence = defence_difficulty(
        defending.hitos.scores["defensa"].value,
        unprepared=not target.has_acted,
        all_out_defence=target.all_out_defence if all_out_defence is None else all_out_defence,
        defenceless=target.defenceless if defenceless is None else defenceless,
        state_penalty=defending.hitos.penalty,
        options=options,
    )
    setup = check_setup(attacking, characteristic="reflejos", skill=skill.name if skill else "", extra=extra)
    bonus_key = "bono_cuerpo_a_cuerpo" if chosen.melee else "bono_distancia"
    with transaction.atomic():
        locked = _lock(combat)
        table_roll = table_check(
            campaign=locked.campaign,
            user=access.user,
            setup=setup,
            purpose=_("Ataque de %(attacker)s a %(target)s con %(weapon)s")
            % {"attacker": attacking.name, "target": defending.name, "weapon": chosen.name},
            difficulty=defence.total,
            character=attacking,
            scene=locked.scene,
            kind=TableRollKind.ATTACK,
            client_seed=client_seed,
            owner=owner_for(attacking, access.user),
        )
        existing = Attack.objects.filter(table_roll=table_roll).first()
        if existing is not None:
            # The same form sent twice: the roll and its attack already exist.
            return existing
        attack = Attack(
            combat=locked,
            table_roll=table_roll,
            attacker=attacker,
            target=target,
            weapon=chosen.name,
            damage_code=chosen.code,
            damage_bonus=attacking.hitos.scores[bonus_key].value,
            rd=defending.hitos.rd,
            defence={"base": defence.base, "parts": [list(p) for p in defence.parts], "total": defence.total},
        )
        attack.full_clean()
        attack.save()
        Combatant.objects.filter(pk=attacker.pk).update(has_acted=True, acted_round=locked.round, delaying=False)
        attacker.has_acted = True
        attacker.acted_round = locked.round
        attacker.delaying = False
    return attack


def _roll_of(table_roll: TableRoll) -> hitos.HitosRoll:
    entry = table_roll.latest
    return hitos.HitosRoll(tuple(entry.entry["dice"]), entry.signed_game.get("reading") or hitos.Reading.NORMAL)


def attack_hits(attack: Attack) -> bool:
    """Read from the latest version of the roll: a critical always hits, a fumble always misses."""
    return table_result(attack.table_roll).success


@dataclass(frozen=True)
class PendingDamage:
    """A hit whose code reads extra d10s above mCM (H51) not drawn yet: they
    are drawn through the log, as an extension of the attack roll, when the
    damage is applied. Nothing is added up until then."""

    code: DamageCode  # after any shift
    extra_dice: int
    bonus: int
    rd: int

    @property
    def pending(self) -> bool:
        """What the page asks to tell it from a ``DamageResult``."""
        return True

    @property
    def spec(self) -> str:
        """The pool the extension will draw (``"2d10"``)."""
        return extra_dice_spec(self.code)


def damage_code_used(attack: Attack) -> DamageCode:
    """The weapon's code moved by the aspects activated on the damage (H46)."""
    if not attack.shift:
        return parse_damage_code(attack.damage_code)
    return shift_code(attack.damage_code, attack.shift, campaign_options(attack.table_roll.campaign).damage_ladder)


def extension_of(attack: Attack) -> RollEntry | None:
    """The ``extend`` entry that drew the extra dice of the attack's damage
    (H51, roll-verification §3.6b), if it was drawn: the one child of the
    attack roll's latest version (re-rolls move ``latest``; the extension
    leaves it, the check stays read from its three dice)."""
    return RollEntry.objects.filter(parent_id=attack.table_roll.latest_id, kind=RollEntry.Kind.EXTEND).first()


def extensions_of(attacks) -> dict[int, RollEntry]:
    """``extension_of`` for many attacks, by attack id: one query, and none
    when no attack's code reads extra dice."""
    wanted = {a.table_roll.latest_id: a.pk for a in attacks if damage_code_used(a).extra_dice}
    if not wanted:
        return {}
    entries = RollEntry.objects.filter(parent_id__in=wanted, kind=RollEntry.Kind.EXTEND)
    return {wanted[entry.parent_id]: entry for entry in entries}


_LOOK_UP = object()


def attack_damage_for(
    attack: Attack, extension: RollEntry | None | object = _LOOK_UP
) -> DamageResult | PendingDamage | None:
    """H44–H51 — the damage the attack does, read from the dice of the roll's
    latest version (after any re-roll): the weapon's code shifted by aspects,
    ×2/×3 for a critical, plus the bonus, minus RD. None when it misses.

    A code above mCM adds the extra d10s of its ``extension`` (looked up
    when not given): until they are drawn the damage is a ``PendingDamage``."""
    if not attack_hits(attack):
        return None
    used = damage_code_used(attack)
    if used.extra_dice and extension is _LOOK_UP:
        extension = extension_of(attack)
    if used.extra_dice and extension is None:
        return PendingDamage(used, used.extra_dice, attack.damage_bonus, attack.rd)
    if used.extra_dice:
        return _extended_damage(attack, used, list(extension.entry["dice"]))
    options = campaign_options(attack.table_roll.campaign)
    return attack_damage(_roll_of(attack.table_roll), used, bonus=attack.damage_bonus, rd=attack.rd, options=options)


def _extended_damage(attack: Attack, used: DamageCode, dice: list[int]) -> DamageResult:
    """The damage read from the whole extended pool: the check's three dice
    (with the reading of the version they belong to) and the extra d10s."""
    base, extra = split_pool(used, dice)
    reading = attack.table_roll.latest.signed_game.get("reading") or hitos.Reading.NORMAL
    options = campaign_options(attack.table_roll.campaign)
    return attack_damage(
        hitos.HitosRoll(base, reading),
        used,
        bonus=attack.damage_bonus,
        rd=attack.rd,
        extra_dice=extra,
        options=options,
    )


def _extension_reader(attack: Attack, used: DamageCode):
    """The signed reading of the extended pool: the check as its parent read
    it, and the damage the code reads from the whole pool (H51)."""
    parent_game = dict(attack.table_roll.latest.signed_game)

    def read(dice: list[int]) -> dict:
        damage = _extended_damage(attack, used, dice)
        _base, extra = split_pool(used, dice)
        return {
            **parent_game,
            "damage": {
                "code": used.text,
                "extra": list(extra),
                "dice": damage.dice_damage,
                "multiplier": damage.multiplier,
                "bonus": damage.bonus,
                "rd": damage.rd,
                "total": damage.total,
            },
        }

    return read


def _extend(attack: Attack, used: DamageCode, user, client_seed: str | None) -> RollEntry:
    """H51 — draw the extra d10s of the code through the log: one ``extend``
    entry of the attack roll's latest version (roll-verification §3.6b)."""
    parent = attack.table_roll.latest
    return extend_append(
        parent=parent,
        user=user,
        spec=extra_dice_spec(used),
        # At most 300 characters, the log's limit: names and weapon of 80, and mCM+97d10.
        purpose=_("%(purpose)s: los dados adicionales del daño %(code)s")
        % {"purpose": parent.purpose, "code": used.text},
        read=_extension_reader(attack, used),
        extra={"extra_damage_dice": used.extra_dice, "damage_code": used.text},
        client_seed=client_seed,
    )


def attack_effect_for(attack: Attack) -> CriticalEffect | None:
    """H48/H49 — what a critical (secuela on the target) or a fumble
    (negative aspect on the attacker) proposes, until the GM decides."""
    if attack.effect_decided:
        return None
    return critical_effect(table_result(attack.table_roll), is_attack=True)


def _locked_attack(attack: Attack, *, settling: bool = False) -> Attack:
    """The attack's row, locked, after its roll's row (the lock order of
    ``systems.hitos.checks.services``: activations on the roll wait for us, or we for them).
    ``settling`` (damage, effects) is refused while an aspect activation
    on the roll waits for its answer: the dice may still change."""
    lock_table_roll(attack.table_roll)
    if settling and Activation.objects.filter(table_roll_id=attack.table_roll_id, status="pending").exists():
        raise ValidationError(
            _("Hay una activación pendiente en la tirada de ataque: primero hay que resolverla."), code="pending"
        )
    locked = (
        Attack.objects.select_for_update(of=("self",))
        .select_related(
            "combat__campaign",
            "combat__scene",
            "table_roll__latest",
            "table_roll__campaign",
            "attacker__character",
            "target__character__owner",
            "target__character__campaign",
        )
        .get(pk=attack.pk)
    )
    return locked


def attack_shift(*, attack: Attack, access: Access, steps: int, aspect: str) -> Attack:
    """H46 — an aspect activated on the damage moves the code one step up
    (the attacker's side) or down (the target's side). It costs the side that
    benefits one drama point (H13; NPCs pay from the GM's pool, H24), logged.
    A player shifts only for their own character."""
    if steps not in (1, -1):
        raise ValidationError(_("Un aspecto mueve el daño un nivel arriba o abajo."), code="steps")
    aspect = aspect.strip()
    if not aspect:
        raise ValidationError(_("Indica el aspecto que activas."), code="aspect")
    with transaction.atomic():
        locked = _locked_attack(attack)
        _require_open(locked.combat)
        if locked.damage_applied is not None:
            raise ValidationError(_("El daño ya está aplicado."), code="applied")
        if not attack_hits(locked):
            raise ValidationError(_("El ataque falló: no hay daño que mover."), code="miss")
        payer = locked.attacker.character if steps > 0 else locked.target.character
        if not can_play_character(access, payer):
            raise PermissionDenied(_("Solo activas aspectos de tu propio personaje."))
        shift = locked.shift + steps
        if abs(shift) > MAX_SHIFT:
            raise ValidationError(_("El daño ya se ha movido todo lo posible."), code="max_shift")
        options = campaign_options(locked.combat.campaign)
        try:
            shifted = shift_code(locked.damage_code, shift, options.damage_ladder)
        except ValueError as exc:
            raise ValidationError(str(exc), code="code") from None
        _check_code(shifted.text)
        effect = positive_activation(side_for(payer), options=options)
        drama_move(
            campaign=locked.combat.campaign,
            transfers=effect.transfers,
            actor=access.user,
            reason=_("«%(aspect)s»: daño %(before)s → %(after)s")
            % {
                "aspect": aspect,
                "before": shift_code(locked.damage_code, locked.shift, options.damage_ladder).text,
                "after": shifted.text,
            },
            roll=locked.table_roll.latest,
        )
        locked.shift = shift
        locked.save(update_fields=["shift"])
    return locked


def damage_rolls(damage: DamageResult | PendingDamage | None, target: Character) -> bool:
    """Whether applying this damage rolls dice, so that the page gives its
    form a browser seed (and the browser keeps a receipt only for a roll that
    will be in the log): the extra d10s of a code above mCM (H51), or the
    mass-damage test of a damage reaching the target's Aguante (H52)."""
    if damage is None:
        return False
    if isinstance(damage, PendingDamage):
        return True
    return massive_test_due(damage.total, METERS[sheet_services.HEALTH].threshold_of(target.hitos))


def _damage_retried(attack: Attack, user, seeds: Seeds) -> bool:
    """Whether the damage form was sent before with this browser seed (a
    retried form), under the attack's lock: the seed drew the attack's extra
    dice, or the damage is applied and its mark on the target's sheet keeps
    the seed ``meter_apply`` had (the browser's, or the one derived after an
    extension). A seed used for anything else is refused."""
    if seeds.first is None:
        return False
    earlier = earlier_entry(campaign=attack.combat.campaign, user=user, client_seed=seeds.first)
    if (
        earlier is not None
        and earlier.kind == RollEntry.Kind.EXTEND
        and earlier.parent_id == attack.table_roll.latest_id
    ):
        return True
    candidates = Seeds(seeds.first)
    meter_seeds = [candidates.next(), candidates.next()]
    if (
        attack.damage_applied is not None
        and SheetEvent.objects.filter(
            character_id=attack.target.character_id,
            actor=user,
            kind=HitosEvent.DAMAGE,
            after__client_seed__in=meter_seeds,
        ).exists()
    ):
        return True
    if earlier is not None:
        raise seed_used()
    return False


def damage_apply(*, attack: Attack, access: Access, client_seed: str | None = None) -> Attack:
    """The GM marks the damage on the target's Resistencia, once. A code
    above mCM first draws its extra d10s through the log as one ``extend``
    entry of the attack roll, H51. Side effects:
    ``systems.hitos.sheet.services.meter_apply`` (with its mass-damage test
    through the log when the damage reaches Aguante, H52), a ``SheetEvent``
    pointing at the attack roll (its extension, when there is one), and a
    notification to the target's player.

    ``client_seed`` is the page's browser seed (the server makes them
    without one): the first roll of the request (the extension, else the
    mass-damage test) uses it, the mass-damage test after an extension one
    derived from it (``Seeds``). The same form sent again (the same browser
    seed) returns the attack as the first request left it: the damage and
    its test are applied once."""
    _require_gm(access)
    seeds = Seeds(client_seed)
    with transaction.atomic():
        locked = _locked_attack(attack, settling=True)
        if _damage_retried(locked, access.user, seeds):
            return locked
        if locked.damage_applied is not None:
            raise ValidationError(_("Este daño ya está aplicado."), code="applied")
        damage = attack_damage_for(locked)
        if damage is None:
            raise ValidationError(_("El ataque falló: no hay daño que aplicar."), code="miss")
        entry = locked.table_roll.latest
        if isinstance(damage, PendingDamage):
            try:
                entry = _extend(locked, damage.code, access.user, seeds.next())
            except ValueError as exc:
                raise ValidationError(str(exc), code="code") from None
            damage = _extended_damage(locked, damage.code, list(entry.entry["dice"]))
        target = locked.target.character
        change = sheet_services.meter_apply(
            character=target,
            actor=access.user,
            meter=sheet_services.HEALTH,
            action="damage",
            amount=damage.total,
            reason=_("%(purpose)s (%(url)s)") % {"purpose": entry.purpose, "url": entry.get_absolute_url()},
            post=locked.table_roll.post,
            client_seed=seeds.next(),
        )
        if change.event.roll_id is None:
            # The event points at the attack roll, unless a mass-damage test took its place.
            SheetEvent.objects.filter(pk=change.event.pk).update(roll=entry)
        locked.damage_applied = damage.total
        locked.applied_at = timezone.now()
        locked.applied_by = access.user
        locked.save(update_fields=["damage_applied", "applied_at", "applied_by"])
        # What the meter really lost (a failed mass-damage test may take more; RD may leave nothing).
        before, after = change.event.before, change.event.after
        lost = (after["slashes"] + after["crosses"]) - (before["slashes"] + before["crosses"])
        if lost > 0:
            notify.character_harmed(
                target,
                what="damage",
                amount=lost,
                url=f"{combat_url(locked.combat)}#attack-{locked.pk}",
                post=locked.table_roll.post,
            )
    return locked


EFFECT_DURATIONS = {"escena": Aspect.Duration.SCENE, "sesión": Aspect.Duration.SESSION}


def critical_effect_confirm(*, attack: Attack, access: Access, confirm: bool, phrase: str = "") -> Attack:
    """H48/H49 — the GM confirms (with the phrase they choose) or dismisses
    what a critical or fumble proposes: a temporary secuela on the target,
    or a negative temporary aspect on the attacker, for a scene (double) or
    the session (triple). Decided once."""
    _require_gm(access)
    with transaction.atomic():
        locked = _locked_attack(attack, settling=True)
        effect = attack_effect_for(locked)
        if effect is None:
            raise ValidationError(_("Este ataque no tiene nada pendiente de decidir."), code="no_effect")
        if confirm:
            phrase = phrase.strip()
            if not phrase:
                raise ValidationError(_("Escribe el aspecto o la secuela."), code="phrase")
            critical = effect.kind == "secuela temporal"
            character = locked.target.character if critical else locked.attacker.character
            origin = (_("Crítico de %(name)s") if critical else _("Pifia de %(name)s")) % {
                "name": locked.attacker.character.name
            }
            sheet_services.aspect_add_temporary(
                character=character,
                actor=access.user,
                phrase=phrase,
                duration=EFFECT_DURATIONS[effect.duration],
                origin=origin[:200],
            )
        locked.effect_decided = True
        locked.save(update_fields=["effect_decided"])
    return locked
