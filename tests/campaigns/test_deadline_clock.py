"""The clock's part of the deadlines (``deadlines.sweep``, run by
``clock.tick``): each reminder and each notice to the direction goes out
exactly once, the times are written in each member's own zone, and the
reminder's "one day before" is an absolute 24 hours around a change of the
clocks. These run on SQLite and on PostgreSQL; the two-threads test needs
PostgreSQL's row locks."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from django.core import mail
from django.core.exceptions import ValidationError
from django.db import connection, connections
from django.tasks import TaskResultStatus
from django.urls import reverse
from django.utils import timezone
from django_tasks_db.models import DBTaskResult

from accounts.models import User
from campaigns import clock, deadlines, notify
from campaigns.models import Deadline, Notification
from tests.conftest import run_worker
from tests.factories import write

pytestmark = pytest.mark.django_db

MADRID = ZoneInfo("Europe/Madrid")
Choice = User.EmailChoice


def _deadline(table, due_at, *, now=None, remind_before=deadlines.DEFAULT_REMIND) -> Deadline:
    return deadlines.set_deadline(
        campaign=table.campaign,
        scene=table.scene,
        kind=deadlines.SCENE,
        target_id=table.scene.pk,
        due_at=due_at,
        actor=table.gm,
        remind_before=remind_before,
        now=now,
    )


def _reminders():
    return Notification.objects.filter(kind=Notification.Kind.DEADLINE)


def test_a_reminder_goes_to_the_awaited_players_once(table):
    deadline = _deadline(table, timezone.now() + timedelta(hours=12))
    write(table.scene, table.other, "Ya he contestado.")
    assert deadlines.sweep() == 1
    assert deadlines.sweep() == 0
    reminder = _reminders().get()
    assert reminder.user == table.player
    assert reminder.url == table.scene.get_absolute_url()
    assert reminder.text.startswith("Recuerda: tienes hasta el ")
    assert "para responder a la escena «El vestíbulo» (La mansión)" in reminder.text
    deadline.refresh_from_db()
    assert deadline.reminded_at is not None and deadline.passed_at is None


def test_no_reminder_before_its_time(table):
    _deadline(table, timezone.now() + timedelta(hours=30))
    assert deadlines.sweep() == 0
    assert deadlines.sweep(now=timezone.now() + timedelta(hours=6, minutes=1)) == 2


def test_the_reminder_says_the_time_in_each_members_zone(table):
    table.player.time_zone = "America/Bogota"
    table.player.save()
    due = datetime(2030, 12, 6, 20, 0, tzinfo=MADRID)
    _deadline(table, due, now=due - timedelta(days=3))
    assert deadlines.sweep(now=due - timedelta(hours=20)) == 2
    assert "viernes 6 de diciembre, 14:00 (America/Bogota)" in _reminders().get(user=table.player).text
    assert "viernes 6 de diciembre, 20:00 (Europe/Madrid)" in _reminders().get(user=table.other).text


def test_when_it_passes_the_direction_is_told_once_with_a_link_to_settle_it(table):
    deadline = _deadline(table, timezone.now() + timedelta(hours=2))
    later = timezone.now() + timedelta(hours=3)
    # Passed without a reminder (the clock was away): only the direction's notice.
    assert deadlines.sweep(now=later) == 2
    assert deadlines.sweep(now=later) == 0
    told = _reminders()
    assert sorted(told.values_list("user_id", flat=True)) == sorted([table.gm.pk, table.cogm.pk])
    settle = reverse("campaigns:deadline-settle", args=[table.campaign.slug, deadline.pk])
    assert {n.url for n in told} == {settle}
    assert told.first().text == "Ha vencido el plazo de la escena «El vestíbulo» (La mansión). Decide qué hacer."
    deadline.refresh_from_db()
    assert deadline.passed_at == later and deadline.is_open


def test_a_deadline_that_awaits_nobody_any_more_is_withdrawn_instead(table):
    deadline = _deadline(table, timezone.now() + timedelta(hours=2))
    write(table.scene, table.player, "Contesto.")
    write(table.scene, table.other, "Y yo.")
    assert deadlines.sweep() == 0
    deadline.refresh_from_db()
    assert deadline.cancelled_at is not None and not _reminders().exists()
    assert deadlines.sweep(now=timezone.now() + timedelta(hours=3)) == 0


def test_a_deadline_of_a_kind_no_app_registers_waits_untouched(table):
    Deadline.objects.create(
        campaign=table.campaign,
        scene=table.scene,
        kind="olvidado",
        target_id=1,
        due_at=timezone.now() - timedelta(hours=1),
        created_by=table.gm,
    )
    assert deadlines.sweep() == 0
    assert Deadline.objects.get(kind="olvidado").passed_at is None


def test_the_clock_task_run_twice_sends_each_reminder_once(table, database_tasks):
    _deadline(table, timezone.now() + timedelta(hours=12))
    clock.tick.enqueue()
    clock.tick.enqueue()
    run_worker()
    assert _reminders().count() == 2
    ticks = DBTaskResult.objects.filter(task_path=clock.tick.module_path, status=TaskResultStatus.SUCCESSFUL)
    assert sorted(result.return_value["deadlines"] for result in ticks) == [0, 2]


def test_a_mail_failure_leaves_one_notification_and_the_mail_is_retried(
    table, database_tasks, settings, django_capture_on_commit_callbacks
):
    settings.MAILERS = {"default": {"BACKEND": "tests.campaigns.notify_helpers.BrokenBackend"}}
    User.objects.filter(pk__in=[table.player.pk, table.other.pk]).update(email_notifications=Choice.IMMEDIATE)
    _deadline(table, timezone.now() + timedelta(hours=12))
    with django_capture_on_commit_callbacks(execute=True):
        assert deadlines.sweep() == 2
    run_worker()
    retry = DBTaskResult.objects.get(task_path=notify.send_notification_emails.module_path, status="READY")
    assert retry.args_kwargs["args"][1] == 2
    # The clock comes again: nothing new is written, and the mail waits for its retry.
    with django_capture_on_commit_callbacks(execute=True):
        assert deadlines.sweep() == 0
    assert _reminders().count() == 2
    assert not _reminders().filter(emailed_at__isnull=False).exists()
    settings.MAILERS = {"default": {"BACKEND": "django.core.mail.backends.locmem.EmailBackend"}}
    notify.send_notification_emails.call(*retry.args_kwargs["args"])
    assert sorted(m.to[0] for m in mail.outbox) == sorted([table.player.email, table.other.email])
    assert _reminders().filter(emailed_at__isnull=True).count() == 0


def test_a_failing_deadline_does_not_stop_the_others_and_is_tried_again(table, monkeypatch, caplog):
    _deadline(table, timezone.now() + timedelta(hours=12))
    real = notify.notify_users
    calls = {"n": 0}

    def flaky(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 1:
            raise ConnectionError("the database hiccups")
        return real(*args, **kwargs)

    monkeypatch.setattr(notify, "notify_users", flaky)
    assert deadlines.sweep() == 0
    assert "could not be handled" in caplog.text
    assert Deadline.objects.get().reminded_at is None  # the claim was rolled back
    assert deadlines.sweep() == 2


# --- time zones and the changes of the clocks ------------------------------------------------


def test_the_repeated_hour_is_taken_the_first_time():
    field = deadlines.DeadlineField(zone=MADRID)
    due = field.clean("2026-10-25T02:30")
    assert due.astimezone(UTC) == datetime(2026, 10, 25, 0, 30, tzinfo=UTC)
    assert deadlines.when_text(due, MADRID) == "domingo 25 de octubre, 02:30 (Europe/Madrid)"


def test_the_skipped_hour_is_refused():
    field = deadlines.DeadlineField(zone=MADRID)
    with pytest.raises(ValidationError) as refused:
        field.clean("2026-03-29T02:30")
    assert refused.value.messages == [
        "Esa hora no existe ese día en Europe/Madrid (se adelantan los relojes). Elige otra."
    ]


def test_a_deadline_in_the_repeated_hour_is_stored_and_swept_in_utc(table):
    due = deadlines.DeadlineField(zone=MADRID).clean("2026-10-25T02:30")
    deadline = _deadline(table, due, now=datetime(2026, 10, 20, tzinfo=UTC))
    deadline.refresh_from_db()
    assert deadline.due_at == datetime(2026, 10, 25, 0, 30, tzinfo=UTC)
    assert deadlines.sweep(now=datetime(2026, 10, 24, 0, 29, tzinfo=UTC)) == 0
    assert deadlines.sweep(now=datetime(2026, 10, 24, 0, 30, tzinfo=UTC)) == 2


def test_one_day_before_is_24_hours_across_the_change_of_the_clocks(table):
    # Sunday 29 March 2026, 12:00 in Madrid (CEST, 10:00 UTC): the clocks went
    # forward that night, so 24 hours before is Saturday 11:00 (CET), not 12:00.
    due = datetime(2026, 3, 29, 12, 0, tzinfo=MADRID)
    _deadline(table, due, now=datetime(2026, 3, 20, tzinfo=UTC))
    assert deadlines.sweep(now=datetime(2026, 3, 28, 10, 59, tzinfo=MADRID)) == 0
    assert deadlines.sweep(now=datetime(2026, 3, 28, 11, 0, tzinfo=MADRID)) == 2
    reminder = _reminders().first()
    assert "domingo 29 de marzo, 12:00 (Europe/Madrid)" in reminder.text


# --- two clocks at once -----------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(connection.vendor != "postgresql", reason="needs PostgreSQL row locks to run two sweeps at once")
def test_two_sweeps_at_once_send_each_notice_once():
    from tests.campaigns.conftest import make_table

    table = make_table()
    _deadline(table, timezone.now() + timedelta(hours=12))
    barrier = threading.Barrier(2)
    results, errors = [], []

    def run():
        try:
            barrier.wait(timeout=10)
            results.append(deadlines.sweep())
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert errors == []
    assert sorted(results) == [0, 2]
    assert _reminders().count() == 2
