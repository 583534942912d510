"""Public roll permalinks and the campaign log export.

A permalink is unguessable and self-certifying (it is the entry's hash), so
anyone holding it may see a public roll; the text of the post it belongs to
is shown only to readers allowed to see that post. A sealed roll (a
whisper's, a split-party scene's, a secret roll of the GM) shows its content
only to readers ``rolls.permissions`` allows, whatever link they hold; the
others see its place in the chain and nothing more. Pages show what the
signed bytes say, never the indexed column copies.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
from datetime import timedelta
from pathlib import Path

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import get_user_model
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
from django.db import connection
from django.db.models import Exists, F, OuterRef, Subquery
from django.http import FileResponse, HttpRequest, HttpResponse, HttpResponseBadRequest
from django.shortcuts import get_object_or_404, redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.cache import patch_vary_headers
from django.utils.safestring import mark_safe
from django.utils.translation import gettext as _
from django.views.decorators.clickjacking import xframe_options_exempt
from django.views.decorators.http import require_http_methods, require_safe

from campaigns import fragments
from campaigns import permissions as perms
from campaigns.access import campaign_for
from campaigns.models import Post
from campaigns.notify import site_url
from campaigns.permissions import Access, campaign_access
from hitos_site.htmx import HtmxHttpRequest, wants_fragment
from rolls import presenters, rollog, services, verify_roll
from rolls.forms import FreeRollForm
from rolls.models import CampaignLog, LogHeadMismatch, RollEntry, head_broken, intact_head
from rolls.permissions import can_read_roll, readable_ids, readable_rolls

EXPORT_PAGE_SIZE = 1000
ROLL_LOG_PAGE_SIZE = 50
NEARBY_WINDOW = timedelta(minutes=30)
NEARBY_LIMIT = 20
# Characters that could end a <script> or start markup if a JSON document were
# ever pasted into HTML; escaped as \uXXXX they parse to the same strings.
_JSON_HTML_ESCAPES = {ord("<"): "\\u003c", ord(">"): "\\u003e", ord("&"): "\\u0026"}


def _json(document: dict, *, status: int = 200) -> HttpResponse:
    text = json.dumps(document, ensure_ascii=False, indent=1).translate(_JSON_HTML_ESCAPES)
    return HttpResponse(text, status=status, content_type="application/json; charset=utf-8")


def _entry_for(permalink: str) -> RollEntry:
    """A roll by its permalink: anyone holding the link may see it (outsiders included)."""
    entry = get_object_or_404(
        RollEntry.objects.rolls()
        .select_related("campaign", "user", "character", "scene", "post__scene", "post__on_behalf_of")
        .annotate(head_broken=head_broken("campaign")),
        permalink=permalink,
    )
    if entry.head_broken:
        raise LogHeadMismatch(entry.campaign)
    return entry


@functools.cache
def _chain_sql() -> str:
    """The ids of a roll's versions, walking its parent links both ways in
    one statement (a recursive query, which the ORM does not build; SQLite
    and PostgreSQL both run it)."""
    quote = connection.ops.quote_name
    table, pk = quote(RollEntry._meta.db_table), quote(RollEntry._meta.pk.column)
    parent = quote(RollEntry._meta.get_field("parent").column)
    return (
        f"WITH RECURSIVE up(id, parent) AS ("
        f"SELECT {pk}, {parent} FROM {table} WHERE {pk} = %s "
        f"UNION ALL SELECT e.{pk}, e.{parent} FROM {table} e JOIN up ON e.{pk} = up.parent), "
        f"down(id) AS (SELECT {pk} FROM {table} WHERE {pk} = %s "
        f"UNION ALL SELECT e.{pk} FROM {table} e JOIN down ON e.{parent} = down.id) "
        f"SELECT id FROM up UNION SELECT id FROM down"
    )


def _chain(entry: RollEntry) -> list[RollEntry]:
    """Every version of the roll, from the original to the latest re-roll
    (each version has at most one child), in two queries however long."""
    with connection.cursor() as cursor:
        cursor.execute(_chain_sql(), [entry.pk, entry.pk])
        ids = [row[0] for row in cursor.fetchall()]
    versions = {e.pk: e for e in RollEntry.objects.filter(pk__in=ids).select_related("user")}
    versions[entry.pk] = entry
    return sorted(versions.values(), key=lambda version: version.seq)


def _epoch_open(entry: RollEntry) -> RollEntry:
    return RollEntry.objects.get(campaign=entry.campaign, kind=RollEntry.Kind.EPOCH_OPEN, epoch=entry.epoch)


def _bundle(entry: RollEntry, *, readable: bool = True, epoch: RollEntry | None = None) -> dict:
    """The §3.10 bundle: everything the offline verifier needs for this roll
    (``epoch``: its epoch's opening entry, when already loaded).

    A sealed roll's opening (and its parent's) goes only to a reader allowed
    to see it; the others get its chain position alone.
    """
    keys = settings.ROLLOG_KEYS
    epoch = epoch or _epoch_open(entry)
    head = intact_head(entry.campaign)
    head_entry = RollEntry.objects.get(campaign=entry.campaign, seq=head.seq)
    disclosed = readable or not entry.is_sealed
    children = list(RollEntry.objects.filter(parent=entry).values_list("permalink", flat=True)) if disclosed else []
    parent = RollEntry.objects.get(pk=entry.parent_id) if entry.parent_id and disclosed else None
    return rollog.roll_bundle(
        entry.signed,
        epoch_open=epoch.signed,
        public_key=keys.public_key_hex,
        parent=parent.signed if parent else None,
        parent_opening=bytes(parent.opening) if parent is not None and parent.is_sealed else None,
        opening=bytes(entry.opening) if entry.is_sealed and disclosed else None,
        head=head_entry.signed,
        children=children,
    )


def _post_readable(access: Access, post: Post | None) -> bool:
    """May this reader open the post? (A whisper or a private scene says no.)"""
    if post is None:
        return False
    return perms.can_read_post(access, post) and (not post.hidden or perms.can_see_hidden_text(access, post))


def _nearby(entry: RollEntry, versions: list[RollEntry], access) -> list[RollEntry]:
    """The same user's other rolls in the same scene within ±30 minutes
    (§3.10), of those the reader may read."""
    if entry.user_id is None:
        return []
    return list(
        readable_rolls(access)
        .filter(
            campaign=entry.campaign,
            user=entry.user,
            scene=entry.scene,
            created_at__gte=entry.created_at - NEARBY_WINDOW,
            created_at__lte=entry.created_at + NEARBY_WINDOW,
        )
        .exclude(pk__in=[v.pk for v in versions])
        .order_by("seq")[:NEARBY_LIMIT]
    )


def key_fingerprint(public_key_hex: str) -> str:
    """SHA-256 of the raw public key, in groups of four hex digits (first 128 bits)."""
    digest = hashlib.sha256(bytes.fromhex(public_key_hex)).hexdigest()[:32]
    return " ".join(digest[i : i + 4] for i in range(0, 32, 4))


def _proof(bundle: dict) -> tuple[verify_roll.RollProof | None, str | None]:
    """The server's own run of the offline verifier over the bundle it serves."""
    public_key = verify_roll.parse_public_key(settings.ROLLOG_KEYS.public_key_hex)
    try:
        return verify_roll.verify_bundle(bundle, public_key), None
    except rollog.RollogError as exc:
        return None, exc.message
    except (KeyError, TypeError, ValueError) as exc:
        return None, repr(exc)


def _sealed_headers(response: HttpResponse, entry: RollEntry) -> HttpResponse:
    """What a sealed roll's page, bundle or badge says depends on who asks:
    never kept by a shared cache."""
    if entry.is_sealed:
        response["Cache-Control"] = "private, no-cache"
        response["Vary"] = "Cookie"
    return response


def _permalink_page(request: HttpRequest, permalink: str, access: Access) -> dict:
    """A roll's page for the reader of ``access``: ``{"html", "private"}``
    (``private``: the reader sees only its place in the chain), and when a
    pending activation's deadline changes what it shows, the ``"seconds"``
    until then."""
    entry = _entry_for(permalink)
    access = dataclasses.replace(access, campaign=entry.campaign)
    readable = can_read_roll(access, entry)
    epoch_open = _epoch_open(entry)
    bundle = _bundle(entry, readable=readable, epoch=epoch_open)
    proof, problem = _proof(bundle)
    public_key = settings.ROLLOG_KEYS.public_key_hex
    common = {
        "entry": entry,
        "outer": entry.outer,
        "verified": proof is not None,
        "problem": problem,
        "bundle": bundle,
        "epoch_open": epoch_open,
        "anchor": epoch_open.entry["anchor"],
        "public_key": public_key,
        "fingerprint": key_fingerprint(public_key),
        **fragments.csrf_context(),
    }
    if not readable:
        # Its place in the chain, its time and the check of both: nothing more.
        return {"html": render_to_string("rolls/roll_private.html#roll-page", common, request=request), "private": True}
    signed_entry = entry.entry
    draws, blocks = [], []
    if proof is not None and proof.stream is not None:
        blocks = [b.hex() for b in proof.stream.blocks]
        draws = [
            {"offset": d.offset, "size": d.size, "value": d.value, "faces": d.faces, "die": d.die}
            for d in proof.stream.draws
        ]
    versions = _chain(entry)
    post_readable = _post_readable(access, entry.post)
    card = presenters.permalink_card(entry, access=access, versions=[v for v in versions if v.seq <= entry.seq])
    # Links to paste elsewhere: the site's public address, whatever host the request came in on.
    link = site_url(entry.get_absolute_url())
    badge = site_url(reverse("rolls:roll-badge", args=[entry.permalink]))
    context = {
        **common,
        "card": card,
        "signed_entry": signed_entry,
        "versions": versions,
        "nearby": _nearby(entry, versions, access),
        "post": entry.post if post_readable else None,
        "post_hidden": entry.post_id is not None and not post_readable,
        "reveal": getattr(versions[0], "reveal", None) if versions[0].audience == RollEntry.Audience.GM else None,
        "message": verify_roll.roll_message(signed_entry),
        "blocks": blocks,
        "draws": draws,
        "link": link,
        "bbcode": f"[url={link}][img]{badge}[/img][/url]",
        "markdown": f"[![{_('Tirada verificada')}]({badge})]({link})",
    }
    pending = card.get("pending")
    return {
        "html": render_to_string("rolls/roll_detail.html#roll-page", context, request=request),
        "private": False,
        "seconds": fragments.seconds_until([pending.deadline]) if pending is not None else None,
    }


@require_safe
def roll_permalink(request: HttpRequest, permalink: str) -> HttpResponse:
    """A roll's page, as the cache keeps it for this reader
    (``campaigns.fragments``) until the log's head moves (its bundle carries
    the head), its stored bytes change or anything else it shows changes."""
    found = get_object_or_404(
        RollEntry.objects.rolls()
        .select_related("campaign")
        .only(
            "permalink",
            "audience",
            "entry_bytes",
            "signature",
            "opening",
            "campaign_id",
            "campaign__gm_id",
            "campaign__visibility",
        )
        .annotate(
            head=Subquery(CampaignLog.objects.filter(campaign=OuterRef("campaign")).values("seq")[:1]),
            head_broken=head_broken("campaign"),
        ),
        permalink=permalink,
    )
    if found.head_broken:
        raise LogHeadMismatch(found.campaign)
    content_versions = fragments.versions(fragments.campaign_scope(found.campaign_id), fragments.PEOPLE)
    access = fragments.reader_access(request.user, found.campaign, content_versions[0])
    key = fragments.key(
        "roll",
        found.pk,
        *content_versions,
        found.head,
        # What the page verified: the row's own stored bytes (altered, the page says so at once).
        fragments.digest(bytes(found.entry_bytes), bytes(found.signature), bytes(found.opening or b"")),
        fragments.viewer(request.user, access.standing),
        # The page's links to share are absolute, under SITE_URL.
        fragments.digest(site_url("/")),
    )
    page = fragments.cached(key, lambda: _permalink_page(request, permalink, access))
    template = "rolls/roll_private.html" if page["private"] else "rolls/roll_detail.html"
    response = render(request, template, {"entry": found, "content": fragments.with_csrf(request, page["html"])})
    return _sealed_headers(response, found)


@require_safe
def roll_json(request: HttpRequest, permalink: str) -> HttpResponse:
    entry = _entry_for(permalink)
    readable = can_read_roll(campaign_access(request.user, entry.campaign), entry)
    response = _json(_bundle(entry, readable=readable))
    response["Content-Disposition"] = f'inline; filename="{entry.permalink}.json"'
    response["Access-Control-Allow-Origin"] = "*"
    return _sealed_headers(response, entry)


@require_safe
@xframe_options_exempt
def roll_badge(request: HttpRequest, permalink: str) -> HttpResponse:
    """A small SVG of the result, to paste into other forums (a sealed roll
    says only "private" to readers who may not see it)."""
    entry = _entry_for(permalink)
    readable = can_read_roll(campaign_access(request.user, entry.campaign), entry)
    signed_entry = entry.entry if readable else entry.outer
    response = render(
        request,
        "rolls/badge.svg",
        {
            "entry": entry,
            "signed_entry": signed_entry,
            "game": signed_entry.get("game") or {},
            "line": presenters.badge_line(signed_entry) if readable else None,
            "private": not readable,
        },
        content_type="image/svg+xml; charset=utf-8",
    )
    response["Cache-Control"] = "public, max-age=86400"
    # Other forums embed the badge as an image.
    response["Cross-Origin-Resource-Policy"] = "cross-origin"
    return _sealed_headers(response, entry)


@require_safe
def rollog_keys(request: HttpRequest) -> HttpResponse:
    keys = settings.ROLLOG_KEYS
    document = {
        "format": rollog.FORMAT,
        "keys": [
            {
                "public_key": keys.public_key_hex,
                "algorithm": "Ed25519",
                "fingerprint": key_fingerprint(keys.public_key_hex),
                "valid_from": None,
                "valid_until": None,
            }
        ],
    }
    response = _json(document)
    response["Access-Control-Allow-Origin"] = "*"
    return response


@require_safe
def verifier_download(request: HttpRequest) -> FileResponse:
    """The single-file verifier (``rolls/verify.py``), byte for byte the code this server checks rolls with."""
    path = Path(verify_roll.__file__).with_name("verify.py")
    return FileResponse(path.open("rb"), as_attachment=True, filename="verify.py", content_type="text/x-python")


@require_safe
def log_export(request: HttpRequest, slug: str) -> HttpResponse:
    """The campaign's log for the L2 audit: members, or everyone for public campaigns.

    Pages of EXPORT_PAGE_SIZE entries from ``?desde=<seq>``; ``next`` is the
    address of the following page under ``SITE_URL``, null on the last.
    """
    campaign, access = campaign_for(request, slug)
    log = get_object_or_404(CampaignLog, campaign=campaign)
    raw_start = request.GET.get("desde", "0")
    if not (raw_start.isascii() and raw_start.isdigit()) or len(raw_start) > 18:
        return HttpResponseBadRequest(
            _("«desde» debe ser un número de entrada (0 o más)."), content_type="text/plain; charset=utf-8"
        )
    start = int(raw_start)
    entries = list(RollEntry.objects.filter(campaign=campaign, seq__gte=start).order_by("seq")[: EXPORT_PAGE_SIZE + 1])
    next_url = None
    if len(entries) > EXPORT_PAGE_SIZE:
        path = f"{reverse('rolls:log-export', args=[campaign.slug])}?desde={entries[-1].seq}"
        next_url = site_url(path)
        entries = entries[:EXPORT_PAGE_SIZE]
    # Sealed entries carry their openings only for readers allowed to see them.
    readable = readable_ids(access, entries)
    page = rollog.export_page(
        log.log_id,
        (
            rollog.ref_with_opening(e.signed, bytes(e.opening) if e.pk in readable and e.is_sealed else None)
            for e in entries
        ),
        public_key=settings.ROLLOG_KEYS.public_key_hex,
        start=start,
        next_url=next_url,
    )
    response = _json(page)
    response["Cache-Control"] = "private, no-cache"
    response["Vary"] = "Cookie"
    response["Content-Disposition"] = f'inline; filename="{log.log_id}-log-{start}.json"'
    return response


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def free_roll(request: HttpRequest, slug: str) -> HttpResponse:
    """A free roll in dice notation by the GM or a player, through the campaign's log."""
    campaign, _access = campaign_for(
        request, slug, need=perms.can_play, denied=_("Solo los jugadores y la dirección pueden tirar en esta partida.")
    )
    log = services.log_open(campaign=campaign)
    if request.method == "POST":
        form = FreeRollForm(request.POST)
        if not form.is_valid() and "client_seed" in form.errors:
            # Only a script sends a malformed seed (ours makes 32 hex digits).
            return HttpResponseBadRequest(
                " ".join(form.errors["client_seed"]), content_type="text/plain; charset=utf-8"
            )
        if form.is_valid():
            try:
                entry = services.free_roll(
                    campaign=campaign,
                    user=request.user,
                    text=form.cleaned_data["notation"],
                    purpose=form.cleaned_data["purpose"],
                    client_seed=form.cleaned_data["client_seed"] or None,
                    seen=form.cleaned_data["seen"] or None,
                )
            except ValidationError as exc:
                form.add_error("notation", exc)
            else:
                messages.success(request, _("Tirada hecha y firmada."))
                return redirect(entry)
        # Nothing was rolled: the same client seed may be sent again, with the
        # head this page now shows.
        form.data = form.data.copy()
        form.data["seen"] = CampaignLog.objects.get(campaign=campaign).head_hash
    else:
        form = FreeRollForm(initial={"seen": log.head_hash})
    return render(request, "rolls/free_roll.html", {"campaign": campaign, "form": form})


def _id_filter(request: HttpRequest, name: str) -> int | None:
    """A filter's chosen id from the query string: None for "all", ValueError
    for anything that is not a number (only a hand-made address sends one)."""
    raw = request.GET.get(name, "")
    if raw == "":
        return None
    # ASCII digits only, and short enough for a database integer.
    if not (raw.isascii() and raw.isdigit()) or len(raw) > 18:
        raise ValueError(name)
    return int(raw)


def _log_head(campaign) -> int:
    """The seq of the campaign's last entry: it moves with every roll and re-roll.
    Raises ``LogHeadMismatch`` if the head does not name the last entry."""
    seq, broken = (
        CampaignLog.objects.filter(campaign=campaign)
        .annotate(broken=head_broken("campaign"))
        .values_list("seq", "broken")
        .first()
    ) or (0, False)
    if broken:
        raise LogHeadMismatch(campaign)
    return seq


def _roll_log_context(access, chosen: dict, page: str | None) -> dict:
    campaign = access.campaign
    scenes = perms.visible_scenes(access)
    # Rolls of a post or scene the reader may not read (a whisper, a split
    # party) and unrevealed secret rolls of the GM stay out.
    visible = readable_rolls(access)
    rolls = visible
    if chosen["escena"] is not None:
        rolls = rolls.filter(scene_id=chosen["escena"])
    if chosen["personaje"] is not None:
        rolls = rolls.filter(character_id=chosen["personaje"])
    if chosen["jugador"] is not None:
        rolls = rolls.filter(user_id=chosen["jugador"])
    children = RollEntry.objects.filter(parent=OuterRef("pk"))
    rolls = (
        # The post names the owner a taken-over character's roll was made for.
        rolls.select_related("user", "character", "scene", "post__on_behalf_of")
        .annotate(
            superseded=Exists(children), superseded_by=Subquery(children.values("seq")[:1]), parent_seq=F("parent__seq")
        )
        .order_by("-seq")
    )
    page_obj = Paginator(rolls, ROLL_LOG_PAGE_SIZE).get_page(page)
    # The log has its own columns for the purpose and the versions: compact cards.
    cards = presenters.log_cards(list(page_obj.object_list), access=access)
    for entry in page_obj.object_list:
        entry.card = cards[entry.pk]
    return {
        "campaign": campaign,
        "page_obj": page_obj,
        "chosen": chosen,
        # The filters offer what the readable rolls hold, by the names they show.
        "scenes": scenes.filter(roll_entries__in=visible).only("title").distinct().order_by("title", "pk"),
        # The characters of the readable rolls (the log names its character model by its field).
        "characters": RollEntry.character.field.related_model.objects.filter(roll_entries__in=visible)
        .only("name")
        .distinct()
        .order_by("name", "pk"),
        "players": get_user_model()
        .objects.filter(roll_entries__in=visible)
        .only("username", "display_name")
        .distinct()
        .order_by("display_name", "pk"),
    }


@require_safe
def roll_log(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    """Every roll and re-roll of the campaign, newest first, superseded versions
    included: fishing for a better roll shows.

    Members see it, and everyone for public campaigns; rolls made in a scene
    the reader may not open (a private split-party scene) are left out, and
    the filters offer only what the remaining rolls contain.

    The cache keeps what a reader was shown (``campaigns.fragments``) until
    the log's head moves or anything else it shows changes.
    """
    campaign, access, content_versions = fragments.campaign_for_reading(request, slug)
    try:
        chosen = {name: _id_filter(request, name) for name in ("escena", "personaje", "jugador")}
    except ValueError as exc:
        return HttpResponseBadRequest(
            _("«%(name)s» debe ser un número.") % {"name": exc.args[0]}, content_type="text/plain; charset=utf-8"
        )
    page = request.GET.get("pagina") or "1"
    part = "roll-rows" if wants_fragment(request) else "roll-log-page"
    head = _log_head(campaign)

    def rendered() -> str:
        context = {**_roll_log_context(access, chosen, page), **fragments.csrf_context()}
        return render_to_string(f"rolls/roll_log.html#{part}", context, request=request)

    if not (page.isascii() and page.isdigit() and len(page) <= 6):
        content = mark_safe(rendered())  # our own template's output
    else:
        key = fragments.key(
            part,
            campaign.pk,
            *content_versions,
            head,
            fragments.viewer(request.user, access.standing),
            chosen["escena"],
            chosen["personaje"],
            chosen["jugador"],
            page,
        )
        content = fragments.fragment(request, key, rendered)
    if wants_fragment(request):
        response = HttpResponse(content)
    else:
        response = render(request, "rolls/roll_log.html", {"campaign": campaign, "content": content})
    patch_vary_headers(response, ("HX-Request",))
    return response
