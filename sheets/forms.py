"""Forms of the character core: the campaign's sheet options."""

from __future__ import annotations

from crispy_forms.helper import FormHelper
from crispy_forms.layout import Submit
from django import forms
from django.utils.translation import gettext_lazy as _

from sheets.models import CampaignSheetOptions


class SheetOptionsForm(forms.ModelForm):
    class Meta:
        model = CampaignSheetOptions
        fields = ("visibility", "players_edit_description")

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.helper = FormHelper()
        self.helper.add_input(Submit("submit", _("Guardar")))
