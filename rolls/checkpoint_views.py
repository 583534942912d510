"""The daily signed checkpoints of a campaign's log (``rolls.checkpoints``):
the latest document and each day's at a stable address, their list, and the
member's choice to get them by e-mail.

Who may read them: whoever may read the log export (its members, everyone
for a public campaign); outsiders of a private campaign get 404. Only its
members (and its GM) may ask for the e-mail: a reader of a public campaign
who does not belong to it gets 403.
"""

from __future__ import annotations

import json
from datetime import date

from django.contrib import messages
from django.contrib.auth.views import redirect_to_login
from django.core import signing
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.cache import patch_vary_headers
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.cache import never_cache
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_http_methods, require_safe

from accounts.models import User
from campaigns.access import campaign_for, require
from campaigns.models import Campaign
from campaigns.permissions import Access
from campaigns.unsubscribe import one_click_answer, unusable_link
from hitos_site.htmx import HtmxHttpRequest, form_again, page_or_fragment, redirect_after
from rolls import checkpoints
from rolls.forms_checkpoints import SUBSCRIBE, CheckpointSubscriptionForm
from rolls.models import CampaignLog, Checkpoint

# How many of the latest checkpoints the page lists.
LISTED = 30
TEMPLATE = "rolls/checkpoints.html"
# Characters that could end a <script> or start markup if the document were
# ever pasted into HTML; escaped as \uXXXX they parse to the same strings.
_JSON_HTML_ESCAPES = {ord("<"): "\\u003c", ord(">"): "\\u003e", ord("&"): "\\u0026"}


def _is_member(access: Access) -> bool:
    return access.is_member


def _document_response(checkpoint: Checkpoint, log_id: str) -> HttpResponse:
    text = json.dumps(checkpoints.stored_document(checkpoint), ensure_ascii=False, indent=1)
    response = HttpResponse(text.translate(_JSON_HTML_ESCAPES), content_type="application/json; charset=utf-8")
    response["Cache-Control"] = "private, no-cache"
    response["Vary"] = "Cookie"
    response["Content-Disposition"] = f'inline; filename="{checkpoints.file_name(checkpoint, log_id)}"'
    return response


@require_safe
def latest_checkpoint(request: HttpRequest, slug: str) -> HttpResponse:
    """The campaign's latest signed checkpoint (404 before the first)."""
    campaign, _access = campaign_for(request, slug)
    log = get_object_or_404(CampaignLog, campaign=campaign)
    checkpoint = get_object_or_404(Checkpoint.objects.filter(campaign=campaign).order_by("-date")[:1])
    return _document_response(checkpoint, log.log_id)


@require_safe
def checkpoint_day(request: HttpRequest, slug: str, day: str) -> HttpResponse:
    """The checkpoint of one UTC day: its address never changes, nor does what it serves."""
    campaign, _access = campaign_for(request, slug)
    try:
        when = date.fromisoformat(day)
    except ValueError:
        raise Http404 from None
    log = get_object_or_404(CampaignLog, campaign=campaign)
    checkpoint = get_object_or_404(Checkpoint, campaign=campaign, date=when)
    return _document_response(checkpoint, log.log_id)


def _context(request: HttpRequest, campaign: Campaign, access: Access, *, error: str = "") -> dict:
    listed = list(
        Checkpoint.objects.filter(campaign=campaign).order_by("-date").only("date", "seq", "head_hash")[:LISTED]
    )
    for checkpoint in listed:
        checkpoint.url = reverse("rolls:checkpoint-day", args=[campaign.slug, checkpoint.date.isoformat()])
    return {
        "campaign": campaign,
        "access": access,
        "listed": listed,
        "subscribed": access.is_member and checkpoints.subscribed(request.user, campaign),
        "error": error,
        "page_url": reverse("rolls:checkpoints", args=[campaign.slug]),
        "latest_url": reverse("rolls:checkpoint-latest", args=[campaign.slug]),
        "export_url": reverse("rolls:log-export", args=[campaign.slug]),
    }


@require_http_methods(["GET", "HEAD", "POST"])
def checkpoint_list(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    """What checkpoints are for, the latest ones and, for members, the choice
    to get them by e-mail (POST: ``action`` ``recibir`` or ``no-recibir``)."""
    campaign, access = campaign_for(request, slug)
    if request.method != "POST":
        return page_or_fragment(request, TEMPLATE, "checkpoint-page", _context(request, campaign, access))
    if not request.user.is_authenticated:
        return redirect_to_login(request.get_full_path())
    require(access, _is_member, gettext_lazy("Solo los miembros de la partida pueden recibir sus puntos de control."))
    form = CheckpointSubscriptionForm(request.POST)
    if not form.is_valid():
        error = " ".join(form.errors.get("action", []))
        context = _context(request, campaign, access, error=error)
        if request.htmx:
            content = render_to_string(f"{TEMPLATE}#checkpoint-subscription", context, request=request)
            return form_again(HttpResponse(content), "#checkpoint-subscription")
        return page_or_fragment(request, TEMPLATE, "checkpoint-page", context, status=400)
    if form.cleaned_data["action"] == SUBSCRIBE:
        checkpoints.subscribe(user=request.user, campaign=campaign)
        done = _("Recibirás cada día el punto de control de esta partida por correo.")
    else:
        checkpoints.unsubscribe(user=request.user, campaign=campaign)
        done = _("Ya no recibirás el punto de control de esta partida por correo.")
    if request.htmx:
        context = {**_context(request, campaign, access), "done": done}
        response = HttpResponse(render_to_string(f"{TEMPLATE}#checkpoint-subscription", context, request=request))
        patch_vary_headers(response, ("HX-Request",))
        return response
    messages.success(request, done)
    return redirect_after(request, reverse("rolls:checkpoints", args=[campaign.slug]))


# --- the one-click unsubscribe of the checkpoint e-mails (RFC 8058) ---------------------


UNSUBSCRIBE_TEMPLATE = "rolls/checkpoint_unsubscribe.html"


@csrf_exempt
@never_cache
@require_http_methods(["GET", "HEAD", "POST"])
def checkpoint_unsubscribe(request: HtmxHttpRequest, token: str) -> HttpResponse:
    """Stop one campaign's checkpoint e-mails from the link in them. The signed
    token (``checkpoints.unsubscribe_token``) is the only credential, as in the
    notifications' ``campaigns.unsubscribe``: a forged one is a bad request
    (400), one whose member or campaign is gone is not found (404). A GET only
    shows the button (mail scanners follow links); the POST stops them; a mail
    client's one-click POST is answered at once, the page's form with
    Post/Redirect/Get, or its panel for htmx."""
    try:
        user_id, campaign_id = checkpoints.unsubscribe_ids(token)
    except signing.BadSignature:
        return unusable_link(request, UNSUBSCRIBE_TEMPLATE, 400)
    user = User.objects.filter(pk=user_id).first()
    campaign = Campaign.objects.filter(pk=campaign_id).first()
    if user is None or campaign is None:
        return unusable_link(request, UNSUBSCRIBE_TEMPLATE, 404)
    return one_click_answer(
        request,
        UNSUBSCRIBE_TEMPLATE,
        stop=lambda: checkpoints.unsubscribe(user=user, campaign=campaign),
        context=lambda: {
            "subscriber": user,
            "subscribed_campaign": campaign,
            "unsubscribed": not checkpoints.subscribed(user, campaign),
        },
    )
