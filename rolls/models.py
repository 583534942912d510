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
from django.db.models import Case, Exists, ExpressionWrapper, F, OuterRef, Q, Value, When
from django.urls import reverse
from django.utils.translation import gettext_lazy as _

from rolls.rollog import SignedEntry
from rolls.verify import commitment as commitment_of


class ImmutableEntryError(Exception):
    pass


class LogHeadMismatch(Exception):
    """The campaign's head row does not name its last entry: it was changed
    outside the append service (on PostgreSQL only with the head's trigger
    switched off, rolls 0005). Reading or appending a roll of that campaign
    raises it; ``rolls.middleware`` answers the page that explains it."""

    def __init__(self, campaign) -> None:
        super().__init__(f"The roll log head of campaign {campaign.pk} does not name its last entry.")
        self.campaign = campaign


def next_slot(entry: str = "") -> Case:
    """The seed slot after an entry (``entry``: the path to it, "" for the
    entry itself): an epoch_open starts its epoch at slot 1, any other entry
    used slot ``epoch_index``. ``RollEntry.next_slot`` in Python."""
    prefix = f"{entry}__" if entry else ""
    return Case(
        When(**{f"{prefix}kind": RollEntry.Kind.EPOCH_OPEN}, then=Value(1)),
        default=F(f"{prefix}epoch_index") + 1,
        output_field=models.PositiveIntegerField(),
    )


class CampaignLogQuerySet(models.QuerySet):
    def broken(self):
        """The heads that do not name their campaign's last entry: no entry at
        the head's seq with the head's hash, time and epoch and the seed slot
        after it as the head's next one (what the trigger of rolls 0005
        checks), or an entry after it."""
        entries = RollEntry.objects.filter(campaign=OuterRef("campaign"))
        named = entries.annotate(slot_after=next_slot()).filter(
            seq=OuterRef("seq"),
            entry_hash=OuterRef("head_hash"),
            time=OuterRef("head_time"),
            epoch=OuterRef("epoch"),
            slot_after=OuterRef("next_index"),
        )
        return self.filter(~Exists(named) | Exists(entries.filter(seq__gt=OuterRef("seq"))))

    def intact(self):
        """The heads that name their campaign's last entry."""
        return self.filter(~Exists(CampaignLog.objects.broken().filter(pk=OuterRef("pk"))))


def head_broken(campaign: str = "pk") -> ExpressionWrapper:
    """True for a row whose campaign (``campaign``: the path to its id) has a
    head that does not name its last entry, or entries and no head at all:
    an annotation that lets a page check the head in the query it already
    makes (no query of its own)."""
    of_campaign = {"campaign": OuterRef(campaign)}
    headless = RollEntry.objects.filter(**of_campaign).filter(
        ~Exists(CampaignLog.objects.filter(campaign=OuterRef("campaign")))
    )
    return ExpressionWrapper(
        Q(Exists(CampaignLog.objects.broken().filter(**of_campaign))) | Q(Exists(headless)),
        output_field=models.BooleanField(),
    )


def intact_head(campaign) -> CampaignLog:
    """The campaign's head, in one query; ``LogHeadMismatch`` if it does not
    name the last entry or is missing (where a head is needed: a roll's
    bundle, the export)."""
    head = (
        CampaignLog.objects.filter(campaign=campaign)
        .annotate(broken=Exists(CampaignLog.objects.broken().filter(pk=OuterRef("pk"))))
        .first()
    )
    if head is None or head.broken:
        raise LogHeadMismatch(campaign)
    return head


class CampaignLog(models.Model):
    """The head of a campaign's log, locked (SELECT … FOR UPDATE) by every append.

    It only ever moves to the entry appended after it: on PostgreSQL a trigger
    refuses any other change (rolls 0005); a head that does not name the last
    entry (``broken``) stops every page that reads or appends the campaign's
    rolls with ``LogHeadMismatch``."""

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

    objects = CampaignLogQuerySet.as_manager()

    def __str__(self) -> str:
        return f"{self.log_id} @ {self.seq}"

    def names(self, entry: RollEntry | None) -> bool:
        """Does this head name ``entry`` (as the campaign's last entry must be named)?"""
        return entry is not None and (self.seq, self.head_hash, self.head_time, self.epoch, self.next_index) == (
            entry.seq,
            entry.entry_hash,
            entry.time,
            entry.epoch,
            entry.next_slot,
        )


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
    def next_slot(self) -> int:
        """The seed slot after this entry (``next_slot()`` in a query)."""
        return 1 if self.kind == self.Kind.EPOCH_OPEN else self.epoch_index + 1

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


class CheckpointQuerySet(models.QuerySet):
    def update(self, **kwargs):
        raise ImmutableEntryError("Los puntos de control no se modifican.")

    update.alters_data = True

    def delete(self):
        raise ImmutableEntryError("Los puntos de control no se borran.")

    delete.alters_data = True
    delete.queryset_only = True


class Checkpoint(models.Model):
    """A daily signed statement of a campaign's head: "at ``time`` the log of
    CAMPAIGN ended at entry SEQ whose entry_hash is HEAD" (``rolls.checkpoints``).
    ``body`` and ``signature`` are the truth; ``date``, ``seq`` and
    ``head_hash`` are indexed copies. Anyone who kept one catches a log whose
    last entries were dropped later. Append-only, like the log."""

    campaign = models.ForeignKey("campaigns.Campaign", on_delete=models.PROTECT, related_name="roll_checkpoints")
    # The UTC day the checkpoint closes.
    date = models.DateField()
    seq = models.BigIntegerField()
    head_hash = models.CharField(max_length=64)
    body = models.BinaryField()
    signature = models.BinaryField()
    created = models.DateTimeField(auto_now_add=True)

    objects = CheckpointQuerySet.as_manager()

    class Meta:
        ordering = ["campaign", "-date"]
        constraints = [models.UniqueConstraint(fields=["campaign", "date"], name="checkpoint_unique_day")]

    def __str__(self) -> str:
        return f"{self.campaign_id} {self.date} @ {self.seq}"

    def save(self, *args, **kwargs):
        if not self._state.adding:
            raise ImmutableEntryError("Un punto de control no se modifica.")
        super().save(*args, **kwargs)

    save.alters_data = True

    def delete(self, *args, **kwargs):
        raise ImmutableEntryError("Un punto de control no se borra.")

    delete.alters_data = True


class CheckpointSubscription(models.Model):
    """A member who asked to receive the campaign's daily checkpoint by e-mail.
    ``last_sent_on``: the date of the last checkpoint e-mailed to them, so a
    task run twice sends nothing twice."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="checkpoint_subscriptions"
    )
    campaign = models.ForeignKey(
        "campaigns.Campaign", on_delete=models.CASCADE, related_name="checkpoint_subscriptions"
    )
    created = models.DateTimeField(auto_now_add=True)
    last_sent_on = models.DateField(null=True, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "campaign"], name="checkpointsubscription_unique")]

    def __str__(self) -> str:
        return f"{self.user_id} ← {self.campaign_id}"
