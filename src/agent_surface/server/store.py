"""Where calls are applied once: an invocation store in the app's own database.

``execute_once`` opens one transaction, looks the invocation up by (caller scope, invocation id),
and either replays the recorded outcome, refuses a different input under the same id, or runs
the app's work and records its outcome in that same transaction, so a change and its record
commit together or not at all. Any database can implement the protocol; SQLite (WAL mode) ships.
"""

from __future__ import annotations

import json
import queue
import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, Protocol, TypeVar

from .._core.errors import AgentSurfaceError

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Outcome:
    """A settled call: the HTTP status and JSON body to answer (and to replay).

    ``keep`` commits the work's writes (a success); otherwise they are rolled back (a refusal).
    ``record`` stores the outcome for replay under its invocation id.
    """

    status: int
    body: dict[str, Any]
    keep: bool = True
    record: bool = True


@dataclass(frozen=True, slots=True)
class Settlement:
    kind: Literal["applied", "replayed", "conflict"]
    outcome: Outcome | None  # None for a conflict


@dataclass(frozen=True, slots=True)
class InvocationKey:
    scope: str  # whose id space: the caller (and tenant), never what the page claims
    invocation_id: str
    procedure_id: str


class InvocationStore(Protocol):
    def execute_once(
        self,
        key: InvocationKey,
        fingerprint: str,
        work: Callable[[Any], Outcome],
        finish: Callable[[Any, Outcome], None] | None = None,
    ) -> Settlement:
        """Apply ``work(db)`` at most once per key, in one transaction with its record;
        ``finish(db, outcome)`` runs in that transaction after the writes were kept or undone
        (for the app's audit row). Exceptions from ``work`` roll everything back and propagate."""
        ...

    def run(self, work: Callable[[Any], T]) -> T:
        """Run ``work(db)`` in its own transaction (reads, audit of refused calls)."""
        ...


class StoreMisuse(AgentSurfaceError, RuntimeError):
    """The app's work ended the store's transaction itself (commit/rollback inside work)."""


SCHEMA = """
CREATE TABLE IF NOT EXISTS agent_surface_invocations (
    scope         TEXT NOT NULL,
    invocation_id TEXT NOT NULL,
    procedure_id  TEXT NOT NULL,
    fingerprint   TEXT NOT NULL,
    status        INTEGER NOT NULL,
    body          TEXT NOT NULL,
    recorded_at   TEXT NOT NULL,
    PRIMARY KEY (scope, invocation_id)
) WITHOUT ROWID;
"""

MEMORY = ":memory:"


class SqliteInvocationStore:
    """SQLite in WAL mode; a small pool of connections, one write transaction at a time.

    ``setup(db)`` creates the app's own tables (run once, at start). The app's work gets
    a ``sqlite3.Connection`` (rows as ``sqlite3.Row``) inside the call's transaction: it must
    not commit or roll back itself.
    """

    def __init__(
        self,
        path: str | Path,
        *,
        setup: Callable[[sqlite3.Connection], None] | None = None,
        pool_size: int = 4,
        busy_timeout_ms: int = 10_000,
    ) -> None:
        self.path = str(path)
        # Each connection to ":memory:" is its own database: one connection serves them all.
        self._pool_size = 1 if self.path == MEMORY else max(1, pool_size)
        self._busy_timeout_ms = busy_timeout_ms
        self._idle: queue.SimpleQueue[sqlite3.Connection] = queue.SimpleQueue()
        self._all: list[sqlite3.Connection] = []
        self._slots = threading.BoundedSemaphore(self._pool_size)
        self._open_lock = threading.Lock()
        # Writers in this process queue here instead of polling SQLite's busy handler; the
        # busy timeout still orders writers from other processes sharing the file.
        self._write_lock = threading.Lock()
        with self._connection() as db, self._write_lock:
            # Outside a transaction: the app's setup may use executescript(), which commits.
            db.execute(SCHEMA)
            if setup is not None:
                setup(db)
            if db.in_transaction:
                db.execute("COMMIT")

    # ------------------------------------------------------------------ connections

    def _open(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        db.row_factory = sqlite3.Row
        db.execute(f"PRAGMA busy_timeout = {int(self._busy_timeout_ms)}")
        db.execute("PRAGMA foreign_keys = ON")
        if self.path != MEMORY:
            db.execute("PRAGMA journal_mode = WAL")
            db.execute("PRAGMA synchronous = NORMAL")
        return db

    @contextmanager
    def _connection(self) -> Iterator[sqlite3.Connection]:
        self._slots.acquire()
        try:
            try:
                db = self._idle.get_nowait()
            except queue.Empty:
                with self._open_lock:
                    db = self._open()
                    self._all.append(db)
            try:
                yield db
            finally:
                self._idle.put(db)
        finally:
            self._slots.release()

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        with self._connection() as db, self._write_lock:
            db.execute("BEGIN IMMEDIATE")
            try:
                yield db
                if not db.in_transaction:
                    raise StoreMisuse("the transaction was ended inside the app's work")
                db.execute("COMMIT")
            except BaseException:
                if db.in_transaction:
                    db.execute("ROLLBACK")
                raise

    def close(self) -> None:
        with self._open_lock:
            for db in self._all:
                db.close()
            self._all.clear()

    # ------------------------------------------------------------------ the protocol

    def run(self, work: Callable[[Any], T]) -> T:
        with self._transaction() as db:
            return work(db)

    def execute_once(
        self,
        key: InvocationKey,
        fingerprint: str,
        work: Callable[[Any], Outcome],
        finish: Callable[[Any, Outcome], None] | None = None,
    ) -> Settlement:
        with self._transaction() as db:
            row = db.execute(
                "SELECT fingerprint, status, body FROM agent_surface_invocations"
                " WHERE scope = ? AND invocation_id = ?",
                (key.scope, key.invocation_id),
            ).fetchone()
            if row is not None:
                if row["fingerprint"] != fingerprint:
                    return Settlement("conflict", None)
                return Settlement("replayed", Outcome(int(row["status"]), json.loads(row["body"])))
            db.execute("SAVEPOINT agent_surface_work")
            outcome = work(db)
            if not db.in_transaction:
                raise StoreMisuse("the transaction was ended inside the app's work")
            if not outcome.keep:
                db.execute("ROLLBACK TO agent_surface_work")
            db.execute("RELEASE agent_surface_work")
            if outcome.record:
                db.execute(
                    "INSERT INTO agent_surface_invocations"
                    " (scope, invocation_id, procedure_id, fingerprint, status, body, recorded_at)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (
                        key.scope,
                        key.invocation_id,
                        key.procedure_id,
                        fingerprint,
                        outcome.status,
                        json.dumps(outcome.body, separators=(",", ":"), ensure_ascii=False),
                        datetime.now(UTC).isoformat(timespec="seconds"),
                    ),
                )
            if finish is not None:
                finish(db, outcome)
            return Settlement("applied", outcome)

    def forget_before(self, moment: datetime) -> int:
        """Drop records older than ``moment`` (retention); returns how many were dropped."""
        cutoff = moment.astimezone(UTC).isoformat(timespec="seconds")
        def delete(db: sqlite3.Connection) -> int:
            return int(db.execute("DELETE FROM agent_surface_invocations WHERE recorded_at < ?", (cutoff,)).rowcount)

        return self.run(delete)
