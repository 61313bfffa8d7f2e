"""The demo backend as a fleet of worker processes on one database, and clients that hammer it
with duplicates and retries sent to other workers (used by test_workers.py and
benchmarks/bench_workers.py).

Each client owns one device of the acme tenant and renames it call after call, under a fresh
invocation id each time; every third call is sent again, same id, to another worker (its answer
must be the first one, replayed); a call or a replay that meets a dead worker, a refused
connection or a transient refusal is retried, same id, on the next worker. Afterwards the database
says whether anything was lost or applied twice: one applied audit row and one invocation record
per id.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[3]
TOKENS = ("demo-acme-operator", "demo-acme-admin")
PROCEDURE = "/api/agent/procedures/devices.rename"


@dataclass
class Worker:
    process: subprocess.Popen[str]
    url: str

    def kill(self) -> None:
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=10)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)


def start_worker(database: str, *, workers: int = 1, rate_limit: str = "1000000/100000") -> Worker:
    """``python -m demo`` on a free port: one process, or ``workers`` behind one socket."""
    command = [sys.executable, "-m", "demo", "--database", database, "--port", "0", "--no-build",
               "--rate-limit", rate_limit, "--workers", str(workers)]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                               text=True, env=env)
    assert process.stdout is not None
    line = process.stdout.readline()
    found = re.match(r"Devices console: (http://[\d.]+:\d+)/index\.html", line)
    if not found:
        process.kill()
        raise RuntimeError(f"the demo did not start: {line!r}")
    worker = Worker(process, found[1])
    # Keep reading what it prints (the access log): a full pipe would block its event loop.
    threading.Thread(target=lambda: [None for _ in process.stdout or ()], daemon=True).start()
    deadline = time.monotonic() + 30
    while True:  # ready: the store answers (every worker of a shared socket opens its own pool)
        try:
            if httpx.get(worker.url + "/api/agent/ready", timeout=2).status_code == 200:
                return worker
        except httpx.HTTPError:
            pass
        if time.monotonic() > deadline or process.poll() is not None:
            worker.stop()
            raise RuntimeError("the demo did not become ready")
        time.sleep(0.05)


@dataclass
class Run:
    answers: dict[str, dict[str, Any]] = field(default_factory=dict)  # invocation id -> first answer
    last_name: dict[str, str] = field(default_factory=dict)  # device -> name of its last acknowledged call
    latencies: list[float] = field(default_factory=list)  # seconds, acknowledged calls (first attempt)
    replays: int = 0
    replay_mismatches: list[str] = field(default_factory=list)
    retries: int = 0
    transient_refusals: int = 0  # EXECUTION_FAILED transient, with Retry-After
    untyped_failures: list[str] = field(default_factory=list)
    failed_calls: list[str] = field(default_factory=list)
    seconds: float = 0.0
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def calls(self) -> int:
        return len(self.answers)


def _send(http: httpx.Client, url: str, token: str, body: dict[str, Any]) -> httpx.Response:
    return http.post(url + PROCEDURE, json=body, headers={"Authorization": f"Bearer {token}"})


def run_clients(
    urls: Callable[[], list[str]],
    *,
    clients: int,
    calls: int,
    progress: Callable[[int], None] | None = None,
    patience_s: float = 90.0,
) -> Run:
    """``clients`` threads x ``calls`` renames; ``urls()`` is asked for the live workers on every
    attempt; ``progress(done)`` is called after each acknowledged call (to inject faults).

    A client retries one call for up to ``patience_s`` seconds: a time budget, not a number of
    attempts, so that a loaded machine (a database restart taking 20 s instead of 2) slows the
    run down without failing it, while a service that never recovers still does."""
    run = Run()
    done = [0]

    def answered(http: httpx.Client, token: str, body: dict[str, Any], ident: str, start: int) -> dict[str, Any] | None:
        """The first 200 answer to ``body``, trying the live workers in turn from ``start``:
        through a killed worker (connection errors) and a database outage (typed transient
        refusals), as a client that retries with the same invocation id does. None if none came."""
        give_up = time.monotonic() + patience_s
        attempt = -1
        while time.monotonic() < give_up:
            attempt += 1
            live = urls()
            url = live[(start + attempt) % len(live)]
            try:
                reply = _send(http, url, token, body)
            except httpx.TransportError:  # a killed worker, a refused connection
                with run.lock:
                    run.retries += 1
                time.sleep(0.05)
                continue
            if reply.status_code == 200:
                answer: dict[str, Any] = reply.json()
                return answer
            error = reply.json().get("error", {}) if "json" in reply.headers.get("content-type", "") else {}
            details = error.get("details") or {}
            if error.get("code") == "EXECUTION_FAILED" and details.get("transient") and "retry-after" in reply.headers:
                with run.lock:
                    run.transient_refusals += 1
                    run.retries += 1
                time.sleep(0.2)  # the server asks for 1 s; a test waits less
                continue
            with run.lock:
                run.untyped_failures.append(f"{ident}: {reply.status_code} {reply.text[:200]}")
            time.sleep(0.1)
        return None

    def client(number: int) -> None:
        device = f"dev-{number + 1:04d}"
        token = TOKENS[number % len(TOKENS)]
        attempt_at = number
        with httpx.Client(timeout=20) as http:
            for k in range(calls):
                ident = f"inv-c{number}-k{k}"
                name = f"client {number} call {k}"
                body = {"invocationId": ident, "input": {"deviceId": device, "name": name}}
                started = time.perf_counter()
                first = answered(http, token, body, ident, attempt_at)
                elapsed = time.perf_counter() - started
                if first is None:
                    with run.lock:
                        run.failed_calls.append(ident)
                    continue
                first.pop("replayed", None)
                with run.lock:
                    run.answers[ident] = first
                    run.last_name[device] = name
                    run.latencies.append(elapsed)
                if k % 3 == 2:  # the same call again, from another worker on: a replay, identical
                    replay = answered(http, token, body, ident, attempt_at + 1)
                    with run.lock:
                        if replay is None:
                            run.failed_calls.append(f"{ident} (its replay)")
                        else:
                            run.replays += 1
                            if replay.pop("replayed", None) is not True or replay != first:
                                run.replay_mismatches.append(ident)
                attempt_at += 1
                with run.lock:
                    done[0] += 1
                    count = done[0]
                if progress is not None:
                    progress(count)

    def guarded(number: int) -> None:
        try:
            client(number)
        except BaseException as exc:  # a defect of the client or a crash: the run fails, loudly
            with run.lock:
                run.failed_calls.append(f"client {number} crashed: {exc!r}")

    threads = [threading.Thread(target=guarded, args=(n,)) for n in range(clients)]
    started = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    run.seconds = time.perf_counter() - started
    return run


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


def figures(run: Run) -> dict[str, float]:
    ms = [s * 1000 for s in run.latencies]
    return {
        "calls": run.calls,
        "seconds": round(run.seconds, 2),
        "calls_per_second": round(run.calls / run.seconds, 1) if run.seconds else 0.0,
        "p50_ms": round(percentile(ms, 50), 1),
        "p95_ms": round(percentile(ms, 95), 1),
        "p99_ms": round(percentile(ms, 99), 1),
    }


def applied_once(fetch_all: Callable[[str], list[Any]], run: Run) -> tuple[list[str], list[str]]:
    """(lost, doubled) invocation ids, from the audit (one applied row per call) and the records."""
    applied: dict[str, int] = {}
    for row in fetch_all(
        "SELECT invocation_id FROM audit WHERE operation = 'devices.rename' AND outcome = 'ok'"
        " AND (reason IS NULL OR reason <> 'replayed')"
    ):
        applied[row[0]] = applied.get(row[0], 0) + 1
    recorded = {row[0] for row in fetch_all("SELECT invocation_id FROM agentsurface_invocations")}
    lost = sorted(i for i in run.answers if applied.get(i, 0) == 0 or i not in recorded)
    doubled = sorted(i for i, n in applied.items() if n > 1)
    return lost, doubled
