from django.conf import settings
from django.db import models
from django.db.models import Q
from django.urls import reverse
from django.utils.translation import gettext_lazy as _


class System(models.TextChoices):
    HITOS = "hitos", _("HITOS")
    VAESEN = "vaesen", _("Estilo Vaesen (reserva de d6)")
    AVENTURAS = "aventuras", _("Hora de Aventuras")


class Visibility(models.TextChoices):
    PUBLIC = "public", _("Pública")
    PRIVATE = "private", _("Privada")


class CampaignQuerySet(models.QuerySet):
    def public(self):
        return self.filter(visibility=Visibility.PUBLIC)

    def of_user(self, user):
        """Campaigns the user takes part in (for now: those they direct)."""
        if not user.is_authenticated:
            return self.none()
        return self.filter(gm=user)

    def visible_to(self, user):
        """Campaigns whose page the user may open."""
        if not user.is_authenticated:
            return self.public()
        return self.filter(Q(visibility=Visibility.PUBLIC) | Q(gm=user))


class Campaign(models.Model):
    title = models.CharField(_("título"), max_length=120)
    slug = models.SlugField(_("dirección"), max_length=80, unique=True)
    system = models.CharField(_("sistema"), max_length=16, choices=System.choices, default=System.HITOS)
    visibility = models.CharField(
        _("visibilidad"), max_length=10, choices=Visibility.choices, default=Visibility.PUBLIC
    )
    gm = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        verbose_name=_("director de juego"),
        on_delete=models.PROTECT,
        related_name="directed_campaigns",
    )
    created_at = models.DateTimeField(_("creada"), auto_now_add=True)

    objects = CampaignQuerySet.as_manager()

    class Meta:
        verbose_name = _("partida")
        verbose_name_plural = _("partidas")
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return self.title

    def get_absolute_url(self) -> str:
        return reverse("campaigns:campaign-detail", args=[self.slug])
