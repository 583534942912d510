"""Forms of the scene's contests, reactions and initiative: they only
collect choices; the dice and the results come from ``rules.aventuras``
through the services."""

from __future__ import annotations

from django import forms
from django.utils.translation import gettext_lazy as _

from accounts.limits import LIMIT_MESSAGES, text_field
from campaigns import deadlines
from rolls.forms import client_seed_field
from systems.aventuras.models import ATTRIBUTE_CHOICES, AventurasContest

MAX_MODIFIER = 10
MAX_DIFFICULTY = 20
SIDE_ROWS = 6
ATTRIBUTE_ERRORS = {"invalid_choice": _("Elige uno de los cuatro atributos."), "required": _("Elige un atributo.")}


def _tool_choices(character) -> list[tuple[str, str]]:
    sheet = getattr(character, "aventuras", None)
    if sheet is None:
        return []
    return [(str(t.pk), f"{t.name} (+{t.bonus} {t.get_attribute_display()})") for t in sheet.tools.all()]


class RollFields(forms.Form):
    """What the roller adds to a roll the GM set up: a bonus or penalty
    (A3), a tool (A29), a hero point for two more dice (A22, or two XP, A28)."""

    modifier = forms.IntegerField(
        label=_("Bonificación o penalización (dados)"),
        initial=0,
        min_value=-MAX_MODIFIER,
        max_value=MAX_MODIFIER,
        error_messages=LIMIT_MESSAGES,
    )
    tool = forms.ChoiceField(label=_("Herramienta"), required=False)
    hero_point = forms.BooleanField(label=_("Gastar un punto de Héroe: +2 dados"), required=False)
    with_experience = forms.BooleanField(label=_("Pagarlo con 2 puntos de Experiencia"), required=False)

    def __init__(self, *args, character=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["client_seed"] = client_seed_field()
        self.fields["tool"].choices = [("", _("Ninguna"))] + _tool_choices(character)
        self.fields["tool"].error_messages["invalid_choice"] = _("Esa herramienta no es de este personaje.")
        sheet = getattr(character, "aventuras", None)
        if sheet is None or not sheet.is_hero:
            del self.fields["hero_point"]
            del self.fields["with_experience"]

    def roll_kwargs(self) -> dict:
        data = self.cleaned_data
        return {
            "modifier": data["modifier"] or 0,
            "tool_id": int(data["tool"]) if data.get("tool") else None,
            "hero_point": bool(data.get("hero_point") or data.get("with_experience")),
            "with_experience": bool(data.get("with_experience")),
            "client_seed": data.get("client_seed") or None,
        }


class ContestRollForm(RollFields):
    pass


class ReactForm(RollFields):
    """«Reaccionar»: the attribute the reaction rolls (the GM's call, A1) and the rest."""

    attribute = forms.ChoiceField(label=_("Atributo"), choices=ATTRIBUTE_CHOICES, error_messages=ATTRIBUTE_ERRORS)
    field_order = ["attribute", "modifier", "tool", "hero_point", "with_experience"]


class ContestForm(forms.Form):
    """The GM's set-up: a competition (each side its difficulty, A13) or a
    cooperation (a base difficulty, +1 per extra helper, A19), and up to
    ``SIDE_ROWS`` participants with the attribute each rolls."""

    kind = forms.ChoiceField(
        label=_("Tipo"),
        choices=AventurasContest.Kind.choices,
        error_messages={"invalid_choice": _("Elige competición o cooperación."), "required": _("Elige el tipo.")},
    )
    title = forms.CharField(
        label=_("Qué se disputa o se hace"),
        max_length=200,
        error_messages={**LIMIT_MESSAGES, "required": _("Escribe qué se disputa o qué se hace.")},
    )
    difficulty = forms.IntegerField(
        label=_("Dificultad de la cooperación"),
        help_text=_("Sube +1 por cada ayudante de más (A19)."),
        initial=0,
        min_value=0,
        max_value=MAX_DIFFICULTY,
        required=False,
        error_messages=LIMIT_MESSAGES,
    )

    def __init__(self, *args, characters=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.characters = {str(c.pk): c for c in characters}
        choices = [("", "—")] + [(str(c.pk), c.name) for c in characters]
        for i in range(1, SIDE_ROWS + 1):
            self.fields[f"character_{i}"] = forms.ChoiceField(
                label=_("Participante %(n)d") % {"n": i},
                choices=choices,
                required=False,
                error_messages={"invalid_choice": _("Ese personaje no está en la partida.")},
            )
            self.fields[f"attribute_{i}"] = forms.ChoiceField(
                label=_("Atributo"),
                choices=[("", "—"), *ATTRIBUTE_CHOICES],
                required=False,
                error_messages=ATTRIBUTE_ERRORS,
            )
            self.fields[f"difficulty_{i}"] = forms.IntegerField(
                label=_("Dificultad (competición)"),
                initial=0,
                min_value=0,
                max_value=MAX_DIFFICULTY,
                required=False,
                error_messages=LIMIT_MESSAGES,
            )

    def rows(self):
        return [
            (self[f"character_{i}"], self[f"attribute_{i}"], self[f"difficulty_{i}"]) for i in range(1, SIDE_ROWS + 1)
        ]

    def clean(self):
        data = super().clean()
        sides = []
        for i in range(1, SIDE_ROWS + 1):
            character = data.get(f"character_{i}")
            if not character:
                continue
            attribute = data.get(f"attribute_{i}")
            if not attribute:
                self.add_error(f"attribute_{i}", _("Elige el atributo que tira."))
                continue
            sides.append((self.characters[character], attribute, data.get(f"difficulty_{i}") or 0))
        data["sides"] = sides
        return data


class CancelForm(forms.Form):
    """«Anular»: the GM says why (shown to everyone with who called it off)."""

    reason = text_field(AventurasContest, "cancel_reason", label=_("Por qué se anula"))

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["reason"].error_messages["required"] = _("Explica por qué se anula.")


class InitiativeForm(forms.Form):
    characters = forms.MultipleChoiceField(
        label=_("Personajes en la pelea"),
        widget=forms.CheckboxSelectMultiple,
        error_messages={
            "required": _("Elige al menos un personaje para la iniciativa."),
            "invalid_choice": _("Ese personaje no está en la partida."),
        },
    )

    def __init__(self, *args, characters=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.by_id = {str(c.pk): c for c in characters}
        self.fields["characters"].choices = [(str(c.pk), c.name) for c in characters]

    def chosen(self):
        return [self.by_id[pk] for pk in self.cleaned_data["characters"]]


class ReactionDeadlineForm(forms.Form):
    """The direction gives an open reaction a date to answer by (issue 17):
    in the campaign's time zone, with when to remind the target's player."""

    def __init__(self, *args, campaign, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields.update(deadlines.deadline_form_fields(campaign, required=True))
        self.fields["plazo"].label = _("Plazo para reaccionar")
        self.fields["plazo"].error_messages["required"] = _("Indica el plazo: una fecha y una hora.")
