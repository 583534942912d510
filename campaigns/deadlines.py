"""Deadlines: the direction gives a scene, a roll request, a combat round or
a reaction a date to answer by (``Deadline``), in the campaign's time zone.

The kinds beyond the scene are registered by the layers above
(``extensions.DeadlineKind``); this module keeps the rows: set or move one,
withdraw it when its target is answered, read the open ones of many targets
at once, and the form field every deadline form uses.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

from django import forms
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from campaigns.models import Campaign, Deadline, Scene

SCENE = "scene"

# How long before a deadline its reminder goes out: the choices of the forms.
REMIND_CHOICES = [
    (str(2 * 3600), _("2 horas antes")),
    (str(12 * 3600), _("12 horas antes")),
    (str(24 * 3600), _("1 día antes")),
    (str(48 * 3600), _("2 días antes")),
]
DEFAULT_REMIND = timedelta(hours=24)


def campaign_zone(campaign: Campaign) -> ZoneInfo:
    return ZoneInfo(campaign.time_zone)


class DeadlineField(forms.DateTimeField):
    """A date and time typed in the campaign's time zone (a browser's
    ``datetime-local`` input), made aware in that zone. A time that does
    not exist there (skipped when the clocks go forward) is refused; one
    that happens twice (when they go back) is taken the first time."""

    widget = forms.DateTimeInput(attrs={"type": "datetime-local"}, format="%Y-%m-%dT%H:%M")
    input_formats = ["%Y-%m-%dT%H:%M", "%Y-%m-%d %H:%M"]

    def __init__(self, *, zone: ZoneInfo, **kwargs):
        self.zone = zone
        kwargs.setdefault("label", _("Plazo"))
        super().__init__(**kwargs)

    def to_python(self, value):
        # Parse as naive local time, then attach the campaign's zone ourselves.
        if isinstance(value, datetime):
            return value
        if value in self.empty_values:
            return None
        for fmt in self.input_formats:
            try:
                naive = datetime.strptime(str(value).strip(), fmt)
            except ValueError:
                continue
            return local_to_aware(naive, self.zone)
        raise ValidationError(_("Escribe una fecha y una hora válidas."), code="invalid")


def local_to_aware(naive: datetime, zone: ZoneInfo) -> datetime:
    """``naive`` read as a wall-clock time in ``zone``. Refuses a time the
    clocks skip; takes the first of a time they repeat (``fold=0``)."""
    aware = naive.replace(tzinfo=zone, fold=0)
    # A skipped time does not survive the round trip through UTC.
    if aware.astimezone(UTC).astimezone(zone).replace(tzinfo=None) != naive:
        raise ValidationError(
            _("Esa hora no existe ese día en %(zone)s (se adelantan los relojes). Elige otra."),
            code="nonexistent",
            params={"zone": str(zone)},
        )
    return aware


def validate_future(due_at: datetime, now: datetime | None = None) -> None:
    if due_at <= (now or timezone.now()):
        raise ValidationError(_("El plazo tiene que ser en el futuro."), code="past")


def open_for(kind: str, target_ids: Iterable[int]) -> dict[int, Deadline]:
    """The open deadlines of these targets of ``kind``, by target id (one query)."""
    ids = list(target_ids)
    if not ids:
        return {}
    return {d.target_id: d for d in Deadline.objects.open().filter(kind=kind, target_id__in=ids)}


def set_deadline(
    *,
    campaign: Campaign,
    scene: Scene,
    kind: str,
    target_id: int,
    due_at: datetime,
    actor,
    remind_before: timedelta = DEFAULT_REMIND,
    now: datetime | None = None,
) -> Deadline:
    """Give the target a deadline, or move the one it has (its reminder and
    the direction's notice go out again for the new date)."""
    validate_future(due_at, now)
    with transaction.atomic():
        deadline = Deadline.objects.select_for_update().filter(kind=kind, target_id=target_id).first()
        if deadline is None:
            deadline = Deadline(campaign=campaign, scene=scene, kind=kind, target_id=target_id, created_by=actor)
        deadline.due_at = due_at
        deadline.remind_before = remind_before
        deadline.reminded_at = deadline.passed_at = deadline.settled_at = deadline.cancelled_at = None
        deadline.settled_by = None
        deadline.settlement = ""
        deadline.save()
    return deadline


def withdraw(kind: str, target_id: int, now: datetime | None = None) -> int:
    """The target was answered or closed: its open deadline, if any, needs
    nothing more (no reminder, no notice). Returns how many were withdrawn."""
    return Deadline.objects.open().filter(kind=kind, target_id=target_id).update(cancelled_at=now or timezone.now())


def sweep(now: datetime | None = None) -> int:
    """(being written)"""
    return 0
