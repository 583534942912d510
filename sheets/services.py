"""Writes to the character core that every game system shares: the history
log, the notes, the review cycle (draft → submitted → approved or returned).

A system's own sheet services (``systems/<key>/sheet/services.py``) call these
for the shared part and record their own changes with ``sheet_log``.
"""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from sheets import notify
from sheets.models import Character, SheetEvent


def sheet_log(
    character: Character | None,
    campaign,
    actor,
    kind,
    summary="",
    *,
    reason="",
    post=None,
    roll=None,
    before=None,
    after=None,
) -> SheetEvent:
    """Record one change to a sheet (or, with no character, to all the
    campaign's sheets): who, when, what, why, the post or roll behind it."""
    return SheetEvent.objects.create(
        campaign=campaign,
        character=character,
        actor=actor,
        kind=kind,
        summary=summary[:500],
        reason=reason[:500],
        post=post,
        roll=roll,
        before=before or {},
        after=after or {},
    )


def sheet_update_notes(*, character: Character, actor, values: dict[str, str]) -> Character:
    with transaction.atomic():
        for name, value in values.items():
            setattr(character, name, value)
        character.full_clean()
        character.save(update_fields=[*values.keys(), "updated_at"])
        sheet_log(character, character.campaign, actor, SheetEvent.Kind.NOTES, ", ".join(sorted(values)))
    return character


@transaction.atomic
def sheet_submit(*, character: Character, actor) -> Character:
    """Draft or returned → submitted; the GM sees it among the pending sheets."""
    if not character.is_editable_by_owner:
        raise ValidationError(_("Esta ficha ya está enviada o aprobada."))
    character.status = Character.Status.SUBMITTED
    character.submitted_at = timezone.now()
    character.save(update_fields=["status", "submitted_at", "updated_at"])
    sheet_log(character, character.campaign, actor, SheetEvent.Kind.SUBMITTED, character.name)
    notify.sheet_submitted(character)
    return character


def require_submitted(character: Character) -> None:
    if character.status != Character.Status.SUBMITTED:
        raise ValidationError(_("Solo se revisan las fichas enviadas."))


@transaction.atomic
def sheet_review(*, character: Character, actor, approve: bool, comment: str = "") -> Character:
    """Submitted → approved (the owner can no longer edit it, except notes) or
    returned with the GM's comment (the owner edits and submits again). The
    owner is told. A system with its own conditions for approving checks them
    first and then calls this."""
    # Lock the row and read its status again: two reviews cannot both pass.
    require_submitted(Character.objects.select_for_update(of=("self",)).only("status").get(pk=character.pk))
    character.status = Character.Status.APPROVED if approve else Character.Status.RETURNED
    character.review_comment = comment
    character.reviewed_at = timezone.now()
    character.reviewed_by = actor
    character.save(update_fields=["status", "review_comment", "reviewed_at", "reviewed_by", "updated_at"])
    kind = SheetEvent.Kind.APPROVED if approve else SheetEvent.Kind.RETURNED
    sheet_log(character, character.campaign, actor, kind, character.name, reason=comment)
    # The owner hears about the GM's decision (an action on their content).
    notify.sheet_reviewed(character, approved=approve, comment=comment)
    return character
