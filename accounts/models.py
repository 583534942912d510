from django.conf import settings
from django.contrib.auth.models import AbstractUser
from django.db import models
from django.utils.translation import gettext_lazy as _


class User(AbstractUser):
    """A person with an account. ``display_name`` is what other players see."""

    display_name = models.CharField(
        _("nombre visible"),
        max_length=60,
        blank=True,
        help_text=_("Cómo te verán los demás jugadores. Si lo dejas vacío se usa tu nombre de usuario."),
    )
    language = models.CharField(
        _("idioma preferido"),
        max_length=8,
        choices=settings.LANGUAGES,
        blank=True,
        help_text=_("Idioma de la web cuando inicias sesión. Vacío: el del navegador."),
    )

    class EmailChoice(models.TextChoices):
        IMMEDIATE = "immediate", _("En el momento")
        DIGEST = "digest", _("Un resumen diario")
        GM_ONLY = "gm_only", _("Solo cuando escribe la dirección")
        NEVER = "never", _("Nunca")

    email_notifications = models.CharField(
        _("avisos por correo"),
        max_length=10,
        choices=EmailChoice.choices,
        default=EmailChoice.DIGEST,
        help_text=_("Mensajes nuevos en escenas que ves, mensajes para ti y respuestas a tus solicitudes."),
    )

    class Meta:
        verbose_name = _("usuario")
        verbose_name_plural = _("usuarios")

    def __str__(self) -> str:
        return self.public_name

    @property
    def public_name(self) -> str:
        return self.display_name or self.username
