"""The forms of absences (``campaigns.absence_views``)."""

from __future__ import annotations

from crispy_forms.helper import FormHelper
from crispy_forms.layout import Submit
from django import forms
from django.core.exceptions import ValidationError
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from accounts.limits import LIMIT_MESSAGES, max_length_of
from accounts.models import TakeoverConsent
from campaigns import absences
from campaigns.models import Absence, Campaign, Membership

NOTE_MAX = max_length_of(Absence, "note")


class AbsenceForm(forms.Form):
    """An absence's dates (in the campaign's time zone), note and holding."""

    starts_on = forms.DateField(
        label=gettext_lazy("Desde"),
        widget=forms.DateInput(attrs={"type": "date"}, format="%Y-%m-%d"),
        error_messages={"required": gettext_lazy("¿Desde qué día?"), "invalid": gettext_lazy("Escribe una fecha.")},
    )
    ends_on = forms.DateField(
        label=gettext_lazy("Hasta (incluido)"),
        widget=forms.DateInput(attrs={"type": "date"}, format="%Y-%m-%d"),
        error_messages={"required": gettext_lazy("¿Hasta qué día?"), "invalid": gettext_lazy("Escribe una fecha.")},
    )
    note = forms.CharField(
        label=gettext_lazy("Nota (opcional)"),
        required=False,
        max_length=NOTE_MAX,
        error_messages=LIMIT_MESSAGES,
        help_text=gettext_lazy("La ven todos los miembros; por ejemplo, «de viaje hasta el 12»."),
    )
    hold_notifications = forms.BooleanField(
        label=gettext_lazy("Guardar los avisos de esta partida para mi vuelta"),
        required=False,
        help_text=gettext_lazy("Siguen en tu lista de avisos, pero te llegan por correo en un solo mensaje al volver."),
    )

    def __init__(self, *args, campaign: Campaign, user, absence: Absence | None = None, action: str, **kwargs):
        self.campaign = campaign
        self.user = user
        self.absence = absence
        if absence is None:
            kwargs.setdefault("initial", {"starts_on": absences.campaign_today(campaign), "hold_notifications": True})
        else:
            kwargs.setdefault(
                "initial",
                {
                    "starts_on": absence.starts_on,
                    "ends_on": absence.ends_on,
                    "note": absence.note,
                    "hold_notifications": absence.hold_notifications,
                },
            )
        super().__init__(*args, **kwargs)
        if absence is not None and absence.starts_on <= absences.campaign_today(campaign):
            self.fields["starts_on"].help_text = _("Esta ausencia ya empezó: el día de salida no se puede cambiar.")
        self.helper = FormHelper()
        self.helper.form_id = "ausencia-form"
        self.helper.form_action = action
        self.helper.attrs = {"data-hx-post": action, "data-hx-target": "#ausencia-form", "data-hx-swap": "outerHTML"}
        self.helper.add_input(Submit("submit", _("Guardar") if absence is not None else _("Anunciar la ausencia")))

    def clean_note(self) -> str:
        return " ".join(self.cleaned_data["note"].split())

    def clean(self):
        cleaned = super().clean()
        starts_on, ends_on = cleaned.get("starts_on"), cleaned.get("ends_on")
        if starts_on and ends_on:
            try:
                absences.check_dates(
                    campaign=self.campaign, user=self.user, starts_on=starts_on, ends_on=ends_on, exclude=self.absence
                )
            except ValidationError as exc:
                for error in exc.error_list:
                    # A started absence's first day: said beside that field.
                    self.add_error("starts_on" if error.code == "started" else None, error)
        return cleaned


def consent_choices(membership: Membership) -> list[tuple[str, str]]:
    profile = TakeoverConsent(membership.user.takeover_consent).label
    return [("", _("Lo que diga mi perfil (%(choice)s)") % {"choice": profile}), *TakeoverConsent.choices]


class ConsentForm(forms.Form):
    """What the member allows in this campaign while away ("": their profile's choice)."""

    consent = forms.ChoiceField(
        label=gettext_lazy("Quién puede llevar a tu personaje"),
        required=False,
        widget=forms.RadioSelect,
        error_messages={"invalid_choice": gettext_lazy("Elige una de las opciones.")},
    )

    def __init__(self, *args, membership: Membership, action: str, **kwargs):
        kwargs.setdefault("initial", {"consent": membership.takeover_consent})
        super().__init__(*args, **kwargs)
        self.fields["consent"].choices = consent_choices(membership)
        self.action = action
        # The template writes the form tag: crispy-forms would repeat the
        # helper's attributes (the id, the htmx ones) on the radio group.
        self.helper = FormHelper()
        self.helper.form_tag = False
