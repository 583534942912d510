"""A HITOS sheet posted with a huge skill row count
(``skills-TOTAL_FORMS``) is answered at once with the Spanish message and
the form again, not with a thousand rows (``sheets.forms.rows_formset``)."""

from __future__ import annotations

import pytest
from django.urls import reverse

from tests.systems.hitos.sheet.test_views_sheet import _sheet_post


@pytest.mark.django_db
def test_the_sheet_page_answers_a_huge_row_count_with_the_message_and_few_rows(world):
    data = _sheet_post() | {"skills-TOTAL_FORMS": "100000"}
    response = world.client("player").post(reverse("sheets:sheet-create", args=[world.campaign.slug]), data)
    assert response.status_code == 200
    html = response.content.decode()
    assert "No caben más de 40 filas" in html
    assert html.count('name="skills-') < 60 * 5
    assert len(html) < 1_000_000
