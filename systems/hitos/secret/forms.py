"""The GM's secret roll form (``systems.hitos.secret.services``)."""

from __future__ import annotations

from crispy_forms.helper import FormHelper
from crispy_forms.layout import Submit
from django import forms
from django.utils.translation import gettext_lazy as _

from accounts.limits import LIMIT_MESSAGES, HiddenErrorsShown, max_length_of, text_field
from rolls.forms import client_seed_field, modifier_field
from rolls.models import RollEntry
from rules.notation import MAX_LENGTH
from systems.hitos.models import CHARACTERISTIC_LABELS, Skill

# The highest difficulty of the HITOS scale is 30 (H5); a GM may go a bit beyond.
DIFFICULTY_LIMIT = 50


class SecretRollForm(HiddenErrorsShown, forms.Form):
    """A HITOS check (a character's characteristic and skill, or a free
    modifier) or a roll in dice notation, seen only by the GM until revealed."""

    character = forms.ChoiceField(label=_("Personaje"), required=False)
    characteristic = forms.ChoiceField(label=_("Característica"), required=False)
    skill = text_field(Skill, "name", label=_("Habilidad"), required=False)
    free_modifier = modifier_field(
        _("Modificador libre"), help_text=_("Sin característica: una tirada de HITOS con este modificador.")
    )
    difficulty = forms.IntegerField(
        label=_("Dificultad"), required=False, min_value=0, max_value=DIFFICULTY_LIMIT, error_messages=LIMIT_MESSAGES
    )
    notation = forms.CharField(
        label=_("O bien, dados libres"),
        required=False,
        max_length=MAX_LENGTH,
        error_messages=LIMIT_MESSAGES,
        help_text=_("Por ejemplo 2d6+1 o 3d10!: entonces no se usan la característica ni el modificador."),
    )
    purpose = text_field(RollEntry, "purpose", label=_("Para qué"))
    client_seed = client_seed_field()
    seen = forms.CharField(
        required=False,
        widget=forms.HiddenInput,
        max_length=max_length_of(RollEntry, "entry_hash"),
        error_messages=LIMIT_MESSAGES,
    )

    def __init__(self, *args, characters=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.characters = {str(c.pk): c for c in characters}
        self.fields["character"].choices = [("", _("— ninguno —"))] + [
            (pk, c.name) for pk, c in self.characters.items()
        ]
        self.fields["characteristic"].choices = [("", _("— sin característica —")), *CHARACTERISTIC_LABELS.items()]
        self.helper = FormHelper()
        self.helper.add_input(Submit("submit", _("Tirar en secreto")))

    def clean(self):
        cleaned = super().clean()
        cleaned["character"] = self.characters.get(cleaned.get("character") or "")
        if cleaned.get("notation"):
            return cleaned
        if cleaned.get("characteristic"):
            if cleaned["character"] is None:
                self.add_error("character", _("Elige de qué personaje es la característica."))
        elif cleaned.get("free_modifier") is None:
            self.add_error(
                "characteristic", _("Elige una característica, escribe un modificador libre o unos dados libres.")
            )
        return cleaned
