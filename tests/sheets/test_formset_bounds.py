"""A sheet form's row count (``<prefix>-TOTAL_FORMS``) is the browser's word:
a huge one is refused at once with a Spanish message, building no more than a
few rows past the formset's maximum (Django would otherwise build 1 000 and
render them all)."""

from __future__ import annotations

import pytest

from systems.aventuras.sheet.forms import FeatFormSet, ToolFormSet
from systems.hitos.sheet.forms import SkillFormSet
from systems.hitos.sheet.forms import WeaponFormSet as HitosWeaponFormSet
from systems.vaesen.sheet.forms import ItemFormSet
from systems.vaesen.sheet.forms import WeaponFormSet as VaesenWeaponFormSet

FORMSETS = [
    (SkillFormSet, "skills"),
    (HitosWeaponFormSet, "weapons"),
    (ItemFormSet, "items"),
    (VaesenWeaponFormSet, "weapons"),
    (FeatFormSet, "feats"),
    (ToolFormSet, "tools"),
]


@pytest.mark.parametrize(("formset_class", "prefix"), FORMSETS)
def test_a_huge_row_count_is_refused_in_spanish_building_few_rows(formset_class, prefix):
    formset = formset_class({f"{prefix}-TOTAL_FORMS": "100000", f"{prefix}-INITIAL_FORMS": "0"}, prefix=prefix)
    assert not formset.is_valid()
    assert len(formset.forms) <= formset.max_num + 10
    assert f"No caben más de {formset.max_num} filas" in " ".join(formset.non_form_errors())


@pytest.mark.parametrize(("formset_class", "prefix"), FORMSETS)
def test_one_row_past_the_maximum_is_refused(formset_class, prefix):
    total = formset_class.max_num + 1
    formset = formset_class({f"{prefix}-TOTAL_FORMS": str(total), f"{prefix}-INITIAL_FORMS": "0"}, prefix=prefix)
    assert not formset.is_valid()
    assert f"No caben más de {formset.max_num} filas" in " ".join(formset.non_form_errors())
