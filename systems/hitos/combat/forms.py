"""The forms of the combat page (``systems.hitos.combat.views``)."""

from __future__ import annotations

from django import forms
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from accounts.limits import LIMIT_MESSAGES, HiddenErrorsShown, ModelIdsField, text_field
from campaigns import deadlines
from campaigns.models import Campaign
from rolls.forms import MODIFIER_REASON_MAX, client_seed_field, modifier_field
from systems.hitos.combat import services
from systems.hitos.models import Aspect, Combat, Combatant


class CombatStartForm(forms.Form):
    characters = ModelIdsField(label=gettext_lazy("Participantes"), queryset=None, widget=forms.CheckboxSelectMultiple)

    def __init__(self, *args, campaign: Campaign, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["characters"].queryset = services.combat_characters(campaign)


class InitiativeForm(forms.Form):
    """Rolling initiative (H40): the first roll takes this browser seed, each
    further one (roll-offs too) a seed derived from it."""

    client_seed = client_seed_field(marked=True)


class CombatantAddForm(forms.Form):
    character = forms.ModelChoiceField(
        label=gettext_lazy("Añadir participante"), queryset=None, empty_label=gettext_lazy("— elige un personaje —")
    )

    def __init__(self, *args, campaign: Campaign, combat: Combat, **kwargs):
        super().__init__(*args, **kwargs)
        taking_part = combat.combatants.values("character")
        self.fields["character"].queryset = services.combat_characters(campaign).exclude(pk__in=taking_part)


class DelayForm(forms.Form):
    position = forms.IntegerField(
        label=gettext_lazy("Actúa en el puesto"),
        min_value=1,
        max_value=99,
        required=False,
        error_messages=LIMIT_MESSAGES,
    )


class CombatantStateForm(forms.Form):
    all_out_defence = forms.BooleanField(label=gettext_lazy("Defensa total"), required=False)
    defenceless = forms.BooleanField(label=gettext_lazy("Indefenso"), required=False)
    out_of_combat = forms.BooleanField(label=gettext_lazy("Fuera de combate"), required=False)


class AttackForm(HiddenErrorsShown, forms.Form):
    attacker = forms.TypedChoiceField(label=gettext_lazy("Atacante"), coerce=int)
    target = forms.TypedChoiceField(label=gettext_lazy("Objetivo"), coerce=int)
    weapon = forms.ChoiceField(label=gettext_lazy("Arma"))
    modifier = modifier_field(gettext_lazy("Modificador"), initial=0)
    modifier_reason = forms.CharField(
        label=gettext_lazy("Motivo del modificador"),
        max_length=MODIFIER_REASON_MAX,
        required=False,
        error_messages=LIMIT_MESSAGES,
    )
    client_seed = client_seed_field()

    def __init__(self, *args, combatants: list[Combatant], attackers: list[Combatant], **kwargs):
        super().__init__(*args, **kwargs)
        self.combatants = {c.pk: c for c in combatants}
        self.fields["attacker"].choices = [(c.pk, c.character.name) for c in attackers]
        self.fields["target"].choices = [(c.pk, c.character.name) for c in combatants]
        weapons = []
        for combatant in attackers:
            character = combatant.character
            for weapon in character.weapons.all():
                weapons.append((f"w{weapon.pk}", f"{character.name}: {weapon.name} ({weapon.damage_code})"))
            if character.is_npc and character.hitos.damage_code:
                label = _("Ataque habitual")
                weapons.append((f"npc{combatant.pk}", f"{character.name}: {label} ({character.hitos.damage_code})"))
        self.fields["weapon"].choices = weapons

    def clean(self):
        data = super().clean()
        attacker = self.combatants.get(data.get("attacker"))
        weapon = data.get("weapon", "")
        if attacker is None or not weapon:
            return data
        data["attacker"] = attacker
        data["target"] = self.combatants.get(data.get("target"))
        if weapon == f"npc{attacker.pk}":
            data["weapon"] = services.NPC_ATTACK
        else:
            found = next((w for w in attacker.character.weapons.all() if f"w{w.pk}" == weapon), None)
            if found is None:
                self.add_error("weapon", _("Esa arma no es de %(name)s.") % {"name": attacker.character.name})
            data["weapon"] = found
        return data

    def extra(self) -> list[tuple[str, int]]:
        value = self.cleaned_data.get("modifier") or 0
        return [(self.cleaned_data.get("modifier_reason", ""), value)] if value else []


class ShiftForm(forms.Form):
    steps = forms.TypedChoiceField(
        label=gettext_lazy("Daño"),
        coerce=int,
        choices=[(1, gettext_lazy("un nivel más")), (-1, gettext_lazy("un nivel menos"))],
    )
    # An aspect of a sheet or a scene: the length of an aspect's phrase.
    aspect = text_field(Aspect, "phrase", label=gettext_lazy("Aspecto activado"))


class DamageApplyForm(forms.Form):
    """Applying an attack's damage: a code above mCM draws its extra d10s
    then (H51), and a damage reaching Aguante rolls the mass-damage test
    (H52), with this browser seed (the test after an extension with one
    derived from it)."""

    client_seed = client_seed_field(marked=True)


class EffectForm(forms.Form):
    decision = forms.ChoiceField(choices=[("confirm", "confirm"), ("dismiss", "dismiss")])
    # Stored as a temporary aspect (or secuela) of a sheet.
    phrase = text_field(Aspect, "phrase", label=gettext_lazy("Aspecto"), required=False)


# --- access and context --------------------------------------------------------------


class RoundDeadlineForm(forms.Form):
    """The direction gives the round a date to answer by (issue 17): in the
    campaign's time zone, with when to remind the player waited for."""

    def __init__(self, *args, campaign: Campaign, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields.update(deadlines.deadline_form_fields(campaign, required=True))
        self.fields["plazo"].label = gettext_lazy("Plazo del asalto")
        self.fields["plazo"].error_messages["required"] = gettext_lazy("Indica el plazo: una fecha y una hora.")
