"""The forms of deadlines and nudges (``campaigns.waiting_actions``)."""

from __future__ import annotations

from crispy_forms.helper import FormHelper
from django import forms
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

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


class SettleForm(forms.Form):
    """What to do with a deadline that passed: one of its kind's options,
    more time (with a new date) or withdrawing it."""

    choice = forms.ChoiceField(label=gettext_lazy("Qué hacer"), widget=forms.RadioSelect)

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
