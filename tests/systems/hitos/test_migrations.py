"""HITOS's data left the forum's and the sheets' tables (issue 12): a
database made before keeps every sheet, campaign setting and scene aspect,
with their ids.

Taking the whole database back to where those moves start and then forward
again to every app's latest migration is most of what these tests cost, so
the module does it once (``old_schema``) and its tests move between the old
states from there, in the order of the migrations: the sheet's move
(``hitos`` 0003, ``sheets`` 0002) ends where the campaign's and the scene
aspects' (``campaigns`` 0004, ``hitos`` 0004) begins. Each test still starts
by migrating to the state it needs, so it passes alone or in another order.
The rows the tests write stay until the end of the module, when the database
is back at the latest migrations and is emptied, as after a transactional
test (emptying it in between, at an old schema, would leave the old tables
full and their references broken)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.core.management import call_command
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
# Where the campaign's HITOS columns and the scene aspects move from, and to.
CAMPAIGN_BEFORE = [("campaigns", "0003_system_default"), ("hitos", "0003_sheet"), ("accounts", "0001_initial")]
CAMPAIGN_AFTER = [("campaigns", "0004_game_leaves_the_campaign"), ("hitos", "0004_scene_aspects")]


def _migrate(targets):
    executor = MigrationExecutor(connection)
    executor.migrate(targets)
    return executor.loader.project_state(targets).apps


def _latest() -> list[tuple[str, str]]:
    return MigrationExecutor(connection).loader.graph.leaf_nodes()


@pytest.fixture(scope="module")
def old_schema(django_db_setup, django_db_blocker) -> Iterator[None]:
    """The database taken back once to before the moves, for the module's
    tests, and forward again to every app's latest migration afterwards,
    emptied: the state the other tests expect. The connection stays in
    autocommit, as in a transactional test (SQLite alters its tables only
    outside a transaction)."""
    with django_db_blocker.unblock():
        try:
            _migrate(BEFORE)
            yield
        finally:
            _migrate(_latest())
            call_command("flush", interactive=False, verbosity=0)


@pytest.fixture
def old_database(old_schema, django_db_blocker) -> Iterator[None]:
    with django_db_blocker.unblock():
        yield


def test_the_sheet_columns_and_rows_survive_the_move(old_database):
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


def test_the_campaigns_hitos_columns_and_scene_aspects_survive_the_move(old_database):
    """``campaigns`` 0004 and ``hitos`` 0004: the GM's pool goes into
    ``game_state``, the two table settings into ``rules_options``, and the
    situation aspects keep their rows and the activations pointing at them."""
    old = _migrate(CAMPAIGN_BEFORE)
    User = old.get_model("accounts", "User")
    # Names of its own: the other test's rows are still there.
    gm = User.objects.create(username="dj-campaign")
    campaign = old.get_model("campaigns", "Campaign").objects.create(
        title="Vieja",
        slug="vieja-campaign",
        gm=gm,
        gm_drama_points=7,
        players_mark_own_meters=True,
        activation_deadline_hours=24,
        rules_options={"strict_success": True},
    )
    scene = old.get_model("campaigns", "Scene").objects.create(campaign=campaign, title="Sótano")
    aspect = old.get_model("campaigns", "SceneAspect").objects.create(scene=scene, phrase="Oscuridad")

    new = _migrate(CAMPAIGN_AFTER)
    moved = new.get_model("campaigns", "Campaign").objects.get(pk=campaign.pk)
    assert moved.game_state == {"gm_pool": 7}
    assert moved.rules_options == {
        "strict_success": True,
        "players_mark_own_meters": True,
        "activation_deadline_hours": 24,
    }
    assert new.get_model("hitos", "SceneAspect").objects.get(pk=aspect.pk).phrase == "Oscuridad"

    back = _migrate(CAMPAIGN_BEFORE[:2])
    again = back.get_model("campaigns", "Campaign").objects.get(pk=campaign.pk)
    assert (again.gm_drama_points, again.players_mark_own_meters, again.activation_deadline_hours) == (7, True, 24)
    assert again.rules_options == {"strict_success": True}
    assert back.get_model("campaigns", "SceneAspect").objects.get(pk=aspect.pk).phrase == "Oscuridad"
