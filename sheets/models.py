"""The characters of a campaign, the part every game system shares:
identity, owner, PC or NPC, status and the GM's review, notes and the history
of every change (``SheetEvent``). What a sheet holds beyond that belongs to
the campaign's game system (HITOS: ``systems.hitos.models.HitosSheet``, a
one-to-one row ``character.hitos``), which serves the sheet pages
(``sheets.kinds``).
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.urls import reverse
from django.utils.translation import gettext_lazy as _


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
    public_description = models.TextField(_("descripción pública"), blank=True, max_length=10000)
    private_notes = models.TextField(_("notas privadas"), blank=True, max_length=20000)
    gm_notes = models.TextField(_("notas de la dirección"), blank=True, max_length=20000)

    review_comment = models.TextField(_("comentario de la dirección"), blank=True, max_length=5000)
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

    def is_in_play(self, campaign) -> bool:
        """In ``campaign``'s ``in_play()`` set, without a query."""
        return self.campaign_id == campaign.pk and (self.is_npc or self.status == self.Status.APPROVED)

    @property
    def is_editable_by_owner(self) -> bool:
        return self.status in (self.Status.DRAFT, self.Status.RETURNED)


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


def event_kinds() -> list[tuple[str, str]]:
    """Every kind of change a sheet's history names: the core's and those of
    the installed game systems (evaluated when asked: a system adds its kinds
    without a migration)."""
    from sheets import kinds

    return [*SheetEvent.Kind.choices, *kinds.event_choices()]


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
        # Someone played the character for its absent owner (``table.takeover``).
        TAKEOVER = "takeover", _("escribió en nombre de su dueño")

    campaign = models.ForeignKey("campaigns.Campaign", on_delete=models.CASCADE, related_name="sheet_events")
    character = models.ForeignKey(Character, null=True, blank=True, on_delete=models.CASCADE, related_name="events")
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    # The core's kinds and the games' own (``sheets.kinds``: a damage mark, a session).
    kind = models.CharField(max_length=16, choices=event_kinds)
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
