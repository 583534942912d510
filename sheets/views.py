"""The sheet addresses every game system shares, and the pages that need no
game: the campaign's sheet options and a sheet's history.

``system_page`` serves the rest (list, creation, the sheet, review, print,
export, import) through the campaign's system (``sheets.kinds``). Every view
loads its objects through the access helpers: outsiders (and members who may
not see a sheet) get 404, members without the right get 403.
"""

from __future__ import annotations

from collections.abc import Callable

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.cache import patch_vary_headers
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods, require_safe

from campaigns import fragments
from campaigns.models import Campaign
from campaigns.permissions import Access, campaign_access, can_view_campaign
from hitos_site.htmx import HtmxHttpRequest, page_or_fragment, wants_fragment
from sheets import kinds
from sheets import permissions as perms
from sheets.forms import SheetOptionsForm
from sheets.models import Character, SheetEvent

HISTORY_PAGE_SIZE = 50


def sheet_campaign(slug: str, *, related: tuple[str, ...] = ("gm", "sheet_options")) -> Campaign:
    """The campaign of a sheet address, with what every sheet page reads
    (``related``: what a page reads of it beyond its own row)."""
    return get_object_or_404(Campaign.objects.select_related(*related), slug=slug)


# The shared sheet pages someone without an account may read (when the
# campaign shows its sheets); the rest ask to log in before anything else, so
# they never tell whether a campaign exists.
OPEN_PAGES = ("list", "detail")


def system_page(request: HtmxHttpRequest, slug: str, page: str, **kwargs) -> HttpResponse:
    """A sheet page of the campaign's game system (404 when it has none)."""
    if page not in OPEN_PAGES and not request.user.is_authenticated:
        return redirect_to_login(request.get_full_path())
    # The sheet itself is mostly served from the cache, which does not need the GM's row.
    campaign = sheet_campaign(slug, related=("sheet_options",)) if page == "detail" else sheet_campaign(slug)
    kind = kinds.get(campaign.system)
    view = kind.pages.get(page) if kind is not None else None
    if view is None:
        raise Http404
    return view(request, campaign, **kwargs)


def cached_sheet_page(
    request: HtmxHttpRequest,
    campaign: Campaign,
    character_id: int,
    *,
    name: str,
    in_play: str,
    template: str,
    build: Callable[[str, Access], dict],
) -> HttpResponse:
    """A system's sheet as the cache keeps it for this reader
    (``campaigns.fragments``) until anything it shows changes: the part in
    play (``in_play``) for an htmx swap, else the whole sheet inside
    ``template``. ``build(part, access)`` makes the part (``{"html",
    "title"}``) and decides who may see it, so the key holds the reader and
    the content versions everything it reads moves; ``name`` tells the
    systems' fragments apart."""
    content_versions = fragments.versions(fragments.campaign_scope(campaign.pk), fragments.PEOPLE)
    access = fragments.reader_access(request.user, campaign, content_versions[0])
    if not can_view_campaign(access):
        raise Http404
    part = in_play if wants_fragment(request) else "sheet-page"
    key = fragments.key(
        f"{name}{part}", campaign.pk, character_id, *content_versions, fragments.viewer(request.user, access.standing)
    )
    page = fragments.cached(key, lambda: build(part, access))
    content = fragments.with_csrf(request, page["html"])
    if part == in_play:
        response = HttpResponse(content)
    else:
        context = {"campaign": campaign, "character": {"name": page["title"]}, "content": content}
        response = render(request, template, context)
    patch_vary_headers(response, ("HX-Request",))
    return response


def sheet_list_context(request: HtmxHttpRequest, campaign: Campaign, access: Access, options, loaded) -> dict:
    """The sheet list's context every system shares: the characters this
    reader may see (``loaded``: the queryset with what the system's rows
    read), split into player characters and NPCs, and what the reader may do."""
    sees_public = perms.sees_public_sheets(access, options)
    characters = list(
        loaded(
            Character.objects.filter(campaign=campaign).listed_for(
                request.user, is_gm=access.is_gm, sees_public=sees_public
            )
        )
    )
    for character in characters:
        character.campaign = campaign
    return {
        "campaign": campaign,
        "access": access,
        "pcs": [c for c in characters if not c.is_npc],
        "npcs": [c for c in characters if c.is_npc],
        "can_create": request.user.is_authenticated and perms.can_create_sheet(access),
        "can_manage": perms.can_manage_sheets(access),
    }


def _sheets_access(request: HtmxHttpRequest, slug: str):
    """A campaign with sheets the user may read (404 otherwise), and the access."""
    campaign = sheet_campaign(slug)
    access = campaign_access(request.user, campaign)
    if not can_view_campaign(access) or not kinds.has_sheets(campaign):
        raise Http404
    return campaign, access


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def sheet_options(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    campaign, access = _sheets_access(request, slug)
    if not perms.can_manage_sheets(access):
        raise PermissionDenied(_("No puedes hacer esto en las fichas de esta partida."))
    form = SheetOptionsForm(request.POST or None, instance=perms.sheet_options(campaign))
    if request.method == "POST" and form.is_valid():
        form.save()
        messages.success(request, _("Opciones de fichas guardadas."))
        return redirect("sheets:sheet-list", campaign.slug)
    return render(request, "sheets/sheet_options.html", {"campaign": campaign, "form": form})


@login_required
@require_safe
def sheet_history(request: HtmxHttpRequest, slug: str, character_id: int) -> HttpResponse:
    campaign, access = _sheets_access(request, slug)
    character = get_object_or_404(Character.objects.filter(campaign=campaign).select_related("owner"), pk=character_id)
    character.campaign = campaign
    if not perms.can_see_sheet(access, character, perms.sheet_options(campaign)):
        raise Http404
    if not perms.can_see_private(access, character):
        raise PermissionDenied(_("No puedes hacer esto con esta ficha."))
    events = SheetEvent.objects.filter(character=character).select_related("actor", "post", "roll")
    page_obj = Paginator(events, HISTORY_PAGE_SIZE).get_page(request.GET.get("pagina"))
    context = {"campaign": campaign, "character": character, "page_obj": page_obj}
    return page_or_fragment(request, "sheets/sheet_history.html", "history-entries", context)
