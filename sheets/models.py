"""Characters of a campaign. The HITOS sheet (characteristics, skills,
meters, aspects) extends this with the sheets feature; posts need only the
character's name, owner and whether the GM has approved it."""

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _


class CharacterQuerySet(models.QuerySet):
    def approved(self):
        return self.filter(status=Character.Status.APPROVED)


class Character(models.Model):
    class Status(models.TextChoices):
        DRAFT = "draft", _("Borrador")
        SUBMITTED = "submitted", _("Enviada")
        APPROVED = "approved", _("Aprobada")
        RETURNED = "returned", _("Devuelta")

    campaign = models.ForeignKey("campaigns.Campaign", on_delete=models.CASCADE, related_name="characters")
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="characters")
    name = models.CharField(_("nombre"), max_length=80)
    status = models.CharField(_("estado"), max_length=10, choices=Status.choices, default=Status.DRAFT)
    created_at = models.DateTimeField(auto_now_add=True)

    objects = CharacterQuerySet.as_manager()

    class Meta:
        verbose_name = _("personaje")
        verbose_name_plural = _("personajes")
        ordering = ["name", "id"]

    def __str__(self) -> str:
        return self.name
