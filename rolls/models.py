"""The signed roll log (rollog/v1) as stored by the site.

``RollEntry.entry_bytes`` and ``signature`` are the truth: the other columns
are indexed copies for queries and pages. Entries are never updated or
deleted (the model and its queryset refuse; on PostgreSQL a trigger does too).
"""

from __future__ import annotations

import json
from functools import cached_property
from typing import Any

from django.conf import settings
from django.db import models
from django.urls import reverse
from django.utils.translation import gettext_lazy as _

from rolls.rollog import SignedEntry
from rolls.verify_roll import commitment_of


class ImmutableEntryError(Exception):
    pass


class CampaignLog(models.Model):
    """The head of a campaign's log, locked (SELECT … FOR UPDATE) by every append."""

    campaign = models.OneToOneField(
        "campaigns.Campaign", on_delete=models.PROTECT, primary_key=True, related_name="roll_log"
    )
    # The public campaign id inside the entries: fixed when the log opens.
    log_id = models.CharField(max_length=100, unique=True)
    seq = models.BigIntegerField()
    head_hash = models.CharField(max_length=64)
    head_time = models.CharField(max_length=20)
    epoch = models.PositiveIntegerField()
    next_index = models.PositiveIntegerField()

    def __str__(self) -> str:
        return f"{self.log_id} @ {self.seq}"


class SeedEpoch(models.Model):
    campaign = models.ForeignKey("campaigns.Campaign", on_delete=models.PROTECT, related_name="seed_epochs")
    epoch = models.PositiveIntegerField()
    anchor = models.CharField(max_length=64)
    length = models.PositiveIntegerField()
    # The epoch's secret root r, encrypted with ROLLOG_SEED_KEY (Fernet): a
    # database dump alone reveals no future seed.
    root_encrypted = models.BinaryField()
    opened_seq = models.BigIntegerField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["campaign", "epoch"], name="seedepoch_unique")]

    def __str__(self) -> str:
        return f"epoch {self.epoch} of {self.campaign_id}"


class RollEntryQuerySet(models.QuerySet):
    def update(self, **kwargs):
        raise ImmutableEntryError("Las entradas del registro de tiradas no se modifican.")

    update.alters_data = True

    def delete(self):
        raise ImmutableEntryError("Las entradas del registro de tiradas no se borran.")

    delete.alters_data = True
    delete.queryset_only = True

    def rolls(self):
        return self.exclude(kind=RollEntry.Kind.EPOCH_OPEN)


class RollEntry(models.Model):
    class Kind(models.TextChoices):
        EPOCH_OPEN = "epoch_open", _("apertura de época")
        ROLL = "roll", _("tirada")
        REROLL = "reroll", _("repetición")
        EXTEND = "extend", _("extensión")

    class Audience(models.TextChoices):
        """Who may read a sealed roll (rollog v1.1 §3.7); "" for a public roll."""

        PUBLIC = "", _("todos los lectores del registro")
        GM = "gm", _("solo la dirección")
        RECIPIENTS = "recipients", _("los destinatarios del mensaje")
        SCENE = "scene", _("quienes ven la escena")

    campaign = models.ForeignKey("campaigns.Campaign", on_delete=models.PROTECT, related_name="roll_entries")
    seq = models.BigIntegerField()
    # The kind of the roll itself: for a sealed entry, the kind of its opening.
    kind = models.CharField(max_length=12, choices=Kind.choices)
    # The signed (outer) entry: for a sealed roll, only its slot and commitment.
    entry_bytes = models.BinaryField()
    signature = models.BinaryField()
    # A sealed roll's audience and its opening (the committed inner entry),
    # served only to readers allowed to see the roll.
    audience = models.CharField(max_length=12, choices=Audience.choices, blank=True, default="")
    opening = models.BinaryField(null=True, blank=True)
    entry_hash = models.CharField(max_length=64, unique=True)
    permalink = models.CharField(max_length=24, unique=True)
    epoch = models.PositiveIntegerField()
    epoch_index = models.PositiveIntegerField(null=True, blank=True)
    # NULL (not "") for epoch_open entries, so UNIQUE(campaign, client_seed) ignores them.
    client_seed = models.CharField(max_length=64, null=True, blank=True)  # noqa: DJ001
    parent = models.OneToOneField("self", null=True, blank=True, on_delete=models.PROTECT, related_name="child")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="roll_entries"
    )
    character = models.ForeignKey(
        "sheets.Character", null=True, blank=True, on_delete=models.PROTECT, related_name="roll_entries"
    )
    scene = models.ForeignKey(
        "campaigns.Scene", null=True, blank=True, on_delete=models.PROTECT, related_name="roll_entries"
    )
    post = models.ForeignKey(
        "campaigns.Post", null=True, blank=True, on_delete=models.PROTECT, related_name="roll_entries"
    )
    # Copies for pages and queries (the signed bytes hold the same values).
    spec = models.CharField(max_length=100, blank=True)
    purpose = models.CharField(max_length=300, blank=True)
    dice = models.JSONField(default=list)
    game = models.JSONField(default=dict)
    time = models.CharField(max_length=20)
    created_at = models.DateTimeField(auto_now_add=True)

    objects = RollEntryQuerySet.as_manager()

    class Meta:
        ordering = ["campaign", "seq"]
        constraints = [
            models.UniqueConstraint(fields=["campaign", "seq"], name="rollentry_unique_seq"),
            models.UniqueConstraint(fields=["campaign", "epoch", "epoch_index"], name="rollentry_unique_slot"),
            models.UniqueConstraint(fields=["campaign", "client_seed"], name="rollentry_unique_client_seed"),
        ]
        indexes = [models.Index(fields=["scene", "user", "created_at"])]

    def __str__(self) -> str:
        return f"#{self.seq} {self.kind} {self.permalink}"

    def save(self, *args, **kwargs):
        # Only the first save (the INSERT) is allowed: history is append-only.
        if not self._state.adding:
            raise ImmutableEntryError("Las entradas del registro de tiradas no se modifican.")
        super().save(*args, **kwargs)

    save.alters_data = True

    def get_absolute_url(self) -> str:
        return reverse("rolls:roll-permalink", args=[self.permalink])

    def delete(self, *args, **kwargs):
        raise ImmutableEntryError("Las entradas del registro de tiradas no se borran.")

    delete.alters_data = True

    @property
    def signed(self) -> SignedEntry:
        return SignedEntry.from_stored(bytes(self.entry_bytes), bytes(self.signature))

    @property
    def is_sealed(self) -> bool:
        return bool(self.audience)

    @cached_property
    def entry(self) -> dict[str, Any]:
        """What the roll says: the signed bytes, decoded, or for a sealed roll
        its committed opening. Pages show these, never the column copies, so
        that editing a copy in the database cannot change what a page says.

        A sealed roll's content is for readers allowed to see it: views ask
        ``rolls.permissions`` before showing it (``outer`` is for everyone).
        """
        if self.is_sealed:
            return json.loads(bytes(self.opening).decode("utf-8"))
        return self.signed.entry

    @cached_property
    def outer(self) -> dict[str, Any]:
        """The signed entry as the chain carries it (for a sealed roll: slot and commitment only)."""
        return self.signed.entry

    @property
    def signed_game(self) -> dict[str, Any]:
        return self.entry.get("game") or {}

    @property
    def rerolled_dice_numbers(self) -> list[int]:
        """The re-rolled dice counted from 1, as players name them (the log's
        positions count from 0)."""
        return [position + 1 for position in self.entry.get("rerolled") or []]

    @property
    def labelled_dice(self) -> list[tuple[int, str]]:
        """Each die in raw order with its letter (m, C, M) as the signed reading gave it."""
        dice = self.entry.get("dice") or []
        labels = self.signed_game.get("labels") or [""] * len(dice)
        if len(labels) != len(dice):
            labels = [""] * len(dice)
        return list(zip(dice, labels, strict=True))

    def copies_match(self) -> bool:
        """The indexed columns still say what the signed bytes say (and a
        sealed roll's opening still matches its signed commitment)."""
        if self.is_sealed and (
            self.opening is None
            or self.outer.get("kind") != "sealed"
            or self.outer.get("audience") != self.audience
            or commitment_of(bytes(self.opening)) != self.outer.get("commitment")
        ):
            return False
        if not self.is_sealed and self.outer.get("kind") == "sealed":
            return False
        e = self.entry
        return (
            self.signed.hash_hex == self.entry_hash
            and self.signed.permalink == self.permalink
            and (e.get("seq"), e.get("kind"), e.get("epoch"), e.get("epoch_index"), e.get("client_seed"))
            == (self.seq, self.kind, self.epoch, self.epoch_index, self.client_seed)
            and (e.get("spec", ""), e.get("purpose", ""), e.get("dice", []), e.get("game", {}), e.get("time"))
            == (self.spec, self.purpose, self.dice, self.game, self.time)
        )


class RollReveal(models.Model):
    """The GM shows a secret roll (audience "gm") to everyone who reads its
    scene: from then on its opening is served to them. The signed entry does
    not change; its commitment proves the content was fixed when rolled.
    Append-only, like the log."""

    entry = models.OneToOneField(RollEntry, on_delete=models.PROTECT, related_name="reveal")
    revealed_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    revealed_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"{self.entry} revealed {self.revealed_at:%Y-%m-%d %H:%M}"

    def save(self, *args, **kwargs):
        if not self._state.adding:
            raise ImmutableEntryError("Una revelación no se modifica.")
        super().save(*args, **kwargs)

    save.alters_data = True

    def delete(self, *args, **kwargs):
        raise ImmutableEntryError("Una revelación no se borra.")

    delete.alters_data = True


# --- Playing HITOS at the table -------------------------------------------------------
#
# The signed entries say what the dice did. The rows below keep what the table
# needs around them: who a roll belongs to, the difficulty even when hidden,
# the activations made on it, roll requests, combats, horror and opposed rolls.
# They change as play goes on (a pending activation is answered, a combatant
# acts); the entries they point at never do.


class TableRollKind(models.TextChoices):
    CHECK = "check", _("tirada")
    ATTACK = "attack", _("ataque")
    INITIATIVE = "initiative", _("iniciativa")
    HORROR = "horror", _("prueba de horror")
    OPPOSED = "opposed", _("tirada enfrentada")


class TableRoll(models.Model):
    """A HITOS check rolled at the table: its first entry, its latest version
    and the facts a re-roll needs that the signed entry may not show (a hidden
    difficulty). Activations lock this row, so two of them on the same roll
    happen one after the other."""

    campaign = models.ForeignKey("campaigns.Campaign", on_delete=models.CASCADE, related_name="table_rolls")
    scene = models.ForeignKey("campaigns.Scene", null=True, blank=True, on_delete=models.CASCADE, related_name="+")
    post = models.ForeignKey(
        "campaigns.Post", null=True, blank=True, on_delete=models.CASCADE, related_name="table_rolls"
    )
    first = models.OneToOneField(RollEntry, on_delete=models.PROTECT, related_name="table_roll")
    latest = models.OneToOneField(RollEntry, on_delete=models.PROTECT, related_name="+")
    kind = models.CharField(max_length=12, choices=TableRollKind.choices, default=TableRollKind.CHECK)
    # Who rolled (the owner answers negative activations) and as whom.
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    character = models.ForeignKey(
        "sheets.Character", null=True, blank=True, on_delete=models.CASCADE, related_name="table_rolls"
    )
    modifier = models.IntegerField()
    # The real difficulty, also when the entry only says "hidden".
    difficulty = models.IntegerField(null=True, blank=True)
    difficulty_hidden = models.BooleanField(default=False)
    # An action with an arcane skill: activations may take Degeneración (H92).
    arcane = models.BooleanField(default=False)
    position = models.PositiveSmallIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["post_id", "position", "id"]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} {self.first.permalink}"


class RollRequest(models.Model):
    """The GM asks a character for a roll; the player's next post answers it
    with exactly one roll (``answer``)."""

    campaign = models.ForeignKey("campaigns.Campaign", on_delete=models.CASCADE, related_name="roll_requests")
    scene = models.ForeignKey("campaigns.Scene", on_delete=models.CASCADE, related_name="roll_requests")
    character = models.ForeignKey("sheets.Character", on_delete=models.CASCADE, related_name="roll_requests")
    requested_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    characteristic = models.CharField(_("característica"), max_length=10)
    skill = models.CharField(_("habilidad"), max_length=80, blank=True)
    modifier = models.SmallIntegerField(_("modificador"), default=0)
    difficulty = models.SmallIntegerField(_("dificultad"), default=15)
    difficulty_hidden = models.BooleanField(_("dificultad oculta"), default=False)
    purpose = models.CharField(_("motivo"), max_length=300)
    answer = models.OneToOneField(
        TableRoll, null=True, blank=True, on_delete=models.SET_NULL, related_name="answers_request"
    )
    answered_at = models.DateTimeField(null=True, blank=True)
    cancelled_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]

    def __str__(self) -> str:
        return self.purpose

    @property
    def is_open(self) -> bool:
        return self.answered_at is None and self.cancelled_at is None


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
