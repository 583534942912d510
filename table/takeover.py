"""Playing an absent player's character ("PNJotizar", issue 17).

While a member is away (``campaigns.absences.away_now``) the direction may
take their approved character over, if what the member allows in this
campaign (``campaigns.absences.effective_consent``) says so: ``gm`` lets the
GM or a co-GM take it; ``named`` also lets a player the direction names
take it, for one scene they may write in themselves. While the takeover lasts, and only while
its owner is still away and still allows it (``still_refused``), its taker
may post and roll as the character (``Post.on_behalf_of`` names the
owner); each such post and roll is written in the sheet's history.
Starting and ending it are in the moderation log. When the owner's return
is noticed (``returned_lines``, a return hook) their takeovers end, and
they are told what was done in their name.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from zoneinfo import ZoneInfo

from django.core.cache import cache
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import IntegrityError, transaction
from django.db.models import Exists, OuterRef, Q
from django.utils import formats, timezone
from django.utils.translation import gettext as _

from accounts.models import TakeoverConsent, User
from campaigns import fragments as site_fragments
from campaigns import notify
from campaigns import services as forum_services
from campaigns.absences import away_now, effective_consent
from campaigns.models import (
    Absence,
    Campaign,
    Membership,
    ModerationAction,
    ModerationLog,
    Notification,
    Post,
    Role,
    Scene,
)
from campaigns.permissions import Access, campaign_access, can_post_in_scene, can_view_scene, seen_scene_ids
from sheets.models import Character, SheetEvent
from sheets.services import sheet_log
from table.models import RollRequest, TableRoll, Takeover

# The kind of sheet-history row a post or roll made for an absent owner
# writes (``sheets.models.SheetEvent.kind``).
SHEET_EVENT = SheetEvent.Kind.TAKEOVER

# What lets a player the direction names take the character (the direction
# may whenever the owner allows anything at all).
NAMED_CONSENTS = (TakeoverConsent.GM_AND_NAMED,)


@dataclass
class Candidate:
    """An away member's approved character: what its owner allows and who
    carries it now (``current``, None when nobody does)."""

    character: Character
    owner: User
    absence: Absence
    consent: str
    current: Takeover | None = None

    @property
    def consent_label(self) -> str:
        return TakeoverConsent(self.consent).label

    @property
    def may_be_taken(self) -> bool:
        return self.consent != TakeoverConsent.NOBODY and self.current is None

    @property
    def named_player_allowed(self) -> bool:
        return self.consent in NAMED_CONSENTS


def candidates(campaign: Campaign, *, now: datetime | None = None) -> list[Candidate]:
    """The approved characters of the players away today, with what each
    owner allows and its current takeover, in four queries whatever their
    number (the absences, the owners' memberships, the characters, the
    current takeovers)."""
    away = away_now(campaign, now)
    if not away:
        return []
    memberships = {
        m.user_id: m
        for m in Membership.objects.active()
        .filter(campaign=campaign, user_id__in=list(away), role=Role.PLAYER)
        .select_related("user")
    }
    if not memberships:
        return []
    characters = list(
        Character.objects.filter(campaign=campaign, owner_id__in=list(memberships)).approved().order_by("name", "pk")
    )
    current = {}
    if characters and _people_now(campaign.pk)[0]:
        carried = Takeover.objects.current().filter(character__in=characters).select_related("taken_by", "scene")
        current = {t.character_id: t for t in carried}
    found = []
    for character in characters:
        membership = memberships[character.owner_id]
        character.owner = membership.user
        found.append(
            Candidate(
                character=character,
                owner=membership.user,
                absence=away[character.owner_id],
                consent=effective_consent(membership),
                current=current.get(character.pk),
            )
        )
    return found


def current_takeovers(campaign: Campaign) -> list[Takeover]:
    """The campaign's current takeovers, with who is who (one query when
    there are any, none otherwise)."""
    if not _people_now(campaign.pk)[0]:
        return []
    return list(
        Takeover.objects.current()
        .filter(campaign=campaign)
        .select_related("character", "owner", "taken_by", "scene")
        .order_by("started_at", "pk")
    )


def takeovers_of(campaign: Campaign, user) -> list[Takeover]:
    """The current takeovers of ``user``'s characters and those ``user``
    carries (one query when there are any, none otherwise)."""
    takers, owners = _people_now(campaign.pk)
    if user.pk not in takers | owners:
        return []
    return list(
        Takeover.objects.current()
        .filter(Q(owner=user) | Q(taken_by=user), campaign=campaign)
        .select_related("character", "owner", "taken_by", "scene")
        .order_by("started_at", "pk")
    )


def paused(takeover: Takeover, candidate: Candidate | None, *, by_direction: bool) -> str:
    """Why a current takeover no longer lets its taker write as the
    character (empty: it still does), from its owner's ``Candidate`` (None:
    the owner is not away today) — for the direction's dashboard, with no
    query. The same rules as ``still_refused``."""
    values = {"owner": takeover.owner.public_name}
    if candidate is None:
        return _("En pausa: %(owner)s ya no está ausente.") % values
    why = refusal(
        consent=candidate.consent,
        owner=takeover.owner,
        away=True,
        taker_is_direction=by_direction,
        scene=takeover.scene,
    )
    return _("En pausa: %(owner)s ya no lo permite.") % values if why is not None else ""


def refusal(
    *, consent: str, owner: User, away: bool, taker_is_direction: bool, scene: Scene | None
) -> ValidationError | None:
    """Why the character of ``owner`` may not be taken so (None: it may)."""
    name = owner.public_name
    if not away:
        return ValidationError(
            _("%(name)s no está ausente hoy: solo se lleva el personaje de quien falta.") % {"name": name},
            code="not_away",
        )
    if consent == TakeoverConsent.NOBODY:
        return ValidationError(
            _("%(name)s no ha dado permiso para que otro lleve a su personaje.") % {"name": name}, code="consent"
        )
    if taker_is_direction:
        return None
    if consent not in NAMED_CONSENTS:
        return ValidationError(
            _("%(name)s solo permite que la dirección lleve a su personaje.") % {"name": name}, code="taken_by"
        )
    if scene is None:
        return ValidationError(_("Un jugador lleva el personaje de otro solo en una escena: elígela."), code="scene")
    return None


def takers(campaign: Campaign):
    """Who may be named to carry a character: the GM, the co-GMs and the
    players of the campaign (a QuerySet of users)."""
    members = Membership.objects.active().filter(campaign=campaign, role__in=[Role.COGM, Role.PLAYER]).values("user")
    return User.objects.filter(Q(pk=campaign.gm_id) | Q(pk__in=members)).order_by("display_name", "username")


def playable_scenes(campaign: Campaign):
    """The scenes a takeover may be limited to: the story's, not archived."""
    return Scene.objects.filter(campaign=campaign, is_offgame=False).exclude(status=Scene.Status.ARCHIVED)


def in_campaign_zone(moment: datetime, campaign: Campaign) -> str:
    """``moment`` as the campaign's members read it: in its time zone, short."""
    return formats.date_format(timezone.localtime(moment, ZoneInfo(campaign.time_zone)), "SHORT_DATETIME_FORMAT")


def _taker_label(takeover: Takeover, direction: set[int]) -> str:
    name = takeover.taken_by.public_name
    return _("%(name)s (dirección)") % {"name": name} if takeover.taken_by_id in direction else name


def _scene_allowed(campaign: Campaign, scene: Scene, taken_by: User, *, is_direction: bool) -> None:
    """A takeover is limited to a story scene of the campaign, not archived;
    and a player named to carry a character writes as it only where they
    may write themselves. A ``ValidationError`` (Spanish) otherwise: for a
    player, a split scene they are not in or a scene closed to players (two
    queries)."""
    if scene.campaign_id != campaign.pk or scene.is_offgame or scene.status == Scene.Status.ARCHIVED:
        raise ValidationError(_("Elige una escena de la partida que no esté archivada."), code="scene")
    if is_direction:
        return
    taker_access = campaign_access(taken_by, campaign)
    chosen = set() if scene.everyone else set(scene.participants.filter(pk=taken_by.pk).values_list("pk", flat=True))
    if not (can_view_scene(taker_access, scene, chosen) and can_post_in_scene(taker_access, scene)):
        raise ValidationError(
            _("%(name)s no puede escribir en la escena «%(scene)s»: elige otra escena o a otra persona.")
            % {"name": taken_by.public_name, "scene": scene.title},
            code="scene",
        )


@transaction.atomic
def takeover_start(
    *,
    access: Access,
    character: Character,
    taken_by: User,
    scene: Scene | None = None,
    reason: str = "",
    now: datetime | None = None,
) -> Takeover:
    """The direction gives an absent player's character to ``taken_by`` (the
    GM or a co-GM; or, if the owner allows it, a player for ``scene``).

    Side effects: the takeover row, a ``TAKEOVER_STARTED`` entry in the
    moderation log (its target: the owner), a notification to the owner and
    one to the taker when the direction named someone else. Raises
    ``PermissionDenied`` for someone who is not the direction and
    ``ValidationError`` (Spanish) for whatever does not allow it."""
    campaign = access.campaign
    if not access.is_gm:
        raise PermissionDenied(_("Solo la dirección de la partida da el personaje de un ausente a otro."))
    if (
        character.campaign_id != campaign.pk
        or character.kind != Character.Kind.PC
        or character.status != Character.Status.APPROVED
    ):
        raise ValidationError(_("Solo se lleva un personaje jugador aprobado de esta partida."), code="character")
    owner_membership = (
        Membership.objects.active()
        .filter(campaign=campaign, user_id=character.owner_id, role=Role.PLAYER)
        .select_related("user")
        .first()
    )
    if owner_membership is None:
        raise ValidationError(_("El dueño de ese personaje ya no juega en la partida."), code="character")
    owner = owner_membership.user
    if taken_by.pk == owner.pk:
        raise ValidationError(_("Su dueño no se lleva a sí mismo el personaje: elige a otra persona."), code="taken_by")
    direction = notify.gm_ids(campaign)
    is_direction = taken_by.pk in direction
    if (
        not is_direction
        and not Membership.objects.active().filter(campaign=campaign, user=taken_by, role=Role.PLAYER).exists()
    ):
        raise ValidationError(
            _("Solo la dirección o un jugador de la partida pueden llevar el personaje."), code="taken_by"
        )
    if scene is not None:
        _scene_allowed(campaign, scene, taken_by, is_direction=is_direction)
    refused = refusal(
        consent=effective_consent(owner_membership),
        owner=owner,
        away=owner.pk in away_now(campaign, now),
        taker_is_direction=is_direction,
        scene=scene,
    )
    if refused is not None:
        raise refused
    # Locked so that two starts at once for the same character make one takeover.
    Character.objects.select_for_update().filter(pk=character.pk).first()
    busy = Takeover.objects.current().filter(character=character).select_related("taken_by").first()
    if busy is not None:
        raise ValidationError(
            _("%(character)s ya lo lleva %(name)s: devuélvelo antes.")
            % {"character": character.name, "name": busy.taken_by.public_name},
            code="character",
        )
    takeover = Takeover(
        campaign=campaign,
        character=character,
        owner=owner,
        taken_by=taken_by,
        scene=scene,
        started_by=access.user,
        reason=reason,
    )
    takeover.full_clean(validate_constraints=False)
    try:
        with transaction.atomic():
            takeover.save()
    except IntegrityError:
        raise ValidationError(
            _("Otra persona acaba de tomar a %(character)s.") % {"character": character.name}, code="character"
        ) from None
    ModerationLog.objects.create(
        campaign=campaign,
        actor=access.user,
        action=ModerationAction.TAKEOVER_STARTED,
        target_user=owner,
        scene=scene,
        reason=_("%(character)s, para %(name)s. %(reason)s")
        % {"character": character.name, "name": taken_by.public_name, "reason": reason},
    )
    values = {
        "character": character.name,
        "taker": taken_by.public_name,
        "scene": scene.title if scene is not None else "",
        "campaign": campaign.title,
    }
    # The owner's notice names the scene only if the owner may open it.
    owner_sees = scene is not None and scene.pk in seen_scene_ids(campaign_access(owner, campaign), [scene.pk])

    def to_owner() -> str:
        if owner_sees:
            return _("Mientras estás fuera, %(taker)s lleva a %(character)s en «%(scene)s» (%(campaign)s).") % values
        return _("Mientras estás fuera, %(taker)s lleva a %(character)s (%(campaign)s).") % values

    notify.notify_users(
        [owner], campaign=campaign, kind=Notification.Kind.CHARACTER, url=campaign.get_absolute_url(), text=to_owner
    )
    if taken_by.pk != access.user.pk:

        def to_taker() -> str:
            if scene is not None:
                return _("La dirección te da a %(character)s para la escena «%(scene)s» (%(campaign)s).") % values
            return _("La dirección te da a %(character)s (%(campaign)s).") % values

        url = scene.get_absolute_url() if scene is not None else campaign.get_absolute_url()
        notify.notify_users([taken_by], campaign=campaign, kind=Notification.Kind.CHARACTER, url=url, text=to_taker)
    return takeover


def may_end(access: Access, takeover: Takeover) -> bool:
    """The direction, whoever carries the character and its owner may end a takeover."""
    user_id = access.user.pk
    return access.is_gm or user_id in (takeover.taken_by_id, takeover.owner_id)


@transaction.atomic
def takeover_end(*, access: Access, takeover: Takeover, reason: str = "") -> Takeover:
    """The character goes back to its owner (who may take it back at any
    time, away or not).

    Side effects: ``ended_at``/``ended_by``, a ``TAKEOVER_ENDED`` entry in
    the moderation log (its target: the owner), and a notification to the
    owner and to the taker, unless they are who ended it."""
    if not may_end(access, takeover):
        raise PermissionDenied(_("Solo la dirección, quien lleva el personaje o su dueño pueden devolverlo."))
    if not _end(takeover, actor=access.user, reason=reason):
        raise ValidationError(_("Ese personaje ya estaba devuelto."), code="ended")
    return takeover


def _end(takeover: Takeover, *, actor: User, reason: str, owner_back: bool = False) -> bool:
    """End ``takeover`` for ``actor`` (``takeover_end``'s side effects);
    False when it had already ended. ``owner_back``: its owner has come back,
    and the taker is told so."""
    locked = Takeover.objects.select_for_update().filter(pk=takeover.pk).first()
    if locked is None:
        return False
    if locked.ended_at is not None:
        takeover.ended_at, takeover.ended_by_id = locked.ended_at, locked.ended_by_id
        return False
    takeover.ended_at = timezone.now()
    takeover.ended_by = actor
    takeover.save(update_fields=["ended_at", "ended_by"])
    campaign = takeover.campaign
    character, owner, taker = takeover.character, takeover.owner, takeover.taken_by
    ModerationLog.objects.create(
        campaign=campaign,
        actor=actor,
        action=ModerationAction.TAKEOVER_ENDED,
        target_user=owner,
        scene_id=takeover.scene_id,
        reason=_("%(character)s, que llevaba %(name)s. %(reason)s")
        % {"character": character.name, "name": taker.public_name, "reason": reason},
    )
    values = {
        "character": character.name,
        "taker": taker.public_name,
        "actor": actor.public_name,
        "owner": owner.public_name,
    }
    if actor.pk != owner.pk:
        notify.notify_users(
            [owner],
            campaign=campaign,
            kind=Notification.Kind.CHARACTER,
            url=campaign.get_absolute_url(),
            text=lambda: _("%(character)s vuelve a ser tuyo: %(taker)s ya no lo lleva.") % values,
        )
    if actor.pk != taker.pk:

        def to_taker() -> str:
            if owner_back:
                return _("Ya no llevas a %(character)s: %(owner)s ha vuelto.") % values
            return _("Ya no llevas a %(character)s: %(actor)s lo ha devuelto.") % values

        notify.notify_users(
            [taker], campaign=campaign, kind=Notification.Kind.CHARACTER, url=campaign.get_absolute_url(), text=to_taker
        )
    return True


# --- Posting and rolling as the character -----------------------------------------------


def _people_now(campaign_id: int) -> tuple[frozenset[int], frozenset[int]]:
    """Who carries a character in the campaign now and whose characters are
    carried, kept under the campaign's content version (a takeover started
    or ended moves it, see ``table.apps``): most pages have nobody to show,
    and then ask nothing more."""
    version = site_fragments.versions(site_fragments.campaign_scope(campaign_id))[0]
    cache_key = f"takeover-people:{campaign_id}:{version}"
    found = cache.get(cache_key)
    if found is None:
        rows = list(Takeover.objects.current().filter(campaign_id=campaign_id).values_list("taken_by_id", "owner_id"))
        found = (frozenset(taker for taker, _owner in rows), frozenset(owner for _taker, owner in rows))
        cache.set(cache_key, found, site_fragments.FRAGMENT_SECONDS)
    return found


def _carried_in(scene: Scene, user):
    """The current takeovers by ``user`` that reach ``scene`` (a QuerySet)."""
    return Takeover.objects.current().filter(
        Q(scene__isnull=True) | Q(scene=scene), campaign_id=scene.campaign_id, taken_by=user
    )


def voiced_characters(access: Access, scene: Scene):
    """The approved characters the writer may speak as in ``scene``: their
    own, and those they carry there for an absent owner (one QuerySet, so
    that the post form reads both in one query)."""
    user = access.user
    carried = Exists(_carried_in(scene, user).filter(character=OuterRef("pk")))
    if not can_post_in_scene(access, scene):
        carried = Q(pk__in=[])
    return Character.objects.filter(Q(owner=user) | carried, campaign=scene.campaign).approved()


def voiceable(access: Access, scene: Scene) -> dict[int, Takeover]:
    """The characters ``access.user`` carries and may voice in ``scene``
    now, by character id: while their owners are still away and still allow
    it (``still_refused``). One query, three when they carry any; none for
    who may not post there."""
    if not access.user.is_authenticated or not can_post_in_scene(access, scene):
        return {}
    takeovers = list(
        _carried_in(scene, access.user)
        .filter(character__status=Character.Status.APPROVED, character__kind=Character.Kind.PC)
        .select_related("owner", "character")
        .order_by("pk")
    )
    refused = still_refused(access, scene, takeovers)
    return {t.character_id: t for t in takeovers if t.pk not in refused}


def still_refused(
    access: Access, scene: Scene, takeovers: Sequence[Takeover], *, now: datetime | None = None
) -> dict[int, str]:
    """Why ``access.user`` may no longer voice each of these current
    takeovers of theirs in ``scene``, by takeover id (those that still
    allow it are left out): the owner is back or no longer in the
    campaign, or what they allow (``effective_consent``) no longer lets
    this taker carry it. Two queries (who is away, the owners'
    memberships), none without takeovers."""
    if not takeovers:
        return {}
    campaign = scene.campaign
    away = away_now(campaign, now)
    owners = {t.owner_id: t.owner for t in takeovers}
    memberships = {
        m.user_id: m
        for m in Membership.objects.active().filter(campaign=campaign, user_id__in=list(owners), role=Role.PLAYER)
    }
    refused = {}
    for takeover in takeovers:
        owner, character = owners[takeover.owner_id], takeover.character
        values = {"owner": owner.public_name, "character": character.name}
        membership = memberships.get(owner.pk)
        if membership is None:
            refused[takeover.pk] = (
                _("%(owner)s ya no juega en la partida: no puedes escribir como %(character)s.") % values
            )
            continue
        membership.user = owner
        why = refusal(
            consent=effective_consent(membership),
            owner=owner,
            away=owner.pk in away,
            taker_is_direction=access.is_gm,
            scene=scene if takeover.scene_id is not None else None,
        )
        if why is None:
            continue
        if why.code == "not_away":
            refused[takeover.pk] = (
                _("%(owner)s ha vuelto: %(character)s vuelve a ser suyo y no puedes escribir como él.") % values
            )
        else:
            refused[takeover.pk] = (
                _("%(owner)s ya no permite que lleves a %(character)s: no puedes escribir como él.") % values
            )
    return refused


def open_requests(scene: Scene, character_ids: Iterable[int]) -> list[RollRequest]:
    """The scene's open roll requests addressed to these characters (one
    query; none without characters)."""
    character_ids = list(character_ids)
    if not character_ids:
        return []
    return list(
        RollRequest.objects.filter(
            scene=scene, character_id__in=character_ids, answered_at__isnull=True, cancelled_at__isnull=True
        ).select_related("character")
    )


def lock_current(*, takeover_id: int, access: Access, scene: Scene, character: Character) -> Takeover:
    """The takeover, locked, if it still lets ``access.user`` voice
    ``character`` in ``scene``: ``PermissionDenied`` when it ended
    meanwhile or a forged form names another, ``ValidationError`` (Spanish)
    when its owner is back or no longer allows it (``still_refused``)."""
    locked = (
        Takeover.objects.select_for_update()
        .filter(pk=takeover_id, ended_at__isnull=True, taken_by=access.user, character=character)
        .select_related("owner")
        .first()
    )
    if locked is None or (locked.scene_id is not None and locked.scene_id != scene.pk):
        raise PermissionDenied(_("Ya no llevas a este personaje: no puedes escribir como él."))
    locked.character = character
    refused = still_refused(access, scene, [locked])
    if refused:
        raise ValidationError(refused[locked.pk], code="takeover_over")
    return locked


def post_insert(
    *,
    access: Access,
    takeover: Takeover,
    scene: Scene,
    body: str,
    note: str = "",
    recipients: str = Post.Recipients.ALL,
    chosen=(),
    quote_of: Post | None = None,
    submission_key: str | None = None,
) -> tuple[Post, bool]:
    """The forum's ``post_insert`` for a post written as a carried
    character: the takeover vouches for the character instead of its owner
    (the forum does not know of takeovers), and the post names the owner
    (``on_behalf_of``). Inside the caller's transaction; ``(post, created)``
    as the forum's."""
    return forum_services.post_insert(
        access=access,
        scene=scene,
        voice=Post.Voice.CHARACTER,
        body=body,
        note=note,
        character=takeover.character,
        recipients=recipients,
        chosen=chosen,
        quote_of=quote_of,
        submission_key=submission_key,
        on_behalf_of=takeover.owner,
    )


def post_recorded(*, takeover: Takeover, post: Post, table_rolls: Sequence[TableRoll]) -> None:
    """Write the post and each of its rolls in the character's history:
    who wrote, on whose behalf, with the post (and the roll's entry)."""
    character = takeover.character
    values = {"taker": post.author.public_name, "owner": takeover.owner.public_name, "id": post.pk}
    sheet_log(
        character,
        post.scene.campaign,
        post.author,
        SHEET_EVENT,
        _("%(taker)s escribió el mensaje #%(id)s en nombre de %(owner)s") % values,
        post=post,
    )
    for table_roll in table_rolls:
        sheet_log(
            character,
            post.scene.campaign,
            post.author,
            SHEET_EVENT,
            _("%(taker)s tiró con la ficha en el mensaje #%(id)s en nombre de %(owner)s") % values,
            post=post,
            roll=table_roll.first,
        )


# --- Told on return ------------------------------------------------------------------------


@transaction.atomic
def returned_lines(campaign: Campaign, user) -> list[str]:
    """The return hook (``campaigns.extensions.provide_return_hook``, called
    once when the return is noticed): the takeovers of ``user``'s
    characters still current end, since the absence that allowed them is
    over (``takeover_end``'s side effects, with «ha vuelto» as the reason
    and ``user`` as who ended them); then what was done with their
    characters while away, as plain lines — each takeover not told yet and
    each post written for them — and those takeovers marked as told. Three
    queries with nothing to tell; with something, four more for each
    takeover that ends, and six."""
    takeovers = list(
        Takeover.objects.filter(campaign=campaign, owner=user, owner_told_at__isnull=True)
        .select_related("character", "taken_by", "owner")
        .order_by("started_at", "pk")
    )
    if not takeovers:
        return []
    back = _("%(owner)s ha vuelto.") % {"owner": user.public_name}
    for takeover in takeovers:
        if takeover.ended_at is None:
            takeover.campaign = campaign
            # Ended here, or by someone else just before (``_end`` then reads when).
            _end(takeover, actor=user, reason=back, owner_back=True)
    direction = notify.gm_ids(campaign)
    lines = []
    for takeover in takeovers:
        if takeover.ended_at is None:  # deleted meanwhile, with its character
            continue
        values = {
            "taker": _taker_label(takeover, direction),
            "character": takeover.character.name,
            "since": in_campaign_zone(takeover.started_at, campaign),
            "until": in_campaign_zone(takeover.ended_at, campaign),
        }
        lines.append(_("%(taker)s llevó a %(character)s del %(since)s al %(until)s.") % values)
    posts = (
        Post.objects.filter(
            scene__campaign=campaign,
            on_behalf_of=user,
            character_id__in={t.character_id for t in takeovers},
            created_at__gte=takeovers[0].started_at,
        )
        .select_related("author", "scene", "character")
        .order_by("pk")
    )
    # A scene the owner may not open is not named to them.
    seen = seen_scene_ids(campaign_access(user, campaign), {post.scene_id for post in posts})
    for post in posts:
        values = {
            "scene": post.scene.title,
            "taker": post.author.public_name,
            "character": post.character.name,
            "id": post.pk,
            "url": notify.site_url(post.get_absolute_url()),
        }
        if post.scene_id in seen:
            lines.append(_("«%(scene)s»: %(taker)s escribió como %(character)s (mensaje #%(id)s): %(url)s") % values)
        else:
            lines.append(_("%(taker)s escribió como %(character)s en una escena que no ves.") % values)
    Takeover.objects.filter(pk__in=[t.pk for t in takeovers]).update(owner_told_at=timezone.now())
    return lines
