"""Fear tests at the table (V26, V27): the GM starts one in a scene against a
creature (or a Fear value) for the player characters present; each player
answers at their pace with Lógica or Empatía through the signed log; a
failure may be pushed once (a mental condition, through the push service)
and then accepted: 1d6 rounds Aterrorizado rolled through the log, Fear −
successes mental conditions applied (``apply_conditions``; Broken asks for a
mental critical injury, ``rolls.services.roll_injury``) and the player's
reaction stored on the sheet, each with its ``SheetEvent``.

Every number comes from ``rules.vaesen`` (``fear_pool``, ``fear_outcome``,
``suffer``). Lock order: the campaign row (its open tests), then the table
roll, then the character, then the roll log's head.
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from campaigns.models import Scene
from campaigns.permissions import Access, campaign_access
from rolls.services import roll_append, seed_used
from rules import vaesen
from rules.dice import FixedDice
from sheets.models import Character
from sheets.permissions import can_play_character
from systems.vaesen.fear import state
from systems.vaesen.models import VaesenSheet
from systems.vaesen.rolls.services import (
    ATTRIBUTE_LABELS,
    PoolSetup,
    broken_refusal,
    lock_table_roll,
    signed_test,
    table_test,
)
from systems.vaesen.sheet.services import REACTIONS, apply_conditions, terror_set
from table.models import TableRoll

KEY = "vaesen_fear"
FEAR = "fear"
TERROR = "terror"
MAX_FEAR = 10
FEAR_ATTRIBUTES = ("lógica", "empatía")
# V27 — the player's choice of reaction while Aterrorizado: ``REACTIONS``
# (the sheet's, ``sheet.services``, which stores it).


# --- who counts ------------------------------------------------------------------------


def stands_firm(sheet: VaesenSheet) -> bool:
    """V26 — a companion counts unless Broken or already Aterrorizado."""
    return not sheet.broken and not sheet.terrified_rounds


def companions(character: Character, present: list[Character]) -> int:
    """The other player characters present who neither are Broken nor
    Aterrorizado (``rules.vaesen.fear_pool`` caps them at +3)."""
    return sum(1 for other in present if other.pk != character.pk and stands_firm(other.vaesen))


def fear_setup(character: Character, *, attribute: str, fear: int, present: list[Character]) -> PoolSetup:
    """V26 — Lógica or Empatía, +1 die per companion (max +3), −1 per mental
    condition; as many successes needed as the Fear value."""
    if attribute not in FEAR_ATTRIBUTES:
        raise ValidationError(_("La prueba de Miedo se tira con Lógica o con Empatía."), code="attribute")
    refusal = broken_refusal(character)
    if refusal is not None:
        raise ValidationError(refusal, code="attribute")
    sheet = character.vaesen
    label = str(ATTRIBUTE_LABELS[attribute])
    value = sheet.attribute(attribute)
    friends = companions(character, present)
    bonus = min(friends, vaesen.MAX_FEAR_COMPANIONS)
    marked = sheet.conditions()
    penalty = marked.penalty(vaesen.ConditionKind.MENTAL)
    parts: list[tuple[str, int]] = [(label, value)]
    if bonus:
        parts.append((_("Compañeros presentes (%(n)s)") % {"n": friends}, bonus))
    if penalty:
        names = ", ".join(c for c in vaesen.CONDITION_NAMES[vaesen.ConditionKind.MENTAL] if c in marked.mental)
        parts.append((_("Estados: %(names)s") % {"names": names}, -penalty))
    return PoolSetup(
        pool=vaesen.fear_pool(value, friends, penalty),
        breakdown=tuple(parts),
        what=_("%(attribute)s contra el Miedo") % {"attribute": label},
        attribute=attribute,
        needed=fear,
    )


# --- the GM starts a test --------------------------------------------------------------


def fear_start(
    *, scene: Scene, actor, characters: list[Character], fear: int | None, creature: Character | None, against: str
) -> dict[str, Any]:
    """The GM starts a fear test against ``creature`` (its Fear value) or a
    Fear value and what causes it, for the player characters present.
    Nothing is rolled yet; each player answers from the scene."""
    campaign = scene.campaign
    if not campaign_access(actor, campaign).is_gm:
        raise PermissionDenied(_("Solo la dirección inicia pruebas de Miedo."))
    if scene.status == Scene.Status.ARCHIVED:
        raise ValidationError(_("La escena está archivada."))
    if creature is not None:
        if creature.campaign_id != campaign.pk or not creature.is_npc:
            raise ValidationError(_("Esa criatura no es de esta partida."), code="creature")
        if creature.vaesen.fear is None:
            raise ValidationError(
                _("%(name)s no tiene valor de Miedo en su ficha.") % {"name": creature.name}, code="creature"
            )
        fear = creature.vaesen.fear
        against = against or creature.name
    against = " ".join((against or "").split())
    if fear is None:
        raise ValidationError(_("Elige una criatura o indica el valor de Miedo."), code="fear")
    if not 1 <= fear <= MAX_FEAR:
        raise ValidationError(_("El valor de Miedo va de 1 a %(max)s.") % {"max": MAX_FEAR}, code="fear")
    if not against:
        raise ValidationError(_("Indica qué provoca el miedo."), code="against")
    if not characters:
        raise ValidationError(_("Elige al menos un personaje presente."), code="characters")
    for character in characters:
        if character.campaign_id != campaign.pk or character.is_npc or not character.is_in_play(campaign):
            raise ValidationError(
                _("%(name)s no es un personaje jugador aprobado de esta partida.") % {"name": character.name}
            )
    with transaction.atomic():
        locked = state.locked_campaign(campaign)
        item = state.add(
            locked,
            KEY,
            {
                "scene": scene.pk,
                "fear": fear,
                "against": against[:200],
                "characters": [c.pk for c in characters],
                "rolled": {},
                "by": actor.pk,
                "at": timezone.now().isoformat(),
            },
        )
    campaign.game_state = locked.game_state
    return item


def open_tests(scene: Scene) -> list[dict[str, Any]]:
    return state.items(scene.campaign, KEY, scene_id=scene.pk)


def fear_close(*, scene: Scene, actor, test_id: int) -> None:
    """The GM closes an open test (whoever has not rolled no longer does)."""
    if not campaign_access(actor, scene.campaign).is_gm:
        raise PermissionDenied(_("Solo la dirección cierra pruebas de Miedo."))
    with transaction.atomic():
        locked = state.locked_campaign(scene.campaign)
        item = state.find(locked, KEY, test_id, scene_id=scene.pk)
        state.replace(locked, KEY, item, done=True)
    scene.campaign.game_state = locked.game_state


# --- a player answers ------------------------------------------------------------------


def can_answer(access: Access, character: Character) -> bool:
    """The GM rolls for anyone; a player for their own character."""
    return can_play_character(access, character)


def fear_roll(
    *, scene: Scene, actor, test_id: int, character: Character, attribute: str, client_seed: str | None = None
) -> TableRoll:
    """V26 — the character's fear test, once per test: Lógica or Empatía +
    companions − mental conditions, needing the Fear value, through the log.
    Side effects, in one transaction: the signed entry, its table roll
    (kind "fear"), and the open test (closed when everyone has rolled)."""
    campaign = scene.campaign
    if not can_answer(campaign_access(actor, campaign), character):
        raise PermissionDenied(_("Solo la dirección o quien lleva a %(name)s tira por él.") % {"name": character.name})
    with transaction.atomic():
        locked = state.locked_campaign(campaign)
        item = state.find(locked, KEY, test_id, scene_id=scene.pk)
        if character.pk not in item["characters"]:
            raise ValidationError(_("%(name)s no está en esta prueba de Miedo.") % {"name": character.name})
        if str(character.pk) in item["rolled"]:
            raise ValidationError(_("%(name)s ya ha hecho esta prueba de Miedo.") % {"name": character.name})
        present = list(
            Character.objects.select_for_update(of=("self",))
            .filter(pk__in=item["characters"])
            .select_related("vaesen")
            .order_by("pk")
        )
        me = next(c for c in present if c.pk == character.pk)
        setup = fear_setup(me, attribute=attribute, fear=item["fear"], present=present)
        table_roll = table_test(
            campaign=campaign,
            user=actor,
            setup=setup,
            purpose=_("Prueba de Miedo de %(name)s: %(against)s") % {"name": me.name, "against": item["against"]},
            character=me,
            scene=scene,
            client_seed=client_seed,
            kind=FEAR,
            game={"test": FEAR, "fear": item["fear"], "against": item["against"]},
            facts={"fear_test": item["id"]},
        )
        if (
            table_roll.kind != FEAR
            or table_roll.character_id != me.pk
            or table_roll.facts.get("fear_test") != item["id"]
        ):
            raise seed_used()
        item = {**item, "rolled": {**item["rolled"], str(me.pk): table_roll.pk}}
        state.replace(locked, KEY, item, done=len(item["rolled"]) >= len(item["characters"]))
    campaign.game_state = locked.game_state
    return table_roll


# --- accepting a failure (V27) ---------------------------------------------------------


def terror_refusal(table_roll: TableRoll, user, *, is_gm: bool) -> str | None:
    """Why ``user`` may not accept this fear test's failure, or None: a
    failed fear test (pushed or not), once, by its owner or the GM."""
    facts = table_roll.facts or {}
    if table_roll.kind != FEAR:
        return _("Esta tirada no es una prueba de Miedo.")
    if table_roll.owner_id != getattr(user, "pk", None) and not is_gm:
        return _("Solo quien hizo la prueba o la dirección aceptan el fallo.")
    if facts.get("success"):
        return _("La prueba de Miedo se superó: no hay terror que sufrir.")
    if facts.get(TERROR):
        return _("El fallo de esta prueba ya se aceptó.")
    return None


def terror_reader(*, of: str, reaction: str):
    """Signed game fields of the 1d6 rounds Aterrorizado (V27)."""

    def read(dice: list[int]) -> dict[str, Any]:
        return {"system": "vaesen", "test": TERROR, "rounds": dice[0], "reaction": reaction, "of": of}

    return read


def terror_accept(
    *, table_roll: TableRoll, user, is_gm: bool, reaction: str, client_seed: str | None = None
) -> TableRoll:
    """V27 — accept a failed fear test: 1d6 rounds Aterrorizado through the
    log, (Fear − successes) mental conditions on the sheet, and the player's
    reaction stored; when that makes the character Broken, the card asks for
    a mental critical injury (``rolls.services.roll_injury``). Refused with a
    Spanish ``ValidationError``, nothing changed."""
    if reaction not in REACTIONS:
        raise ValidationError(_("Elige una reacción: Huida, Parálisis, Desmayo o Agresión."), code="reaction")
    with transaction.atomic():
        tr = lock_table_roll(table_roll)
        refusal = terror_refusal(tr, user, is_gm=is_gm)
        if refusal is not None:
            raise ValidationError(refusal, code="no_terror")
        character = Character.objects.select_for_update(of=("self",)).select_related("vaesen").get(pk=tr.character_id)
        game = tr.latest.signed_game
        test = signed_test(game, tr.latest.entry["dice"])
        fear = int(game["fear"])
        entry = roll_append(
            campaign=tr.campaign,
            user=user,
            spec=f"1d{vaesen.FACES}",
            purpose=(_("Aterrorizado: %(purpose)s") % {"purpose": tr.latest.purpose})[:200],
            read=terror_reader(of=tr.latest.permalink, reaction=reaction),
            character=character,
            scene=tr.scene,
            post=tr.post,
            client_seed=client_seed,
        )
        outcome = vaesen.fear_outcome(test.successes, fear, FixedDice(list(entry.entry["dice"])))
        sheet = character.vaesen
        suffered = vaesen.suffer(sheet.conditions(), vaesen.ConditionKind.MENTAL, outcome.mental_conditions)
        reason = _("Falla la prueba de Miedo contra %(against)s") % {"against": game.get("against", "")}
        if suffered.taken or suffered.became_broken:
            apply_conditions(character, suffered.conditions, actor=user, reason=reason, post=tr.post, roll=entry)
        terror_set(
            character,
            rounds=outcome.terrified_rounds,
            reaction=reaction,
            actor=user,
            reason=reason,
            roll=entry,
            post=tr.post,
        )
        tr.facts = {
            **tr.facts,
            "can_push": False,
            "tie": False,
            TERROR: {
                "entry": entry.pk,
                "permalink": entry.permalink,
                "rounds": outcome.terrified_rounds,
                "reaction": reaction,
                "conditions": list(suffered.taken),
            },
            # V27 — Broken by the fear: a mental critical injury (the card's button);
            # a push that already broke the character keeps its own.
            "broken": bool(tr.facts.get("broken")) or suffered.became_broken,
        }
        tr.save(update_fields=["facts"])
        return tr
