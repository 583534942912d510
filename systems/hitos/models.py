"""HITOS's rows: the sheet (``HitosSheet`` beside the shared character core,
its skills, weapons and aspects) and the rows around its rolls at the table
(activations, combats, horror tests, opposed rolls). The signed entries they
point at never change; these do as play goes on (a pending activation is
answered, a combatant acts).
"""

from __future__ import annotations

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.utils.functional import cached_property
from django.utils.translation import gettext_lazy as _

from rolls.models import RollEntry
from rules.hitos_health import PENALTIES, health_state, mental_state, state_penalty
from rules.hitos_options import HitosOptions
from rules.hitos_scores import Characteristics, derived_scores
from rules.meters import Meter
from systems.hitos.campaign import rules_options_or_defaults
from systems.hitos.texts import SKILL_CATEGORY_CHOICES, ShownScore, degeneracion_text, shown_scores, state_label
from table.models import TableRoll

# --- the sheet -----------------------------------------------------------------------
#
# A HITOS character is the shared core (``sheets.Character``: identity, owner,
# PC or NPC, review, notes, history) plus one ``HitosSheet`` row (its
# characteristics, meters and points) and its skills, weapons and aspects.
# Game arithmetic (derived scores, states, penalties) is never done here: the
# properties hand the stored numbers to ``rules/`` and return its answers.
# Changes go through ``systems.hitos.sheet.services``.


class HitosEvent(models.TextChoices):
    """HITOS's own kinds of change in a sheet's history (``SheetEvent.kind``,
    beside the core's: created, edited, reviewed …)."""

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


CHARACTERISTIC_FIELDS = ("fortaleza", "reflejos", "voluntad", "intelecto")
CHARACTERISTIC_LABELS = {
    "fortaleza": _("Fortaleza"),
    "reflejos": _("Reflejos"),
    "voluntad": _("Voluntad"),
    "intelecto": _("Intelecto"),
}


def _characteristic(label):
    return models.PositiveSmallIntegerField(label, default=5, validators=[MinValueValidator(1), MaxValueValidator(10)])


class HitosSheet(models.Model):
    """What a HITOS sheet holds beyond the shared character core."""

    character = models.OneToOneField(
        "sheets.Character", on_delete=models.CASCADE, primary_key=True, related_name="hitos"
    )
    cita = models.CharField(_("cita"), max_length=300, blank=True)
    fortaleza = _characteristic(_("Fortaleza"))
    reflejos = _characteristic(_("Reflejos"))
    voluntad = _characteristic(_("Voluntad"))
    intelecto = _characteristic(_("Intelecto"))
    drama = models.PositiveSmallIntegerField(_("Drama"), default=5, validators=[MaxValueValidator(20)])
    drama_points = models.PositiveSmallIntegerField(_("puntos dramáticos"), default=5)
    degeneracion = models.PositiveSmallIntegerField(_("Degeneración"), default=0, validators=[MaxValueValidator(10)])
    armour = models.CharField(_("armadura"), max_length=120, blank=True)
    rd = models.PositiveSmallIntegerField(_("RD"), default=0, validators=[MaxValueValidator(20)])
    # NPC stat blocks carry the damage code of their usual attack.
    damage_code = models.CharField(_("código de daño"), max_length=20, blank=True)
    # Secuelas: [{"text": "...", "permanent": bool}]
    secuelas = models.JSONField(_("secuelas"), default=list, blank=True)

    health_slashes = models.PositiveSmallIntegerField(default=0)
    health_crosses = models.PositiveSmallIntegerField(default=0)
    mental_slashes = models.PositiveSmallIntegerField(default=0)
    mental_crosses = models.PositiveSmallIntegerField(default=0)

    budget_accepted = models.BooleanField(_("la dirección acepta las desviaciones del presupuesto"), default=False)

    class Meta:
        verbose_name = _("ficha de HITOS")
        verbose_name_plural = _("fichas de HITOS")

    def __str__(self) -> str:
        return str(self.character)

    # --- readings from rules/ ------------------------------------------------

    @property
    def is_npc(self) -> bool:
        return self.character.is_npc

    @cached_property
    def options(self) -> HitosOptions:
        return rules_options_or_defaults(self.character.campaign)

    @property
    def characteristics(self) -> Characteristics:
        return Characteristics(self.fortaleza, self.reflejos, self.voluntad, self.intelecto)

    def _skill_values(self, category: str) -> list[int]:
        return [s.value for s in self.character.skills.all() if s.category == category]

    @cached_property
    def scores(self) -> dict[str, ShownScore]:
        """The derived scores (H31–H37), named in the reader's language."""
        combate = max(self._skill_values("combate"), default=0)
        return shown_scores(derived_scores(self.characteristics, combate=combate, options=self.options))

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
        return state_label(self.health_state)

    @property
    def mental_label(self) -> str:
        return state_label(self.mental_state)

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
        """What the Degeneración level means (S001), in the reader's language."""
        return degeneracion_text(self.degeneracion)

    def forget_readings(self) -> None:
        """Drop the cached readings after the skills or characteristics change."""
        self.__dict__.pop("scores", None)


class Skill(models.Model):
    character = models.ForeignKey("sheets.Character", on_delete=models.CASCADE, related_name="skills")
    name = models.CharField(_("habilidad"), max_length=80)
    category = models.CharField(_("categoría"), max_length=16, choices=SKILL_CATEGORY_CHOICES)
    value = models.PositiveSmallIntegerField(_("valor"), validators=[MaxValueValidator(10)])

    class Meta:
        verbose_name = _("habilidad")
        verbose_name_plural = _("habilidades")
        ordering = ["id"]

    def __str__(self) -> str:
        return f"{self.name} {self.value}"


class Weapon(models.Model):
    character = models.ForeignKey("sheets.Character", on_delete=models.CASCADE, related_name="weapons")
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

    character = models.ForeignKey("sheets.Character", on_delete=models.CASCADE, related_name="aspects")
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


class SceneAspect(models.Model):
    """A situation aspect of a scene (H13): a phrase any involved player may
    activate. Set from the scene form (``systems.hitos.scene``)."""

    scene = models.ForeignKey("campaigns.Scene", on_delete=models.CASCADE, related_name="aspects")
    phrase = models.CharField(_("aspecto"), max_length=200)
    position = models.PositiveSmallIntegerField(default=0)

    class Meta:
        verbose_name = _("aspecto de situación")
        verbose_name_plural = _("aspectos de situación")
        ordering = ["position", "id"]

    def __str__(self) -> str:
        return self.phrase


class TableRollKind(models.TextChoices):
    CHECK = "check", _("tirada")
    ATTACK = "attack", _("ataque")
    INITIATIVE = "initiative", _("iniciativa")
    HORROR = "horror", _("prueba de horror")
    OPPOSED = "opposed", _("tirada enfrentada")
    # A sheet's own test: mass damage, trauma, healing or recovery.
    METER = "meter", _("prueba de la ficha")


class Activation(models.Model):
    """An aspect activated at the table (H13–H25, H92): a positive re-roll, a
    negative one the target accepts or cancels, or a narrative element."""

    class Kind(models.TextChoices):
        POSITIVE = "positive", _("positiva")
        NEGATIVE = "negative", _("negativa")
        NARRATIVE = "narrative", _("narrativa")

    class Status(models.TextChoices):
        DONE = "done", _("hecha")
        PENDING = "pending", _("pendiente")
        ACCEPTED = "accepted", _("aceptada")
        CANCELLED = "cancelled", _("cancelada")

    class Payment(models.TextChoices):
        POINT = "point", _("un punto dramático")
        EXHAUST = "exhaust", _("agotar el aspecto")
        DEGENERACION = "degeneracion", _("+1 Degeneración")
        GM_POOL = "gm_pool", _("un punto de la reserva de la dirección")
        # H92 — the GM forced +1 Degeneración instead of the point (and the player gained one).
        FORCED = "forced", _("+1 Degeneración forzada por la dirección")

    campaign = models.ForeignKey("campaigns.Campaign", on_delete=models.CASCADE, related_name="activations")
    kind = models.CharField(max_length=10, choices=Kind.choices)
    status = models.CharField(max_length=10, choices=Status.choices)
    table_roll = models.ForeignKey(
        TableRoll, null=True, blank=True, on_delete=models.CASCADE, related_name="activations"
    )
    # The version activated against and the re-roll it produced.
    against = models.ForeignKey(RollEntry, null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    reroll = models.OneToOneField(RollEntry, null=True, blank=True, on_delete=models.PROTECT, related_name="activation")
    positions = models.JSONField(default=list)
    activator = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    # None: the GM's pool (the GM or an NPC activates).
    activator_character = models.ForeignKey(
        "sheets.Character", null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    target_character = models.ForeignKey(
        "sheets.Character", null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    aspect_text = models.CharField(_("aspecto"), max_length=200)
    aspect = models.ForeignKey(Aspect, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    scene_aspect = models.ForeignKey(SceneAspect, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    payment = models.CharField(max_length=12, choices=Payment.choices)
    note = models.CharField(_("nota"), max_length=500, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    deadline = models.DateTimeField(null=True, blank=True)
    decided_at = models.DateTimeField(null=True, blank=True)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        ordering = ["created_at", "id"]
        constraints = [
            # A roll waits for at most one answer at a time.
            models.UniqueConstraint(
                fields=["table_roll"], condition=models.Q(status="pending"), name="activation_one_pending_per_roll"
            )
        ]

    def __str__(self) -> str:
        return f"{self.get_kind_display()}: {self.aspect_text}"


class Combat(models.Model):
    """A fight in a scene: its participants in initiative order (H40, H41)."""

    campaign = models.ForeignKey("campaigns.Campaign", on_delete=models.CASCADE, related_name="combats")
    scene = models.ForeignKey("campaigns.Scene", on_delete=models.CASCADE, related_name="combats")
    started_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    round = models.PositiveSmallIntegerField(_("asalto"), default=1)
    created_at = models.DateTimeField(auto_now_add=True)
    ended_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.scene} · {self.created_at:%Y-%m-%d}"


class Combatant(models.Model):
    combat = models.ForeignKey(Combat, on_delete=models.CASCADE, related_name="combatants")
    character = models.ForeignKey("sheets.Character", on_delete=models.CASCADE, related_name="+")
    initiative = models.OneToOneField(
        TableRoll, null=True, blank=True, on_delete=models.SET_NULL, related_name="combatant"
    )
    initiative_total = models.SmallIntegerField(null=True, blank=True)
    # Acting order (0 first), set by the initiative rules and by delaying.
    order = models.PositiveSmallIntegerField(default=0)
    # H38 — unprepared until the character first acts.
    has_acted = models.BooleanField(default=False)
    # The round the character last acted in (whose turn it is: a character
    # who has not acted in the combat's current round is waited for).
    acted_round = models.PositiveSmallIntegerField(_("asalto en que actuó"), null=True, blank=True)
    delaying = models.BooleanField(_("retrasa su acción"), default=False)
    all_out_defence = models.BooleanField(_("defensa total"), default=False)
    defenceless = models.BooleanField(_("indefenso"), default=False)
    out_of_combat = models.BooleanField(_("fuera de combate"), default=False)

    class Meta:
        ordering = ["order", "id"]
        constraints = [models.UniqueConstraint(fields=["combat", "character"], name="combatant_once_per_combat")]

    def __str__(self) -> str:
        return str(self.character)


class Attack(models.Model):
    """An attack roll in a combat and the damage read from its latest version."""

    combat = models.ForeignKey(Combat, on_delete=models.CASCADE, related_name="attacks")
    table_roll = models.OneToOneField(TableRoll, on_delete=models.CASCADE, related_name="attack")
    attacker = models.ForeignKey(Combatant, on_delete=models.CASCADE, related_name="attacks_made")
    target = models.ForeignKey(Combatant, on_delete=models.CASCADE, related_name="attacks_received")
    weapon = models.CharField(_("arma"), max_length=80)
    damage_code = models.CharField(_("código de daño"), max_length=20)
    damage_bonus = models.SmallIntegerField(default=0)
    # H46 — aspects move the code up or down the ladder.
    shift = models.SmallIntegerField(default=0)
    rd = models.PositiveSmallIntegerField(default=0)
    defence = models.JSONField(default=dict)  # the difficulty's breakdown
    damage_applied = models.SmallIntegerField(null=True, blank=True)
    applied_at = models.DateTimeField(null=True, blank=True)
    applied_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # H48/H49 — the proposed effect, and whether the GM confirmed or dismissed it.
    effect_decided = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]

    def __str__(self) -> str:
        return f"{self.attacker} → {self.target}"


class HorrorTest(models.Model):
    """The GM exposes characters to horror at a level (H78–H81)."""

    campaign = models.ForeignKey("campaigns.Campaign", on_delete=models.CASCADE, related_name="horror_tests")
    scene = models.ForeignKey("campaigns.Scene", on_delete=models.CASCADE, related_name="horror_tests")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    level = models.CharField(_("nivel"), max_length=12)
    description = models.CharField(_("qué lo provoca"), max_length=300)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return self.description


class HorrorExposure(models.Model):
    test = models.ForeignKey(HorrorTest, on_delete=models.CASCADE, related_name="exposures")
    character = models.ForeignKey("sheets.Character", on_delete=models.CASCADE, related_name="+")
    # H81 — aspects move the level one step each (−1 lessens, +1 worsens).
    shift = models.SmallIntegerField(default=0)
    shift_reason = models.CharField(max_length=300, blank=True)
    table_roll = models.OneToOneField(
        TableRoll, null=True, blank=True, on_delete=models.SET_NULL, related_name="horror_exposure"
    )
    exempt = models.BooleanField(default=False)  # H80
    loss = models.SmallIntegerField(null=True, blank=True)
    resolved_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["id"]
        constraints = [models.UniqueConstraint(fields=["test", "character"], name="horror_exposure_once")]

    def __str__(self) -> str:
        return str(self.character)


class OpposedRoll(models.Model):
    """H9 — two characters roll against each other; a tie the action does not
    allow is settled by new rolls linked to the first (``tiebreak_of``)."""

    campaign = models.ForeignKey("campaigns.Campaign", on_delete=models.CASCADE, related_name="opposed_rolls")
    scene = models.ForeignKey("campaigns.Scene", on_delete=models.CASCADE, related_name="opposed_rolls")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    purpose = models.CharField(_("motivo"), max_length=300)
    tie_allowed = models.BooleanField(_("se permite el empate"), default=False)
    first = models.OneToOneField(TableRoll, on_delete=models.PROTECT, related_name="opposed_first")
    second = models.OneToOneField(TableRoll, on_delete=models.PROTECT, related_name="opposed_second")
    tiebreak_of = models.OneToOneField("self", null=True, blank=True, on_delete=models.CASCADE, related_name="tiebreak")
    outcome = models.CharField(max_length=8, blank=True)  # rules.hitos.Opposed value
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]

    def __str__(self) -> str:
        return self.purpose
