"""Opposed rolls at the table (V14): the GM sets one up between two
characters in a scene (each an attribute + skill from the sheet, or an NPC's
pool of dice); each side rolls from the scene at its pace through the signed
log; more successes wins; on a tie either side may push (the push service,
``rolls.services.push``, which then tells both sides whether they are still
tied).

The open ones wait in ``Campaign.game_state`` (``state``); the rolled ones
are their two table rolls (kind "opposed", ``facts["opposed"]`` the id).
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from campaigns.models import Scene
from campaigns.permissions import campaign_access
from rolls.services import seed_used
from rules import vaesen
from sheets.models import Character
from sheets.permissions import can_play_character
from systems.vaesen.fear import state
from systems.vaesen.rolls.services import pool_setup, retie, signed_test, table_test
from table.models import TableRoll

KEY = "vaesen_opposed"
OPPOSED = "opposed"


def side_setup(character: Character, side: dict[str, Any]):
    return pool_setup(
        character, attribute=side.get("attribute") or "", skill=side.get("skill") or "", free_pool=side.get("pool")
    )


def opposed_start(*, scene: Scene, actor, purpose: str, sides: list[tuple[Character, str, str, int | None]]) -> dict:
    """The GM sets up an opposed roll: two different characters in play, each
    with (attribute, skill) or, for an NPC, a pool of dice. Each pool is
    checked now (the sheet must have it); nothing is rolled yet."""
    campaign = scene.campaign
    if not campaign_access(actor, campaign).is_gm:
        raise PermissionDenied(_("Solo la dirección prepara tiradas enfrentadas."))
    if scene.status == Scene.Status.ARCHIVED:
        raise ValidationError(_("La escena está archivada."))
    purpose = " ".join((purpose or "").split())
    if not purpose:
        raise ValidationError(_("Indica qué se disputan."), code="purpose")
    if len(sides) != 2 or sides[0][0].pk == sides[1][0].pk:
        raise ValidationError(_("Una tirada enfrentada es entre dos personajes distintos."), code="sides")
    stored = []
    for character, attribute, skill, pool in sides:
        if not character.is_in_play(campaign):
            raise ValidationError(_("%(name)s no es un personaje de esta partida.") % {"name": character.name})
        if pool is not None and not character.is_npc:
            raise ValidationError(
                _("%(name)s tira atributo y habilidad: las reservas libres son de los PNJ.") % {"name": character.name}
            )
        side = {"character": character.pk, "attribute": attribute, "skill": skill, "pool": pool, "roll": None}
        side_setup(character, side)
        stored.append(side)
    with transaction.atomic():
        locked = state.locked_campaign(campaign)
        item = state.add(
            locked,
            KEY,
            {
                "scene": scene.pk,
                "purpose": purpose[:200],
                "sides": stored,
                "by": actor.pk,
                "at": timezone.now().isoformat(),
            },
        )
    campaign.game_state = locked.game_state
    return item


def open_rolls(scene: Scene) -> list[dict[str, Any]]:
    return state.items(scene.campaign, KEY, scene_id=scene.pk)


def opposed_close(*, scene: Scene, actor, item_id: int) -> None:
    """The GM calls off an opposed roll not rolled by both sides yet."""
    if not campaign_access(actor, scene.campaign).is_gm:
        raise PermissionDenied(_("Solo la dirección anula tiradas enfrentadas."))
    with transaction.atomic():
        locked = state.locked_campaign(scene.campaign)
        item = state.find(locked, KEY, item_id, scene_id=scene.pk)
        state.replace(locked, KEY, item, done=True)
    scene.campaign.game_state = locked.game_state


def opposed_roll(*, scene: Scene, actor, item_id: int, side: int, client_seed: str | None = None) -> TableRoll:
    """One side's test through the log, once. When both have rolled, the two
    table rolls know each other (``partner``) and whether they tie."""
    campaign = scene.campaign
    with transaction.atomic():
        locked = state.locked_campaign(campaign)
        item = state.find(locked, KEY, item_id, scene_id=scene.pk)
        if side not in (0, 1):
            raise ValidationError(_("Esa tirada enfrentada solo tiene dos bandos."))
        mine = item["sides"][side]
        character = Character.objects.select_related("vaesen", "owner").get(pk=mine["character"])
        if not can_play_character(campaign_access(actor, campaign), character):
            raise PermissionDenied(
                _("Solo la dirección o quien lleva a %(name)s tira por él.") % {"name": character.name}
            )
        if mine["roll"] is not None:
            raise ValidationError(_("%(name)s ya ha tirado.") % {"name": character.name}, code="done")
        other = item["sides"][1 - side]["roll"]
        # The other side's row before the log's head (a push takes them in that order).
        partner = TableRoll.objects.select_for_update(of=("self",)).get(pk=other) if other is not None else None
        table_roll = table_test(
            campaign=campaign,
            user=actor,
            setup=side_setup(character, mine),
            purpose=(_("Enfrentada: %(purpose)s") % {"purpose": item["purpose"]})[:200],
            character=character,
            scene=scene,
            client_seed=client_seed,
            kind=OPPOSED,
            game={"test": OPPOSED},
            facts={"opposed": item["id"], "side": side},
        )
        if table_roll.kind != OPPOSED or table_roll.facts.get("opposed") != item["id"]:
            raise seed_used()
        sides = [dict(s) for s in item["sides"]]
        sides[side]["roll"] = table_roll.pk
        if partner is not None:
            partner.facts = {**partner.facts, "partner": table_roll.pk}
            partner.save(update_fields=["facts"])
            table_roll.facts = {**table_roll.facts, "partner": other}
            table_roll.save(update_fields=["facts"])
            table_roll = TableRoll.objects.select_related("latest").get(pk=table_roll.pk)
            retie(table_roll)
        state.replace(locked, KEY, {**item, "sides": sides}, done=other is not None)
    campaign.game_state = locked.game_state
    return table_roll


def successes(table_roll: TableRoll) -> int:
    latest = table_roll.latest
    return signed_test(latest.signed_game, latest.entry["dice"]).successes


def outcome(first: TableRoll, second: TableRoll) -> vaesen.Opposed:
    """V14 — more successes wins; a tie may be pushed by either side."""
    return vaesen.opposed(successes(first), successes(second))


def scene_pairs(scene: Scene, *, limit: int = 40) -> list[tuple[TableRoll, TableRoll]]:
    """The scene's rolled opposed rolls, newest first, as (first side, second side)."""
    rolls = list(
        TableRoll.objects.filter(scene=scene, kind=OPPOSED)
        .select_related("first__user", "latest__user", "character", "owner")
        .order_by("-id")[: limit * 2]
    )
    by_id = {tr.pk: tr for tr in rolls}
    pairs = []
    for tr in rolls:
        partner = by_id.get(tr.facts.get("partner") or 0)
        if partner is not None and tr.facts.get("side") == 0:
            pairs.append((tr, partner))
    return pairs
