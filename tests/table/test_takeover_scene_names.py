"""A takeover's notices name a scene only to an owner who may open it
(issue 29, item 2a): the direction may play an absent player's character
in a split-party scene the player is not in."""

from __future__ import annotations

import pytest

from campaigns import extensions
from campaigns.models import Notification, Scene
from campaigns.permissions import campaign_access
from table import services as table_services
from tests.table.test_takeover import away, start

pytestmark = pytest.mark.django_db

SECRET_SCENE = "La cripta del conde"


@pytest.fixture
def crypt(play) -> Scene:
    scene = Scene.objects.create(campaign=play.campaign, title=SECRET_SCENE, everyone=False)
    scene.participants.set([play.ana])
    return scene


def test_the_owner_is_not_told_the_name_of_a_scene_they_cannot_open(play, crypt):
    away(play, play.bruno)
    start(play, scene=crypt)
    told = Notification.objects.get(user=play.bruno)
    assert told.text == "Mientras estás fuera, La Directora lleva a Tomás Ferrer (La mansión)."
    assert all(SECRET_SCENE not in text for text in told.texts.values())


def test_what_was_written_in_a_scene_the_owner_cannot_open_is_told_without_its_name(play, crypt):
    away(play, play.bruno)
    takeover = start(play, scene=crypt)
    table_services.post_with_rolls_create(
        access=campaign_access(play.gm, play.campaign),
        scene=crypt,
        voice="character",
        body="Tomás baja a la cripta.",
        character=play.tomas,
        takeover_id=takeover.pk,
    )
    lines = extensions.member_returned(play.campaign, play.bruno)
    assert lines[1:] == ["La Directora escribió como Tomás Ferrer en una escena que no ves."]
