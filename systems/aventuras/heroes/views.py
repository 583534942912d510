"""Hero point pages and actions that are not rolls (A21, A23, A25–A28).

- A hero's page (``hero-page``): the panel the sheet also shows (points,
  XP, this turn's uses, the states ignored, the history, the forms);
- the campaign's page (``heroes``): every hero's points for the GM, the
  viewer's own for a player, and the pending requests; the GM's «Nueva
  aventura» with its confirmation (``new-adventure``).

Access as at every Vaesen page: outsiders (and members who may not see the
sheet) get 404; readers, and players acting for a character they do not
play, 403. An action answers htmx with the panel it came from (its refusal
or its success shown in place, typed text kept); a normal form gets a
redirect with a message, or the page again with the form when it was refused.
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods, require_POST, require_safe

from accounts.limits import refusal_message
from campaigns.models import Campaign, Scene
from campaigns.permissions import Access, campaign_access, visible_scenes
from hitos_site.htmx import HtmxHttpRequest, page_or_fragment, wants_fragment
from rules.aventuras import HeroSpend
from sheets import permissions as perms
from sheets.models import Character
from sheets.views import sheet_campaign
from systems.aventuras.heroes import panel, services
from systems.aventuras.heroes.forms import (
    SPEND_USES,
    DecisionForm,
    EarnForm,
    GiftForm,
    NewAdventureForm,
    SpendForm,
    StateForm,
)

SYSTEM = "aventuras"
USES_BY_SLUG = {prefix: use for use, (prefix, _label) in SPEND_USES.items()}
HERO_PAGE = "aventuras/heroes/hero_page.html"
CAMPAIGN_PAGE = "aventuras/heroes/campaign_page.html"
SCENE_BAR = "aventuras/heroes/_balances.html"


# --- access helpers -------------------------------------------------------------------------


def _campaign(request: HttpRequest, slug: str) -> tuple[Campaign, Access]:
    """A Hora de Aventuras campaign the user is a member of (404 otherwise)."""
    campaign = sheet_campaign(slug)
    if campaign.system != SYSTEM:
        raise Http404
    access = campaign_access(request.user, campaign)
    if not access.is_member:
        raise Http404
    return campaign, access


def _table(request: HttpRequest, slug: str) -> tuple[Campaign, Access]:
    """As ``_campaign``, and the user plays or directs (403 for a reader)."""
    campaign, access = _campaign(request, slug)
    if not (access.is_gm or access.is_player):
        raise PermissionDenied(_("Solo quien juega en la partida mueve puntos de Héroe."))
    return campaign, access


def _hero(request: HttpRequest, slug: str, character_id: int, *, act: bool = False) -> tuple[Character, Access]:
    """A hero whose sheet the user may see (404 otherwise) and whose numbers
    they may read (403 otherwise); with ``act``, one they may play (403)."""
    campaign, access = _campaign(request, slug)
    character = get_object_or_404(
        Character.objects.filter(campaign=campaign, aventuras__isnull=False).select_related("aventuras", "owner"),
        pk=character_id,
    )
    character.campaign = campaign
    if not perms.can_see_sheet(access, character, perms.sheet_options(campaign)):
        raise Http404
    if not perms.can_see_private(access, character):
        raise PermissionDenied(_("Los puntos de Héroe de %(name)s no son tuyos.") % {"name": character.name})
    if not character.aventuras.is_hero:
        raise Http404
    if act and not perms.can_play_character(access, character):
        raise PermissionDenied(
            _("Solo la dirección o quien lleva a %(name)s mueve sus puntos de Héroe.") % {"name": character.name}
        )
    return character, access


def _hero_url(character: Character) -> str:
    return reverse("aventuras:hero-page", args=[character.campaign.slug, character.pk])


def _heroes_url(campaign: Campaign) -> str:
    return reverse("aventuras:heroes", args=[campaign.slug])


def _reload(character: Character) -> Character:
    fresh = Character.objects.select_related("aventuras", "owner").get(pk=character.pk)
    fresh.campaign = character.campaign
    return fresh


def _scenes(access: Access) -> list[Scene]:
    return panel._open_scenes(access)


# --- a hero's panel --------------------------------------------------------------------------


def _hero_context(access: Access, character: Character, **panel_kwargs) -> dict:
    return {
        "campaign": character.campaign,
        "access": access,
        "character": character,
        **panel.sheet_panel(character, access, **panel_kwargs),
    }


def _hero_answer(
    request: HtmxHttpRequest,
    access: Access,
    character: Character,
    *,
    done: str = "",
    bound=None,
) -> HttpResponse:
    """After an action on a hero's panel: done → htmx gets the fresh panel
    with the notice, a normal form a redirect with the message; refused →
    the panel (htmx) or the page with the form as it was typed."""
    if done and not request.htmx:
        messages.success(request, done)
        return redirect(_hero_url(character))
    context = _hero_context(access, _reload(character), bound=bound, notice=done if done else "")
    return page_or_fragment(request, HERO_PAGE, "heroes-panel", context)


@login_required
@require_safe
def hero_page(request: HtmxHttpRequest, slug: str, character_id: int) -> HttpResponse:
    character, access = _hero(request, slug, character_id)
    return page_or_fragment(request, HERO_PAGE, "heroes-panel", _hero_context(access, character))


def _refused(form, exc: ValidationError) -> None:
    for message in exc.messages:
        form.add_error(None, message)


@login_required
@require_POST
def spend(request: HtmxHttpRequest, slug: str, character_id: int, use: str) -> HttpResponse:
    """A23 (A28 with «pagar con 2 PX»): ignore a state, recover, activate a feat."""
    if use not in USES_BY_SLUG:
        raise Http404
    character, access = _hero(request, slug, character_id, act=True)
    hero_use = USES_BY_SLUG[use]
    sheet = character.aventuras
    options = {
        HeroSpend.IGNORE_STATE: list(sheet.states.all()),
        HeroSpend.RECOVER: (),
        HeroSpend.FEAT: list(sheet.feats.filter(needs_hero_point=True)),
    }[hero_use]
    form = SpendForm(
        request.POST,
        use=hero_use,
        options=options,
        scenes=_scenes(access),
        why_required=not perms.is_owner(access, character),
    )
    if form.is_valid():
        data = form.cleaned_data
        common = {
            "character": character,
            "actor": request.user,
            "scene": data["scene_row"],
            "why": data["why"],
            "with_experience": data["with_experience"],
        }
        try:
            if hero_use == HeroSpend.IGNORE_STATE:
                move = services.ignore_state(state_id=int(data["target"]), **common)
            elif hero_use == HeroSpend.RECOVER:
                move = services.recover(levels=int(data["target"]), **common)
            else:
                move = services.activate_feat(feat_id=int(data["target"]), **common)
        except ValidationError as exc:
            _refused(form, exc)
        else:
            done = _("Punto de Héroe gastado en «%(use)s»: %(detail)s.") % {
                "use": services.ledger.use_word(hero_use),
                "detail": move.detail,
            }
            return _hero_answer(request, access, character, done=done)
    return _hero_answer(request, access, character, bound=(f"spend_{use}", form))


@login_required
@require_POST
def earn(request: HtmxHttpRequest, slug: str, character_id: int) -> HttpResponse:
    """A25 — the GM grants a point (flaw, sacrifice); a player asks for it."""
    character, access = _hero(request, slug, character_id, act=True)
    form = EarnForm(request.POST, scenes=_scenes(access), auto_id="ganar-%s")
    if form.is_valid():
        data = form.cleaned_data
        args = {"character": character, "actor": request.user, "kind": data["kind"], "why": data["why"]}
        try:
            if access.is_gm:
                services.grant(scene=data["scene_row"], **args)
                done = _("%(name)s gana un punto de Héroe.") % {"name": character.name}
            else:
                services.ask(scene=data["scene_row"], **args)
                done = _("Petición enviada a la dirección.")
        except ValidationError as exc:
            _refused(form, exc)
        else:
            return _hero_answer(request, access, character, done=done)
    return _hero_answer(request, access, character, bound=("earn", form))


@login_required
@require_POST
def gift(request: HtmxHttpRequest, slug: str, character_id: int) -> HttpResponse:
    """A26 — the player gives one of their hero's points (the GM approves)."""
    character, access = _hero(request, slug, character_id, act=True)
    if not perms.is_owner(access, character):
        raise PermissionDenied(_("Solo quien lleva a %(name)s regala sus puntos.") % {"name": character.name})
    receivers = list(
        services.heroes(character.campaign).exclude(pk=character.pk).filter(status=Character.Status.APPROVED)
    )
    form = GiftForm(request.POST, receivers=receivers, scenes=_scenes(access), auto_id="regalar-%s")
    if form.is_valid():
        data = form.cleaned_data
        try:
            services.offer_gift(
                giver=character,
                receiver=data["receiver_character"],
                actor=request.user,
                why=data["why"],
                scene=data["scene_row"],
            )
        except ValidationError as exc:
            _refused(form, exc)
        else:
            done = _("La dirección tiene que aprobar el punto para %(name)s: hasta entonces no se mueve.") % {
                "name": data["receiver_character"].name
            }
            return _hero_answer(request, access, character, done=done)
    return _hero_answer(request, access, character, bound=("gift", form))


@login_required
@require_POST
def state(request: HtmxHttpRequest, slug: str, character_id: int) -> HttpResponse:
    """A27 — propose a state «por el morro» (the other side accepts)."""
    character, access = _hero(request, slug, character_id, act=True)
    form = StateForm(request.POST, scenes=_scenes(access), auto_id="morro-%s")
    if form.is_valid():
        data = form.cleaned_data
        try:
            services.propose_state(
                character=character,
                actor=request.user,
                state_name=data["state_name"],
                why=data["why"],
                scene=data["scene_row"],
            )
        except ValidationError as exc:
            _refused(form, exc)
        else:
            done = (
                _("Propuesta enviada: quien lleva a %(name)s tiene que aceptarla.")
                if access.is_gm
                else _("Propuesta enviada: la dirección tiene que aceptarla.")
            ) % {"name": character.name}
            return _hero_answer(request, access, character, done=done)
    return _hero_answer(request, access, character, bound=("state", form))


# --- the campaign's page: requests and «Nueva aventura» ------------------------------------------


def _campaign_context(access: Access, campaign: Campaign, **extra) -> dict:
    heroes = list(services.heroes(campaign))
    if not access.is_gm:
        heroes = [c for c in heroes if perms.can_play_character(access, c)]
    pending = services.pending_requests(campaign).select_related("character__owner")
    if not access.is_gm:
        mine = {c.pk for c in heroes}
        pending = [
            r for r in pending if r.character_id in mine or r.giver_id in mine or r.requested_by_id == access.user.pk
        ]
    return {
        "campaign": campaign,
        "access": access,
        "heroes": heroes,
        "requests": panel.requests_context(access, pending),
        "is_gm": access.is_gm,
        **extra,
    }


@login_required
@require_safe
def heroes(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    campaign, access = _table(request, slug)
    return page_or_fragment(request, CAMPAIGN_PAGE, "heroes-requests", _campaign_context(access, campaign))


def _where(campaign: Campaign, value: str, access: Access):
    """Where a decision was made: ``ficha:<id>``, ``escena:<id>`` or the campaign's page."""
    kind, _sep, pk = (value or "").partition(":")
    if not pk.isdigit():
        return None
    if kind == "ficha":
        return Character.objects.filter(campaign=campaign, pk=int(pk), aventuras__isnull=False).first()
    if kind == "escena":
        # Only a scene the user may read: never a redirect to (or the balances of) another one.
        return visible_scenes(access).filter(campaign=campaign, pk=int(pk), is_offgame=False).first()
    return None


@login_required
@require_POST
def decide(request: HtmxHttpRequest, slug: str, request_id: int) -> HttpResponse:
    """Accept, refuse or take back a pending request (A25–A27)."""
    campaign, access = _table(request, slug)
    form = DecisionForm(request.POST)
    error = done = ""
    if form.is_valid():
        decision = form.cleaned_data["decision"]
        try:
            if decision == "retirar":
                services.withdraw(request_id=request_id, campaign=campaign, actor=request.user)
                done = _("Petición retirada.")
            else:
                accept = decision == "aceptar"
                services.decide(request_id=request_id, campaign=campaign, actor=request.user, accept=accept)
                done = _("Petición aceptada: el punto de Héroe está anotado.") if accept else _("Petición rechazada.")
        except ValidationError as exc:
            error = " ".join(exc.messages)
    else:
        error = refusal_message(form, missing=_("Elige aceptar o rechazar."))
    where = _where(campaign, request.POST.get("where", ""), access)
    if not request.htmx:
        if error:
            messages.error(request, error)
        else:
            messages.success(request, done)
        if isinstance(where, Character):
            return redirect(_hero_url(where) if perms.can_see_private(access, where) else _heroes_url(campaign))
        if isinstance(where, Scene):
            return redirect(where)
        return redirect(_heroes_url(campaign))
    if isinstance(where, Character) and perms.can_see_private(access, where):
        where.campaign = campaign
        context = _hero_context(access, _reload(where), notice=done, error=error)
        return page_or_fragment(request, HERO_PAGE, "heroes-panel", context)
    if isinstance(where, Scene):
        where.campaign = campaign
        characters = [c for c in services.heroes(campaign) if perms.can_play_character(access, c)]
        context = {
            "campaign": campaign,
            "scene": where,
            "access": access,
            **panel.scene_panel(where, access, characters=characters),
            "aventuras_notice": done,
            "aventuras_error": error,
        }
        return page_or_fragment(request, SCENE_BAR, "balances", context)
    context = _campaign_context(access, campaign, notice=done, error=error)
    return page_or_fragment(request, CAMPAIGN_PAGE, "heroes-requests", context)


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def new_adventure(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    """A21 — «Nueva aventura»: the GM confirms, every hero back to exactly 5."""
    campaign, access = _table(request, slug)
    if not access.is_gm:
        raise PermissionDenied(_("Solo la dirección empieza una aventura nueva."))
    form = NewAdventureForm(request.POST if request.method == "POST" else None, auto_id="aventura-%s")
    if request.method == "POST" and form.is_valid():
        moves = services.new_adventure(campaign=campaign, actor=request.user, why=form.cleaned_data["why"])
        done = _("Nueva aventura: %(count)d héroes vuelven a tener 5 puntos de Héroe.") % {"count": len(moves)}
        if not wants_fragment(request):
            messages.success(request, done)
            return redirect(_heroes_url(campaign))
        return page_or_fragment(
            request, CAMPAIGN_PAGE, "heroes-requests", _campaign_context(access, campaign, notice=done)
        )
    context = {**_campaign_context(access, campaign), "adventure_form": form}
    return page_or_fragment(request, "aventuras/heroes/new_adventure.html", "adventure-form", context)
