"""Open reactions in "whose turn is it" and as deadlines (issue 17).

An action that names a player's character waits for that character's
reaction (A18) until its player rolls or declines it. Reactions are free and
optional (A14), so once a deadline the direction gave passes, settling it
as «No reacciona» makes up nothing the player did: it is the decline the
player would have pressed, recorded as the direction's.
"""

from __future__ import annotations

from collections.abc import Sequence

from django.core.exceptions import ValidationError
from django.db.models import Exists, F, OuterRef, Q
from django.urls import reverse
from django.utils.translation import gettext as _

from campaigns import deadlines, extensions
from campaigns.extensions import Awaited, DeadlineKind
from campaigns.models import Deadline, Post, Scene, chosen_readers
from rolls.models import RollEntry
from sheets.models import Character
from systems.aventuras.contests import reactions
from systems.aventuras.models import AventurasReaction

SYSTEM = "aventuras"
DECLINE = "decline"


def _readable_by_target() -> Q:
    """The actions the target's player may read (as ``reactions.open_for``
    offers them), as one condition on the reaction whoever the player is:
    not a secret roll of the direction's, in a scene for everyone or chosen
    for the player, in no post or one addressed to everyone, the player's
    own, or one they were chosen for."""
    owner = OuterRef("target__owner_id")
    chosen_scene = Scene.participants.through.objects.filter(scene_id=OuterRef("action__scene_id"), user_id=owner)
    chosen_post = chosen_readers().filter(post_id=OuterRef("action__post_id"), user_id=owner)
    scene_ok = Q(action__scene__isnull=True) | Q(action__scene__everyone=True) | Q(Exists(chosen_scene))
    post_ok = (
        Q(action__post__isnull=True)
        | Q(action__post__recipients=Post.Recipients.ALL)
        | Q(action__post__author_id=F("target__owner_id"))
        | (Q(action__post__recipients=Post.Recipients.CHOSEN) & Q(Exists(chosen_post)))
    )
    secret = Q(action__first__audience=RollEntry.Audience.GM, action__first__reveal__isnull=True)
    return scene_ok & post_ok & ~secret


def _action_url(reaction: AventurasReaction) -> str:
    return reaction.action.latest.get_absolute_url()


def _is_private(reaction: AventurasReaction) -> bool:
    action = reaction.action
    post = action.post
    return (post is not None and post.recipients != Post.Recipients.ALL) or action.difficulty_hidden


def waiting(campaigns: Sequence, scene_ids, user_id) -> list[Awaited]:
    """The open reactions of player characters in the Hora de Aventuras
    ``campaigns``' open scenes: two queries whatever their number."""
    by_id = {campaign.pk: campaign for campaign in campaigns if campaign.system == SYSTEM}
    if not by_id:
        return []
    rows = AventurasReaction.objects.filter(
        _readable_by_target(),
        roll__isnull=True,
        declined_at__isnull=True,
        action__campaign_id__in=list(by_id),
        action__scene__status=Scene.Status.OPEN,
        target__kind=Character.Kind.PC,
    ).exclude(action__character_id=F("target_id"))
    if scene_ids is not None:
        rows = rows.filter(action__scene_id__in=list(scene_ids))
    if user_id is not None:
        rows = rows.filter(target__owner_id=user_id)
    found = list(rows.select_related("target", "action__post", "action__latest", "action__character").order_by("id"))
    if not found:
        return []
    due = deadlines.open_for(reactions.DEADLINE_KIND, [reaction.pk for reaction in found])
    for deadline in due.values():
        deadline.campaign = by_id[deadline.campaign_id]
    return [
        Awaited(
            user_id=reaction.target.owner_id,
            scene_id=reaction.action.scene_id,
            kind="reaction",
            text=_("Reacción de %(target)s a %(actor)s: tirarla o no reaccionar")
            % {
                "target": reaction.target.name,
                "actor": reaction.action.character.name if reaction.action.character else _("la dirección"),
            },
            url=_action_url(reaction),
            character=reaction.target.name,
            deadline=due.get(reaction.pk),
            private=_is_private(reaction),
        )
        for reaction in found
    ]


def _open_reaction(deadline: Deadline) -> AventurasReaction | None:
    reaction = (
        AventurasReaction.objects.select_related("target__owner", "action__latest", "action__campaign")
        .filter(pk=deadline.target_id, action__campaign_id=deadline.campaign_id)
        .first()
    )
    return reaction if reaction is not None and reaction.open else None


def awaited(deadline: Deadline) -> list:
    reaction = _open_reaction(deadline)
    if reaction is None or reaction.target.is_npc:
        return []
    return [reaction.target.owner]


def url(deadline: Deadline) -> str:
    reaction = _open_reaction(deadline)
    if reaction is None:
        return reverse("table:scene-detail", args=[deadline.campaign.slug, deadline.scene_id])
    return _action_url(reaction)


def options(deadline: Deadline, actor) -> list[tuple[str, str]]:
    reaction = _open_reaction(deadline)
    if reaction is None:
        return []
    return [(DECLINE, _("%(name)s no reacciona (A14: las reacciones son opcionales)") % {"name": reaction.target.name})]


def settle(deadline: Deadline, key: str, actor, client_seed: str | None = None) -> str:
    if key != DECLINE:
        raise ValidationError(_("Esa opción no existe para una reacción."), code="option")
    return reactions.decline_unanswered(deadline=deadline, actor=actor)


REACTION_KIND = DeadlineKind(
    kind=reactions.DEADLINE_KIND,
    label=lambda: _("reacción"),
    awaited=awaited,
    url=url,
    options=options,
    settle=settle,
)


def register() -> None:
    extensions.provide_waiting(waiting)
    extensions.provide_deadline_kind(REACTION_KIND)
