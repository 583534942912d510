"""Vaesen combat in a scene, played in posts (V17–V25): the GM's panel
(participants, ambush, initiative, turns, rounds) and the players' answers
(their characters' actions and their reactions to what is aimed at them).
The arithmetic is ``systems.vaesen.combat.services``'s, which asks ``rules/``.

Whoever may read the scene may watch the combat; the GM runs it; a player
acts and reacts with their own character only. Each action answers an htmx
request with the board as it is now and a plain form post with a redirect
to the page (its refusal as a message).
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

from campaigns import absences, deadlines, fragments
from campaigns import permissions as perms
from campaigns.models import Scene
from campaigns.permissions import Access
from hitos_site.htmx import HtmxHttpRequest, after_action, page_or_fragment, wants_fragment
from systems.vaesen.combat import reactions, services, turns
from systems.vaesen.combat.forms import (
    AmbushForm,
    CombatantAddForm,
    CombatStartForm,
    DeclareForm,
    InitiativeForm,
    ReactForm,
    ReactionDeadlineForm,
    SwapForm,
    TurnDeadlineForm,
)
from systems.vaesen.fear.views import vaesen_scene
from systems.vaesen.models import VaesenAction, VaesenCombat, VaesenCombatant, VaesenWeapon
from table import combat_status
from table.cards import cards_for
from table.models import TableRoll

TEMPLATE = "vaesen/combat.html"
BOARD = "combat-board"
ROLL_FIELDS = ("roll", "reaction_roll", "armour_roll", "injury_roll")


def _manager(request: HttpRequest, slug: str, scene_id: int) -> tuple[Scene, Access]:
    return vaesen_scene(
        request, slug, scene_id, need=perms.can_manage, denied=_("Solo la dirección de la partida dirige el combate.")
    )


def _player(request: HttpRequest, slug: str, scene_id: int) -> tuple[Scene, Access]:
    return vaesen_scene(
        request, slug, scene_id, need=perms.can_play, denied=_("Solo los jugadores y la dirección actúan en combate.")
    )


def _current_combat(scene: Scene) -> VaesenCombat | None:
    """The open combat of the scene, or else the last one that ended; with
    the id of its turn's open deadline and whether anyone in the campaign is
    away today (``table.combat_status``)."""
    return combat_status.current_combat(VaesenCombat, scene, deadline_kind=turns.DEADLINE_KIND)


def _combatants(combat: VaesenCombat) -> list[VaesenCombatant]:
    combatants = list(
        combat.combatants.select_related("character__owner", "character__vaesen", "initiative__latest")
        .prefetch_related(
            Prefetch("character__vaesen__weapons", queryset=VaesenWeapon.objects.order_by("id")),
        )
        .order_by("order", "id")
    )
    for combatant in combatants:
        combatant.character.campaign = combat.campaign
        combatant.combat = combat
    return combatants


def _rolls_related() -> list[str]:
    fields = []
    for name in ROLL_FIELDS:
        fields += [f"{name}__first__user", f"{name}__latest__user", f"{name}__owner", f"{name}__character"]
    return fields


def _actions(
    combat: VaesenCombat, combatants: list[VaesenCombatant], access: Access, reaction_form=None
) -> list[VaesenAction]:
    """Each action, newest first, with its cards, what the user may answer
    and, while it waits for a player's reaction, that reaction's deadline
    (and for the direction its form: ``reaction_form``, refused, for its action)."""
    by_id = {c.pk: c for c in combatants}
    actions = list(combat.actions.select_related(*_rolls_related()).order_by("-created_at", "-id"))
    table_rolls = [getattr(a, name) for a in actions for name in ROLL_FIELDS if getattr(a, f"{name}_id")]
    ambush = _ambush_rolls(combat)
    in_the_fight = any(perms.can_write_as_character(access, c.character) for c in combatants) or None
    cards = cards_for(table_rolls + ambush, access=access, has_character=in_the_fight)
    combat.ambush_cards = [cards[tr.pk] for tr in ambush]
    open_combat = combat.ended_at is None
    for action in actions:
        action.combat = combat
        action.actor = by_id[action.actor_id]
        action.target = by_id.get(action.target_id) if action.target_id else None
        action.cards = [cards[getattr(action, f"{name}_id")] for name in ROLL_FIELDS if getattr(action, f"{name}_id")]
        action.answers = _answers(action, combatants, access) if open_combat and action.pending else []
        action.can_cancel = open_combat and action.pending and access.is_gm
        action.can_swap = (
            open_combat
            and action.may_swap
            and not action.swapped
            and action.target is not None
            and services.can_act_for(access, action.target)
        )
    # The reactions players are waited for, with their deadlines (one query, none without any).
    awaiting = [a for a in actions if reactions.awaits_a_player(a)] if open_combat else []
    due = deadlines.open_for(reactions.DEADLINE_KIND, [a.pk for a in awaiting])
    for action in awaiting:
        action.reaction_deadline = due.get(action.pk)
        if action.reaction_deadline is not None:
            action.reaction_deadline.campaign = combat.campaign
        if access.is_gm:
            refused = reaction_form is not None and reaction_form.action_id == action.pk
            action.deadline_form = (
                reaction_form if refused else ReactionDeadlineForm(campaign=combat.campaign, action_id=action.pk)
            )
    return actions


def _ambush_rolls(combat: VaesenCombat) -> list:
    ids = [pk for pk in (combat.ambush_roll_id, combat.ambush_watch_roll_id) if pk]
    if not ids:
        return []
    rolls = TableRoll.objects.select_related("first__user", "latest__user", "owner", "character").filter(pk__in=ids)
    return sorted(rolls, key=lambda tr: ids.index(tr.pk))


def _answers(action: VaesenAction, combatants: list[VaesenCombatant], access: Access) -> list[dict]:
    """The reactions the user may declare to a pending action: (value,
    label, reactor) for each, from ``services.reaction_refusal``."""
    if action.kind == VaesenAction.Kind.FLEE:
        reactors = [c for c in combatants if c.pk != action.actor_id and not c.fled]
    else:
        reactors = [action.target] if action.target is not None else []
    answers = []
    for value in services.REACTIONS[action.kind]:
        if value == VaesenAction.Reaction.NONE:
            if services.may_answer(access, action, None if action.kind == VaesenAction.Kind.FLEE else action.target):
                answers.append({"value": value, "label": VaesenAction.Reaction(value).label, "reactor": None})
            continue
        for reactor in reactors:
            if services.may_answer(access, action, reactor) and (
                services.reaction_refusal(access, action, value, reactor) is None
            ):
                answers.append({"value": value, "label": VaesenAction.Reaction(value).label, "reactor": reactor})
    return answers


def _context(request: HttpRequest, scene: Scene, access: Access, **extra) -> dict:
    combat = _current_combat(scene)
    context = {"campaign": scene.campaign, "scene": scene, "access": access, "combat": combat}
    if combat is None:
        if access.is_gm:
            context["start_form"] = CombatStartForm(campaign=scene.campaign)
        context.update(extra)
        return context
    combatants = _combatants(combat)
    open_combat = combat.ended_at is None
    ready = services.initiative_ready(combatants)
    acting = services.current(combat, combatants)
    # Who is away today, beside their characters' names (one query, when anyone is).
    away = combat_status.away_today(combat)
    for combatant in combatants:
        combatant.absence = None if combatant.character.is_npc else away.get(combatant.character.owner_id)
    context["turn_deadline"] = combat_status.combat_deadline(combat)
    actors = [c for c in combatants if not c.fled and services.can_act_for(access, c)] if open_combat and ready else []
    for combatant in combatants:
        combatant.is_acting = acting is not None and combatant.pk == acting.pk
        combatant.holder = next((c for c in combatants if c.pk == combatant.held_by_id), None)
        combatant.can_release = (
            open_combat and combatant.holder is not None and services.can_act_for(access, combatant.holder)
        )
    context.update(
        combatants=combatants,
        acting=acting,
        ready=ready,
        actions=_actions(combat, combatants, access, extra.pop("reaction_form", None)),
        declare_form=DeclareForm(combatants=combatants, actors=actors) if actors else None,
    )
    if access.is_gm and open_combat:
        context.update(
            add_form=CombatantAddForm(campaign=scene.campaign, combat=combat, combatants=combatants),
            ambush_form=(
                AmbushForm(combatants=combatants)
                if combat.ambush_roll_id is None and not any(c.initiative_value is not None for c in combatants)
                else None
            ),
            swap_form=SwapForm(combatants=combatants) if ready else None,
            deadline_form=TurnDeadlineForm(campaign=scene.campaign)
            if turns.turn_of(combat, combatants) is not None
            else None,
        )
    elif access.is_gm:
        context["start_form"] = CombatStartForm(campaign=scene.campaign)
    context.update(extra)
    return context


def _done(request: HtmxHttpRequest, scene: Scene, access: Access, error: str = "", anchor: str = "") -> HttpResponse:
    """After an action: the board for htmx (with the error, if any), a
    redirect to the page otherwise (the error as a message)."""
    return after_action(
        request,
        fragment=lambda error: render(request, f"{TEMPLATE}#{BOARD}", _context(request, scene, access, error=error)),
        url=reverse("vaesen:combat", args=[scene.campaign.slug, scene.pk]) + anchor,
        error=error,
    )


def _message(exc: ValidationError) -> str:
    return " ".join(exc.messages)


def _form_error(form) -> str:
    return " ".join(message for messages_ in form.errors.values() for message in messages_)


def _attempt(service, /, **kwargs) -> str:
    """Run a service action; its refusal (a ``ValidationError``) comes back
    as the message to show, success as ""."""
    try:
        service(**kwargs)
    except ValidationError as exc:
        return _message(exc)
    return ""


def _combat(scene: Scene, combat_id: int) -> VaesenCombat:
    combat = get_object_or_404(VaesenCombat, pk=combat_id, scene=scene)
    combat.campaign = scene.campaign
    combat.scene = scene
    return combat


def _combatant(scene: Scene, combatant_id: int) -> VaesenCombatant:
    combatant = get_object_or_404(
        VaesenCombatant.objects.select_related("combat", "character"), pk=combatant_id, combat__scene=scene
    )
    combatant.combat.campaign = scene.campaign
    combatant.combat.scene = scene
    return combatant


def _action(scene: Scene, action_id: int) -> VaesenAction:
    action = get_object_or_404(VaesenAction.objects.select_related("combat"), pk=action_id, combat__scene=scene)
    action.combat.campaign = scene.campaign
    action.combat.scene = scene
    return action


# --- the page ------------------------------------------------------------------------------


@require_safe
def combat_detail(request: HtmxHttpRequest, slug: str, scene_id: int) -> HttpResponse:
    """The scene's combat: the order, whose turn it is, the actions with
    their rolls' cards and what the reader may do; as the cache keeps it
    for this reader (``campaigns.fragments``) until anything it shows changes."""
    scene, access = vaesen_scene(request, slug, scene_id)
    part = BOARD if wants_fragment(request) else "combat-page"
    key = fragments.key(
        "vaesen-" + part,
        scene.pk,
        *fragments.versions(fragments.campaign_scope(scene.campaign_id), fragments.PEOPLE),
        fragments.viewer(request.user, access.standing),
        # The absences beside the names change with the campaign's day.
        absences.campaign_today(scene.campaign),
    )
    content = fragments.with_csrf(request, fragments.cached(key, lambda: _page(request, scene, access, part))["html"])
    if part == BOARD:
        response = HttpResponse(content)
    else:
        response = render(request, TEMPLATE, {"campaign": scene.campaign, "scene": scene, "content": content})
    patch_vary_headers(response, ("HX-Request",))
    return response


def _page(request: HtmxHttpRequest, scene: Scene, access: Access, part: str) -> dict:
    context = _context(request, scene, access)
    html = render_to_string(f"{TEMPLATE}#{part}", {**context, **fragments.csrf_context()}, request=request)
    # The deadlines' lines say the time left: kept until the first of them changes.
    shown = [context.get("turn_deadline")]
    shown += [getattr(action, "reaction_deadline", None) for action in context.get("actions", ())]
    seconds = [deadlines.seconds_until_left_changes(deadline) for deadline in shown if deadline is not None]
    return {"html": html, "seconds": min(seconds)} if seconds else {"html": html}


# --- the GM's panel ------------------------------------------------------------------------------


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
        return page_or_fragment(request, TEMPLATE, BOARD, _context(request, scene, access, start_form=form))
    return _done(request, scene, access)


def _gm_action(request, slug, scene_id, combat_id, service) -> HttpResponse:
    scene, access = _manager(request, slug, scene_id)
    combat = _combat(scene, combat_id)
    return _done(request, scene, access, _attempt(service, combat=combat, access=access))


@login_required
@require_POST
def combat_initiative(request: HtmxHttpRequest, slug: str, scene_id: int, combat_id: int) -> HttpResponse:
    scene, access = _manager(request, slug, scene_id)
    combat = _combat(scene, combat_id)
    form = InitiativeForm(request.POST)
    if not form.is_valid():
        return _done(request, scene, access, _form_error(form))
    seed = form.cleaned_data["client_seed"] or None
    return _done(
        request, scene, access, _attempt(services.initiative_roll, combat=combat, access=access, client_seed=seed)
    )


@login_required
@require_POST
def combat_turn(request: HtmxHttpRequest, slug: str, scene_id: int, combat_id: int) -> HttpResponse:
    return _gm_action(request, slug, scene_id, combat_id, services.next_turn)


@login_required
@require_POST
def combat_deadline(request: HtmxHttpRequest, slug: str, scene_id: int, combat_id: int) -> HttpResponse:
    """The direction gives the current turn a date to answer by (or moves it)."""
    scene, access = _manager(request, slug, scene_id)
    combat = _combat(scene, combat_id)
    form = TurnDeadlineForm(request.POST, campaign=scene.campaign)
    if form.is_valid():
        due_at, remind_before = deadlines.deadline_from(form.cleaned_data)
        try:
            turns.turn_deadline_set(combat=combat, access=access, due_at=due_at, remind_before=remind_before)
        except ValidationError as exc:
            form.add_error("plazo" if exc.code == "past" else None, exc)
    if form.errors:
        return page_or_fragment(request, TEMPLATE, BOARD, _context(request, scene, access, deadline_form=form))
    return _done(request, scene, access)


@login_required
@require_POST
def action_deadline(request: HtmxHttpRequest, slug: str, scene_id: int, action_id: int) -> HttpResponse:
    """The direction gives the reaction an action waits for a date to answer by (or moves it)."""
    scene, access = _manager(request, slug, scene_id)
    action = _action(scene, action_id)
    form = ReactionDeadlineForm(request.POST, campaign=scene.campaign, action_id=action.pk)
    if form.is_valid():
        due_at, remind_before = deadlines.deadline_from(form.cleaned_data)
        try:
            reactions.reaction_deadline_set(action=action, access=access, due_at=due_at, remind_before=remind_before)
        except ValidationError as exc:
            if exc.code != "past":
                # Nothing to give a deadline to (answered, or an NPC's): the board as it is now.
                return _done(request, scene, access, _message(exc))
            form.add_error("plazo", exc)
    if form.errors:
        context = _context(request, scene, access, reaction_form=form)
        return page_or_fragment(request, TEMPLATE, BOARD, context)
    return _done(request, scene, access, anchor=f"#accion-{action.pk}")


@login_required
@require_POST
def combat_end(request: HtmxHttpRequest, slug: str, scene_id: int, combat_id: int) -> HttpResponse:
    return _gm_action(request, slug, scene_id, combat_id, services.combat_end)


@login_required
@require_POST
def combatant_add(request: HtmxHttpRequest, slug: str, scene_id: int, combat_id: int) -> HttpResponse:
    scene, access = _manager(request, slug, scene_id)
    combat = _combat(scene, combat_id)
    form = CombatantAddForm(request.POST, campaign=scene.campaign, combat=combat, combatants=_combatants(combat))
    if form.is_valid():
        error = _attempt(services.combatant_add, combat=combat, access=access, character=form.cleaned_data["character"])
    else:
        error = _form_error(form)
    return _done(request, scene, access, error)


@login_required
@require_POST
def combatant_remove(request: HtmxHttpRequest, slug: str, scene_id: int, combatant_id: int) -> HttpResponse:
    scene, access = _manager(request, slug, scene_id)
    combatant = _combatant(scene, combatant_id)
    return _done(request, scene, access, _attempt(services.combatant_remove, combatant=combatant, access=access))


@login_required
@require_POST
def combat_ambush(request: HtmxHttpRequest, slug: str, scene_id: int, combat_id: int) -> HttpResponse:
    scene, access = _manager(request, slug, scene_id)
    combat = _combat(scene, combat_id)
    form = AmbushForm(request.POST, combatants=_combatants(combat))
    if form.is_valid():
        data = form.cleaned_data
        error = _attempt(
            services.ambush,
            combat=combat,
            access=access,
            roller=data["roller"],
            watcher=data["watcher"],
            ambushers=data["ambushers"],
            client_seed=data["client_seed"] or None,
        )
    else:
        error = _form_error(form)
    return _done(request, scene, access, error)


@login_required
@require_POST
def combat_swap(request: HtmxHttpRequest, slug: str, scene_id: int, combat_id: int) -> HttpResponse:
    scene, access = _manager(request, slug, scene_id)
    combat = _combat(scene, combat_id)
    form = SwapForm(request.POST, combatants=_combatants(combat))
    if form.is_valid():
        data = form.cleaned_data
        error = _attempt(
            services.initiative_swap, combat=combat, access=access, first=data["first"], second=data["second"]
        )
    else:
        error = _form_error(form)
    return _done(request, scene, access, error)


@login_required
@require_POST
def action_cancel(request: HtmxHttpRequest, slug: str, scene_id: int, action_id: int) -> HttpResponse:
    scene, access = _manager(request, slug, scene_id)
    action = _action(scene, action_id)
    return _done(request, scene, access, _attempt(services.cancel, action=action, access=access))


# --- the players' (and the GM's) answers ------------------------------------------------------


@login_required
@require_POST
def action_declare(request: HtmxHttpRequest, slug: str, scene_id: int, combat_id: int) -> HttpResponse:
    scene, access = _player(request, slug, scene_id)
    combat = _combat(scene, combat_id)
    combatants = _combatants(combat)
    actors = [c for c in combatants if services.can_act_for(access, c)]
    if not actors:
        raise PermissionDenied(_("No tienes ningún personaje en este combate."))
    form = DeclareForm(request.POST, combatants=combatants, actors=actors)
    if form.is_valid():
        data = form.cleaned_data
        try:
            action = services.declare(
                combat=combat,
                access=access,
                actor=data["actor"],
                kind=data["kind"],
                target=data["target"],
                weapon=data["weapon"],
                silence=data["silence"],
            )
        except ValidationError as exc:
            form.add_error(None, exc)
        else:
            return _done(request, scene, access, anchor=f"#accion-{action.pk}")
    # What was typed comes back with the refusal, on the board or the whole page.
    return page_or_fragment(request, TEMPLATE, BOARD, _context(request, scene, access, declare_form=form))


@login_required
@require_POST
def action_react(request: HtmxHttpRequest, slug: str, scene_id: int, action_id: int) -> HttpResponse:
    scene, access = _player(request, slug, scene_id)
    action = _action(scene, action_id)
    form = ReactForm(request.POST)
    if not form.is_valid():
        return _done(request, scene, access, _form_error(form))
    reactor = None
    if form.cleaned_data["reactor"]:
        reactor = VaesenCombatant.objects.filter(pk=form.cleaned_data["reactor"], combat=action.combat).first()
        if reactor is None:
            return _done(request, scene, access, _("Ese personaje no está en este combate."))
    error = _attempt(
        services.react,
        action=action,
        access=access,
        reaction=form.cleaned_data["reaction"],
        reactor=reactor,
        client_seed=form.cleaned_data["client_seed"] or None,
    )
    return _done(request, scene, access, error, anchor="" if error else f"#accion-{action.pk}")


@login_required
@require_POST
def action_swap(request: HtmxHttpRequest, slug: str, scene_id: int, action_id: int) -> HttpResponse:
    scene, access = _player(request, slug, scene_id)
    action = _action(scene, action_id)
    return _done(request, scene, access, _attempt(services.swap_after_reaction, action=action, access=access))


@login_required
@require_POST
def combatant_release(request: HtmxHttpRequest, slug: str, scene_id: int, combatant_id: int) -> HttpResponse:
    scene, access = _player(request, slug, scene_id)
    combatant = _combatant(scene, combatant_id)
    return _done(request, scene, access, _attempt(services.release, combatant=combatant, access=access))
