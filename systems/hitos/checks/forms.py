"""The forms of a HITOS check: one "añadir tirada" row of the post form and
the GM's roll request."""

from __future__ import annotations

from django import forms
from django.utils.functional import lazy
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from accounts.limits import LIMIT_MESSAGES, HiddenErrorsShown, text_field
from rolls.forms import MODIFIER_REASON_MAX, client_seed_field, modifier_field
from rolls.models import RollEntry
from rules import hitos
from systems.hitos.models import CHARACTERISTIC_LABELS, Skill
from table.models import RollRequest

CHARACTERISTIC_CHOICES = list(CHARACTERISTIC_LABELS.items())
_DIFFICULTY_NAMES = ", ".join(name for name, _value in hitos.DIFFICULTY_SCALE)


def _difficulty_help() -> str:
    """The difficulty field's help, in the reader's language when the form is shown."""
    return gettext("Un número o una palabra de la escala: %(names)s.") % {"names": _DIFFICULTY_NAMES}


class PostRollForm(HiddenErrorsShown, forms.Form):
    """One "añadir tirada" row of the post form. A row with nothing chosen
    (no characteristic, modifier or purpose) is not used."""

    characteristic = forms.ChoiceField(label=_("Característica"), required=False)
    skill = forms.ChoiceField(
        label=_("Habilidad"),
        required=False,
        error_messages={"invalid_choice": _("La ficha no tiene la habilidad «%(value)s».")},
    )
    npc = forms.ChoiceField(label=_("Ficha de PNJ"), required=False)
    free_modifier = modifier_field(
        _("Modificador libre"), help_text=_("Sin característica: para tiradas fuera de personaje o de PNJ sin ficha.")
    )
    # Each extra modifier first, then where it comes from.
    value_1 = modifier_field(_("Modificador"))
    reason_1 = forms.CharField(
        label=_("Motivo del modificador"), required=False, max_length=MODIFIER_REASON_MAX, error_messages=LIMIT_MESSAGES
    )
    value_2 = modifier_field(_("Modificador"))
    reason_2 = forms.CharField(
        label=_("Motivo del modificador"), required=False, max_length=MODIFIER_REASON_MAX, error_messages=LIMIT_MESSAGES
    )
    difficulty = forms.CharField(
        label=_("Dificultad"),
        required=False,
        max_length=40,
        error_messages=LIMIT_MESSAGES,
        initial=str(hitos.DEFAULT_DIFFICULTY),
        help_text=lazy(_difficulty_help, str)(),
    )
    purpose = text_field(RollEntry, "purpose", label=_("Para qué"), required=False)
    client_seed = client_seed_field(marked=True)

    def __init__(self, *args, skill_groups=(), npcs=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["characteristic"].choices = [("", _("— sin característica —")), *CHARACTERISTIC_CHOICES]
        self.fields["skill"].choices = [("", _("— sin habilidad —")), *[g for g in skill_groups if g[1]]]
        if npcs:
            self.fields["npc"].choices = [("", _("— sin ficha —"))] + [(pk, c.name) for pk, c in npcs.items()]
        else:
            del self.fields["npc"]
        self.npcs = npcs or {}

    @property
    def is_open(self) -> bool:
        """Shown unfolded: a row the user filled in (or got wrong)."""
        return self.is_bound and (bool(self.errors) or bool(self.cleaned_data.get("used")))

    def clean_difficulty(self) -> int:
        text = " ".join(self.cleaned_data["difficulty"].split())
        if not text:
            return hitos.DEFAULT_DIFFICULTY
        try:
            value = hitos.difficulty_value(text)
        except ValueError:
            raise forms.ValidationError(
                _("Dificultad no válida: escribe un número o una de: %(names)s.") % {"names": _DIFFICULTY_NAMES}
            ) from None
        if not 0 <= value <= 60:
            raise forms.ValidationError(_("La dificultad va de 0 a 60."))
        return value

    def clean_purpose(self) -> str:
        return " ".join(self.cleaned_data["purpose"].split())

    def clean(self):
        cleaned = super().clean()
        cleaned["npc_character"] = self.npcs.get(cleaned.get("npc") or "")
        cleaned["used"] = bool(
            cleaned.get("characteristic")
            or cleaned.get("free_modifier") is not None
            or cleaned.get("purpose")
            or cleaned.get("skill")
            or cleaned.get("npc_character")
        )
        if not cleaned["used"]:
            return cleaned
        if not cleaned.get("purpose"):
            self.add_error("purpose", _("Indica para qué es la tirada."))
        if cleaned.get("skill") and not cleaned.get("characteristic"):
            self.add_error("characteristic", _("Elige la característica que acompaña a la habilidad."))
        if not cleaned.get("characteristic") and cleaned.get("free_modifier") is None:
            self.add_error("characteristic", _("Elige una característica o escribe un modificador libre."))
        for n in (1, 2):
            if cleaned.get(f"value_{n}") and not (cleaned.get(f"reason_{n}") or "").strip():
                self.add_error(f"reason_{n}", _("Explica de dónde sale el modificador."))
        return cleaned

    def extra(self) -> list[tuple[str, int]]:
        return [
            (" ".join(self.cleaned_data[f"reason_{n}"].split()), self.cleaned_data[f"value_{n}"])
            for n in (1, 2)
            if self.cleaned_data.get(f"value_{n}")
        ]


class RollRequestForm(forms.Form):
    """The GM asks a character of the campaign for a roll."""

    character = forms.ChoiceField(label=_("Personaje"))
    characteristic = forms.ChoiceField(label=_("Característica"), choices=CHARACTERISTIC_CHOICES)
    skill = text_field(Skill, "name", label=_("Habilidad"), required=False)
    modifier = modifier_field(_("Modificador"), initial=0)
    difficulty = PostRollForm.base_fields["difficulty"]
    difficulty_hidden = forms.BooleanField(
        label=_("Dificultad oculta"),
        required=False,
        help_text=_("El jugador solo verá si tiene éxito o falla."),
    )
    purpose = text_field(RollRequest, "purpose", label=_("Para qué"))

    clean_difficulty = PostRollForm.clean_difficulty
    clean_purpose = PostRollForm.clean_purpose

    def __init__(self, *args, characters=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.characters = {str(c.pk): c for c in characters}
        self.fields["character"].choices = [(pk, c.name) for pk, c in self.characters.items()]

    def clean(self):
        cleaned = super().clean()
        cleaned["character"] = self.characters.get(cleaned.get("character") or "")
        cleaned["skill"] = " ".join((cleaned.get("skill") or "").split())
        if cleaned.get("modifier") is None:
            cleaned["modifier"] = 0
        return cleaned
