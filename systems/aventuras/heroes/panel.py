"""Hero points on the sheet and in the scene (interface for the sheet page and
``system.scene_context``), each in a constant number of queries.

- ``sheet_panel``: the hero's points and XP, this turn's uses (A24), the
  states a point ignores this turn (A23), the last moves (who, when, why),
  the requests waiting, and the forms the reader may use.
- ``scene_panel``: the viewer's heroes' points in the scene's bar, the states
  ignored this turn, and the requests the viewer may decide.
"""

from __future__ import annotations

from django.db.models import Q

from campaigns.models import Post, Scene
from campaigns.permissions import Access, sees_scene, visible_scenes
from rules.aventuras import HeroSpend
from sheets.models import Character
from sheets.permissions import can_play_character, can_see_private, is_owner
from systems.aventuras.heroes import ledger, services
from systems.aventuras.heroes.forms import SPEND_USES, EarnForm, GiftForm, SpendForm, StateForm
from systems.aventuras.models import AventurasFeat, AventurasSheet, AventurasState, HeroMove, HeroRequest

HEROES_TEMPLATE = "aventuras/heroes/_panel.html"
BALANCES_TEMPLATE = "aventuras/heroes/_balances.html"
HISTORY = 20


def _open_scenes(access: Access):
    """The open scenes of the game the reader may read (the spends' turn is in one)."""
    return list(
        visible_scenes(access)
        .filter(status=Scene.Status.OPEN, is_offgame=False)
        .order_by("-position", "-created_at", "-id")
        .only("pk", "title", "campaign_id", "status", "is_offgame")
    )


def current_scene(character: Character, scenes: list[Scene]) -> Scene | None:
    """Where the hero plays now: the open scene of its latest post (A24's
    turn), or the newest open scene before it has written any."""
    if not scenes:
        return None
    by_pk = {s.pk: s for s in scenes}
    latest = (
        Post.objects.filter(character=character, scene_id__in=list(by_pk))
        .order_by("-created_at", "-id")
        .values_list("scene_id", flat=True)
        .first()
    )
    return by_pk.get(latest, scenes[0])


def forms_for(access: Access, character: Character, *, scenes: list[Scene], scene: Scene | None, bound=None) -> dict:
    """The forms of the panel the reader may use (``bound``: ``(name, form)``
    of the one that came back refused, typed text and errors kept)."""
    if not can_play_character(access, character) or character.status != Character.Status.APPROVED:
        return {}
    sheet = character.aventuras
    initial = {"scene": str(scene.pk)} if scene is not None else {}
    states = list(AventurasState.objects.filter(sheet=sheet).order_by("pk"))
    feats = list(AventurasFeat.objects.filter(sheet=sheet, needs_hero_point=True).order_by("pk"))
    options = {HeroSpend.IGNORE_STATE: states, HeroSpend.RECOVER: (), HeroSpend.FEAT: feats}
    # The GM spending a player's hero's point says why.
    why_required = not is_owner(access, character)
    found = {
        f"spend_{SPEND_USES[use][0]}": SpendForm(
            use=use, options=options[use], scenes=scenes, initial=initial, why_required=why_required
        )
        for use in SPEND_USES
        if use != HeroSpend.IGNORE_STATE or states
        if use != HeroSpend.FEAT or feats
        if use != HeroSpend.RECOVER or sheet.health_lost
    }
    found["earn"] = EarnForm(scenes=scenes, initial=initial, auto_id="ganar-%s")
    if access.is_gm or is_owner(access, character):
        found["state"] = StateForm(scenes=scenes, initial=initial, auto_id="morro-%s")
    if is_owner(access, character):
        receivers = list(
            services.heroes(character.campaign).exclude(pk=character.pk).filter(status=Character.Status.APPROVED)
        )
        if receivers:
            found["gift"] = GiftForm(receivers=receivers, scenes=scenes, initial=initial, auto_id="regalar-%s")
    if bound is not None:
        found[bound[0]] = bound[1]
    return found


def _uses_this_turn(character: Character, scene: Scene | None) -> tuple[str, list[str]]:
    if scene is None:
        return "", []
    turn = ledger.turn_of(character, scene)
    uses = HeroMove.objects.filter(character=character, kind=HeroMove.Kind.SPEND, turn=turn).values_list(
        "use", flat=True
    )
    return turn, [ledger.use_word(u) for u in uses]


def history(character: Character, access: Access) -> list[HeroMove]:
    """The last moves, newest first, each with its use as people read it
    and its scene only if the reader may open it (a gift made in a
    split-party scene does not name it to a receiver who is not there)."""
    moves = list(
        HeroMove.objects.filter(character=character)
        .select_related("by", "approved_by", "scene")
        .annotate(scene_seen=sees_scene(access))
        .order_by("-created_at", "-id")[:HISTORY]
    )
    for move in moves:
        move.use_label = ledger.use_word(move.use) if move.use else ""
        if not move.scene_seen:
            move.scene = None  # shown, never saved
    return moves


def requests_context(access: Access, hero_requests) -> list[dict]:
    """Each request with what the reader may do with it."""
    return [
        {
            "request": r,
            "can_decide": services.can_decide(access, r),
            "can_withdraw": services.can_withdraw(access, r),
            "gm_decides": services.gm_decides(r),
        }
        for r in hero_requests
    ]


def sheet_panel(character, access, *, bound=None, notice: str = "", error: str = "") -> dict:
    """What the sheet page adds: ``aventuras_heroes_template`` and what it
    reads (``aventuras_heroes``). Nothing for a GM character (A20) or for a
    reader who may not see the sheet's numbers."""
    sheet: AventurasSheet | None = getattr(character, "aventuras", None)
    if sheet is None or not sheet.is_hero or not can_see_private(access, character):
        return {}
    scenes = _open_scenes(access)
    scene = current_scene(character, scenes)
    turn, uses = _uses_this_turn(character, scene)
    ignored = services.ignored_states(character, scene) if scene is not None else set()
    states = [
        {"state": state, "ignored": state.pk in ignored}
        for state in AventurasState.objects.filter(sheet=sheet).order_by("pk")
    ]
    pending = services.pending_requests(character.campaign).filter(Q(character=character) | Q(giver=character))
    return {
        "aventuras_heroes_template": HEROES_TEMPLATE,
        "aventuras_heroes": {
            "character": character,
            "sheet": sheet,
            "points": sheet.hero_points,
            "experience": sheet.experience,
            "health_left": sheet.health_left,
            "health": sheet.health,
            "scene": scene,
            "turn": turn,
            "uses": uses,
            "states": states,
            "moves": history(character, access),
            "requests": requests_context(access, pending),
            "forms": forms_for(access, character, scenes=scenes, scene=scene, bound=bound),
            "is_gm": access.is_gm,
            "where": f"ficha:{character.pk}",
            "target": f"heroes-panel-{character.pk}",
            "notice": notice,
            "error": error,
        },
    }


def _decidable(access: Access, campaign) -> list[HeroRequest]:
    """The pending requests the viewer may decide (GM: claims, gifts and the
    players' states; a player: the GM's states for their heroes)."""
    pending = services.pending_requests(campaign).select_related("character")
    if access.is_gm:
        rows = pending
    elif access.is_player:
        rows = pending.filter(kind=HeroRequest.Kind.STATE, character__owner=access.user)
    else:
        return []
    return [r for r in rows if services.can_decide(access, r)]


def scene_panel(scene, access, *, characters) -> dict:
    """What the scene page adds: ``aventuras_balances_template`` and what it
    reads (``aventuras_balances``): the points of the viewer's heroes, the
    states a point ignores this turn, and the requests they may decide."""
    if scene.is_offgame or not access.user.is_authenticated or not (access.is_gm or access.is_player):
        return {}
    ids = [c.pk for c in characters if can_play_character(access, c)]
    points = dict(
        AventurasSheet.objects.filter(character_id__in=ids, hero_points__isnull=False).values_list(
            "character_id", "hero_points"
        )
    )
    names = {c.pk: c.name for c in characters}
    heroes = [c for c in characters if c.pk in points]
    ignored = services.ignored_states_of(heroes, scene)
    ignored_ids = sorted({pk for ids_ in ignored.values() for pk in ids_})
    state_names = (
        dict(AventurasState.objects.filter(pk__in=ignored_ids).values_list("pk", "name")) if ignored_ids else {}
    )
    rows = [
        {
            "pk": pk,
            "name": names[pk],
            "points": points[pk],
            "ignored": [state_names[s] for s in sorted(ignored.get(pk, ())) if s in state_names],
        }
        for pk in sorted(points, key=lambda pk: (names[pk], pk))
    ]
    requests = requests_context(access, _decidable(access, scene.campaign))
    return {
        "aventuras_balances_template": BALANCES_TEMPLATE,
        "aventuras_balances": {
            "heroes": rows,
            "requests": requests,
            "scene": scene,
            "where": f"escena:{scene.pk}",
            "is_gm": access.is_gm,
        },
    }
