"""Jobs that run once a day on the task worker (the e-mail digest, the audit
of the roll logs).

Each daily job is a task that, when it has run, enqueues its next run for the
same hour of the next day (in the site's time zone). ``manage.py
start_daily_tasks`` starts every chain that is not already waiting; it is
safe to run at every deployment. The chains need a backend that keeps tasks
and can defer them (the database backend); with any other (the immediate one
of the tests) there is nothing to schedule and a job only runs when called.

The apps register their jobs from their ``ready()``; this module, low in the
layers, knows none of them.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, time, timedelta

from django.tasks import Task
from django.utils import timezone


@dataclass(frozen=True)
class DailyJob:
    task: Task
    at: time | None  # local time of day in the site's time zone
    # Or, for a job that runs all day long (the deadlines' reminders): how
    # long after one run the next one runs.
    every: timedelta | None = None


JOBS: dict[str, DailyJob] = {}


def register(task: Task, *, at: time) -> None:
    """Run ``task`` every day at ``at`` once its chain has started."""
    JOBS[task.module_path] = DailyJob(task=task, at=at)


def register_every(task: Task, *, every: timedelta) -> None:
    """Run ``task`` again ``every`` after each run once its chain has started."""
    JOBS[task.module_path] = DailyJob(task=task, at=None, every=every)


def next_run(at: time, now: datetime | None = None) -> datetime:
    """The next moment, strictly after ``now``, whose local time is ``at``."""
    zone = timezone.get_default_timezone()
    local_now = timezone.localtime(now, zone)
    candidate = timezone.make_aware(datetime.combine(local_now.date(), at), zone)
    if candidate <= local_now:
        candidate = timezone.make_aware(datetime.combine(local_now.date() + timedelta(days=1), at), zone)
    return candidate


def keeps_tasks(task: Task) -> bool:
    """Whether ``task``'s backend keeps tasks and can defer them (the chains need it)."""
    from django_tasks_db import DatabaseBackend

    backend = task.get_backend()
    return isinstance(backend, DatabaseBackend) and backend.supports_defer


def _waiting(task: Task) -> bool:
    from django.tasks import TaskResultStatus
    from django_tasks_db.models import DBTaskResult

    return DBTaskResult.objects.filter(
        task_path=task.module_path, backend_name=task.backend, status=TaskResultStatus.READY
    ).exists()


def schedule_next(task: Task, now: datetime | None = None) -> datetime | None:
    """Enqueue the next run of the daily job ``task`` unless one is already
    waiting. Returns when it will run, or ``None`` when nothing was enqueued."""
    job = JOBS[task.module_path]
    if not keeps_tasks(task) or _waiting(task):
        return None
    when = (now or timezone.now()) + job.every if job.every is not None else next_run(job.at, now)
    task.using(run_after=when).enqueue()
    return when


def start_all(now: datetime | None = None) -> dict[str, datetime | None]:
    """Start every registered chain not already waiting: {task path: next run}."""
    return {path: schedule_next(job.task, now) for path, job in sorted(JOBS.items())}
