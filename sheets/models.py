"""Characters of a campaign: the HITOS sheet (characteristics, skills, weapons,
aspects, the two slash/cross meters, drama points) and its history.

Game arithmetic (derived scores, states, penalties, what a mark does) is never
done here: the properties below hand the stored numbers to ``rules/`` and
return its answers. State changes go through ``sheets.services``.
"""

from __future__ import annotations

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.urls import reverse
from django.utils.functional import cached_property
from django.utils.translation import gettext_lazy as _

from rules.hitos_drama import degeneracion_description
from rules.hitos_health import (
    PENALTIES,
    STATE_LABELS,
    health_state,
    mental_state,
    state_penalty,
)
from rules.hitos_options import HitosOptions
from rules.hitos_scores import SKILL_CATEGORIES, Characteristics, derived_scores
from rules.meters import Meter

CHARACTERISTIC_FIELDS = ("fortaleza", "reflejos", "voluntad", "intelecto")
CHARACTERISTIC_LABELS = {
    "fortaleza": _("Fortaleza"),
    "reflejos": _("Reflejos"),
    "voluntad": _("Voluntad"),
    "intelecto": _("Intelecto"),
}


def campaign_options(campaign) -> HitosOptions:
    """The campaign's HITOS options; a stored value the engine rejects falls
    back to the defaults rather than breaking every sheet page."""
    try:
        return HitosOptions.from_dict(campaign.rules_options or {})
    except ValueError:
        return HitosOptions()


class CharacterQuerySet(models.QuerySet):
    def approved(self):
        """Approved player characters: the ones players post and roll as, and
        the campaign page lists. NPC stat blocks are the GM's secret and never
        count (use ``npcs()``)."""
        return self.filter(status=Character.Status.APPROVED, kind=Character.Kind.PC)

    def submitted(self):
        """Sheets waiting for the GM's review (the dashboard's "pending sheets")."""
        return self.filter(status=Character.Status.SUBMITTED)

    def in_play(self):
        """Who takes part at the table (combat, horror, opposed rolls): the
        approved player characters and the NPCs (``Character.is_in_play``)."""
        return self.filter(
            models.Q(kind=Character.Kind.NPC) | models.Q(kind=Character.Kind.PC, status=Character.Status.APPROVED)
        )

    def player_characters(self):
        return self.filter(kind=Character.Kind.PC)

    def npcs(self):
        return self.filter(kind=Character.Kind.NPC)

    def listed_for(self, user, *, is_gm: bool, sees_public: bool):
        """Sheets the user may open from the campaign's list: the GM every one;
        others their own, plus approved player characters when the campaign
        shows their public part."""
        if is_gm:
            return self
        mine = models.Q(owner_id=user.pk, kind=Character.Kind.PC) if user.is_authenticated else models.Q(pk__in=[])
        if sees_public:
            return self.filter(mine | models.Q(kind=Character.Kind.PC, status=Character.Status.APPROVED))
        return self.filter(mine)


class Character(models.Model):
    class Status(models.TextChoices):
        DRAFT = "draft", _("Borrador")
        SUBMITTED = "submitted", _("Enviada")
        APPROVED = "approved", _("Aprobada")
        RETURNED = "returned", _("Devuelta")

    class Kind(models.TextChoices):
        PC = "pc", _("Personaje jugador")
        NPC = "npc", _("PNJ")

    campaign = models.ForeignKey("campaigns.Campaign", on_delete=models.CASCADE, related_name="characters")
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="characters")
    name = models.CharField(_("nombre"), max_length=80)
    status = models.CharField(_("estado"), max_length=10, choices=Status.choices, default=Status.DRAFT)
    created_at = models.DateTimeField(auto_now_add=True)

    kind = models.CharField(_("tipo"), max_length=3, choices=Kind.choices, default=Kind.PC)
    cita = models.CharField(_("cita"), max_length=300, blank=True)
    fortaleza = models.PositiveSmallIntegerField(
        _("Fortaleza"), default=5, validators=[MinValueValidator(1), MaxValueValidator(10)]
    )
    reflejos = models.PositiveSmallIntegerField(
        _("Reflejos"), default=5, validators=[MinValueValidator(1), MaxValueValidator(10)]
    )
    voluntad = models.PositiveSmallIntegerField(
        _("Voluntad"), default=5, validators=[MinValueValidator(1), MaxValueValidator(10)]
    )
    intelecto = models.PositiveSmallIntegerField(
        _("Intelecto"), default=5, validators=[MinValueValidator(1), MaxValueValidator(10)]
    )
    drama = models.PositiveSmallIntegerField(_("Drama"), default=5, validators=[MaxValueValidator(20)])
    drama_points = models.PositiveSmallIntegerField(_("puntos dramáticos"), default=5)
    degeneracion = models.PositiveSmallIntegerField(_("Degeneración"), default=0, validators=[MaxValueValidator(10)])
    armour = models.CharField(_("armadura"), max_length=120, blank=True)
    rd = models.PositiveSmallIntegerField(_("RD"), default=0, validators=[MaxValueValidator(20)])
    # NPC stat blocks carry the damage code of their usual attack.
    damage_code = models.CharField(_("código de daño"), max_length=20, blank=True)
    # Secuelas: [{"text": "...", "permanent": bool}]
    secuelas = models.JSONField(_("secuelas"), default=list, blank=True)
    public_description = models.TextField(_("descripción pública"), blank=True, max_length=10000)
    private_notes = models.TextField(_("notas privadas"), blank=True, max_length=20000)
    gm_notes = models.TextField(_("notas de la dirección"), blank=True, max_length=20000)

    health_slashes = models.PositiveSmallIntegerField(default=0)
    health_crosses = models.PositiveSmallIntegerField(default=0)
    mental_slashes = models.PositiveSmallIntegerField(default=0)
    mental_crosses = models.PositiveSmallIntegerField(default=0)

    review_comment = models.TextField(_("comentario de la dirección"), blank=True, max_length=5000)
    budget_accepted = models.BooleanField(_("la dirección acepta las desviaciones del presupuesto"), default=False)
    submitted_at = models.DateTimeField(null=True, blank=True)
    reviewed_at = models.DateTimeField(null=True, blank=True)
    reviewed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    updated_at = models.DateTimeField(auto_now=True)

    objects = CharacterQuerySet.as_manager()

    class Meta:
        verbose_name = _("personaje")
        verbose_name_plural = _("personajes")
        ordering = ["name", "id"]

    def __str__(self) -> str:
        return self.name

    def get_absolute_url(self) -> str:
        return reverse("sheets:sheet-detail", args=[self.campaign.slug, self.pk])

    # --- readings from rules/ ------------------------------------------------

    @property
    def is_npc(self) -> bool:
        return self.kind == self.Kind.NPC

    def may_be_voiced_by(self, user, campaign) -> bool:
        """Whether ``user`` may write posts as this character in ``campaign``:
        their own approved player character there (what ``approved()``
        offers in the post form). The forum asks this of any character
        (``campaigns.permissions.can_write_as_character``)."""
        return (
            self.owner_id == user.pk
            and self.campaign_id == campaign.pk
            and self.status == self.Status.APPROVED
            and self.kind == self.Kind.PC
        )

    @cached_property
    def options(self) -> HitosOptions:
        return campaign_options(self.campaign)

    @property
    def characteristics(self) -> Characteristics:
        return Characteristics(self.fortaleza, self.reflejos, self.voluntad, self.intelecto)

    def _skill_values(self, category: str) -> list[int]:
        return [s.value for s in self.skills.all() if s.category == category]

    @cached_property
    def scores(self):
        combate = max(self._skill_values("combate"), default=0)
        return derived_scores(self.characteristics, combate=combate, options=self.options)

    @property
    def aguante(self) -> int:
        return self.scores["aguante"].value

    @property
    def entereza(self) -> int:
        return self.scores["entereza"].value

    @staticmethod
    def _meter(capacity: int, slashes: int, crosses: int) -> Meter:
        # Marks stored for a bigger meter (characteristics lowered outside the
        # services, e.g. in the admin) are read as the rules resize them.
        return Meter(max(capacity, slashes + crosses), slashes, crosses).resized(capacity)

    @property
    def health_meter(self) -> Meter:
        return self._meter(self.scores["resistencia"].value, self.health_slashes, self.health_crosses)

    @property
    def mental_meter(self) -> Meter:
        return self._meter(self.scores["estabilidad"].value, self.mental_slashes, self.mental_crosses)

    @property
    def health_state(self):
        return health_state(self.health_meter, self.aguante)

    @property
    def mental_state(self):
        return mental_state(self.mental_meter, self.entereza, self.options)

    @property
    def health_label(self) -> str:
        return STATE_LABELS[self.health_state]

    @property
    def mental_label(self) -> str:
        return STATE_LABELS[self.mental_state]

    @property
    def health_penalty(self) -> int:
        return PENALTIES[self.health_state]

    @property
    def mental_penalty(self) -> int:
        return PENALTIES[self.mental_state]

    @property
    def penalty(self) -> int:
        """The penalty to every action and to Defensa (H54, H55, H83)."""
        return state_penalty(self.health_state, None if self.is_npc else self.mental_state)

    @property
    def degeneracion_text(self) -> str:
        return degeneracion_description(self.degeneracion)

    def is_in_play(self, campaign) -> bool:
        """In ``campaign``'s ``in_play()`` set, without a query."""
        return self.campaign_id == campaign.pk and (self.is_npc or self.status == self.Status.APPROVED)

    @property
    def is_editable_by_owner(self) -> bool:
        return self.status in (self.Status.DRAFT, self.Status.RETURNED)


class Skill(models.Model):
    character = models.ForeignKey(Character, on_delete=models.CASCADE, related_name="skills")
    name = models.CharField(_("habilidad"), max_length=80)
    category = models.CharField(_("categoría"), max_length=16, choices=SKILL_CATEGORIES)
    value = models.PositiveSmallIntegerField(_("valor"), validators=[MaxValueValidator(10)])

    class Meta:
        verbose_name = _("habilidad")
        verbose_name_plural = _("habilidades")
        ordering = ["id"]

    def __str__(self) -> str:
        return f"{self.name} {self.value}"


class Weapon(models.Model):
    character = models.ForeignKey(Character, on_delete=models.CASCADE, related_name="weapons")
    name = models.CharField(_("arma"), max_length=80)
    damage_code = models.CharField(_("código de daño"), max_length=20)
    melee = models.BooleanField(_("cuerpo a cuerpo"), default=True)
    notes = models.CharField(_("notas"), max_length=200, blank=True)

    class Meta:
        verbose_name = _("arma")
        verbose_name_plural = _("armas")
        ordering = ["id"]

    def __str__(self) -> str:
        return self.name


class AspectQuerySet(models.QuerySet):
    def active(self):
        return self.filter(ended_at__isnull=True)


class Aspect(models.Model):
    """A phrase of the character that can be activated (H11–H27): the concept,
    a characteristic's trait, a hito, a complication or a temporary aspect."""

    class Kind(models.TextChoices):
        CONCEPT = "concept", _("Concepto")
        TRAIT = "trait", _("Rasgo")
        HITO = "hito", _("Hito")
        COMPLICATION = "complication", _("Complicación")
        TEMPORARY = "temporary", _("Aspecto temporal")

    class Duration(models.TextChoices):
        SCENE = "scene", _("Escena")
        SESSION = "session", _("Sesión")
        STORY = "story", _("Historia")

    character = models.ForeignKey(Character, on_delete=models.CASCADE, related_name="aspects")
    kind = models.CharField(_("tipo"), max_length=12, choices=Kind.choices)
    # For traits: the characteristic it describes.
    characteristic = models.CharField(max_length=10, blank=True)
    phrase = models.CharField(_("aspecto"), max_length=200)
    position = models.PositiveSmallIntegerField(default=0)
    duration = models.CharField(_("duración"), max_length=8, choices=Duration.choices, blank=True)
    origin = models.CharField(_("origen"), max_length=200, blank=True)
    # An exhausted aspect recovers at the start of the next session or story.
    exhausted_until = models.CharField(_("agotado hasta"), max_length=8, choices=Duration.choices, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    ended_at = models.DateTimeField(null=True, blank=True)

    objects = AspectQuerySet.as_manager()

    class Meta:
        verbose_name = _("aspecto")
        verbose_name_plural = _("aspectos")
        ordering = ["kind", "position", "id"]

    def __str__(self) -> str:
        return self.phrase

    @property
    def exhausted(self) -> bool:
        return bool(self.exhausted_until)


class CampaignSheetOptions(models.Model):
    """What a campaign lets players see and change of the sheets."""

    class Visibility(models.TextChoices):
        GM = "gm", _("Solo su dueño y la dirección")
        MEMBERS = "members", _("Los miembros ven la parte pública")
        PUBLIC = "public", _("Quien puede leer la partida ve la parte pública")

    campaign = models.OneToOneField(
        "campaigns.Campaign", on_delete=models.CASCADE, primary_key=True, related_name="sheet_options"
    )
    visibility = models.CharField(
        _("quién ve las fichas aprobadas"), max_length=8, choices=Visibility.choices, default=Visibility.MEMBERS
    )
    players_edit_description = models.BooleanField(
        _("tras la aprobación, los jugadores editan su descripción pública"), default=True
    )

    class Meta:
        verbose_name = _("opciones de fichas")
        verbose_name_plural = _("opciones de fichas")

    def __str__(self) -> str:
        return str(self.campaign)


class SheetEvent(models.Model):
    """One change to a sheet (or a campaign-wide session / scene change): who,
    when, what, why, and the post or roll it came from."""

    class Kind(models.TextChoices):
        CREATED = "created", _("creó la ficha")
        EDITED = "edited", _("editó la ficha")
        NOTES = "notes", _("editó las notas")
        SUBMITTED = "submitted", _("envió la ficha")
        APPROVED = "approved", _("aprobó la ficha")
        RETURNED = "returned", _("devolvió la ficha")
        IMPORTED = "imported", _("importó la ficha")
        DAMAGE = "damage", _("daño")
        IMBALANCE = "imbalance", _("desequilibrio mental")
        SHOCK = "shock", _("shock tras el descanso")
        STRESS = "stress", _("estrés tras el descanso")
        STABILISE = "stabilise", _("estabilización")
        HEAL = "heal", _("curación")
        HEALING_ROLL = "healing_roll", _("tirada de curación")
        RECOVERY_ROLL = "recovery_roll", _("tirada de recuperación mental")
        DRAMA = "drama", _("puntos dramáticos")
        ASPECT = "aspect", _("aspecto")
        NEW_SESSION = "new_session", _("nueva sesión")
        NEW_SCENE = "new_scene", _("nueva escena")

    campaign = models.ForeignKey("campaigns.Campaign", on_delete=models.CASCADE, related_name="sheet_events")
    character = models.ForeignKey(Character, null=True, blank=True, on_delete=models.CASCADE, related_name="events")
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    kind = models.CharField(max_length=16, choices=Kind.choices)
    summary = models.CharField(max_length=500)
    reason = models.CharField(_("motivo"), max_length=500, blank=True)
    post = models.ForeignKey("campaigns.Post", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    # The roll-log entry behind the change (a test, a healing roll, an attack).
    roll = models.ForeignKey("rolls.RollEntry", null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    before = models.JSONField(default=dict, blank=True)
    after = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["character", "-created_at"])]

    def __str__(self) -> str:
        return f"{self.get_kind_display()}: {self.summary}"
