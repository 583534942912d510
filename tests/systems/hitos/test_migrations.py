"""HITOS's data left the forum's and the sheets' tables (issue 12): a
database made before keeps every sheet, campaign setting and scene aspect,
with their ids."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

# The user's columns as they were then too (later ones have no default in the database).
BEFORE = [
    ("hitos", "0002_initial"),
    ("sheets", "0001_initial"),
    ("campaigns", "0003_system_default"),
    ("accounts", "0001_initial"),
]
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


@pytest.mark.django_db(transaction=True)
def test_the_campaigns_hitos_columns_and_scene_aspects_survive_the_move():
    """``campaigns`` 0004 and ``hitos`` 0004: the GM's pool goes into
    ``game_state``, the two table settings into ``rules_options``, and the
    situation aspects keep their rows and the activations pointing at them."""
    old = _migrate([("campaigns", "0003_system_default"), ("hitos", "0003_sheet"), ("accounts", "0001_initial")])
    User = old.get_model("accounts", "User")
    gm = User.objects.create(username="dj")
    campaign = old.get_model("campaigns", "Campaign").objects.create(
        title="Vieja",
        slug="vieja",
        gm=gm,
        gm_drama_points=7,
        players_mark_own_meters=True,
        activation_deadline_hours=24,
        rules_options={"strict_success": True},
    )
    scene = old.get_model("campaigns", "Scene").objects.create(campaign=campaign, title="Sótano")
    aspect = old.get_model("campaigns", "SceneAspect").objects.create(scene=scene, phrase="Oscuridad")

    new = _migrate([("campaigns", "0004_game_leaves_the_campaign"), ("hitos", "0004_scene_aspects")])
    moved = new.get_model("campaigns", "Campaign").objects.get(pk=campaign.pk)
    assert moved.game_state == {"gm_pool": 7}
    assert moved.rules_options == {
        "strict_success": True,
        "players_mark_own_meters": True,
        "activation_deadline_hours": 24,
    }
    assert new.get_model("hitos", "SceneAspect").objects.get(pk=aspect.pk).phrase == "Oscuridad"

    back = _migrate([("campaigns", "0003_system_default"), ("hitos", "0003_sheet")])
    again = back.get_model("campaigns", "Campaign").objects.get(pk=campaign.pk)
    assert (again.gm_drama_points, again.players_mark_own_meters, again.activation_deadline_hours) == (7, True, 24)
    assert again.rules_options == {"strict_success": True}
    assert back.get_model("campaigns", "SceneAspect").objects.get(pk=aspect.pk).phrase == "Oscuridad"
    _migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())
