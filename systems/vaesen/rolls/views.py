"""Pushing a Vaesen test from its card (V6, V7, V10).

The form opens under the card (htmx) or on its own page; a done push answers
htmx with the updated card (``#tirada-<pk>``) and everything else with a
redirect to the post (Post/Redirect/Get). Who may push is decided by
``systems.vaesen.rolls.services.push_refusal``: these views scope what the
user may see (404), refuse other members (403) and show the service's
refusals in Spanish, nothing changed.
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.cache import patch_vary_headers
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods, require_POST

from campaigns.permissions import Access, campaign_access
from hitos_site.htmx import HtmxHttpRequest, after_action, page_or_fragment, wants_fragment
from rules import vaesen
from systems.vaesen.rolls import services
from systems.vaesen.rolls.forms import InjuryForm, PushForm
from table.access import may_read_table_roll
from table.cards import card
from table.models import TableRoll


def table_roll_for(request: HttpRequest, table_roll_id: int, *, gm_too: bool = False) -> tuple[TableRoll, Access]:
    """A Vaesen test the user may read (404 otherwise: outsiders, a post out
    of sight, another game's roll) and that is theirs, or with ``gm_too``
    the GM's (403 for the other members: only its owner pushes)."""
    table_roll = get_object_or_404(
        TableRoll.objects.select_related(
            "campaign__gm", "scene", "post__scene", "first", "latest", "character", "owner"
        ),
        pk=table_roll_id,
    )
    access = campaign_access(request.user, table_roll.campaign)
    if not may_read_table_roll(access, table_roll) or table_roll.first.signed_game.get("system") != "vaesen":
        raise Http404
    if gm_too and access.is_gm:
        return table_roll, access
    if table_roll.owner_id != request.user.pk:
        if gm_too:
            raise PermissionDenied(_("Solo quien forzó la tirada o la dirección tiran la herida crítica."))
        raise PermissionDenied(_("Solo quien hizo la tirada puede forzarla."))
    return table_roll, access


def _card(request: HtmxHttpRequest, table_roll: TableRoll, access: Access, error: str = "") -> HttpResponse:
    """The roll card as it is now, for an htmx swap of ``#tirada-<pk>``."""
    fresh = TableRoll.objects.select_related("campaign", "latest", "owner", "character", "post").get(pk=table_roll.pk)
    context = {"card": card(fresh.latest, access=access, table_roll=fresh), "push_error": error}
    response = render(request, "vaesen/_roll_card_update.html", context)
    patch_vary_headers(response, ("HX-Request",))
    return response


def _back_url(table_roll: TableRoll) -> str:
    """Where the roll is read: its post, or its own page."""
    if table_roll.post_id:
        return table_roll.post.get_absolute_url()
    return table_roll.latest.get_absolute_url()


def _free(table_roll: TableRoll) -> tuple[list[str], str | None]:
    """The conditions the push may mark and why it may not happen (None: it may)."""
    sheet = getattr(table_roll.character, "vaesen", None) if table_roll.character_id else None
    conditions = sheet.conditions() if sheet is not None else None
    refusal = services.push_refusal(table_roll, table_roll.owner, conditions=conditions)
    if refusal is not None or conditions is None:
        return [], refusal
    return services.free_conditions(conditions, vaesen.ConditionKind(table_roll.facts["kind"])), None


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def push(request: HtmxHttpRequest, table_roll_id: int) -> HttpResponse:
    """V6, V7 — push a failed test once: the dice that are not 6 re-rolled
    and a condition of the attribute's kind, chosen among the free ones."""
    table_roll, access = table_roll_for(request, table_roll_id)
    free, refusal = _free(table_roll)
    form = PushForm(request.POST if request.method == "POST" else None, free=free)
    if request.method == "POST":
        error = refusal or ""
        # With a browser seed the service is asked even when the roll looks
        # pushed already: a retried form gets its own push back (the seed is
        # the idempotency key), anything else the same refusal.
        if form.is_valid() and (not error or form.cleaned_data["client_seed"]):
            try:
                services.push(
                    table_roll=table_roll,
                    user=request.user,
                    condition=form.cleaned_data["condition"],
                    client_seed=form.cleaned_data.get("client_seed") or None,
                )
            except ValidationError as exc:
                error = " ".join(exc.messages)
            else:
                return after_action(
                    request,
                    fragment=lambda _error: _card(request, table_roll, access),
                    url=_back_url(table_roll),
                    success=_("Tirada forzada."),
                )
        elif not error:
            error = " ".join(e for errors in form.errors.values() for e in errors)
        if wants_fragment(request):
            return _card(request, table_roll, access, error)
        refusal = error
    context = {
        "table_roll": table_roll,
        "campaign": table_roll.campaign,
        "roll_card": {**card(table_roll.latest, access=access, table_roll=None), "card_id": f"tirada-{table_roll.pk}"},
        "form": form,
        "breaks": not free,
        "refusal": refusal,
        "action": request.path,
        "back_url": _back_url(table_roll),
    }
    return page_or_fragment(request, "vaesen/push.html", "push-form", context)


@login_required
@require_POST
def injury(request: HtmxHttpRequest, table_roll_id: int) -> HttpResponse:
    """V10, V13 — roll the critical injury of a push that made the character
    Broken: a new card in the same post. Refusals come back as a message."""
    table_roll, access = table_roll_for(request, table_roll_id, gm_too=True)
    form = InjuryForm(request.POST)
    if not form.is_valid():
        messages.error(request, " ".join(e for errors in form.errors.values() for e in errors))
        return redirect(_back_url(table_roll))
    try:
        services.roll_injury(
            table_roll=table_roll,
            user=request.user,
            is_gm=access.is_gm,
            client_seed=form.cleaned_data["client_seed"] or None,
        )
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
    else:
        messages.success(request, _("Herida crítica tirada: queda anotada en la ficha."))
    return redirect(_back_url(table_roll))
