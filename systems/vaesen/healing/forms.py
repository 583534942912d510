"""Forms of the «Curación» panel: treatment (V28), healing (V29) and
recovery (V30). They only collect choices."""

from __future__ import annotations

from django import forms
from django.utils.translation import gettext_lazy as _

from accounts.limits import HiddenErrorsShown
from rolls.forms import client_seed_field
from systems.vaesen.healing.services import SKILL_KIND

CHOOSE = {"required": _("Elige una opción."), "invalid_choice": _("Esa opción no está en la lista.")}


class _Characters(HiddenErrorsShown, forms.Form):
    client_seed = client_seed_field()

    def __init__(self, *args, healers=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.healers = {str(c.pk): c for c in healers}

    def _choices(self, characters) -> list[tuple[str, str]]:
        return [("", _("— elige —"))] + [(str(c.pk), c.name) for c in characters]


class TreatmentForm(_Characters):
    healer = forms.ChoiceField(label=_("Quien trata"), error_messages=CHOOSE)
    injury = forms.ChoiceField(label=_("Herida crítica sin tratar"), error_messages=CHOOSE)

    def __init__(self, *args, injuries=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.injuries = {str(i.pk): i for i in injuries}
        self.fields["healer"].choices = self._choices(self.healers.values())
        self.fields["injury"].choices = [("", _("— elige —"))] + [
            (
                pk,
                f"{i.sheet.character.name}: {i.name} ({i.get_kind_display()})"
                + (f" — {_('plazo')}: {i.time_limit}" if i.time_limit else ""),
            )
            for pk, i in self.injuries.items()
        ]

    def clean(self):
        cleaned = super().clean()
        cleaned["healer_character"] = self.healers.get(cleaned.get("healer") or "")
        cleaned["injury_row"] = self.injuries.get(cleaned.get("injury") or "")
        return cleaned


class HealingForm(_Characters):
    healer = forms.ChoiceField(label=_("Quien cura"), error_messages=CHOOSE)
    skill = forms.ChoiceField(
        label=_("Habilidad"),
        choices=[(s, s) for s in SKILL_KIND],
        error_messages=CHOOSE,
        help_text=_("Medicina cura estados físicos; Inspiración, mentales."),
    )
    patients = forms.MultipleChoiceField(
        label=_("Pacientes"),
        widget=forms.CheckboxSelectMultiple,
        error_messages={"required": _("Elige al menos un paciente."), "invalid_choice": _("Ese paciente no está.")},
    )

    def __init__(self, *args, patients=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.patients = {str(c.pk): c for c in patients}
        self.fields["healer"].choices = self._choices(self.healers.values())
        self.fields["patients"].choices = [(pk, c.name) for pk, c in self.patients.items()]

    def clean(self):
        cleaned = super().clean()
        cleaned["healer_character"] = self.healers.get(cleaned.get("healer") or "")
        cleaned["patient_characters"] = [self.patients[pk] for pk in cleaned.get("patients") or []]
        return cleaned


class RecoveryForm(_Characters):
    character = forms.ChoiceField(label=_("Personaje"), error_messages=CHOOSE)
    kind = forms.ChoiceField(
        label=_("Recuperación"),
        choices=[("físico", _("Física: Físico + Precisión")), ("mental", _("Mental: Lógica + Empatía"))],
        error_messages=CHOOSE,
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["character"].choices = self._choices(self.healers.values())

    def clean(self):
        cleaned = super().clean()
        cleaned["recovering"] = self.healers.get(cleaned.get("character") or "")
        return cleaned
