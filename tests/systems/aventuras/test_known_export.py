"""Whether the players know an NPC (``AventurasSheet.known``) travels with
the NPC's sheet in an export and comes back on import (the campaign archive
reads sheets through the same export and forms); a hero's sheet carries no
such flag."""

import pytest

from systems.aventuras.models import AventurasSheet
from systems.aventuras.sheet.services import sheet_export
from systems.aventuras.sheet.views import import_forms

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("known", [True, False])
def test_an_npc_known_to_the_players_stays_known_through_export_and_import(aventuras_world, known):
    npc = aventuras_world.npc
    AventurasSheet.objects.filter(character=npc).update(known=known)
    npc.refresh_from_db()
    exported = sheet_export(npc, include_gm_notes=True)
    assert exported["known"] is known
    sheet_form, feats, tools = import_forms(exported, npc=True, is_gm=True)
    assert sheet_form.is_valid(), sheet_form.errors
    assert sheet_form.cleaned_data["known"] is known


def test_a_heros_export_carries_no_known_flag(aventuras_world):
    assert "known" not in sheet_export(aventuras_world.pc, include_gm_notes=False)
