"""The reactions a Vaesen combat waits for, in "whose turn is it" and as
deadlines (issue 17).

An action aimed at a player's character (an attack, a grapple, an attempt
to break free from the character's hold) is rolled only once the target's
player has declared a reaction or none (V18: a reaction is declared before
the action's result is known); until then the combat waits for that player
(«Siguiente turno» is refused while an action waits). The direction may give
that reaction a deadline from the combat page. Once it passes, settling it
as «Sin reacción» invents nothing: V18 makes a reaction something a
character may do, never something it must, so it is the answer the player
would have pressed, recorded as the direction's (the action's
``reaction_by``, the deadline's ``settled_by`` and the moderation log).

An attempt to flee names no target: any enemy may try to stop it, and
without one the direction answers it; nobody in particular is waited for.
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
from sheets.models import Character
from systems.vaesen.combat import services
from systems.vaesen.models import VaesenAction

SYSTEM = "vaesen"
DEADLINE_KIND = services.REACTION_DEADLINE
NONE = VaesenAction.Reaction.NONE.value


def _awaiting_a_player():
    """The actions of open combats in open scenes still waiting for the
    reaction of a player's character."""
    return VaesenAction.objects.filter(
        resolved_at__isnull=True,
        combat__ended_at__isnull=True,
        combat__scene__status=Scene.Status.OPEN,
        target__character__kind=Character.Kind.PC,
    )


def awaits_a_player(action: VaesenAction) -> bool:
    """Whether ``action`` (with its target loaded) waits for a player's reaction."""
    return action.pending and action.target is not None and not action.target.character.is_npc


def action_url(action: VaesenAction) -> str:
    return f"{services.combat_url(action.combat)}#accion-{action.pk}"


def text(action: VaesenAction) -> str:
    return _("Reacción de %(target)s a «%(kind)s» de %(actor)s: declararla (o ninguna)") % {
        "target": action.target.character.name,
        "kind": action.get_kind_display(),
        "actor": action.actor.character.name,
    }


def waiting(campaigns: Sequence, scene_ids, user_id) -> list[Awaited]:
    """The actions of the Vaesen ``campaigns`` waiting for a player
    character's reaction, with the reaction's deadline: two queries whatever
    their number. Not private: the combat page shows every action to whoever
    may read the scene, and the lists show only the scenes the reader may read."""
    by_id = {campaign.pk: campaign for campaign in campaigns if campaign.system == SYSTEM}
    if not by_id:
        return []
    rows = _awaiting_a_player().filter(combat__campaign_id__in=list(by_id))
    if scene_ids is not None:
        rows = rows.filter(combat__scene_id__in=list(scene_ids))
    if user_id is not None:
        rows = rows.filter(target__character__owner_id=user_id)
    found = list(rows.select_related("combat", "actor__character", "target__character").order_by("created_at", "id"))
    if not found:
        return []
    for action in found:
        action.combat.campaign = by_id[action.combat.campaign_id]
    due = deadlines.open_for(DEADLINE_KIND, [action.pk for action in found])
    for deadline in due.values():
        deadline.campaign = by_id[deadline.campaign_id]
    return [
        Awaited(
            user_id=action.target.character.owner_id,
            scene_id=action.combat.scene_id,
            kind="reaction",
            text=text(action),
            url=action_url(action),
            character=action.target.character.name,
            deadline=due.get(action.pk),
        )
        for action in found
    ]


def reaction_deadline_set(*, action: VaesenAction, access: Access, due_at, remind_before) -> Deadline:
    """The direction gives the reaction ``action`` waits for a date to
    answer by (or moves it). Side effects: the deadline row (target: the
    action); the combat page changes. Refused while the action waits for no
    player (an NPC's reaction is the direction's own)."""
    services._require_gm(access)
    with transaction.atomic():
        # The combat's row, then the action's: an answer at the same time waits for this.
        combat = services._lock(action.combat)
        row = (
            VaesenAction.objects.select_for_update(of=("self",))
            .select_related("actor__character", "target__character")
            .filter(pk=action.pk, combat=combat)
            .first()
        )
        if row is None or not awaits_a_player(row):
            raise ValidationError(
                _("Esta acción no espera la reacción de ningún jugador: no hace falta un plazo."), code="nobody"
            )
        deadline = deadlines.set_deadline(
            campaign=combat.campaign,
            scene=combat.scene,
            kind=DEADLINE_KIND,
            target_id=row.pk,
            due_at=due_at,
            actor=access.user,
            remind_before=remind_before,
        )
    fragments.changed(fragments.campaign_scope(combat.campaign_id))
    return deadline


def _open_action(deadline: Deadline) -> VaesenAction | None:
    """The action the deadline is for, while it waits for a player's reaction."""
    return (
        _awaiting_a_player()
        .select_related("combat__campaign", "combat__scene", "actor__character", "target__character__owner")
        .filter(pk=deadline.target_id, combat__campaign_id=deadline.campaign_id)
        .first()
    )


def awaited(deadline: Deadline) -> list:
    action = _open_action(deadline)
    return [action.target.character.owner] if action is not None else []


def url(deadline: Deadline) -> str:
    action = _open_action(deadline)
    if action is None:
        return deadline.scene.get_absolute_url()
    return action_url(action)


def options(deadline: Deadline, actor) -> list[tuple[str, str]]:
    action = _open_action(deadline)
    if action is None:
        return []
    return [
        (
            NONE,
            _("%(name)s no reacciona (V18: las reacciones son opcionales); se tira la acción")
            % {"name": action.target.character.name},
        )
    ]


def settle(deadline: Deadline, key: str, actor, client_seed: str | None = None) -> str:
    """«Sin reacción», as the direction: the action is rolled and settled
    (``services.react``) with ``client_seed``, the direction's browser seed
    (None without JavaScript: the server's), inside the caller's transaction."""
    action = _open_action(deadline)
    if key != NONE or action is None:
        raise ValidationError(_("Esa acción ya no espera ninguna reacción: elige otra opción."), code="option")
    access = campaign_access(actor, action.combat.campaign)
    with transaction.atomic():
        answered = services.react(action=action, access=access, reaction=NONE, client_seed=client_seed)
        # Answering withdraws the reaction's deadline; this one is being settled, not withdrawn.
        Deadline.objects.filter(pk=deadline.pk).update(cancelled_at=None)
    return _(
        "%(who)s: %(target)s no reacciona a «%(kind)s» de %(actor)s (venció el plazo sin respuesta). %(outcome)s"
    ) % {
        "who": actor.public_name,
        "target": action.target.character.name,
        "kind": action.get_kind_display(),
        "actor": action.actor.character.name,
        "outcome": answered.outcome,
    }


REACTION_KIND = DeadlineKind(
    kind=DEADLINE_KIND,
    label=lambda: _("reacción en combate"),
    awaited=awaited,
    url=url,
    options=options,
    settle=settle,
)


def register() -> None:
    extensions.provide_waiting(waiting)
    extensions.provide_deadline_kind(REACTION_KIND)
