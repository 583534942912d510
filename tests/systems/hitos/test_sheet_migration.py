"""The HITOS sheet left the shared character (``hitos`` 0003, ``sheets``
0002): a database made before keeps every sheet, its rows and their ids."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

BEFORE = [("hitos", "0002_initial"), ("sheets", "0001_initial"), ("campaigns", "0003_system_default")]
AFTER = [("hitos", "0003_sheet"), ("sheets", "0002_hitos_sheet_moved")]


def _migrate(targets):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return executor.loader.project_state(targets).apps


@pytest.mark.django_db(transaction=True)
def test_the_sheet_columns_and_rows_survive_the_move():
    old = _migrate(BEFORE)
    User = old.get_model("accounts", "User")
    Campaign = old.get_model("campaigns", "Campaign")
    Character = old.get_model("sheets", "Character")
    gm = User.objects.create(username="dj")
    campaign = Campaign.objects.create(title="Vieja", slug="vieja", gm=gm)
    ines = Character.objects.create(
        campaign=campaign, owner=gm, name="Inés", fortaleza=7, drama_points=2, health_slashes=3, cita="¡Luz!"
    )
    skill = old.get_model("sheets", "Skill").objects.create(character=ines, name="Pelea", category="combate", value=4)
    aspect = old.get_model("sheets", "Aspect").objects.create(character=ines, kind="hito", phrase="Vio al monstruo")

    new = _migrate(AFTER)
    sheet = new.get_model("hitos", "HitosSheet").objects.get(character_id=ines.pk)
    assert (sheet.fortaleza, sheet.drama_points, sheet.health_slashes, sheet.cita) == (7, 2, 3, "¡Luz!")
    assert new.get_model("hitos", "Skill").objects.get(pk=skill.pk).name == "Pelea"
    assert new.get_model("hitos", "Aspect").objects.get(pk=aspect.pk).character_id == ines.pk
    assert not hasattr(new.get_model("sheets", "Character")(), "fortaleza")
    # Back to every app's latest migration, the state the other tests expect.
    _migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())
