"""The demo backend under 1 and 4 worker processes, on SQLite (one file) and PostgreSQL (a
throwaway server this script starts): throughput and latency percentiles (a script, not a test).

    .venv/bin/python benchmarks/bench_workers.py [--clients 50] [--calls 200] [--json]
                                                 [--stores sqlite,postgresql] [--workers 1,4]

Each configuration serves ``python -m demo --workers N`` (one socket, N processes) over a fresh,
seeded database; ``--clients`` threads each make ``--calls`` renames under fresh invocation ids,
every third one sent again (a replay, checked identical). Afterwards the database must show every
acknowledged call applied exactly once. Printed per configuration: calls, wall time, calls/s,
p50/p95/p99 latency in ms. Needs PostgreSQL's server binaries (Debian: apt-get install postgresql).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from contextlib import ExitStack
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from demo.server.db import open_store  # noqa: E402
from demo.server.seed import open_seeded_store  # noqa: E402
from tests._shared.server.fleet import applied_once, figures, run_clients, start_worker  # noqa: E402
from tests._shared.server.postgres import running_postgres  # noqa: E402


def measure(database: str, workers: int, clients: int, calls: int) -> dict[str, object]:
    open_seeded_store(database, reset=True).close()
    worker = start_worker(database, workers=workers)
    try:
        run = run_clients(lambda: [worker.url], clients=clients, calls=calls)
    finally:
        worker.stop()
    store = open_store(database)
    try:
        lost, doubled = applied_once(store.fetch_all, run)
    finally:
        store.close()
    problems = len(run.failed_calls) + len(run.untyped_failures) + len(run.replay_mismatches) + len(lost) + len(doubled)
    return {**figures(run), "replays": run.replays, "lost": len(lost), "doubled": len(doubled),
            "failed": len(run.failed_calls) + len(run.untyped_failures), "replay_mismatches": len(run.replay_mismatches),
            "ok": problems == 0}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--stores", default="sqlite,postgresql")
    parser.add_argument("--workers", default="1,4")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    results: list[dict[str, object]] = []
    with ExitStack() as stack:
        folder = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        pg = stack.enter_context(running_postgres()) if "postgresql" in args.stores else None
        for kind in args.stores.split(","):
            for workers in (int(w) for w in args.workers.split(",")):
                if kind == "sqlite":
                    database = f"sqlite:///{folder / f'bench-{workers}.sqlite3'}"
                else:
                    assert pg is not None
                    database = pg.create_database("bench")
                row = {"store": kind, "workers": workers, **measure(database, workers, args.clients, args.calls)}
                results.append(row)
                if not args.json:
                    print(f"{kind:<10} {workers} worker(s): {row['calls']} calls in {row['seconds']} s = "
                          f"{row['calls_per_second']} calls/s; p50 {row['p50_ms']} ms, p95 {row['p95_ms']} ms, "
                          f"p99 {row['p99_ms']} ms; replays {row['replays']}, lost {row['lost']}, "
                          f"doubled {row['doubled']}, failed {row['failed']}", flush=True)
    if args.json:
        print(json.dumps(results, indent=2))
    return 0 if all(r["ok"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
