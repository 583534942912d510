"""Issue 29 follow-up: a deadline's notices go only to whom the campaign
still counts (an active member or the direction) and name the scene only to
those who may open it — whatever the kind says it awaits (a roll request
awaits its character's owner, removed or not)."""

from datetime import timedelta

import pytest
from django.core import mail
from django.utils import timezone

from accounts.models import User
from campaigns import deadlines, notify, services
from campaigns.models import Membership, Notification
from tests.table.test_request_deadlines import _ask

pytestmark = pytest.mark.django_db


def _reminders():
    return Notification.objects.filter(kind=Notification.Kind.DEADLINE)


def test_a_removed_player_gets_no_reminder_and_nothing_in_the_digest(play):
    play.ana.email_notifications = User.EmailChoice.DIGEST
    play.ana.save()
    _ask(play, due_at=timezone.now() + timedelta(hours=12))
    membership = Membership.objects.get(campaign=play.campaign, user=play.ana)
    services.member_remove(membership=membership, actor=play.gm, reason="Se acabó")
    deadlines.sweep()
    assert not _reminders().filter(user=play.ana).exists()
    mail.outbox.clear()
    notify.digest_send(user=play.ana)
    digest = "".join(message.body for message in mail.outbox)
    assert "Recuerda" not in digest and "El vestíbulo" not in digest


def test_the_reminder_names_the_scene_only_to_whom_may_open_it(play):
    _ask(play, due_at=timezone.now() + timedelta(hours=12))
    play.scene.everyone = False
    play.scene.save(update_fields=["everyone"])
    play.scene.participants.set([play.bruno])
    assert deadlines.sweep() == 1
    text = _reminders().get(user=play.ana).text
    assert "El vestíbulo" not in text
    assert text.startswith("Recuerda: tienes hasta el ") and "(La mansión)" in text


def test_more_time_is_told_to_an_active_member_with_the_scene_and_not_to_one_removed(play):
    _ask(play, due_at=timezone.now() + timedelta(hours=12))
    deadline = deadlines.Deadline.objects.get()
    deadlines.deadline_extend(deadline=deadline, due_at=timezone.now() + timedelta(days=3), actor=play.gm)
    assert "«El vestíbulo»" in _reminders().get(user=play.ana).text
    _reminders().delete()
    membership = Membership.objects.get(campaign=play.campaign, user=play.ana)
    services.member_remove(membership=membership, actor=play.gm, reason="Se acabó")
    deadlines.deadline_extend(deadline=deadline, due_at=timezone.now() + timedelta(days=4), actor=play.gm)
    assert not _reminders().exists()


def test_a_withdrawal_names_the_scene_only_to_whom_may_open_it(play):
    _ask(play, due_at=timezone.now() + timedelta(hours=30))
    play.scene.everyone = False
    play.scene.save(update_fields=["everyone"])
    play.scene.participants.set([play.bruno])
    deadlines.deadline_withdraw(deadline=deadlines.Deadline.objects.get(), actor=play.gm)
    text = _reminders().get(user=play.ana).text
    assert text.startswith("La dirección retiró el plazo de ") and "El vestíbulo" not in text
