"""Forms of the horror and opposed-roll pages (the GM's start forms and the
"Tirar Entereza" button)."""

from __future__ import annotations

from crispy_forms.helper import FormHelper
from django import forms
from django.utils.translation import gettext_lazy as _

from accounts.limits import LIMIT_MESSAGES, max_length_of, text_field
from rolls.forms import MODIFIER_REASON_MAX, client_seed_field, modifier_field
from rolls.models import RollEntry
from sheets.models import Character
from systems.hitos.horror.services import level_choices
from systems.hitos.models import CHARACTERISTIC_LABELS, HorrorExposure, HorrorTest, OpposedRoll
from systems.hitos.opposed.services import OpposedSide

# What the GM types becomes part of each roll's purpose, which holds
# RollEntry.purpose's max_length: the text leaves room for the longest
# character name and the words around it, in any language. Each exposure
# rolls «Prueba de horror de <name> (<level>): <description>»; each side of
# an opposed roll «<purpose> — <name> (desempate <n>)».
_PURPOSE_ROOM = max_length_of(RollEntry, "purpose") - max_length_of(Character, "name")
HORROR_DESCRIPTION_MAX = min(_PURPOSE_ROOM - 40, max_length_of(HorrorTest, "description"))
OPPOSED_PURPOSE_MAX = min(_PURPOSE_ROOM - 20, max_length_of(OpposedRoll, "purpose"))

SHIFT_CHOICES = [
    ("0", _("Sin cambio")),
    ("-1", _("−1: un aspecto lo alivia")),
    ("1", _("+1: un aspecto lo agrava")),
]


class HorrorStartForm(forms.Form):
    """The level, what causes it, and for each candidate character: exposed
    or not, the shift of an aspect (H81) and which aspect."""

    level = forms.ChoiceField(label=_("Nivel de horror"))
    description = forms.CharField(
        label=_("Qué lo provoca"), max_length=HORROR_DESCRIPTION_MAX, error_messages=LIMIT_MESSAGES
    )

    def __init__(self, *args, characters=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["level"].choices = level_choices()
        self.characters = list(characters)
        self.rows = []
        for character in self.characters:
            exposed = forms.BooleanField(label=character.name, required=False)
            shift = forms.ChoiceField(
                label=_("Nivel para %(name)s") % {"name": character.name}, choices=SHIFT_CHOICES, required=False
            )
            reason = text_field(
                HorrorExposure,
                "shift_reason",
                label=_("Aspecto de %(name)s") % {"name": character.name},
                required=False,
            )
            self.fields[f"expuesto_{character.pk}"] = exposed
            self.fields[f"nivel_{character.pk}"] = shift
            self.fields[f"aspecto_{character.pk}"] = reason
            self.initial.setdefault(f"nivel_{character.pk}", "0")
        self.helper = FormHelper()
        self.helper.form_tag = False
        self.helper.disable_csrf = True

    def character_rows(self):
        """(character, exposed field, shift field, aspect field) for the template."""
        return [(c, self[f"expuesto_{c.pk}"], self[f"nivel_{c.pk}"], self[f"aspecto_{c.pk}"]) for c in self.characters]

    def clean_description(self) -> str:
        text = " ".join(self.cleaned_data["description"].split())
        if not text:
            raise forms.ValidationError(_("Describe qué provoca el horror."))
        return text

    def clean(self):
        data = super().clean()
        exposures = []
        for character in self.characters:
            if not data.get(f"expuesto_{character.pk}"):
                continue
            shift = int(data.get(f"nivel_{character.pk}") or 0)
            reason = " ".join((data.get(f"aspecto_{character.pk}") or "").split())
            if shift and not reason:
                self.add_error(
                    f"aspecto_{character.pk}",
                    _("Indica el aspecto que cambia el nivel de %(name)s.") % {"name": character.name},
                )
            exposures.append((character, shift, reason))
        if not exposures:
            raise forms.ValidationError(_("Elige al menos un personaje expuesto."))
        data["exposures"] = exposures
        return data


class ExposureRollForm(forms.Form):
    client_seed = client_seed_field()


def _characteristic_choices():
    return list(CHARACTERISTIC_LABELS.items())


class OpposedStartForm(forms.Form):
    """What the two characters dispute, whether a tie stands, and each side's
    characteristic, skill and an extra modifier with its reason."""

    purpose = forms.CharField(label=_("Qué se disputan"), max_length=OPPOSED_PURPOSE_MAX, error_messages=LIMIT_MESSAGES)
    tie_allowed = forms.BooleanField(
        label=_("La acción admite empate"),
        required=False,
        help_text=_("Si no lo admite, un empate se resuelve con nuevas tiradas de ambos (H9)."),
    )
    client_seed = client_seed_field()

    SIDES = (("primero", _("Primer personaje")), ("segundo", _("Segundo personaje")))

    def __init__(self, *args, characters=(), skills=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.characters = {str(c.pk): c for c in characters}
        character_choices = [("", "—")] + [(str(c.pk), c.name) for c in characters]
        skill_choices = [("", _("Sin habilidad"))] + [(name, name) for name in skills]
        for prefix, label in self.SIDES:
            self.fields[f"{prefix}_personaje"] = forms.ChoiceField(label=label, choices=character_choices)
            self.fields[f"{prefix}_caracteristica"] = forms.ChoiceField(
                label=_("Característica"), choices=_characteristic_choices()
            )
            self.fields[f"{prefix}_habilidad"] = forms.ChoiceField(
                label=_("Habilidad"), choices=skill_choices, required=False
            )
            self.fields[f"{prefix}_modificador"] = modifier_field(_("Modificador"), initial=0)
            self.fields[f"{prefix}_motivo"] = forms.CharField(
                label=_("Motivo del modificador"),
                max_length=MODIFIER_REASON_MAX,
                required=False,
                error_messages=LIMIT_MESSAGES,
            )
        self.helper = FormHelper()
        self.helper.form_tag = False
        self.helper.disable_csrf = True

    def side_fields(self):
        """(legend, [bound fields]) per side, for the template."""
        names = ("personaje", "caracteristica", "habilidad", "modificador", "motivo")
        return [(label, [self[f"{prefix}_{name}"] for name in names]) for prefix, label in self.SIDES]

    def clean_purpose(self) -> str:
        text = " ".join(self.cleaned_data["purpose"].split())
        if not text:
            raise forms.ValidationError(_("Indica qué se disputan."))
        return text

    def clean(self):
        data = super().clean()
        sides = []
        for prefix, _label in self.SIDES:
            character = self.characters.get(data.get(f"{prefix}_personaje") or "")
            if character is None:
                continue
            modifier = data.get(f"{prefix}_modificador") or 0
            reason = (data.get(f"{prefix}_motivo") or "").strip()
            extra = ((reason or str(_("Modificador")), modifier),) if modifier else ()
            sides.append(
                OpposedSide(
                    character,
                    data.get(f"{prefix}_caracteristica") or "",
                    data.get(f"{prefix}_habilidad") or "",
                    extra,
                )
            )
        if len(sides) == 2 and sides[0].character.pk == sides[1].character.pk:
            raise forms.ValidationError(_("Una tirada enfrentada necesita dos personajes distintos."))
        data["sides"] = sides
        return data
