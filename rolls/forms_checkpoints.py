"""The member's choice to receive the campaign's daily signed checkpoint by e-mail."""

from django import forms
from django.utils.translation import gettext_lazy as _

SUBSCRIBE = "recibir"
UNSUBSCRIBE = "no-recibir"


class CheckpointSubscriptionForm(forms.Form):
    """One button: ``action`` is ``recibir`` (send me the daily checkpoint) or ``no-recibir``."""

    action = forms.ChoiceField(
        choices=[(SUBSCRIBE, _("Recibir el punto de control diario")), (UNSUBSCRIBE, _("Dejar de recibirlo"))],
        error_messages={
            "required": _("Elige si quieres recibir el punto de control diario."),
            "invalid_choice": _("Elige si quieres recibir el punto de control diario."),
        },
    )
