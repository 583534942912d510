"""Forms of aspect activations and the GM's drama pool. The dice to re-roll
are checkboxes named ``dice`` drawn by the template (each shows its value and
letter) and read with ``systems.hitos.checks.services.parse_positions``."""

from crispy_forms.helper import FormHelper
from crispy_forms.layout import Submit
from django import forms
from django.utils.translation import gettext_lazy as _

from accounts.limits import LIMIT_MESSAGES, text_field
from rolls.models import Activation
from sheets.models import SheetEvent
from systems.hitos.activations.services import FREE_TEXT, AspectOption

FREE_CHOICE = "libre"


def _helper(form_tag: bool = False) -> FormHelper:
    helper = FormHelper()
    helper.form_tag = form_tag
    helper.disable_csrf = True
    return helper


class PositiveActivationForm(forms.Form):
    aspect = forms.ChoiceField(label=_("Aspecto que activas"))
    payment = forms.ChoiceField(label=_("Cómo pagas"), widget=forms.RadioSelect)

    def __init__(self, *args, aspects: list[AspectOption], payments: list[tuple[str, str]], **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["aspect"].choices = [(o.value, o.label) for o in aspects]
        self.fields["payment"].choices = payments
        if payments:
            self.fields["payment"].initial = payments[0][0]
        self.helper = _helper()


class NegativeActivationForm(forms.Form):
    aspect = forms.ChoiceField(label=_("Aspecto que activas en contra"))
    aspect_text = text_field(
        Activation,
        "aspect_text",
        label=_("Otro aspecto"),
        required=False,
        help_text=_("Solo la dirección: una frase que no está en ninguna ficha."),
    )
    note = text_field(Activation, "note", label=_("Por qué (opcional)"), required=False)

    def __init__(self, *args, aspects: list[AspectOption], free_text: bool, **kwargs):
        super().__init__(*args, **kwargs)
        choices = [(o.value, o.label) for o in aspects]
        if free_text:
            choices.append((FREE_CHOICE, _("Otro (escríbelo)")))
        else:
            del self.fields["aspect_text"]
        self.fields["aspect"].choices = choices
        self.helper = _helper()

    def aspect_choice(self) -> str:
        """What ``activate_negative`` takes: an option's value or free text."""
        if self.cleaned_data["aspect"] == FREE_CHOICE:
            return FREE_TEXT + self.cleaned_data.get("aspect_text", "")
        return self.cleaned_data["aspect"]

    def clean(self):
        data = super().clean()
        if data.get("aspect") == FREE_CHOICE and not (data.get("aspect_text") or "").strip():
            self.add_error("aspect_text", _("Escribe el aspecto que activas."))
        return data


class DramaPoolForm(forms.Form):
    value = forms.IntegerField(
        label=_("Puntos de la reserva"), min_value=0, max_value=99, error_messages=LIMIT_MESSAGES
    )
    reason = text_field(SheetEvent, "reason", label=_("Motivo"))

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.helper = _helper(form_tag=False)
        self.helper.add_input(Submit("fijar", _("Fijar la reserva")))


class NarrativeForm(forms.Form):
    # Empty: the GM's pool (only the direction is offered it).
    activator = forms.ChoiceField(label=_("Quién activa"), required=False)
    aspect_text = text_field(Activation, "aspect_text", label=_("Aspecto"))
    note = text_field(
        Activation, "note", label=_("Elemento narrativo que introduces"), widget=forms.Textarea(attrs={"rows": 2})
    )
    affected = forms.ChoiceField(label=_("Personaje perjudicado (opcional)"), required=False)

    def __init__(self, *args, activators: list[tuple[str, str]], affected: list[tuple[str, str]], **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["activator"].choices = activators
        self.fields["affected"].choices = [("", _("Nadie"))] + affected
        self.helper = _helper(form_tag=False)
        self.helper.add_input(Submit("activar", _("Activar (1 punto)")))
