"""Hero point moves that are not rolls (A21, A23, A25–A28), on the ledger
(``heroes.ledger``: every move a ``HeroMove`` and a ``SheetEvent``, with the
sheet's row locked, so one point is never spent twice).

- Spends (A23): ignore one of the sheet's states for the turn, recover up to
  two health levels, activate a feat that needs a point; each may be paid
  with 2 XP instead (A28: the instant point is bought and spent at once).
  A24 — one point per use per turn (the turn: ``ledger.turn_of``). The GM
  spending a player's hero's point says why (the history shows it).
- Earnings: the GM grants a point for facing the flaw or a sacrifice (A25),
  or a player asks and the GM decides; a player gives one of their points to
  another hero, moved only when the GM approves (A26); a state «por el
  morro» proposed by one side and accepted by the other gives a point and
  lasts the scene (A27).
- A21: «Nueva aventura», every hero back to exactly 5.

Every refusal is a ``ValidationError`` in Spanish with nothing changed; who
may act is checked here too (``PermissionDenied``): a player for the
characters they may play (``sheets.permissions.can_play_character``), the GM
for everyone.
"""

from __future__ import annotations

from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.db.models import OuterRef, Subquery
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from campaigns.models import Post, Scene
from campaigns.permissions import Access, campaign_access, seen_scene_ids
from rules.aventuras import HeroGain, HeroSpend
from sheets.models import Character, SheetEvent
from sheets.permissions import can_play_character, is_owner
from sheets.services import sheet_log
from systems.aventuras.heroes import ledger
from systems.aventuras.models import (
    AventurasEvent,
    AventurasFeat,
    AventurasSheet,
    AventurasState,
    HeroMove,
    HeroRequest,
)

# A23 — "recuperar hasta dos niveles de salud".
MAX_RECOVERED_LEVELS = 2
# The keys of a spend's ``SheetEvent.after`` that say which state it ignored, in which turn.
IGNORED_STATE = "ignored_state"
TURN = "turn"

EARNED_BY = {HeroRequest.Kind.FLAW: HeroGain.FACE_FLAW, HeroRequest.Kind.SACRIFICE: HeroGain.SACRIFICE}


# --- who, which character, which scene ------------------------------------------------------


def heroes(campaign):
    """A21 — the campaign's heroes: player characters with a sheet and hero points."""
    return (
        Character.objects.filter(
            campaign=campaign, kind=Character.Kind.PC, aventuras__isnull=False, aventuras__hero_points__isnull=False
        )
        .select_related("aventuras", "owner")
        .order_by("name", "pk")
    )


def _access(actor, campaign) -> Access:
    return campaign_access(actor, campaign)


def _check_player(actor, character: Character, access: Access | None = None) -> Access:
    """The actor plays ``character`` (the GM plays everyone), or 403."""
    access = access or _access(actor, character.campaign)
    if not can_play_character(access, character):
        raise PermissionDenied(
            _("Solo la dirección o quien lleva a %(name)s mueve sus puntos de Héroe.") % {"name": character.name}
        )
    return access


def _check_gm(access: Access) -> None:
    if not access.is_gm:
        raise PermissionDenied(_("Solo la dirección puede hacer esto con los puntos de Héroe."))


def _check_hero(character: Character) -> None:
    """A20/A21 — an approved player character with hero points."""
    sheet = getattr(character, "aventuras", None)
    if sheet is None or character.campaign.system != "aventuras":
        raise ValidationError(
            _("%(name)s no tiene ficha de Hora de Aventuras.") % {"name": character.name}, code="no_sheet"
        )
    if not sheet.is_hero or character.is_npc:
        raise ValidationError(
            _("%(name)s es un personaje del director: no tiene puntos de Héroe.") % {"name": character.name},
            code="no_hero_points",
        )
    if character.status != Character.Status.APPROVED:
        raise ValidationError(
            _("La ficha de %(name)s aún no está aprobada: todavía no juega.") % {"name": character.name},
            code="not_approved",
        )


def _check_scene(scene: Scene | None, character: Character, *, required: bool = True) -> None:
    if scene is None:
        if required:
            raise ValidationError(_("Elige la escena en la que juegas."), code="scene")
        return
    if scene.campaign_id != character.campaign_id or scene.is_offgame:
        raise ValidationError(_("Esa escena no es de esta partida."), code="scene")
    if scene.status != Scene.Status.OPEN:
        raise ValidationError(_("La escena «%(title)s» está cerrada.") % {"title": scene.title}, code="scene")


def _owner_sees(scene: Scene, character: Character) -> bool:
    """Whether the character's owner may open ``scene``: the sheet's history,
    which they read, names a scene only then."""
    return scene.pk in seen_scene_ids(campaign_access(character.owner, character.campaign), [scene.pk])


def _why(why: str) -> str:
    return (why or "").strip()


def _check_spend_why(access: Access, character: Character, why: str) -> None:
    """A point of someone else's hero (the GM spending a player's) says why:
    the player reads it in the history (who, when, why)."""
    if not is_owner(access, character) and not _why(why):
        raise ValidationError(_("Escribe por qué gastas un punto de Héroe de otra persona."), code="why")


# --- spends that are not rolls (A23, A24, A28) ----------------------------------------------


def _spend(
    character: Character,
    use: HeroSpend,
    *,
    actor,
    scene: Scene,
    detail: str,
    why: str,
    with_experience: bool,
    facts: dict | None = None,
) -> HeroMove:
    turn = ledger.turn_of(character, scene)
    return ledger.spend(
        character,
        use,
        by=actor,
        turn=turn,
        scene=scene,
        detail=detail,
        why=_why(why),
        with_experience=with_experience,
        facts={**(facts or {}), TURN: turn},
    )


def ignore_state(
    *, character: Character, actor, scene: Scene, state_id: int, why: str = "", with_experience: bool = False
) -> HeroMove:
    """A23 — «ignorar un estado durante un turno»: one of the sheet's states
    does not count while the character's turn (``ledger.turn_of``) lasts."""
    access = _check_player(actor, character)
    _check_hero(character)
    _check_scene(scene, character)
    _check_spend_why(access, character, why)
    with transaction.atomic():
        state = AventurasState.objects.filter(sheet_id=character.pk, pk=state_id).first()
        if state is None:
            raise ValidationError(_("Ese estado no está en la ficha de %(name)s.") % {"name": character.name})
        return _spend(
            character,
            HeroSpend.IGNORE_STATE,
            actor=actor,
            scene=scene,
            detail=state.name,
            why=why,
            with_experience=with_experience,
            facts={IGNORED_STATE: state.pk},
        )


def recover(
    *, character: Character, actor, scene: Scene, levels: int, why: str = "", with_experience: bool = False
) -> HeroMove:
    """A23 — «recuperar hasta dos niveles de salud»: the health lost goes down
    by 1 or 2 (never below none), in the transaction of the spend, with its
    own ``SheetEvent`` of health."""
    access = _check_player(actor, character)
    _check_hero(character)
    _check_scene(scene, character)
    _check_spend_why(access, character, why)
    if levels not in range(1, MAX_RECOVERED_LEVELS + 1):
        raise ValidationError(_("Se recuperan uno o dos niveles de salud por punto de Héroe."), code="levels")
    with transaction.atomic():
        sheet = ledger.locked_sheet(character)
        if not sheet.health_lost:
            raise ValidationError(
                _("%(name)s no ha perdido ningún nivel de salud: no hay nada que recuperar.")
                % {"name": character.name},
                code="healthy",
            )
        before = sheet.health_lost
        # Up to the levels chosen, never more than were lost.
        recovered = min(levels, before)
        detail = ngettext("recupera %(levels)d nivel de salud", "recupera %(levels)d niveles de salud", recovered) % {
            "levels": recovered
        }
        move = _spend(
            character,
            HeroSpend.RECOVER,
            actor=actor,
            scene=scene,
            detail=detail,
            why=why,
            with_experience=with_experience,
            facts={"health_recovered": recovered},
        )
        sheet.health_lost = before - recovered
        sheet.save(update_fields=["health_lost"])
        sheet_log(
            character,
            character.campaign,
            actor,
            AventurasEvent.HEALTH,
            ngettext(
                "Recupera %(levels)d nivel de salud con un punto de Héroe (le quedan %(left)d de %(health)d)",
                "Recupera %(levels)d niveles de salud con un punto de Héroe (le quedan %(left)d de %(health)d)",
                recovered,
            )
            % {"levels": recovered, "left": sheet.health_left, "health": sheet.health},
            reason=_why(why),
            before={"health_lost": before},
            after={"health_lost": sheet.health_lost},
        )
        return move


def activate_feat(
    *, character: Character, actor, scene: Scene, feat_id: int, why: str = "", with_experience: bool = False
) -> HeroMove:
    """A23 — «activar una proeza que lo necesite»."""
    access = _check_player(actor, character)
    _check_hero(character)
    _check_scene(scene, character)
    _check_spend_why(access, character, why)
    with transaction.atomic():
        feat = AventurasFeat.objects.filter(sheet_id=character.pk, pk=feat_id).first()
        if feat is None:
            raise ValidationError(_("Esa proeza no está en la ficha de %(name)s.") % {"name": character.name})
        if not feat.needs_hero_point:
            raise ValidationError(
                _("La proeza «%(feat)s» no necesita un punto de Héroe para funcionar.") % {"feat": feat.name}
            )
        return _spend(
            character,
            HeroSpend.FEAT,
            actor=actor,
            scene=scene,
            detail=feat.name,
            why=why,
            with_experience=with_experience,
            facts={"feat": feat.pk},
        )


def _latest_posts(characters, scene: Scene) -> dict[int, str]:
    """A24 — each character's turn in ``scene`` (as ``ledger.turn_of``), in one query."""
    latest = Post.objects.filter(scene=scene, character=OuterRef("pk")).order_by("-created_at", "-id").values("pk")[:1]
    ids = [c.pk for c in characters]
    rows = Character.objects.filter(pk__in=ids).annotate(latest=Subquery(latest)).values_list("pk", "latest")
    return {pk: (ledger.post_turn(post) if post is not None else f"scene:{scene.pk}") for pk, post in rows}


def ignored_states_of(characters, scene: Scene | None, *, turns: dict[int, str] | None = None) -> dict[int, set[int]]:
    """A23 — per character, the ids of the states a hero point ignores in its
    current turn of ``scene`` (``turns``: the turn to look at per character
    id, when the caller knows it), in two queries whatever the number of characters."""
    characters = list(characters)
    result: dict[int, set[int]] = {c.pk: set() for c in characters}
    if scene is None or not characters:
        return result
    turns = {**_latest_posts(characters, scene), **(turns or {})}
    events = SheetEvent.objects.filter(
        character_id__in=list(result),
        kind=AventurasEvent.HERO,
        after__has_key=IGNORED_STATE,
        after__turn__in=sorted(set(turns.values())),
    ).values_list("character_id", "after")
    for character_id, after in events:
        if after.get(TURN) == turns.get(character_id):
            result[character_id].add(after[IGNORED_STATE])
    return result


def ignored_for_next_roll(character: Character) -> set[int]:
    """A23 — the ids of the states a hero point ignores for ``character``'s
    next roll: those ignored since its latest post (the turn it is in, in
    whichever scene). A roll is planned before its own post is written, so
    the point spent after the last post counts for the post being written."""
    latest = (
        Post.objects.filter(scene__campaign_id=character.campaign_id, character=character)
        .order_by("-created_at", "-id")
        .values_list("created_at", flat=True)
        .first()
    )
    events = SheetEvent.objects.filter(character=character, kind=AventurasEvent.HERO, after__has_key=IGNORED_STATE)
    if latest is not None:
        events = events.filter(created_at__gte=latest)
    return {after[IGNORED_STATE] for after in events.values_list("after", flat=True)}


def ignored_states(character: Character, scene: Scene | None, *, turn: str | None = None) -> set[int]:
    """A23 — the ids of ``character``'s states ignored this turn (a hero
    point's): the rolls leave them out when they count the dice. ``turn``:
    the turn to look at (``ledger.turn_of`` by default, the latest post)."""
    turns = {character.pk: turn} if turn else None
    return ignored_states_of([character], scene, turns=turns)[character.pk]


# --- earnings (A25–A27) ---------------------------------------------------------------------


def grant(*, character: Character, actor, kind: str, why: str, scene: Scene | None = None) -> HeroMove:
    """A25 — the GM gives a point for facing the flaw or for a sacrifice."""
    access = _access(actor, character.campaign)
    _check_gm(access)
    _check_hero(character)
    _check_scene(scene, character, required=False)
    reason = _earned_by(kind)
    if not _why(why):
        raise ValidationError(_("Escribe por qué gana el punto de Héroe."), code="why")
    with transaction.atomic():
        return ledger.gain(
            character,
            by=actor,
            reason=reason,
            scene=scene,
            why=_why(why),
            detail=_reason_word(reason),
            approved_by=actor,
        )


def _earned_by(kind: str) -> HeroGain:
    try:
        return EARNED_BY[HeroRequest.Kind(kind)]
    except (ValueError, KeyError):
        raise ValidationError(_("Elige si se enfrenta a su defecto o hace un sacrificio."), code="kind") from None


def _reason_word(reason: HeroGain) -> str:
    return {
        HeroGain.FACE_FLAW: _("se enfrenta a su defecto"),
        HeroGain.SACRIFICE: _("un sacrificio"),
        HeroGain.STATE_FOR_FREE: _("un estado por el morro"),
    }[HeroGain(reason)]


def _pending_twin(**fields) -> bool:
    return HeroRequest.objects.filter(status=HeroRequest.Status.PENDING, **fields).exists()


def ask(*, character: Character, actor, kind: str, why: str, scene: Scene | None = None) -> HeroRequest:
    """A25 — a player asks the GM for a point (flaw or sacrifice)."""
    _check_player(actor, character)
    _check_hero(character)
    _check_scene(scene, character, required=False)
    _earned_by(kind)
    if not _why(why):
        raise ValidationError(_("Cuenta a la dirección por qué lo mereces."), code="why")
    if _pending_twin(character=character, kind=kind):
        raise ValidationError(
            _("%(name)s ya tiene una petición así esperando a la dirección.") % {"name": character.name},
            code="twin",
        )
    return HeroRequest.objects.create(
        campaign_id=character.campaign_id,
        scene=scene,
        kind=kind,
        character=character,
        why=_why(why)[:300],
        requested_by=actor,
    )


def offer_gift(*, giver: Character, receiver: Character, actor, why: str, scene: Scene | None = None) -> HeroRequest:
    """A26 — the player of ``giver`` offers one of THEIR points to the hero
    who helped them; nothing moves until the GM approves."""
    _check_player(actor, giver)
    _check_hero(giver)
    _check_hero(receiver)
    _check_scene(scene, giver, required=False)
    if receiver.campaign_id != giver.campaign_id:
        raise ValidationError(_("Ese héroe no es de esta partida."), code="receiver")
    if receiver.pk == giver.pk:
        raise ValidationError(_("Un héroe no puede darse un punto de Héroe a sí mismo."), code="receiver")
    if not _why(why):
        raise ValidationError(_("Cuenta cómo te ha ayudado %(name)s.") % {"name": receiver.name}, code="why")
    if not giver.aventuras.hero_points:
        raise ValidationError(_("%(name)s no tiene puntos de Héroe que dar.") % {"name": giver.name}, code="no_points")
    if _pending_twin(kind=HeroRequest.Kind.GIFT, giver=giver, character=receiver):
        raise ValidationError(
            _("Ya hay un punto de %(giver)s para %(receiver)s esperando a la dirección.")
            % {"giver": giver.name, "receiver": receiver.name},
            code="twin",
        )
    return HeroRequest.objects.create(
        campaign_id=giver.campaign_id,
        scene=scene,
        kind=HeroRequest.Kind.GIFT,
        character=receiver,
        giver=giver,
        why=_why(why)[:300],
        requested_by=actor,
    )


def propose_state(*, character: Character, actor, state_name: str, why: str, scene: Scene) -> HeroRequest:
    """A27 — a state «por el morro»: the GM proposes it to a player's hero,
    or the player for their own; the other side accepts."""
    access = _check_player(actor, character)
    _check_hero(character)
    _check_scene(scene, character)
    name = (state_name or "").strip()
    if not name:
        raise ValidationError(_("Escribe el estado (hambriento, cansado…)."), code="state_name")
    if len(name) > 80:
        raise ValidationError(_("El nombre del estado tiene como mucho 80 caracteres."), code="state_name")
    if not _why(why):
        raise ValidationError(_("Cuenta por qué pega en la historia."), code="why")
    if not access.is_gm and not is_owner(access, character):
        raise PermissionDenied(_("Solo la dirección o quien lleva a %(name)s lo propone.") % {"name": character.name})
    if _pending_twin(kind=HeroRequest.Kind.STATE, character=character, state_name=name):
        raise ValidationError(_("Ese estado ya está propuesto y esperando respuesta."), code="twin")
    return HeroRequest.objects.create(
        campaign_id=character.campaign_id,
        scene=scene,
        kind=HeroRequest.Kind.STATE,
        character=character,
        state_name=name,
        why=_why(why)[:300],
        requested_by=actor,
    )


# --- deciding a request ---------------------------------------------------------------------


def gm_decides(hero_request: HeroRequest) -> bool:
    """A25/A26 — the GM decides a claim or a gift; A27 — a state is accepted
    by the other side: the GM when the player proposed it, the player when
    the GM did."""
    if hero_request.kind != HeroRequest.Kind.STATE:
        return True
    return hero_request.requested_by_id == hero_request.character.owner_id


def can_decide(access: Access, hero_request: HeroRequest) -> bool:
    if hero_request.status != HeroRequest.Status.PENDING:
        return False
    if gm_decides(hero_request):
        return access.is_gm and (
            hero_request.kind != HeroRequest.Kind.STATE or hero_request.requested_by_id != access.user.pk
        )
    return is_owner(access, hero_request.character) and hero_request.requested_by_id != access.user.pk


def can_withdraw(access: Access, hero_request: HeroRequest) -> bool:
    return hero_request.status == HeroRequest.Status.PENDING and hero_request.requested_by_id == getattr(
        access.user, "pk", None
    )


def _locked_request(request_id: int, campaign) -> HeroRequest:
    hero_request = (
        HeroRequest.objects.select_for_update(of=("self",))
        .select_related("character__campaign", "giver__campaign", "scene")
        .filter(pk=request_id, campaign=campaign)
        .first()
    )
    if hero_request is None:
        raise ValidationError(_("Esa petición no existe."), code="missing")
    return hero_request


def _already(hero_request: HeroRequest) -> ValidationError:
    return ValidationError(
        _("Esa petición ya está %(status)s.") % {"status": hero_request.get_status_display()}, code="decided"
    )


def decide(*, request_id: int, campaign, actor, accept: bool) -> HeroRequest:
    """Accept or refuse a pending request (row locked: decided once). On
    acceptance: A25 +1; A26 giver −1 and receiver +1 (refused, still
    pending, when the giver has no point by then); A27 the state on the
    sheet for the scene and +1."""
    access = _access(actor, campaign)
    with transaction.atomic():
        hero_request = _locked_request(request_id, campaign)
        if hero_request.status != HeroRequest.Status.PENDING:
            raise _already(hero_request)
        if not can_decide(access, hero_request):
            if gm_decides(hero_request):
                raise PermissionDenied(_("Esta petición la decide la dirección."))
            raise PermissionDenied(
                _("Este estado lo acepta quien lleva a %(name)s.") % {"name": hero_request.character.name}
            )
        if accept:
            _carry_out(hero_request, actor)
        hero_request.status = HeroRequest.Status.ACCEPTED if accept else HeroRequest.Status.REFUSED
        hero_request.decided_by = actor
        hero_request.decided_at = timezone.now()
        hero_request.save(update_fields=["status", "decided_by", "decided_at"])
        return hero_request


def _carry_out(hero_request: HeroRequest, actor) -> None:
    character = hero_request.character
    _check_hero(character)
    why = hero_request.why
    if hero_request.kind == HeroRequest.Kind.GIFT:
        _check_hero(hero_request.giver)
        ledger.give(
            hero_request.giver,
            character,
            by=hero_request.requested_by,
            approved_by=actor,
            scene=hero_request.scene,
            why=why,
        )
        return
    if hero_request.kind == HeroRequest.Kind.STATE:
        _check_scene(hero_request.scene, character)
        sheet = ledger.locked_sheet(character)
        state = AventurasState.objects.create(
            sheet=sheet, name=hero_request.state_name, for_free=True, scene=hero_request.scene
        )
        if _owner_sees(hero_request.scene, character):
            summary = _("Recibe el estado por el morro «%(state)s» (dura la escena «%(scene)s»)") % {
                "state": state.name,
                "scene": hero_request.scene.title,
            }
        else:
            summary = _("Recibe el estado por el morro «%(state)s» (dura una escena)") % {"state": state.name}
        sheet_log(
            character,
            character.campaign,
            actor,
            AventurasEvent.STATE,
            summary,
            reason=why,
            after={"state": state.pk, "for_free": True},
        )
        ledger.gain(
            character,
            by=hero_request.requested_by,
            reason=HeroGain.STATE_FOR_FREE,
            scene=hero_request.scene,
            detail=state.name,
            why=why,
            approved_by=actor,
        )
        return
    reason = _earned_by(hero_request.kind)
    ledger.gain(
        character,
        by=hero_request.requested_by,
        reason=reason,
        scene=hero_request.scene,
        detail=_reason_word(reason),
        why=why,
        approved_by=actor,
    )


def withdraw(*, request_id: int, campaign, actor) -> HeroRequest:
    """Whoever made a pending request may take it back."""
    access = _access(actor, campaign)
    with transaction.atomic():
        hero_request = _locked_request(request_id, campaign)
        if hero_request.status != HeroRequest.Status.PENDING:
            raise _already(hero_request)
        if not can_withdraw(access, hero_request):
            raise PermissionDenied(_("Solo quien hizo la petición puede retirarla."))
        hero_request.status = HeroRequest.Status.WITHDRAWN
        hero_request.decided_by = actor
        hero_request.decided_at = timezone.now()
        hero_request.save(update_fields=["status", "decided_by", "decided_at"])
        return hero_request


# --- A21 and the scene's end (A27) -----------------------------------------------------------


def new_adventure(*, campaign, actor, why: str = "") -> list[HeroMove]:
    """A21 — «Nueva aventura»: every hero of the campaign back to exactly 5
    (a move each, with the difference), in one transaction, sheets locked in
    the order of their keys."""
    _check_gm(_access(actor, campaign))
    if campaign.system != "aventuras":
        raise ValidationError(_("Esta partida no es de Hora de Aventuras."))
    reason = _why(why) or _("Nueva aventura")
    with transaction.atomic():
        characters = list(
            Character.objects.filter(pk__in=heroes(campaign).values("pk")).select_related("campaign").order_by("pk")
        )
        return [ledger.new_adventure(character, by=actor, why=reason) for character in characters]


def scene_started(scene, *, actor) -> None:
    """A27 — «Un estado por el morro dura una escena»: the scene where it was
    gained (``AventurasState.scene``).

    The game hears of a new scene (``GameSystem.scene_started``) but not of
    a scene being closed, so the end of a state's scene is read this way,
    when a scene starts:

    * an off-game scene ends nothing (no play happens there);
    * a new in-game scene that includes the state's character's owner (a
      scene for everyone, or one where the owner takes part; the GM, who
      runs every scene, for the GM's characters) ends that character's
      states por el morro gained in any other scene: the character has
      moved on to another scene;
    * a state whose own scene is already archived, or gone, ends too;
    * a parallel scene for other players leaves the state alone.

    Each ended state leaves a ``SheetEvent``."""
    if scene.is_offgame:
        return
    with transaction.atomic():
        candidates = list(
            AventurasState.objects.select_for_update(of=("self",))
            .filter(sheet__character__campaign_id=scene.campaign_id, for_free=True)
            .exclude(scene_id=scene.pk)
            .select_related("sheet__character__campaign", "scene")
            .order_by("pk")
        )
        if not candidates:
            return
        campaign = candidates[0].sheet.character.campaign
        participants = set() if scene.everyone else set(scene.participants.values_list("pk", flat=True))

        def included(character) -> bool:
            return scene.everyone or character.owner_id in participants or character.owner_id == campaign.gm_id

        for state in candidates:
            character = state.sheet.character
            closed = state.scene is None or state.scene.status == Scene.Status.ARCHIVED
            if not (closed or included(character)):
                continue
            # The history names the new scene only to an owner who sees it.
            if included(character):
                summary = _("El estado por el morro «%(state)s» termina: empieza la escena «%(scene)s»") % {
                    "state": state.name,
                    "scene": scene.title,
                }
            else:
                summary = _("El estado por el morro «%(state)s» termina: su escena ya acabó") % {"state": state.name}
            sheet_log(
                character,
                character.campaign,
                actor,
                AventurasEvent.STATE,
                summary,
                before={"state": state.pk, "for_free": True},
            )
            state.delete()


# --- what the panels read ------------------------------------------------------------------


def pending_requests(campaign):
    return (
        HeroRequest.objects.filter(campaign=campaign, status=HeroRequest.Status.PENDING)
        .select_related("character", "giver", "requested_by", "scene")
        .order_by("created_at", "id")
    )


def sheet_of(character: Character) -> AventurasSheet | None:
    return getattr(character, "aventuras", None)
