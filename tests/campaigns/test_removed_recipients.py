"""A chosen recipient reads a whisper only while their membership is active
(issue 29, item 2c): once removed (or gone), the whisper leaves the scene,
the search, the unread counts and the digest; back in the campaign, it is
theirs again. The roll surfaces (log, permalink, ``.json``, ``.svg``, the
log's export) are in ``tests/rolls/test_privacy_matrix.py`` (persona
``removed_recipient``). Only the notices that quote a post (a new post, one
addressed to you) are dropped so, and a dropped one counts as handled: no
backlog on return, no digest run picking its user again, no immediate
e-mail either."""

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
    assert Notification.objects.get(pk=addressed.pk).emailed_at is not None  # Handled: never sent.


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


# --- only the notices quoting a post are dropped, and then handled -----------------------------


def test_a_notice_about_a_whisper_the_reader_cannot_read_still_reaches_the_digest(whisper):
    """A game notice (a character harmed by an attack written as a whisper)
    cites the post without quoting it: its line goes out."""
    campaign, bruno, post = whisper
    carla = add_member(campaign, display_name="Carla", email_notifications=User.EmailChoice.DIGEST)
    notify.notify_users(
        [carla],
        campaign=campaign,
        kind=Notification.Kind.CHARACTER,
        url=campaign.get_absolute_url(),
        text=lambda: "Tu personaje recibe 3 de daño.",
        post=post,
    )
    mail.outbox.clear()
    assert notify.digest_send(user=carla) is True
    assert "Tu personaje recibe 3 de daño." in mail.outbox[0].body


def test_a_dropped_notice_is_handled_and_no_backlog_waits_for_a_rejoining_member(whisper):
    campaign, bruno, post = whisper
    addressed = Notification.objects.get(user=bruno, post=post)
    _remove(campaign, bruno)
    notify.digest_send(user=bruno)
    assert Notification.objects.get(pk=addressed.pk).emailed_at is not None
    assert bruno not in notify.digest_users()
    membership = Membership.objects.get(campaign=campaign, user=bruno)
    membership.rejoin(role=Role.PLAYER)
    membership.save(update_fields=Membership.REJOIN_FIELDS)
    mail.outbox.clear()
    notify.digest_send(user=bruno)
    assert all(addressed.text not in message.body for message in mail.outbox)


def test_a_removed_member_with_only_a_dropped_notice_is_not_picked_for_the_digest(whisper):
    campaign, bruno, post = whisper
    _remove(campaign, bruno)
    # The removal's own notice went out already; only the whisper's is left.
    Notification.objects.filter(user=bruno).exclude(post=post).update(read_at=post.created_at)
    assert bruno not in notify.digest_users()


def test_the_immediate_e_mail_of_a_whisper_is_not_sent_once_its_recipient_is_removed(whisper):
    campaign, bruno, post = whisper
    bruno.email_notifications = User.EmailChoice.IMMEDIATE
    bruno.save(update_fields=["email_notifications"])
    addressed = Notification.objects.get(user=bruno, post=post)
    _remove(campaign, bruno)
    mail.outbox.clear()
    assert notify.send_notification_emails.call([addressed.pk]) == 0
    assert all(SECRET not in message.body and addressed.text not in message.body for message in mail.outbox)
    assert Notification.objects.get(pk=addressed.pk).emailed_at is not None
