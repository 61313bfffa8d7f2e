"""A bounded local load test of the procedure server (a script, not a test).

    .venv/bin/python benchmarks/bench_server_load.py [--clients 50] [--calls 200] [--json]

Starts the procedure server under uvicorn in a child process on 127.0.0.1 (an ephemeral port,
a fresh SQLite file in a temporary directory), then runs ``--clients`` concurrent clients, each
with its own bearer token, making ``--calls`` calls: mostly writes (a note under a new
invocation id), some retries of the previous write under the same id, some reads. A 429 is
waited out (``retryAfterMs``) and the same call sent again. Every request has a timeout and the
whole run a deadline; the child is stopped at the end.

Checked afterwards, from the database: every acknowledged write is there exactly once (no lost,
no doubled write), every retry was a replay, and no call failed except by rate limiting.
Printed: calls, wall time, throughput, p50/p95/p99 latency in ms.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from pydantic import BaseModel, Field
from starlette.requests import Request

from agentsurface import ProcedureContract
from agentsurface.server import (
    Caller,
    ProcedureCall,
    ProcedureServer,
    RateLimit,
    SqliteInvocationStore,
    serve,
)


class NoteInput(BaseModel):
    text: str = Field(min_length=1, max_length=200)


ADD_NOTE = ProcedureContract(
    id="domain:notes.add",
    description="Add a note to the tenant's log.",
    effect="server-mutation",
    input=NoteInput,
)
COUNT_NOTES = ProcedureContract(
    id="domain:notes.count",
    description="Count the caller's notes.",
    effect="server-query",
    input={"type": "object", "properties": {}, "additionalProperties": False},
)
TABLES = """
CREATE TABLE IF NOT EXISTS notes (
    id INTEGER PRIMARY KEY AUTOINCREMENT, author TEXT NOT NULL, text TEXT NOT NULL, invocation_id TEXT NOT NULL
);
"""


def _setup(db: sqlite3.Connection) -> None:
    db.executescript(TABLES)


def _add_note(call: ProcedureCall, value: NoteInput) -> dict[str, Any]:
    cur = call.db.execute(
        "INSERT INTO notes (author, text, invocation_id) VALUES (?, ?, ?)",
        (call.caller.id, value.text, call.invocation_id),
    )
    return {"noteId": cur.lastrowid}


def _count_notes(call: ProcedureCall, value: dict[str, Any]) -> dict[str, Any]:
    (count,) = call.db.execute("SELECT count(*) FROM notes WHERE author = ?", (call.caller.id,)).fetchone()
    return {"count": count}


def _authenticate(request: Request) -> Caller | None:
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not token.startswith("load-"):
        return None
    return Caller(token, "bench", frozenset({"notes"}))


def make_app(db_path: str | Path, rate_limit: RateLimit | None = None) -> ProcedureServer:
    return ProcedureServer(
        [serve(ADD_NOTE, _add_note, permissions={"notes"}), serve(COUNT_NOTES, _count_notes, permissions={"notes"})],
        authenticate=_authenticate,
        store=SqliteInvocationStore(db_path, setup=_setup),
        rate_limit=rate_limit,
    )


# ---------------------------------------------------------------- the load


@dataclass
class Tally:
    latencies_ms: list[float] = field(default_factory=list)
    acknowledged: set[str] = field(default_factory=set)  # invocation ids of writes answered ok
    retries: int = 0
    replays: int = 0
    rate_limited: int = 0
    errors: list[str] = field(default_factory=list)


async def _post(http: httpx.AsyncClient, token: str, path: str, body: dict[str, Any], tally: Tally) -> Any:
    """One call, sent again after each 429 (same invocation id): the final answer's body."""
    while True:
        started = time.perf_counter()
        response = await http.post(
            f"/procedures/{path}", json=body, headers={"Authorization": f"Bearer {token}"}
        )
        tally.latencies_ms.append((time.perf_counter() - started) * 1000)
        answer = response.json()
        if response.status_code != 429:
            return answer
        tally.rate_limited += 1
        await asyncio.sleep(answer["error"]["details"]["retryAfterMs"] / 1000)


async def _client(http: httpx.AsyncClient, n: int, calls: int, tally: Tally) -> None:
    token, previous = f"load-{n}", None
    for i in range(calls):
        if i % 10 == 9 and previous is not None:  # a retry of the last write, same id and input
            ident, path, payload = previous[0], "notes.add", previous[1]
            tally.retries += 1
        elif i % 10 == 4:
            ident, path, payload = f"{token}-q{i}", "notes.count", {}
        else:
            ident, path, payload = f"{token}-w{i}", "notes.add", {"text": f"note {i} of {token}"}
            previous = (ident, payload)
        answer = await _post(http, token, path, {"invocationId": ident, "input": payload}, tally)
        if not answer.get("ok"):
            tally.errors.append(f"{path} {ident}: {answer.get('error', {}).get('code')}")
            continue
        if path == "notes.add":
            tally.acknowledged.add(ident)
            tally.replays += bool(answer.get("replayed"))


async def run_load(base_url: str, *, clients: int, calls: int, deadline: float = 120.0) -> tuple[Tally, float]:
    """Run the clients against ``base_url`` (127.0.0.1 only); returns the tally and wall time."""
    if not base_url.startswith("http://127.0.0.1:"):
        raise ValueError("the load test only sends traffic to 127.0.0.1")
    tally = Tally()
    # One connection per client, as separate browsers would have (httpx's shared pool costs
    # more CPU per request than the server does once it holds dozens of connections).
    sessions = [httpx.AsyncClient(base_url=base_url, timeout=10.0) for _ in range(clients)]
    try:
        started = time.perf_counter()
        work = asyncio.gather(*(_client(http, n, calls, tally) for n, http in enumerate(sessions)))
        await asyncio.wait_for(work, deadline)
        wall = time.perf_counter() - started
    finally:
        for http in sessions:
            await http.aclose()
    return tally, wall


def verify(tally: Tally, db_path: str | Path) -> list[str]:
    """What went wrong, from the database's point of view (empty: nothing)."""
    problems = [f"error other than rate limiting: {e}" for e in tally.errors[:10]]
    with sqlite3.connect(db_path) as db:
        rows = [r[0] for r in db.execute("SELECT invocation_id FROM notes")]
    stored = set(rows)
    if len(rows) != len(stored):
        problems.append(f"doubled writes: {len(rows) - len(stored)} invocation ids stored twice")
    if tally.acknowledged - stored:
        problems.append(f"lost writes: {len(tally.acknowledged - stored)} acknowledged but not stored")
    if stored - tally.acknowledged:
        problems.append(f"unacknowledged writes stored: {len(stored - tally.acknowledged)}")
    if tally.replays != tally.retries:
        problems.append(f"{tally.retries} retries but {tally.replays} replays")
    return problems


def percentile(values: list[float], q: int) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1] if len(values) > 1 else values[0]


# ---------------------------------------------------------------- the server process


def _serve_forever(db_path: str, burst: int, per_second: float) -> None:
    import uvicorn

    app = make_app(db_path, RateLimit(burst=burst, per_second=per_second))
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="off"))

    def announce() -> None:
        while not server.started:
            time.sleep(0.01)
        print(server.servers[0].sockets[0].getsockname()[1], flush=True)

    threading.Thread(target=announce, daemon=True).start()
    server.run()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--burst", type=int, default=60, help="rate limit burst per caller")
    parser.add_argument("--per-second", type=float, default=60.0, help="rate limit refill per caller")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--serve", help=argparse.SUPPRESS)  # internal: run the server (child process)
    args = parser.parse_args()
    if args.serve:
        _serve_forever(args.serve, args.burst, args.per_second)
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        db_path = str(Path(tmp) / "load.sqlite3")
        command = [sys.executable, __file__, "--serve", db_path, "--burst", str(args.burst),
                   "--per-second", str(args.per_second)]
        child = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
        try:
            assert child.stdout is not None
            port = int(child.stdout.readline())
            tally, wall = asyncio.run(run_load(f"http://127.0.0.1:{port}", clients=args.clients, calls=args.calls))
        finally:
            child.terminate()
            child.wait(timeout=10)
        problems = verify(tally, db_path)
    figures = {
        "clients": args.clients,
        "calls": args.clients * args.calls,
        "requests": len(tally.latencies_ms),
        "wall_s": round(wall, 2),
        "calls_per_s": round(args.clients * args.calls / wall, 1),
        "p50_ms": round(percentile(tally.latencies_ms, 50), 2),
        "p95_ms": round(percentile(tally.latencies_ms, 95), 2),
        "p99_ms": round(percentile(tally.latencies_ms, 99), 2),
        "writes": len(tally.acknowledged),
        "retries_replayed": tally.replays,
        "rate_limited": tally.rate_limited,
        "problems": problems,
    }
    if args.json:
        print(json.dumps(figures, indent=2))
    else:
        for key, value in figures.items():
            print(f"{key:>18}: {value}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
