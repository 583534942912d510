"""Deadlines: the direction gives a scene, a roll request, a combat round or
a reaction a date to answer by (``Deadline``), in the campaign's time zone.

The kinds beyond the scene are registered by the layers above
(``extensions.DeadlineKind``); this module keeps the rows: set or move one,
withdraw it when its target is answered, read the open ones of many targets
at once, and the form field every deadline form uses. It also keeps the
forum's own kind, ``"scene"``, the clock's part (``sweep``: reminders and
the direction's notice, each sent once) and settling a deadline that passed.

Every duration here is absolute: a reminder "one day before" goes out 24
hours before the deadline, even when the clocks change in between.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

from django import forms
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import DateTimeField, Exists, ExpressionWrapper, F, OuterRef, Q
from django.urls import reverse
from django.utils import dateformat, timezone
from django.utils.translation import gettext, ngettext
from django.utils.translation import gettext_lazy as _

from accounts.models import User
from campaigns import extensions, notify
from campaigns.models import (
    Campaign,
    Deadline,
    Membership,
    ModerationAction,
    ModerationLog,
    Notification,
    Post,
    Role,
    Scene,
)
from campaigns.permissions import Access, Standing, can_view_scene

logger = logging.getLogger(__name__)

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
    the direction's notice go out again for the new date). A target whose
    last deadline was settled or withdrawn gets a new one, set now.

    Two first deadlines for the same target at once: the row lock cannot
    hold a row that does not exist yet, so both insert; the second one's
    insert fails on the one-per-target constraint (in a savepoint), and it
    reads the first one's row, locked, and moves it instead."""
    validate_future(due_at, now)
    with transaction.atomic():
        deadline = _existing(kind, target_id)
        if deadline is None:
            deadline = Deadline(campaign=campaign, scene=scene, kind=kind, target_id=target_id, created_by=actor)
            _dated(deadline, due_at, remind_before)
            try:
                with transaction.atomic():
                    deadline.save()
            except IntegrityError:
                deadline = Deadline.objects.select_for_update().get(kind=kind, target_id=target_id)
            else:
                return deadline
        if not deadline.is_open:
            # The target's old deadline was settled or withdrawn: this is a new
            # one, set now (a scene waits for the posts written from now on).
            deadline.created_by = actor
            deadline.created_at = now or timezone.now()
        _dated(deadline, due_at, remind_before)
        deadline.save()
    return deadline


def _existing(kind: str, target_id: int) -> Deadline | None:
    """The target's deadline row, locked, if it has one."""
    return Deadline.objects.select_for_update().filter(kind=kind, target_id=target_id).first()


def _dated(deadline: Deadline, due_at: datetime, remind_before: timedelta) -> None:
    deadline.due_at = due_at
    deadline.remind_before = remind_before
    deadline.reminded_at = deadline.passed_at = deadline.settled_at = deadline.cancelled_at = None
    deadline.settled_by = None
    deadline.settlement = ""


def withdraw(kind: str, target_id: int, now: datetime | None = None) -> int:
    """The target was answered or closed: its open deadline, if any, needs
    nothing more (no reminder, no notice). Returns how many were withdrawn."""
    return Deadline.objects.open().filter(kind=kind, target_id=target_id).update(cancelled_at=now or timezone.now())


# --- the fields every deadline form adds ---------------------------------------------------


def deadline_form_fields(campaign: Campaign, *, required: bool = False) -> dict[str, forms.Field]:
    """The two fields a form adds to give something a deadline: ``plazo``
    (a date and time in the campaign's zone, in the future) and
    ``recordar`` (how long before it the reminder goes out)."""
    zone = campaign_zone(campaign)
    return {
        "plazo": DeadlineField(
            zone=zone,
            required=required,
            validators=[validate_future],
            help_text=_("Fecha y hora en la zona horaria de la partida (%(zone)s).") % {"zone": str(zone)},
        ),
        "recordar": forms.ChoiceField(
            label=_("Recordatorio"),
            choices=REMIND_CHOICES,
            initial=str(int(DEFAULT_REMIND.total_seconds())),
            required=False,
        ),
    }


def deadline_from(cleaned_data: dict) -> tuple[datetime | None, timedelta]:
    """What the fields of ``deadline_form_fields`` hold, once cleaned: the
    deadline (``None``: no deadline) and how long before it to remind."""
    remind = cleaned_data.get("recordar")
    return cleaned_data.get("plazo"), timedelta(seconds=int(remind)) if remind else DEFAULT_REMIND


# --- how a deadline reads ------------------------------------------------------------------


def viewer_zone(user, campaign: Campaign) -> ZoneInfo:
    """The zone a member reads times in: theirs, else the campaign's."""
    own = getattr(user, "time_zone", "") if user is not None else ""
    return ZoneInfo(own) if own else campaign_zone(campaign)


def when_text(moment: datetime, zone: ZoneInfo, *, time_only: bool = False, with_zone: bool = True) -> str:
    """«viernes 4 de diciembre, 20:00 (Europe/Madrid)» in the active language."""
    local = moment.astimezone(zone)
    # Translators: a date format (Django's "date" filter); \d\e is the word "de".
    shape = gettext("H:i") if time_only else gettext("l j \\d\\e F, H:i")
    text = dateformat.format(local, shape)
    return f"{text} ({zone})" if with_zone else text


def _amount(seconds: float) -> tuple[str, int]:
    if seconds >= 86400:
        return "days", int(seconds // 86400)
    if seconds >= 3600:
        return "hours", int(seconds // 3600)
    return "minutes", max(1, int(seconds // 60))


def time_left(due_at: datetime, now: datetime | None = None) -> str:
    """«quedan 2 días», «queda 1 hora», «venció hace 3 horas» (rounded down)."""
    seconds = (due_at - (now or timezone.now())).total_seconds()
    unit, n = _amount(abs(seconds))
    if seconds > 0:
        texts = {
            "days": ngettext("queda %(n)d día", "quedan %(n)d días", n),
            "hours": ngettext("queda %(n)d hora", "quedan %(n)d horas", n),
            "minutes": ngettext("queda %(n)d minuto", "quedan %(n)d minutos", n),
        }
    else:
        texts = {
            "days": ngettext("venció hace %(n)d día", "venció hace %(n)d días", n),
            "hours": ngettext("venció hace %(n)d hora", "venció hace %(n)d horas", n),
            "minutes": ngettext("venció hace %(n)d minuto", "venció hace %(n)d minutos", n),
        }
    return texts[unit] % {"n": n}


def seconds_until_left_changes(deadline: Deadline | None, now: datetime | None = None) -> float | None:
    """Seconds until ``time_left`` (the «quedan…/venció hace…» of
    ``{% deadline_line %}``) reads differently for ``deadline``: how long a
    page showing it may be kept. ``None`` without a deadline.

    Before the deadline the count goes down, so the text changes once the
    remainder within its unit has run out (``remaining % unit``, and a
    second more); after it the count goes up, so it changes when the next
    whole unit is reached (``unit - remaining % unit``; «venció hace 1
    minuto» from the start, so the first change is at two minutes)."""
    if deadline is None:
        return None
    seconds = (deadline.due_at - (now or timezone.now())).total_seconds()
    remaining = abs(seconds)
    unit = 86400 if remaining >= 86400 else 3600 if remaining >= 3600 else 60
    if seconds > 0:
        return remaining % unit + 1
    if remaining < 120:
        return 120 - remaining
    return unit - remaining % unit


def _campaign_of(deadline: Deadline) -> Campaign:
    """The deadline's campaign without a query when it or its scene's is loaded."""
    if not Deadline.campaign.is_cached(deadline) and Deadline.scene.is_cached(deadline):
        scene = deadline.scene
        if scene is not None and Scene.campaign.is_cached(scene) and scene.campaign.pk == deadline.campaign_id:
            return scene.campaign
    return deadline.campaign


def line_parts(deadline: Deadline, user, now: datetime | None = None) -> dict:
    """What ``{% deadline_line %}`` shows: the time in the campaign's zone,
    in the viewer's own when it differs, and the time left (or since)."""
    now = now or timezone.now()
    campaign = _campaign_of(deadline)
    zone = campaign_zone(campaign)
    parts = {"deadline": deadline, "when": when_text(deadline.due_at, zone), "own_when": "", "own_zone": ""}
    own = getattr(user, "time_zone", "") if user is not None and user.is_authenticated else ""
    if own and own != campaign.time_zone:
        own_zone = ZoneInfo(own)
        same_day = deadline.due_at.astimezone(own_zone).date() == deadline.due_at.astimezone(zone).date()
        parts["own_when"] = when_text(deadline.due_at, own_zone, time_only=same_day, with_zone=False)
        parts["own_zone"] = own
    parts["left"] = time_left(deadline.due_at, now)
    parts["passed"] = deadline.due_at <= now
    return parts


# --- the forum's own kind: a scene ---------------------------------------------------------


def scene_players(scene: Scene) -> list:
    """The active players a scene is played by: every one, or the chosen
    members of a split scene (two queries)."""
    players = User.objects.filter(
        memberships__campaign_id=scene.campaign_id,
        memberships__status=Membership.Status.ACTIVE,
        memberships__role=Role.PLAYER,
    )
    if not scene.everyone:
        players = players.filter(pk__in=scene.participants.values("pk"))
    return list(players.order_by("pk"))


def _posted_since(scene_id: int, since: datetime) -> set[int]:
    """Who has written in the scene since ``since``: authors, and the owners
    of the characters someone else wrote for (a takeover answers for them)."""
    rows = Post.objects.filter(scene_id=scene_id, created_at__gte=since).values_list("author_id", "on_behalf_of_id")
    return {user_id for row in rows for user_id in row if user_id}


def _scene_awaited(deadline: Deadline) -> list:
    """The scene's players who have not written in it since the deadline
    was set; nobody once the scene is no longer open."""
    scene = deadline.scene
    if scene.status != Scene.Status.OPEN:
        return []
    posted = _posted_since(scene.pk, deadline.created_at)
    return [user for user in scene_players(scene) if user.pk not in posted]


def _scene_url(deadline: Deadline) -> str:
    return reverse("table:scene-detail", args=[deadline.campaign.slug, deadline.target_id])


def target_urls(found: Iterable[Deadline]) -> dict[int, str]:
    """Where to answer each deadline, by id, for many at once (the
    direction's dashboard): each kind's ``urls`` (a constant number of
    queries per kind), else the deadline's scene (no query: its campaign
    should be loaded)."""
    found = list(found)
    by_kind: dict[str, list[Deadline]] = {}
    for deadline in found:
        by_kind.setdefault(deadline.kind, []).append(deadline)
    urls: dict[int, str] = {}
    for name, group in by_kind.items():
        kind = extensions.deadline_kind(name)
        if kind is not None and kind.urls is not None:
            urls.update(kind.urls(group))
    return {
        deadline.pk: urls.get(deadline.pk)
        or reverse("table:scene-detail", args=[_campaign_of(deadline).slug, deadline.scene_id])
        for deadline in found
    }


CONTINUE = "continue"


def _scene_options(deadline: Deadline, actor) -> list[tuple[str, str]]:
    return [(CONTINUE, gettext("Seguir sin esperar"))]


def _scene_settle(deadline: Deadline, key: str, actor, client_seed: str | None = None) -> str:
    if key != CONTINUE:
        raise ValidationError(gettext("Esa opción no existe para este plazo."), code="option")
    return gettext("La escena «%(scene)s» sigue sin esperar más.") % {"scene": deadline.scene.title}


extensions.provide_deadline_kind(
    extensions.DeadlineKind(
        kind=SCENE,
        label=lambda: gettext("la escena"),
        awaited=_scene_awaited,
        url=_scene_url,
        options=_scene_options,
        settle=_scene_settle,
    )
)


# --- the clock: reminders and the direction's notice, each once ----------------------------


def settle_url(deadline: Deadline) -> str:
    return reverse("campaigns:deadline-settle", args=[deadline.campaign.slug, deadline.pk])


def _about(deadline: Deadline, kind: extensions.DeadlineKind | None) -> dict[str, str]:
    what = kind.label() if kind is not None else deadline.kind
    return {"what": what, "scene": deadline.scene.title, "campaign": deadline.campaign.title}


def _by_zone(users: list, campaign: Campaign) -> dict[ZoneInfo, list]:
    groups: dict[str, list] = {}
    for user in users:
        groups.setdefault(user.time_zone or campaign.time_zone, []).append(user)
    return {ZoneInfo(name): members for name, members in groups.items()}


def _awaited(deadline: Deadline, kind) -> list:
    """Whom ``kind`` awaits for the deadline that may still be told: active
    accounts that direct the campaign or are active members of it (a kind
    names a character's owner, who may have left or been removed; one query
    more)."""
    users = [user for user in kind.awaited(deadline) if user.is_active]
    if not users:
        return []
    campaign = deadline.campaign
    member = Membership.objects.active().filter(campaign=campaign, user=OuterRef("pk"))
    counted = set(
        User.objects.filter(pk__in=[user.pk for user in users])
        .filter(Q(pk=campaign.gm_id) | Exists(member))
        .values_list("pk", flat=True)
    )
    return [user for user in users if user.pk in counted]


def _scene_openers(deadline: Deadline, users: list) -> set[int]:
    """Of ``users`` (``_awaited``: the direction or active members), the ids
    of those who may open the deadline's scene (``can_view_scene``; two
    queries at most)."""
    scene = deadline.scene
    if scene.everyone or not users:
        return {user.pk for user in users}
    directors = notify.gm_ids(deadline.campaign)
    participants = set(scene.participants.values_list("pk", flat=True))
    return {
        user.pk
        for user in users
        if can_view_scene(
            Access(user, deadline.campaign, Standing.GM if user.pk in directors else Standing.PLAYER),
            scene,
            participants,
        )
    }


def _tell_awaited(deadline: Deadline, kind, users: list, sentence) -> int:
    """Notify ``users`` (kind DEADLINE) with ``sentence(zone, named)``, the
    time written in each one's own zone and the scene named only to those who
    may open it (``named``); returns how many notices."""
    openers = _scene_openers(deadline, users)
    sent = 0
    for zone, members in _by_zone(users, deadline.campaign).items():
        for named in (True, False):
            told = [user for user in members if (user.pk in openers) == named]
            if not told:
                continue
            sent += len(
                notify.notify_users(
                    told,
                    campaign=deadline.campaign,
                    kind=Notification.Kind.DEADLINE,
                    url=kind.url(deadline),
                    text=lambda zone=zone, named=named: sentence(zone, named),
                )
            )
    return sent


def _remind(pk: int, now: datetime) -> int:
    with transaction.atomic():
        # The claim: of two clocks running at once, only one updates the row.
        if not Deadline.objects.open().filter(pk=pk, reminded_at__isnull=True).update(reminded_at=now):
            return 0
        deadline = Deadline.objects.select_related("campaign", "scene").get(pk=pk)
        kind = extensions.deadline_kind(deadline.kind)
        users = _awaited(deadline, kind)
        if not users:
            Deadline.objects.filter(pk=pk).update(cancelled_at=now)
            return 0

        def sentence(zone: ZoneInfo, named: bool) -> str:
            values = {"when": when_text(deadline.due_at, zone), **_about(deadline, kind)}
            if named:
                return (
                    gettext("Recuerda: tienes hasta el %(when)s para responder a %(what)s «%(scene)s» (%(campaign)s).")
                    % values
                )
            return gettext("Recuerda: tienes hasta el %(when)s para responder a %(what)s (%(campaign)s).") % values

        return _tell_awaited(deadline, kind, users, sentence)


def _tell_passed(pk: int, now: datetime) -> int:
    with transaction.atomic():
        if not Deadline.objects.open().filter(pk=pk, passed_at__isnull=True).update(passed_at=now):
            return 0
        deadline = Deadline.objects.select_related("campaign", "scene").get(pk=pk)
        kind = extensions.deadline_kind(deadline.kind)
        if not kind.awaited(deadline):
            # Everyone answered (or the target closed) without the layer
            # above withdrawing it: nothing left to settle.
            Deadline.objects.filter(pk=pk).update(cancelled_at=now)
            return 0
        directors = User.objects.filter(pk__in=notify.gm_ids(deadline.campaign), is_active=True).order_by("pk")
        notices = notify.notify_users(
            directors,
            campaign=deadline.campaign,
            kind=Notification.Kind.DEADLINE,
            url=settle_url(deadline),
            text=lambda: (
                gettext("Ha vencido el plazo de %(what)s «%(scene)s» (%(campaign)s). Decide qué hacer.")
                % _about(deadline, kind)
            ),
        )
        return len(notices)


def sweep(now: datetime | None = None) -> int:
    """One round of the clock: the reminders whose time has come (``due_at
    - remind_before``, an absolute duration: "one day before" is 24 hours
    before, whatever the clocks do in between) and the direction's notice of
    the deadlines that passed. Each deadline is claimed by a conditional
    update (``… WHERE reminded_at IS NULL``) in the transaction that writes
    its notifications, so a second round, or two at once, sends nothing
    again; the e-mails go after commit (``notify_users``) and are retried by
    their own task. A deadline whose kind awaits nobody any more is
    withdrawn instead. Returns how many notifications were written."""
    now = now or timezone.now()
    remind_at = ExpressionWrapper(F("due_at") - F("remind_before"), output_field=DateTimeField())
    reminders = (
        Deadline.objects.open()
        .filter(reminded_at__isnull=True, due_at__gt=now)
        .alias(remind_at=remind_at)
        .filter(remind_at__lte=now)
        .order_by("due_at", "pk")
        .values_list("pk", "kind")
    )
    passed = (
        Deadline.objects.open()
        .filter(passed_at__isnull=True, due_at__lte=now)
        .order_by("due_at", "pk")
        .values_list("pk", "kind")
    )
    sent = 0
    for step, rows in ((_remind, list(reminders)), (_tell_passed, list(passed))):
        # A kind no app registers any more (its app was removed) waits as it is.
        for pk in [pk for pk, kind in rows if extensions.deadline_kind(kind) is not None]:
            try:
                sent += step(pk, now)
            except Exception:
                # Rolled back, claim included: the next round tries again.
                logger.exception("The deadline %s could not be handled by %s", pk, step.__name__)
    return sent


# --- settling a deadline that passed -------------------------------------------------------

MORE_TIME = "_more"
WITHDRAW = "_withdraw"


def settle_choices(deadline: Deadline, actor, now: datetime | None = None) -> list[tuple[str, str]]:
    """What the direction may do with a deadline: once it passed, what its
    kind offers, then more time and withdrawing it; before, only moving it
    (more time) or withdrawing it."""
    kind = extensions.deadline_kind(deadline.kind)
    due = deadline.due_at <= (now or timezone.now())
    offered = list(kind.options(deadline, actor)) if kind and due else []
    return [*offered, (MORE_TIME, gettext("Dar más tiempo")), (WITHDRAW, gettext("Retirar el plazo"))]


def _locked(deadline_id: int, now: datetime, *, must_be_due: bool = True) -> Deadline:
    deadline = Deadline.objects.select_for_update(of=("self",)).select_related("campaign", "scene").get(pk=deadline_id)
    if not deadline.is_open:
        raise ValidationError(gettext("Este plazo ya está resuelto o retirado."), code="settled")
    if must_be_due and deadline.due_at > now:
        raise ValidationError(gettext("Este plazo aún no ha vencido."), code="not_due")
    return deadline


def deadline_settle(
    *, deadline: Deadline, key: str, actor, now: datetime | None = None, client_seed: str | None = None
) -> Deadline:
    """Settle a deadline that passed with one of its kind's options (or
    withdraw it: ``WITHDRAW``).

    Side effects, in one transaction under the deadline's row lock: the
    kind carries the option out (a ``ValidationError`` changes nothing),
    ``settled_at/by`` and ``settlement`` are recorded, a moderation log row
    (DEADLINE_SETTLED, the settlement as its reason), and the members it
    awaited are told. A kind whose ``stays_open`` says it still awaits
    someone else (a round with more characters to act) keeps the deadline
    open instead: its ``passed_at`` is cleared, so the clock tells the
    direction again and it settles for the next one. ``client_seed`` is the
    browser seed the direction's page sent, for an option that rolls."""
    now = now or timezone.now()
    with transaction.atomic():
        locked = _locked(deadline.pk, now)
        kind = extensions.deadline_kind(locked.kind)
        if kind is None:
            raise ValidationError(gettext("Este tipo de plazo ya no existe."), code="kind")
        awaited = _awaited(locked, kind)

        def withdrawn(about: dict[str, str]) -> str:
            return gettext("La dirección retiró el plazo de %(what)s «%(scene)s».") % about

        if key == WITHDRAW:
            sentence = withdrawn(_about(locked, kind))
        elif key in {option for option, _label in kind.options(locked, actor)}:
            sentence = str(kind.settle(locked, key, actor, client_seed=client_seed))
        else:
            raise ValidationError(gettext("Elige una de las opciones que se ofrecen."), code="option")
        if key != WITHDRAW and kind.stays_open is not None and kind.stays_open(locked):
            locked.passed_at = None
            locked.save(update_fields=["passed_at"])
        else:
            locked.settled_at = now
            locked.settled_by = actor
            locked.settlement = sentence[: Deadline._meta.get_field("settlement").max_length]
            locked.save(update_fields=["settled_at", "settled_by", "settlement"])
        ModerationLog.objects.create(
            campaign=locked.campaign,
            actor=actor,
            action=ModerationAction.DEADLINE_SETTLED,
            scene=locked.scene,
            reason=sentence,
        )

        def told() -> str:
            # In each member's language: the kind's name too, and the
            # sentence of a withdrawal (a kind's own sentence is recorded
            # once, in the direction's language).
            about = _about(locked, kind)
            settlement = withdrawn(about) if key == WITHDRAW else sentence
            return gettext("La dirección resolvió el plazo de %(what)s «%(scene)s»: %(settlement)s") % {
                **about,
                "settlement": settlement,
            }

        notify.notify_users(
            awaited, campaign=locked.campaign, kind=Notification.Kind.DEADLINE, url=kind.url(locked), text=told
        )
    return locked


def deadline_extend(
    *,
    deadline: Deadline,
    due_at: datetime,
    actor,
    remind_before: timedelta = DEFAULT_REMIND,
    now: datetime | None = None,
) -> Deadline:
    """«Dar más tiempo» to an open deadline, passed or not: a new date
    (``set_deadline``: its reminder and notice go out again), the kind's
    ``moved`` hook (a kind that keeps the date on its own row too), a
    moderation log row saying so, and the members it awaits told the new
    date in their own zone."""
    now = now or timezone.now()
    with transaction.atomic():
        locked = _locked(deadline.pk, now, must_be_due=False)
        moved = set_deadline(
            campaign=locked.campaign,
            scene=locked.scene,
            kind=locked.kind,
            target_id=locked.target_id,
            due_at=due_at,
            actor=actor,
            remind_before=remind_before,
            now=now,
        )
        moved.campaign, moved.scene = locked.campaign, locked.scene
        kind = extensions.deadline_kind(moved.kind)
        if kind is None:
            raise ValidationError(gettext("Este tipo de plazo ya no existe."), code="kind")
        if kind.moved is not None:
            kind.moved(moved)
        zone = campaign_zone(moved.campaign)
        ModerationLog.objects.create(
            campaign=moved.campaign,
            actor=actor,
            action=ModerationAction.DEADLINE_SETTLED,
            scene=moved.scene,
            reason=gettext("Dio más tiempo para %(what)s «%(scene)s»: hasta el %(when)s.")
            % {**_about(moved, kind), "when": when_text(due_at, zone)},
        )
        users = _awaited(moved, kind)

        def sentence(zone: ZoneInfo, named: bool) -> str:
            values = {**_about(moved, kind), "when": when_text(due_at, zone)}
            if named:
                return (
                    gettext(
                        "La dirección te da más tiempo para %(what)s «%(scene)s» (%(campaign)s): hasta el %(when)s."
                    )
                    % values
                )
            return gettext("La dirección te da más tiempo para %(what)s (%(campaign)s): hasta el %(when)s.") % values

        _tell_awaited(moved, kind, users, sentence)
    return moved


def deadline_withdraw(*, deadline: Deadline, actor, now: datetime | None = None) -> Deadline:
    """The direction withdraws an open deadline. One that passed is settled
    as withdrawn (``deadline_settle``). One not yet due is cancelled, in one
    transaction under its row lock, with a moderation log row
    (DEADLINE_SETTLED, «retiró el plazo») and the members it awaited told
    (they may have had its reminder)."""
    now = now or timezone.now()
    with transaction.atomic():
        locked = _locked(deadline.pk, now, must_be_due=False)
        if locked.due_at <= now:
            return deadline_settle(deadline=locked, key=WITHDRAW, actor=actor, now=now)
        kind = extensions.deadline_kind(locked.kind)
        awaited = _awaited(locked, kind) if kind is not None else []
        locked.cancelled_at = now
        locked.save(update_fields=["cancelled_at"])
        ModerationLog.objects.create(
            campaign=locked.campaign,
            actor=actor,
            action=ModerationAction.DEADLINE_SETTLED,
            scene=locked.scene,
            reason=gettext("Retiró el plazo de %(what)s «%(scene)s» antes de que venciera.") % _about(locked, kind),
        )

        def sentence(zone: ZoneInfo, named: bool) -> str:
            if named:
                return gettext("La dirección retiró el plazo de %(what)s «%(scene)s» (%(campaign)s).") % _about(
                    locked, kind
                )
            return gettext("La dirección retiró el plazo de %(what)s (%(campaign)s).") % _about(locked, kind)

        if awaited:
            _tell_awaited(locked, kind, awaited, sentence)
    return locked
