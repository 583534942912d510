"""A HITOS sheet page as the cache keeps it (``campaigns.fragments``): every
change to the sheet, to the campaign's sheet options or to the open scenes'
situation aspects moves its key, what only the GM may read never reaches a
player, and its query count stays constant, made or kept (issue 13, item 2)."""

from __future__ import annotations

import pytest
from django.core.cache import cache

from campaigns import services as forum
from campaigns.models import Scene
from sheets import services as core
from sheets.models import CampaignSheetOptions
from systems.hitos.models import Aspect, Skill
from systems.hitos.sheet import services
from tests.conftest import client_for

pytestmark = pytest.mark.django_db


def sheet(play, user, character=None, **headers) -> str:
    response = client_for(user).get((character or play.ines).get_absolute_url(), headers=headers)
    assert response.status_code == 200
    return response.content.decode()


def test_marks_on_a_meter_show_at_once(play):
    assert "Resistencia: 0 barras" in sheet(play, play.ana)
    services.meter_mark(character=play.ines, actor=play.gm, meter=services.HEALTH, amount=2)
    assert "Resistencia: 2 barras" in sheet(play, play.ana)
    services.meter_heal(character=play.ines, actor=play.gm, meter=services.HEALTH, amount=2)
    assert "Resistencia: 0 barras" in sheet(play, play.ana)


def test_drama_points_and_a_new_session_show_at_once(play):
    assert "Puntos dramáticos: <strong>3</strong>" in sheet(play, play.ana)
    services.drama_adjust(character=play.ines, actor=play.ana, change=-1)
    assert "Puntos dramáticos: <strong>2</strong>" in sheet(play, play.ana)
    services.campaign_new_session(campaign=play.campaign, actor=play.gm)
    assert "Puntos dramáticos: <strong>5</strong>" in sheet(play, play.ana)


def test_aspects_added_exhausted_and_ended_show_at_once(play):
    assert "Empapada hasta los huesos" not in sheet(play, play.ana)
    services.aspect_add_temporary(
        character=play.ines, actor=play.ana, phrase="Empapada hasta los huesos", duration=Aspect.Duration.SCENE
    )
    assert "Empapada hasta los huesos" in sheet(play, play.ana)
    services.aspect_change(aspect=play.ines_aspect, actor=play.ana, action="exhaust")
    assert "agotado hasta la próxima" in sheet(play, play.ana)
    # The new scene's bulk end of scene-long aspects (QuerySet.update) too.
    services.campaign_new_scene(campaign=play.campaign, actor=play.gm)
    assert "Empapada hasta los huesos" not in sheet(play, play.ana)
    services.aspect_change(aspect=play.ines_aspect, actor=play.ana, action="recover")
    assert "agotado hasta la próxima" not in sheet(play, play.ana)


def test_an_edited_sheet_and_its_notes_show_at_once(play):
    assert "Diario de Inés" not in sheet(play, play.ana)
    core.sheet_update_notes(character=play.ines, actor=play.ana, values={"private_notes": "Diario de Inés"})
    assert "Diario de Inés" in sheet(play, play.ana)
    Skill.objects.create(character=play.ines, name="Ocultismo", category="ocultismo", value=2)
    assert "Ocultismo" in sheet(play, play.ana)
    play.ines.name = "Inés de Salcedo"
    play.ines.save()
    assert "Inés de Salcedo" in sheet(play, play.ana)


def test_gm_notes_kept_for_the_gm_never_reach_the_player_or_others(play):
    core.sheet_update_notes(character=play.ines, actor=play.gm, values={"gm_notes": "Es la heredera secreta."})
    assert "Es la heredera secreta." in sheet(play, play.gm)
    assert "Es la heredera secreta." not in sheet(play, play.ana)
    other = sheet(play, play.bruno)
    assert "Es la heredera secreta." not in other
    # Nor her private numbers: Bruno sees the public part only.
    assert "Características" not in other and "Características" in sheet(play, play.ana)


def test_the_campaigns_sheet_options_apply_at_once(play):
    assert client_for(play.bruno).get(play.ines.get_absolute_url()).status_code == 200
    CampaignSheetOptions.objects.update_or_create(
        campaign=play.campaign, defaults={"visibility": CampaignSheetOptions.Visibility.GM}
    )
    assert client_for(play.bruno).get(play.ines.get_absolute_url()).status_code == 404
    assert client_for(None).get(play.ines.get_absolute_url()).status_code == 404
    CampaignSheetOptions.objects.filter(campaign=play.campaign).get().delete()
    assert client_for(play.bruno).get(play.ines.get_absolute_url()).status_code == 200


def test_the_open_scenes_situation_aspects_show_at_once(play):
    assert "Oscuridad casi total" in sheet(play, play.ana)
    forum.scene_update(
        scene=play.scene,
        actor=play.gm,
        title=play.scene.title,
        description="",
        everyone=True,
        participants=[],
        status=Scene.Status.OPEN,
        position=play.scene.position,
        game_values={"aspects": ["Niebla espesa"]},
    )
    html = sheet(play, play.ana)
    assert "Niebla espesa" in html and "Oscuridad casi total" not in html
    forum.scene_update(
        scene=play.scene,
        actor=play.gm,
        title=play.scene.title,
        description="",
        everyone=True,
        participants=[],
        status=Scene.Status.LOCKED,
        position=play.scene.position,
    )
    assert "Niebla espesa" not in sheet(play, play.ana)


def test_the_htmx_meters_and_the_page_are_kept_apart(play):
    fragment = sheet(play, play.ana, HX_Request="true")
    page = sheet(play, play.ana)
    assert fragment.lstrip().startswith('<section id="sheet-meters"') and "<html" not in fragment
    assert "<html" in page and "Aspectos" in page


def test_the_meter_forms_of_a_kept_page_carry_each_visits_own_token(play):
    first, second = sheet(play, play.ana), sheet(play, play.ana)
    token = 'name="csrfmiddlewaretoken" value="'
    assert first.count(token) == second.count(token) > 2
    assert first.split(token)[2][:64] != second.split(token)[2][:64]


@pytest.mark.parametrize("n", [1, 8])
def test_the_query_count_is_constant_as_the_sheet_grows(play, django_assert_max_num_queries, n):
    for i in range(n):
        Skill.objects.create(character=play.ines, name=f"Habilidad {i}", category="cultura", value=1)
        Aspect.objects.create(character=play.ines, kind="hito", phrase=f"Hito {i}", position=i + 1)
    # Made: session, user, the campaign with its sheet options, membership
    # (not the GM), the character with its sheet, skills, weapons, aspects,
    # the open scenes' situation aspects, notifications. Kept: session, user,
    # the campaign (the membership from the cache), notifications.
    made = {"gm": 9, "ana": 10, "bruno": 10}
    kept = {"gm": 4, "ana": 4, "bruno": 4}
    for who in made:
        cache.clear()
        client = client_for(getattr(play, who))
        with django_assert_max_num_queries(made[who]):
            assert client.get(play.ines.get_absolute_url()).status_code == 200
        with django_assert_max_num_queries(kept[who]):
            assert client.get(play.ines.get_absolute_url()).status_code == 200
