"""Forms of the character core: the campaign's sheet options, and the rows
of the games' sheet forms (``rows_formset``)."""

from __future__ import annotations

from crispy_forms.helper import FormHelper
from crispy_forms.layout import Submit
from django import forms
from django.utils.translation import gettext_lazy as _

from sheets.models import CampaignSheetOptions

# How many rows past its maximum a sheet formset builds from a sent row count
# before refusing it (so deleting a row or two at the maximum still saves):
# a huge ``<prefix>-TOTAL_FORMS`` builds no more.
ROWS_MARGIN = 10


class RowsFormSet(forms.BaseFormSet):
    """The rows of a sheet form (skills, weapons, feats…), at most ``max_num``."""

    default_error_messages = {"too_many_forms": _("No caben más de %(num)d filas: quita las que sobren.")}


def rows_formset(form, formset: type[RowsFormSet], *, extra: int, max_num: int):
    """A sheet form's formset of ``form`` rows: at most ``max_num`` kept
    (``validate_max``: a sent form or an imported file with more is refused,
    not stored) and never more than ``ROWS_MARGIN`` past it built."""
    return forms.formset_factory(
        form,
        formset=formset,
        extra=extra,
        max_num=max_num,
        absolute_max=max_num + ROWS_MARGIN,
        validate_max=True,
        can_delete=True,
    )


class SheetOptionsForm(forms.ModelForm):
    class Meta:
        model = CampaignSheetOptions
        fields = ("visibility", "players_edit_description")

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.helper = FormHelper()
        self.helper.add_input(Submit("submit", _("Guardar")))
