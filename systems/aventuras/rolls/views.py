"""The chachi chain and the hero point re-roll from an Aventuras roll's card
(A5, A12, A22, A24), and «¡Ya está!».

Each action answers htmx with the updated card (``#tirada-<pk>``, the
refusal shown in it) and everything else with a redirect to the post
(Post/Redirect/Get), or the roll's own page with the refusal. Who may act is
``services.may_act``'s: these views scope what the user may see (404:
outsiders, a post out of sight, another game's roll), refuse other members
(403) and show the services' refusals in Spanish, nothing changed.
"""

from __future__ import annotations

from collections.abc import Callable

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.utils.cache import patch_vary_headers
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods, require_POST

from campaigns.permissions import Access, campaign_access
from hitos_site.htmx import HtmxHttpRequest, after_action, wants_fragment
from systems.aventuras.rolls import services
from systems.aventuras.rolls.forms import ChachiForm, RerollForm
from table.access import may_read_table_roll
from table.cards import card, card_versions
from table.models import TableRoll


def table_roll_for(request: HttpRequest, table_roll_id: int, *, closing: bool = False) -> tuple[TableRoll, Access]:
    """An Aventuras roll the user may read (404 otherwise) and may act on
    (403 for the other members); ``closing``: the GM may close any roll."""
    table_roll = get_object_or_404(
        TableRoll.objects.select_related(
            "campaign__gm", "scene", "post__scene", "first", "latest", "character", "owner"
        ),
        pk=table_roll_id,
    )
    access = campaign_access(request.user, table_roll.campaign)
    if not may_read_table_roll(access, table_roll) or not services.is_aventuras(table_roll.first):
        raise Http404
    if closing and access.is_gm:
        return table_roll, access
    if not services.may_act(table_roll, request.user, is_gm=access.is_gm):
        raise PermissionDenied(_("Solo quien hizo la tirada decide qué hacer con ella."))
    return table_roll, access


def _card(table_roll: TableRoll, access: Access) -> dict:
    """The roll's card as it is now: its versions loaded at once
    (``table.cards.card_versions``), so a long chain costs no more queries."""
    fresh = TableRoll.objects.select_related("campaign", "latest", "owner", "character", "post", "scene").get(
        pk=table_roll.pk
    )
    versions = card_versions([fresh])[fresh.pk]
    # The latest version as loaded with the roll (every field read), the older ones as the card reads them.
    return card(fresh.latest, access=access, table_roll=fresh, versions=[*versions[:-1], fresh.latest])


def _kept(posted: dict | None) -> dict:
    """What a refused re-roll posted, to tick the same boxes again."""
    if posted is None:
        return {"reroll_positions": [], "reroll_with_experience": False}
    positions = [int(p) for p in posted.getlist("positions") if str(p).isdigit()]
    return {"reroll_positions": positions, "reroll_with_experience": bool(posted.get("with_experience"))}


def _card_response(
    request: HtmxHttpRequest, table_roll: TableRoll, access: Access, error: str = "", posted=None
) -> HttpResponse:
    """The roll card as it is now, for an htmx swap of ``#tirada-<pk>``
    (a refused re-roll keeps the dice ticked: ``posted``)."""
    response = render(
        request,
        "aventuras/rolls/_roll_card_update.html",
        {"card": _card(table_roll, access), "chain_error": error, **_kept(posted)},
    )
    patch_vary_headers(response, ("HX-Request",))
    return response


def _back_url(table_roll: TableRoll) -> str:
    """Where the roll is read: its post, or its own page."""
    if table_roll.post_id:
        return table_roll.post.get_absolute_url()
    return table_roll.latest.get_absolute_url()


def _page(
    request, table_roll: TableRoll, access: Access, *, error: str = "", status: int = 200, posted=None
) -> HttpResponse:
    context = {
        "table_roll": table_roll,
        "campaign": table_roll.campaign,
        "card": _card(table_roll, access),
        "chain_error": error,
        "back_url": _back_url(table_roll),
        **_kept(posted),
    }
    response = render(request, "aventuras/rolls/roll.html", context, status=status)
    patch_vary_headers(response, ("HX-Request",))
    return response


@login_required
@require_http_methods(["GET", "HEAD"])
def roll_page(request: HtmxHttpRequest, table_roll_id: int) -> HttpResponse:
    """The roll's card with what its roller may still do (a page of its own,
    for browsers without JavaScript and for links from notices)."""
    table_roll, access = table_roll_for(request, table_roll_id, closing=True)
    if wants_fragment(request):
        return _card_response(request, table_roll, access)
    return _page(request, table_roll, access)


def _act(request: HtmxHttpRequest, table_roll: TableRoll, access: Access, do: Callable[[], str]) -> HttpResponse:
    """Run ``do`` (it returns the success message, or raises ``ValidationError``)
    and answer: htmx the card, else a redirect or the roll's page with the refusal."""
    try:
        success = do()
    except ValidationError as exc:
        error = " ".join(exc.messages)
        if wants_fragment(request):
            return _card_response(request, table_roll, access, error, posted=request.POST)
        return _page(request, table_roll, access, error=error, status=400, posted=request.POST)
    return after_action(
        request,
        fragment=lambda _error: _card_response(request, table_roll, access),
        url=_back_url(table_roll),
        success=success,
    )


def _form_error(form) -> str:
    return " ".join(e for errors in form.errors.values() for e in errors)


@login_required
@require_POST
def convert(request: HtmxHttpRequest, table_roll_id: int) -> HttpResponse:
    """A5 — turn a 6 into a 5 and add a die."""
    table_roll, access = table_roll_for(request, table_roll_id)
    form = ChachiForm(request.POST)

    def do() -> str:
        if not form.is_valid():
            raise ValidationError(_form_error(form))
        services.convert(
            table_roll=table_roll,
            user=request.user,
            position=form.cleaned_data["position"] - 1,
            client_seed=form.cleaned_data.get("client_seed") or None,
        )
        return _("6 convertido en 5: un dado más.")

    return _act(request, table_roll, access, do)


@login_required
@require_POST
def effect(request: HtmxHttpRequest, table_roll_id: int) -> HttpResponse:
    """A12 — spend a chachi on a narrative effect."""
    table_roll, access = table_roll_for(request, table_roll_id)
    form = ChachiForm(request.POST)

    def do() -> str:
        if not form.is_valid():
            raise ValidationError(_form_error(form))
        services.spend_on_effect(table_roll=table_roll, user=request.user, position=form.cleaned_data["position"] - 1)
        return _("Éxito chachi gastado en un efecto: sigue contando como éxito.")

    return _act(request, table_roll, access, do)


@login_required
@require_POST
def reroll(request: HtmxHttpRequest, table_roll_id: int) -> HttpResponse:
    """A22 — a hero point re-rolls the dice chosen (A28: or 2 XP)."""
    table_roll, access = table_roll_for(request, table_roll_id)
    form = RerollForm(request.POST, values=(table_roll.facts or {}).get("values") or [])

    def do() -> str:
        if not form.is_valid():
            raise ValidationError(_form_error(form))
        services.hero_reroll(
            table_roll=table_roll,
            user=request.user,
            positions=[p - 1 for p in form.cleaned_data["positions"]],
            with_experience=form.cleaned_data["with_experience"],
            client_seed=form.cleaned_data.get("client_seed") or None,
        )
        return _("Dados repetidos con un punto de Héroe.")

    return _act(request, table_roll, access, do)


@login_required
@require_POST
def settle(request: HtmxHttpRequest, table_roll_id: int) -> HttpResponse:
    """«¡Ya está!» — the result is final."""
    table_roll, access = table_roll_for(request, table_roll_id, closing=True)

    def do() -> str:
        services.settle(table_roll, by=request.user)
        return _("¡Ya está! La tirada queda cerrada.")

    return _act(request, table_roll, access, do)
