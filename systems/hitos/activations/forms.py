"""Forms of aspect activations and the GM's drama pool. The dice to re-roll
are checkboxes named ``dice`` drawn by the template (each shows its value and
letter) and read with ``systems.hitos.checks.services.parse_positions``."""

from crispy_forms.helper import FormHelper
from crispy_forms.layout import Submit
from django import forms
from django.utils.translation import gettext_lazy as _

from accounts.limits import LIMIT_MESSAGES, HiddenErrorsShown, text_field
from rolls.forms import client_seed_field
from sheets.models import SheetEvent
from systems.hitos.activations.services import FREE_TEXT, AspectOption, narrative_exhaust_options
from systems.hitos.models import Activation, Aspect

FREE_CHOICE = "libre"
POINT = "point"


def _helper(form_tag: bool = False) -> FormHelper:
    helper = FormHelper()
    helper.form_tag = form_tag
    helper.disable_csrf = True
    return helper


ASPECT_REQUIRED = _("Elige el aspecto que activas.")


def aspect_choices(aspects: list[AspectOption]) -> list[tuple[str, str]]:
    """The aspects to choose from, after an empty "Elige un aspecto": the
    player says which aspect they activate, nothing is chosen for them."""
    return [("", _("Elige un aspecto")), *((o.value, o.label) for o in aspects)]


def aspect_initial(aspects: list[AspectOption]) -> str:
    """The aspect chosen beforehand: the only one there is, unless it is a
    complication (activating one is never a default)."""
    if len(aspects) == 1:
        aspect = aspects[0].aspect
        if aspect is None or aspect.kind != Aspect.Kind.COMPLICATION:
            return aspects[0].value
    return ""


class PositiveActivationForm(HiddenErrorsShown, forms.Form):
    aspect = forms.ChoiceField(label=_("Aspecto que activas"), error_messages={"required": ASPECT_REQUIRED})
    payment = forms.ChoiceField(label=_("Cómo pagas"), widget=forms.RadioSelect)
    # The re-roll's browser seed (rollog/v1 §3.3), and the key that makes a
    # retried form return the first activation instead of paying again.
    client_seed = client_seed_field(marked=True)

    def __init__(self, *args, aspects: list[AspectOption], payments: list[tuple[str, str]], **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["aspect"].choices = aspect_choices(aspects)
        self.fields["aspect"].initial = aspect_initial(aspects)
        self.fields["payment"].choices = payments
        if payments:
            self.fields["payment"].initial = payments[0][0]
        self.helper = _helper()


class NegativeActivationForm(forms.Form):
    aspect = forms.ChoiceField(label=_("Aspecto que activas en contra"), error_messages={"required": ASPECT_REQUIRED})
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
        choices = aspect_choices(aspects)
        if free_text:
            choices.append((FREE_CHOICE, _("Otro (escríbelo)")))
        else:
            del self.fields["aspect_text"]
        self.fields["aspect"].choices = choices
        if not free_text:
            self.fields["aspect"].initial = aspect_initial(aspects)
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
    """H23 — a narrative element. K17 — a player may pay it by exhausting one
    of their character's aspects (``payment``, offered only when there is one
    to exhaust: never to the GM, whose pool and NPCs pay points); then the
    aspect activated is the one exhausted and ``aspect_text`` may be empty."""

    # Empty: the GM's pool (only the direction is offered it).
    activator = forms.ChoiceField(label=_("Quién activa"), required=False)
    aspect_text = text_field(Activation, "aspect_text", label=_("Aspecto"))
    note = text_field(
        Activation, "note", label=_("Elemento narrativo que introduces"), widget=forms.Textarea(attrs={"rows": 2})
    )
    affected = forms.ChoiceField(label=_("Personaje perjudicado (opcional)"), required=False)
    # "point" (or empty) or an own aspect's value ("a<pk>") to exhaust.
    payment = forms.ChoiceField(label=_("Cómo pagas"), required=False)

    def __init__(self, *args, activators: list[tuple[str, str]], affected: list[tuple[str, str]], **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["activator"].choices = activators
        self.fields["affected"].choices = [("", _("Nadie"))] + affected
        character_ids = [int(value) for value, label in activators if value]
        exhaustable = narrative_exhaust_options(character_ids=character_ids) if character_ids else []
        self._exhaustable = {option.value: option for option in exhaustable}
        self.helper = _helper(form_tag=False)
        if exhaustable:
            self.fields["payment"].choices = [(POINT, _("Un punto dramático"))] + [
                (option.value, option.label) for option in exhaustable
            ]
            self.fields["payment"].initial = POINT
            self.fields["aspect_text"].required = False
            self.fields["aspect_text"].help_text = _(
                "Si pagas agotando un aspecto, puedes dejarlo vacío: activas el aspecto que agotas."
            )
            self.helper.add_input(Submit("activar", _("Activar")))
        else:
            del self.fields["payment"]
            self.helper.add_input(Submit("activar", _("Activar (1 punto)")))

    def _exhausting(self) -> AspectOption | None:
        return self._exhaustable.get(self.cleaned_data.get("payment") or "")

    def exhaust_aspect_id(self) -> int | None:
        """What ``narrative_activation`` takes: the aspect to exhaust, or None
        to pay a point."""
        option = self._exhausting()
        return option.aspect.pk if option else None

    def clean(self):
        data = super().clean()
        option = self._exhausting()
        if option is None and not data.get("aspect_text") and "aspect_text" not in self.errors:
            self.add_error("aspect_text", _("Escribe el aspecto que activas."))
        activator = data.get("activator")
        if option is not None and activator and option.aspect.character_id != int(activator):
            self.add_error(
                "payment", _("Ese aspecto no es de quien activa: elige uno de sus aspectos o paga con un punto.")
            )
        return data
