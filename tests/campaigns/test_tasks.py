"""The work a request need not wait for runs on the task worker.

These tests put the site's database task backend back (the suite runs tasks
at once) and run the worker as ``manage.py db_worker --batch`` does.
"""

import logging
from datetime import datetime, time, timedelta
from io import StringIO
from zoneinfo import ZoneInfo

import pytest
from django.core import mail
from django.core.management import call_command
from django.db import transaction
from django.tasks import TaskResultStatus
from django.utils import timezone
from django_tasks_db.models import DBTaskResult

from accounts.models import User
from campaigns import clock, daily, notify, services
from campaigns.models import Notification, Post
from campaigns.permissions import campaign_access
from tests.conftest import run_worker
from tests.factories import CampaignFactory, UserFactory
from tests.factories import add_member as member
from tests.factories import make_scene as scene

pytestmark = pytest.mark.django_db

Choice = User.EmailChoice
MADRID = ZoneInfo("Europe/Madrid")


def _table():
    campaign = CampaignFactory(gm=UserFactory(email_notifications=Choice.IMMEDIATE, email="gm@example.org"))
    ana = member(campaign, email_notifications=Choice.IMMEDIATE, email="ana@example.org")
    bea = member(campaign, email_notifications=Choice.NEVER, email="bea@example.org")
    return campaign, ana, bea


def _publish(campaign, author, body="Hola") -> Post:
    access = campaign_access(author, campaign)
    return services.post_create(access=access, scene=scene(campaign), voice=Post.Voice.OOC, body=body)


def _waiting(task) -> int:
    return DBTaskResult.objects.filter(task_path=task.module_path, status=TaskResultStatus.READY).count()


def test_a_post_leaves_its_fan_out_to_the_worker_and_the_worker_notifies_then_mails(
    database_tasks, django_capture_on_commit_callbacks
):
    campaign, ana, bea = _table()
    with django_capture_on_commit_callbacks(execute=True):
        written = _publish(campaign, ana)
    # The request wrote the post and one task row, nothing per member.
    assert not Notification.objects.filter(post=written).exists()
    assert _waiting(notify.post_fan_out) == 1
    with django_capture_on_commit_callbacks(execute=True):
        run_worker()
    assert set(Notification.objects.filter(post=written).values_list("user_id", flat=True)) == {
        campaign.gm_id,
        bea.pk,
    }
    assert mail.outbox == []  # The e-mail is a task of its own, enqueued once the rows were committed.
    assert _waiting(notify.send_notification_emails) == 1
    run_worker()
    assert [m.to for m in mail.outbox] == [["gm@example.org"]]
    assert Notification.objects.get(post=written, user=campaign.gm).emailed_at is not None
    assert DBTaskResult.objects.exclude(status=TaskResultStatus.SUCCESSFUL).count() == 0


def test_a_rolled_back_post_leaves_no_task(database_tasks):
    campaign, ana, _bea = _table()
    with pytest.raises(RuntimeError), transaction.atomic():
        _publish(campaign, ana)
        raise RuntimeError("the request fails after the post")
    assert DBTaskResult.objects.count() == 0


def test_a_post_deleted_before_the_worker_runs_notifies_nobody(database_tasks):
    campaign, ana, _bea = _table()
    written = _publish(campaign, ana)
    Post.objects.filter(pk=written.pk).delete()
    run_worker()
    assert Notification.objects.count() == 0
    assert DBTaskResult.objects.get(task_path=notify.post_fan_out.module_path).return_value == 0


def test_an_e_mail_task_run_twice_sends_each_message_once(database_tasks):
    campaign, ana, _bea = _table()
    notification = Notification.objects.create(user=campaign.gm, campaign=campaign, kind="post", text="x", url="/")
    notify.send_notification_emails.enqueue([notification.pk])
    notify.send_notification_emails.enqueue([notification.pk])
    run_worker()
    assert len(mail.outbox) == 1


def test_a_mail_server_failure_is_tried_again_later_for_the_messages_not_sent(database_tasks, settings, caplog):
    settings.MAILERS = {"default": {"BACKEND": "tests.campaigns.notify_helpers.BrokenBackend"}}
    campaign, ana, _bea = _table()
    rows = [
        Notification.objects.create(user=user, campaign=campaign, kind="post", text="x", url="/")
        for user in (campaign.gm, ana)
    ]
    notify.send_notification_emails.enqueue([row.pk for row in rows])
    with caplog.at_level(logging.ERROR, logger="campaigns.notify"):
        run_worker()
    assert "Could not send 2 notification e-mails (attempt 1)" in caplog.text
    retry = DBTaskResult.objects.get(status=TaskResultStatus.READY)
    assert retry.task_path == notify.send_notification_emails.module_path
    assert retry.args_kwargs == {"args": [[rows[0].pk, rows[1].pk], 2], "kwargs": {}}
    assert retry.run_after > datetime.now(MADRID) + timedelta(minutes=4)
    assert Notification.objects.filter(emailed_at__isnull=False).count() == 0


def test_after_the_last_attempt_nothing_more_is_enqueued(database_tasks, settings):
    settings.MAILERS = {"default": {"BACKEND": "tests.campaigns.notify_helpers.BrokenBackend"}}
    campaign, _ana, _bea = _table()
    row = Notification.objects.create(user=campaign.gm, campaign=campaign, kind="post", text="x", url="/")
    notify.send_notification_emails.enqueue([row.pk], notify.EMAIL_ATTEMPTS)
    run_worker()
    assert _waiting(notify.send_notification_emails) == 0


# --- the daily jobs ------------------------------------------------------------


def test_next_run_is_the_next_local_time_of_day():
    at = time(7, 0)
    assert daily.next_run(at, datetime(2026, 12, 1, 6, 59, tzinfo=MADRID)) == datetime(2026, 12, 1, 7, 0, tzinfo=MADRID)
    assert daily.next_run(at, datetime(2026, 12, 1, 7, 0, tzinfo=MADRID)) == datetime(2026, 12, 2, 7, 0, tzinfo=MADRID)
    # Across the change to summer time the job keeps its local hour.
    after = daily.next_run(time(4, 0), datetime(2027, 3, 28, 1, 0, tzinfo=MADRID))
    assert after.astimezone(MADRID).hour == 4 and after.utcoffset() == timedelta(hours=2)


def test_the_daily_jobs_are_registered():
    assert set(daily.JOBS) == {
        "campaigns.notify.send_digests",
        "campaigns.clock.tick",
        "rolls.audit.audit_logs",
        "rolls.checkpoints.daily_checkpoints",
    }


def test_starting_the_daily_jobs_twice_enqueues_each_once(database_tasks):
    out = StringIO()
    for _ in range(2):
        call_command("start_daily_tasks", stdout=out)
    assert _waiting(notify.send_digests) == 1
    assert _waiting(clock.tick) == 1
    assert DBTaskResult.objects.filter(status=TaskResultStatus.READY).count() == 4
    assert out.getvalue().count("próxima ejecución") == 4
    assert out.getvalue().count("ya está en cola") == 4


def test_the_clock_runs_again_a_few_minutes_later_even_when_a_step_fails(database_tasks, monkeypatch):
    def broken(now=None):
        raise ConnectionRefusedError("database hiccup")

    monkeypatch.setattr(clock.deadlines, "sweep", broken)
    before = timezone.now()
    clock.tick.enqueue()
    run_worker()
    follow_up = DBTaskResult.objects.get(status=TaskResultStatus.READY, task_path=clock.tick.module_path)
    assert before + clock.EVERY <= follow_up.run_after <= timezone.now() + clock.EVERY


def test_a_daily_job_enqueues_its_next_run_even_when_it_fails(database_tasks, monkeypatch):
    def broken():
        raise ConnectionRefusedError("mail server down")

    monkeypatch.setattr(notify, "digest_send_all", broken)
    notify.send_digests.enqueue()
    run_worker()
    assert DBTaskResult.objects.get(status=TaskResultStatus.FAILED).task_path == notify.send_digests.module_path
    follow_up = DBTaskResult.objects.get(status=TaskResultStatus.READY)
    assert follow_up.run_after.astimezone(MADRID).time() == time(7, 0)


def test_the_daily_jobs_need_a_backend_that_keeps_tasks():
    out = StringIO()
    call_command("start_daily_tasks", stdout=out)
    assert DBTaskResult.objects.count() == 0
    assert "no guarda tareas" in out.getvalue()
