"""Absences: a member says they will be away from a campaign for some days.

The day is the campaign's (``Campaign.time_zone``): an absence "until the
12th" lasts until midnight of the 12th where the campaign is played.

While an absence that holds notifications has started and its return has not
been noticed (``returned_at``), the member's notifications of that campaign
are still written (the in-site list) but not e-mailed, at once or in the
daily digest (``campaigns.notify.held_absences``). The return is noticed
once (``notice_return``): when the clock finds an absence whose last day has
passed (``notice_returns``), when the member says «Ya he vuelto», or when
they cancel an absence that had started. Noticing it claims the absence with
a conditional UPDATE (two runs never both notice it), welcomes the member
in the site, tells the direction, and, after commit, e-mails the member one
"while you were away" message with the held notifications
(``notify.send_return_digest``), which a mail server failure leaves to be
tried again. What it held (``notify.held_notifications``) is what was
written from the first day of the absence, in the campaign's time zone,
until the return, and that the member's e-mail choice would have sent
(``gm_only``: the direction's posts and what concerns them personally); a
member who wants no e-mail is held nothing and welcomed without a count.
The welcome is written in every language of the site unless it tells what
others did in their name: those lines are made once, in the member's
language, so the welcome is then kept in that language only.
"""

from __future__ import annotations

from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Exists, F, OuterRef, Q
from django.urls import reverse
from django.utils import formats, timezone, translation
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from accounts.models import User
from campaigns import extensions, fragments, notify
from campaigns.models import Absence, Campaign, Membership, Notification


def _a_year_after(day: date) -> date:
    """The same day a year later (29 February: 1 March). An absence lasts at
    most a year: it ends before this day."""
    try:
        return day.replace(year=day.year + 1)
    except ValueError:
        return date(day.year + 1, 3, 1)


def campaign_today(campaign: Campaign, now: datetime | None = None) -> date:
    """Today's date where the campaign is played."""
    return timezone.localtime(now or timezone.now(), ZoneInfo(campaign.time_zone)).date()


def _in_campaign():
    """Absences of people still in their campaign: its GM or an active member."""
    member = Membership.objects.active().filter(campaign=OuterRef("campaign"), user=OuterRef("user"))
    return Q(user=F("campaign__gm")) | Exists(member)


def away_now(campaign: Campaign, now: datetime | None = None) -> dict[int, Absence]:
    """The members away today, by user id, with the absence that covers
    today and its user (one query). An absence whose return was noticed
    («Ya he vuelto») no longer counts."""
    today = campaign_today(campaign, now)
    member = Membership.objects.active().filter(campaign=campaign, user=OuterRef("user"))
    absences = (
        Absence.objects.on(today)
        .filter(campaign=campaign, returned_at__isnull=True)
        .filter(Q(user_id=campaign.gm_id) | Exists(member))
        .select_related("user")
        .order_by("ends_on", "id")
    )
    return {absence.user_id: absence for absence in absences}


def away_for_request(request, campaign: Campaign) -> dict[int, Absence]:
    """``away_now`` read once per request, however many parts of the page ask."""
    memo = request.__dict__.setdefault("_absences_away_now", {})
    if campaign.pk not in memo:
        memo[campaign.pk] = away_now(campaign)
    return memo[campaign.pk]


def away_user_ids(campaign: Campaign, now: datetime | None = None) -> set[int]:
    """The ids of the members away today (for the badges beside their names)."""
    return set(away_now(campaign, now))


def effective_consent(membership) -> str:
    """What the member allows while away in this campaign
    (``accounts.TakeoverConsent``): the campaign's choice, else the profile's."""
    return membership.takeover_consent or membership.user.takeover_consent


# --- reading ------------------------------------------------------------------------


def own_absences(campaign: Campaign, user, now: datetime | None = None) -> list[Absence]:
    """The user's absences in the campaign that are not over: current and
    future, not cancelled, return not noticed (one query)."""
    today = campaign_today(campaign, now)
    return list(
        Absence.objects.live()
        .filter(campaign=campaign, user=user, ends_on__gte=today, returned_at__isnull=True)
        .order_by("starts_on", "id")
    )


def own_absence(campaign: Campaign, user, absence_id: int, now: datetime | None = None) -> Absence | None:
    """One of ``own_absences`` by id, or None."""
    today = campaign_today(campaign, now)
    return (
        Absence.objects.live()
        .filter(campaign=campaign, user=user, ends_on__gte=today, returned_at__isnull=True, pk=absence_id)
        .first()
    )


def is_current(absence: Absence, today: date) -> bool:
    return absence.starts_on <= today <= absence.ends_on and absence.returned_at is None


def direction_view(campaign: Campaign, now: datetime | None = None) -> dict[str, list[Absence]]:
    """What the GM's dashboard shows, in one query: who is away now, who of
    them comes back in the next 7 days, who came back in the last 7 days and
    who will be away soon."""
    today = campaign_today(campaign, now)
    rows = list(
        Absence.objects.live()
        .filter(campaign=campaign, ends_on__gte=today - timedelta(days=7))
        .filter(_in_campaign())
        .select_related("user")
        .order_by("ends_on", "starts_on", "id")
    )
    away = [a for a in rows if is_current(a, today)]
    # Back the day after the last day of the absence, or when they said so.
    back = [a for a in rows if a.ends_on < today or (a.returned_at is not None and a.starts_on <= today)]
    return {
        "away": away,
        "returning": [a for a in away if a.ends_on <= today + timedelta(days=6)],
        "back": sorted(back, key=lambda a: (a.ends_on, a.pk), reverse=True),
        "upcoming": sorted(
            (a for a in rows if a.starts_on > today and a.returned_at is None), key=lambda a: (a.starts_on, a.pk)
        ),
    }


def user_away_everywhere(user, now: datetime | None = None) -> list[Absence]:
    """The user's absences that cover today in each campaign they are in (one query)."""
    now = now or timezone.now()
    utc_today = now.astimezone(ZoneInfo("UTC")).date()
    rows = (
        Absence.objects.live()
        .filter(user=user, returned_at__isnull=True, ends_on__gte=utc_today - timedelta(days=1))
        .filter(starts_on__lte=utc_today + timedelta(days=1))
        .filter(_in_campaign())
        .select_related("campaign")
        .order_by("ends_on", "id")
    )
    return [a for a in rows if is_current(a, campaign_today(a.campaign, now))]


# --- checks -------------------------------------------------------------------------


def check_dates(
    *,
    campaign: Campaign,
    user,
    starts_on: date,
    ends_on: date,
    exclude: Absence | None = None,
    now: datetime | None = None,
) -> None:
    """Refuse, in Spanish, dates an absence cannot have: the end before the
    start or already past, longer than a year, or overlapping another of the
    user's live absences in the campaign. ``exclude``: the absence being
    changed; once it has started its first day cannot move (what it held is
    counted from that day, and the takeovers it allows are running).

    The overlap is only safe against another request of the same member at
    the same moment when the caller holds ``lock_member`` in its transaction."""
    today = campaign_today(campaign, now)
    errors = []
    if exclude is not None and exclude.starts_on <= today and starts_on != exclude.starts_on:
        errors.append(
            ValidationError(
                _("Esta ausencia ya empezó: no puedes cambiar el día de salida (el %(start)s)."),
                code="started",
                params={"start": formats.date_format(exclude.starts_on, "SHORT_DATE_FORMAT")},
            )
        )
    if ends_on < starts_on:
        errors.append(ValidationError(_("La vuelta no puede ser antes de la salida."), code="order"))
    if ends_on < today:
        errors.append(ValidationError(_("La fecha de vuelta ya ha pasado."), code="past"))
    if ends_on >= _a_year_after(starts_on):
        errors.append(ValidationError(_("Una ausencia dura como mucho un año."), code="too_long"))
    if errors:
        raise ValidationError(errors)
    clash = (
        Absence.objects.live()
        .filter(campaign=campaign, user=user, returned_at__isnull=True)
        .filter(starts_on__lte=ends_on, ends_on__gte=starts_on)
        .exclude(pk=exclude.pk if exclude is not None else None)
        .order_by("starts_on")
        .first()
    )
    if clash is not None:
        raise ValidationError(
            _("Ya tienes una ausencia en esas fechas (del %(start)s al %(end)s): cámbiala o anúlala."),
            code="overlap",
            params={
                "start": formats.date_format(clash.starts_on, "SHORT_DATE_FORMAT"),
                "end": formats.date_format(clash.ends_on, "SHORT_DATE_FORMAT"),
            },
        )


# --- changes ------------------------------------------------------------------------


def _moved(campaign_id: int) -> None:
    # The cached campaign page shows who is away beside their name.
    fragments.changed(fragments.campaign_scope(campaign_id))


def _direction(campaign: Campaign, *, but) -> list[User]:
    return list(
        User.objects.filter(pk__in=notify.gm_ids(campaign) - {but.pk}, is_active=True).order_by("pk"),
    )


def absences_url(campaign: Campaign) -> str:
    return reverse("campaigns:absences", args=[campaign.slug])


def absentees_url(campaign: Campaign) -> str:
    return reverse("campaigns:absentees", args=[campaign.slug])


def lock_member(campaign: Campaign, user) -> None:
    """Lock the row that stands for ``user`` in ``campaign`` until the end of
    the caller's transaction: their membership, or the campaign for its GM
    (who has none). Two requests of the same member at the same moment then
    check their absences' overlap one after the other (on PostgreSQL; SQLite
    writes one transaction at a time anyway). Refuses someone who is no
    longer in the campaign."""
    if user.pk == campaign.gm_id:
        Campaign.objects.select_for_update().filter(pk=campaign.pk).values_list("pk").first()
        return
    locked = (
        Membership.objects.active().select_for_update().filter(campaign=campaign, user=user).values_list("pk").first()
    )
    if locked is None:
        raise ValidationError(_("Ya no eres miembro de esta partida."), code="not_member")


def absence_create(
    *,
    campaign: Campaign,
    user,
    starts_on: date,
    ends_on: date,
    note: str = "",
    hold_notifications: bool = True,
    now: datetime | None = None,
) -> Absence:
    """Announce an absence. Side effects: the GM and co-GMs (but the user)
    are told; the campaign's cached pages move."""
    with transaction.atomic():
        lock_member(campaign, user)
        check_dates(campaign=campaign, user=user, starts_on=starts_on, ends_on=ends_on, now=now)
        absence = Absence(
            campaign=campaign,
            user=user,
            starts_on=starts_on,
            ends_on=ends_on,
            note=note,
            hold_notifications=hold_notifications,
        )
        absence.full_clean()
        absence.save()
        values = {
            "name": user.public_name,
            "campaign": campaign.title,
            "start": starts_on,
            "end": ends_on,
            "note": note,
        }

        def text() -> str:
            found = {
                **values,
                "start": formats.date_format(starts_on, "MONTH_DAY_FORMAT"),
                "end": formats.date_format(ends_on, "MONTH_DAY_FORMAT"),
            }
            message = _("%(name)s estará ausente de «%(campaign)s» del %(start)s al %(end)s.") % found
            if note:
                message = _("%(message)s Nota: %(note)s") % {"message": message, "note": note}
            return message

        notify.notify_users(
            _direction(campaign, but=user),
            campaign=campaign,
            kind=Notification.Kind.ABSENCE,
            url=absentees_url(campaign),
            text=text,
        )
        _moved(campaign.pk)
    return absence


def absence_update(
    *,
    absence: Absence,
    starts_on: date,
    ends_on: date,
    note: str,
    hold_notifications: bool,
    now: datetime | None = None,
) -> Absence:
    """Change the dates, the note or the holding of one's absence. Once it
    has started its first day cannot move (``check_dates``). Holding turned
    off while away sends at once, in one e-mail after commit, what it had
    held (``release_held``). Refuses an absence that ended or was cancelled
    meanwhile."""
    campaign = absence.campaign
    with transaction.atomic():
        lock_member(campaign, absence.user)
        # As it is now, under the lock: another request may have changed it.
        current = Absence.objects.select_for_update().get(pk=absence.pk)
        if current.cancelled_at is not None or current.returned_at is not None:
            raise ValidationError(_("Esta ausencia ya ha terminado o se ha anulado."), code="over")
        absence.starts_on = current.starts_on
        was_holding = current.hold_notifications
        check_dates(
            campaign=campaign,
            user=absence.user,
            starts_on=starts_on,
            ends_on=ends_on,
            exclude=absence,
            now=now,
        )
        absence.starts_on = starts_on
        absence.ends_on = ends_on
        absence.note = note
        absence.hold_notifications = hold_notifications
        absence.full_clean()
        absence.save(update_fields=["starts_on", "ends_on", "note", "hold_notifications"])
        if was_holding and not hold_notifications and starts_on <= campaign_today(campaign, now):
            release_held(absence)
        _moved(absence.campaign_id)
    return absence


def release_held(absence: Absence) -> int:
    """The member stopped holding their notifications while away: tell them
    in the site and, after commit, e-mail what the absence had held in one
    message, the way a return does (``notify.send_return_digest``, with this
    notice in the welcome's place). Nothing when nothing was held. Returns
    how many notifications it releases."""
    campaign = absence.campaign
    user = absence.user
    held = notify.held_notifications(absence).count()
    if not held:
        return 0

    def text() -> str:
        return ngettext(
            "Ya no guardas los avisos de «%(campaign)s»: te enviamos por correo el %(n)s que se guardó.",
            "Ya no guardas los avisos de «%(campaign)s»: te enviamos por correo los %(n)s que se guardaron.",
            held,
        ) % {"campaign": campaign.title, "n": held}

    notice = notify.notify_users(
        [user],
        campaign=campaign,
        kind=Notification.Kind.ABSENCE,
        url=absences_url(campaign),
        text=text,
        mail=False,
    )[0]
    absence_id, notice_id = absence.pk, notice.pk
    transaction.on_commit(lambda: notify.send_return_digest.enqueue(absence_id, notice_id, []), robust=True)
    return held


def absence_cancel(*, absence: Absence, now: datetime | None = None) -> bool:
    """Withdraw an absence. One that had started counts as a return: what it
    held goes out at once (``notice_return``). Returns whether the return
    was noticed."""
    now = now or timezone.now()
    with transaction.atomic():
        started = absence.starts_on <= campaign_today(absence.campaign, now)
        noticed = notice_return(absence, now=now) if started else False
        Absence.objects.filter(pk=absence.pk).update(cancelled_at=now)
        absence.cancelled_at = now
        _moved(absence.campaign_id)
    return noticed


def absence_return(*, absence: Absence, now: datetime | None = None) -> bool:
    """The member is back before the end of a current absence: it ends today
    (in the campaign's time zone) and the return is noticed now. Returns
    whether it was (False: another run noticed it first)."""
    now = now or timezone.now()
    today = campaign_today(absence.campaign, now)
    with transaction.atomic():
        if absence.ends_on > today:
            absence.ends_on = max(today, absence.starts_on)
            absence.save(update_fields=["ends_on"])
        noticed = notice_return(absence, now=now)
        _moved(absence.campaign_id)
    return noticed


def consent_set(*, membership: Membership, consent: str) -> None:
    """What the member allows while away in this campaign ("": their profile's)."""
    membership.takeover_consent = consent
    membership.full_clean(validate_unique=False, validate_constraints=False)
    membership.save(update_fields=["takeover_consent"])


# --- the return ---------------------------------------------------------------------


def notice_return(absence: Absence, *, now: datetime | None = None) -> bool:
    """Notice that the member is back, once: claim the absence (a conditional
    UPDATE: of two runs at once, only one changes the row), welcome them in
    the site with how many notifications wait and what others did in their
    name (``extensions.member_returned``), tell the GM and co-GMs, and, after
    commit, e-mail the member the held notifications in one message
    (``notify.send_return_digest``). Returns whether this run noticed it."""
    now = now or timezone.now()
    with transaction.atomic():
        if not Absence.objects.filter(pk=absence.pk, returned_at__isnull=True).update(returned_at=now):
            return False
        absence.returned_at = now
        _moved(absence.campaign_id)
        campaign = Campaign.objects.select_related("gm").get(pk=absence.campaign_id)
        user = User.objects.get(pk=absence.user_id)
        absence.campaign, absence.user = campaign, user
        # Held for an e-mail on return only when the member wants e-mail at all.
        holding = absence.hold_notifications and notify.wants_any_mail(user)
        held = notify.held_notifications(absence).count() if holding else 0
        language = notify.user_language(user)
        # What the layers above did in their name. The hooks mark what they
        # tell as told, so they run once, in the member's language.
        with translation.override(language):
            lines = [str(line) for line in extensions.member_returned(campaign, user)]

        def welcome() -> str:
            if not holding:
                message = _("Bienvenido de vuelta a «%(campaign)s».") % {"campaign": campaign.title}
            else:
                message = ngettext(
                    "Bienvenido de vuelta a «%(campaign)s»: %(n)s aviso mientras estabas fuera.",
                    "Bienvenido de vuelta a «%(campaign)s»: %(n)s avisos mientras estabas fuera.",
                    held,
                ) % {"campaign": campaign.title, "n": held}
            if lines:
                message = _("%(message)s En tu nombre: %(lines)s") % {"message": message, "lines": " ".join(lines)}
            return message

        # The welcome goes in the "while you were away" e-mail, not in one of
        # its own. With lines about what was done in their name, which exist
        # only in the member's language, it is kept in that one language
        # (``translated=False``; ``notify_users`` writes it in the member's
        # language) rather than mix two languages in the other texts.
        welcomed = notify.notify_users(
            [user],
            campaign=campaign,
            kind=Notification.Kind.ABSENCE,
            url=campaign.get_absolute_url(),
            text=welcome,
            translated=not lines,
            mail=not holding,
        )

        def back() -> str:
            return _("%(name)s ha vuelto a «%(campaign)s».") % {"name": user.public_name, "campaign": campaign.title}

        notify.notify_users(
            _direction(campaign, but=user),
            campaign=campaign,
            kind=Notification.Kind.ABSENCE,
            url=campaign.get_absolute_url(),
            text=back,
        )
        if holding:
            welcome_id = welcomed[0].pk
            transaction.on_commit(
                lambda: notify.send_return_digest.enqueue(absence.pk, welcome_id, lines),
                robust=True,
            )
    return True


def notice_returns(now: datetime | None = None) -> int:
    """Notice every absence whose last day has passed where its campaign is
    played and whose return was not noticed yet (the clock runs this every
    five minutes); returns how many returns it noticed."""
    now = now or timezone.now()
    # No time zone is more than a day ahead of UTC: a candidate's last day is
    # at most UTC's today.
    utc_today = now.astimezone(ZoneInfo("UTC")).date()
    candidates = (
        Absence.objects.live()
        .filter(returned_at__isnull=True, ends_on__lte=utc_today)
        # Someone who left the campaign is not welcomed back to it.
        .filter(_in_campaign())
        .select_related("campaign")
        .order_by("ends_on", "id")
    )
    noticed = 0
    for absence in candidates:
        if absence.ends_on < campaign_today(absence.campaign, now) and notice_return(absence, now=now):
            noticed += 1
    return noticed
