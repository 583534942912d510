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
from rolls.models import CampaignLog
from rolls.views import key_fingerprint


@require_safe
def log_head(request: HttpRequest, slug: str) -> JsonResponse:
    """``{"campaign", "seq", "head", "public_key", "fingerprint"}``: the log's
    public id, the seq of its last entry and that entry's hash, all three null
    while no log is open (the witness then has nothing to keep); and the key
    the log is signed with, which the witness pins on first sight."""
    campaign, _access = campaign_for(request, slug)
    head = CampaignLog.objects.filter(campaign=campaign).values_list("log_id", "seq", "head_hash").first()
    log_id, seq, head_hash = head if head is not None else (None, None, None)
    key = settings.ROLLOG_KEYS.public_key_hex
    response = JsonResponse(
        {"campaign": log_id, "seq": seq, "head": head_hash, "public_key": key, "fingerprint": key_fingerprint(key)}
    )
    # Always asked afresh: a cached head would hide a fork.
    response["Cache-Control"] = "private, no-store"
    response["Vary"] = "Cookie"
    return response
