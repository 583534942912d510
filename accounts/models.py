from django.conf import settings
from django.contrib.auth.models import AbstractUser
from django.db import models
from django.utils.translation import gettext_lazy as _


def time_zone_choices() -> list[tuple[str, str]]:
    """Every IANA time zone this machine knows, by name (Europe/Madrid,
    America/Bogota…)."""
    from zoneinfo import available_timezones

    return [(name, name.replace("_", " ")) for name in sorted(available_timezones())]


class TakeoverConsent(models.TextChoices):
    """What a player allows the direction to do with their character while
    they are away ("PNJotizar"): the profile's choice, and each campaign's.
    Nothing ever acts for a character by itself: once a deadline passes, the
    direction is offered only what the rules let a character do without its
    player (hold its action, not react, let a request close), so no choice
    here allows more."""

    NOBODY = "nobody", _("Nadie lleva a mi personaje")
    GM = "gm", _("El director puede llevar a mi personaje si falto")
    GM_AND_NAMED = "named", _("El director, o el jugador que él nombre, puede llevar a mi personaje si falto")


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

    # Empty: the time zone of each campaign (deadlines are shown in it).
    time_zone = models.CharField(
        _("zona horaria"),
        max_length=64,
        choices=time_zone_choices,
        blank=True,
        help_text=_("Los plazos de las partidas se te muestran también en esta hora. Vacío: la de cada partida."),
    )
    # What the player allows, in every campaign that does not say otherwise
    # (``campaigns.Membership.takeover_consent``), while they are away.
    takeover_consent = models.CharField(
        _("si falto a una partida"),
        max_length=8,
        choices=TakeoverConsent.choices,
        default=TakeoverConsent.NOBODY,
        help_text=_("Quién puede llevar a tu personaje mientras estás ausente. Cada partida puede decir otra cosa."),
    )

    class Meta:
        verbose_name = _("usuario")
        verbose_name_plural = _("usuarios")

    def __str__(self) -> str:
        return self.public_name

    @property
    def public_name(self) -> str:
        return self.display_name or self.username
