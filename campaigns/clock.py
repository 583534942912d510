"""The job that runs all day long on the task worker, every few minutes:
deadlines' reminders and notices (``deadlines.sweep``) and the members back
from an absence (``absences.notice_returns``). Each step is safe to run
twice: what it sends is marked sent in the same transaction."""

from __future__ import annotations

import logging
from datetime import timedelta

from django.tasks import task

from campaigns import absences, daily, deadlines

logger = logging.getLogger(__name__)

EVERY = timedelta(minutes=5)


@task
def tick() -> dict[str, int]:
    """One round of the clock; the next one is enqueued even if this fails."""
    done: dict[str, int] = {}
    try:
        for name, step in (("deadlines", deadlines.sweep), ("returns", absences.notice_returns)):
            try:
                done[name] = step()
            except Exception:
                logger.exception("The clock's step %s failed", name)
    finally:
        daily.schedule_next(tick)
    return done
