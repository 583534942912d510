"""The forms of an Aventuras roll: one "añadir tirada" row of the post form,
the GM's roll request, and the chain's steps under a card (convert a 6,
spend it on an effect, re-roll with a hero point, «¡Ya está!»). They only
collect choices: the dice, the chance and the reading are
``rules.aventuras``'s (through ``systems.aventuras.rolls.services``)."""

from __future__ import annotations

from django import forms
from django.utils.translation import gettext_lazy as _

from accounts.limits import LIMIT_MESSAGES, HiddenErrorsShown, text_field
from rolls import verify_roll
from rolls.forms import client_seed_field, modifier_field
from rolls.models import RollEntry
from rules import aventuras
from systems.aventuras.models import ACTION_KIND_LABELS, ATTRIBUTE_CHOICES
from systems.aventuras.rolls.services import MAX_DIFFICULTY, MAX_EFFECTS, difficulty_word
from table.models import RollRequest

ACTION_KIND_CHOICES = [("", _("— cualquiera —"))] + [(k, ACTION_KIND_LABELS[k]) for k in aventuras.ACTION_KINDS]


def difficulty_choices() -> list[tuple[int, str]]:
    """A8, A10 — 0 to the top, with the only words S004 gives (0 and 2)."""
    choices = []
    for n in range(MAX_DIFFICULTY + 1):
        word = difficulty_word(n)
        choices.append((n, f"{n} — {word}" if word else str(n)))
    return choices


def _difficulty_field(**kwargs) -> forms.TypedChoiceField:
    return forms.TypedChoiceField(
        label=_("Dificultad"),
        choices=difficulty_choices,
        coerce=int,
        initial=0,
        help_text=_("La dice la dirección: éxitos que se anulan; hace falta sacar más éxitos que la dificultad."),
        error_messages={"invalid_choice": _("La dificultad va de 0 a %(top)d.") % {"top": MAX_DIFFICULTY}},
        **kwargs,
    )


def _effects_field(label, help_text) -> forms.IntegerField:
    return forms.IntegerField(
        label=label,
        required=False,
        min_value=0,
        max_value=MAX_EFFECTS,
        error_messages=LIMIT_MESSAGES,
        help_text=help_text,
    )


class AventurasRollForm(HiddenErrorsShown, forms.Form):
    """One "añadir tirada" row of the post form: the attribute and the
    difficulty the GM names (A1, A8), the kind of action (the states that
    touch it, A3), a tool (A29), a modifier (A3), the effects that ease or
    harden it (A7), a hero point for +2 dice (A22, paid with 2 XP: A28),
    the action's targets (A18) or the action it reacts to. A row with
    nothing chosen is not used."""

    attribute = forms.ChoiceField(label=_("Atributo"), required=False)
    npc = forms.ChoiceField(label=_("Ficha de PNJ"), required=False)
    difficulty = _difficulty_field(required=False)
    action_kind = forms.ChoiceField(
        label=_("Tipo de acción"),
        choices=ACTION_KIND_CHOICES,
        required=False,
        help_text=_("Los estados de ese tipo cambian los dados o el umbral."),
    )
    tool = forms.ChoiceField(
        label=_("Herramienta"),
        required=False,
        error_messages={"invalid_choice": _("Esa herramienta no está en la ficha.")},
    )
    modifier = modifier_field(
        _("Bonificación o penalización (dados)"), help_text=_("+1 es un dado más; −1, uno menos.")
    )
    easier = _effects_field(_("Efectos que facilitan"), _("Con alguno, basta un 3 para tener éxito."))
    harder = _effects_field(_("Efectos que dificultan"), _("Con alguno, hace falta un 5."))
    hero_point = forms.BooleanField(
        label=_("Gastar un punto de Héroe: +2 dados"), required=False, help_text=_("Antes de tirar.")
    )
    with_experience = forms.BooleanField(
        label=_("Pagar el punto con 2 PX"), required=False, help_text=_("Un punto de Héroe instantáneo.")
    )
    targets = forms.MultipleChoiceField(
        label=_("Objetivos"),
        required=False,
        help_text=_("A quién afecta la acción: cada uno puede reaccionar."),
        error_messages={"invalid_choice": _("Ese personaje no está en la partida.")},
    )
    reacts_to = forms.ChoiceField(
        label=_("Reacciona a"),
        required=False,
        error_messages={"invalid_choice": _("Esa acción ya no espera tu reacción.")},
    )
    purpose = text_field(RollEntry, "purpose", label=_("Para qué"), required=False)
    client_seed = client_seed_field(marked=True)

    def __init__(self, *args, tool_groups=(), npcs=None, targets=(), open_reactions=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["attribute"].choices = [("", _("— sin tirada —")), *ATTRIBUTE_CHOICES]
        self.fields["tool"].choices = [("", _("— sin herramienta —")), *[g for g in tool_groups if g[1]]]
        if not any(group[1] for group in tool_groups):
            del self.fields["tool"]
        if npcs is None:
            del self.fields["npc"]
        else:
            self.fields["npc"].choices = [("", _("— sin ficha —"))] + [(str(pk), c.name) for pk, c in npcs.items()]
            if not npcs:
                del self.fields["npc"]
        self.npcs = {str(pk): c for pk, c in (npcs or {}).items()}
        self.target_characters = {str(c.pk): c for c in targets}
        if self.target_characters:
            self.fields["targets"].choices = [(pk, c.name) for pk, c in self.target_characters.items()]
        else:
            del self.fields["targets"]
        self.open_reactions = {str(r.pk): r for r in open_reactions}
        if self.open_reactions:
            self.fields["reacts_to"].choices = [("", _("— ninguna —"))] + [
                (pk, f"{r.target.name}: {r.action.first.purpose}") for pk, r in self.open_reactions.items()
            ]
        else:
            del self.fields["reacts_to"]

    @property
    def is_open(self) -> bool:
        """Shown unfolded: a row the user filled in (or got wrong)."""
        return self.is_bound and (bool(self.errors) or bool(self.cleaned_data.get("used")))

    def clean_purpose(self) -> str:
        return " ".join(self.cleaned_data["purpose"].split())

    def clean(self):
        cleaned = super().clean()
        cleaned["npc_character"] = self.npcs.get(cleaned.get("npc") or "")
        tool = cleaned.get("tool") or ""
        cleaned["tool_id"] = int(tool) if tool.isdigit() else None
        cleaned["target_characters"] = [
            self.target_characters[pk] for pk in cleaned.get("targets") or [] if pk in self.target_characters
        ]
        cleaned["reaction"] = self.open_reactions.get(cleaned.get("reacts_to") or "")
        cleaned["used"] = bool(cleaned.get("attribute") or cleaned.get("purpose") or cleaned.get("npc_character"))
        if not cleaned["used"]:
            return cleaned
        if not cleaned.get("purpose"):
            self.add_error("purpose", _("Indica para qué es la tirada."))
        if not cleaned.get("attribute") and "attribute" not in self.errors:
            self.add_error("attribute", _("Elige el atributo que pide la dirección."))
        if cleaned.get("with_experience") and not cleaned.get("hero_point"):
            self.add_error("with_experience", _("Pagar con 2 PX es para el punto de Héroe: marca también ese."))
        if cleaned["reaction"] is not None and cleaned["target_characters"]:
            self.add_error("targets", _("Una reacción no tiene objetivos propios."))
        for name in ("difficulty", "modifier", "easier", "harder"):
            if cleaned.get(name) in (None, "") and name not in self.errors:
                cleaned[name] = 0
        return cleaned


class RollRequestForm(forms.Form):
    """The GM asks a character of the campaign for a roll: the attribute and
    the difficulty (A1, A8), maybe hidden, and what for."""

    character = forms.ChoiceField(label=_("Personaje"))
    attribute = forms.ChoiceField(label=_("Atributo"), choices=ATTRIBUTE_CHOICES)
    difficulty = _difficulty_field()
    difficulty_hidden = forms.BooleanField(
        label=_("Dificultad oculta"),
        required=False,
        help_text=_("El jugador solo verá si tiene éxito o falla."),
    )
    purpose = text_field(RollRequest, "purpose", label=_("Para qué"))

    def __init__(self, *args, characters=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.characters = {str(c.pk): c for c in characters}
        self.fields["character"].choices = [(pk, c.name) for pk, c in self.characters.items()]

    def clean_purpose(self) -> str:
        return " ".join(self.cleaned_data["purpose"].split())

    def clean(self):
        cleaned = super().clean()
        cleaned["character"] = self.characters.get(cleaned.get("character") or "")
        return cleaned


POSITION_MESSAGES = {
    **LIMIT_MESSAGES,
    "required": _("Elige un dado."),
    "invalid": _("Elige un dado de la tirada."),
}


class ChachiForm(forms.Form):
    """Convert a 6 into a 5 and add a die (A5), or spend it on a narrative
    effect (A12): which die (1 is the first)."""

    position = forms.IntegerField(
        label=_("Dado"), min_value=1, max_value=verify_roll.MAX_DICE, error_messages=POSITION_MESSAGES
    )
    client_seed = client_seed_field(marked=True)


class RerollForm(forms.Form):
    """A22 — re-roll the dice chosen with a hero point (or 2 XP, A28)."""

    positions = forms.TypedMultipleChoiceField(
        label=_("Dados que repetir"),
        coerce=int,
        widget=forms.CheckboxSelectMultiple,
        error_messages={
            "required": _("Elige al menos un dado que repetir."),
            "invalid_choice": _("Ese dado no está en la tirada."),
        },
    )
    with_experience = forms.BooleanField(label=_("Pagar con 2 PX"), required=False)
    client_seed = client_seed_field(marked=True)

    def __init__(self, *args, values=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["positions"].choices = [(i + 1, f"{i + 1}: {v}") for i, v in enumerate(values)]
