"""Concurrent appends to one campaign's log never leave a gap or a duplicate seq.

Each thread has its own database connection, as separate web workers would;
the head row's SELECT … FOR UPDATE puts them in one order.
"""

import threading

import pytest
from django.db import connection, connections

from rolls import services, verify_log
from rolls.models import CampaignLog, RollEntry
from tests.factories import plain_read
from tests.rolls.conftest import make_table, public_key

pytestmark = [
    pytest.mark.skipif(connection.vendor != "postgresql", reason="needs PostgreSQL row locks"),
    pytest.mark.django_db(transaction=True),
]

THREADS = 8
ROLLS_EACH = 5


def _in_threads(count: int, work) -> list[BaseException]:
    """Run ``work(n)`` in ``count`` threads started together; return their errors."""
    barrier = threading.Barrier(count)
    errors: list[BaseException] = []

    def run(n: int) -> None:
        try:
            barrier.wait(timeout=30)
            work(n)
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run, args=(n,)) for n in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not any(thread.is_alive() for thread in threads)
    return errors


def test_concurrent_appends_get_contiguous_seqs_and_an_unbroken_chain():
    table = make_table()

    def work(n: int) -> None:
        for i in range(ROLLS_EACH):
            services.roll_append(
                campaign=table.campaign,
                user=table.player,
                spec="3d10",
                purpose=f"hilo {n}",
                read=plain_read,
                client_seed=f"hilo{n}-{i}",
            )

    assert _in_threads(THREADS, work) == []
    entries = list(RollEntry.objects.filter(campaign=table.campaign).order_by("seq"))
    total = THREADS * ROLLS_EACH
    assert [e.seq for e in entries] == list(range(total + 1))
    assert [e.epoch_index for e in entries[1:]] == list(range(1, total + 1))
    assert len({e.client_seed for e in entries[1:]}) == total
    assert all(later.entry["prev"] == earlier.entry_hash for earlier, later in zip(entries, entries[1:], strict=False))
    log = CampaignLog.objects.get(campaign=table.campaign)
    assert (log.seq, log.head_hash, log.next_index) == (total, entries[-1].entry_hash, total + 1)
    report = verify_log.audit_log([e.signed.ref() for e in entries], public_key())
    assert report.ok, report.problems


def test_concurrent_retries_with_one_client_seed_make_one_entry():
    table = make_table()
    made: list[int] = []

    def work(n: int) -> None:
        entry = services.roll_append(
            campaign=table.campaign,
            user=table.player,
            spec="3d10",
            purpose="reintento",
            read=plain_read,
            client_seed="el-mismo",
        )
        made.append(entry.pk)

    assert _in_threads(4, work) == []
    assert len(set(made)) == 1 and len(made) == 4
    assert RollEntry.objects.filter(campaign=table.campaign).count() == 2


def test_concurrent_appends_across_an_epoch_boundary_stay_audit_clean(monkeypatch):
    monkeypatch.setattr(services, "EPOCH_LENGTH", 4)
    table = make_table()

    def work(n: int) -> None:
        for i in range(3):
            services.roll_append(
                campaign=table.campaign,
                user=table.player,
                spec="1d6",
                purpose="borde",
                read=plain_read,
                client_seed=f"borde{n}-{i}",
            )

    assert _in_threads(6, work) == []
    entries = list(RollEntry.objects.filter(campaign=table.campaign).order_by("seq"))
    # 18 rolls in epochs of 4: five epoch_open entries (the last one opened at once).
    assert [e.kind for e in entries].count("epoch_open") == 5
    assert [e.seq for e in entries] == list(range(len(entries)))
    report = verify_log.audit_log([e.signed.ref() for e in entries], public_key())
    assert report.ok, report.problems
