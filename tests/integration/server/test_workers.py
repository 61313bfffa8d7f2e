"""The demo backend as four worker processes on one real PostgreSQL, with faults: clients send
duplicates and retries to other workers; a worker is SIGKILLed mid-run and PostgreSQL restarted
mid-run. Nothing is lost or applied twice, every replay is the first answer, and the database
outage is answered with typed transient refusals (``Retry-After``) until it recovers.

Bounded for the suite (50 clients x 6 calls); benchmarks/bench_workers.py runs the full size.
"""

from __future__ import annotations

import threading
from typing import Any

from demo.server.db import open_store
from demo.server.seed import open_seeded_store

from tests._shared.server.fleet import Worker, applied_once, run_clients, start_worker
from tests._shared.server.postgres import PostgresServer

CLIENTS, CALLS = 50, 6


def test_four_workers_one_postgres_with_a_killed_worker_and_a_database_restart(postgres: PostgresServer) -> None:
    dsn = postgres.create_database("fleet")
    open_seeded_store(dsn).close()  # seeded once, before the workers start
    workers: list[Worker] = [start_worker(dsn) for _ in range(4)]
    live = list(workers)
    faults: list[str] = []
    total = CLIENTS * CALLS
    fired = {"kill": False, "restart": False}
    lock = threading.Lock()

    def progress(done: int) -> None:
        restart = False
        with lock:
            if not fired["kill"] and done >= total // 4:
                fired["kill"] = True
                victim = live.pop(1)
                victim.kill()  # mid-run: its in-flight calls die with it
                faults.append("killed worker")
            elif not fired["restart"] and done >= total // 2:
                fired["restart"] = True
                restart = True
        if restart:
            postgres.restart()  # every worker's connections break at once
            faults.append("restarted postgres")

    try:
        run = run_clients(lambda: [w.url for w in live], clients=CLIENTS, calls=CALLS, progress=progress)
    finally:
        for worker in workers:
            worker.stop()
    assert faults == ["killed worker", "restarted postgres"]
    assert run.failed_calls == [] and run.untyped_failures == []
    assert run.calls == total
    assert run.replays == CLIENTS * (CALLS // 3) and run.replay_mismatches == []  # every one, through the faults
    assert run.transient_refusals > 0  # the restart was seen, and answered typed

    store = open_store(dsn)
    try:
        def fetch_all(sql: str) -> list[Any]:
            return store.fetch_all(sql)

        lost, doubled = applied_once(fetch_all, run)
        assert (lost, doubled) == ([], [])
        names = {row[0]: row[1] for row in store.fetch_all("SELECT id, name FROM devices")}
        # No partial writes: every device holds the name of its client's last acknowledged call.
        assert {device: names[device] for device in run.last_name} == run.last_name
        records = store.fetch_all("SELECT count(*) FROM agentsurface_invocations")[0][0]
        assert records == total
    finally:
        store.close()


def test_the_demo_with_four_workers_behind_one_socket_applies_each_call_once(postgres: PostgresServer) -> None:
    dsn = postgres.create_database("shared")
    worker = start_worker(dsn, workers=4)  # `python -m demo --database postgresql://... --workers 4`
    try:
        run = run_clients(lambda: [worker.url], clients=20, calls=6)
    finally:
        worker.stop()
    assert run.failed_calls == [] and run.untyped_failures == [] and run.replay_mismatches == []
    store = open_store(dsn)
    try:
        assert applied_once(store.fetch_all, run) == ([], [])
    finally:
        store.close()


def test_the_demo_refuses_to_start_on_an_unreachable_database_naming_it_without_the_password() -> None:
    import subprocess
    import sys

    from tests._shared.server.fleet import ROOT

    done = subprocess.run(
        [sys.executable, "-m", "demo", "--database", "postgresql://svc:hunter2@127.0.0.1:1/devices", "--no-build"],
        cwd=ROOT, capture_output=True, text=True, timeout=60,
    )
    assert done.returncode == 1
    assert "127.0.0.1:1" in done.stderr and "'devices'" in done.stderr
    assert "hunter2" not in done.stderr + done.stdout
