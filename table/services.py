"""Posts with rolls: the forum's post and the table's rolls in one transaction."""

from __future__ import annotations

from collections.abc import Sequence

from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.utils.translation import gettext as _

from campaigns import services as forum
from campaigns.models import Post, Scene
from campaigns.permissions import Access
from table import post_rolls
from table import takeover as takeovers
from table.post_rolls import PlannedRoll
from table.roll_requests import services as roll_requests


@transaction.atomic
def post_with_rolls_create(
    *,
    access: Access,
    scene: Scene,
    voice: str,
    body: str,
    note: str = "",
    character=None,
    npc_name: str = "",
    recipients: str = Post.Recipients.ALL,
    chosen=(),
    quote_of: Post | None = None,
    rolls: Sequence[PlannedRoll] = (),
    answers: int | None = None,
    answer_seed: str | None = None,
    submission_key: str | None = None,
    takeover_id: int | None = None,
) -> Post:
    """Publish a post with its rolls (``rolls``, or the one roll answering the
    GM's request ``answers``), all in one transaction.

    ``submission_key`` (made when the form was shown) makes a repeated
    submission of the same form return the post it already made, with no new
    roll. Side effects: the post, its table rolls through the signed log, the
    request marked as answered, the author's read marker, notifications.

    ``takeover_id``: a takeover by which the author carries ``character`` for its absent owner
    (``table.takeover``): the post names the owner, and it and its rolls are
    written in the sheet's history.
    """
    speaking_as = character if voice == Post.Voice.CHARACTER else None
    takeover = None
    if takeover_id is not None:
        if speaking_as is None:
            raise ValidationError(_("Para escribir por su dueño, escribe como el personaje."), code="takeover_voice")
        takeover = takeovers.lock_current(takeover_id=takeover_id, access=access, scene=scene, character=character)
        takeover.character = character
    else:
        forum.post_allowed(access=access, scene=scene, voice=voice, character=character)
    if rolls and not access.is_gm:
        if voice != Post.Voice.CHARACTER:
            raise ValidationError(_("Para tirar, escribe como tu personaje."), code="roll_voice")
        if any(plan.character is None or plan.character.pk != character.pk for plan in rolls):
            raise PermissionDenied(_("Solo puedes tirar con la ficha de tu personaje."))
    if answers is not None and rolls:
        raise ValidationError(
            _("Al contestar a una petición de la dirección, el mensaje lleva solo esa tirada."), code="request_rolls"
        )
    if takeover is not None:
        post, created = takeovers.post_insert(
            access=access,
            takeover=takeover,
            scene=scene,
            body=body,
            note=note,
            recipients=recipients,
            chosen=chosen,
            quote_of=quote_of,
            submission_key=submission_key,
        )
    else:
        post, created = forum.post_insert(
            access=access,
            scene=scene,
            voice=voice,
            body=body,
            note=note,
            character=character,
            npc_name=npc_name,
            recipients=recipients,
            chosen=chosen,
            quote_of=quote_of,
            submission_key=submission_key,
        )
    if not created:
        return post
    request = None
    if answers is not None:
        # Locked after the post's insert, so a repeated form stops at the
        # submission key and never reaches "already answered".
        request = roll_requests.request_lock_open(request_id=answers, character=speaking_as, scene=scene)
        rolls = [post_rolls.request_plan(request, client_seed=answer_seed)]
    made = post_rolls.post_rolls_create(post=post, user=access.user, planned=rolls)
    if request is not None:
        roll_requests.request_answered(request=request, table_roll=made[0])
    if takeover is not None:
        takeovers.post_recorded(takeover=takeover, post=post, table_rolls=made)
    forum.post_published(post, access=access)
    return post
