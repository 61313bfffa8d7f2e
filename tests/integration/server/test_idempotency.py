"""Idempotency by invocation id: a retried call applies once and returns its first outcome,
sequentially, concurrently (20 at once against a real uvicorn) and across a server restart."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path
from typing import Any

import httpx

from agentsurface.server import InvocationKey, Outcome, SqliteInvocationStore, StoreMisuse, serve
from tests._shared.server.domain import DISABLE, NOTE, QUERY, make_server, snapshot
from tests._shared.server.helpers import approved_now, call, error_of, new_id
from tests._shared.server.live import serving


def notes(path: Path) -> list[tuple[Any, ...]]:
    with sqlite3.connect(path) as db:
        return db.execute("SELECT text, invocation_id FROM notes ORDER BY id").fetchall()


async def test_the_same_id_sent_twice_applies_once_and_returns_the_first_outcome(
    client: httpx.AsyncClient, db_path: Path
) -> None:
    ident = new_id()
    first = await call(client, NOTE.id, {"text": "once"}, invocation_id=ident)
    second = await call(client, NOTE.id, {"text": "once"}, invocation_id=ident)
    assert first.status_code == second.status_code == 200
    assert second.json() == {**first.json(), "replayed": True}
    assert notes(db_path) == [("once", ident)]


async def test_a_changed_input_under_the_same_id_is_refused(client: httpx.AsyncClient, db_path: Path) -> None:
    ident = new_id()
    await call(client, NOTE.id, {"text": "first"}, invocation_id=ident)
    changed = await call(client, NOTE.id, {"text": "second"}, invocation_id=ident)
    assert changed.status_code == 409
    error = error_of(changed)
    assert error["code"] == "INVOCATION_CONFLICT" and error["retry"] == "with-changes"
    assert error["details"] == {"reason": "input-mismatch"}
    # Same input under another procedure is a different call too.
    other = await call(client, QUERY.id, {}, invocation_id=ident)
    assert other.status_code == 200  # queries are not recorded: reads may run again
    assert notes(db_path) == [("first", ident)]


async def test_twenty_concurrent_duplicates_apply_once(db_path: Path) -> None:
    server = make_server(db_path)
    ident = new_id()
    with serving(server) as base:
        async with httpx.AsyncClient(base_url=base, timeout=30) as http:
            responses = await asyncio.gather(
                *(call(http, NOTE.id, {"text": "burst"}, invocation_id=ident) for _ in range(20))
            )
    assert [r.status_code for r in responses] == [200] * 20
    bodies = [r.json() for r in responses]
    assert sum("replayed" not in b for b in bodies) == 1  # exactly one applied, 19 replays
    assert {b["output"]["noteId"] for b in bodies} == {bodies[0]["output"]["noteId"]}
    assert notes(db_path) == [("burst", ident)]


async def test_concurrent_destructive_duplicates_apply_once(db_path: Path) -> None:
    server = make_server(db_path)
    ident, evidence = new_id(), approved_now()
    with serving(server) as base:
        async with httpx.AsyncClient(base_url=base, timeout=30) as http:
            responses = await asyncio.gather(
                *(
                    call(http, DISABLE.id, {"deviceIds": ["acme-1", "acme-2"]}, invocation_id=ident,
                         confirmation=evidence)
                    for _ in range(20)
                )
            )
    outputs = [r.json()["output"] for r in responses]
    # Had any duplicate run again it would report the devices as already disabled.
    assert outputs == [{"disabled": 2, "alreadyDisabled": 0}] * 20


async def test_after_a_restart_a_retry_still_returns_the_first_outcome(db_path: Path) -> None:
    ident = new_id()
    with serving(make_server(db_path)) as base:
        async with httpx.AsyncClient(base_url=base) as http:
            first = await call(http, NOTE.id, {"text": "before restart"}, invocation_id=ident)
    # A new process would build everything again from the same database file.
    with serving(make_server(db_path)) as base:
        async with httpx.AsyncClient(base_url=base) as http:
            retry = await call(http, NOTE.id, {"text": "before restart"}, invocation_id=ident)
            conflict = await call(http, NOTE.id, {"text": "changed"}, invocation_id=ident)
    assert retry.json() == {**first.json(), "replayed": True}
    assert error_of(conflict)["code"] == "INVOCATION_CONFLICT"
    assert notes(db_path) == [("before restart", ident)]


async def test_a_failed_call_is_not_recorded_so_its_retry_runs(db_path: Path) -> None:
    attempts: list[str] = []

    def flaky(call: Any, value: Any) -> dict[str, Any]:
        attempts.append(call.invocation_id)
        call.db.execute("INSERT INTO notes (tenant, text, invocation_id) VALUES (?, ?, ?)",
                        (call.caller.tenant, value.text, call.invocation_id))
        if len(attempts) == 1:
            raise sqlite3.OperationalError("database is locked")  # transient: rolled back
        return {"ok": True}

    server = make_server(db_path, procedures=[serve(NOTE, flaky, permissions={"devices.write"})])
    ident = new_id()
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=server), base_url="http://app") as http:
        failed = await call(http, NOTE.id, {"text": "flaky"}, invocation_id=ident)
        retried = await call(http, NOTE.id, {"text": "flaky"}, invocation_id=ident)
        again = await call(http, NOTE.id, {"text": "flaky"}, invocation_id=ident)
    error = error_of(failed)
    assert failed.status_code == 503
    assert error["code"] == "EXECUTION_FAILED" and error["retry"] == "after-delay"
    assert error["details"] == {"reason": "server-busy", "transient": True, "retryAfterMs": 1000}
    assert retried.json()["ok"] is True and "replayed" not in retried.json()
    assert again.json()["replayed"] is True
    assert attempts == [ident, ident]
    assert notes(db_path) == [("flaky", ident)]


async def test_a_domain_refusal_is_not_recorded(client: httpx.AsyncClient, db_path: Path) -> None:
    ident = new_id()
    evidence = approved_now()
    refused = await call(client, DISABLE.id, {"deviceIds": ["globex-1"]}, invocation_id=ident,
                         confirmation=evidence)
    assert error_of(refused)["code"] == "PRECONDITION_FAILED"
    assert snapshot(db_path)["invocations"] == []


def test_the_store_refuses_work_that_ends_its_transaction(tmp_path: Path) -> None:
    store = SqliteInvocationStore(tmp_path / "s.sqlite3")

    def commits(db: sqlite3.Connection) -> Outcome:
        db.execute("COMMIT")
        return Outcome(200, {"ok": True})

    key = InvocationKey("scope", "inv_1", "domain:x")
    try:
        store.execute_once(key, "fp", commits)
    except StoreMisuse:
        pass
    else:
        raise AssertionError("a work function that commits must be refused")
    # Nothing recorded: the same id can still be applied properly.
    settled = store.execute_once(key, "fp", lambda db: Outcome(200, {"ok": True}))
    assert settled.kind == "applied"
    assert store.execute_once(key, "fp", lambda db: Outcome(200, {"ok": False})).kind == "replayed"
    with sqlite3.connect(tmp_path / "s.sqlite3") as db:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    store.close()
