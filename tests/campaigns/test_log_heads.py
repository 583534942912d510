"""The head of the roll log travels with the e-mails and the feeds (issue 18,
item 2): a reader who keeps them holds witnesses of the log's length, which
catch a log that later lost its last entries. The forum asks the rolls app
through ``extensions.log_heads`` (it cannot import it)."""

from __future__ import annotations

from xml.etree import ElementTree

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from accounts.models import User
from campaigns import extensions, notify
from campaigns.feeds import ROLLOG_NAMESPACE, gm_feed_path
from campaigns.models import Membership, Notification, Visibility
from rolls.models import CampaignLog
from tests.conftest import client_for
from tests.factories import UserFactory, make_post, roll
from tests.rolls.conftest import make_table

pytestmark = pytest.mark.django_db

Choice = User.EmailChoice
ATOM = "{http://www.w3.org/2005/Atom}"


@pytest.fixture(autouse=True)
def _site_url(settings):
    settings.SITE_URL = "https://hitos.example"


def _world(visibility=Visibility.PUBLIC, rolls=2):
    world = make_table(visibility)
    for _ in range(rolls):
        roll(world)
    return world


def _line(world) -> str:
    log = CampaignLog.objects.get(campaign=world.campaign)
    return f"Registro de tiradas de «{world.campaign.title}»: entrada n.º {log.seq}, cabeza {log.head_hash[:16]}"


def _notify(world, recipient, choice=Choice.IMMEDIATE) -> list[Notification]:
    recipient.email_notifications = choice
    recipient.save(update_fields=["email_notifications"])
    written = make_post(world.scene, world.other)
    return [n for n in notify.notify_post_readers(written) if n.user_id == recipient.pk]


def test_the_log_heads_hook_asks_the_rolls_app_once_and_not_at_all_for_nothing(django_assert_num_queries):
    world = _world()
    log = CampaignLog.objects.get(campaign=world.campaign)
    with django_assert_num_queries(1):
        assert extensions.log_heads([world.campaign.pk, world.campaign.pk, 0]) == {
            world.campaign.pk: (log.seq, log.head_hash)
        }
    with django_assert_num_queries(0):
        assert extensions.log_heads([]) == {}


def test_a_notification_e_mail_carries_the_logs_seq_and_head(mailoutbox):
    world = _world()
    (notification,) = _notify(world, world.player)
    assert notify.send_notification_emails.call([notification.pk]) == 1
    (message,) = mailoutbox
    assert _line(world) in message.body
    log = CampaignLog.objects.get(campaign=world.campaign)
    assert log.seq >= 2 and f"entrada n.º {log.seq}," in message.body


def test_the_heads_of_many_notifications_are_read_in_one_query(mailoutbox):
    worlds = [_world(rolls=1) for _ in range(3)]
    pending = [n.pk for world in worlds for user in (world.player, world.gm) for n in _notify(world, user)]
    assert len(pending) == 6
    with CaptureQueriesContext(connection) as captured:
        assert notify.send_notification_emails.call(pending) == 6
    assert sum("rolls_campaignlog" in query["sql"] for query in captured.captured_queries) == 1
    for world in worlds:
        assert sum(_line(world) in message.body for message in mailoutbox) == 2


def test_the_head_is_only_told_to_who_may_read_the_log():
    private = _world(Visibility.PRIVATE)
    public = _world(Visibility.PUBLIC)
    outsider = UserFactory()
    left = UserFactory()
    Membership.objects.create(campaign=private.campaign, user=left, status=Membership.Status.LEFT)
    pairs = [
        (outsider.pk, private.campaign.pk),
        (left.pk, private.campaign.pk),
        (private.reader.pk, private.campaign.pk),
        (private.gm.pk, private.campaign.pk),
        (outsider.pk, public.campaign.pk),
    ]
    assert set(notify.log_heads_for(pairs)) == {
        (private.reader.pk, private.campaign.pk),
        (private.gm.pk, private.campaign.pk),
        (outsider.pk, public.campaign.pk),
    }


def test_the_digest_has_a_head_line_per_campaign(mailoutbox):
    first, second = _world(rolls=1), _world(rolls=3)
    reader = first.reader
    Membership.objects.create(campaign=second.campaign, user=reader)
    _notify(first, reader, Choice.DIGEST)
    _notify(second, reader, Choice.DIGEST)
    assert notify.digest_send(user=reader)
    (message,) = mailoutbox
    assert _line(first) in message.body and _line(second) in message.body


def test_the_return_e_mail_carries_the_head():
    world = _world()
    message = notify.return_email(world.player, world.campaign, [], [])
    assert _line(world) in message.body


def _head(response) -> ElementTree.Element:
    assert response.status_code == 200
    root = ElementTree.fromstring(response.content)
    assert root.tag == f"{ATOM}feed"
    (head,) = root.findall(f"{{{ROLLOG_NAMESPACE}}}head")
    return head


def test_the_campaign_wide_feeds_carry_the_head():
    world = _world()
    log = CampaignLog.objects.get(campaign=world.campaign)
    membership = Membership.objects.get(campaign=world.campaign, user=world.player)
    for url in (
        reverse("campaigns:campaign-feed", args=[world.campaign.slug]),
        reverse("campaigns:member-feed", args=[membership.feed_token]),
        gm_feed_path(world.campaign),
    ):
        head = _head(client_for(None).get(url))
        assert (head.get("seq"), head.text) == (str(log.seq), log.head_hash)
    roll(world)
    log.refresh_from_db()
    head = _head(client_for(None).get(reverse("campaigns:campaign-feed", args=[world.campaign.slug])))
    assert head.get("seq") == str(log.seq)
