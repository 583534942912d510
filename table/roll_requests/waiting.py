"""What the GM's roll requests add to "whose turn is it" and to deadlines
(issue 17): an open request waits for the player of the character it asks;
the direction may give it a date to answer by, and once that passes close it
unanswered.

Nothing here rolls for the character: an answer is the player's post (or,
while someone plays an absent player's character, theirs), never made up by
a deadline.

Every game system with roll requests registers these (``register``) from
its ``AppConfig.ready()``; registering twice adds nothing.
"""

from __future__ import annotations

from collections.abc import Sequence

from django.core.exceptions import ValidationError
from django.urls import reverse
from django.utils.translation import gettext as _

from campaigns import deadlines, extensions
from campaigns.extensions import Awaited, DeadlineKind
from campaigns.models import Deadline, Scene
from table.models import RollRequest
from table.roll_requests import services

CLOSE = "close"


def _scene_url(slug: str, scene_id: int) -> str:
    return reverse("table:scene-detail", args=[slug, scene_id]) + "#escribir"


def request_text(request: RollRequest) -> str:
    return _("Tirada de %(name)s pedida por la dirección: %(purpose)s") % {
        "name": request.character.name,
        "purpose": request.purpose,
    }


def waiting(campaigns: Sequence, scene_ids, user_id) -> list[Awaited]:
    """The open requests of ``campaigns`` (in the open scenes ``scene_ids``,
    every open scene for None), to the characters ``user_id`` plays (anyone's
    for None): two queries whatever their number. A request with a hidden
    difficulty is private to its player and the direction; the other members
    never read a request's purpose (it may give a secret away)."""
    by_id = {campaign.pk: campaign for campaign in campaigns}
    if not by_id:
        return []
    requests = RollRequest.objects.filter(
        campaign_id__in=list(by_id),
        answered_at__isnull=True,
        cancelled_at__isnull=True,
        scene__status=Scene.Status.OPEN,
    )
    if scene_ids is not None:
        requests = requests.filter(scene_id__in=list(scene_ids))
    if user_id is not None:
        requests = requests.filter(character__owner_id=user_id)
    found = list(requests.select_related("character").order_by("created_at", "pk"))
    if not found:
        return []
    due = deadlines.open_for(services.DEADLINE_KIND, [request.pk for request in found])
    for deadline in due.values():
        deadline.campaign = by_id[deadline.campaign_id]
    return [
        Awaited(
            user_id=request.character.owner_id,
            scene_id=request.scene_id,
            kind="request",
            text=request_text(request),
            url=_scene_url(by_id[request.campaign_id].slug, request.scene_id),
            character=request.character.name,
            deadline=due.get(request.pk),
            private=request.difficulty_hidden,
            public_text=_("Tirada pedida por la dirección"),
        )
        for request in found
    ]


def _open_request(deadline: Deadline) -> RollRequest | None:
    request = (
        RollRequest.objects.select_related("character__owner")
        .filter(pk=deadline.target_id, campaign_id=deadline.campaign_id)
        .first()
    )
    return request if request is not None and request.is_open else None


def awaited(deadline: Deadline) -> list:
    """The player of the character asked, while the request is open."""
    request = _open_request(deadline)
    return [request.character.owner] if request is not None else []


def url(deadline: Deadline) -> str:
    return _scene_url(deadline.campaign.slug, deadline.scene_id)


def options(deadline: Deadline, actor) -> list[tuple[str, str]]:
    """Once passed, the direction may close the request unanswered. Nothing
    rolls for the character: an answer is a post with the character's words,
    which a deadline cannot write; whoever takes the character over (with
    its owner's leave) answers the request with a post of their own."""
    if _open_request(deadline) is None:
        return []
    return [(CLOSE, _("Cerrar sin respuesta"))]


def settle(deadline: Deadline, key: str, actor, client_seed: str | None = None) -> str:
    if key != CLOSE:
        raise ValidationError(_("Esa opción no existe para una petición de tirada."), code="option")
    return services.request_close_unanswered(deadline=deadline, actor=actor)


REQUEST_KIND = DeadlineKind(
    kind=services.DEADLINE_KIND,
    label=lambda: _("petición de tirada"),
    awaited=awaited,
    url=url,
    options=options,
    settle=settle,
)


def register() -> None:
    """Called from ``TableConfig.ready()`` (idempotent)."""
    extensions.provide_waiting(waiting)
    extensions.provide_deadline_kind(REQUEST_KIND)
