"""The GM's HITOS rules options for a campaign (the contradictions between the
texts, rules-spec.md §1.9, and how the table plays)."""

from __future__ import annotations

from crispy_forms.helper import FormHelper
from crispy_forms.layout import Submit
from django import forms
from django.utils.translation import gettext_lazy as _

from accounts.limits import LIMIT_MESSAGES
from campaigns.models import Campaign
from rules.hitos_options import HitosOptions
from systems.hitos.campaign import TABLE_DEFAULTS, rules_options, stored_options, table_setting


class CampaignOptionsForm(forms.Form):
    """The rules options of rules-spec.md a GM may choose, and the site's own."""

    strict_success = forms.BooleanField(
        label=_("Éxito solo si se supera la dificultad (estricto)"),
        required=False,
        help_text=_("Por defecto basta con igualarla (K1)."),
    )
    unprepared_penalty = forms.TypedChoiceField(
        label=_("Penalización por desprevenido"),
        choices=[(2, "−2"), (3, "−3")],
        coerce=int,
        help_text=_("K2: −2 por defecto."),
    )
    critical_damage = forms.ChoiceField(
        label=_("Daño de un crítico"),
        choices=[
            ("weapon_dice", _("Se multiplican los dados del arma")),
            ("total", _("Se multiplican los dados más el bonificador")),
        ],
        help_text=_("K4: la armadura se resta después en ambos casos."),
    )
    npc_drama = forms.ChoiceField(
        label=_("Puntos dramáticos de los PNJ"),
        choices=[
            ("gm_pool", _("Reserva de la dirección")),
            ("affected_player", _("La dirección da el punto al jugador afectado")),
        ],
    )
    stabilise_difficulty = forms.TypedChoiceField(
        label=_("Dificultad para estabilizar a un moribundo"), choices=[(12, "12"), (15, "15")], coerce=int
    )
    alterado_boundary = forms.ChoiceField(
        label=_("Se está Alterado cuando la pérdida mental"),
        choices=[("at_least", _("iguala o supera la Entereza")), ("more_than", _("supera la Entereza"))],
    )
    players_mark_own_meters = forms.BooleanField(label=_("Los jugadores marcan sus propios medidores"), required=False)
    activation_deadline_hours = forms.IntegerField(
        label=_("Plazo para responder a una activación negativa (horas)"),
        min_value=1,
        max_value=720,
        error_messages=LIMIT_MESSAGES,
    )

    RULE_FIELDS = (
        "strict_success",
        "unprepared_penalty",
        "critical_damage",
        "npc_drama",
        "stabilise_difficulty",
        "alterado_boundary",
    )

    def __init__(self, *args, campaign: Campaign, **kwargs):
        options = rules_options(campaign)
        initial = {name: getattr(options, name) for name in self.RULE_FIELDS}
        initial |= {name: table_setting(campaign, name) for name in TABLE_DEFAULTS}
        kwargs.setdefault("initial", initial)
        super().__init__(*args, **kwargs)
        self.campaign = campaign
        self.helper = FormHelper()
        self.helper.add_input(Submit("submit", _("Guardar opciones")))

    def rules_options(self) -> dict:
        """What ``Campaign.rules_options`` will store: the rules options the
        form does not show keep their value; the table settings as chosen."""
        current = rules_options(self.campaign).to_dict()
        current.update({name: self.cleaned_data[name] for name in self.RULE_FIELDS})
        return stored_options(
            HitosOptions.from_dict(current), **{name: self.cleaned_data[name] for name in TABLE_DEFAULTS}
        )
