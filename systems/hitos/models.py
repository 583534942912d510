"""HITOS at the table: the rows around its rolls (activations, combats,
horror tests, opposed rolls). The signed entries they point at never change;
these do as play goes on (a pending activation is answered, a combatant acts).
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from rolls.models import RollEntry
from table.models import TableRoll


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
    aspect = models.ForeignKey("sheets.Aspect", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    scene_aspect = models.ForeignKey(
        "campaigns.SceneAspect", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
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
