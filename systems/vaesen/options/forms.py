"""The GM's Vaesen options for a campaign: who marks conditions, the NPCs'
penalty reading (V20), the initiative (V17) and the two critical injury
tables (V13), stored in ``Campaign.rules_options``."""

from __future__ import annotations

from crispy_forms.helper import FormHelper
from crispy_forms.layout import Submit
from django import forms
from django.core.exceptions import ValidationError
from django.utils.translation import gettext_lazy as _

from accounts.limits import LIMIT_MESSAGES, max_length_of
from campaigns.models import Campaign
from rules.vaesen import ConditionKind, InitiativeMode, NpcPenalty
from systems.vaesen.models import VaesenInjury
from systems.vaesen.options import tables
from systems.vaesen.sheet.permissions import PLAYERS_MARK_OWN

TABLE_HELP = _(
    "Una fila por línea: «valores | nombre | efecto | plazo», por ejemplo «11-16 | Costilla rota | −1 a Agilidad | "
    "un día». Los valores son resultados de d66 (11 a 66). Vacía: la herida se anota solo con su número."
)

# The longest row as the page writes it, «11-66 | name | effect | time limit»
# with each part at its column's limit, and the browser's line break: a table
# of ``tables.MAX_ROWS`` such rows fits; a longer text is refused before it
# is read (the rows are stored in a JSON column, which has no length of its own).
TABLE_ROW_MAX_LENGTH = (
    len("11-66 | ")
    + max_length_of(VaesenInjury, "name")
    + len(" | ")
    + max_length_of(VaesenInjury, "effect")
    + len(" | ")
    + max_length_of(VaesenInjury, "time_limit")
    + len("\r\n")
)
TABLE_MAX_LENGTH = tables.MAX_ROWS * TABLE_ROW_MAX_LENGTH


class VaesenOptionsForm(forms.Form):
    players_mark_own_conditions = forms.BooleanField(
        label=_("Los jugadores marcan sus propios estados y heridas"), required=False
    )
    npc_penalty = forms.ChoiceField(
        label=_("Dados que pierde un PNJ herido"),
        choices=[
            (NpcPenalty.EVERY_TEST.value, _("Uno por punto de Resistencia perdido, en cada prueba")),
            (NpcPenalty.NEXT_TEST.value, _("El daño recibido, solo en la siguiente prueba (lectura literal)")),
        ],
        help_text=_("V20: el texto es ambiguo; por defecto, un dado menos por punto perdido."),
    )
    initiative_mode = forms.ChoiceField(
        label=_("Iniciativa"),
        choices=[
            (InitiativeMode.D10.value, _("1d10; los empates se vuelven a tirar")),
            (InitiativeMode.CARDS.value, _("Cartas de iniciativa del 1 al 10")),
        ],
    )
    injuries_physical = forms.CharField(
        label=_("Tabla de heridas críticas físicas"),
        required=False,
        max_length=TABLE_MAX_LENGTH,
        error_messages=LIMIT_MESSAGES,
        widget=forms.Textarea(attrs={"rows": 6}),
    )
    injuries_mental = forms.CharField(
        label=_("Tabla de heridas críticas mentales"),
        required=False,
        max_length=TABLE_MAX_LENGTH,
        error_messages=LIMIT_MESSAGES,
        widget=forms.Textarea(attrs={"rows": 6}),
    )

    def __init__(self, *args, campaign: Campaign, **kwargs):
        kwargs.setdefault(
            "initial",
            {
                PLAYERS_MARK_OWN: tables.players_mark_own(campaign),
                "npc_penalty": tables.npc_penalty(campaign).value,
                "initiative_mode": tables.initiative_mode(campaign).value,
                "injuries_physical": tables.table_text(tables.injury_table(campaign, ConditionKind.PHYSICAL)),
                "injuries_mental": tables.table_text(tables.injury_table(campaign, ConditionKind.MENTAL)),
            },
        )
        super().__init__(*args, **kwargs)
        self.fields["injuries_physical"].help_text = TABLE_HELP
        self.fields["injuries_mental"].help_text = TABLE_HELP
        self.campaign = campaign
        self.helper = FormHelper()
        self.helper.add_input(Submit("submit", _("Guardar opciones")))

    def _table(self, name: str) -> list[tables.InjuryRow]:
        try:
            return tables.parse_table(self.cleaned_data.get(name) or "")
        except ValidationError as exc:
            raise ValidationError(exc.messages) from None

    def clean_injuries_physical(self):
        return self._table("injuries_physical")

    def clean_injuries_mental(self):
        return self._table("injuries_mental")

    def rules_options(self) -> dict:
        """What ``Campaign.rules_options`` will store: the other keys kept."""
        data = self.cleaned_data
        return {
            **(self.campaign.rules_options or {}),
            PLAYERS_MARK_OWN: data[PLAYERS_MARK_OWN],
            tables.NPC_PENALTY: data["npc_penalty"],
            tables.INITIATIVE_MODE: data["initiative_mode"],
            tables.INJURY_TABLES[ConditionKind.PHYSICAL]: [row.to_list() for row in data["injuries_physical"]],
            tables.INJURY_TABLES[ConditionKind.MENTAL]: [row.to_list() for row in data["injuries_mental"]],
        }
