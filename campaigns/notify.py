"""Notifications: the in-site list and the e-mails each user asked for.

The services call these functions inside their transaction. A new post's
notifications are written by a background task (``post_fan_out``) enqueued in
that transaction, so the author does not wait for one row per member and the
task exists only if the post does; the other notifications, a handful of rows,
are written at once. E-mails are background tasks enqueued after the
transaction commits (``send_notification_emails``), so a rolled-back post
never mails anyone and a slow or silent mail server never holds a request.
Texts are written in every language of the site (``Notification.texts``;
``text`` keeps the recipient's language at the time, Spanish unless they
chose otherwise) and stored as plain text: the list shows the reader's
language of the moment, the e-mails and the digest the recipient's, and
templates escape the texts when they show them.

E-mail preferences (``User.email_notifications``):

- ``immediate``: every notification is e-mailed at once;
- ``gm_only``: posts are e-mailed at once only when the GM or a co-GM wrote
  them; applications, reports and moderation at once; nothing goes to the
  digest;
- ``digest``: nothing now, the ``send_digest`` command collects them;
- ``never``: no e-mail at all.

Every notification and digest e-mail says it was sent by a machine
(``Auto-Submitted``, RFC 3834), carries a Message-ID in the site's own domain
and a one-click unsubscribe (``List-Unsubscribe`` and
``List-Unsubscribe-Post``, RFC 8058) whose link is also in the text: a signed
token naming the user, which ``campaigns.unsubscribe`` accepts without a
log-in and which sets the preference to ``never``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from datetime import datetime, time, timedelta
from email.headerregistry import HeaderRegistry, UnstructuredHeader
from email.utils import make_msgid
from urllib.parse import urlsplit
from zoneinfo import ZoneInfo

from django.conf import settings
from django.core import signing
from django.core.mail import EmailMessage, mailers
from django.db import transaction
from django.db.models import Exists, F, OuterRef, Q
from django.tasks import task
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone, translation
from django.utils.text import Truncator
from django.utils.translation import gettext as _

from accounts.models import User
from campaigns import daily, extensions, waiting
from campaigns.models import (
    Absence,
    Application,
    Campaign,
    Membership,
    Notification,
    Post,
    PostReport,
    Role,
    Visibility,
    chosen_readers,
)
from campaigns.permissions import campaign_access, can_read_post

logger = logging.getLogger(__name__)

_TEXT_LENGTH = Notification._meta.get_field("text").max_length
_URL_LENGTH = Notification._meta.get_field("url").max_length


def site_url(path: str) -> str:
    """The absolute address of a site path, for e-mails and feeds."""
    return f"{settings.SITE_URL.rstrip('/')}{path}"


def user_language(user) -> str:
    return user.language or settings.LANGUAGE_CODE


def log_heads_for(pairs: Iterable[tuple[int, int]]) -> dict[tuple[int, int], tuple[int, str]]:
    """The head ``(seq, entry hash)`` of the roll log of each ``(user id,
    campaign id)`` pair whose user may read that log (a public campaign's,
    or one they direct or belong to), for the e-mails to print: a reader
    who keeps them can tell later if the log lost its last entries. Three
    queries at most, whatever the number of pairs."""
    pairs = set(pairs)
    heads = extensions.log_heads([campaign_id for _user_id, campaign_id in pairs])
    if not heads:
        return {}
    rows = Campaign.objects.filter(pk__in=list(heads)).values_list("pk", "gm_id", "visibility")
    campaigns = {pk: (gm_id, visibility) for pk, gm_id, visibility in rows}
    members = set(
        Membership.objects.active()
        .filter(campaign_id__in=list(heads), user_id__in={user_id for user_id, _campaign_id in pairs})
        .values_list("user_id", "campaign_id")
    )
    found = {}
    for user_id, campaign_id in pairs:
        if campaign_id not in heads or campaign_id not in campaigns:
            continue
        gm_id, visibility = campaigns[campaign_id]
        if visibility == Visibility.PUBLIC or gm_id == user_id or (user_id, campaign_id) in members:
            found[user_id, campaign_id] = heads[campaign_id]
    return found


def log_head_line(campaign: Campaign, head: tuple[int, str] | None) -> str:
    """«Registro de tiradas de «X»: entrada n.º 42, cabeza 0123456789abcdef»
    (the first 16 hex digits of the head), in the active language; "" without a head."""
    if head is None:
        return ""
    seq, head_hash = head
    return _("Registro de tiradas de «%(campaign)s»: entrada n.º %(seq)s, cabeza %(head)s") % {
        "campaign": campaign.title,
        "seq": seq,
        "head": head_hash[:16],
    }


def _short(text: str) -> str:
    return Truncator(" ".join(str(text).split())).chars(_TEXT_LENGTH)


def _wants_mail_now(user, *, kind: str, from_gm: bool) -> bool:
    choice = user.email_notifications
    Choice = User.EmailChoice
    if not user.is_active or not user.email or choice == Choice.NEVER or choice == Choice.DIGEST:
        return False
    if choice == Choice.IMMEDIATE:
        return True
    # gm_only: posts only when the direction wrote them; everything addressed
    # to the user personally (applications, reports, moderation) at once.
    if kind in (Notification.Kind.POST, Notification.Kind.ADDRESSED):
        return from_gm
    return True


def gm_ids(campaign: Campaign) -> set[int]:
    """The campaign's GM and active co-GMs, by user id."""
    cogms = Membership.objects.active().filter(campaign=campaign, role=Role.COGM).values_list("user_id", flat=True)
    return {campaign.gm_id, *cogms}


# --- posts -------------------------------------------------------------------


def post_readers(post: Post) -> tuple[set[int], set[int]]:
    """The ids of the users who may read ``post`` and the ids of the GM and
    co-GMs among them (a constant number of queries).

    A reader must be the GM or an active member, see the scene (all-members
    scene or chosen participant; the GM always) and be among the post's
    recipients (everyone; the direction only; chosen members plus the
    direction). Whether the author is among them does not matter: callers
    drop them.
    """
    scene = post.scene
    campaign = scene.campaign
    members = dict(Membership.objects.active().filter(campaign=campaign).values_list("user_id", "role"))
    gm_ids = {campaign.gm_id} | {user_id for user_id, role in members.items() if role == Role.COGM}
    if scene.everyone:
        seeing = set(members)
    else:
        participants = set(scene.participants.values_list("pk", flat=True))
        seeing = set(members) & participants
    seeing |= gm_ids
    if post.recipients == Post.Recipients.ALL:
        readers = seeing
    elif post.recipients == Post.Recipients.GM:
        readers = set(gm_ids)
    else:
        chosen = set(chosen_readers().filter(post=post).values_list("user_id", flat=True))
        readers = (seeing & chosen) | gm_ids
    return readers, gm_ids


def _post_text(post: Post, kind: str) -> str:
    scene = post.scene
    values = {"speaker": post.speaker_name, "scene": scene.title, "campaign": scene.campaign.title}
    if kind == Notification.Kind.ADDRESSED:
        return _("%(speaker)s te ha escrito un mensaje privado en «%(scene)s» (%(campaign)s).") % values
    return _("%(speaker)s ha escrito en «%(scene)s» (%(campaign)s).") % values


def post_created(post: Post) -> None:
    """Notify everyone who can read the new post, except its author, in the
    background: the task is enqueued in the caller's transaction."""
    post_fan_out.enqueue(post.pk)


@task
def post_fan_out(post_id: int) -> int:
    """The background half of ``post_created``; returns how many were notified."""
    post = Post.objects.select_related("scene__campaign", "author", "character").filter(pk=post_id).first()
    if post is None:  # Deleted before the worker got to it: nobody to tell.
        return 0
    return len(notify_post_readers(post))


def notify_post_readers(post: Post) -> list[Notification]:
    """One Notification per reader of ``post`` but its author (kind ADDRESSED
    for a post to the direction or to chosen members, POST otherwise;
    ``from_gm`` when the author directs the campaign), and after commit an
    e-mail to those whose preference asks for one now."""
    readers, gm_ids = post_readers(post)
    readers.discard(post.author_id)
    if not readers:
        return []
    users = list(User.objects.filter(pk__in=readers, is_active=True).order_by("pk"))
    kind = Notification.Kind.POST if post.recipients == Post.Recipients.ALL else Notification.Kind.ADDRESSED
    from_gm = post.author_id in gm_ids
    url = post.get_absolute_url()[:_URL_LENGTH]
    texts = texts_in_every_language(lambda: _post_text(post, kind))
    notifications = []
    for user in users:
        notifications.append(
            Notification(
                user=user,
                campaign=post.scene.campaign,
                post=post,
                kind=kind,
                text=_text_for(user, texts, lambda: _post_text(post, kind)),
                texts=texts,
                url=url,
                from_gm=from_gm,
            )
        )
    created = Notification.objects.bulk_create(notifications)
    _mail_after_commit(created)
    return created


# --- applications and moderation ---------------------------------------------


def application_received(application: Application) -> list[Notification]:
    """Tell the GM and co-GMs that someone applied."""
    campaign = application.campaign
    applicant = application.user
    users = User.objects.filter(pk__in=gm_ids(campaign), is_active=True).order_by("pk")
    url = reverse("campaigns:dashboard", args=[campaign.slug])

    def text() -> str:
        return _("%(user)s quiere unirse a «%(campaign)s».") % {
            "user": applicant.public_name,
            "campaign": campaign.title,
        }

    return notify_users(users, campaign=campaign, kind=Notification.Kind.APPLICATION, url=url, text=text)


def application_decided(application: Application) -> list[Notification]:
    """Tell the applicant whether they were accepted, with the GM's answer."""
    campaign = application.campaign
    accepted = application.status == Application.Status.ACCEPTED

    def text() -> str:
        values = {"campaign": campaign.title, "answer": application.answer}
        if accepted:
            message = _("Te han aceptado en «%(campaign)s».") % values
        else:
            message = _("Han rechazado tu solicitud para «%(campaign)s».") % values
        if application.answer:
            message = _("%(message)s Respuesta: %(answer)s") % {"message": message, "answer": application.answer}
        return message

    return notify_users(
        [application.user],
        campaign=campaign,
        kind=Notification.Kind.APPLICATION,
        url=campaign.get_absolute_url(),
        text=text,
    )


def moderation(campaign: Campaign, user, text: str | Callable[[], str], post: Post | None = None) -> list[Notification]:
    """Tell a member about a GM action on them or on their content.

    ``text`` is best a function that writes it in the active language (the
    member then reads it in theirs); a string already translated by the
    service is kept as it is, in that one language.
    """
    url = post.get_absolute_url() if post is not None else campaign.get_absolute_url()
    if callable(text):
        return notify_users([user], campaign=campaign, kind=Notification.Kind.MODERATION, url=url, text=text, post=post)
    return notify_users(
        [user],
        campaign=campaign,
        kind=Notification.Kind.MODERATION,
        url=url,
        text=lambda: str(text),
        post=post,
        translated=False,
    )


# --- reports -----------------------------------------------------------------


def reports_url(campaign: Campaign) -> str:
    """Where the direction handles reports: the dashboard's reports section."""
    return reverse("campaigns:dashboard", args=[campaign.slug]) + "#denuncias"


def report_received(report: PostReport) -> list[Notification]:
    """Tell the GM and the active co-GMs that a member reported a post, with
    the reporter's reason (the direction reads every post and every report);
    never the reporter themself. A report is news for the direction like an
    application: e-mailed at once to those who want only the GM's posts."""
    post = report.post
    scene = post.scene
    campaign = scene.campaign
    users = User.objects.filter(pk__in=gm_ids(campaign) - {report.reporter_id}, is_active=True).order_by("pk")

    def text() -> str:
        return _(
            "%(reporter)s ha denunciado el mensaje #%(id)s de %(author)s en «%(scene)s» (%(campaign)s). "
            "Motivo: %(reason)s"
        ) % {
            "reporter": report.reporter.public_name,
            "id": post.pk,
            "author": post.author.public_name,
            "scene": scene.title,
            "campaign": campaign.title,
            "reason": report.reason,
        }

    return notify_users(
        users, campaign=campaign, kind=Notification.Kind.REPORT, url=reports_url(campaign), text=text, post=post
    )


def report_decided(report: PostReport, *, hidden: bool) -> list[Notification]:
    """Tell the member who made ``report`` what the direction decided: the
    post hidden (``hidden``) or left as it was.

    The text names only what the reporter read when they reported (the
    post's number, its scene and campaign), never the direction's reasons,
    which stay in the moderation log. A reporter who is no longer a member
    (they left or were removed) or may no longer read the post (the scene
    was closed to them) is not told anything.
    """
    post = report.post
    scene = post.scene
    campaign = scene.campaign
    reporter = report.reporter
    access = campaign_access(reporter, campaign)
    if not reporter.is_active or not access.is_member or not can_read_post(access, post):
        return []
    values = {"id": post.pk, "scene": scene.title, "campaign": campaign.title}

    def text() -> str:
        if hidden:
            return _("La dirección ha ocultado el mensaje #%(id)s que denunciaste en «%(scene)s» (%(campaign)s).") % (
                values
            )
        return (
            _(
                "La dirección ha revisado tu denuncia del mensaje #%(id)s en «%(scene)s» (%(campaign)s) "
                "y ha decidido no ocultarlo."
            )
            % values
        )

    return notify_users(
        [reporter], campaign=campaign, kind=Notification.Kind.REPORT, url=post.get_absolute_url(), text=text, post=post
    )


def texts_in_every_language(text: Callable[[], str]) -> dict[str, str]:
    """``text()`` written in each language of the site, for ``Notification.texts``."""
    texts = {}
    for language, _name in settings.LANGUAGES:
        with translation.override(language):
            texts[language] = _short(text())
    return texts


def _text_for(user, texts: dict[str, str], text: Callable[[], str]) -> str:
    """The text in the recipient's language (worked out apart when the site
    does not list that language)."""
    language = user_language(user)
    if language in texts:
        return texts[language]
    with translation.override(language):
        return _short(text())


def notify_users(
    users: Iterable,
    *,
    campaign: Campaign,
    kind: str,
    url: str,
    text: Callable[[], str],
    post: Post | None = None,
    translated: bool = True,
    mail: bool = True,
):
    """One notification per user, its ``text()`` worked out in every language
    of the site (the list and the e-mails show the reader's language of the
    moment; ``translated=False`` when ``text()`` gives one fixed string) and
    stored in the user's, and the e-mail after commit to those who want it
    now (``mail=False``: the caller e-mails it in a message of its own). The
    apps above the forum (sheets, the table, the game) tell their news
    through this."""
    users = list(users)
    texts = texts_in_every_language(text) if translated and users else {}
    notifications = []
    for user in users:
        notifications.append(
            Notification(
                user=user,
                campaign=campaign,
                post=post,
                kind=kind,
                text=_text_for(user, texts, text),
                texts=texts,
                url=url[:_URL_LENGTH],
            )
        )
    created = Notification.objects.bulk_create(notifications)
    if mail:
        _mail_after_commit(created)
    return created


# --- held while away -----------------------------------------------------------

# No time zone is more than a day ahead of UTC.
_ZONE_LEAD = timedelta(days=1)


def held_absences(*, users=None, campaigns=None, now: datetime | None = None) -> list[Absence]:
    """The absences that hold their member's notifications now (one query):
    not cancelled, holding, started where their campaign is played, and
    whose return has not been noticed (an absence past its last day holds
    until the clock notices the return and sends what it held).
    ``users``/``campaigns``: ids to look at (None: every one)."""
    now = now or timezone.now()
    rows = Absence.objects.live().filter(
        hold_notifications=True,
        returned_at__isnull=True,
        starts_on__lte=now.astimezone(ZoneInfo("UTC")).date() + _ZONE_LEAD,
    )
    if users is not None:
        rows = rows.filter(user_id__in=list(users))
    if campaigns is not None:
        rows = rows.filter(campaign_id__in=list(campaigns))
    found = []
    for absence in rows.select_related("campaign").only("user", "campaign", "starts_on", "campaign__time_zone"):
        if absence.starts_on <= timezone.localtime(now, ZoneInfo(absence.campaign.time_zone)).date():
            found.append(absence)
    return found


def held_pairs(notifications: Iterable[Notification], now: datetime | None = None) -> set[tuple[int, int]]:
    """The (user id, campaign id) of these notifications that are held now (one query, none when empty)."""
    notifications = [n for n in notifications if n.campaign_id is not None]
    if not notifications:
        return set()
    absences = held_absences(
        users={n.user_id for n in notifications}, campaigns={n.campaign_id for n in notifications}, now=now
    )
    return {(a.user_id, a.campaign_id) for a in absences}


def _not_held(held_ids: list[int]):
    """A filter for notifications no absence among ``held_ids`` holds."""
    if not held_ids:
        return Q()
    holding = Absence.objects.filter(pk__in=held_ids, user=OuterRef("user"), campaign=OuterRef("campaign"))
    return ~Exists(holding)


# The notices that quote a post to its readers: they go out only to whom
# still reads it. Other notices citing a post (a character harmed by an
# attack written as a whisper) tell of their reader's own things and go out.
QUOTING = (Notification.Kind.POST, Notification.Kind.ADDRESSED)


def _quotes_unread(user) -> Q:
    """The notifications quoting a post ``user`` no longer reads
    (``Post.objects.readable_where_member``: a member who left or was
    removed reads no more of the campaign's posts, nor the whispers once
    addressed to them)."""
    readable = Post.objects.readable_where_member(user).values("pk")
    return Q(kind__in=QUOTING, post__isnull=False) & ~Q(post__in=readable)


def _drop_unread(user) -> int:
    """Mark handled (``emailed_at``) the user's pending notifications that
    quote a post they no longer read: never sent, they neither pile up for a
    member who rejoins nor select the user for a digest again."""
    pending = Notification.objects.filter(user=user, emailed_at__isnull=True)
    return pending.filter(_quotes_unread(user)).update(emailed_at=timezone.now())


def _unread_quotes(notifications: list[Notification]) -> set[int]:
    """Of ``notifications``, the ids of those quoting a post their user no
    longer reads (``post_readers``, the rule the notices were made by; a
    constant number of queries per post)."""
    quoting = [n for n in notifications if n.kind in QUOTING and n.post_id is not None]
    posts = Post.objects.select_related("scene__campaign").in_bulk({n.post_id for n in quoting})
    readers = {pk: post_readers(post)[0] for pk, post in posts.items()}
    return {n.pk for n in quoting if n.user_id not in readers.get(n.post_id, ())}


def wants_any_mail(user) -> bool:
    return user.is_active and bool(user.email) and user.email_notifications != User.EmailChoice.NEVER


def _mailed_by_choice(user) -> Q:
    """The notifications ``user``'s e-mail choice would have e-mailed at once,
    were they not away (``_wants_mail_now``), as a filter; the digest's
    users are e-mailed everything, the return's message standing in for
    their digest. Callers check ``wants_any_mail`` first."""
    if user.email_notifications == User.EmailChoice.GM_ONLY:
        return ~Q(kind__in=[Notification.Kind.POST, Notification.Kind.ADDRESSED]) | Q(from_gm=True)
    return Q()


def absence_start(absence: Absence) -> datetime:
    """The first instant of the absence: midnight of its first day where its
    campaign is played."""
    return datetime.combine(absence.starts_on, time.min, tzinfo=ZoneInfo(absence.campaign.time_zone))


def held_notifications(absence: Absence, *, welcome_id: int | None = None):
    """What ``absence`` kept for its member's return (a QuerySet, ``absence.user``
    and ``absence.campaign`` loaded): the campaign's notifications to them
    written from the first day of the absence (in the campaign's time zone)
    until its return was noticed, not e-mailed, not read, and among those
    their e-mail choice would have sent (``gm_only``: the direction's posts
    and what is addressed to them personally; ``never``, no address or an
    inactive account: nothing). ``welcome_id``: the welcome written on
    return, which is always among them."""
    user = absence.user
    if not wants_any_mail(user):
        return Notification.objects.none()
    window = Q(created_at__gte=absence_start(absence))
    if absence.returned_at is not None:
        window &= Q(created_at__lte=absence.returned_at)
    rows = Q(emailed_at__isnull=True, read_at__isnull=True) & window & _mailed_by_choice(user)
    if welcome_id is not None:
        rows |= Q(pk=welcome_id, emailed_at__isnull=True)
    return Notification.objects.filter(user=user, campaign=absence.campaign).filter(rows)


def return_email(
    user, campaign: Campaign, notifications: list[Notification], lines: list[str], *, released: bool = False
) -> EmailMessage:
    """The one "while you were away" message: the notifications a campaign
    held for the member (the welcome among them) and what others did in
    their name. ``released``: still away, the member stopped holding them
    (``absences.release_held``), and the message says so instead."""
    unsubscribe = unsubscribe_link(user)
    head = log_heads_for([(user.pk, campaign.pk)]).get((user.pk, campaign.pk))
    with translation.override(user_language(user)):
        context = {
            "user": user,
            "campaign": campaign,
            "log_head": log_head_line(campaign, head),
            "items": [(n, site_url(n.url)) for n in notifications],
            "count": len(notifications),
            "lines": lines,
            "released": released,
            "campaign_link": site_url(campaign.get_absolute_url()),
            "list_link": site_url(reverse("campaigns:notifications")),
            "profile_link": site_url(reverse("accounts:profile")),
            "unsubscribe_link": unsubscribe,
        }
        subject = _short(render_to_string("campaigns/email/returned_subject.txt", context).strip())
        body = render_to_string("campaigns/email/returned.txt", context)
    return EmailMessage(subject=subject, body=body, to=[user.email], headers=mail_headers(unsubscribe))


@task
def send_return_digest(absence_id: int, welcome_id: int, lines: list[str], attempt: int = 1) -> bool:
    """E-mail a member back from an absence the notifications it held, in one
    message, and mark them e-mailed; returns whether it went out.

    The welcome notification (``welcome_id``) says whether the message went
    out already: it is locked with the others and marked e-mailed with them,
    so a task run twice sends nothing the second time. A member who wants no
    e-mail at all gets none. A mail server failure is logged, the rows stay
    pending and the task is tried again later (up to ``EMAIL_ATTEMPTS``) when
    the task backend can defer it; meanwhile nothing is held any more, so a
    digest user's daily digest also collects them.
    """
    absence = Absence.objects.select_related("campaign", "user").filter(pk=absence_id).first()
    if absence is None or not wants_any_mail(absence.user):
        return False
    user, campaign = absence.user, absence.campaign
    try:
        with transaction.atomic():
            pending = list(
                held_notifications(absence, welcome_id=welcome_id).select_for_update().order_by("created_at", "id")
            )
            if not any(n.pk == welcome_id for n in pending):
                return False
            # Not back yet: the member stopped holding them while away.
            released = absence.returned_at is None
            mailers.default.send_messages([return_email(user, campaign, pending, lines, released=released)])
            Notification.objects.filter(pk__in=[n.pk for n in pending]).update(emailed_at=timezone.now())
    except Exception:
        logger.exception("Could not send the return digest of absence %s (attempt %d)", absence_id, attempt)
        backend = send_return_digest.get_backend()
        if attempt < EMAIL_ATTEMPTS and backend.supports_defer:
            delay = EMAIL_FIRST_RETRY * 3 ** (attempt - 1)
            send_return_digest.using(run_after=timezone.now() + delay).enqueue(
                absence_id, welcome_id, lines, attempt + 1
            )
        return False
    return True


# --- e-mail ------------------------------------------------------------------

# What an unsubscribe token turns off. The preference is one per account
# (``User.email_notifications``), so a token turns off every notification
# e-mail, the digest included; notifications stay on the site.
UNSUBSCRIBE_SALT = "campaigns.notify.unsubscribe"
UNSUBSCRIBE_ALL = "email"


def unsubscribe_token(user) -> str:
    """A signed token naming ``user`` and what it turns off, for the one-click
    unsubscribe link. It does not expire: a link in an old e-mail still works."""
    return signing.Signer(salt=UNSUBSCRIBE_SALT).sign_object({"user": user.pk, "off": UNSUBSCRIBE_ALL})


def unsubscribe_user_id(token: str) -> int:
    """The id of the user an unsubscribe token was made for; raises
    ``signing.BadSignature`` for a forged or tampered token."""
    payload = signing.Signer(salt=UNSUBSCRIBE_SALT).unsign_object(token)
    if not isinstance(payload, dict) or payload.get("off") != UNSUBSCRIBE_ALL or type(payload.get("user")) is not int:
        raise signing.BadSignature("Not an unsubscribe token.")
    return payload["user"]


def unsubscribe_link(user) -> str:
    return site_url(reverse("campaigns:email-unsubscribe", args=[unsubscribe_token(user)]))


def email_unsubscribe(*, user) -> bool:
    """Turn off every notification e-mail of ``user`` (the preference becomes
    ``never``); returns whether it changed. E-mails already queued for them
    are not sent (``send_notification_emails`` asks again), and the digest
    skips them."""
    if user.email_notifications == User.EmailChoice.NEVER:
        return False
    user.email_notifications = User.EmailChoice.NEVER
    user.save(update_fields=["email_notifications"])
    return True


class _OneLineHeader(UnstructuredHeader):
    """A header written on one line, however long (RFC 5322 allows 998
    characters). Python's mail library folds a long unstructured header by
    cutting it into RFC 2047 encoded words, and mail clients do not decode
    those in ``List-Unsubscribe``, whose address must stay as written in its
    angle brackets (RFC 2369): the one-click button would not appear."""

    def fold(self, *, policy):
        return super().fold(policy=policy.clone(max_line_length=None))


_one_line_header = HeaderRegistry(default_class=_OneLineHeader, use_default_map=False)


def mail_headers(unsubscribe: str) -> dict[str, str]:
    """The headers of every notification and digest e-mail: sent by a machine,
    identified in the site's domain (not the worker's host name), with the
    one-click unsubscribe of RFC 8058."""
    return {
        "Message-ID": make_msgid(domain=urlsplit(settings.SITE_URL).hostname or "localhost"),
        "Auto-Submitted": "auto-generated",
        "List-Unsubscribe": _one_line_header("List-Unsubscribe", f"<{unsubscribe}>"),
        "List-Unsubscribe-Post": "List-Unsubscribe=One-Click",
    }


def _mail_after_commit(notifications: list[Notification]) -> None:
    due = [n for n in notifications if _wants_mail_now(n.user, kind=n.kind, from_gm=n.from_gm)]
    # Those an absence holds wait for the member's return (one query for all).
    held = held_pairs(due)
    due = [n.pk for n in due if (n.user_id, n.campaign_id) not in held]
    if due:
        # robust: a task queue that cannot be reached never turns a saved post into an error page.
        transaction.on_commit(lambda: send_notification_emails.enqueue(due), robust=True)


def notification_email(
    notification: Notification, heads: dict[tuple[int, int], tuple[int, str]] | None = None
) -> EmailMessage:
    """One notification's message; ``heads``: ``log_heads_for`` of the
    notifications sent together (looked up here when not given)."""
    user = notification.user
    unsubscribe = unsubscribe_link(user)
    pair = (notification.user_id, notification.campaign_id)
    if heads is None:
        heads = log_heads_for([pair]) if notification.campaign_id else {}
    head = heads.get(pair)
    with translation.override(user_language(user)):
        context = {
            "user": user,
            "notification": notification,
            "log_head": log_head_line(notification.campaign, head) if head else "",
            "link": site_url(notification.url),
            "profile_link": site_url(reverse("accounts:profile")),
            "unsubscribe_link": unsubscribe,
        }
        subject = _short(render_to_string("campaigns/email/notification_subject.txt", context).strip())
        body = render_to_string("campaigns/email/notification.txt", context)
    return EmailMessage(subject=subject, body=body, to=[user.email], headers=mail_headers(unsubscribe))


# A failed send is tried again after 5, 15, 45 and 135 minutes.
EMAIL_ATTEMPTS = 5
EMAIL_FIRST_RETRY = timedelta(minutes=5)


@task
def send_notification_emails(notification_ids: list[int], attempt: int = 1) -> int:
    """E-mail these notifications, one message each, marking each one e-mailed
    as it goes; returns how many went out.

    Notifications already e-mailed (a task run twice) are skipped, and so
    are those whose user no longer wants them now (they unsubscribed or
    chose the digest since: a digest collects them later) and those an
    absence that started since holds (they go out on return). A mail server
    failure is logged, not raised: the notification stays in the in-site
    list, and the ones not yet sent are tried again later when the task
    backend can defer a task.
    """
    pending = [
        notification
        for notification in Notification.objects.filter(pk__in=notification_ids, emailed_at__isnull=True)
        .select_related("user", "campaign")
        .order_by("pk")
        if _wants_mail_now(notification.user, kind=notification.kind, from_gm=notification.from_gm)
    ]
    held = held_pairs(pending)
    pending = [n for n in pending if (n.user_id, n.campaign_id) not in held]
    unread = _unread_quotes(pending)
    if unread:
        Notification.objects.filter(pk__in=unread).update(emailed_at=timezone.now())
        pending = [n for n in pending if n.pk not in unread]
    # The logs' heads of every message at once (one lookup, however many messages).
    heads = log_heads_for((n.user_id, n.campaign_id) for n in pending if n.campaign_id)
    sent = 0
    for position, notification in enumerate(pending):
        try:
            mailers.default.send_messages([notification_email(notification, heads)])
        except Exception:
            left = [n.pk for n in pending[position:]]
            logger.exception("Could not send %d notification e-mails (attempt %d)", len(left), attempt)
            _retry_later(left, attempt)
            break
        Notification.objects.filter(pk=notification.pk).update(emailed_at=timezone.now())
        sent += 1
    return sent


def _retry_later(notification_ids: list[int], attempt: int) -> None:
    backend = send_notification_emails.get_backend()
    if attempt >= EMAIL_ATTEMPTS or not backend.supports_defer:
        return
    delay = EMAIL_FIRST_RETRY * 3 ** (attempt - 1)
    send_notification_emails.using(run_after=timezone.now() + delay).enqueue(notification_ids, attempt + 1)


# --- reading -----------------------------------------------------------------


def notification_mark_read(*, notification: Notification) -> None:
    if notification.read_at is None:
        notification.read_at = timezone.now()
        notification.save(update_fields=["read_at"])


def notifications_mark_all_read(*, user) -> int:
    """Mark every unread notification of the user read; returns how many."""
    return Notification.objects.filter(user=user, read_at__isnull=True).update(read_at=timezone.now())


# --- the daily digest --------------------------------------------------------


def digest_email(user, notifications: list[Notification], awaited: list[tuple[str, str, str]]) -> EmailMessage:
    """One message listing the user's notifications, grouped by campaign in
    the order given (callers sort by campaign), and what their scenes wait
    for from them (``awaited``, from ``waiting.digest_items``)."""
    groups: list[tuple[Campaign | None, list[tuple[Notification, str]]]] = []
    for notification in notifications:
        if not groups or groups[-1][0] != notification.campaign:
            groups.append((notification.campaign, []))
        groups[-1][1].append((notification, site_url(notification.url)))
    heads = log_heads_for((user.pk, campaign.pk) for campaign, _items in groups if campaign is not None)
    unsubscribe = unsubscribe_link(user)
    with translation.override(user_language(user)):
        context = {
            "user": user,
            # Each campaign's notifications and the line on its roll log's head ("" without one).
            "groups": [
                (campaign, items, log_head_line(campaign, heads.get((user.pk, campaign.pk))) if campaign else "")
                for campaign, items in groups
            ],
            "count": len(notifications),
            "waiting": awaited,
            "list_link": site_url(reverse("campaigns:notifications")),
            "profile_link": site_url(reverse("accounts:profile")),
            "unsubscribe_link": unsubscribe,
        }
        subject = render_to_string("campaigns/email/digest_subject.txt", context).strip()
        body = render_to_string("campaigns/email/digest.txt", context)
    return EmailMessage(subject=subject, body=body, to=[user.email], headers=mail_headers(unsubscribe))


def digest_users():
    """Users who chose the digest and have something to be told: a
    notification not yet e-mailed that no absence holds, or something a scene
    waits for from them (``waiting.waiting_in``) in a campaign where no
    absence of theirs holds. A constant number of queries, whatever the
    number of users, campaigns and scenes: one ``waiting_in`` over every
    campaign not finished where a digest user plays or directs."""
    holding = held_absences()
    held = [absence.pk for absence in holding]
    away = {(absence.user_id, absence.campaign_id) for absence in holding}
    wanting = User.objects.filter(email_notifications=User.EmailChoice.DIGEST, is_active=True).exclude(email="")
    awaited = {
        user_id
        for user_id, campaign_id in waiting.awaited_in(waiting.active_campaigns_with(wanting))
        if (user_id, campaign_id) not in away
    }
    # A notice quoting a post of a campaign its user is no longer in
    # (``_quotes_unread``, which ``digest_send`` marks handled) selects no one.
    still_in = Q(campaign__gm=F("user")) | Exists(
        Membership.objects.active().filter(campaign=OuterRef("campaign"), user=OuterRef("user"))
    )
    pending = (
        Notification.objects.filter(user=OuterRef("pk"), emailed_at__isnull=True, read_at__isnull=True)
        .filter(_not_held(held))
        .filter(~Q(kind__in=QUOTING, post__isnull=False) | still_in)
    )
    return wanting.filter(Q(Exists(pending)) | Q(pk__in=sorted(awaited))).order_by("pk")


def digest_send(*, user) -> bool:
    """E-mail the user's pending notifications and what their scenes wait
    for from them (the «Te esperan» part) in one message, and mark the
    notifications e-mailed. Returns whether a message went out.

    Read notifications are left out: the user has already seen them, and so
    are those an absence holds and what the campaigns it holds wait for
    (they go out on return), and those quoting a post the user no longer
    reads (``_drop_unread``: marked handled, never sent). A user awaited somewhere
    gets a digest even with no new notification, with only the «Te esperan»
    part, on every run while they are awaited: the list is not compared with
    yesterday's. The rows are locked while the message is sent, so two runs
    at once cannot both send them, and a failed send leaves them pending for
    the next run.
    """
    holding = held_absences(users=[user.pk])
    held = [absence.pk for absence in holding]
    with transaction.atomic():
        _drop_unread(user)
        pending = list(
            Notification.objects.select_for_update(of=("self",))
            .filter(user=user, emailed_at__isnull=True, read_at__isnull=True)
            .filter(_not_held(held))
            .select_related("campaign")
            .order_by("campaign__title", "campaign_id", "created_at", "id")
        )
        with translation.override(user_language(user)):
            awaited = waiting.digest_items(user, held_campaign_ids={absence.campaign_id for absence in holding})
        if not pending and not awaited:
            return False
        mailers.default.send_messages([digest_email(user, pending, awaited)])
        if pending:
            Notification.objects.filter(pk__in=[n.pk for n in pending]).update(emailed_at=timezone.now())
    return True


def digest_send_all() -> tuple[int, int]:
    """Send every pending digest: (sent, failed). One bad address or a mail
    server hiccup does not stop the others; failed ones stay pending."""
    sent = failed = 0
    for user in digest_users().iterator():
        try:
            if digest_send(user=user):
                sent += 1
        except Exception:
            failed += 1
            logger.exception("Could not send the digest to user %s", user.pk)
    return sent, failed


@task
def send_digests() -> int:
    """The daily digest on the task worker; returns how many went out. The
    next day's run is enqueued even when this one fails."""
    try:
        sent, _failed = digest_send_all()
    finally:
        daily.schedule_next(send_digests)
    return sent
