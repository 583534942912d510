"""The forms of the Vaesen combat page (``systems.vaesen.combat.views``)."""

from __future__ import annotations

from django import forms
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from accounts.limits import ModelIdsField
from campaigns import deadlines
from campaigns.models import Campaign
from rolls.forms import client_seed_field
from systems.vaesen.combat import services
from systems.vaesen.models import VaesenAction, VaesenCombat, VaesenCombatant

UNARMED = "sin_armas"


def _name(combatant: VaesenCombatant) -> str:
    return combatant.character.name


class CombatStartForm(forms.Form):
    characters = ModelIdsField(
        label=gettext_lazy("Participantes"),
        queryset=None,
        widget=forms.CheckboxSelectMultiple,
        error_messages={"required": gettext_lazy("Elige al menos un participante.")},
    )

    def __init__(self, *args, campaign: Campaign, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["characters"].queryset = services.combat_characters(campaign)


class CombatantAddForm(forms.Form):
    character = forms.ModelChoiceField(
        label=gettext_lazy("Añadir participante"),
        queryset=None,
        empty_label=gettext_lazy("— elige un personaje —"),
        error_messages={
            "required": gettext_lazy("Elige a quién añadir."),
            "invalid_choice": gettext_lazy("Ese personaje no puede unirse a este combate."),
        },
    )

    def __init__(self, *args, campaign: Campaign, combat: VaesenCombat, combatants: list[VaesenCombatant], **kwargs):
        super().__init__(*args, **kwargs)
        taking_part = [c.character_id for c in combatants]
        self.fields["character"].queryset = services.combat_characters(campaign).exclude(pk__in=taking_part)


class _CombatantsForm(forms.Form):
    """A form whose choices are the combat's participants (by id)."""

    def __init__(self, *args, combatants: list[VaesenCombatant], **kwargs):
        super().__init__(*args, **kwargs)
        self.combatants = {c.pk: c for c in combatants}

    def _pick(self, name: str) -> VaesenCombatant | None:
        value = self.cleaned_data.get(name)
        return self.combatants.get(value) if value is not None else None


class AmbushForm(_CombatantsForm):
    """V25 — who rolls Sigilo for the ambushers, whose Vigilancia opposes it, and who ambush."""

    roller = forms.TypedChoiceField(label=gettext_lazy("Tira Sigilo"), coerce=int)
    watcher = forms.TypedChoiceField(label=gettext_lazy("Vigila (Vigilancia)"), coerce=int)
    ambushers = forms.TypedMultipleChoiceField(
        label=gettext_lazy("Emboscan"), coerce=int, required=False, widget=forms.CheckboxSelectMultiple
    )
    # Both rolls of the ambush: the browser's seed and one derived from it.
    client_seed = client_seed_field(marked=True)

    def __init__(self, *args, combatants: list[VaesenCombatant], **kwargs):
        super().__init__(*args, combatants=combatants, **kwargs)
        choices = [(c.pk, _name(c)) for c in combatants]
        for name in ("roller", "watcher", "ambushers"):
            self.fields[name].choices = choices

    def clean(self):
        data = super().clean()
        data["roller"] = self._pick("roller")
        data["watcher"] = self._pick("watcher")
        data["ambushers"] = [self.combatants[pk] for pk in data.get("ambushers") or [] if pk in self.combatants]
        return data


class InitiativeForm(forms.Form):
    """V17 — the GM rolls everyone's initiative: only the browser's seed
    (the first roll's; each further one, ties too, derived from it)."""

    client_seed = client_seed_field(marked=True)


class SwapForm(_CombatantsForm):
    """V17 — two player characters swap their initiatives at the start of a round."""

    first = forms.TypedChoiceField(label=gettext_lazy("Personaje"), coerce=int)
    second = forms.TypedChoiceField(label=gettext_lazy("con"), coerce=int)

    def __init__(self, *args, combatants: list[VaesenCombatant], **kwargs):
        super().__init__(*args, combatants=combatants, **kwargs)
        choices = [(c.pk, _name(c)) for c in combatants if not c.character.is_npc]
        self.fields["first"].choices = choices
        self.fields["second"].choices = choices

    def clean(self):
        data = super().clean()
        data["first"] = self._pick("first")
        data["second"] = self._pick("second")
        return data


class DeclareForm(_CombatantsForm):
    """An action of one of the user's characters (V18, V19, V23, V24)."""

    actor = forms.TypedChoiceField(label=gettext_lazy("Quién actúa"), coerce=int)
    kind = forms.ChoiceField(label=gettext_lazy("Acción"), choices=VaesenAction.Kind.choices)
    target = forms.TypedChoiceField(label=gettext_lazy("Contra"), coerce=int, required=False, empty_value=None)
    weapon = forms.ChoiceField(label=gettext_lazy("Arma"), required=False)
    silence = forms.BooleanField(label=gettext_lazy("Taparle la boca (un éxito más)"), required=False)

    def __init__(self, *args, combatants: list[VaesenCombatant], actors: list[VaesenCombatant], **kwargs):
        super().__init__(*args, combatants=combatants, **kwargs)
        self.actors = {c.pk: c for c in actors}
        self.fields["actor"].choices = [(c.pk, _name(c)) for c in actors]
        self.fields["target"].choices = [("", _("— nadie —"))] + [(c.pk, _name(c)) for c in combatants if not c.fled]
        weapons = [(UNARMED, _("Sin armas (Fuerza, daño 1)"))]
        for combatant in actors:
            for weapon in combatant.character.vaesen.weapons.all():
                label = _("%(name)s: %(weapon)s (%(skill)s, daño %(damage)s)") % {
                    "name": _name(combatant),
                    "weapon": weapon.name,
                    "skill": weapon.skill,
                    "damage": weapon.damage,
                }
                weapons.append((f"w{weapon.pk}", label))
        self.fields["weapon"].choices = weapons

    def clean(self):
        data = super().clean()
        actor = self.actors.get(data.get("actor"))
        if actor is None:
            return data
        data["actor"] = actor
        data["target"] = self._pick("target")
        chosen = data.get("weapon") or UNARMED
        data["weapon"] = None
        if chosen != UNARMED:
            found = next((w for w in actor.character.vaesen.weapons.all() if f"w{w.pk}" == chosen), None)
            if found is None:
                self.add_error("weapon", _("Esa arma no es de %(name)s.") % {"name": _name(actor)})
            data["weapon"] = found
        return data


class ReactForm(forms.Form):
    """The answer to a declared action: a reaction or none (V21, V23, V24)."""

    reaction = forms.ChoiceField(
        label=gettext_lazy("Reacción"),
        choices=VaesenAction.Reaction.choices,
        error_messages={"required": gettext_lazy("Elige una reacción o ninguna.")},
    )
    reactor = forms.IntegerField(required=False, min_value=1)
    # The action's roll, the reaction's, armour and injury: the browser's seed and ones derived from it.
    client_seed = client_seed_field(marked=True)


class TurnDeadlineForm(forms.Form):
    """The direction gives the current turn a date to answer by (issue 17):
    in the campaign's time zone, with when to remind the player."""

    def __init__(self, *args, campaign: Campaign, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields.update(deadlines.deadline_form_fields(campaign, required=True))
        self.fields["plazo"].label = gettext_lazy("Plazo del turno")
        self.fields["plazo"].error_messages["required"] = gettext_lazy("Indica el plazo: una fecha y una hora.")


class ReactionDeadlineForm(forms.Form):
    """The direction gives the reaction an action waits for a date to answer
    by (issue 17): in the campaign's time zone, with when to remind the
    player. One per waiting action on the page: its fields' ids carry the
    action's (``auto_id``), their names do not."""

    def __init__(self, *args, campaign: Campaign, action_id: int, **kwargs):
        kwargs.setdefault("auto_id", f"id_reaccion_{action_id}_%s")
        super().__init__(*args, **kwargs)
        self.action_id = action_id
        self.fields.update(deadlines.deadline_form_fields(campaign, required=True))
        self.fields["plazo"].label = gettext_lazy("Plazo de la reacción")
        self.fields["plazo"].error_messages["required"] = gettext_lazy("Indica el plazo: una fecha y una hora.")
