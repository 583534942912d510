"""Forms of the fear and opposed-roll pages: the GM's start forms and the
players' answers. They only collect choices; the pools and the chances come
from ``rules.vaesen`` through the services."""

from __future__ import annotations

from django import forms
from django.utils.translation import gettext_lazy as _

from accounts.limits import LIMIT_MESSAGES
from rolls.forms import client_seed_field
from systems.vaesen.fear.services import FEAR_ATTRIBUTES, MAX_FEAR, REACTIONS
from systems.vaesen.rolls.forms import ATTRIBUTE_CHOICES, SKILL_GROUPS
from systems.vaesen.rolls.services import ATTRIBUTE_LABELS, MAX_FREE_POOL

TEXT_MAX = 150


class FearStartForm(forms.Form):
    """A creature (its Fear value) or a Fear value and its cause, and the
    player characters present."""

    creature = forms.ChoiceField(label=_("Criatura"), required=False)
    fear = forms.IntegerField(
        label=_("Valor de Miedo"),
        required=False,
        min_value=1,
        max_value=MAX_FEAR,
        error_messages=LIMIT_MESSAGES,
        help_text=_("Sin criatura: los éxitos que hacen falta."),
    )
    against = forms.CharField(
        label=_("Qué provoca el miedo"), required=False, max_length=TEXT_MAX, error_messages=LIMIT_MESSAGES
    )
    characters = forms.MultipleChoiceField(
        label=_("Personajes presentes"),
        widget=forms.CheckboxSelectMultiple,
        error_messages={
            "required": _("Elige al menos un personaje presente."),
            "invalid_choice": _("Ese personaje no está en la partida."),
        },
    )

    def __init__(self, *args, creatures=(), characters=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.creatures = {str(c.pk): c for c in creatures}
        self.pcs = {str(c.pk): c for c in characters}
        self.fields["creature"].choices = [("", _("— ninguna: valor a mano —"))] + [
            (pk, f"{c.name} (Miedo {c.vaesen.fear})") for pk, c in self.creatures.items()
        ]
        self.fields["characters"].choices = [(pk, c.name) for pk, c in self.pcs.items()]

    def clean(self):
        cleaned = super().clean()
        cleaned["creature_character"] = self.creatures.get(cleaned.get("creature") or "")
        cleaned["chosen"] = [self.pcs[pk] for pk in cleaned.get("characters") or []]
        if cleaned["creature_character"] is None and cleaned.get("fear") is None and "fear" not in self.errors:
            self.add_error("fear", _("Elige una criatura o indica el valor de Miedo."))
        if cleaned["creature_character"] is None and not cleaned.get("against") and "against" not in self.errors:
            self.add_error("against", _("Indica qué provoca el miedo."))
        return cleaned


class FearRollForm(forms.Form):
    attribute = forms.ChoiceField(
        label=_("Atributo"),
        choices=[(a, ATTRIBUTE_LABELS[a]) for a in FEAR_ATTRIBUTES],
        error_messages={
            "required": _("Elige Lógica o Empatía."),
            "invalid_choice": _("La prueba de Miedo se tira con Lógica o con Empatía."),
        },
    )
    client_seed = client_seed_field()


class TerrorForm(forms.Form):
    reaction = forms.ChoiceField(
        label=_("Reacción"),
        widget=forms.RadioSelect,
        choices=list(REACTIONS.items()),
        error_messages={
            "required": _("Elige una reacción: Huida, Parálisis, Desmayo o Agresión."),
            "invalid_choice": _("Elige una reacción: Huida, Parálisis, Desmayo o Agresión."),
        },
    )
    client_seed = client_seed_field()


class SeedForm(forms.Form):
    client_seed = client_seed_field()


class OpposedStartForm(forms.Form):
    """Two sides: a character each, with attribute + skill or (NPCs) a pool."""

    purpose = forms.CharField(label=_("Qué se disputan"), max_length=TEXT_MAX, error_messages=LIMIT_MESSAGES)

    def __init__(self, *args, characters=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.characters = {str(c.pk): c for c in characters}
        choices = [("", _("— elige —"))] + [(pk, c.name) for pk, c in self.characters.items()]
        for n, label in ((1, _("Primer bando")), (2, _("Segundo bando"))):
            self.fields[f"character_{n}"] = forms.ChoiceField(
                label=label,
                choices=choices,
                error_messages={
                    "required": _("Elige un personaje para cada bando."),
                    "invalid_choice": _("Ese personaje no está en la partida."),
                },
            )
            self.fields[f"attribute_{n}"] = forms.ChoiceField(
                label=_("Atributo"), required=False, choices=[("", _("— sin atributo —")), *ATTRIBUTE_CHOICES]
            )
            self.fields[f"skill_{n}"] = forms.ChoiceField(
                label=_("Habilidad"),
                required=False,
                choices=[("", _("— sin habilidad —")), *SKILL_GROUPS],
                error_messages={"invalid_choice": _("No existe la habilidad «%(value)s».")},
            )
            self.fields[f"pool_{n}"] = forms.IntegerField(
                label=_("Reserva libre (solo PNJ)"),
                required=False,
                min_value=1,
                max_value=MAX_FREE_POOL,
                error_messages=LIMIT_MESSAGES,
            )

    def clean(self):
        cleaned = super().clean()
        sides = []
        for n in (1, 2):
            character = self.characters.get(cleaned.get(f"character_{n}") or "")
            attribute, skill, pool = (cleaned.get(f"attribute_{n}") or ""), (cleaned.get(f"skill_{n}") or ""), None
            pool = cleaned.get(f"pool_{n}")
            if character is not None and not (attribute or skill) and pool is None:
                self.add_error(f"attribute_{n}", _("Elige un atributo, una habilidad o (un PNJ) una reserva libre."))
            sides.append((character, attribute, skill, pool))
        cleaned["sides"] = sides
        return cleaned
