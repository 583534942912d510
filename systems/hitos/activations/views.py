"""Aspect activations on a roll card (H13–H25, H92) and the GM's drama page.

The forms open inline under the card (htmx) or on their own page; a done
activation answers htmx with the updated card (``#tirada-<pk>``), and
everything else with a redirect to the post (Post/Redirect/Get). Who may act
is decided by ``systems.hitos.activations.services``; these views scope what the user may see
(404) and turn refusals into 403 or form errors.
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest
from django.shortcuts import redirect, render
from django.utils.cache import patch_vary_headers
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods, require_POST, require_safe

from campaigns import permissions as perms
from campaigns.access import campaign_for
from campaigns.models import Campaign
from campaigns.permissions import Access
from hitos_site.htmx import HtmxHttpRequest, after_action, form_again, page_or_fragment, wants_fragment
from rolls.forms import client_seed_field
from rolls.permissions import readable_ids
from rules import hitos
from sheets.models import Character, SheetEvent
from systems.hitos.activations import services as activations
from systems.hitos.activations.access import activation_for, table_roll_for
from systems.hitos.activations.forms import DramaPoolForm, NarrativeForm, NegativeActivationForm, PositiveActivationForm
from systems.hitos.campaign import gm_pool
from systems.hitos.cards import activations_prefetch
from systems.hitos.checks.services import is_arcane, parse_positions
from systems.hitos.models import Activation, HitosEvent
from systems.hitos.sheet.services import gm_pool_set
from table.cards import card
from table.models import TableRoll

RECENT_DRAMA_EVENTS = 30


def _card(request: HtmxHttpRequest, table_roll: TableRoll, access: Access, **extra) -> HttpResponse:
    """The roll card as it is now, for an htmx swap of ``#tirada-<pk>``."""
    fresh = TableRoll.objects.select_related("campaign", "latest", "owner", "character", "post").prefetch_related(
        activations_prefetch()
    )
    table_roll = fresh.get(pk=table_roll.pk)
    roll_card = card(table_roll.latest, access=access, table_roll=table_roll)
    # The viewer's drama points on the scene page follow the activation (out of band).
    mine = Character.objects.filter(campaign=table_roll.campaign, owner=request.user).approved()
    context = {
        "card": roll_card,
        **extra,
        "drama_characters": list(mine.select_related("hitos").only("pk", "name", "hitos__drama_points")),
        "campaign": table_roll.campaign,
        "is_gm": access.is_gm,
    }
    response = render(request, "hitos/_roll_card_update.html", context)
    patch_vary_headers(response, ("HX-Request",))
    return response


def _back_url(table_roll: TableRoll) -> str:
    """Where the roll is read: its post, or its own page."""
    if table_roll.post_id:
        return table_roll.post.get_absolute_url()
    return table_roll.latest.get_absolute_url()


def _form_response(request: HtmxHttpRequest, context: dict, *, invalid: bool = False) -> HttpResponse:
    """The form: a fragment for htmx (an invalid POST is put back where the
    form was, not over the card), the whole page otherwise."""
    response = page_or_fragment(request, "hitos/activation_form.html", "activation-form", context)
    if wants_fragment(request) and invalid:
        return form_again(response, f"#activacion-{context['table_roll'].pk}")
    return response


def _positions(request: HttpRequest) -> list[int] | HttpResponse:
    try:
        return parse_positions(request.POST.getlist("dice"))
    except ValidationError as exc:
        return HttpResponseBadRequest(" ".join(exc.messages), content_type="text/plain; charset=utf-8")


def _client_seed(request: HttpRequest) -> str | None:
    """The re-roll's browser seed sent by a card's button (rollog/v1 §3.3),
    checked as every seed field is; None without JavaScript (the server's
    seed). Raises ``ValidationError`` with the Spanish message."""
    return client_seed_field().clean(request.POST.get("client_seed", "")) or None


def _dice(table_roll: TableRoll, chosen: list[str]) -> list[dict]:
    return [
        {"position": position, "value": value, "label": label, "checked": str(position) in chosen}
        for position, (value, label) in enumerate(table_roll.latest.labelled_dice)
    ]


def _chances(table_roll: TableRoll, access: Access, reading: hitos.Reading):
    # A hidden difficulty stays hidden: only the direction sees the chances.
    if table_roll.difficulty_hidden and not access.is_gm:
        return None
    return activations.reroll_chances(table_roll, reading)


def _payments(table_roll: TableRoll, character: Character | None) -> list[tuple[str, str]]:
    if character is None or character.is_npc:
        return [("point", _("Un punto de la reserva de la dirección"))]
    choices = [
        (
            "point",
            _("Un punto dramático (%(name)s tiene %(n)s)")
            % {"name": character.name, "n": character.hitos.drama_points},
        ),
        ("exhaust", _("Agotar el aspecto (solo los de tu personaje)")),
    ]
    if is_arcane(table_roll) and character.pk == table_roll.character_id:
        choices.append(("degeneracion", _("+1 Degeneración en lugar del punto (habilidad arcana)")))
    return choices


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def activation_positive(request: HtmxHttpRequest, table_roll_id: int) -> HttpResponse:
    """H13–H16 — activate an aspect in favour of a roll and re-roll dice."""
    table_roll, access = table_roll_for(request, table_roll_id)
    character = activations.positive_activator(table_roll, request.user, access)
    options = activations.aspect_options(table_roll=table_roll, activator=character, negative=False, is_gm=access.is_gm)
    payments = _payments(table_roll, character)
    chosen: list[str] = []
    if request.method == "POST":
        positions = _positions(request)
        if isinstance(positions, HttpResponse):
            return positions
        chosen = [str(p) for p in positions]
        form = PositiveActivationForm(request.POST, aspects=options, payments=payments)
        try:
            # A retried form (its seed already re-rolled this roll) shows what
            # the first one did, even if its aspect is now exhausted.
            done = activations.earlier_positive(
                table_roll=table_roll, user=request.user, client_seed=request.POST.get("client_seed") or None
            )
            if done is None and form.is_valid():
                done = activations.activate_positive(
                    table_roll=table_roll,
                    user=request.user,
                    aspect_choice=form.cleaned_data["aspect"],
                    positions=positions,
                    payment=form.cleaned_data["payment"],
                    client_seed=form.cleaned_data["client_seed"] or None,
                )
        except ValidationError as exc:
            form.add_error(None, exc)
        else:
            if done is not None:
                return after_action(
                    request,
                    fragment=lambda _error: _card(request, table_roll, access),
                    url=_back_url(table_roll),
                    success=_("Aspecto activado: dados repetidos."),
                )
    else:
        form = PositiveActivationForm(aspects=options, payments=payments)
    context = {
        "table_roll": table_roll,
        "campaign": table_roll.campaign,
        "form": form,
        "negative": False,
        "dice": _dice(table_roll, chosen),
        "chances": _chances(table_roll, access, hitos.Reading.POSITIVE),
        "action": request.path,
        "is_gm": access.is_gm,
        "is_player": access.is_player,
    }
    return _form_response(request, context, invalid=request.method == "POST")


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def activation_negative(request: HtmxHttpRequest, table_roll_id: int) -> HttpResponse:
    """H18 — activate an aspect against someone's roll, choosing the dice."""
    table_roll, access = table_roll_for(request, table_roll_id)
    character = activations.negative_activator(table_roll, request.user, access)
    options = activations.aspect_options(table_roll=table_roll, activator=character, negative=True, is_gm=access.is_gm)
    chosen: list[str] = []
    if request.method == "POST":
        positions = _positions(request)
        if isinstance(positions, HttpResponse):
            return positions
        chosen = [str(p) for p in positions]
        form = NegativeActivationForm(request.POST, aspects=options, free_text=access.is_gm)
        if form.is_valid():
            try:
                activations.activate_negative(
                    table_roll=table_roll,
                    user=request.user,
                    aspect_choice=form.aspect_choice(),
                    positions=positions,
                    note=form.cleaned_data["note"],
                )
            except ValidationError as exc:
                form.add_error(None, exc)
            else:
                return after_action(
                    request,
                    fragment=lambda _error: _card(request, table_roll, access),
                    url=_back_url(table_roll),
                    success=_("Activación en contra declarada: su jugador decide si la acepta."),
                )
    else:
        form = NegativeActivationForm(aspects=options, free_text=access.is_gm)
    context = {
        "table_roll": table_roll,
        "campaign": table_roll.campaign,
        "form": form,
        "negative": True,
        "activator": character,
        "dice": _dice(table_roll, chosen),
        "chances": _chances(table_roll, access, hitos.Reading.NEGATIVE),
        "action": request.path,
        "is_gm": access.is_gm,
        "is_player": access.is_player,
    }
    return _form_response(request, context, invalid=request.method == "POST")


def _after_answer(request: HtmxHttpRequest, activation: Activation, access: Access, error: str = "") -> HttpResponse:
    if activation.table_roll_id is None:
        if error:
            messages.error(request, error)
        return redirect("hitos:drama", slug=activation.campaign.slug)
    table_roll = activation.table_roll
    return after_action(
        request,
        fragment=lambda error: _card(request, table_roll, access, activation_error=error),
        url=_back_url(table_roll),
        error=error,
    )


@login_required
@require_POST
def activation_answer(request: HtmxHttpRequest, activation_id: int) -> HttpResponse:
    """H22/H23/H25 — the affected player accepts (+1 point) or cancels (−1).
    Accepting a negative activation re-rolls with the browser seed the
    button's form carries; the same seed sent again shows the same card."""
    activation, access = activation_for(request, activation_id)
    answer = request.POST.get("respuesta", "")
    if answer not in ("aceptar", "cancelar"):
        return HttpResponseBadRequest(_("Responde «aceptar» o «cancelar»."), content_type="text/plain; charset=utf-8")
    try:
        activations.activation_answer(
            activation=activation, user=request.user, accept=answer == "aceptar", client_seed=_client_seed(request)
        )
    except ValidationError as exc:
        return _after_answer(request, activation, access, error=" ".join(exc.messages))
    if not request.htmx:
        messages.success(request, _("Respuesta registrada."))
    return _after_answer(request, activation, access)


@login_required
@require_POST
def activation_settle(request: HtmxHttpRequest, activation_id: int) -> HttpResponse:
    """The GM settles an unanswered activation after the deadline (as
    accepted), re-rolling with the browser seed the button's form carries."""
    activation, access = activation_for(request, activation_id)
    if not perms.can_manage(access):
        raise PermissionDenied(_("Solo la dirección resuelve activaciones pendientes."))
    try:
        activations.settle_negative(activation=activation, user=request.user, client_seed=_client_seed(request))
    except ValidationError as exc:
        return _after_answer(request, activation, access, error=" ".join(exc.messages))
    if not request.htmx:
        messages.success(request, _("Activación resuelta como aceptada."))
    return _after_answer(request, activation, access)


@login_required
@require_POST
def activation_force(request: HtmxHttpRequest, activation_id: int) -> HttpResponse:
    """H92 — the GM forces +1 Degeneración instead of the point a player paid
    on an arcane action (the player gets the point back and one more)."""
    activation, access = activation_for(request, activation_id)
    if not perms.can_manage(access):
        raise PermissionDenied(_("Solo la dirección puede forzar la Degeneración."))
    try:
        activations.force_degeneracion(activation=activation, user=request.user)
    except ValidationError as exc:
        return _after_answer(request, activation, access, error=" ".join(exc.messages))
    if not request.htmx:
        messages.success(request, _("Degeneración forzada: el jugador recupera su punto y gana otro."))
    return _after_answer(request, activation, access)


# --- The drama page ---------------------------------------------------------------------


def _drama_campaign_for(request: HttpRequest, slug: str, *, manage: bool = False) -> tuple[Campaign, Access]:
    """The campaign's drama points are for its members (403 for others who
    see the campaign); with ``manage``, for its direction."""
    campaign, access = campaign_for(
        request,
        slug,
        need=lambda a: a.is_member,
        denied=_("Solo los miembros de la partida ven sus puntos dramáticos."),
    )
    if manage and not perms.can_manage(access):
        raise PermissionDenied(_("Solo la dirección de la partida puede hacer esto."))
    return campaign, access


def _narrative_form(campaign: Campaign, access: Access, characters: list[Character], data=None) -> NarrativeForm | None:
    if access.is_gm:
        npcs = Character.objects.filter(campaign=campaign).npcs().order_by("name", "pk")
        activators = [("", _("La reserva de la dirección"))] + [(str(c.pk), c.name) for c in npcs]
    else:
        activators = [(str(c.pk), c.name) for c in characters if c.owner_id == access.user.pk]
        if not (access.is_player and activators):
            return None
    affected = [(str(c.pk), c.name) for c in characters]
    return NarrativeForm(data, activators=activators, affected=affected)


def _drama_events(campaign: Campaign, access: Access) -> list[SheetEvent]:
    """The recent drama point moves; a move paid for an activation quotes
    its roll's purpose, which a reader who may not read that sealed roll
    (``readable_ids``, one query for them all) reads as «una tirada privada»."""
    events = list(
        SheetEvent.objects.filter(campaign=campaign, kind=HitosEvent.DRAMA)
        .select_related("actor", "character", "roll")
        .order_by("-created_at", "-id")[:RECENT_DRAMA_EVENTS]
    )
    readable = readable_ids(access, [event.roll for event in events if event.roll is not None])
    for event in events:
        entry = event.roll
        if entry is not None and entry.pk not in readable and entry.purpose:
            event.reason = event.reason.replace(f"«{entry.purpose}»", _("una tirada privada"))
    return events


def _drama_page(
    request: HtmxHttpRequest, campaign: Campaign, access: Access, *, pool_form=None, narrative_form=None, status=200
) -> HttpResponse:
    characters = list(
        Character.objects.approved().filter(campaign=campaign).select_related("owner", "hitos").order_by("name", "pk")
    )
    events = _drama_events(campaign, access)
    pending = list(
        Activation.objects.filter(campaign=campaign, kind=Activation.Kind.NARRATIVE, status=Activation.Status.PENDING)
        .select_related("activator", "activator_character", "target_character")
        .order_by("created_at", "id")
    )
    for activation in pending:
        activation.can_answer = activations.may_answer(activation, request.user, access)
        activation.overdue = activations.is_overdue(activation)
    if access.is_gm and pool_form is None:
        pool_form = DramaPoolForm(initial={"value": gm_pool(campaign)})
    if narrative_form is None:
        narrative_form = _narrative_form(campaign, access, characters)
    context = {
        "campaign": campaign,
        "is_gm": access.is_gm,
        "characters": characters,
        "events": events,
        "pending": pending,
        "pool_form": pool_form if access.is_gm else None,
        "narrative_form": narrative_form,
    }
    return page_or_fragment(request, "hitos/drama.html", "drama-balances", context, status=status)


@login_required
@require_safe
def drama(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    """Drama points: the GM's pool, each character's points, who moved them
    and why; the GM sets the pool; narrative activations (H23)."""
    campaign, access = _drama_campaign_for(request, slug)
    return _drama_page(request, campaign, access)


@login_required
@require_POST
def drama_pool_set(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    campaign, access = _drama_campaign_for(request, slug, manage=True)
    form = DramaPoolForm(request.POST)
    if form.is_valid():
        try:
            gm_pool_set(
                campaign=campaign,
                actor=request.user,
                value=form.cleaned_data["value"],
                reason=form.cleaned_data["reason"],
            )
        except ValidationError as exc:
            form.add_error(None, exc)
        else:
            messages.success(request, _("Reserva de la dirección actualizada."))
            return redirect("hitos:drama", slug=campaign.slug)
    return _drama_page(request, campaign, access, pool_form=form)


@login_required
@require_POST
def drama_narrative(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    campaign, access = _drama_campaign_for(request, slug)
    characters = list(Character.objects.approved().filter(campaign=campaign).order_by("name", "pk"))
    form = _narrative_form(campaign, access, characters, data=request.POST)
    if form is None:
        raise PermissionDenied(_("Necesitas un personaje aprobado en la partida para activar aspectos."))
    if form.is_valid():
        chosen = form.cleaned_data["activator"]
        affected_id = form.cleaned_data["affected"]
        by_id = {str(c.pk): c for c in characters}
        activator = None
        if chosen:
            activator = by_id.get(chosen) or Character.objects.filter(campaign=campaign).npcs().get(pk=int(chosen))
        try:
            activations.narrative_activation(
                campaign=campaign,
                user=request.user,
                character_or_gm=activator,
                aspect_text=form.cleaned_data["aspect_text"],
                note=form.cleaned_data["note"],
                affected=by_id.get(affected_id) if affected_id else None,
                exhaust_aspect_id=form.exhaust_aspect_id(),
            )
        except ValidationError as exc:
            form.add_error(None, exc)
        else:
            messages.success(request, _("Elemento narrativo registrado."))
            return redirect("hitos:drama", slug=campaign.slug)
    return _drama_page(request, campaign, access, narrative_form=form)
