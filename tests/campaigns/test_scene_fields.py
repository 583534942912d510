"""What a game adds to the scene form (``campaigns.extensions.SceneFields``):
HITOS's situation aspects appear only in HITOS campaigns."""

from __future__ import annotations

import pytest
from django.urls import reverse

from accounts.models import User
from campaigns import services
from campaigns.forms import SceneForm
from campaigns.permissions import campaign_access
from tests.conftest import client_for
from tests.factories import CampaignFactory


@pytest.fixture
def other_game(db):
    """A campaign of a game that adds nothing to scenes."""
    return CampaignFactory(system="sin-aspectos")


def test_a_hitos_scene_form_has_the_situation_aspects(db):
    assert "aspects" in SceneForm(campaign=CampaignFactory(), members=User.objects.none(), creating=True).fields


def test_another_games_scene_form_has_no_aspects_and_saves_without_them(other_game):
    assert "aspects" not in SceneForm(campaign=other_game, members=User.objects.none(), creating=True).fields
    response = client_for(other_game.gm).post(
        reverse("campaigns:scene-create", args=[other_game.slug]),
        {"title": "El muelle", "description": "", "everyone": "on", "aspects": "Niebla"},
    )
    scene = other_game.scenes.get(title="El muelle")
    assert response.url == scene.get_absolute_url()
    assert not scene.aspects.exists()


def test_the_export_adds_aspects_only_for_the_game_that_has_them(db, other_game):
    hitos = CampaignFactory()
    services.scene_create(campaign=hitos, title="Sótano", game_values={"aspects": ["Oscuro"]})
    services.scene_create(campaign=other_game, title="Muelle", game_values={"aspects": ["Niebla"]})
    hitos_scene = next(
        s for s in services.campaign_export(access=campaign_access(hitos.gm, hitos))["scenes"] if s["title"] == "Sótano"
    )
    other_scene = next(
        s
        for s in services.campaign_export(access=campaign_access(other_game.gm, other_game))["scenes"]
        if s["title"] == "Muelle"
    )
    assert hitos_scene["aspects"] == ["Oscuro"]
    assert "aspects" not in other_scene
