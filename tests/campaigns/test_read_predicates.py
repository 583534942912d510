import pytest

from campaigns.models import Post, Visibility
from campaigns.permissions import campaign_access, can_read_post, visible_scenes
from campaigns.services import scene_create
from tests.factories import CampaignFactory, UserFactory, add_member, write

pytestmark = pytest.mark.django_db


def test_a_whisper_to_the_gm_is_readable_by_its_author_and_the_gm_only():
    campaign = CampaignFactory()
    ana, bruno = add_member(campaign), add_member(campaign)
    scene = scene_create(campaign=campaign, title="La posada")
    whisper = write(scene, ana, recipients=Post.Recipients.GM)
    readers = {
        who: can_read_post(campaign_access(user, campaign), whisper)
        for who, user in (("gm", campaign.gm), ("ana", ana), ("bruno", bruno), ("outsider", UserFactory()))
    }
    assert readers == {"gm": True, "ana": True, "bruno": False, "outsider": False}


def test_a_split_party_scene_hides_its_posts_and_itself_from_members_not_chosen():
    campaign = CampaignFactory(visibility=Visibility.PRIVATE)
    ana, bruno = add_member(campaign), add_member(campaign)
    scene = scene_create(campaign=campaign, title="El sótano", everyone=False, participants=[ana])
    post = write(scene, ana)
    assert can_read_post(campaign_access(ana, campaign), post) is True
    assert can_read_post(campaign_access(bruno, campaign), post) is False
    assert scene not in visible_scenes(campaign_access(bruno, campaign))
    assert scene in visible_scenes(campaign_access(campaign.gm, campaign))
