"""Re-verify the stored roll logs, as an outside auditor would.

Each campaign's entries are exported exactly as stored and run through the
offline audit (rolls.verify_log); every entry that fails is named by its seq
and permalink. The indexed column copies and the head row are compared with
the signed bytes too, since pages and queries read them.

``manage.py verify_rolls`` prints the report; the task worker runs
``audit_logs`` every night and logs (and mails the ADMINS) any problem.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from django.conf import settings
from django.core.mail import mail_admins
from django.db.models import Exists, OuterRef
from django.tasks import task

from campaigns import daily
from campaigns.models import Campaign
from rolls import rollog, verify_log, verify_roll
from rolls.models import CampaignLog, RollEntry

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class CampaignAudit:
    campaign: Campaign
    entries: int
    problems: list[str]


def audited_campaigns():
    """The campaigns with a log: a head, or entries (a head lost while they remain fails)."""
    of_campaign = {"campaign": OuterRef("pk")}
    return Campaign.objects.filter(
        Exists(CampaignLog.objects.filter(**of_campaign)) | Exists(RollEntry.objects.filter(**of_campaign))
    ).order_by("pk")


def audit(campaigns) -> list[CampaignAudit]:
    public_key = verify_roll.parse_public_key(settings.ROLLOG_KEYS.public_key_hex)
    return [
        CampaignAudit(
            campaign=item,
            entries=RollEntry.objects.filter(campaign=item).count(),
            problems=campaign_problems(item, public_key),
        )
        for item in campaigns
    ]


def campaign_problems(campaign: Campaign, public_key) -> list[str]:
    """One line per problem in ``campaign``'s stored log (none when it verifies)."""
    rows = list(
        RollEntry.objects.filter(campaign=campaign)
        .order_by("seq")
        .only("pk", "seq", "permalink", "kind", "entry_bytes", "signature", "entry_hash", "epoch",
              "epoch_index", "client_seed", "spec", "purpose", "dice", "game", "time", "audience", "opening")
    )  # fmt: skip
    # The server holds every opening: sealed rolls are audited in full here.
    refs = [rollog.ref_with_opening(row.signed, bytes(row.opening) if row.is_sealed else None) for row in rows]
    report = verify_log.audit_log(refs, public_key)
    lines = []
    for problem in report.problems:
        # A forged or edited row may not even decode: name it by the row.
        row = rows[problem.position] if problem.position < len(rows) else None
        where = f"#{row.seq} ({row.permalink})" if row else "?"
        lines.append(f"FAIL entrada {where} [{problem.code}]: {problem.message}")
    for row in rows:
        try:
            same = row.copies_match()
        except ValueError:
            same = False  # The bytes do not decode; already reported above.
        if not same:
            lines.append(
                f"FAIL entrada #{row.seq} ({row.permalink}) [copy_mismatch]: "
                "las columnas copiadas no coinciden con los bytes firmados."
            )
    head = CampaignLog.objects.filter(campaign=campaign).first()
    if head is None:
        lines.append("FAIL cabeza [head_mismatch]: no hay cabeza guardada.")
    elif not head.names(rows[-1] if rows else None):
        # Its seq, hash, time, epoch and next slot: all the head's trigger checks (rolls 0005).
        lines.append(f"FAIL cabeza [head_mismatch]: la cabeza guardada (#{head.seq}) no es la última entrada.")
    return lines


@task
def audit_logs() -> int:
    """The nightly audit on the task worker: returns how many campaigns fail.
    Problems are logged as errors and mailed to the ADMINS; the next night's
    run is enqueued even when this one breaks."""
    try:
        failing = [result for result in audit(audited_campaigns().iterator()) if result.problems]
        for result in failing:
            logger.error(
                "Roll log audit: %s has %d problems: %s",
                result.campaign.slug,
                len(result.problems),
                "; ".join(result.problems),
            )
        if failing:
            mail_admins(
                f"Auditoría de tiradas: {len(failing)} partida(s) con problemas",
                "\n\n".join(f"{r.campaign.slug}:\n" + "\n".join(r.problems) for r in failing),
            )
    finally:
        daily.schedule_next(audit_logs)
    return len(failing)
