"""Combat in a scene: the initiative tracker, attacks, damage and the effects
of criticals and fumbles (H38–H52). The arithmetic is ``systems.hitos.combat.services``'s,
which asks ``rules/``.

Whoever may read the scene may watch the combat; the GM runs it; a player
attacks with their own character and shifts damage with their own drama
points. Each action answers an htmx request with the region it changed and
a plain form post with a redirect to the page.
"""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.db.models import Prefetch
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.cache import patch_vary_headers
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST, require_safe

from accounts.limits import refusal_message
from campaigns import absences, deadlines, fragments
from campaigns import permissions as perms
from campaigns.models import Scene
from campaigns.permissions import Access
from hitos_site.htmx import HtmxHttpRequest, after_action, page_or_fragment, wants_fragment
from sheets.permissions import can_play_character
from systems.hitos import texts
from systems.hitos.cards import activations_prefetch
from systems.hitos.combat import services, turns
from systems.hitos.combat.forms import (
    AttackForm,
    CombatantAddForm,
    CombatantStateForm,
    CombatStartForm,
    DamageApplyForm,
    DelayForm,
    EffectForm,
    InitiativeForm,
    RoundDeadlineForm,
    ShiftForm,
)
from systems.hitos.models import Attack, Combat, Combatant, Skill, Weapon
from table import combat_status
from table.access import scene_for
from table.cards import cards_for

TEMPLATE = "hitos/combat.html"


def _manager(request: HttpRequest, slug: str, scene_id: int) -> tuple[Scene, Access]:
    return scene_for(
        request, slug, scene_id, need=perms.can_manage, denied=_("Solo la dirección de la partida dirige el combate.")
    )


def _current_combat(scene: Scene) -> Combat | None:
    """The open combat of the scene, or else the last one that ended; with
    the id of its round's open deadline and whether anyone in the campaign
    is away today (``table.combat_status``)."""
    return combat_status.current_combat(Combat, scene, deadline_kind=turns.DEADLINE_KIND)


def _combatants(combat: Combat) -> list[Combatant]:
    combatants = list(
        combat.combatants.select_related(
            "character__campaign", "character__owner", "character__hitos", "initiative__latest"
        )
        .prefetch_related(
            Prefetch("character__skills", queryset=Skill.objects.order_by("id")),
            Prefetch("character__weapons", queryset=Weapon.objects.order_by("id")),
        )
        .order_by("order", "id")
    )
    for combatant in combatants:
        combatant.character.campaign = combat.campaign
    return combatants


def _attack_rows(combat: Combat, combatants: list[Combatant], access: Access, user) -> list[Attack]:
    """Each attack with its card, its damage and what the user may do with it."""
    by_id = {c.pk: c for c in combatants}
    attacks = list(
        combat.attacks.select_related(
            "table_roll__first__user", "table_roll__latest__user", "table_roll__owner", "table_roll__character"
        )
        .prefetch_related(activations_prefetch("table_roll__"))
        .order_by("-created_at", "-id")
    )
    # A player with a character in the fight has an approved one (else cards_for looks it up).
    in_the_fight = any(perms.can_write_as_character(access, c.character) for c in combatants) or None
    cards = cards_for([a.table_roll for a in attacks], access=access, has_character=in_the_fight)
    # H51 — the extra dice of codes above mCM, drawn as extensions of the attack rolls.
    extensions = services.extensions_of(attacks)
    for attack in attacks:
        attack.combat = combat
        attack.attacker = by_id[attack.attacker_id]
        attack.target = by_id[attack.target_id]
        attack.card = cards[attack.table_roll_id]
        attack.hits = services.attack_hits(attack)
        attack.extension = extensions.get(attack.pk)
        attack.damage = services.attack_damage_for(attack, attack.extension) if attack.hits else None
        attack.effect = services.attack_effect_for(attack) if access.is_gm else None
        pending = combat.ended_at is None and attack.damage_applied is None and attack.hits
        attack.can_shift_up = pending and can_play_character(access, attack.attacker.character)
        attack.can_shift_down = pending and can_play_character(access, attack.target.character)
        attack.can_apply = access.is_gm and attack.damage_applied is None and attack.damage is not None
        # H51/H52 — applying it rolls: its form carries a browser seed.
        attack.apply_rolls = attack.can_apply and services.damage_rolls(attack.damage, attack.target.character)
        attack.defence_parts = texts.defence_parts(attack.defence)
        if attack.effect is not None:
            proposed = attack.target if attack.effect.kind == "secuela temporal" else attack.attacker
            attack.effect_character = proposed.character
            attack.effect_kind = texts.EFFECT_KIND_LABELS[attack.effect.kind]
            attack.effect_duration = texts.EFFECT_DURATION_LABELS[attack.effect.duration]
    return attacks


def _context(request: HttpRequest, scene: Scene, access: Access, **extra) -> dict:
    combat = _current_combat(scene)
    context = {"campaign": scene.campaign, "scene": scene, "access": access, "combat": combat}
    if combat is None:
        if access.is_gm and "start_form" not in extra:
            context["start_form"] = CombatStartForm(campaign=scene.campaign)
        context.update(extra)
        return context
    combatants = _combatants(combat)
    attackers = [c for c in combatants if services.can_attack_with(access, c)] if combat.ended_at is None else []
    # Who is away today, beside their characters' names (one query, when anyone is).
    away = combat_status.away_today(combat)
    for combatant in combatants:
        combatant.absence = None if combatant.character.is_npc else away.get(combatant.character.owner_id)
    context.update(
        combatants=combatants,
        attacks=_attack_rows(combat, combatants, access, request.user),
        attack_form=AttackForm(combatants=combatants, attackers=attackers) if attackers else None,
    )
    if combat.ended_at is None:
        context["turn"] = turns.turn_of(combat, combatants)
        context["round_deadline"] = combat_status.combat_deadline(combat)
    if access.is_gm and combat.ended_at is None:
        context["add_form"] = CombatantAddForm(campaign=scene.campaign, combat=combat)
        if context.get("turn") is not None:
            context.setdefault("deadline_form", RoundDeadlineForm(campaign=scene.campaign))
        context["start_form"] = None
    elif access.is_gm:
        context["start_form"] = CombatStartForm(campaign=scene.campaign)
    context.update(extra)
    return context


def _done(request: HtmxHttpRequest, scene: Scene, access: Access, fragment: str, error: str = "") -> HttpResponse:
    """After an action: the changed region for htmx (with the error, if
    any), a redirect to the page otherwise (the error as a message)."""
    return after_action(
        request,
        fragment=lambda error: render(
            request, f"{TEMPLATE}#{fragment}", _context(request, scene, access, error=error, error_in=fragment)
        ),
        url=reverse("hitos:combat", args=[scene.campaign.slug, scene.pk]),
        error=error,
    )


def _message(exc: ValidationError) -> str:
    return " ".join(exc.messages)


def _attempt(action, **kwargs) -> str:
    """Run a service action; its refusal (a ``ValidationError``) comes back
    as the message to show, success as ""."""
    try:
        action(**kwargs)
    except ValidationError as exc:
        return _message(exc)
    return ""


def _open_combat(scene: Scene, combat_id: int) -> Combat:
    combat = get_object_or_404(Combat, pk=combat_id, scene=scene)
    combat.campaign = scene.campaign
    combat.scene = scene
    return combat


def _combatant(scene: Scene, combatant_id: int) -> Combatant:
    combatant = get_object_or_404(
        Combatant.objects.select_related("combat", "character"), pk=combatant_id, combat__scene=scene
    )
    combatant.combat.campaign = scene.campaign
    combatant.combat.scene = scene
    return combatant


def _attack(scene: Scene, attack_id: int) -> Attack:
    return get_object_or_404(Attack, pk=attack_id, combat__scene=scene)


# --- views -------------------------------------------------------------------------


@require_safe
def combat_detail(request: HtmxHttpRequest, slug: str, scene_id: int) -> HttpResponse:
    """The scene's combat: tracker, attack form, attacks with their cards; as
    the cache keeps it for this reader (``campaigns.fragments``) until
    anything it shows changes or an answer's deadline passes."""
    scene, access = scene_for(request, slug, scene_id)
    part = "combat-board" if wants_fragment(request) else "combat-page"
    key = fragments.key(
        part,
        scene.pk,
        *fragments.versions(fragments.campaign_scope(scene.campaign_id), fragments.PEOPLE),
        fragments.viewer(request.user, access.standing),
        # The absences beside the names change with the campaign's day.
        absences.campaign_today(scene.campaign),
    )
    content = fragments.with_csrf(
        request, fragments.cached(key, lambda: _combat_page(request, scene, access, part))["html"]
    )
    if part == "combat-board":
        response = HttpResponse(content)
    else:
        response = render(request, TEMPLATE, {"campaign": scene.campaign, "scene": scene, "content": content})
    patch_vary_headers(response, ("HX-Request",))
    return response


def _combat_page(request: HtmxHttpRequest, scene: Scene, access: Access, part: str) -> dict:
    """The combat page's content (or its board, for htmx) for this reader:
    ``{"html"}``, and the ``"seconds"`` until a pending activation's deadline
    changes what its card offers."""
    context = _context(request, scene, access)
    html = render_to_string(f"{TEMPLATE}#{part}", {**context, **fragments.csrf_context()}, request=request)
    moments = [a.card["pending"].deadline for a in context.get("attacks", ()) if a.card.get("pending") is not None]
    seconds = fragments.seconds_until(moments)
    # The round's deadline line says the time left: kept until that changes.
    left = deadlines.seconds_until_left_changes(context.get("round_deadline"))
    if left is not None:
        seconds = left if seconds is None else min(seconds, left)
    return {"html": html, "seconds": seconds}


@login_required
@require_POST
def combat_start(request: HtmxHttpRequest, slug: str, scene_id: int) -> HttpResponse:
    scene, access = _manager(request, slug, scene_id)
    form = CombatStartForm(request.POST, campaign=scene.campaign)
    if form.is_valid():
        try:
            services.combat_start(scene=scene, access=access, characters=form.cleaned_data["characters"])
        except ValidationError as exc:
            form.add_error(None, exc)
    if form.errors:
        return page_or_fragment(request, TEMPLATE, "combat-board", _context(request, scene, access, start_form=form))
    return _done(request, scene, access, "combat-board")


@login_required
@require_POST
def combat_initiative(request: HtmxHttpRequest, slug: str, scene_id: int, combat_id: int) -> HttpResponse:
    scene, access = _manager(request, slug, scene_id)
    combat = _open_combat(scene, combat_id)
    form = InitiativeForm(request.POST)
    if form.is_valid():
        error = _attempt(
            services.initiative_roll, combat=combat, access=access, client_seed=form.cleaned_data["client_seed"] or None
        )
    else:
        # Only the hidden seed can be wrong: its own message says how.
        error = " ".join(form.errors.get("client_seed", []))
    return _done(request, scene, access, "combat-tracker", error)


@login_required
@require_POST
def combat_round(request: HtmxHttpRequest, slug: str, scene_id: int, combat_id: int) -> HttpResponse:
    scene, access = _manager(request, slug, scene_id)
    combat = _open_combat(scene, combat_id)
    error = _attempt(services.next_round, combat=combat, access=access)
    return _done(request, scene, access, "combat-tracker", error)


@login_required
@require_POST
def combat_deadline(request: HtmxHttpRequest, slug: str, scene_id: int, combat_id: int) -> HttpResponse:
    """The direction gives the current round a date to answer by (or moves it)."""
    scene, access = _manager(request, slug, scene_id)
    combat = _open_combat(scene, combat_id)
    form = RoundDeadlineForm(request.POST, campaign=scene.campaign)
    if form.is_valid():
        due_at, remind_before = deadlines.deadline_from(form.cleaned_data)
        try:
            turns.round_deadline_set(combat=combat, access=access, due_at=due_at, remind_before=remind_before)
        except ValidationError as exc:
            form.add_error("plazo" if exc.code == "past" else None, exc)
    if form.errors:
        context = _context(request, scene, access, deadline_form=form)
        return page_or_fragment(request, TEMPLATE, "combat-tracker", context)
    return _done(request, scene, access, "combat-tracker")


@login_required
@require_POST
def combat_end(request: HtmxHttpRequest, slug: str, scene_id: int, combat_id: int) -> HttpResponse:
    scene, access = _manager(request, slug, scene_id)
    combat = _open_combat(scene, combat_id)
    error = _attempt(services.combat_end, combat=combat, access=access)
    return _done(request, scene, access, "combat-board", error)


@login_required
@require_POST
def combatant_add(request: HtmxHttpRequest, slug: str, scene_id: int, combat_id: int) -> HttpResponse:
    scene, access = _manager(request, slug, scene_id)
    combat = _open_combat(scene, combat_id)
    form = CombatantAddForm(request.POST, campaign=scene.campaign, combat=combat)
    if form.is_valid():
        error = _attempt(services.combatant_add, combat=combat, access=access, character=form.cleaned_data["character"])
    else:
        error = " ".join(form.errors.get("character", []))
    return _done(request, scene, access, "combat-tracker", error)


@login_required
@require_POST
def combatant_remove(request: HtmxHttpRequest, slug: str, scene_id: int, combatant_id: int) -> HttpResponse:
    scene, access = _manager(request, slug, scene_id)
    combatant = _combatant(scene, combatant_id)
    error = _attempt(services.combatant_remove, combatant=combatant, access=access)
    # Its attacks go with it: the whole board changes.
    return _done(request, scene, access, "combat-board", error)


@login_required
@require_POST
def combatant_act(request: HtmxHttpRequest, slug: str, scene_id: int, combatant_id: int) -> HttpResponse:
    scene, access = _manager(request, slug, scene_id)
    combatant = _combatant(scene, combatant_id)
    error = _attempt(services.combatant_act, combatant=combatant, access=access)
    return _done(request, scene, access, "combat-tracker", error)


@login_required
@require_POST
def combatant_delay(request: HtmxHttpRequest, slug: str, scene_id: int, combatant_id: int) -> HttpResponse:
    scene, access = _manager(request, slug, scene_id)
    combatant = _combatant(scene, combatant_id)
    form = DelayForm(request.POST)
    if form.is_valid():
        position = form.cleaned_data["position"]
        error = _attempt(
            services.combatant_delay,
            combatant=combatant,
            access=access,
            position=None if position is None else position - 1,
        )
    else:
        error = " ".join(form.errors.get("position", []))
    return _done(request, scene, access, "combat-tracker", error)


@login_required
@require_POST
def combatant_state(request: HtmxHttpRequest, slug: str, scene_id: int, combatant_id: int) -> HttpResponse:
    scene, access = _manager(request, slug, scene_id)
    combatant = _combatant(scene, combatant_id)
    form = CombatantStateForm(request.POST)
    form.is_valid()  # Booleans: an unchecked box is False, never an error.
    error = _attempt(services.combatant_set, combatant=combatant, access=access, **form.cleaned_data)
    return _done(request, scene, access, "combat-tracker", error)


@login_required
@require_POST
def attack_create(request: HtmxHttpRequest, slug: str, scene_id: int, combat_id: int) -> HttpResponse:
    scene, access = scene_for(request, slug, scene_id)
    combat = _open_combat(scene, combat_id)
    combatants = _combatants(combat)
    attackers = [c for c in combatants if services.can_attack_with(access, c)]
    if not attackers:
        raise PermissionDenied(_("No tienes ningún personaje en este combate."))
    form = AttackForm(request.POST, combatants=combatants, attackers=attackers)
    if form.is_valid():
        data = form.cleaned_data
        try:
            attack = services.attack_make(
                combat=combat,
                access=access,
                attacker=data["attacker"],
                target=data["target"],
                weapon=data["weapon"],
                extra=form.extra(),
                client_seed=data["client_seed"] or None,
            )
        except ValidationError as exc:
            form.add_error(None, exc)
        else:
            return after_action(
                request,
                fragment=lambda _error: render(request, f"{TEMPLATE}#combat-board", _context(request, scene, access)),
                url=f"{services.combat_url(combat)}#attack-{attack.pk}",
            )
    return page_or_fragment(request, TEMPLATE, "combat-board", _context(request, scene, access, attack_form=form))


@login_required
@require_POST
def attack_shift(request: HtmxHttpRequest, slug: str, scene_id: int, attack_id: int) -> HttpResponse:
    scene, access = scene_for(
        request, slug, scene_id, need=perms.can_play, denied=_("Solo los jugadores y la dirección activan aspectos.")
    )
    attack = _attack(scene, attack_id)
    form = ShiftForm(request.POST)
    if form.is_valid():
        error = _attempt(
            services.attack_shift,
            attack=attack,
            access=access,
            steps=form.cleaned_data["steps"],
            aspect=form.cleaned_data["aspect"],
        )
    else:
        error = " ".join(message for messages_ in form.errors.values() for message in messages_)
    return _done(request, scene, access, "combat-attacks", error)


@login_required
@require_POST
def damage_apply(request: HtmxHttpRequest, slug: str, scene_id: int, attack_id: int) -> HttpResponse:
    scene, access = _manager(request, slug, scene_id)
    attack = _attack(scene, attack_id)
    form = DamageApplyForm(request.POST)
    if form.is_valid():
        error = _attempt(
            services.damage_apply, attack=attack, access=access, client_seed=form.cleaned_data["client_seed"] or None
        )
    else:
        # Only the hidden seed can be wrong: its own message says how.
        error = " ".join(form.errors.get("client_seed", []))
    return _done(request, scene, access, "combat-attacks", error)


@login_required
@require_POST
def effect_decide(request: HtmxHttpRequest, slug: str, scene_id: int, attack_id: int) -> HttpResponse:
    scene, access = _manager(request, slug, scene_id)
    attack = _attack(scene, attack_id)
    form = EffectForm(request.POST)
    if form.is_valid():
        error = _attempt(
            services.critical_effect_confirm,
            attack=attack,
            access=access,
            confirm=form.cleaned_data["decision"] == "confirm",
            phrase=form.cleaned_data["phrase"],
        )
    else:
        error = refusal_message(form, missing=_("Elige confirmar o descartar."))
    return _done(request, scene, access, "combat-attacks", error)
