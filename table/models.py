"""The table's rows around the signed log.

The signed entries say what the dice did. The rows here keep what the table
needs around them: who a roll belongs to, the difficulty even when hidden,
GM roll requests. They change as play goes on; the entries they point at
never do. Each game system keeps its own rows (``systems/<key>/models.py``).
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from rolls.models import RollEntry


class TableRoll(models.Model):
    """A roll made at the table: its first entry, its latest version
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
    # The game system's kind of roll ("check", "attack" …): its own words.
    kind = models.CharField(max_length=12, default="check")
    # Who rolled (the owner answers negative activations) and as whom.
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    character = models.ForeignKey(
        "sheets.Character", null=True, blank=True, on_delete=models.CASCADE, related_name="table_rolls"
    )
    # The real difficulty, also when the entry only says "hidden".
    difficulty = models.IntegerField(null=True, blank=True)
    difficulty_hidden = models.BooleanField(default=False)
    position = models.PositiveSmallIntegerField(default=0)
    # What the game needs to read the roll again after a re-roll that the
    # signed entry may not say (its modifier, which meter a sheet's test
    # changed …): the game's own keys.
    facts = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["post_id", "position", "id"]

    def __str__(self) -> str:
        return f"{self.kind} {self.first.permalink}"


class RollRequest(models.Model):
    """The GM asks a character for a roll; the player's next post answers it
    with exactly one roll (``answer``)."""

    campaign = models.ForeignKey("campaigns.Campaign", on_delete=models.CASCADE, related_name="roll_requests")
    scene = models.ForeignKey("campaigns.Scene", on_delete=models.CASCADE, related_name="roll_requests")
    character = models.ForeignKey("sheets.Character", on_delete=models.CASCADE, related_name="roll_requests")
    requested_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    # What the campaign's game fixes of the roll, in its own keys
    # (``GameSystem.request_fields``); the answer takes none of it from the post.
    facts = models.JSONField(default=dict, blank=True)
    difficulty = models.SmallIntegerField(_("dificultad"), null=True, blank=True)
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


class TakeoverQuerySet(models.QuerySet):
    def current(self):
        return self.filter(ended_at__isnull=True)


class Takeover(models.Model):
    """Someone plays an absent player's character ("PNJotizar"): the GM, or
    the player the GM names for one scene. While it lasts ``taken_by`` may
    post and roll as ``character`` (in ``scene`` only, when one is given);
    those posts name the owner (``Post.on_behalf_of``). Starting and ending
    it are in the moderation log; the owner is told on return."""

    campaign = models.ForeignKey("campaigns.Campaign", on_delete=models.CASCADE, related_name="takeovers")
    character = models.ForeignKey("sheets.Character", on_delete=models.CASCADE, related_name="takeovers")
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    taken_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    # Empty: every scene of the campaign (only the direction takes it so).
    scene = models.ForeignKey("campaigns.Scene", null=True, blank=True, on_delete=models.CASCADE, related_name="+")
    started_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    started_at = models.DateTimeField(auto_now_add=True)
    reason = models.CharField(_("motivo"), max_length=300, blank=True)
    ended_at = models.DateTimeField(null=True, blank=True)
    ended_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # When the owner was told what was done in their name.
    owner_told_at = models.DateTimeField(null=True, blank=True)

    objects = TakeoverQuerySet.as_manager()

    class Meta:
        ordering = ["-started_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["character"], condition=models.Q(ended_at__isnull=True), name="takeover_one_current"
            )
        ]

    def __str__(self) -> str:
        return f"{self.character} ← {self.taken_by}"
