"""One contract, two stores: every test here runs against SQLite (a file) and a real PostgreSQL
server started for the session (tests/_shared/server/postgres.py).

The contract: the outcome is recorded in the call's own transaction with the app's writes; a
duplicate of one invocation id applies once, from any thread or process (the loser replays the
winner's outcome); the same id with another input conflicts; replays survive a restart; ids are
scoped per caller; the schema is created idempotently and versioned; rate-limit budgets are
shared by every process on the store; refusals and failures keep none of the app's writes.
"""

from __future__ import annotations

import concurrent.futures
import multiprocessing
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import BaseModel, Field
from starlette.requests import Request

from agentsurface import ProcedureContract
from agentsurface.server import (
    SCHEMA_VERSION,
    Caller,
    CallRecord,
    InvocationKey,
    Outcome,
    ProcedureCall,
    ProcedureServer,
    RateLimit,
    StoreMisuse,
    StoreUnavailable,
    StoreVersionError,
    open_store,
    precondition_failed,
    serve,
)
from agentsurface.server.stores import StoreConfigError, sqlite_path, store_kind
from tests._shared.server.helpers import call, error_of, new_id
from tests._shared.server.postgres import PostgresServer
from tests._shared.server.store_app import insert_note, mark, rows, setup_notes
from tests._shared.server.store_procs import duplicates


@pytest.fixture(params=["sqlite", "postgresql"])
def dsn(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path}/app.sqlite3"
    server: PostgresServer = request.getfixturevalue("postgres")
    return server.create_database()


@pytest.fixture
def store(dsn: str) -> Iterator[Any]:
    opened = open_store(dsn, setup=setup_notes)
    yield opened
    opened.close()  # type: ignore[attr-defined]


KEY = InvocationKey("acme\x1falice", "inv-1", "domain:notes.add")


def note_work(dsn: str, text: str = "hello", *, keep: bool = True, record: bool = True) -> Any:
    def work(db: Any) -> Outcome:
        note = insert_note(db, dsn, KEY.scope, text)
        return Outcome(200, {"ok": True, "output": {"noteId": note, "text": text, "ünï": "\u2028"}}, keep, record)

    return work


def notes(store: Any) -> list[tuple[Any, ...]]:
    return rows(store, "SELECT scope, text FROM notes ORDER BY id")


# ---------------------------------------------------------------- the DSN


def test_the_dsn_names_the_store(tmp_path: Path) -> None:
    assert store_kind("sqlite:///app.sqlite3") == "sqlite"
    assert store_kind("postgresql://u@h/db") == store_kind("postgres://h/db") == "postgresql"
    assert sqlite_path("sqlite:///data/app.sqlite3") == "data/app.sqlite3"
    assert sqlite_path(f"sqlite:///{tmp_path}/a.sqlite3") == f"{tmp_path}/a.sqlite3"
    assert sqlite_path("sqlite:///:memory:") == ":memory:"
    for bad in ("app.sqlite3", "mysql://h/db", "sqlite://", "sqlite://otherhost/x"):
        with pytest.raises(StoreConfigError):
            open_store(bad)


def test_an_unreachable_postgres_fails_at_once_naming_host_and_database_never_the_password() -> None:
    started = time.monotonic()
    with pytest.raises(StoreUnavailable) as caught:
        open_store("postgresql://svc:s3cr3t-pw@127.0.0.1:1/appdb", connect_timeout=2)
    message = str(caught.value)
    assert time.monotonic() - started < 5
    assert "127.0.0.1:1" in message and "'appdb'" in message and "svc" in message
    assert "s3cr3t-pw" not in message and "s3cr3t" not in repr(caught.value.__cause__ or "")


# ---------------------------------------------------------------- once, replay, conflict


def test_a_call_applies_once_and_its_replay_is_identical(store: Any, dsn: str) -> None:
    first = store.execute_once(KEY, "fp", note_work(dsn))
    second = store.execute_once(KEY, "fp", note_work(dsn))
    assert (first.kind, second.kind) == ("applied", "replayed")
    assert second.outcome == first.outcome
    assert notes(store) == [(KEY.scope, "hello")]


def test_the_same_id_with_another_input_conflicts_and_applies_nothing(store: Any, dsn: str) -> None:
    store.execute_once(KEY, "fp", note_work(dsn))
    conflict = store.execute_once(KEY, "other-fp", note_work(dsn, "changed"))
    assert conflict.kind == "conflict" and conflict.outcome is None
    assert notes(store) == [(KEY.scope, "hello")]


def test_ids_are_scoped_per_caller(store: Any, dsn: str) -> None:
    other = InvocationKey("acme\x1fbob", KEY.invocation_id, KEY.procedure_id)
    assert store.execute_once(KEY, "fp", note_work(dsn)).kind == "applied"
    assert store.execute_once(other, "fp", note_work(dsn)).kind == "applied"
    assert len(notes(store)) == 2


def test_replays_survive_a_restart(dsn: str) -> None:
    first = open_store(dsn, setup=setup_notes)
    applied = first.execute_once(KEY, "fp", note_work(dsn))
    first.close()  # type: ignore[attr-defined]
    again = open_store(dsn, setup=setup_notes)
    try:
        replayed = again.execute_once(KEY, "fp", note_work(dsn))
        assert replayed.kind == "replayed" and replayed.outcome == applied.outcome
        assert len(notes(again)) == 1
    finally:
        again.close()  # type: ignore[attr-defined]


def test_a_refusal_keeps_no_writes_and_no_record_but_its_audit(store: Any, dsn: str) -> None:
    m = mark(dsn)

    def finish(db: Any, outcome: Outcome) -> None:
        db.execute(
            f"INSERT INTO audit (procedure, outcome, replayed) VALUES ({m}, {m}, 0)",
            (KEY.procedure_id, str(outcome.status)),
        )

    refused = store.execute_once(KEY, "fp", note_work(dsn, keep=False, record=False), finish)
    assert refused.kind == "applied" and refused.outcome.status == 200
    assert notes(store) == []
    assert rows(store, "SELECT outcome FROM audit") == [("200",)]
    # Not recorded: the same id runs again (and this time keeps its write).
    assert store.execute_once(KEY, "fp", note_work(dsn)).kind == "applied"
    assert len(notes(store)) == 1


def test_an_exception_in_the_work_or_its_audit_rolls_everything_back(store: Any, dsn: str) -> None:
    def failing(db: Any) -> Outcome:
        insert_note(db, dsn, KEY.scope, "half")
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        store.execute_once(KEY, "fp", failing)

    def bad_audit(db: Any, outcome: Outcome) -> None:
        raise RuntimeError("audit down")

    with pytest.raises(RuntimeError):
        store.execute_once(KEY, "fp", note_work(dsn), bad_audit)
    assert notes(store) == []
    assert store.execute_once(KEY, "fp", note_work(dsn)).kind == "applied"  # nothing was recorded


def test_work_that_ends_the_transaction_itself_is_refused(store: Any, dsn: str) -> None:
    def commits(db: Any) -> Outcome:
        insert_note(db, dsn, KEY.scope, "early")
        db.commit()
        return Outcome(200, {})

    with pytest.raises(StoreMisuse):
        store.execute_once(KEY, "fp", commits)


def test_concurrent_duplicates_in_one_process_apply_once(store: Any, dsn: str) -> None:
    def work(db: Any) -> Outcome:
        note = insert_note(db, dsn, KEY.scope, "dup")
        time.sleep(0.05)
        return Outcome(200, {"noteId": note})

    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        settled = list(pool.map(lambda _: store.execute_once(KEY, "fp", work), range(8)))
    assert sorted(s.kind for s in settled) == ["applied"] + ["replayed"] * 7
    assert len({repr(s.outcome) for s in settled}) == 1
    assert len(notes(store)) == 1


def test_concurrent_duplicates_across_processes_apply_once(store: Any, dsn: str) -> None:
    start_at = time.time() + 3.0  # all processes have opened their store by then
    context = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(3, mp_context=context) as pool:
        futures = [pool.submit(duplicates, dsn, KEY.scope, "inv-x", 3, start_at) for _ in range(3)]
        results = [r for f in futures for r in f.result(timeout=120)]
    assert len(results) == 9
    assert sorted(kind for kind, _ in results) == ["applied"] + ["replayed"] * 8
    assert len({repr(body) for _, body in results}) == 1  # every replay is the winner's answer
    assert len(notes(store)) == 1


# ---------------------------------------------------------------- schema, retention, budgets


def test_the_schema_is_versioned_and_creating_it_again_changes_nothing(store: Any, dsn: str) -> None:
    assert store.schema_version() == SCHEMA_VERSION
    store.execute_once(KEY, "fp", note_work(dsn))
    again = open_store(dsn, setup=setup_notes)
    try:
        assert again.schema_version() == SCHEMA_VERSION
        assert again.execute_once(KEY, "fp", note_work(dsn)).kind == "replayed"
    finally:
        again.close()  # type: ignore[attr-defined]


def test_a_newer_schema_than_this_release_knows_is_refused_at_start(store: Any, dsn: str) -> None:
    m = mark(dsn)
    store.run(
        lambda db: db.execute(
            f"UPDATE agentsurface_schema_version SET version = {m} WHERE component = 'store'", (SCHEMA_VERSION + 1,)
        )
    )
    with pytest.raises(StoreVersionError, match="upgrade agentsurface"):
        open_store(dsn, setup=setup_notes)


def test_old_records_are_forgotten_by_retention(store: Any, dsn: str) -> None:
    store.execute_once(KEY, "fp", note_work(dsn))
    assert store.forget_before(datetime.now(UTC) - timedelta(hours=1)) == 0
    assert store.forget_before(datetime.now(UTC) + timedelta(seconds=5)) == 1
    assert store.execute_once(KEY, "fp", note_work(dsn)).kind == "applied"  # forgotten: applies again


def test_every_process_on_the_store_spends_one_rate_limit_budget(store: Any, dsn: str) -> None:
    other = open_store(dsn)  # another worker on the same database
    try:
        limit = RateLimit(burst=4, per_second=0.5)
        answers = [s.take_token("caller:x", limit) for s in (store, other, store, other, store, other)]
        assert answers[:4] == [None] * 4
        assert all(isinstance(wait, int) and 0 < wait <= 2000 for wait in answers[4:])
        assert store.take_token("caller:y", limit) is None  # budgets are per key
        time.sleep(2.1)  # refilled at 0.5/s: one more call
        assert other.take_token("caller:x", limit) is None
        assert store.take_token("caller:x", limit) is not None
    finally:
        other.close()  # type: ignore[attr-defined]


def test_concurrent_takes_from_two_processes_worth_of_stores_never_exceed_the_burst(store: Any, dsn: str) -> None:
    other = open_store(dsn)
    try:
        limit = RateLimit(burst=25, per_second=0.001)
        with concurrent.futures.ThreadPoolExecutor(8) as pool:
            answers = list(pool.map(lambda n: (store, other)[n % 2].take_token("caller:z", limit), range(80)))
        assert answers.count(None) == 25  # one budget, spent exactly once per allowed call
    finally:
        other.close()  # type: ignore[attr-defined]


# ---------------------------------------------------------------- through the procedure server


class NoteInput(BaseModel):
    text: str = Field(min_length=1, max_length=200)


NOTE = ProcedureContract(id="domain:notes.add", description="Add a note.", effect="server-mutation", input=NoteInput)
ALICE = Caller("alice", "acme", frozenset({"notes.write"}))


def authenticate(request: Request) -> Caller | None:
    return ALICE if request.headers.get("authorization") == "Bearer tok-alice" else None


def make_app(dsn: str, store: Any, *, rate_limit: RateLimit | None = None) -> ProcedureServer:
    m = mark(dsn)

    def add(call_: ProcedureCall, value: NoteInput) -> dict[str, Any]:
        if value.text == "refuse":
            insert_note(call_.db, dsn, call_.caller.scope, "refused-write")
            raise precondition_failed("nope", "Refused.")
        return {"noteId": insert_note(call_.db, dsn, call_.caller.scope, value.text)}

    def audit(record: CallRecord, db: Any) -> None:
        db.execute(
            f"INSERT INTO audit (procedure, outcome, replayed, repeats) VALUES ({m}, {m}, {m}, {m})",
            (record.procedure_id, record.outcome, int(record.replayed), record.repeats),
        )

    return ProcedureServer(
        [serve(NOTE, add, permissions={"notes.write"})],
        authenticate=authenticate,
        store=store,
        audit=audit,
        rate_limit=rate_limit,
    )


@pytest.fixture
async def http(dsn: str, store: Any) -> Any:
    app = make_app(dsn, store)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://app") as client:
        yield client


async def test_over_http_a_call_applies_once_and_replays(http: httpx.AsyncClient, store: Any) -> None:
    ident = new_id()
    first = await call(http, NOTE.id, {"text": "once"}, invocation_id=ident)
    second = await call(http, NOTE.id, {"text": "once"}, invocation_id=ident)
    assert first.status_code == second.status_code == 200
    assert second.json() == {**first.json(), "replayed": True}
    conflict = await call(http, NOTE.id, {"text": "twice"}, invocation_id=ident)
    assert error_of(conflict)["code"] == "INVOCATION_CONFLICT"
    assert notes(store) == [("acme\x1falice", "once")]
    assert rows(store, "SELECT outcome, replayed FROM audit ORDER BY id") == [
        ("ok", 0), ("ok", 1), ("INVOCATION_CONFLICT", 0)
    ]


async def test_over_http_a_refusal_keeps_no_write(http: httpx.AsyncClient, store: Any) -> None:
    refused = await call(http, NOTE.id, {"text": "refuse"})
    assert error_of(refused)["code"] == "PRECONDITION_FAILED"
    assert notes(store) == []


async def test_a_store_error_inside_a_call_rolls_back_the_implementations_writes(
    http: httpx.AsyncClient, store: Any, dsn: str
) -> None:
    # The record cannot be written (a trigger refuses it): the note written before must go too.
    if store_kind(dsn) == "sqlite":
        store.run(lambda db: db.execute(
            "CREATE TRIGGER no_records BEFORE INSERT ON agentsurface_invocations"
            " BEGIN SELECT RAISE(ABORT, 'record refused'); END"
        ))
    else:
        store.run(lambda db: db.execute(
            "CREATE FUNCTION no_records() RETURNS trigger LANGUAGE plpgsql AS"
            " $$ BEGIN RAISE EXCEPTION 'record refused'; END $$;"
            " CREATE TRIGGER no_records BEFORE INSERT ON agentsurface_invocations"
            " FOR EACH ROW EXECUTE FUNCTION no_records()"
        ))
    failed = await call(http, NOTE.id, {"text": "lost"})
    assert failed.status_code == 500
    assert error_of(failed)["code"] == "EXECUTION_FAILED"
    assert "record refused" not in failed.text
    assert notes(store) == []


async def test_over_http_one_budget_for_two_servers_on_one_store(store: Any, dsn: str) -> None:
    limit = RateLimit(burst=3, per_second=0.01)
    statuses = []
    second_store = open_store(dsn)
    try:
        apps = [make_app(dsn, store, rate_limit=limit), make_app(dsn, second_store, rate_limit=limit)]
        clients = [httpx.AsyncClient(transport=httpx.ASGITransport(app=a), base_url="http://app") for a in apps]
        for n in range(6):
            statuses.append((await call(clients[n % 2], NOTE.id, {"text": f"n{n}"})).status_code)
        limited = await call(clients[0], NOTE.id, {"text": "more"})
        for c in clients:
            await c.aclose()
    finally:
        second_store.close()  # type: ignore[attr-defined]
    assert statuses == [200, 200, 200, 429, 429, 429]
    assert limited.headers["retry-after"].isdigit()
    # 429s of one caller are audited once per window, not once per call.
    assert rows(store, "SELECT outcome, repeats FROM audit WHERE outcome = 'RATE_LIMITED' ORDER BY id") == (
        [("RATE_LIMITED", 0), ("RATE_LIMITED", 0)]  # one per server (each samples its own refusals)
    )


async def test_the_readiness_endpoint_checks_the_store(store: Any, dsn: str) -> None:
    app = make_app(dsn, store)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://app") as client:
        ready = await client.get("/ready")
        assert ready.status_code == 200 and ready.json() == {"ok": True, "store": "ready"}
        store.close()
        down = await client.get("/ready")
        assert down.status_code == 503 and down.headers["retry-after"] == "1"
        assert error_of(down)["details"]["transient"] is True


async def test_an_exhausted_pool_is_a_transient_refusal_with_retry_after_never_a_hang(dsn: str) -> None:
    small = open_store(dsn, setup=setup_notes, pool_size=1, pool_timeout=0.5)
    held, release = threading.Event(), threading.Event()

    def hold(db: Any) -> None:
        held.set()
        release.wait(10)

    holder = threading.Thread(target=small.run, args=(hold,))
    holder.start()
    try:
        assert held.wait(5)
        app = make_app(dsn, small)
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://app") as client:
            started = time.monotonic()
            busy = await call(client, NOTE.id, {"text": "busy"})
            assert time.monotonic() - started < 3
        error = error_of(busy)
        assert error["code"] == "EXECUTION_FAILED" and error["details"]["transient"] is True
        assert busy.headers["retry-after"] == "1"
    finally:
        release.set()
        holder.join()
        small.close()  # type: ignore[attr-defined]
