"""Whose turn it is in a HITOS combat, and the deadline the direction may
give a round (issue 17).

The combat keeps no "current turn": it keeps the acting order (H40, H41) and
the round each combatant last acted in (``acted_round``). The turn is read
from those: the first player character in the order that has not acted in
the current round, is not holding its action (``delaying``) and is still in
the fight. The non-player characters' turns are the direction's, and nobody
waits for them.

Once a round's deadline passes, the direction may, for the character waited
for, do what the rules let a character do without acting: hold its action
(H41, «Retrasa su acción») or spend the round defending (H43, «Se dedica a
defenderse», +4 Defensa). Both are the tracker's own actions, recorded in
the moderation log with who settled it and when. Settling acts for one
character, the first waited for; while ``turn_of`` still finds another
player to wait for in that round, the deadline stays open (``stays_open``):
its ``passed_at`` is cleared, so the clock tells the direction again at its
next round and it settles for the next character. The deadline closes when
nobody is waited for (the tracker's action withdraws it) or with the last
settlement.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from django.core.exceptions import ValidationError
from django.db import transaction
from django.urls import reverse
from django.utils.translation import gettext as _

from campaigns import deadlines, extensions, fragments
from campaigns.extensions import Awaited, DeadlineKind
from campaigns.models import Deadline, Scene
from campaigns.permissions import Access, campaign_access
from systems.hitos.combat import services
from systems.hitos.models import Combat, Combatant
from table import combat_status

SYSTEM = "hitos"
DEADLINE_KIND = services.ROUND_DEADLINE
DELAY = "delay"
DEFEND = "defend"


def turn_of(combat: Combat, combatants: Iterable[Combatant]) -> Combatant | None:
    """The player character whose turn it is among ``combat``'s
    ``combatants`` (in acting order), or None when no player is waited for."""
    for combatant in combatants:
        if combatant.out_of_combat or combatant.delaying or combatant.acted_round == combat.round:
            continue
        if not combatant.character.is_npc:
            return combatant
    return None


def _open_combatants(**filters):
    return (
        Combatant.objects.filter(combat__ended_at__isnull=True, combat__scene__status=Scene.Status.OPEN, **filters)
        .select_related("character", "combat__campaign")
        .order_by("combat_id", "order", "id")
    )


def _turns(combatants: Sequence[Combatant]) -> dict[int, Combatant]:
    """By combat id, the combatant waited for."""
    by_combat: dict[int, list[Combatant]] = {}
    for combatant in combatants:
        by_combat.setdefault(combatant.combat_id, []).append(combatant)
    turns = {combat_id: turn_of(group[0].combat, group) for combat_id, group in by_combat.items()}
    return {combat_id: combatant for combat_id, combatant in turns.items() if combatant is not None}


def waiting(campaigns: Sequence, scene_ids, user_id) -> list[Awaited]:
    """The open combats of the HITOS ``campaigns`` waiting for a player's
    character, with the round's deadline: two queries whatever their number."""
    ids = [campaign.pk for campaign in campaigns if campaign.system == SYSTEM]
    if not ids:
        return []
    combatants = _open_combatants(combat__campaign_id__in=ids)
    if scene_ids is not None:
        combatants = combatants.filter(combat__scene_id__in=list(scene_ids))
    turns = _turns(list(combatants))
    if user_id is not None:
        turns = {cid: c for cid, c in turns.items() if c.character.owner_id == user_id}
    return combat_status.turns_awaited(turns, deadline_kind=DEADLINE_KIND, url=services.combat_url)


# --- the round's deadline ------------------------------------------------------------


def round_deadline_set(*, combat: Combat, access: Access, due_at, remind_before) -> Deadline:
    """The direction gives the combat's current round a date to answer by
    (or moves it). Side effects: the deadline row; the combat page changes."""
    services._require_gm(access)
    services._require_open(combat)
    combatants = combat.combatants.select_related("character").order_by("order", "id")
    if turn_of(combat, combatants) is None:
        raise ValidationError(_("No se espera a ningún jugador en este asalto: no hace falta un plazo."), code="nobody")
    deadline = deadlines.set_deadline(
        campaign=combat.campaign,
        scene=combat.scene,
        kind=DEADLINE_KIND,
        target_id=combat.pk,
        due_at=due_at,
        actor=access.user,
        remind_before=remind_before,
    )
    fragments.changed(fragments.campaign_scope(combat.campaign_id))
    return deadline


def _combat(deadline: Deadline) -> Combat | None:
    return (
        Combat.objects.select_related("campaign", "scene")
        .filter(pk=deadline.target_id, campaign_id=deadline.campaign_id, ended_at__isnull=True)
        .first()
    )


def _awaited_combatants(deadline: Deadline) -> list[Combatant]:
    combat = _combat(deadline)
    if combat is None:
        return []
    combatants = list(combat.combatants.select_related("character__owner").order_by("order", "id"))
    for combatant in combatants:
        combatant.combat = combat
    turn = turn_of(combat, combatants)
    return [turn] if turn is not None else []


def awaited(deadline: Deadline) -> list:
    return [combatant.character.owner for combatant in _awaited_combatants(deadline)]


def url(deadline: Deadline) -> str:
    combat = _combat(deadline)
    if combat is None:
        return deadline.scene.get_absolute_url()
    return services.combat_url(combat)


def urls(found: list[Deadline]) -> dict[int, str]:
    """The combat pages of many rounds' deadlines (one query); an ended
    combat's deadline links to its scene."""
    scenes = dict(
        Combat.objects.filter(pk__in=[deadline.target_id for deadline in found], ended_at__isnull=True).values_list(
            "pk", "scene_id"
        )
    )
    return {
        deadline.pk: reverse("hitos:combat", args=[deadline.campaign.slug, scenes[deadline.target_id]])
        for deadline in found
        if deadline.target_id in scenes
    }


def stays_open(deadline: Deadline) -> bool:
    """After settling for one character: another player is still waited
    for in the round."""
    return bool(_awaited_combatants(deadline))


def options(deadline: Deadline, actor) -> list[tuple[str, str]]:
    found = []
    for combatant in _awaited_combatants(deadline):
        name = combatant.character.name
        found.append((f"{DELAY}:{combatant.pk}", _("%(name)s retrasa su acción (H41)") % {"name": name}))
        found.append(
            (f"{DEFEND}:{combatant.pk}", _("%(name)s se dedica a defenderse (H43, +4 Defensa)") % {"name": name})
        )
    return found


def settle(deadline: Deadline, key: str, actor, client_seed: str | None = None) -> str:
    """Carry out one option (inside the caller's transaction)."""
    action, _sep, combatant_id = key.partition(":")
    chosen = {str(c.pk): c for c in _awaited_combatants(deadline)}.get(combatant_id)
    if action not in (DELAY, DEFEND) or chosen is None:
        raise ValidationError(_("Ese personaje ya no es a quien espera el combate: elige otra opción."), code="option")
    access = campaign_access(actor, chosen.combat.campaign)
    values = {"name": chosen.character.name, "actor": actor.public_name, "round": chosen.combat.round}
    with transaction.atomic():
        if action == DELAY:
            services.combatant_delay(combatant=chosen, access=access)
            sentence = _(
                "%(actor)s: %(name)s retrasa su acción en el asalto %(round)s (venció el plazo sin respuesta)."
            )
        else:
            services.combatant_set(
                combatant=chosen,
                access=access,
                all_out_defence=True,
                defenceless=chosen.defenceless,
                out_of_combat=chosen.out_of_combat,
            )
            # Defending is the character's action this round: no longer unprepared (H38).
            services.combatant_act(combatant=chosen, access=access)
            sentence = _(
                "%(actor)s: %(name)s se dedica a defenderse en el asalto %(round)s (venció el plazo sin respuesta)."
            )
        # The tracker's action withdraws the round's deadline once nobody is
        # waited for; this one is being settled, not withdrawn.
        Deadline.objects.filter(pk=deadline.pk).update(cancelled_at=None)
    return sentence % values


ROUND_KIND = DeadlineKind(
    kind=DEADLINE_KIND,
    label=lambda: _("asalto de combate"),
    awaited=awaited,
    url=url,
    options=options,
    settle=settle,
    urls=urls,
    stays_open=stays_open,
)


def register() -> None:
    extensions.provide_waiting(waiting)
    extensions.provide_deadline_kind(ROUND_KIND)
