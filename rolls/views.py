"""Public roll permalinks and the campaign log export.

A permalink is unguessable and self-certifying (it is the entry's hash), so
anyone holding it may see the roll; the text of the post it belongs to is
shown only to readers allowed to see that post.
"""

from __future__ import annotations

import base64
from datetime import timedelta
from pathlib import Path

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import FileResponse, Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.clickjacking import xframe_options_exempt
from django.views.decorators.http import require_GET, require_http_methods

from campaigns import permissions as perms
from campaigns.models import Campaign, Post, Scene
from campaigns.permissions import campaign_access
from rolls import rollog, services, verify_roll
from rolls.forms import FreeRollForm
from rolls.models import CampaignLog, RollEntry, SeedEpoch

EXPORT_PAGE_SIZE = 1000
NEARBY_WINDOW = timedelta(minutes=30)


def _entry_for(permalink: str) -> RollEntry:
    if not permalink.isalnum() or len(permalink) != 24:
        raise Http404
    return get_object_or_404(
        RollEntry.objects.rolls().select_related("campaign", "user", "character", "scene", "post", "parent"),
        permalink=permalink,
    )


def _chain(entry: RollEntry) -> list[RollEntry]:
    """Every version of the roll, from the original to the latest re-roll."""
    versions = [entry]
    node = entry
    while node.parent_id:
        node = RollEntry.objects.select_related("user").get(pk=node.parent_id)
        versions.insert(0, node)
    node = entry
    while (child := RollEntry.objects.filter(parent=node).select_related("user").first()) is not None:
        versions.append(child)
        node = child
    return versions


def _bundle(entry: RollEntry) -> dict:
    keys = settings.ROLLOG_KEYS
    epoch = RollEntry.objects.get(campaign=entry.campaign, kind=RollEntry.Kind.EPOCH_OPEN, epoch=entry.epoch)
    head = CampaignLog.objects.get(campaign=entry.campaign)
    head_entry = RollEntry.objects.get(campaign=entry.campaign, seq=head.seq)
    children = list(RollEntry.objects.filter(parent=entry).values_list("permalink", flat=True))
    return rollog.roll_bundle(
        entry.signed,
        epoch_open=epoch.signed,
        public_key=keys.public_key_hex,
        parent=entry.parent.signed if entry.parent_id else None,
        head=head_entry.signed,
        children=children,
    )


def _post_readable(request: HttpRequest, post: Post | None) -> bool:
    if post is None:
        return False
    access = campaign_access(request.user, post.scene.campaign)
    if not perms.can_view_campaign(access):
        return False
    visible = Scene.objects.visible_to(request.user, access.campaign, is_gm=access.is_gm, is_member=access.is_member)
    if not visible.filter(pk=post.scene_id).exists():
        return False
    addressed = Post.objects.addressed_to(request.user, is_gm=access.is_gm).filter(pk=post.pk).exists()
    return addressed and (not post.hidden or perms.can_see_hidden_text(access, post))


@require_GET
def roll_permalink(request: HttpRequest, permalink: str) -> HttpResponse:
    entry = _entry_for(permalink)
    bundle = _bundle(entry)
    public_key = verify_roll.parse_public_key(settings.ROLLOG_KEYS.public_key_hex)
    try:
        proof = verify_roll.verify_bundle(bundle, public_key)
        problem = None
    except rollog.RollogError as exc:
        proof, problem = None, exc.message
    signed_entry = entry.entry
    draws = []
    if proof:
        blocks = proof.stream.blocks
        draws = [
            {"offset": d.offset, "size": d.size, "value": d.value, "faces": d.faces, "die": d.die} for d in proof.stream.draws
        ]
        block_hex = [b.hex() for b in blocks]
    else:
        block_hex = []
    nearby = (
        RollEntry.objects.rolls()
        .filter(
            campaign=entry.campaign,
            user=entry.user,
            scene=entry.scene,
            created_at__gte=entry.created_at - NEARBY_WINDOW,
            created_at__lte=entry.created_at + NEARBY_WINDOW,
        )
        .exclude(pk=entry.pk)
        .order_by("seq")[:20]
    )
    epoch = SeedEpoch.objects.get(campaign=entry.campaign, epoch=entry.epoch)
    link = request.build_absolute_uri(entry.get_absolute_url())
    badge = request.build_absolute_uri(reverse("rolls:roll-badge", args=[entry.permalink]))
    context = {
        "entry": entry,
        "signed_entry": signed_entry,
        "game": signed_entry.get("game", {}),
        "versions": _chain(entry),
        "nearby": list(nearby),
        "post_readable": _post_readable(request, entry.post),
        "verified": proof is not None,
        "problem": problem,
        "bundle": bundle,
        "entry_b64": base64.b64encode(bytes(entry.entry_bytes)).decode("ascii"),
        "message": verify_roll.roll_message(signed_entry),
        "blocks": block_hex,
        "draws": draws,
        "anchor": epoch.anchor,
        "public_key": settings.ROLLOG_KEYS.public_key_hex,
        "link": link,
        "bbcode": f"[url={link}][img]{badge}[/img][/url]",
        "markdown": f"[![{_('Tirada verificada')}]({badge})]({link})",
    }
    return render(request, "rolls/roll_detail.html", context)


@require_GET
def roll_json(request: HttpRequest, permalink: str) -> JsonResponse:
    entry = _entry_for(permalink)
    response = JsonResponse(_bundle(entry), json_dumps_params={"ensure_ascii": False, "indent": 1})
    response["Content-Disposition"] = f'inline; filename="{entry.permalink}.json"'
    response["Access-Control-Allow-Origin"] = "*"
    return response


@require_GET
@xframe_options_exempt
def roll_badge(request: HttpRequest, permalink: str) -> HttpResponse:
    """A small SVG of the result, to paste into other forums."""
    entry = _entry_for(permalink)
    game = entry.entry.get("game", {})
    response = render(
        request, "rolls/badge.svg", {"entry": entry, "game": game}, content_type="image/svg+xml; charset=utf-8"
    )
    response["Cache-Control"] = "public, max-age=86400"
    return response


@require_GET
def rollog_keys(request: HttpRequest) -> JsonResponse:
    keys = settings.ROLLOG_KEYS
    document = {
        "format": rollog.FORMAT,
        "keys": [{"public_key": keys.public_key_hex, "algorithm": "Ed25519", "valid_from": None, "valid_until": None}],
    }
    response = JsonResponse(document)
    response["Access-Control-Allow-Origin"] = "*"
    return response


@require_GET
def verifier_download(request: HttpRequest) -> FileResponse:
    path = Path(verify_roll.__file__)
    return FileResponse(path.open("rb"), as_attachment=True, filename="verify_roll.py", content_type="text/x-python")


@require_GET
def log_export(request: HttpRequest, slug: str) -> JsonResponse:
    """The campaign's log for the L2 audit: members, or everyone for public campaigns."""
    campaign = get_object_or_404(Campaign, slug=slug)
    access = campaign_access(request.user, campaign)
    if not perms.can_view_campaign(access):
        raise Http404
    log = get_object_or_404(CampaignLog, campaign=campaign)
    try:
        start = max(0, int(request.GET.get("desde", "0")))
    except ValueError:
        start = 0
    entries = list(RollEntry.objects.filter(campaign=campaign, seq__gte=start).order_by("seq")[: EXPORT_PAGE_SIZE + 1])
    next_url = None
    if len(entries) > EXPORT_PAGE_SIZE:
        next_url = f"{reverse('rolls:log-export', args=[campaign.slug])}?desde={entries[-1].seq}"
        entries = entries[:EXPORT_PAGE_SIZE]
    page = rollog.export_page(
        log.log_id,
        (e.signed for e in entries),
        public_key=settings.ROLLOG_KEYS.public_key_hex,
        start=start,
        next_url=next_url,
    )
    response = JsonResponse(page)
    response["Content-Disposition"] = f'inline; filename="{log.log_id}-log-{start}.json"'
    return response


@login_required
@require_http_methods(["GET", "POST"])
def free_roll(request: HttpRequest, slug: str) -> HttpResponse:
    campaign = get_object_or_404(Campaign.objects.select_related("gm"), slug=slug)
    access = campaign_access(request.user, campaign)
    if not perms.can_view_campaign(access):
        raise Http404
    if not (access.is_gm or access.is_player):
        raise PermissionDenied(_("Solo los jugadores y la dirección pueden tirar en esta partida."))
    form = FreeRollForm(request.POST if request.method == "POST" else None)
    if request.method == "POST" and form.is_valid():
        try:
            entry = services.free_roll(
                campaign=campaign,
                user=request.user,
                text=form.cleaned_data["notation"],
                purpose=form.cleaned_data["purpose"],
                client_seed=form.cleaned_data["client_seed"] or None,
            )
        except ValidationError as exc:
            form.add_error("notation", exc)
        else:
            messages.success(request, _("Tirada hecha y firmada."))
            return redirect(entry)
    return render(request, "rolls/free_roll.html", {"campaign": campaign, "form": form})
