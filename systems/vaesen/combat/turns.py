"""Whose turn it is in a Vaesen combat, and the deadline the direction may
give it (issue 17).

The combat knows whose turn it is (``VaesenCombat.acting``, read by
``services.current``, V17). A player's character on its turn is waited for.
Once the turn's deadline passes, the direction may let the turn pass with
the character doing nothing: V18 gives a character two actions a turn and
obliges it to none, so passing the turn (``services.next_turn``, what the
«Siguiente turno» button does) invents nothing. It is refused while an
action waits for its reaction, as the button is.
"""

from __future__ import annotations

from collections.abc import Sequence

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils.translation import gettext as _

from campaigns import deadlines, extensions, fragments
from campaigns.extensions import Awaited, DeadlineKind
from campaigns.models import Deadline, Scene
from campaigns.permissions import Access, campaign_access
from systems.vaesen.combat import services
from systems.vaesen.models import VaesenCombat, VaesenCombatant
from table import combat_status

SYSTEM = "vaesen"
DEADLINE_KIND = services.TURN_DEADLINE
PASS = "pass"


def turn_of(combat: VaesenCombat, combatants: list[VaesenCombatant]) -> VaesenCombatant | None:
    """The player character whose turn it is, or None (an NPC's turn, or
    before the initiative)."""
    acting = services.current(combat, combatants)
    if acting is None or acting.character.is_npc:
        return None
    return acting


def waiting(campaigns: Sequence, scene_ids, user_id) -> list[Awaited]:
    """The open combats of the Vaesen ``campaigns`` whose turn is a player
    character's, with the turn's deadline: two queries whatever their number."""
    by_id = {campaign.pk: campaign for campaign in campaigns if campaign.system == SYSTEM}
    if not by_id:
        return []
    rows = VaesenCombatant.objects.filter(
        combat__campaign_id__in=list(by_id), combat__ended_at__isnull=True, combat__scene__status=Scene.Status.OPEN
    )
    if scene_ids is not None:
        rows = rows.filter(combat__scene_id__in=list(scene_ids))
    by_combat: dict[int, list[VaesenCombatant]] = {}
    for combatant in rows.select_related("character", "combat").order_by("combat_id", "order", "id"):
        combatant.combat.campaign = by_id[combatant.combat.campaign_id]
        by_combat.setdefault(combatant.combat_id, []).append(combatant)
    turns = {}
    for combat_id, combatants in by_combat.items():
        turn = turn_of(combatants[0].combat, combatants)
        if turn is not None and (user_id is None or turn.character.owner_id == user_id):
            turns[combat_id] = turn
    return combat_status.turns_awaited(turns, deadline_kind=DEADLINE_KIND, url=services.combat_url)


def turn_deadline_set(*, combat: VaesenCombat, access: Access, due_at, remind_before) -> Deadline:
    """The direction gives the current turn a date to answer by (or moves it)."""
    services._require_gm(access)
    services._require_open(combat)
    combatants = list(combat.combatants.select_related("character").order_by("order", "id"))
    if turn_of(combat, combatants) is None:
        raise ValidationError(_("No es el turno de ningún jugador: no hace falta un plazo."), code="nobody")
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


def _turn(deadline: Deadline) -> VaesenCombatant | None:
    combat = (
        VaesenCombat.objects.select_related("campaign", "scene")
        .filter(pk=deadline.target_id, campaign_id=deadline.campaign_id, ended_at__isnull=True)
        .first()
    )
    if combat is None:
        return None
    combatants = list(combat.combatants.select_related("character__owner").order_by("order", "id"))
    for combatant in combatants:
        combatant.combat = combat
    return turn_of(combat, combatants)


def awaited(deadline: Deadline) -> list:
    turn = _turn(deadline)
    return [turn.character.owner] if turn is not None else []


def url(deadline: Deadline) -> str:
    turn = _turn(deadline)
    if turn is None:
        return deadline.scene.get_absolute_url()
    return services.combat_url(turn.combat)


def options(deadline: Deadline, actor) -> list[tuple[str, str]]:
    turn = _turn(deadline)
    if turn is None:
        return []
    return [(PASS, _("%(name)s no hace nada este turno: pasa el turno") % {"name": turn.character.name})]


def settle(deadline: Deadline, key: str, actor, client_seed: str | None = None) -> str:
    turn = _turn(deadline)
    if key != PASS or turn is None:
        raise ValidationError(_("El combate ya no espera a ese personaje: elige otra opción."), code="option")
    access = campaign_access(actor, turn.combat.campaign)
    with transaction.atomic():
        services.next_turn(combat=turn.combat, access=access)
        # Passing the turn withdraws its deadline; this one is being settled, not withdrawn.
        Deadline.objects.filter(pk=deadline.pk).update(cancelled_at=None)
    return _(
        "%(actor)s: %(name)s no hace nada en el asalto %(round)s y pasa el turno (venció el plazo sin respuesta)."
    ) % {
        "actor": actor.public_name,
        "name": turn.character.name,
        "round": turn.combat.round,
    }


TURN_KIND = DeadlineKind(
    kind=DEADLINE_KIND,
    label=lambda: _("turno de combate"),
    awaited=awaited,
    url=url,
    options=options,
    settle=settle,
)


def register() -> None:
    extensions.provide_waiting(waiting)
    extensions.provide_deadline_kind(TURN_KIND)
