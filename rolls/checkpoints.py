"""Daily signed checkpoints of every campaign's head (roll-verification.md
§3.8, docs/verification.md «Puntos de control»).

A checkpoint says, signed with the site's key, "at TIME the log of CAMPAIGN
ended at entry SEQ whose entry_hash is HEAD". No verifier can tell from a log
alone that its last entries were dropped; anyone who kept an earlier
checkpoint can (``verify_log --checkpoint``).

The body is canonical JSON (§3.5) with exactly the keys ``campaign``,
``date`` (the UTC day it closes), ``head``, ``kind`` (``"checkpoint"``),
``seq``, ``time`` (when it was made) and ``v`` (1); the signature is
``Ed25519.sign(DOMAIN + SHA-256(DOMAIN + body))`` with
``DOMAIN = b"rollog/v1/checkpoint\\n"``, so that it can never pass for an
entry's signature. The checkpoint of day D states the head as it stood at
the end of D (the last entry written before midnight UTC), whenever the job
runs.

``publish_checkpoints`` writes the checkpoint of the day that just ended for
every campaign with a log (running it again adds nothing) and the members
who asked for it get it by e-mail (``send_checkpoint_emails``), each in their
language, with the signed document attached.
"""

from __future__ import annotations

import base64
import hashlib
import json
import logging
from collections.abc import Iterable
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from django.conf import settings
from django.core import signing
from django.core.mail import EmailMessage, mailers
from django.db import IntegrityError, transaction
from django.db.models import Exists, F, OuterRef, Q
from django.tasks import task
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone, translation

from campaigns import daily
from campaigns.models import Membership
from campaigns.notify import mail_headers, site_url, user_language
from rolls.models import CampaignLog, Checkpoint, CheckpointSubscription, RollEntry
from rolls.rollog import canonical_bytes, format_time
from rolls.verify_log import CHECKPOINT

logger = logging.getLogger(__name__)

# The domain the verifier checks (rolls.verify_log), one constant for both.
DOMAIN = CHECKPOINT
FORMAT = "rollog/v1 checkpoint"
KIND = "checkpoint"
VERSION = 1
# The job runs every hour and writes a day's checkpoints at its first run after
# midnight UTC (an hourly chain does not drift with the site's summer time).
EVERY = timedelta(hours=1)


# --- the signed document ----------------------------------------------------------------


def checkpoint_body(*, campaign: str, day: date, seq: int, head: str, made: str) -> bytes:
    """The canonical bytes that are signed (keys sorted, no spaces, UTF-8)."""
    return canonical_bytes(
        {
            "campaign": campaign,
            "date": day.isoformat(),
            "head": head,
            "kind": KIND,
            "seq": seq,
            "time": made,
            "v": VERSION,
        }
    )


def checkpoint_digest(body: bytes) -> bytes:
    """SHA-256 of the domain-separated body."""
    return hashlib.sha256(DOMAIN + body).digest()


def signed_message(body: bytes) -> bytes:
    """What Ed25519 signs: the domain and the digest."""
    return DOMAIN + checkpoint_digest(body)


def sign_checkpoint(body: bytes, signing_key: Ed25519PrivateKey) -> bytes:
    return signing_key.sign(signed_message(body))


def document(body: bytes, signature: bytes, public_key_hex: str) -> dict[str, Any]:
    """The JSON document served and mailed, keys in the agreed order. The
    decoded ``checkpoint`` is a convenience: verifiers read ``checkpoint_b64``."""
    return {
        "format": FORMAT,
        "checkpoint_b64": base64.b64encode(body).decode("ascii"),
        "sig": signature.hex(),
        "checkpoint": json.loads(body.decode("utf-8")),
        "public_key": public_key_hex,
    }


def stored_document(checkpoint: Checkpoint) -> dict[str, Any]:
    return document(bytes(checkpoint.body), bytes(checkpoint.signature), settings.ROLLOG_KEYS.public_key_hex)


def document_text(checkpoint: Checkpoint) -> str:
    return json.dumps(stored_document(checkpoint), ensure_ascii=False, indent=1) + "\n"


def file_name(checkpoint: Checkpoint, log_id: str) -> str:
    return f"{log_id}-punto-de-control-{checkpoint.date.isoformat()}.json"


# --- making them ------------------------------------------------------------------------


# How many days back a run makes the checkpoints it finds missing (a worker
# that was down over a midnight).
CATCH_UP_DAYS = 7


def day_that_ended(now: datetime) -> date:
    """The UTC day before ``now``'s."""
    return now.astimezone(UTC).date() - timedelta(days=1)


def _end_of(day: date) -> str:
    """Midnight UTC after ``day``, in the log's time format (entry times compare as text)."""
    return format_time(datetime.combine(day + timedelta(days=1), time.min, tzinfo=UTC))


def make_checkpoint(log: CampaignLog, day: date, now: datetime, signing_key: Ed25519PrivateKey) -> Checkpoint | None:
    """Sign and store ``log``'s checkpoint of ``day``: its last entry written
    before the end of the day. None when the log had no entry yet then, or
    when the day's checkpoint exists already (another run wrote it)."""
    last = (
        RollEntry.objects.filter(campaign_id=log.campaign_id, time__lt=_end_of(day))
        .order_by("-seq")
        .values_list("seq", "entry_hash")
        .first()
    )
    if last is None:
        return None
    seq, head = last
    body = checkpoint_body(campaign=log.log_id, day=day, seq=seq, head=head, made=format_time(now))
    try:
        with transaction.atomic():
            return Checkpoint.objects.create(
                campaign_id=log.campaign_id,
                date=day,
                seq=seq,
                head_hash=head,
                body=body,
                signature=sign_checkpoint(body, signing_key),
            )
    except IntegrityError:
        return None


def publish_checkpoints(now: datetime | None = None) -> list[Checkpoint]:
    """The checkpoint of the UTC day that just ended for every campaign whose
    log had entries then; campaigns that have it already are skipped (a
    second run adds nothing). A log that did not move that day still gets
    the day's checkpoint, with the same head as the day before.

    Days missed while no worker ran (up to CATCH_UP_DAYS back) are made too,
    oldest first: each states the head as it stood at the end of its own
    day (entry times never go back), signed when it is made (``time``)."""
    now = now or timezone.now()
    last_day = day_that_ended(now)
    made = []
    for back in range(CATCH_UP_DAYS - 1, -1, -1):
        day = last_day - timedelta(days=back)
        done = Checkpoint.objects.filter(date=day).values("campaign_id")
        logs = CampaignLog.objects.exclude(campaign_id__in=done).order_by("campaign_id")
        for log in logs:
            checkpoint = make_checkpoint(log, day, now, settings.ROLLOG_KEYS.signing_key)
            if checkpoint is not None:
                made.append(checkpoint)
    return made


@task
def daily_checkpoints() -> int:
    """The checkpoints on the task worker, then their e-mails; returns how
    many were made. The next run is enqueued even when this one fails."""
    try:
        now = timezone.now()
        made = publish_checkpoints(now)
        # The day's e-mails once, after the run that wrote its checkpoints.
        if made and CheckpointSubscription.objects.exists():
            send_checkpoint_emails.enqueue(day_that_ended(now).isoformat())
    finally:
        daily.schedule_next(daily_checkpoints)
    return len(made)


# --- the latest heads (for e-mails and feeds, through campaigns.extensions) -------------


def log_heads(campaign_ids: Iterable[int]) -> dict[int, tuple[int, str]]:
    """{campaign id: (seq, head hash)} of the campaigns with a log whose head
    names its last entry, in one query (a broken head is no head to vouch for)."""
    rows = (
        CampaignLog.objects.intact()
        .filter(campaign_id__in=set(campaign_ids))
        .values_list("campaign_id", "seq", "head_hash")
    )
    return {campaign_id: (seq, head) for campaign_id, seq, head in rows}


# --- the members who asked for them -----------------------------------------------------


def subscribed(user, campaign) -> bool:
    return CheckpointSubscription.objects.filter(user=user, campaign=campaign).exists()


def subscribe(*, user, campaign) -> bool:
    """Send ``user`` the campaign's daily checkpoint; returns whether it changed."""
    _, created = CheckpointSubscription.objects.get_or_create(user=user, campaign=campaign)
    return created


def unsubscribe(*, user, campaign) -> bool:
    deleted, _ = CheckpointSubscription.objects.filter(user=user, campaign=campaign).delete()
    return bool(deleted)


# The one-click unsubscribe of the checkpoint e-mails: a signed token naming
# the member and the campaign, the only credential its page asks for (like
# the notifications' in campaigns.unsubscribe). It does not expire.
UNSUBSCRIBE_SALT = "rolls.checkpoints.unsubscribe"


def unsubscribe_token(user, campaign) -> str:
    return signing.Signer(salt=UNSUBSCRIBE_SALT).sign_object({"user": user.pk, "campaign": campaign.pk})


def unsubscribe_ids(token: str) -> tuple[int, int]:
    """(user id, campaign id) of a token; ``signing.BadSignature`` for a forged or tampered one."""
    payload = signing.Signer(salt=UNSUBSCRIBE_SALT).unsign_object(token)
    if not isinstance(payload, dict) or any(type(payload.get(key)) is not int for key in ("user", "campaign")):
        raise signing.BadSignature("Not a checkpoint unsubscribe token.")
    return payload["user"], payload["campaign"]


def unsubscribe_link(user, campaign) -> str:
    return site_url(reverse("rolls:checkpoint-unsubscribe", args=[unsubscribe_token(user, campaign)]))


def _due(day: date):
    """Subscriptions not yet sent ``day``'s checkpoint, of users who still
    belong to the campaign (its GM or an active member) and can be mailed."""
    member = Membership.objects.active().filter(campaign_id=OuterRef("campaign_id"), user_id=OuterRef("user_id"))
    return (
        CheckpointSubscription.objects.filter(Q(last_sent_on__isnull=True) | Q(last_sent_on__lt=day))
        .filter(user__is_active=True)
        .exclude(user__email="")
        .filter(Q(campaign__gm_id=F("user_id")) | Exists(member))
    )


def checkpoint_email(user, checkpoint: Checkpoint, log_id: str) -> EmailMessage:
    """The day's checkpoint for one member, in their language, its document attached."""
    with translation.override(user_language(user)):
        context = {
            "user": user,
            "campaign": checkpoint.campaign,
            "checkpoint": checkpoint,
            "file_name": file_name(checkpoint, log_id),
            "unsubscribe_link": unsubscribe_link(user, checkpoint.campaign),
            "day_link": site_url(
                reverse("rolls:checkpoint-day", args=[checkpoint.campaign.slug, checkpoint.date.isoformat()])
            ),
            "export_link": site_url(reverse("rolls:log-export", args=[checkpoint.campaign.slug])),
            "public_key": settings.ROLLOG_KEYS.public_key_hex,
        }
        subject = render_to_string("rolls/checkpoint_email_subject.txt", context).strip()
        body = render_to_string("rolls/checkpoint_email.txt", context)
    # Like the notifications: sent by a machine, in the site's domain, with the
    # one-click unsubscribe of RFC 8058 (this campaign's checkpoints only).
    headers = mail_headers(context["unsubscribe_link"])
    message = EmailMessage(subject=subject, body=body, to=[user.email], headers=headers)
    message.attach(file_name(checkpoint, log_id), document_text(checkpoint), "application/json")
    return message


@task
def send_checkpoint_emails(day: str) -> int:
    """E-mail ``day``'s checkpoints (ISO date) to the members who asked for
    them; returns how many went out. Each subscription is locked and marked
    sent with its message, so a task run twice sends nothing twice; a mail
    server failure is logged and that member misses this day's (the next
    day's checkpoint covers as much)."""
    when = date.fromisoformat(day)
    checkpoints = {
        c.campaign_id: c
        for c in Checkpoint.objects.filter(date=when).select_related("campaign__roll_log").order_by("campaign_id")
    }
    sent = 0
    for subscription in _due(when).filter(campaign_id__in=list(checkpoints)).select_related("user").order_by("pk"):
        checkpoint = checkpoints[subscription.campaign_id]
        try:
            with transaction.atomic():
                locked = _due(when).select_for_update(of=("self",)).filter(pk=subscription.pk).first()
                if locked is None:
                    continue
                mailers.default.send_messages(
                    [checkpoint_email(subscription.user, checkpoint, checkpoint.campaign.roll_log.log_id)]
                )
                CheckpointSubscription.objects.filter(pk=subscription.pk).update(last_sent_on=when)
        except Exception:
            logger.exception("Could not e-mail the checkpoint of %s to user %s", day, subscription.user_id)
            continue
        sent += 1
    return sent
