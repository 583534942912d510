"""Vaesen combat in a scene, played in posts (V17–V25): the GM's tracker
(initiative, ambush, turns and rounds) and the actions the players declare
and their opponents answer (attacks, grapples, breaking free, fleeing).

Every roll goes through the signed log (``rolls.services.roll_append``) with
a signed ``game`` saying ``"system": "vaesen"`` and what it was (``"test"``:
``initiative``, ``attack``, ``reaction``, ``armour`` …); every number comes
from ``rules.vaesen``; every mark on a sheet goes through
``systems.vaesen.sheet.services`` with its ``SheetEvent``.

Asynchronous by design: an action is declared first (nothing rolled), the
target's player (or the GM for NPCs) declares a reaction or none, and only
then are both rolled and settled (V18: a reaction is chosen before the
attack's result is known).

Lock order: the combat's row, then its combatants, then the characters'
rows (the sheet services), then the roll log's head (``roll_append``).

The rolls a page asks for carry the browser's seed (rollog/v1 §3.3): the
first roll of a request the page's own, each further one a seed derived
from it (``Seeds``). The seed is the idempotency key: a retried form (the
same seed) finds, under the combat's lock, what the first request rolled and
answers with it, rolling and applying nothing again. Without JavaScript
(no seed) the server makes one for each roll, as the log says.
Refusals are ``ValidationError`` (a Spanish message, nothing changed) or
``PermissionDenied``.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.db.models import Q
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from campaigns import deadlines, notify
from campaigns.models import Notification, Scene
from campaigns.permissions import Access
from rolls import rollog
from rolls.models import RollEntry
from rolls.services import Seeds, earlier_entry, roll_append, seed_used
from rules import vaesen
from rules.dice import FixedDice
from sheets.models import Character, SheetEvent
from sheets.permissions import can_play_character
from systems.vaesen.models import VaesenAction, VaesenCombat, VaesenCombatant, VaesenEvent, VaesenWeapon
from systems.vaesen.options.tables import initiative_mode, injury_for
from systems.vaesen.rolls.services import (
    INJURY,
    PoolSetup,
    broken_refusal,
    game_fields,
    injury_reader,
    owner_for,
    pool_setup,
    spend_npc_penalty,
    vaesen_reader,
)
from systems.vaesen.rolls.services import injury_name as rolls_injury_name
from systems.vaesen.sheet import services as sheet_services
from table.models import TableRoll

# Q18 — ties still standing after this many re-rolls keep the order they were added in.
MAX_TIE_ROLLS = 10
# Unarmed, an attack does one condition of damage (V19, with Fuerza).
UNARMED_DAMAGE = 1
UNARMED = "Fuerza"

Kind = VaesenAction.Kind
Reaction = VaesenAction.Reaction

# Which reactions answer which action (V21, V23, V24).
REACTIONS: dict[str, tuple[str, ...]] = {
    Kind.ATTACK: (Reaction.NONE, Reaction.DODGE, Reaction.PARRY_STRENGTH, Reaction.PARRY_MELEE),
    Kind.GRAPPLE: (Reaction.NONE, Reaction.BREAK_HOLD),
    Kind.BREAK_FREE: (Reaction.NONE, Reaction.HOLD),
    Kind.FLEE: (Reaction.NONE, Reaction.STOP),
}
REACTION_SKILLS = {
    Reaction.DODGE: "Agilidad",
    Reaction.PARRY_STRENGTH: "Fuerza",
    Reaction.PARRY_MELEE: "Combate cuerpo a cuerpo",
    Reaction.BREAK_HOLD: "Fuerza",
    Reaction.HOLD: "Fuerza",
    Reaction.STOP: "Agilidad",
}
# V18 — attacks, grapples and fleeing are slow actions; breaking free and reactions fast ones.
SLOW_KINDS = (Kind.ATTACK, Kind.GRAPPLE, Kind.FLEE)
ON_ONES_TURN = SLOW_KINDS


# The kind of ``campaigns.models.Deadline`` the turn of a combat is given
# (target: the combat); it ends when the turn passes.
TURN_DEADLINE = "vaesen-turn"
# The kind the reaction an action waits for is given (target: the action);
# it ends when the action is answered, cancelled or leaves with a combatant.
REACTION_DEADLINE = "vaesen-reaction"


def combat_url(combat: VaesenCombat) -> str:
    return reverse("vaesen:combat", args=[combat.campaign.slug, combat.scene_id])


def combat_characters(campaign):
    """Who can take part: approved player characters and NPCs with a Vaesen sheet."""
    return Character.objects.filter(campaign=campaign, vaesen__isnull=False).in_play().order_by("-kind", "name", "id")


def _require_gm(access: Access) -> None:
    if not access.is_gm:
        raise PermissionDenied(_("Solo la dirección de la partida dirige el combate."))


def _require_open(combat: VaesenCombat) -> None:
    if combat.ended_at is not None:
        raise ValidationError(_("Este combate ya ha terminado."), code="ended")


def _lock(combat: VaesenCombat) -> VaesenCombat:
    """The combat's row, locked: every change to one combat queues here."""
    locked = VaesenCombat.objects.select_for_update(of=("self",)).select_related("campaign", "scene").get(pk=combat.pk)
    _require_open(locked)
    return locked


def _ordered(combat: VaesenCombat) -> list[VaesenCombatant]:
    return list(
        combat.combatants.select_for_update(of=("self",))
        .select_related("character__campaign", "character__owner", "character__vaesen")
        .order_by("order", "id")
    )


def _renumber(combatants: list[VaesenCombatant]) -> None:
    for position, combatant in enumerate(combatants):
        if combatant.order != position:
            combatant.order = position
            combatant.save(update_fields=["order"])


def in_the_fight(combatants: list[VaesenCombatant]) -> list[VaesenCombatant]:
    """Those who act, in order: with their initiative, not fled (V24)."""
    return [c for c in combatants if c.initiative_value is not None and not c.fled]


def current(combat: VaesenCombat, combatants: list[VaesenCombatant]) -> VaesenCombatant | None:
    """Whose turn it is (V17): the combat's ``acting`` (the first in the
    order before anyone has passed the turn); None before the initiative, or
    when the one acting has just fled (the GM passes the turn)."""
    if not initiative_ready(combatants):
        return None
    active = in_the_fight(combatants)
    if not active:
        return None
    if combat.acting_id is None:
        return active[0]
    return next((c for c in active if c.pk == combat.acting_id), None)


def initiative_ready(combatants: list[VaesenCombatant]) -> bool:
    return bool(combatants) and all(c.initiative_value is not None for c in combatants if not c.fled)


# --- rolling through the log --------------------------------------------------------------


def _earlier(combat: VaesenCombat, user, seeds: Seeds) -> RollEntry | None:
    """The first roll the request's seed already made (a retried form), or
    None; a seed someone else used is refused (``earlier_entry``)."""
    return earlier_entry(campaign=combat.campaign, user=user, client_seed=seeds.first)


def _table_roll(combat: VaesenCombat, entry: RollEntry, *, kind: str, character: Character, user) -> TableRoll:
    game = entry.signed_game
    return TableRoll.objects.create(
        campaign=combat.campaign,
        scene=combat.scene,
        first=entry,
        latest=entry,
        kind=kind,
        owner=owner_for(character, user),
        character=character,
        # Combat rolls are settled as soon as they are rolled: never pushed here.
        facts={"kind": game.get("kind", ""), "success": game.get("success"), "can_push": False},
    )


def _test(
    combat: VaesenCombat,
    *,
    user,
    setup: PoolSetup,
    purpose: str,
    character: Character,
    test: str,
    seeds: Seeds,
    extra: dict[str, Any] | None = None,
) -> TableRoll:
    """A pool of d6s (``setup``) through the log, signed as a Vaesen test
    with ``"test": test`` and ``extra`` (who against whom), with the
    request's next seed."""
    base = vaesen_reader(game_fields(setup))

    def read(dice: list[int]) -> dict[str, Any]:
        return {**base(dice), "test": test, **(extra or {})}

    # The sheet's row before the log's head (the lock order).
    spend_npc_penalty(character, setup)
    entry = roll_append(
        campaign=combat.campaign,
        user=user,
        spec=f"{setup.pool}d{vaesen.FACES}",
        purpose=purpose[:200],
        read=read,
        character=character,
        scene=combat.scene,
        client_seed=seeds.next(),
    )
    return _table_roll(combat, entry, kind=test, character=character, user=user)


def _successes(table_roll: TableRoll | None) -> int:
    return int(table_roll.latest.signed_game["successes"]) if table_roll is not None else 0


def _initiative_reader(name: str, *, twice: bool, tie: bool) -> Any:
    def read(dice: list[int]) -> dict[str, Any]:
        value = vaesen.initiative_kept(dice)
        what = _("Desempate de iniciativa") if tie else _("Iniciativa")
        return {
            "system": "vaesen",
            "test": "initiative",
            "what": rollog.normalise_purpose(f"{what}: {name}"),
            "initiative": value,
            "twice": twice,
            "tie_break": tie,
        }

    return read


def _card_reader(name: str, deck: tuple[int, ...], *, twice: bool) -> Any:
    def read(dice: list[int]) -> dict[str, Any]:
        cards = vaesen.draw_initiative_cards(deck, dice, twice=twice)
        return {
            "system": "vaesen",
            "test": "initiative",
            "what": rollog.normalise_purpose(f"{_('Iniciativa')}: {name}"),
            "mode": vaesen.InitiativeMode.CARDS.value,
            "deck": list(deck),
            "cards": list(cards),
            "initiative": vaesen.initiative_card_kept(cards),
            "twice": twice,
            "tie_break": False,
        }

    return read


def _draw_card(
    combat: VaesenCombat, combatant: VaesenCombatant, user, held: list[int], seeds: Seeds
) -> tuple[TableRoll | None, int]:
    """The campaign's option ``InitiativeMode.CARDS``: a card from the deck
    1–10 without the cards ``held`` by the others (no ties), two after a
    successful ambush keeping the best (V25); each card picked by a die of
    the log as big as the cards left. The deck's last card needs no die
    (nothing is rolled: None)."""
    deck = vaesen.initiative_deck(held)
    if not deck:
        raise ValidationError(
            _("No quedan cartas de iniciativa: como mucho %(max)s participantes con cartas.")
            % {"max": vaesen.INITIATIVE_FACES},
            code="initiative",
        )
    twice = combatant.rolls_twice
    name = combatant.character.name
    faces = vaesen.initiative_card_faces(len(deck), twice=twice)
    read = _card_reader(name, deck, twice=twice)
    if not faces:
        return None, int(read([])["initiative"])
    entry = roll_append(
        campaign=combat.campaign,
        user=user,
        spec="+".join(f"1d{n}" for n in faces),
        purpose=(_("Carta de iniciativa de %(name)s") % {"name": name})[:200],
        read=read,
        character=combatant.character,
        scene=combat.scene,
        client_seed=seeds.next(),
    )
    table_roll = _table_roll(combat, entry, kind="initiative", character=combatant.character, user=user)
    return table_roll, int(entry.signed_game["initiative"])


def _roll_initiative(
    combat: VaesenCombat, combatant: VaesenCombatant, user, seeds: Seeds, *, tie: bool = False
) -> tuple[TableRoll, int]:
    """V17 — 1d10 (V25: 2d10 keeping the best after an ambush; a tie's re-roll is one d10)."""
    twice = combatant.rolls_twice and not tie
    name = combatant.character.name
    purpose = (_("Desempate de iniciativa de %(name)s") if tie else _("Iniciativa de %(name)s")) % {"name": name}
    entry = roll_append(
        campaign=combat.campaign,
        user=user,
        spec=f"{2 if twice else 1}d{vaesen.INITIATIVE_FACES}",
        purpose=purpose[:200],
        read=_initiative_reader(name, twice=twice, tie=tie),
        character=combatant.character,
        scene=combat.scene,
        client_seed=seeds.next(),
    )
    table_roll = _table_roll(combat, entry, kind="initiative", character=combatant.character, user=user)
    return table_roll, int(entry.signed_game["initiative"])


# --- the tracker ------------------------------------------------------------------------


def combat_start(*, scene: Scene, access: Access, characters) -> VaesenCombat:
    """The GM opens a combat in the scene with these characters (one open combat per scene)."""
    _require_gm(access)
    with transaction.atomic():
        # The scene's row: two GMs starting at once make one combat.
        Scene.objects.select_for_update().get(pk=scene.pk)
        if VaesenCombat.objects.filter(scene=scene, ended_at__isnull=True).exists():
            raise ValidationError(_("Ya hay un combate en curso en esta escena."), code="open_combat")
        characters = list(characters)
        if not characters:
            raise ValidationError(_("Elige al menos un participante."), code="characters")
        combat = VaesenCombat.objects.create(campaign=scene.campaign, scene=scene, started_by=access.user)
        for order, character in enumerate(characters):
            _add(combat, character, order)
    return combat


def _add(combat: VaesenCombat, character: Character, order: int) -> VaesenCombatant:
    if not character.is_in_play(combat.campaign) or not hasattr(character, "vaesen"):
        raise ValidationError(
            _("Solo combaten personajes aprobados y PNJ de la partida con ficha de Vaesen."), code="character"
        )
    if combat.combatants.filter(character=character).exists():
        raise ValidationError(_("%(name)s ya está en el combate.") % {"name": character.name}, code="duplicate")
    return VaesenCombatant.objects.create(combat=combat, character=character, order=order)


def combatant_add(*, combat: VaesenCombat, access: Access, character: Character) -> VaesenCombatant:
    """A late arrival joins at the end; the next initiative roll places it."""
    _require_gm(access)
    with transaction.atomic():
        locked = _lock(combat)
        return _add(locked, character, len(_ordered(locked)))


def combatant_remove(*, combatant: VaesenCombatant, access: Access) -> None:
    """Leaves the tracker, with the actions it made or received."""
    _require_gm(access)
    with transaction.atomic():
        locked = _lock(combatant.combat)
        # Its actions leave with it: the deadlines of the reactions they waited for too.
        gone = VaesenAction.objects.filter(combat=locked, resolved_at__isnull=True).filter(
            Q(actor_id=combatant.pk) | Q(target_id=combatant.pk)
        )
        for action_id in gone.values_list("pk", flat=True):
            deadlines.withdraw(REACTION_DEADLINE, action_id)
        VaesenCombatant.objects.filter(pk=combatant.pk).delete()
        _renumber(_ordered(locked))
        locked.save(update_fields=["round"])


def ambush(
    *,
    combat: VaesenCombat,
    access: Access,
    roller: VaesenCombatant,
    watcher: VaesenCombatant,
    ambushers: list[VaesenCombatant],
    client_seed: str | None = None,
) -> bool:
    """V25 — before the initiative: one of the ambushers rolls Sigilo against
    the watcher's Vigilancia, through the log. If it works every ambusher
    rolls initiative twice and keeps the best, with +1 die per extra success
    on its first action; if not, the watcher rolls twice. Returns whether it
    worked. A retried form (the same browser ``client_seed``) returns what
    the first one found, nothing rolled again."""
    _require_gm(access)
    seeds = Seeds(client_seed)
    with transaction.atomic():
        locked = _lock(combat)
        earlier = _earlier(locked, access.user, seeds)
        if earlier is not None:
            if locked.ambush_roll_id is None or locked.ambush_roll.first_id != earlier.pk:
                raise seed_used()
            return bool(locked.ambush_succeeded)
        combatants = {c.pk: c for c in _ordered(locked)}
        if locked.ambush_roll_id is not None:
            raise ValidationError(_("La emboscada de este combate ya se tiró."), code="ambush")
        if any(c.initiative_value is not None for c in combatants.values()):
            raise ValidationError(_("La emboscada se tira antes que la iniciativa."), code="ambush")
        ambusher_ids = {c.pk for c in ambushers} | {roller.pk}
        if not ambusher_ids <= combatants.keys() or watcher.pk not in combatants:
            raise ValidationError(_("Los dos tienen que estar en este combate."), code="combatant")
        if watcher.pk in ambusher_ids:
            raise ValidationError(_("Quien vigila no puede estar entre quienes emboscan."), code="watcher")
        rolling, watching = combatants[roller.pk], combatants[watcher.pk]
        try:
            sneak = pool_setup(rolling.character, skill="Sigilo")
            watch = pool_setup(watching.character, skill="Vigilancia")
        except ValidationError as exc:
            raise ValidationError(exc.messages, code="ambush") from None
        names = {"ambusher": rolling.character.name, "watcher": watching.character.name}
        sneak_roll = _test(
            locked,
            user=access.user,
            setup=sneak,
            purpose=_("Emboscada de %(ambusher)s contra %(watcher)s (Sigilo)") % names,
            character=rolling.character,
            test="ambush",
            seeds=seeds,
            extra=names,
        )
        watch_roll = _test(
            locked,
            user=access.user,
            setup=watch,
            purpose=_("Vigilancia de %(watcher)s contra la emboscada de %(ambusher)s") % names,
            character=watching.character,
            test="ambush_watch",
            seeds=seeds,
            extra=names,
        )
        worked, extra = vaesen.ambush_outcome(_successes(sneak_roll), _successes(watch_roll))
        if worked:
            for pk in ambusher_ids:
                combatant = combatants[pk]
                combatant.rolls_twice = True
                combatant.first_action_bonus = vaesen.ambush_first_action_bonus(extra)
                combatant.save(update_fields=["rolls_twice", "first_action_bonus"])
        else:
            watching.rolls_twice = True
            watching.save(update_fields=["rolls_twice"])
        locked.ambush_roll = sneak_roll
        locked.ambush_watch_roll = watch_roll
        locked.ambush_succeeded = worked
        locked.save(update_fields=["ambush_roll", "ambush_watch_roll", "ambush_succeeded"])
    return worked


def initiative_roll(*, combat: VaesenCombat, access: Access, client_seed: str | None = None) -> list[VaesenCombatant]:
    """V17 — 1d10 through the log for everyone without an initiative (2d10
    keeping the best after an ambush, V25); highest first, fixed for the
    whole combat. Ties among those just rolled are re-rolled among the tied
    only (Q18), each re-roll a logged d10 that only orders them. A late
    arrival goes after everyone already placed with the same or a higher value.
    With the campaign's option ``InitiativeMode.CARDS`` each draws a card
    from the deck 1–10 instead (``_draw_card``): no ties to re-roll. A
    retried form (the same browser ``client_seed``) returns the order the
    first one made, nothing rolled again."""
    _require_gm(access)
    seeds = Seeds(client_seed)
    with transaction.atomic():
        locked = _lock(combat)
        combatants = _ordered(locked)
        earlier = _earlier(locked, access.user, seeds)
        if earlier is not None:
            if not TableRoll.objects.filter(first=earlier, vaesen_combatant__combat=locked).exists():
                raise seed_used()
            return combatants
        waiting = [c for c in combatants if c.initiative_value is None and not c.fled]
        if not waiting:
            raise ValidationError(
                _("Todos tienen ya su iniciativa: queda fija para todo el combate."), code="initiative"
            )
        cards = initiative_mode(locked.campaign) is vaesen.InitiativeMode.CARDS
        held = [c.initiative_value for c in combatants if c.initiative_value is not None]
        for combatant in waiting:
            if cards:
                table_roll, value = _draw_card(locked, combatant, access.user, held, seeds)
                held.append(value)
            else:
                table_roll, value = _roll_initiative(locked, combatant, access.user, seeds)
            combatant.initiative = table_roll
            combatant.initiative_value = value
            combatant.save(update_fields=["initiative", "initiative_value"])
        by_id = {str(c.pk): c for c in waiting}
        newcomers = [
            by_id[pk] for pk in _settle(locked, {str(c.pk): c.initiative_value for c in waiting}, by_id, access, seeds)
        ]
        ordered = [c for c in combatants if c not in waiting]
        for newcomer in newcomers:
            at = next(
                (
                    i
                    for i, c in enumerate(ordered)
                    if c.initiative_value is not None and c.initiative_value < newcomer.initiative_value
                ),
                len(ordered),
            )
            ordered.insert(at, newcomer)
        _renumber(ordered)
        locked.save(update_fields=["round"])
    return ordered


def _settle(
    combat: VaesenCombat, values: dict[str, int], by_id: dict, access: Access, seeds: Seeds, depth: int = 0
) -> list[str]:
    """Q18 — each tied group re-rolls a d10 among its members only, until nobody is tied."""
    ordered: list[str] = []
    for group in vaesen.initiative_groups(values):
        if len(group) == 1 or depth >= MAX_TIE_ROLLS:
            ordered += group
            continue
        again = {pk: _roll_initiative(combat, by_id[pk], access.user, seeds, tie=True)[1] for pk in group}
        ordered += _settle(combat, again, by_id, access, seeds, depth + 1)
    return ordered


def _no_action_this_round(combat: VaesenCombat, combatants: list[VaesenCombatant]) -> bool:
    active = in_the_fight(combatants)
    return (
        (combat.acting_id is None or (active and combat.acting_id == active[0].pk))
        and not any(c.slow_used or c.fast_used for c in combatants)
        and not combat.actions.filter(round=combat.round).exists()
    )


def _swap(first: VaesenCombatant, second: VaesenCombatant, combatants: list[VaesenCombatant]) -> None:
    first.initiative_value, second.initiative_value = second.initiative_value, first.initiative_value
    i, j = combatants.index(first), combatants.index(second)
    combatants[i], combatants[j] = second, first
    first.save(update_fields=["initiative_value"])
    second.save(update_fields=["initiative_value"])
    _renumber(combatants)


def initiative_swap(
    *, combat: VaesenCombat, access: Access, first: VaesenCombatant, second: VaesenCombatant
) -> list[VaesenCombatant]:
    """V17 — at the start of a round, before anyone acts, two player
    characters who can talk to each other swap their initiatives."""
    _require_gm(access)
    with transaction.atomic():
        locked = _lock(combat)
        combatants = _ordered(locked)
        by_id = {c.pk: c for c in combatants}
        if first.pk not in by_id or second.pk not in by_id:
            raise ValidationError(_("Los dos tienen que estar en este combate."), code="combatant")
        one, other = by_id[first.pk], by_id[second.pk]
        if one.pk == other.pk:
            raise ValidationError(_("Elige dos personajes distintos."), code="same")
        if one.character.is_npc or other.character.is_npc:
            raise ValidationError(_("Solo los personajes jugadores intercambian su iniciativa."), code="npc")
        if not initiative_ready(combatants):
            raise ValidationError(_("Primero hay que tirar la iniciativa."), code="initiative")
        if one.fled or other.fled:
            raise ValidationError(_("Quien ha huido ya no está en el combate."), code="fled")
        if one.silenced or other.silenced:
            raise ValidationError(
                _("Para intercambiar la iniciativa tienen que poder hablar entre sí."), code="silenced"
            )
        if not _no_action_this_round(locked, combatants):
            raise ValidationError(
                _("La iniciativa solo se intercambia al principio del asalto, antes de que nadie actúe."),
                code="started",
            )
        _swap(one, other, combatants)
        locked.acting = None
        locked.save(update_fields=["acting"])
    return combatants


def next_turn(*, combat: VaesenCombat, access: Access) -> VaesenCombat:
    """The next one in the order acts; after the last, a new round begins
    with everyone's two actions back (V18)."""
    _require_gm(access)
    with transaction.atomic():
        locked = _lock(combat)
        combatants = _ordered(locked)
        if not initiative_ready(combatants):
            raise ValidationError(_("Primero hay que tirar la iniciativa."), code="initiative")
        active = in_the_fight(combatants)
        if not active:
            raise ValidationError(_("No queda nadie en el combate."), code="empty")
        acting = next((c for c in combatants if c.pk == locked.acting_id), active[0])
        if locked.actions.filter(resolved_at__isnull=True).exists():
            raise ValidationError(
                _("Hay una acción esperando su reacción: resuélvela o anúlala antes de pasar el turno."),
                code="pending",
            )
        later = [c for c in active if c.order > acting.order]
        if later:
            locked.acting = later[0]
        else:
            locked.round += 1
            locked.acting = active[0]
            for combatant in combatants:
                if combatant.slow_used or combatant.fast_used:
                    combatant.slow_used = combatant.fast_used = 0
                    combatant.save(update_fields=["slow_used", "fast_used"])
        locked.save(update_fields=["acting", "round"])
        # The turn passed: its deadline needs nothing more.
        deadlines.withdraw(TURN_DEADLINE, locked.pk)
    return locked


def combat_end(*, combat: VaesenCombat, access: Access) -> VaesenCombat:
    _require_gm(access)
    with transaction.atomic():
        locked = _lock(combat)
        if locked.actions.filter(resolved_at__isnull=True).exists():
            raise ValidationError(
                _("Hay una acción esperando su reacción: resuélvela o anúlala antes de terminar."), code="pending"
            )
        locked.ended_at = timezone.now()
        locked.save(update_fields=["ended_at"])
        deadlines.withdraw(TURN_DEADLINE, locked.pk, now=locked.ended_at)
    return locked


def release(*, combatant: VaesenCombatant, access: Access) -> VaesenCombatant:
    """V23 — the holder lets go (its player or the GM)."""
    with transaction.atomic():
        locked = _lock(combatant.combat)
        held = next((c for c in _ordered(locked) if c.pk == combatant.pk), None)
        if held is None or held.held_by_id is None:
            raise ValidationError(_("Nadie tiene apresado a este personaje."), code="not_held")
        holder = VaesenCombatant.objects.select_related("character").get(pk=held.held_by_id)
        if not can_play_character(access, holder.character):
            raise PermissionDenied(_("Solo quien lo apresa o la dirección lo sueltan."))
        held.held_by = None
        held.silenced = False
        held.save(update_fields=["held_by", "silenced"])
    return held


# --- declaring an action -------------------------------------------------------------------


def can_act_for(access: Access, combatant: VaesenCombatant) -> bool:
    """The GM acts for anyone; a player for their own character only."""
    return can_play_character(access, combatant.character)


def _spend(combatant: VaesenCombatant, *, slow: bool) -> None:
    """V18 — the action counts against the round's two (one slow at most)."""
    if not vaesen.may_take_action(combatant.slow_used, combatant.fast_used, slow=slow):
        if slow and combatant.slow_used:
            message = _("%(name)s ya ha hecho su acción lenta de este asalto.")
        else:
            message = _("%(name)s ya ha gastado sus dos acciones de este asalto.")
        raise ValidationError(message % {"name": combatant.character.name}, code="actions")
    if slow:
        combatant.slow_used += 1
    else:
        combatant.fast_used += 1
    combatant.save(update_fields=["slow_used", "fast_used"])


def _refuse_broken(character: Character, *, attacking: bool) -> None:
    refusal = broken_refusal(character)
    if refusal is not None:
        raise ValidationError(refusal, code="broken")
    if attacking and not character.vaesen.conditions().may_attack:
        # V10/V12 — a Broken character cannot attack (mentally Broken may flee, parry, dodge).
        raise ValidationError(
            _("%(name)s está «Derrotado»: no puede atacar.") % {"name": character.name}, code="broken"
        )


def declare(
    *,
    combat: VaesenCombat,
    access: Access,
    actor: VaesenCombatant,
    kind: str,
    target: VaesenCombatant | None = None,
    weapon: VaesenWeapon | None = None,
    silence: bool = False,
) -> VaesenAction:
    """Declare an action, rolling nothing yet: an attack (V19: with the
    weapon's skill, Fuerza unarmed), a grapple (V23: Fuerza; ``silence``
    asks for the extra success that covers the mouth), breaking free (V23,
    a fast action once per turn) or fleeing (V24: Agilidad). Attacks,
    grapples and fleeing are the acting character's slow action on its turn."""
    if kind not in REACTIONS:
        raise ValidationError(_("Acción desconocida."), code="kind")
    if not can_act_for(access, actor):
        raise PermissionDenied(_("Solo actúas con tu propio personaje."))
    with transaction.atomic():
        locked = _lock(combat)
        combatants = _ordered(locked)
        by_id = {c.pk: c for c in combatants}
        me = by_id.get(actor.pk)
        if me is None or (target is not None and target.pk not in by_id):
            raise ValidationError(_("Los dos tienen que estar en este combate."), code="combatant")
        character = me.character
        if not initiative_ready(combatants):
            raise ValidationError(_("Primero hay que tirar la iniciativa."), code="initiative")
        if me.fled:
            raise ValidationError(_("%(name)s ha huido del combate.") % {"name": character.name}, code="fled")
        other, fields = _declared(
            kind, locked, me, by_id.get(target.pk) if target is not None else None, by_id, weapon, silence
        )
        acting = current(locked, combatants)
        if kind in ON_ONES_TURN and (acting is None or acting.pk != me.pk):
            raise ValidationError(_("No es el turno de %(name)s.") % {"name": character.name}, code="turn")
        _spend(me, slow=kind in SLOW_KINDS)
        bonus = 0
        if kind in SLOW_KINDS and me.first_action_bonus:
            # V25 — the ambush's extra successes, on the first action only.
            bonus = me.first_action_bonus
            me.first_action_bonus = 0
            me.save(update_fields=["first_action_bonus"])
        action = VaesenAction.objects.create(
            combat=locked,
            kind=kind,
            round=locked.round,
            actor=me,
            target=other,
            declared_by=access.user,
            ambush_bonus=bonus,
            **fields,
        )
        _ask_for_reaction(action, access)
    return action


def _ask_for_reaction(action: VaesenAction, access: Access) -> None:
    """Tell the player of the character an action is aimed at that it waits
    for their reaction (or none), with a link to the combat."""
    target = action.target
    if target is None or target.character.is_npc:
        return
    owner = target.character.owner
    if owner.pk == access.user.pk or not owner.is_active:
        return
    values = {"actor": action.actor.character.name, "target": target.character.name}

    def text() -> str:
        # Worked out in each language of the site: the action's name too.
        kind = action.get_kind_display()
        return _("%(kind)s de %(actor)s contra %(target)s: declara tu reacción (o ninguna) antes de la tirada.") % {
            **values,
            "kind": kind,
        }

    notify.notify_users(
        [owner],
        campaign=action.combat.campaign,
        kind=Notification.Kind.ANSWER,
        url=f"{combat_url(action.combat)}#accion-{action.pk}",
        text=text,
    )


def _declared(
    kind: str,
    locked: VaesenCombat,
    me: VaesenCombatant,
    other: VaesenCombatant | None,
    by_id: dict[int, VaesenCombatant],
    weapon: VaesenWeapon | None,
    silence: bool,
) -> tuple[VaesenCombatant | None, dict[str, Any]]:
    """What the action needs of its actor and target, or the Spanish reason it is impossible."""
    character = me.character
    fields: dict[str, Any] = {}
    if kind in (Kind.ATTACK, Kind.GRAPPLE):
        _refuse_broken(character, attacking=True)
        if me.held_by_id is not None:
            raise ValidationError(
                _("%(name)s está apresado: solo puede gritar o intentar liberarse.") % {"name": character.name},
                code="held",
            )
        if other is None:
            raise ValidationError(_("Elige a quién."), code="target")
        if other.pk == me.pk:
            raise ValidationError(_("Un personaje no se ataca a sí mismo."), code="self")
        if other.fled:
            raise ValidationError(_("%(name)s ha huido del combate.") % {"name": other.character.name}, code="fled")
        if kind == Kind.ATTACK:
            fields = _weapon_fields(character, weapon)
        else:
            if other.held_by_id == me.pk:
                raise ValidationError(_("%(name)s ya está apresado.") % {"name": other.character.name}, code="held")
            fields = {"skill": "Fuerza", "silence": silence}
    elif kind == Kind.BREAK_FREE:
        _refuse_broken(character, attacking=False)
        if me.held_by_id is None:
            raise ValidationError(_("%(name)s no está apresado.") % {"name": character.name}, code="not_held")
        if me.broke_free_round == locked.round:
            raise ValidationError(_("Solo se intenta liberarse una vez por turno."), code="once")
        other = by_id[me.held_by_id]
        fields = {"skill": "Fuerza"}
        me.broke_free_round = locked.round
        me.save(update_fields=["broke_free_round"])
    else:  # V24 — fleeing: Agilidad.
        _refuse_broken(character, attacking=False)
        if me.held_by_id is not None:
            raise ValidationError(
                _("%(name)s está apresado: no puede huir hasta liberarse.") % {"name": character.name},
                code="held",
            )
        other = None
        fields = {"skill": "Agilidad"}
    return other, fields


def _weapon_fields(character: Character, weapon: VaesenWeapon | None) -> dict[str, Any]:
    """V19 — the weapon's skill, damage and bonus; unarmed: Fuerza, one condition."""
    if weapon is None:
        return {"weapon": "", "skill": UNARMED, "damage": UNARMED_DAMAGE, "bonus": 0}
    if weapon.sheet_id != character.pk:
        raise ValidationError(_("Esa arma no es de %(name)s.") % {"name": character.name}, code="weapon")
    return {"weapon": weapon.name, "skill": weapon.skill, "damage": weapon.damage, "bonus": weapon.bonus}


def cancel(*, action: VaesenAction, access: Access) -> None:
    """The GM takes back an action still waiting for its reaction; the
    action spent comes back."""
    _require_gm(access)
    with transaction.atomic():
        locked = _lock(action.combat)
        row = VaesenAction.objects.select_for_update().filter(pk=action.pk, combat=locked).first()
        if row is None or row.resolved_at is not None:
            raise ValidationError(_("Esta acción ya se resolvió."), code="resolved")
        actor = next(c for c in _ordered(locked) if c.pk == row.actor_id)
        if row.kind in SLOW_KINDS:
            actor.slow_used = max(actor.slow_used - 1, 0)
            actor.first_action_bonus += row.ambush_bonus
        else:
            actor.fast_used = max(actor.fast_used - 1, 0)
            actor.broke_free_round = None
        actor.save(update_fields=["slow_used", "fast_used", "first_action_bonus", "broke_free_round"])
        deadlines.withdraw(REACTION_DEADLINE, row.pk)
        row.delete()


# --- answering: the reaction, then the rolls -----------------------------------------------------


def may_answer(access: Access, action: VaesenAction, reactor: VaesenCombatant | None) -> bool:
    """The GM answers any action; a player the actions aimed at their own
    character (and, for fleeing, with their own character)."""
    if access.is_gm:
        return True
    return reactor is not None and can_act_for(access, reactor)


def reaction_refusal(
    access: Access, action: VaesenAction, reaction: str, reactor: VaesenCombatant | None
) -> str | None:
    """Why ``access.user`` may not answer ``action`` with ``reaction`` by
    ``reactor`` (a Spanish message), or None."""
    if action.resolved_at is not None:
        return _("Esta acción ya se resolvió.")
    if reaction not in REACTIONS[action.kind]:
        return _("Esa reacción no responde a esta acción.")
    if reaction == Reaction.NONE:
        return None
    if reactor is None:
        return _("Elige quién reacciona.")
    if not can_act_for(access, reactor):
        return _("Solo reaccionas con tu propio personaje.")
    if reactor.pk == action.actor_id:
        return _("Un personaje no reacciona a su propia acción.")
    if action.kind != Kind.FLEE and reactor.pk != action.target_id:
        return _("Solo reacciona quien recibe la acción.")
    if reactor.fled:
        return _("%(name)s ha huido del combate.") % {"name": reactor.character.name}
    if reaction in (Reaction.PARRY_STRENGTH, Reaction.PARRY_MELEE) and action.skill == "Combate a distancia":
        return _("Un ataque a distancia no se para: solo se esquiva.")
    refusal = broken_refusal(reactor.character)
    if refusal is not None:
        return refusal
    if not vaesen.may_take_action(reactor.slow_used, reactor.fast_used, slow=False):
        return _("%(name)s ya ha gastado sus dos acciones de este asalto.") % {"name": reactor.character.name}
    return None


def react(
    *,
    action: VaesenAction,
    access: Access,
    reaction: str,
    reactor: VaesenCombatant | None = None,
    client_seed: str | None = None,
) -> VaesenAction:
    """Declare the reaction (or none) and roll both: the action's pool, the
    reaction's (a fast action of the reactor, V18), each through the log;
    each reaction success removes one of the action's (V21, V23, V24). An
    attack that still has a success hits: armour dice (V22) then the
    weapon's damage as physical conditions, or Resistencia points for human
    NPCs and animals (V19, V20); a hit on someone Broken by physical harm is
    one more critical injury (V11), as is the blow that breaks them (V10).
    A retried form (the same browser ``client_seed``) returns the action as
    the first one settled it, nothing rolled or marked again."""
    seeds = Seeds(client_seed)
    with transaction.atomic():
        locked = _lock(action.combat)
        combatants = {c.pk: c for c in _ordered(locked)}
        row = VaesenAction.objects.select_for_update(of=("self",)).filter(pk=action.pk, combat=locked).first()
        if row is None:
            raise ValidationError(_("Esta acción ya no existe."), code="gone")
        earlier = _earlier(locked, access.user, seeds)
        if earlier is not None:
            if row.roll_id is None or row.roll.first_id != earlier.pk:
                raise seed_used()
            return row
        row.combat = locked
        row.actor = combatants[row.actor_id]
        row.target = combatants.get(row.target_id) if row.target_id else None
        who = combatants.get(reactor.pk) if reactor is not None else None
        if row.kind != Kind.FLEE:
            who = row.target
        if not may_answer(access, row, who):
            raise PermissionDenied(_("Solo quien recibe la acción (o la dirección) responde."))
        refusal = reaction_refusal(access, row, reaction, who)
        if refusal is not None:
            raise ValidationError(refusal, code="reaction")
        if reaction != Reaction.NONE:
            _spend(who, slow=False)
            if row.kind == Kind.FLEE:
                row.target = who
        row.reaction = reaction
        row.reaction_by = access.user
        _roll_and_settle(locked, row, access.user, seeds)
        # Answered: the reaction's deadline needs nothing more.
        deadlines.withdraw(REACTION_DEADLINE, row.pk)
    return row


def _action_setup(action: VaesenAction) -> PoolSetup:
    bonus = action.bonus + action.ambush_bonus
    setup = pool_setup(action.actor.character, skill=action.skill, modifier=bonus)
    # The card names the bonus dice: the weapon's (V19) and the ambush's (V25).
    parts = [(label, value) for label, value in setup.breakdown if label != _("Modificador")]
    if action.bonus:
        parts.append((action.weapon, action.bonus))
    if action.ambush_bonus:
        parts.append((_("Emboscada"), action.ambush_bonus))
    return replace(setup, breakdown=tuple(parts))


def _purpose(action: VaesenAction) -> str:
    names = {
        "actor": action.actor.character.name,
        "target": action.target.character.name if action.target else "",
        "weapon": action.weapon or _("sin armas"),
    }
    if action.kind == Kind.ATTACK:
        return _("Ataque de %(actor)s a %(target)s (%(weapon)s)") % names
    if action.kind == Kind.GRAPPLE:
        return _("%(actor)s intenta apresar a %(target)s") % names
    if action.kind == Kind.BREAK_FREE:
        return _("%(actor)s intenta liberarse de %(target)s") % names
    return _("%(actor)s intenta huir") % names


def _roll_and_settle(combat: VaesenCombat, action: VaesenAction, user, seeds: Seeds) -> None:
    if action.kind == Kind.ATTACK:
        # The sheet the blow marks, locked (and read again) before the log's head: the lock order.
        action.target.character = (
            Character.objects.select_for_update(of=("self",))
            .select_related("campaign", "owner", "vaesen")
            .get(pk=action.target.character_id)
        )
    try:
        setup = _action_setup(action)
        reaction_setup = (
            pool_setup(action.target.character, skill=REACTION_SKILLS[action.reaction])
            if action.reaction != Reaction.NONE
            else None
        )
    except ValidationError as exc:
        raise ValidationError(exc.messages, code="pool") from None
    purpose = _purpose(action)
    sides = {
        "action": action.kind,
        "actor": action.actor.character.name,
        "target": action.target.character.name if action.target else "",
    }
    action.roll = _test(
        combat,
        user=user,
        setup=setup,
        purpose=purpose,
        character=action.actor.character,
        test="attack" if action.kind == Kind.ATTACK else action.kind,
        seeds=seeds,
        extra={**sides, "weapon": action.weapon, "damage": action.damage},
    )
    if reaction_setup is not None:
        action.reaction_roll = _test(
            combat,
            user=user,
            setup=reaction_setup,
            purpose=_("%(reaction)s de %(name)s: %(purpose)s")
            % {"reaction": action.get_reaction_display(), "name": action.target.character.name, "purpose": purpose},
            character=action.target.character,
            test="reaction",
            seeds=seeds,
            extra={**sides, "reaction": action.reaction, "of": action.roll.first.permalink},
        )
    made, answered = _successes(action.roll), _successes(action.reaction_roll)
    action.successes_left = vaesen.after_reaction(made, answered)
    if action.kind == Kind.ATTACK:
        _settle_attack(combat, action, user, made, answered, seeds)
    elif action.kind == Kind.GRAPPLE:
        action.succeeded = vaesen.attack_lands(made, answered)
        target = action.target
        if action.succeeded:
            target.held_by = action.actor
            target.silenced = action.silence and vaesen.grapple_silences(made, answered)
            target.save(update_fields=["held_by", "silenced"])
            action.outcome = (
                _("%(target)s queda apresado y no puede hablar.")
                if target.silenced
                else _("%(target)s queda apresado.")
            ) % {"target": target.character.name}
        else:
            action.outcome = _("No consigue apresarlo.")
    elif action.kind == Kind.BREAK_FREE:
        holder = answered if action.reaction == Reaction.HOLD else None
        action.succeeded = vaesen.breaks_free(made, holder)
        if action.succeeded:
            actor = action.actor
            actor.held_by = None
            actor.silenced = False
            actor.save(update_fields=["held_by", "silenced"])
            action.outcome = _("%(name)s se libera.") % {"name": actor.character.name}
        else:
            action.outcome = _("Sigue apresado.")
    else:
        action.succeeded = vaesen.flees(made, answered)
        if action.succeeded:
            actor = action.actor
            actor.fled = True
            actor.save(update_fields=["fled"])
            # Whoever it held is free; nobody holds someone who has left.
            for held in VaesenCombatant.objects.filter(held_by=actor):
                held.held_by = None
                held.silenced = False
                held.save(update_fields=["held_by", "silenced"])
            action.outcome = _("%(name)s abandona el combate.") % {"name": actor.character.name}
        else:
            action.outcome = _("Se queda en la misma zona.")
    action.resolved_at = timezone.now()
    action.full_clean()
    action.save()


def _settle_attack(combat: VaesenCombat, action: VaesenAction, user, made: int, answered: int, seeds: Seeds) -> None:
    target = action.target
    action.succeeded = vaesen.attack_lands(made, answered)
    # V21 — more successes than the attack had: the defender may swap initiative.
    action.may_swap = action.reaction != Reaction.NONE and vaesen.reaction_may_swap_initiative(made, answered)
    if not action.succeeded:
        action.outcome = _("El ataque falla.")
        return
    character = target.character
    sheet = character.vaesen
    armour = 0
    if sheet.armour_protection:
        # V22 — as many dice as the armour's Protection; each success is one damage less.
        action.armour_roll = _armour(combat, action, user, seeds)
        armour = _successes(action.armour_roll)
    damage = vaesen.damage_after_armour(action.damage, armour)
    action.damage_taken = damage
    entry = action.roll.latest
    reason = _("%(purpose)s (%(url)s)") % {"purpose": entry.purpose, "url": entry.get_absolute_url()}
    if damage == 0:
        action.outcome = _("Impacta, pero la armadura para todo el daño.")
        return
    if sheet.uses_resistance:
        # V20 — human NPCs and animals lose Resistencia points instead.
        lost = min(damage, sheet.resistance_left)
        if lost:
            sheet_services.resistance_change(character=character, actor=user, change=-lost, reason=reason)
            SheetEvent.objects.filter(
                pk=SheetEvent.objects.filter(character=character, kind=VaesenEvent.RESISTANCE)
                .order_by("-pk")
                .values("pk")[:1]
            ).update(roll=entry)
            character.vaesen.refresh_from_db(fields=["resistance_lost"])
        action.outcome = ngettext(
            "%(name)s pierde %(n)s punto de Resistencia (le quedan %(left)s).",
            "%(name)s pierde %(n)s puntos de Resistencia (le quedan %(left)s).",
            lost,
        ) % {
            "name": character.name,
            "n": lost,
            "left": character.vaesen.resistance_left,
        }
        return
    # V19 — the damage is the number of physical conditions; V10/V11 Broken and critical injuries.
    suffered = vaesen.take_damage(sheet.conditions(), damage)
    if suffered.conditions != sheet.conditions():
        sheet_services.apply_conditions(character, suffered.conditions, actor=user, reason=reason, roll=entry)
    parts = []
    if suffered.taken:
        parts.append(
            _("%(name)s sufre: %(conditions)s.") % {"name": character.name, "conditions": ", ".join(suffered.taken)}
        )
    if suffered.became_broken:
        parts.append(_("Queda Derrotado físicamente."))
    if suffered.critical_injuries:
        action.injury_roll = _injury(combat, action, user, entry, seeds)
        injury = character.vaesen.injuries.order_by("-pk").first()
        parts.append(
            _("Herida crítica %(value)s: %(name)s.")
            % {"value": action.injury_roll.latest.signed_game["d66"], "name": injury.name if injury else ""}
        )
    action.outcome = " ".join(parts)


def _armour(combat: VaesenCombat, action: VaesenAction, user, seeds: Seeds) -> TableRoll:
    character = action.target.character
    protection = character.vaesen.armour_protection
    name = character.vaesen.armour or _("Armadura")

    def read(dice: list[int]) -> dict[str, Any]:
        test = vaesen.armour_roll(FixedDice(dice), protection)
        return {
            "system": "vaesen",
            "test": "armour",
            "what": rollog.normalise_purpose(f"{name} ({_('Protección')} {protection})"),
            "breakdown": [[rollog.normalise_purpose(_("Protección")), protection]],
            "needed": 1,
            "kind": "",
            "pool": len(dice),
            "successes": test.successes,
            "extra_successes": test.extra_successes,
            "success": test.succeeded,
            "pushed": False,
            "of": action.roll.first.permalink,
        }

    entry = roll_append(
        campaign=combat.campaign,
        user=user,
        spec=f"{protection}d{vaesen.FACES}",
        purpose=(_("Armadura de %(name)s") % {"name": character.name})[:200],
        read=read,
        character=character,
        scene=combat.scene,
        client_seed=seeds.next(),
    )
    return _table_roll(combat, entry, kind="armour", character=character, user=user)


def _injury(combat: VaesenCombat, action: VaesenAction, user, of: RollEntry, seeds: Seeds) -> TableRoll:
    """V10, V11, V13 — the critical injury of the blow: 2d6 "desglosados"
    through the log, recorded on the sheet with its ``SheetEvent``."""
    character = action.target.character
    kind = vaesen.ConditionKind.PHYSICAL
    purpose = (
        _("Herida crítica (%(kind)s): %(purpose)s")
        % {"kind": sheet_services.kind_word(kind, agrees="herida"), "purpose": of.purpose}
    )[:200]
    entry = roll_append(
        campaign=combat.campaign,
        user=user,
        spec=f"2d{vaesen.FACES}",
        purpose=purpose,
        read=injury_reader(kind.value, of=of.permalink),
        character=character,
        scene=combat.scene,
        client_seed=seeds.next(),
    )
    value = entry.signed_game["d66"]
    # The campaign's own table names the injury when it has a row for the value (V13).
    row = injury_for(combat.campaign, kind, value)
    sheet_services.add_injury(
        character,
        kind=kind,
        roll_value=value,
        name=row.name if row else rolls_injury_name(kind, value),
        effect=row.effect if row else "",
        time_limit=row.time_limit if row else "",
        actor=user,
        reason=purpose,
        roll=entry,
    )
    return TableRoll.objects.create(
        campaign=combat.campaign,
        scene=combat.scene,
        first=entry,
        latest=entry,
        kind=INJURY,
        owner=owner_for(character, user),
        character=character,
        facts={"kind": kind.value, "success": None, "can_push": False},
    )


def swap_after_reaction(*, action: VaesenAction, access: Access) -> VaesenAction:
    """V21 — a dodge or parry with more successes than the attack had: the
    defender may swap initiative with the attacker, once."""
    with transaction.atomic():
        locked = _lock(action.combat)
        combatants = _ordered(locked)
        row = VaesenAction.objects.select_for_update(of=("self",)).filter(pk=action.pk, combat=locked).first()
        if row is None or not row.may_swap:
            raise ValidationError(_("Esta reacción no permite intercambiar la iniciativa."), code="no_swap")
        if row.swapped:
            raise ValidationError(_("La iniciativa ya se intercambió."), code="swapped")
        by_id = {c.pk: c for c in combatants}
        defender, attacker = by_id.get(row.target_id), by_id.get(row.actor_id)
        if defender is None or attacker is None:
            raise ValidationError(_("Los dos tienen que estar en este combate."), code="combatant")
        if not can_act_for(access, defender):
            raise PermissionDenied(_("Solo quien reaccionó o la dirección intercambian la iniciativa."))
        _swap(defender, attacker, combatants)
        row.swapped = True
        row.save(update_fields=["swapped"])
    return row
