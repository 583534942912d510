"""Benchmark of the signed roll log: `python bench/bench_rolls.py`.

Needs DATABASE_URL pointing at PostgreSQL (the row lock is what is measured),
for example::

    createdb -h 127.0.0.1 -U postgres hitos_bench
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/hitos_bench python bench/bench_rolls.py

The script migrates that database, then prints:

- appends per second to one campaign's log (HITOS checks through
  ``systems.hitos.reading.hitos_check_roll``, the real path: head row locked, seed
  slot, HMAC draw, reading, Ed25519 signature, insert) with 1, 4 and 16
  concurrent clients, each a thread with its own database connection;
- the time to verify a 10 000-entry export (fetched page by page from the
  export view) with ``rolls.verify_log``, in process and as the offline
  command ``python -m rolls.verify_log``.

Targets (issue 5): at least 200 appends/s with one client; a 10 000-entry
export verified in under 10 s. Every run adds campaigns to the database
(entries are never deleted); use a database kept for benchmarks.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

APPEND_TARGET = 200.0
VERIFY_TARGET_S = 10.0
EXPORT_ENTRIES = 10_000


def setup_django() -> None:
    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith(("postgres://", "postgresql://")):
        sys.exit("bench_rolls needs DATABASE_URL=postgres://… (the benchmark measures PostgreSQL's row lock).")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "hitos_site.settings")
    # Development keys under var/ unless the environment provides real ones.
    os.environ.setdefault("DEBUG", "1")
    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    # As in production: with DEBUG on, Django records and formats every query.
    settings.DEBUG = False


def new_campaign(label: str):
    from accounts.models import User
    from campaigns.models import Campaign, Visibility
    from rolls import services

    stamp = f"{label}-{time.time_ns()}"
    gm = User.objects.create_user(username=f"bench-{stamp}", email=f"{stamp}@example.org", password=None)
    campaign = Campaign.objects.create(
        title=f"Bench {stamp}", slug=f"bench-{stamp}", gm=gm, visibility=Visibility.PUBLIC
    )
    services.log_open(campaign=campaign)
    return campaign, gm


def append_rate(clients: int, appends: int, label: str) -> tuple[float, object]:
    """Appends per second with ``clients`` threads sharing ``appends`` rolls."""
    from django.db import connections

    from systems.hitos import reading as hitos_reading

    campaign, user = new_campaign(label)
    # Warm the process: the epoch's chain checkpoints are built on first use.
    hitos_reading.hitos_check_roll(campaign=campaign, user=user, purpose="calentar", modifier=0, difficulty=15)
    per_client = [appends // clients + (1 if n < appends % clients else 0) for n in range(clients)]
    barrier = threading.Barrier(clients + 1)
    errors: list[BaseException] = []

    def work(n: int) -> None:
        try:
            barrier.wait()
            for i in range(per_client[n]):
                hitos_reading.hitos_check_roll(
                    campaign=campaign,
                    user=user,
                    purpose=f"Reflejos + Sigilo ({n}/{i})",
                    modifier=8,
                    difficulty=15,
                    breakdown=[("Reflejos", 5), ("Sigilo", 3)],
                    client_seed=f"b{n}x{i}",
                )
        except BaseException as exc:  # reported below
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=work, args=(n,)) for n in range(clients)]
    for thread in threads:
        thread.start()
    barrier.wait()
    start = time.perf_counter()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - start
    if errors:
        raise SystemExit(f"{len(errors)} client(s) failed; first: {errors[0]!r}")
    return appends / elapsed, campaign


def fetch_export(campaign) -> list[dict]:
    """Every page of the campaign's export, through the export view."""
    from django.test import Client
    from django.urls import reverse

    client = Client(SERVER_NAME="localhost")
    pages, url = [], reverse("rolls:log-export", args=[campaign.slug])
    while url:
        response = client.get(url)
        if response.status_code != 200:
            raise SystemExit(f"export page {url} answered {response.status_code}")
        page = json.loads(response.content)
        pages.append(page)
        url = page["next"].split("localhost", 1)[1] if page["next"] else None
    return pages


def verify_export(campaign) -> tuple[int, float, float]:
    from django.conf import settings

    from rolls import verify_log, verify_roll

    pages = fetch_export(campaign)
    key_hex = settings.ROLLOG_KEYS.public_key_hex
    with tempfile.TemporaryDirectory() as tmp:
        paths = []
        for n, page in enumerate(pages):
            path = Path(tmp) / f"page{n:03d}.json"
            path.write_text(json.dumps(page), encoding="utf-8")
            paths.append(str(path))
        start = time.perf_counter()
        refs = [ref for path in paths for ref in verify_log.export_entries(verify_roll.read_json(path))]
        report = verify_log.audit_log(refs, verify_roll.parse_public_key(key_hex))
        in_process = time.perf_counter() - start
        if not report.ok:
            raise SystemExit(f"the export did not audit clean: {report.problems[:3]}")
        start = time.perf_counter()
        result = subprocess.run(
            [sys.executable, "-m", "rolls.verify_log", *paths, key_hex], cwd=ROOT, capture_output=True, text=True
        )
        command = time.perf_counter() - start
        if result.returncode != 0:
            raise SystemExit(f"python -m rolls.verify_log failed:\n{result.stdout}{result.stderr}")
    return report.count, in_process, command


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--appends", type=int, default=2000, help="appends per concurrency level (default 2000)")
    args = parser.parse_args()
    setup_django()
    from django.db import connection

    print(
        f"PostgreSQL {connection.cursor().connection.info.server_version}, Python {sys.version.split()[0]}, "
        f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at start"
    )
    rates = {}
    export_campaign = None
    for clients in (1, 4, 16):
        # The one-client run also fills the 10 000-entry log that is exported below.
        appends = EXPORT_ENTRIES - 2 if clients == 1 else args.appends
        rate, campaign = append_rate(clients, appends, f"c{clients}")
        rates[clients] = rate
        if clients == 1:
            export_campaign = campaign
        print(f"appends/s with {clients:2d} client(s): {rate:8.1f}  ({appends} appends to one campaign's log)")
    count, in_process, command = verify_export(export_campaign)
    print(f"load average {os.getloadavg()[0]:.1f} at the end (other processes slow every figure down)")
    print(
        f"verify a {count}-entry export: {in_process:6.2f} s in process, {command:6.2f} s as python -m rolls.verify_log"
    )
    ok = rates[1] >= APPEND_TARGET and in_process < VERIFY_TARGET_S and command < VERIFY_TARGET_S
    print(
        f"targets (≥ {APPEND_TARGET:.0f} appends/s with one client; export verified < {VERIFY_TARGET_S:.0f} s): "
        f"{'met' if ok else 'NOT met'}"
    )
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
