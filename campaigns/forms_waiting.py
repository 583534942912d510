"""The forms of deadlines and nudges (``campaigns.waiting_actions``)."""

from __future__ import annotations

from crispy_forms.helper import FormHelper
from django import forms
from django.core.validators import RegexValidator
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from accounts.limits import HiddenErrorsShown
from accounts.models import User
from campaigns import deadlines
from campaigns.models import Campaign, Deadline, Membership


class SceneDeadlineForm(forms.Form):
    """A scene's deadline: the date and time, in the campaign's zone, and
    when to remind the players who have not written."""

    def __init__(self, *args, campaign: Campaign, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields.update(deadlines.deadline_form_fields(campaign, required=True))
        self.fields["plazo"].error_messages["required"] = _("Escribe la fecha y la hora del plazo.")
        self.helper = FormHelper()
        self.helper.form_tag = False


class SettleForm(HiddenErrorsShown, forms.Form):
    """What to do with a deadline that passed: one of its kind's options,
    more time (with a new date) or withdrawing it."""

    choice = forms.ChoiceField(label=gettext_lazy("Qué hacer"), widget=forms.RadioSelect)
    # An option that rolls (a HITOS activation taken as accepted) draws its
    # dice with this seed from the direction's browser (rollog/v1 §3.3),
    # filled by static/js/client-seed.js; empty without JavaScript.
    client_seed = forms.CharField(
        required=False,
        widget=forms.HiddenInput(attrs={"data-client-seed": "true"}),
        strip=False,
        validators=[
            RegexValidator(
                r"\A[0-9A-Za-z_-]{1,64}\Z",
                gettext_lazy(
                    "La semilla del navegador no es válida: de 1 a 64 letras, cifras, guiones o guiones bajos."
                ),
            )
        ],
    )

    def __init__(self, *args, deadline: Deadline, actor, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["choice"].choices = deadlines.settle_choices(deadline, actor)
        self.fields["choice"].error_messages["required"] = _("Elige qué hacer con el plazo.")
        self.fields["choice"].error_messages["invalid_choice"] = _("Elige una de las opciones que se ofrecen.")
        fields = deadlines.deadline_form_fields(deadline.campaign)
        fields["plazo"].label = _("Nuevo plazo (si das más tiempo)")
        self.fields.update(fields)
        self.helper = FormHelper()
        self.helper.form_tag = False

    def clean(self):
        data = super().clean()
        if data.get("choice") == deadlines.MORE_TIME and not data.get("plazo") and "plazo" not in self.errors:
            self.add_error("plazo", _("Para dar más tiempo, escribe el nuevo plazo."))
        return data


class NudgeForm(forms.Form):
    """Whom to nudge: an active member of the campaign."""

    user = forms.ModelChoiceField(queryset=User.objects.none())

    def __init__(self, *args, campaign: Campaign, **kwargs):
        super().__init__(*args, **kwargs)
        field = self.fields["user"]
        field.queryset = User.objects.filter(
            memberships__campaign=campaign, memberships__status=Membership.Status.ACTIVE
        )
        field.error_messages["required"] = _("Elige a quién dar el toque.")
        field.error_messages["invalid_choice"] = _("Esa persona no está en la partida.")
