"""A chosen recipient reads a whisper only while their membership is active
(issue 29, item 2c): once removed (or gone), the whisper leaves the scene,
the search, the unread counts and the digest; back in the campaign, it is
theirs again. The roll surfaces (log, permalink, ``.json``, ``.svg``, the
log's export) are in ``tests/rolls/test_privacy_matrix.py`` (persona
``removed_recipient``)."""

import pytest
from django.core import mail
from django.urls import reverse

from accounts.models import User
from campaigns import notify, services
from campaigns.models import Membership, Notification, Post, Role, Visibility
from campaigns.permissions import campaign_access, can_read_post, readable_posts
from tests.conftest import client_for
from tests.factories import CampaignFactory, add_member, make_scene, write

pytestmark = pytest.mark.django_db

SECRET = "La llave está bajo la tercera baldosa."


@pytest.fixture
def whisper():
    campaign = CampaignFactory(title="La mansión", visibility=Visibility.PUBLIC)
    ana = add_member(campaign, display_name="Ana")
    bruno = add_member(campaign, display_name="Bruno", email_notifications=User.EmailChoice.DIGEST)
    scene = make_scene(campaign, title="El vestíbulo")
    post = write(scene, ana, SECRET, recipients=Post.Recipients.CHOSEN, chosen=[bruno])
    return campaign, bruno, post


def _remove(campaign, user) -> None:
    membership = Membership.objects.get(campaign=campaign, user=user)
    services.member_remove(membership=membership, actor=campaign.gm, reason="Fin de la campaña")


def test_a_removed_recipient_no_longer_reads_the_whisper(whisper):
    campaign, bruno, post = whisper
    assert can_read_post(campaign_access(bruno, campaign), post) is True
    _remove(campaign, bruno)
    access = campaign_access(bruno, campaign)
    assert can_read_post(access, post) is False
    assert list(readable_posts(access)) == []
    assert list(Post.objects.addressed_to(bruno, is_gm=False)) == []


def test_a_recipient_who_left_no_longer_reads_it_and_one_back_again_does(whisper):
    campaign, bruno, post = whisper
    membership = Membership.objects.get(campaign=campaign, user=bruno)
    membership.status = Membership.Status.LEFT
    membership.save(update_fields=["status"])
    assert can_read_post(campaign_access(bruno, campaign), post) is False
    membership.rejoin(role=Role.PLAYER)
    membership.save(update_fields=Membership.REJOIN_FIELDS)
    assert can_read_post(campaign_access(bruno, campaign), post) is True


def test_the_scene_page_and_the_post_link_hide_the_whisper_from_a_removed_recipient(whisper):
    campaign, bruno, post = whisper
    client = client_for(bruno)
    assert SECRET in client.get(post.scene.get_absolute_url()).content.decode()
    _remove(campaign, bruno)
    assert SECRET not in client.get(post.scene.get_absolute_url()).content.decode()
    fragment = client.get(post.scene.get_absolute_url(), headers={"HX-Request": "true"})
    assert fragment.status_code == 200 and SECRET not in fragment.content.decode()
    assert client.get(post.get_absolute_url()).status_code == 404


def test_the_search_finds_no_whisper_for_a_removed_recipient(whisper):
    campaign, bruno, post = whisper
    url = reverse("campaigns:campaign-search", args=[campaign.slug]) + "?q=baldosa"
    client = client_for(bruno)
    assert SECRET in client.get(url).content.decode()
    _remove(campaign, bruno)
    assert SECRET not in client.get(url).content.decode()
    fragment = client.get(url, headers={"HX-Request": "true"}).content.decode()
    assert SECRET not in fragment and "<html" not in fragment


def test_a_removed_recipient_gets_no_digest_of_the_whispers_addressed_to_him(whisper):
    campaign, bruno, post = whisper
    addressed = Notification.objects.get(user=bruno, post=post)
    assert addressed.kind == Notification.Kind.ADDRESSED
    _remove(campaign, bruno)
    mail.outbox.clear()
    assert notify.digest_send(user=bruno) is True
    body = mail.outbox[0].body
    # The notice of his removal still reaches him; the whisper's notice does not.
    assert "Te han expulsado de la partida. Motivo: Fin de la campaña" in body
    assert addressed.text not in body
    assert Notification.objects.get(pk=addressed.pk).emailed_at is None


def test_a_member_still_in_the_campaign_gets_the_whisper_in_the_digest(whisper):
    campaign, bruno, post = whisper
    addressed = Notification.objects.get(user=bruno, post=post)
    mail.outbox.clear()
    assert notify.digest_send(user=bruno) is True
    assert addressed.text in mail.outbox[0].body


def test_a_removed_recipient_is_not_told_of_a_whisper_to_him(whisper):
    campaign, bruno, post = whisper
    _remove(campaign, bruno)
    readers, _gm_ids = notify.post_readers(post)
    assert bruno.pk not in readers
