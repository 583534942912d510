"""GM roll requests: the GM asks a character for a roll; the player's next
post as that character answers it with exactly one roll.

The request fixes what is rolled (what the campaign's game asks for, the
difficulty and whether it is hidden): the answer takes none of it from the
player's form.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from campaigns import deadlines, versions
from campaigns.models import Deadline, Scene
from campaigns.permissions import Access
from sheets.models import Character
from table.models import RollRequest, TableRoll
from table.post_rolls import system_of
from table.roll_requests import notify

# The kind of ``campaigns.models.Deadline`` a roll request is given.
DEADLINE_KIND = "request"


def _asked_owners(scene: Scene) -> frozenset[int]:
    """Who plays the characters the scene's open requests ask, kept under
    the scene's version (a request made, answered or cancelled moves it):
    most pages have none to show, and then ask nothing more."""

    def owners() -> frozenset[int]:
        asked = RollRequest.objects.filter(scene=scene, answered_at__isnull=True, cancelled_at__isnull=True)
        return frozenset(asked.values_list("character__owner_id", flat=True))

    return versions.scene_fact(scene.pk, "asked-owners", owners)


def with_deadlines(requests: list[RollRequest], scene: Scene) -> list[RollRequest]:
    """The requests, each with its open ``deadline`` (None without one): one
    query when there are any. Setting or withdrawing a deadline happens in
    the same transaction as a request made, answered or cancelled, which
    moves the scene's version the pages keep these under."""
    found = deadlines.open_for(DEADLINE_KIND, [request.pk for request in requests])
    # ``{% deadline_line %}`` reads the campaign: the scene's when it is loaded, not a query.
    campaign = scene.campaign if Scene.campaign.is_cached(scene) else None
    for request in requests:
        request.deadline = found.get(request.pk)
        if request.deadline is not None and campaign is not None:
            request.deadline.campaign = campaign
    return requests


def open_requests(*, scene: Scene, user) -> list[RollRequest]:
    """The open requests of ``scene`` to the characters ``user`` plays, with
    their deadlines."""
    if not user.is_authenticated or user.pk not in _asked_owners(scene):
        return []
    return with_deadlines(
        list(
            RollRequest.objects.filter(
                scene=scene, character__owner=user, answered_at__isnull=True, cancelled_at__isnull=True
            ).select_related("character")
        ),
        scene,
    )


def scene_requests(*, scene: Scene) -> list[RollRequest]:
    """Every open request of the scene, for the GM's list, with their deadlines."""
    if not _asked_owners(scene):
        return []
    return with_deadlines(
        list(
            RollRequest.objects.filter(scene=scene, answered_at__isnull=True, cancelled_at__isnull=True).select_related(
                "character__owner"
            )
        ),
        scene,
    )


@transaction.atomic
def request_create(
    *,
    access: Access,
    scene: Scene,
    character: Character,
    purpose: str,
    difficulty_hidden: bool = False,
    due_at: datetime | None = None,
    remind_before: timedelta = deadlines.DEFAULT_REMIND,
    **fields,
) -> RollRequest:
    """The GM asks ``character`` for a roll; ``fields`` are what the
    campaign's game fixes of it (``GameSystem.request_fields``); ``due_at``:
    the date to answer by, if the GM gives one (reminded ``remind_before``).
    Side effects: the request row, its deadline and a notification to the
    character's player."""
    if not access.is_gm:
        raise PermissionDenied(_("Solo la dirección puede pedir tiradas."))
    if scene.campaign_id != access.campaign.pk or character.campaign_id != access.campaign.pk:
        raise ValidationError(_("Ese personaje no es de esta partida."))
    if character.is_npc or character.status != Character.Status.APPROVED:
        raise ValidationError(_("Solo se piden tiradas a personajes de jugador aprobados."))
    request = RollRequest(
        campaign=access.campaign,
        scene=scene,
        character=character,
        requested_by=access.user,
        difficulty_hidden=difficulty_hidden,
        purpose=" ".join(purpose.split()),
        **fields,
    )
    # The sheet must have what is asked: the same check the answer will make.
    system_of(access.campaign).request_plan(request)
    request.full_clean(exclude=["answer"])
    request.save()
    if due_at is not None:
        deadlines.set_deadline(
            campaign=access.campaign,
            scene=scene,
            kind=DEADLINE_KIND,
            target_id=request.pk,
            due_at=due_at,
            actor=access.user,
            remind_before=remind_before,
        )
    notify.roll_requested(request)
    return request


@transaction.atomic
def request_cancel(*, access: Access, request: RollRequest) -> RollRequest:
    if not access.is_gm:
        raise PermissionDenied(_("Solo la dirección puede anular peticiones de tirada."))
    locked = RollRequest.objects.select_for_update().get(pk=request.pk)
    if not locked.is_open:
        raise ValidationError(_("Esta petición ya está contestada o anulada."))
    locked.cancelled_at = timezone.now()
    locked.save(update_fields=["cancelled_at"])
    deadlines.withdraw(DEADLINE_KIND, locked.pk, now=locked.cancelled_at)
    return locked


def request_close_unanswered(*, deadline: Deadline, actor) -> str:
    """The direction closes a request whose deadline passed with no answer
    (inside the caller's transaction, which records the deadline as settled
    by ``actor``). Nothing is rolled for the character: the request is
    only closed. Returns the sentence recorded on the deadline."""
    locked = (
        RollRequest.objects.select_for_update(of=("self",))
        .select_related("character")
        .filter(pk=deadline.target_id, campaign_id=deadline.campaign_id)
        .first()
    )
    if locked is None or not locked.is_open:
        raise ValidationError(_("Esta petición ya está contestada o anulada."), code="closed")
    locked.cancelled_at = timezone.now()
    locked.save(update_fields=["cancelled_at"])
    return _("%(actor)s cerró sin respuesta la petición de tirada a %(name)s («%(purpose)s»): venció el plazo.") % {
        "actor": actor.public_name,
        "name": locked.character.name,
        "purpose": locked.purpose,
    }


def request_lock_open(*, request_id: int, character: Character | None, scene=None) -> RollRequest:
    """The request, locked until the transaction ends, if it is still open and
    asked of ``character`` (in ``scene``, when given); a ``ValidationError``
    otherwise (answering twice is refused here). Call inside
    ``transaction.atomic``."""
    request = (
        RollRequest.objects.select_for_update(of=("self",))
        .select_related("character", "scene")
        .filter(pk=request_id)
        .first()
    )
    if request is None or character is None or request.character_id != character.pk:
        raise ValidationError(_("Esa petición de tirada no es para este personaje."), code="request_other")
    if scene is not None and request.scene_id != scene.pk:
        raise ValidationError(_("Esa petición de tirada se contesta en su escena."), code="request_scene")
    if request.answered_at is not None:
        raise ValidationError(_("Esta petición de tirada ya está contestada."), code="request_answered")
    if request.cancelled_at is not None:
        raise ValidationError(_("La dirección ha anulado esta petición de tirada."), code="request_cancelled")
    return request


def request_answered(*, request: RollRequest, table_roll: TableRoll) -> RollRequest:
    """Mark the locked request as answered by ``table_roll``."""
    request.answer = table_roll
    request.answered_at = timezone.now()
    request.save(update_fields=["answer", "answered_at"])
    deadlines.withdraw(DEADLINE_KIND, request.pk, now=request.answered_at)
    return request
