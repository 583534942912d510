"""The head of a campaign's roll log, for the browser witness (rollog/v1 §3.8).

``static/js/witness.js`` asks it on every visit to a campaign's pages and
keeps the last ``(seq, head)`` it saw; when the head moved it walks the
export (``rolls:log-export``) from the kept entry to check that the chain
still extends it. Who may ask is who may export: members, and everyone for a
public campaign (404 for outsiders of a private one).
"""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest, JsonResponse
from django.views.decorators.http import require_safe

from campaigns.access import campaign_for
from campaigns.models import Campaign
from rolls.models import LogHeadMismatch, head_broken
from rolls.views import key_fingerprint


@require_safe
def log_head(request: HttpRequest, slug: str) -> JsonResponse:
    """``{"campaign", "seq", "head", "public_key", "fingerprint"}``: the log's
    public id, the seq of its last entry and that entry's hash, all three null
    while no log is open (the witness then has nothing to keep); and the key
    the log is signed with, which the witness pins on first sight.

    A head that does not name the last entry is no head to keep (the witness
    would warn of a fork that is not one, a first visit would pin a bad
    head): ``LogHeadMismatch``, which ``rolls.middleware`` answers with a
    503 JSON error."""
    campaign, _access = campaign_for(request, slug)
    # The campaign's head, and whether it is broken, in one query (a left join: a log not yet open has no row).
    log_id, seq, head_hash, broken = (
        Campaign.objects.filter(pk=campaign.pk)
        .annotate(broken=head_broken())
        .values_list("roll_log__log_id", "roll_log__seq", "roll_log__head_hash", "broken")
        .get()
    )
    if broken:
        raise LogHeadMismatch(campaign)
    key = settings.ROLLOG_KEYS.public_key_hex
    response = JsonResponse(
        {"campaign": log_id, "seq": seq, "head": head_hash, "public_key": key, "fingerprint": key_fingerprint(key)}
    )
    # Always asked afresh: a cached head would hide a fork.
    response["Cache-Control"] = "private, no-store"
    response["Vary"] = "Cookie"
    return response
