"""Campaigns, membership, scenes, posts and the records moderation keeps.

Posts store their rendered, sanitised HTML next to the Markdown source; pages
show the stored HTML and never render Markdown themselves. Nothing here is
deleted from the UI: posts are hidden, members leave or are removed, scenes
are archived.
"""

import secrets
from datetime import timedelta

from django.apps import apps
from django.conf import settings
from django.db import models
from django.db.models import Exists, F, OuterRef, Q, Subquery
from django.db.models.functions import Coalesce
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import get_language
from django.utils.translation import gettext_lazy as _

from accounts.models import TakeoverConsent, time_zone_choices


def system_choices() -> list[tuple[str, str]]:
    """The installed game systems, for ``Campaign.system``: every app that
    declares a ``system_key`` (and ``system_label``) on its AppConfig, in the
    order of ``INSTALLED_APPS``. The forum only stores the key; the table
    finds the system behind it (``table.systems``). Evaluated when asked, so
    installing a system writes no migration."""
    return [
        (config.system_key, config.system_label)
        for config in apps.get_app_configs()
        if getattr(config, "system_key", "")
    ]


def default_system() -> str:
    """The system a campaign plays when nobody chose one: the first installed."""
    choices = system_choices()
    return choices[0][0] if choices else ""


class Visibility(models.TextChoices):
    PUBLIC = "public", _("Pública")
    PRIVATE = "private", _("Privada")


class CampaignStatus(models.TextChoices):
    RECRUITING = "recruiting", _("Buscando jugadores")
    PLAYING = "playing", _("En juego")
    FINISHED = "finished", _("Terminada")


class Role(models.TextChoices):
    COGM = "cogm", _("Codirector")
    PLAYER = "player", _("Jugador")
    READER = "reader", _("Lector")


def default_time_zone() -> str:
    """A new campaign's time zone: the site's."""
    return settings.TIME_ZONE


def _token() -> str:
    return secrets.token_urlsafe(24)


class CampaignQuerySet(models.QuerySet):
    def public(self):
        return self.filter(visibility=Visibility.PUBLIC)

    def of_user(self, user):
        """Campaigns the user directs or is an active member of."""
        if not user.is_authenticated:
            return self.none()
        member = Membership.objects.active().filter(campaign=OuterRef("pk"), user=user)
        return self.filter(Q(gm=user) | Exists(member))

    def visible_to(self, user):
        """Campaigns whose page the user may open."""
        if not user.is_authenticated:
            return self.public()
        member = Membership.objects.active().filter(campaign=OuterRef("pk"), user=user)
        return self.filter(Q(visibility=Visibility.PUBLIC) | Q(gm=user) | Exists(member))


class Campaign(models.Model):
    title = models.CharField(_("título"), max_length=120)
    slug = models.SlugField(_("dirección web"), max_length=80, unique=True)
    system = models.CharField(_("sistema"), max_length=16, choices=system_choices, default=default_system)
    description = models.TextField(_("descripción"), blank=True, max_length=20000)
    description_html = models.TextField(blank=True, editable=False)
    visibility = models.CharField(
        _("visibilidad"), max_length=10, choices=Visibility.choices, default=Visibility.PUBLIC
    )
    status = models.CharField(
        _("estado"), max_length=12, choices=CampaignStatus.choices, default=CampaignStatus.RECRUITING
    )
    gm = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        verbose_name=_("director de juego"),
        on_delete=models.PROTECT,
        related_name="directed_campaigns",
    )
    # The rules options the GM chose; the campaign's game reads its own keys
    # (a missing key takes the game's default).
    rules_options = models.JSONField(_("opciones de reglas"), default=dict, blank=True)
    # What the campaign's game keeps between sessions, in its own keys (HITOS:
    # the GM's pool of drama points); written under this row's lock.
    game_state = models.JSONField(_("estado del juego"), default=dict, blank=True)
    # A private copy of someone else's campaign, made from an archive by a
    # member who did not direct it (``campaigns.archive``): nothing in it
    # may be written, whoever asks (``permissions.writable``).
    read_only = models.BooleanField(_("copia de solo lectura"), default=False, editable=False)
    created_at = models.DateTimeField(_("creada"), auto_now_add=True)
    # Secret behind the GM's private Atom feed (the GM has no membership, so no
    # ``Membership.feed_token``): the feed's address is derived from it and the
    # GM's id (``campaigns.feeds.gm_feed_token``), so handing the campaign over
    # or renewing this key ends the old address.
    gm_feed_key = models.CharField(max_length=40, default=_token, editable=False)
    # The time zone the campaign's deadlines are given in (each member also
    # sees them in their own when it differs).
    time_zone = models.CharField(_("zona horaria"), max_length=64, choices=time_zone_choices, default=default_time_zone)
    # Whether every member sees the posting rhythm (the direction always does).
    pace_public = models.BooleanField(
        _("ritmo visible para todos"),
        default=False,
        help_text=_("Los miembros ven los mensajes por semana de cada uno y los días desde su último mensaje."),
    )
    # Whether "whose turn" also lists the players who have not posted since
    # the GM's last post in a scene.
    wait_for_posts = models.BooleanField(
        _("esperar a quien no ha escrito"),
        default=True,
        help_text=_(
            "En «A quién esperamos», incluir a los jugadores que no han escrito desde el último mensaje de la dirección."
        ),
    )

    objects = CampaignQuerySet.as_manager()

    class Meta:
        verbose_name = _("partida")
        verbose_name_plural = _("partidas")
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return self.title

    def get_absolute_url(self) -> str:
        return reverse("campaigns:campaign-detail", args=[self.slug])


class MembershipQuerySet(models.QuerySet):
    def active(self):
        return self.filter(status=Membership.Status.ACTIVE)


class Membership(models.Model):
    class Status(models.TextChoices):
        ACTIVE = "active", _("Activo")
        LEFT = "left", _("Se fue")
        REMOVED = "removed", _("Expulsado")

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(_("papel"), max_length=8, choices=Role.choices, default=Role.PLAYER)
    status = models.CharField(_("estado"), max_length=8, choices=Status.choices, default=Status.ACTIVE)
    joined_at = models.DateTimeField(_("se unió"), auto_now_add=True)
    ended_at = models.DateTimeField(_("salió"), null=True, blank=True)
    # Secret for the member's private Atom feed.
    feed_token = models.CharField(max_length=40, unique=True, default=_token, editable=False)
    # What the member allows in this campaign while away; empty: what their
    # profile says (``User.takeover_consent``).
    takeover_consent = models.CharField(_("si falto"), max_length=8, choices=TakeoverConsent.choices, blank=True)

    objects = MembershipQuerySet.as_manager()

    class Meta:
        verbose_name = _("miembro")
        verbose_name_plural = _("miembros")
        constraints = [models.UniqueConstraint(fields=["campaign", "user"], name="membership_unique_user")]
        ordering = ["joined_at", "id"]

    def __str__(self) -> str:
        return f"{self.user} @ {self.campaign}"

    def rejoin(self, *, role: str) -> None:
        """Back in the campaign after leaving or being removed (not saved):
        active with ``role``, joined now, and a new private feed address,
        since the old one may have been passed on while they were away."""
        self.role = role
        self.status = self.Status.ACTIVE
        self.ended_at = None
        self.joined_at = timezone.now()
        self.feed_token = _token()

    rejoin.alters_data = True
    # What ``rejoin`` changes, for ``save(update_fields=…)``.
    REJOIN_FIELDS = ("role", "status", "ended_at", "joined_at", "feed_token")


class Application(models.Model):
    class Status(models.TextChoices):
        PENDING = "pending", _("Pendiente")
        ACCEPTED = "accepted", _("Aceptada")
        REJECTED = "rejected", _("Rechazada")
        WITHDRAWN = "withdrawn", _("Retirada")

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="applications")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="applications")
    text = models.TextField(_("presentación"), max_length=2000)
    role = models.CharField(_("papel"), max_length=8, choices=Role.choices, default=Role.PLAYER)
    invitation = models.ForeignKey("Invitation", null=True, blank=True, on_delete=models.SET_NULL)
    status = models.CharField(_("estado"), max_length=10, choices=Status.choices, default=Status.PENDING)
    answer = models.TextField(_("respuesta"), blank=True, max_length=2000)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    decided_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name = _("solicitud")
        verbose_name_plural = _("solicitudes")
        ordering = ["-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["campaign", "user"],
                condition=Q(status="pending"),
                name="application_one_pending_per_user",
            )
        ]

    def __str__(self) -> str:
        return f"{self.user} → {self.campaign} ({self.status})"


class InvitationQuerySet(models.QuerySet):
    def usable(self):
        return self.filter(revoked=False, expires_at__gt=timezone.now(), uses__lt=models.F("max_uses"))


class Invitation(models.Model):
    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="invitations")
    token = models.CharField(max_length=40, unique=True, default=_token, editable=False)
    role = models.CharField(_("papel"), max_length=8, choices=Role.choices, default=Role.PLAYER)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField(_("caduca"))
    max_uses = models.PositiveSmallIntegerField(_("usos máximos"), default=5)
    uses = models.PositiveSmallIntegerField(_("usos"), default=0)
    revoked = models.BooleanField(_("anulada"), default=False)

    objects = InvitationQuerySet.as_manager()

    class Meta:
        verbose_name = _("invitación")
        verbose_name_plural = _("invitaciones")
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.campaign} · {self.token[:6]}…"

    def get_absolute_url(self) -> str:
        return reverse("campaigns:invitation-open", args=[self.token])

    @property
    def is_expired(self) -> bool:
        return self.expires_at <= timezone.now()

    @property
    def is_used_up(self) -> bool:
        return self.uses >= self.max_uses

    @property
    def is_usable(self) -> bool:
        return not (self.revoked or self.is_expired or self.is_used_up)

    @staticmethod
    def default_expiry():
        return timezone.now() + timedelta(days=7)


class SceneQuerySet(models.QuerySet):
    def visible_to(self, user, campaign: Campaign, *, is_gm: bool, is_member: bool):
        """Scenes of ``campaign`` the user may read.

        The GM sees every scene; members see scenes open to all members and
        those they were chosen for; outsiders see the all-members scenes of a
        public campaign.
        """
        scenes = self.filter(campaign=campaign)
        if is_gm:
            return scenes
        if is_member:
            return scenes.filter(Q(everyone=True) | Q(participants=user)).distinct()
        if campaign.visibility == Visibility.PUBLIC:
            return scenes.filter(everyone=True)
        return scenes.none()


class Scene(models.Model):
    class Status(models.TextChoices):
        OPEN = "open", _("Abierta")
        LOCKED = "locked", _("Cerrada")
        ARCHIVED = "archived", _("Archivada")

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="scenes")
    title = models.CharField(_("título"), max_length=120)
    description = models.TextField(_("descripción"), blank=True, max_length=20000)
    description_html = models.TextField(blank=True, editable=False)
    status = models.CharField(_("estado"), max_length=10, choices=Status.choices, default=Status.OPEN)
    everyone = models.BooleanField(
        _("visible para todos los miembros"),
        default=True,
        help_text=_("Desmárcalo para un grupo separado: solo la verán los miembros elegidos."),
    )
    participants = models.ManyToManyField(
        settings.AUTH_USER_MODEL, blank=True, related_name="chosen_scenes", verbose_name=_("miembros elegidos")
    )
    position = models.PositiveIntegerField(_("orden"), default=0)
    is_offgame = models.BooleanField(_("fuera de juego"), default=False, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)

    objects = SceneQuerySet.as_manager()

    class Meta:
        verbose_name = _("escena")
        verbose_name_plural = _("escenas")
        ordering = ["position", "id"]

    def __str__(self) -> str:
        return self.title

    def get_absolute_url(self) -> str:
        return reverse("table:scene-detail", args=[self.campaign.slug, self.pk])


class PostQuerySet(models.QuerySet):
    def addressed_to(self, user, *, is_gm: bool):
        """Posts whose recipients include the user (hidden ones included).

        Scene visibility is the caller's business (``Scene.objects.visible_to``).
        """
        if is_gm:
            return self
        if not user.is_authenticated:
            return self.filter(recipients=Post.Recipients.ALL)
        return self.filter(Q(recipients=Post.Recipients.ALL) | Q(author=user) | _chosen_for(user))

    def readable_by_member(self, user, *, directed):
        """Across campaigns the user belongs to, in one query: every post of
        those they direct (``directed``: campaign ids, or a subquery of them),
        and elsewhere the posts in scenes open to all members or chosen for
        them, addressed to everyone, theirs or to them (for one campaign the
        pages use ``Scene.objects.visible_to`` and ``addressed_to``)."""
        is_gm = Q(scene__campaign__in=directed)
        scene_ok = is_gm | Q(scene__everyone=True) | Q(scene__participants=user)
        addressed = is_gm | Q(recipients=Post.Recipients.ALL) | Q(author=user) | _chosen_for(user)
        return self.filter(scene_ok, addressed)

    def readable_where_member(self, user):
        """``readable_by_member`` over every campaign the user directs or is
        an active member of, in one query."""
        campaigns = Campaign.objects.of_user(user).values("pk")
        cogm_of = Membership.objects.active().filter(user=user, role=Role.COGM).values("campaign")
        directed = Campaign.objects.filter(Q(gm=user) | Q(pk__in=cogm_of)).values("pk")
        return self.filter(scene__campaign__in=campaigns).readable_by_member(user, directed=directed)

    def unread_by(self, user):
        """Posts by others after the user's read marker in their scene."""
        read = SceneRead.objects.filter(scene=OuterRef("scene"), user=user).values("last_post_id")
        return self.exclude(author=user).annotate(read_upto=Coalesce(Subquery(read), 0)).filter(pk__gt=F("read_upto"))


class Post(models.Model):
    class Voice(models.TextChoices):
        CHARACTER = "character", _("Personaje")
        NPC = "npc", _("PNJ")
        OOC = "ooc", _("Fuera de personaje")

    class Recipients(models.TextChoices):
        ALL = "all", _("Todos los que ven la escena")
        GM = "gm", _("Solo la dirección")
        CHOSEN = "chosen", _("Miembros elegidos")

    scene = models.ForeignKey(Scene, on_delete=models.CASCADE, related_name="posts")
    author = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="posts")
    voice = models.CharField(_("escrito como"), max_length=10, choices=Voice.choices, default=Voice.CHARACTER)
    character = models.ForeignKey(
        "sheets.Character", null=True, blank=True, on_delete=models.PROTECT, related_name="posts"
    )
    npc_name = models.CharField(_("nombre del PNJ"), max_length=80, blank=True)
    body = models.TextField(_("mensaje"), max_length=50000)
    body_html = models.TextField(editable=False)
    note = models.TextField(_("nota de juego"), blank=True, max_length=10000)
    note_html = models.TextField(blank=True, editable=False)
    recipients = models.CharField(_("destinatarios"), max_length=8, choices=Recipients.choices, default=Recipients.ALL)
    chosen_recipients = models.ManyToManyField(
        settings.AUTH_USER_MODEL, blank=True, related_name="addressed_posts", verbose_name=_("miembros elegidos")
    )
    quote_of = models.ForeignKey("self", null=True, blank=True, on_delete=models.SET_NULL, related_name="quoted_by")
    # The owner of the character the author wrote for, when someone else took
    # an absent player's character over ("PNJotizar"): the post says so.
    on_behalf_of = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # The rolls an imported archive ties to this post, as the archive's rolls
    # part judged them (``rolls.archive``): ``[{"standing", "fingerprint",
    # "purpose", "dice", "permalink", "by"}]``, shown by the post's template
    # apart from the note, which is the archive's user text.
    archived_rolls = models.JSONField(default=list, blank=True, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    edited_at = models.DateTimeField(null=True, blank=True)
    edited_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    hidden = models.BooleanField(default=False)
    hidden_reason = models.CharField(_("motivo"), max_length=500, blank=True)
    hidden_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    hidden_at = models.DateTimeField(null=True, blank=True)
    # A random token the post form carries: sending the same form twice (a
    # double click, a retry) publishes one post, not two.
    submission_key = models.CharField(max_length=64, null=True, blank=True, editable=False)  # noqa: DJ001

    objects = PostQuerySet.as_manager()

    class Meta:
        verbose_name = _("mensaje")
        verbose_name_plural = _("mensajes")
        ordering = ["id"]
        indexes = [models.Index(fields=["scene", "id"])]
        constraints = [models.UniqueConstraint(fields=["author", "submission_key"], name="post_unique_submission_key")]

    def __str__(self) -> str:
        return f"#{self.pk} {self.speaker_name}"

    def get_absolute_url(self) -> str:
        return reverse("campaigns:post-permalink", args=[self.pk])

    @property
    def speaker_name(self) -> str:
        if self.voice == Post.Voice.CHARACTER and self.character_id:
            return self.character.name
        if self.voice == Post.Voice.NPC:
            return self.npc_name
        return self.author.public_name


def chosen_readers():
    """The chosen recipients who may read the whispers addressed to them: the
    ``(post, user)`` rows of ``Post.chosen_recipients`` whose user is still an
    active member of the post's campaign. A member who left or was removed
    no longer reads them (back in the campaign, they do again). Every
    predicate that asks whether a chosen recipient reads a post asks here."""
    return Post.chosen_recipients.through.objects.filter(
        user__memberships__campaign=F("post__scene__campaign"),
        user__memberships__status=Membership.Status.ACTIVE,
    )


def _chosen_for(user) -> Q:
    """A whisper to chosen members that ``user`` reads (``chosen_readers``),
    as a condition on ``Post``: the same rule without ``chosen_readers``'s
    joins, as two lookups by key per post — the user among the post's
    recipients, and an active member of its campaign."""
    chosen = Post.chosen_recipients.through.objects.filter(post=OuterRef("pk"), user=user)
    member = Membership.objects.active().filter(campaign=OuterRef("scene__campaign_id"), user=user)
    return Q(recipients=Post.Recipients.CHOSEN) & Q(Exists(chosen)) & Q(Exists(member))


class PostRevision(models.Model):
    """The text a post had before an edit: who changed it, when and why."""

    post = models.ForeignKey(Post, on_delete=models.CASCADE, related_name="revisions")
    editor = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    body = models.TextField()
    body_html = models.TextField()
    note = models.TextField(blank=True)
    note_html = models.TextField(blank=True)
    reason = models.CharField(max_length=500, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"#{self.post_id} @ {self.created_at:%Y-%m-%d %H:%M}"


class PostReportQuerySet(models.QuerySet):
    def pending_in(self, campaign):
        """The campaign's reports the direction has not resolved yet."""
        return self.filter(post__scene__campaign=campaign, resolved_at__isnull=True)


class PostReport(models.Model):
    post = models.ForeignKey(Post, on_delete=models.CASCADE, related_name="reports")
    reporter = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    reason = models.CharField(_("motivo"), max_length=1000)
    created_at = models.DateTimeField(auto_now_add=True)
    resolved_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    resolved_at = models.DateTimeField(null=True, blank=True)

    objects = PostReportQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"#{self.post_id}: {self.reason[:40]}"


class SceneRead(models.Model):
    """How far a user has read a scene: the last post id they were shown."""

    scene = models.ForeignKey(Scene, on_delete=models.CASCADE, related_name="reads")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="scene_reads")
    last_post_id = models.BigIntegerField(default=0)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["scene", "user"], name="sceneread_unique")]

    def __str__(self) -> str:
        return f"{self.user} read {self.scene_id} up to {self.last_post_id}"


class ModerationAction(models.TextChoices):
    APPLICATION_ACCEPTED = "application_accepted", _("aceptó una solicitud")
    APPLICATION_REJECTED = "application_rejected", _("rechazó una solicitud")
    MEMBER_REMOVED = "member_removed", _("expulsó a un miembro")
    MEMBER_ROLE = "member_role", _("cambió el papel de un miembro")
    CAMPAIGN_HANDED_OVER = "campaign_handed_over", _("cedió la dirección de la partida")
    POST_EDITED = "post_edited", _("editó un mensaje ajeno")
    POST_HIDDEN = "post_hidden", _("ocultó un mensaje")
    POST_SHOWN = "post_shown", _("volvió a mostrar un mensaje")
    REPORT_RESOLVED = "report_resolved", _("resolvió una denuncia")
    SCENE_STATUS = "scene_status", _("cambió el estado de una escena")
    INVITATION_REVOKED = "invitation_revoked", _("anuló una invitación")
    TAKEOVER_STARTED = "takeover_started", _("tomó el personaje de un ausente")
    TAKEOVER_ENDED = "takeover_ended", _("devolvió el personaje de un ausente")
    DEADLINE_SETTLED = "deadline_settled", _("resolvió un plazo vencido")
    NUDGE = "nudge", _("dio un toque a un miembro")


class ModerationLog(models.Model):
    """Every GM action: who, when, what, why, and whose content it touched."""

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="moderation_log")
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    action = models.CharField(max_length=32, choices=ModerationAction.choices)
    target_user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    post = models.ForeignKey(Post, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    scene = models.ForeignKey(Scene, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    reason = models.CharField(max_length=1000, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.actor} {self.action}"


class Notification(models.Model):
    class Kind(models.TextChoices):
        POST = "post", _("Mensaje nuevo")
        ADDRESSED = "addressed", _("Mensaje para ti")
        APPLICATION = "application", _("Solicitud")
        MODERATION = "moderation", _("Moderación")
        SHEET = "sheet", _("Ficha")
        # What the game tells a player at the table, in its own words: a
        # move against them that awaits their answer, or what happened to
        # their character (HITOS: a negative activation; damage or horror).
        ANSWER = "answer", _("Te toca responder")
        CHARACTER = "character", _("Tu personaje")
        REQUEST = "request", _("Petición de tirada")
        # A member reported a post (to the direction), or the direction
        # decided on a report (to the member who made it).
        REPORT = "report", _("Mensaje denunciado")
        # The table's pace: a member is away or back, a deadline comes near or
        # passed, the direction nudges someone, a character was played for them.
        ABSENCE = "absence", _("Ausencia")
        DEADLINE = "deadline", _("Plazo")
        NUDGE = "nudge", _("Te esperan")

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="notifications")
    campaign = models.ForeignKey(Campaign, null=True, blank=True, on_delete=models.CASCADE, related_name="+")
    post = models.ForeignKey(Post, null=True, blank=True, on_delete=models.CASCADE, related_name="+")
    kind = models.CharField(max_length=16, choices=Kind.choices)
    text = models.CharField(max_length=300)
    url = models.CharField(max_length=300)
    # Whether the author of the post is the campaign's GM ("only when the GM posts").
    from_gm = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)
    read_at = models.DateTimeField(null=True, blank=True)
    emailed_at = models.DateTimeField(null=True, blank=True)
    # The text in every language of the site ({"es": …, "en": …}), written
    # with ``text``: the list and the e-mails show the reader's language of
    # the moment. Empty for notifications older than this field.
    texts = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["user", "read_at"])]

    def __str__(self) -> str:
        return self.text

    @property
    def shown_text(self) -> str:
        """The text in the active language, or as first written (in the
        recipient's language then) when it was not kept in this one."""
        language = get_language() or ""
        return self.texts.get(language) or self.texts.get(language.split("-")[0]) or self.text


class AbsenceQuerySet(models.QuerySet):
    def live(self):
        """Absences not cancelled."""
        return self.filter(cancelled_at__isnull=True)

    def on(self, day):
        """Absences not cancelled that cover ``day`` (a date)."""
        return self.live().filter(starts_on__lte=day, ends_on__gte=day)


class Absence(models.Model):
    """A member says they will be away from a campaign between two days
    (both included, in the campaign's time zone)."""

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="absences")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="absences")
    starts_on = models.DateField(_("desde"))
    ends_on = models.DateField(_("hasta"))
    note = models.CharField(_("nota"), max_length=200, blank=True)
    # Hold the notifications of this campaign for one digest on return.
    hold_notifications = models.BooleanField(_("guardar los avisos para mi vuelta"), default=True)
    created_at = models.DateTimeField(auto_now_add=True)
    cancelled_at = models.DateTimeField(null=True, blank=True)
    # When the return was noticed (the held notifications went out, the GM
    # and whoever played their character were told).
    returned_at = models.DateTimeField(null=True, blank=True)

    objects = AbsenceQuerySet.as_manager()

    class Meta:
        verbose_name = _("ausencia")
        verbose_name_plural = _("ausencias")
        ordering = ["starts_on", "id"]
        indexes = [models.Index(fields=["campaign", "ends_on"])]
        constraints = [
            models.CheckConstraint(condition=Q(ends_on__gte=F("starts_on")), name="absence_ends_after_start")
        ]

    def __str__(self) -> str:
        return f"{self.user} {self.starts_on}–{self.ends_on}"


class DeadlineQuerySet(models.QuerySet):
    def open(self):
        """Deadlines neither settled nor withdrawn."""
        return self.filter(settled_at__isnull=True, cancelled_at__isnull=True)


class Deadline(models.Model):
    """The direction gives something a date to answer by: a scene, or what a
    higher layer registers as a kind (a roll request, a combat round, a
    reaction…; ``campaigns.extensions.DeadlineKind``). ``target_id`` is the
    id of that thing (the scene's for a scene). Reminders go out once
    (``reminded_at``), the direction is told once when it passes
    (``passed_at``), and it is settled by the direction (``settled_*``) or
    withdrawn when its target closes on time (``cancelled_at``)."""

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="deadlines")
    scene = models.ForeignKey(Scene, on_delete=models.CASCADE, related_name="deadlines")
    kind = models.CharField(max_length=16)
    target_id = models.PositiveBigIntegerField()
    due_at = models.DateTimeField(_("plazo"))
    remind_before = models.DurationField(_("recordar antes"), default=timedelta(hours=24))
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    reminded_at = models.DateTimeField(null=True, blank=True)
    passed_at = models.DateTimeField(null=True, blank=True)
    settled_at = models.DateTimeField(null=True, blank=True)
    settled_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    settlement = models.CharField(_("resolución"), max_length=300, blank=True)
    cancelled_at = models.DateTimeField(null=True, blank=True)

    objects = DeadlineQuerySet.as_manager()

    class Meta:
        verbose_name = _("plazo")
        verbose_name_plural = _("plazos")
        ordering = ["due_at", "id"]
        indexes = [models.Index(fields=["due_at"]), models.Index(fields=["campaign", "kind", "target_id"])]
        constraints = [models.UniqueConstraint(fields=["kind", "target_id"], name="deadline_one_per_target")]

    def __str__(self) -> str:
        return f"{self.kind}#{self.target_id} {self.due_at:%Y-%m-%d %H:%M}"

    @property
    def is_open(self) -> bool:
        return self.settled_at is None and self.cancelled_at is None


class Nudge(models.Model):
    """The direction reminded one member that a scene waits for them
    (rate-limited: ``campaigns.waiting``)."""

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="+")
    scene = models.ForeignKey(Scene, on_delete=models.CASCADE, related_name="+")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    sent_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["scene", "user", "created_at"])]

    def __str__(self) -> str:
        return f"{self.user} @ {self.scene_id}"


class ArchiveUpload(models.Model):
    """A campaign archive uploaded to be imported, kept while its importer
    reads what it holds and chooses how to import it (``campaigns.archive_views``);
    replaced by the importer's next upload, and gone a day after it was made
    (``UPLOAD_LIFETIME``: any next upload deletes the expired ones)."""

    UPLOAD_LIFETIME = timedelta(hours=24)

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    raw = models.BinaryField()
    # What the review page shows, read once when the file was uploaded
    # (``campaigns.archive.archive_review``): the page never parses ``raw``.
    review = models.JSONField(default=dict)
    # The campaign made from it, once imported (``raw`` is then emptied): a
    # second import of the same review goes there instead.
    campaign = models.ForeignKey("Campaign", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.owner} @ {self.created_at:%Y-%m-%d %H:%M}"
