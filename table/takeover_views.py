"""Playing an absent player's character (``table.takeover``): the
direction's form to give it to someone, handing it back, and what the
takeovers add to the GM's dashboard and the campaign page.

Both views load the campaign through ``campaigns.access.campaign_for``:
outsiders of a private campaign get 404, members without the right 403.
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods, require_POST

from campaigns import notify
from campaigns import permissions as perms
from campaigns.access import campaign_for
from campaigns.extensions import Additions
from campaigns.permissions import Access
from hitos_site.htmx import HtmxHttpRequest, form_again, page_or_fragment, redirect_after
from table import takeover as takeovers
from table.forms import TakeoverEndForm, TakeoverForm
from table.models import Takeover


def _dashboard_url(campaign) -> str:
    return reverse("campaigns:dashboard", args=[campaign.slug]) + "#personajes-llevados"


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def takeover_start(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    """The direction gives an away player's character to itself or to a
    player it names (for one scene), as far as the owner allows."""
    campaign, access = campaign_for(
        request,
        slug,
        need=perms.can_manage,
        denied=_("Solo la dirección de la partida da el personaje de un ausente a otro."),
    )
    found = takeovers.candidates(campaign)
    direction = notify.gm_ids(campaign)
    initial = {"taken_by": request.user.pk}
    chosen = request.GET.get("personaje", "")
    if chosen.isascii() and chosen.isdigit() and len(chosen) <= 18:
        initial["character"] = int(chosen)
    form = TakeoverForm(
        request.POST if request.method == "POST" else None,
        initial=initial,
        campaign=campaign,
        candidates=found,
        direction=direction,
    )
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            takeover = takeovers.takeover_start(
                access=access,
                character=data["character"],
                taken_by=data["taken_by"],
                scene=data["scene"],
                reason=data["reason"],
            )
        except ValidationError as exc:
            form.add_error(exc.code if exc.code in form.fields else None, exc)
        else:
            messages.success(
                request,
                _("%(name)s lleva ahora a %(character)s; su dueño ha sido avisado.")
                % {"name": takeover.taken_by.public_name, "character": takeover.character.name},
            )
            return redirect_after(request, _dashboard_url(campaign))
    context = {
        "campaign": campaign,
        "form": form,
        "candidates": found,
        "has_candidates": any(c.current is None for c in found),
    }
    return page_or_fragment(request, "table/takeover/start.html", "takeover-form", context)


@login_required
@require_POST
def takeover_end(request: HtmxHttpRequest, slug: str, takeover_id: int) -> HttpResponse:
    """The character goes back to its owner: asked by the direction, by who
    carries it, or by the owner («Recuperar mi personaje»)."""
    campaign, access = campaign_for(request, slug)
    takeover = get_object_or_404(
        Takeover.objects.select_related("character", "owner", "taken_by", "scene"), pk=takeover_id, campaign=campaign
    )
    takeover.campaign = campaign
    if not takeovers.may_end(access, takeover):
        raise PermissionDenied(_("Solo la dirección, quien lleva el personaje o su dueño pueden devolverlo."))
    url = _dashboard_url(campaign) if access.is_gm else campaign.get_absolute_url()
    form = TakeoverEndForm(request.POST)
    if not form.is_valid():
        # Back with the reason typed and why not: a page of its own, or over the form it came from.
        context = {
            "campaign": campaign,
            "t": takeover,
            "form": form,
            "back_url": url,
            "since": takeovers.in_campaign_zone(takeover.started_at, campaign),
            **_end_button(takeover, request.user),
        }
        response = page_or_fragment(request, "table/takeover/end.html", "takeover-end-form", context)
        return form_again(response, f"#devolver-{takeover.pk}") if request.htmx else response
    try:
        takeovers.takeover_end(access=access, takeover=takeover, reason=form.cleaned_data["reason"])
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
    else:
        if request.user.pk == takeover.owner_id:
            message = _("%(character)s vuelve a ser tuyo.") % {"character": takeover.character.name}
        else:
            message = _("%(character)s vuelve a su dueño, %(owner)s.") % {
                "character": takeover.character.name,
                "owner": takeover.owner.public_name,
            }
        messages.success(request, message)
    return redirect_after(request, url)


def _end_button(takeover: Takeover, user) -> dict:
    """The end form's button: the owner takes the character back, anyone else hands it back."""
    if user.pk == takeover.owner_id:
        return {"label": _("Recuperar mi personaje"), "primary": True}
    return {"label": _("Devolver"), "primary": False}


# --- What the takeovers add to the forum's pages (``campaigns.extensions``) ----------------


def dashboard_panel(request: HttpRequest, access: Access) -> Additions | None:
    """The direction's dashboard: the away players' characters that may be
    taken (with what each owner allows) and the current takeovers, in a
    constant number of queries whatever their number."""
    if not perms.can_manage(access):
        return None
    campaign = access.campaign
    found = takeovers.candidates(campaign)
    current = takeovers.current_takeovers(campaign)
    if not found and not current:
        return None
    direction = notify.gm_ids(campaign) if current else set()
    by_character = {candidate.character.pk: candidate for candidate in found}
    for takeover in current:
        takeover.by_direction = takeover.taken_by_id in direction
        takeover.since = takeovers.in_campaign_zone(takeover.started_at, campaign)
        # Its owner is back (the clock has not noticed it yet) or allows it no longer.
        takeover.paused = takeovers.paused(
            takeover, by_character.get(takeover.character_id), by_direction=takeover.by_direction
        )
    values = {"takeover_candidates": found, "current_takeovers": current}
    return Additions(panels=[("table/takeover/_dashboard.html", values)])


def campaign_panel(request: HttpRequest, access: Access) -> Additions | None:
    """The campaign page of an owner whose character someone carries, and
    of whoever carries one (one query for a member; none for anyone else)."""
    if not access.user.is_authenticated or not access.is_member:
        return None
    mine = takeovers.takeovers_of(access.campaign, access.user)
    if not mine:
        return None
    for takeover in mine:
        takeover.since = takeovers.in_campaign_zone(takeover.started_at, access.campaign)
    values = {
        "carried_for_me": [t for t in mine if t.owner_id == access.user.pk],
        "carried_by_me": [t for t in mine if t.taken_by_id == access.user.pk],
    }
    return Additions(panels=[("table/takeover/_campaign.html", values)])
