"""Pending negative activations in "whose turn is it" and as deadlines
(issue 17): an aspect activated against a roll waits for the roll's owner to
accept or cancel it (H18, H22, H25) until the campaign's
``activation_deadline_hours`` pass; then the direction settles it as
accepted, which is what the table does when nobody objects (the engine's
rule for an unanswered activation, ``services.settle_negative``).

The activation's own ``deadline`` is that date; the campaign's ``Deadline``
row (kind ``activation``, made with the activation) carries the reminder,
the notice to the direction and the settle page. When the direction gives
more time, the kind's ``moved`` hook moves the activation's date with it,
so the roll's card and ``services.is_overdue`` read the same date.

A narrative element waiting for an answer (H23) belongs to no scene, so it
is neither listed here nor given a campaign deadline.
"""

from __future__ import annotations

from collections.abc import Sequence

from django.core.exceptions import ValidationError
from django.urls import reverse
from django.utils.translation import gettext as _

from campaigns import deadlines, extensions
from campaigns.extensions import Awaited, DeadlineKind
from campaigns.models import Deadline, Post, Scene
from sheets.models import Character
from systems.hitos.activations import services
from systems.hitos.models import Activation

SYSTEM = "hitos"
ACCEPT = services.SETTLE_ACCEPT


def _pending():
    return Activation.objects.filter(kind=Activation.Kind.NEGATIVE, status=Activation.Status.PENDING)


def _is_private(activation: Activation) -> bool:
    """A roll in a whisper, or with a hidden difficulty, or outside any post
    (a secret roll) is the owner's and the direction's only."""
    table_roll = activation.table_roll
    post = table_roll.post
    return post is None or post.recipients != Post.Recipients.ALL or table_roll.difficulty_hidden


def _roll_url(activation: Activation) -> str:
    return activation.table_roll.latest.get_absolute_url()


def waiting(campaigns: Sequence, scene_ids, user_id) -> list[Awaited]:
    """The pending negative activations of the HITOS ``campaigns`` against a
    player's roll, in open scenes: two queries whatever their number."""
    by_id = {campaign.pk: campaign for campaign in campaigns if campaign.system == SYSTEM}
    if not by_id:
        return []
    pending = (
        _pending()
        .filter(
            campaign_id__in=list(by_id),
            table_roll__scene__status=Scene.Status.OPEN,
            target_character__kind=Character.Kind.PC,
        )
        .select_related("table_roll__post", "table_roll__latest", "target_character")
        .order_by("created_at", "pk")
    )
    if scene_ids is not None:
        pending = pending.filter(table_roll__scene_id__in=list(scene_ids))
    if user_id is not None:
        pending = pending.filter(table_roll__owner_id=user_id)
    found = list(pending)
    if not found:
        return []
    due = deadlines.open_for(services.DEADLINE_KIND, [activation.pk for activation in found])
    for deadline in due.values():
        deadline.campaign = by_id[deadline.campaign_id]
    return [
        Awaited(
            user_id=activation.table_roll.owner_id,
            scene_id=activation.table_roll.scene_id,
            kind="activation",
            text=_("Responder a la activación en contra «%(aspect)s» sobre la tirada de %(name)s")
            % {"aspect": activation.aspect_text, "name": activation.target_character.name},
            url=_roll_url(activation),
            character=activation.target_character.name,
            deadline=due.get(activation.pk),
            private=_is_private(activation),
        )
        for activation in found
    ]


def _open_activation(deadline: Deadline) -> Activation | None:
    return (
        _pending()
        .filter(pk=deadline.target_id, campaign_id=deadline.campaign_id)
        .select_related("table_roll__owner", "table_roll__latest", "target_character")
        .first()
    )


def awaited(deadline: Deadline) -> list:
    """The roll's owner, while the activation waits (nobody for an NPC's
    roll: the direction answers those)."""
    activation = _open_activation(deadline)
    if activation is None or activation.target_character is None or activation.target_character.is_npc:
        return []
    return [activation.table_roll.owner]


def url(deadline: Deadline) -> str:
    activation = _open_activation(deadline)
    if activation is None:
        return reverse("table:scene-detail", args=[deadline.campaign.slug, deadline.scene_id])
    return _roll_url(activation)


def urls(found: list[Deadline]) -> dict[int, str]:
    """The rolls of many deadlines' pending activations (one query); a
    deadline whose activation was answered links to its scene."""
    pending = _pending().filter(pk__in=[deadline.target_id for deadline in found])
    permalinks = dict(pending.values_list("pk", "table_roll__latest__permalink"))
    return {
        deadline.pk: reverse("rolls:roll-permalink", args=[permalinks[deadline.target_id]])
        for deadline in found
        if permalinks.get(deadline.target_id)
    }


def moved(deadline: Deadline) -> None:
    """The direction gave more time: the pending activation's own date
    follows (a save, so its roll's card is drawn again)."""
    activation = _pending().filter(pk=deadline.target_id, campaign_id=deadline.campaign_id).first()
    if activation is not None and activation.deadline != deadline.due_at:
        activation.deadline = deadline.due_at
        activation.save(update_fields=["deadline"])


def options(deadline: Deadline, actor) -> list[tuple[str, str]]:
    if _open_activation(deadline) is None:
        return []
    return [(ACCEPT, _("Darla por aceptada: se repite la tirada y el personaje gana el punto (H22)"))]


def settle(deadline: Deadline, key: str, actor, client_seed: str | None = None) -> str:
    if key != ACCEPT:
        raise ValidationError(_("Esa opción no existe para una activación pendiente."), code="option")
    return services.settle_unanswered(deadline=deadline, actor=actor, client_seed=client_seed)


ACTIVATION_KIND = DeadlineKind(
    kind=services.DEADLINE_KIND,
    label=lambda: _("activación en contra"),
    awaited=awaited,
    url=url,
    options=options,
    settle=settle,
    urls=urls,
    moved=moved,
)


def register() -> None:
    extensions.provide_waiting(waiting)
    extensions.provide_deadline_kind(ACTIVATION_KIND)
