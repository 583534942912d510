"""The forms of a Vaesen test: one "añadir tirada" row of the post form and
pushing a failed roll. They only collect choices: the pool, the chance and
the reading are ``rules.vaesen``'s (through ``systems.vaesen.rolls.services``)."""

from __future__ import annotations

from django import forms
from django.utils.translation import gettext_lazy as _

from accounts.limits import LIMIT_MESSAGES, HiddenErrorsShown, text_field
from rolls.forms import client_seed_field, modifier_field
from rolls.models import RollEntry
from rules import vaesen
from systems.vaesen.rolls.services import ATTRIBUTE_LABELS, MAX_FREE_POOL, MAX_NEEDED

ATTRIBUTE_CHOICES = [(attribute, ATTRIBUTE_LABELS[attribute]) for attribute in vaesen.ATTRIBUTES]
SKILL_GROUPS = [
    (ATTRIBUTE_LABELS[attribute], [(skill, skill) for skill in vaesen.SKILLS[attribute]])
    for attribute in vaesen.ATTRIBUTES
]


class PoolRollForm(HiddenErrorsShown, forms.Form):
    """One "añadir tirada" row of the post form: attribute + skill (or, for
    the GM, a free pool), help, equipment, a modifier and the successes
    needed. A row with nothing chosen is not used."""

    attribute = forms.ChoiceField(label=_("Atributo"), required=False)
    skill = forms.ChoiceField(
        label=_("Habilidad"),
        required=False,
        help_text=_("Sin atributo, la habilidad ya dice con cuál se tira."),
        error_messages={"invalid_choice": _("No existe la habilidad «%(value)s».")},
    )
    npc = forms.ChoiceField(label=_("Ficha de PNJ"), required=False)
    free_pool = forms.IntegerField(
        label=_("Reserva libre (dados)"),
        required=False,
        min_value=1,
        max_value=MAX_FREE_POOL,
        error_messages=LIMIT_MESSAGES,
        help_text=_("Sin atributo: tantos d6 como digas."),
    )
    helpers = forms.IntegerField(
        label=_("Ayudantes"),
        required=False,
        min_value=0,
        max_value=vaesen.MAX_HELP,
        error_messages=LIMIT_MESSAGES,
        help_text=_("+1 dado por cada persona que ayuda, hasta +3."),
    )
    item = forms.ChoiceField(
        label=_("Equipo"),
        required=False,
        error_messages={"invalid_choice": _("Ese objeto no está en la ficha.")},
    )
    modifier = modifier_field(_("Modificador (dados)"), help_text=_("+1 es un dado más; −1, uno menos."))
    needed = forms.IntegerField(
        label=_("Éxitos necesarios"),
        required=False,
        min_value=1,
        max_value=MAX_NEEDED,
        initial=1,
        error_messages=LIMIT_MESSAGES,
    )
    purpose = text_field(RollEntry, "purpose", label=_("Para qué"), required=False)
    client_seed = client_seed_field(marked=True)

    def __init__(self, *args, item_groups=(), npcs=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["attribute"].choices = [("", _("— sin atributo —")), *ATTRIBUTE_CHOICES]
        self.fields["skill"].choices = [("", _("— sin habilidad —")), *SKILL_GROUPS]
        self.fields["item"].choices = [("", _("— sin equipo —")), *[g for g in item_groups if g[1]]]
        if not any(group[1] for group in item_groups):
            del self.fields["item"]
        if npcs is None:
            # Only the GM rolls free pools and NPCs.
            del self.fields["npc"]
            del self.fields["free_pool"]
        else:
            self.fields["npc"].choices = [("", _("— sin ficha —"))] + [(pk, c.name) for pk, c in npcs.items()]
            if not npcs:
                del self.fields["npc"]
        self.npcs = npcs or {}

    @property
    def is_open(self) -> bool:
        """Shown unfolded: a row the user filled in (or got wrong)."""
        return self.is_bound and (bool(self.errors) or bool(self.cleaned_data.get("used")))

    def clean_purpose(self) -> str:
        return " ".join(self.cleaned_data["purpose"].split())

    def clean(self):
        cleaned = super().clean()
        cleaned["npc_character"] = self.npcs.get(cleaned.get("npc") or "")
        item = cleaned.get("item") or ""
        cleaned["item_id"] = int(item) if item.isdigit() else None
        cleaned["used"] = bool(
            cleaned.get("attribute")
            or cleaned.get("skill")
            or cleaned.get("free_pool") is not None
            or cleaned.get("purpose")
            or cleaned.get("npc_character")
        )
        if not cleaned["used"]:
            return cleaned
        if not cleaned.get("purpose"):
            self.add_error("purpose", _("Indica para qué es la tirada."))
        if cleaned.get("free_pool") is not None and (cleaned.get("attribute") or cleaned.get("skill")):
            self.add_error("free_pool", _("Elige un atributo o una reserva libre, no los dos."))
        elif not (cleaned.get("attribute") or cleaned.get("skill")) and cleaned.get("free_pool") is None:
            if "free_pool" in self.fields:
                message = _("Elige un atributo, una habilidad o una reserva libre de dados.")
            else:
                message = _("Elige un atributo o una habilidad.")
            self.add_error("attribute", message)
        for name, default in (("helpers", 0), ("modifier", 0), ("needed", 1)):
            if cleaned.get(name) is None and name not in self.errors:
                cleaned[name] = default
        return cleaned


class PushForm(forms.Form):
    """Push a failed test: which free condition it costs (V7, V8); with none
    free, pushing makes the character Broken (V10) and there is no choice."""

    condition = forms.ChoiceField(
        label=_("Estado que sufres"),
        widget=forms.RadioSelect,
        error_messages={
            "required": _("Elige qué estado sufres al forzar la tirada."),
            "invalid_choice": _("Ese estado no está libre: elige otro."),
        },
    )
    client_seed = client_seed_field(marked=True)

    def __init__(self, *args, free: list[str], **kwargs):
        super().__init__(*args, **kwargs)
        if free:
            self.fields["condition"].choices = [(name, name) for name in free]
            self.initial.setdefault("condition", free[0])
        else:
            del self.fields["condition"]

    def clean(self):
        cleaned = super().clean()
        cleaned.setdefault("condition", "")
        return cleaned


class InjuryForm(forms.Form):
    """Roll a critical injury (V13): of a push that made the character
    Broken, or the one the sheet's «Sufrir» owes (V10; its kind is the
    button's). Only the browser's seed."""

    client_seed = client_seed_field(marked=True)
