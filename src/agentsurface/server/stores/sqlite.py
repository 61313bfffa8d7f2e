"""The invocation store on SQLite in WAL mode (one host): the invocation records, rate-limit
buckets and approval challenges in the app's own database file, beside the app's tables."""

from __future__ import annotations

import json
import math
import queue
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from ..challenges import Challenge
from ..ratelimit import RateLimit
from .protocol import (
    SCHEMA_VERSION,
    InvocationKey,
    Outcome,
    Settlement,
    StoreMisuse,
    StoreVersionError,
)

T = TypeVar("T")


MIGRATIONS: dict[int, str] = {
    1: """
CREATE TABLE IF NOT EXISTS agentsurface_invocations (
    scope         TEXT NOT NULL,
    invocation_id TEXT NOT NULL,
    procedure_id  TEXT NOT NULL,
    fingerprint   TEXT NOT NULL,
    status        INTEGER NOT NULL,
    body          TEXT NOT NULL,
    recorded_at   TEXT NOT NULL,
    PRIMARY KEY (scope, invocation_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS agentsurface_invocations_by_age ON agentsurface_invocations (recorded_at);
CREATE TABLE IF NOT EXISTS agentsurface_rate_limits (
    key     TEXT PRIMARY KEY,
    tokens  REAL NOT NULL,
    at      REAL NOT NULL,
    allowed INTEGER NOT NULL
) WITHOUT ROWID;
""",
    # Server-minted approval challenges (server/challenges): spent once, in the call's transaction.
    2: """
CREATE TABLE IF NOT EXISTS agentsurface_challenges (
    id            TEXT PRIMARY KEY,
    scope         TEXT NOT NULL,
    procedure_id  TEXT NOT NULL,
    digest        TEXT NOT NULL,
    level         TEXT NOT NULL,
    nonce         BLOB NOT NULL,
    expires_at    REAL NOT NULL,
    spent_at      REAL,
    spent_by      TEXT
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS agentsurface_challenges_by_expiry ON agentsurface_challenges (expires_at);
""",
}
assert max(MIGRATIONS) == SCHEMA_VERSION
VERSION_TABLE = (
    "CREATE TABLE IF NOT EXISTS agentsurface_schema_version (component TEXT PRIMARY KEY, version INTEGER NOT NULL)"
)

MEMORY = ":memory:"


class SqliteInvocationStore:
    """SQLite in WAL mode; a small pool of connections, one write transaction at a time.

    Processes sharing one file share its invocation records and rate-limit budgets (one host).

    ``setup(db)`` creates the app's own tables (run once, at start). The app's work gets
    a ``sqlite3.Connection`` (rows as ``sqlite3.Row``) inside the call's transaction: it must
    not commit or roll back itself.
    """

    transient_errors: tuple[type[BaseException], ...] = (sqlite3.OperationalError,)

    def __init__(
        self,
        path: str | Path,
        *,
        setup: Callable[[sqlite3.Connection], None] | None = None,
        pool_size: int = 4,
        busy_timeout_ms: int = 10_000,
        pool_timeout: float = 10.0,
    ) -> None:
        self.path = str(path)
        # Each connection to ":memory:" is its own database: one connection serves them all.
        self._pool_size = 1 if self.path == MEMORY else max(1, pool_size)
        self._busy_timeout_ms = busy_timeout_ms
        self._pool_timeout = pool_timeout
        self._idle: queue.SimpleQueue[sqlite3.Connection] = queue.SimpleQueue()
        self._all: list[sqlite3.Connection] = []
        self._slots = threading.BoundedSemaphore(self._pool_size)
        self._open_lock = threading.Lock()
        self._closed = False
        # Writers in this process queue here instead of polling SQLite's busy handler; the
        # busy timeout still orders writers from other processes sharing the file.
        self._write_lock = threading.Lock()
        with self._connection() as db, self._write_lock:
            # Outside a transaction: the app's setup may use executescript(), which commits.
            self._migrate(db)
            if setup is not None:
                setup(db)
            if db.in_transaction:
                db.execute("COMMIT")

    def _migrate(self, db: sqlite3.Connection) -> None:
        db.execute("BEGIN IMMEDIATE")  # one process at a time migrates a file
        try:
            db.execute(VERSION_TABLE)
            row = db.execute("SELECT version FROM agentsurface_schema_version WHERE component = 'store'").fetchone()
            current = 0 if row is None else int(row[0])
            if current > SCHEMA_VERSION:
                raise StoreVersionError(
                    f"the agentsurface tables in {self.path} are at schema version {current}; "
                    f"this release knows up to {SCHEMA_VERSION}: upgrade agentsurface"
                )
            for version in range(current + 1, SCHEMA_VERSION + 1):
                for statement in MIGRATIONS[version].split(";"):
                    if statement.strip():
                        db.execute(statement)
            db.execute(
                "INSERT INTO agentsurface_schema_version (component, version) VALUES ('store', ?)"
                " ON CONFLICT (component) DO UPDATE SET version = excluded.version",
                (SCHEMA_VERSION,),
            )
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise

    @property
    def where(self) -> str:
        """The database file (or ``:memory:``)."""
        return self.path

    def schema_version(self) -> int:
        return self.run(
            lambda db: int(
                db.execute("SELECT version FROM agentsurface_schema_version WHERE component = 'store'").fetchone()[0]
            )
        )

    def check(self) -> None:
        """Readiness: the file answers a read."""
        with self._connection() as db:
            db.execute("SELECT 1").fetchone()

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
        # Never a hang: a call that waits too long for a connection is refused as transient.
        if not self._slots.acquire(timeout=self._pool_timeout):
            raise sqlite3.OperationalError("no free connection in the store's pool (pool_timeout)")
        try:
            if self._closed:
                raise StoreMisuse("the store is closed")
            try:
                db = self._idle.get_nowait()
            except queue.Empty:
                with self._open_lock:
                    db = self._open()
                    self._all.append(db)
            try:
                yield db
            finally:
                with self._open_lock:
                    closed = self._closed
                    if not closed:
                        self._idle.put(db)
                if closed:  # the store closed while this one was out: its user closes it
                    db.close()
        finally:
            self._slots.release()

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        with self._connection() as db, self._writing():
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

    @contextmanager
    def _writing(self) -> Iterator[None]:
        if not self._write_lock.acquire(timeout=self._busy_timeout_ms / 1000):
            raise sqlite3.OperationalError("database is locked (waited busy_timeout for this process's writer)")
        try:
            yield
        finally:
            self._write_lock.release()

    def close(self) -> None:
        """Close the connections; later calls are refused (``StoreMisuse``). A connection another
        thread is using (the background upkeep, a call in flight) is closed when it comes back,
        never under that thread: SQLite connections are not safe to close from another thread."""
        with self._open_lock:
            self._closed = True
            self._all.clear()
        while True:
            try:
                self._idle.get_nowait().close()
            except queue.Empty:
                break

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
                "SELECT fingerprint, status, body FROM agentsurface_invocations"
                " WHERE scope = ? AND invocation_id = ?",
                (key.scope, key.invocation_id),
            ).fetchone()
            if row is not None:
                if row["fingerprint"] != fingerprint:
                    return Settlement("conflict", None)
                return Settlement("replayed", Outcome(int(row["status"]), json.loads(row["body"])))
            db.execute("SAVEPOINT agentsurface_work")
            outcome = work(db)
            if not db.in_transaction:
                raise StoreMisuse("the transaction was ended inside the app's work")
            if not outcome.keep:
                db.execute("ROLLBACK TO agentsurface_work")
            db.execute("RELEASE agentsurface_work")
            if outcome.record:
                db.execute(
                    "INSERT INTO agentsurface_invocations"
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

    def take_token(self, key: str, limit: RateLimit) -> int | None:
        """Spend one call of ``key``'s bucket, shared by every process using this file: None if
        allowed, else milliseconds until one is."""
        burst, rate = float(limit.burst), float(limit.per_second)
        now = time.time()

        def take(db: sqlite3.Connection) -> tuple[bool, float]:
            row = db.execute(
                "SELECT tokens, at FROM agentsurface_rate_limits WHERE key = ?", (key,)
            ).fetchone()
            tokens = burst if row is None else min(burst, float(row[0]) + max(0.0, now - float(row[1])) * rate)
            allowed = tokens >= 1.0
            left = tokens - 1.0 if allowed else tokens
            db.execute(
                "INSERT INTO agentsurface_rate_limits (key, tokens, at, allowed) VALUES (?, ?, ?, ?)"
                " ON CONFLICT (key) DO UPDATE SET tokens = excluded.tokens, at = excluded.at,"
                " allowed = excluded.allowed",
                (key, left, now if row is None else max(now, float(row[1])), int(allowed)),
            )
            return allowed, left

        allowed, tokens = self.run(take)
        return None if allowed else max(1, math.ceil((1.0 - tokens) / rate * 1000))

    def forget_idle_buckets(self, idle_seconds: float) -> int:
        """Drop rate-limit buckets untouched for ``idle_seconds`` (they would be full again)."""
        cutoff = time.time() - idle_seconds
        return self.run(
            lambda db: int(db.execute("DELETE FROM agentsurface_rate_limits WHERE at < ?", (cutoff,)).rowcount)
        )

    def forget_before(self, moment: datetime) -> int:
        """Drop records older than ``moment`` (retention); returns how many were dropped."""
        cutoff = moment.astimezone(UTC).isoformat(timespec="seconds")
        def delete(db: sqlite3.Connection) -> int:
            return int(db.execute("DELETE FROM agentsurface_invocations WHERE recorded_at < ?", (cutoff,)).rowcount)

        return self.run(delete)

    # ------------------------------------------------------------------ approval challenges

    def save_challenge(
        self, challenge: Challenge, *, cap: int | None = None, now: datetime | None = None
    ) -> Challenge | datetime:
        """Keep a minted challenge (its own short transaction) and return it. With ``cap``: the
        same call asked again (caller, procedure, input and level) while its challenge has more
        than half its life left gets that one back, nothing new kept; and a caller holding
        ``cap`` live (unspent, unexpired at ``now``) challenges of a procedure gets none: the
        answer is then when the first of those expires."""

        def save(db: sqlite3.Connection) -> Challenge | datetime:
            if cap is not None:
                at = (now or datetime.now(UTC)).timestamp()
                half = at + (challenge.expires_at.timestamp() - at) / 2
                same = db.execute(
                    "SELECT id, scope, procedure_id, digest, level, nonce, expires_at FROM agentsurface_challenges"
                    " WHERE scope = ? AND procedure_id = ? AND digest = ? AND level = ? AND spent_at IS NULL"
                    " AND expires_at > ? ORDER BY expires_at DESC LIMIT 1",
                    (challenge.caller, challenge.procedure, challenge.digest, challenge.level, half),
                ).fetchone()
                if same is not None:
                    return _challenge(tuple(same))
                count, first = db.execute(
                    "SELECT count(*), min(expires_at) FROM agentsurface_challenges"
                    " WHERE scope = ? AND procedure_id = ? AND spent_at IS NULL AND expires_at > ?",
                    (challenge.caller, challenge.procedure, at),
                ).fetchone()
                if int(count) >= cap:
                    return datetime.fromtimestamp(float(first), UTC)
            db.execute(
                "INSERT INTO agentsurface_challenges"
                " (id, scope, procedure_id, digest, level, nonce, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    challenge.id,
                    challenge.caller,
                    challenge.procedure,
                    challenge.digest,
                    challenge.level,
                    challenge.nonce,
                    challenge.expires_at.timestamp(),
                ),
            )
            return challenge

        return self.run(save)

    def claim_challenge(self, db: sqlite3.Connection, challenge_id: str) -> tuple[Challenge, bool] | None:
        """Inside the call's transaction (SQLite: one writer at a time, so it is locked)."""
        row = db.execute(
            "SELECT id, scope, procedure_id, digest, level, nonce, expires_at, spent_at"
            " FROM agentsurface_challenges WHERE id = ?",
            (challenge_id,),
        ).fetchone()
        if row is None:
            return None
        return _challenge(tuple(row)), row[7] is not None

    def spend_challenge(self, db: sqlite3.Connection, challenge_id: str, invocation_id: str, at: datetime) -> bool:
        cur = db.execute(
            "UPDATE agentsurface_challenges SET spent_at = ?, spent_by = ? WHERE id = ? AND spent_at IS NULL",
            (at.timestamp(), invocation_id, challenge_id),
        )
        return cur.rowcount == 1

    def forget_challenges_before(self, moment: datetime) -> int:
        """Drop challenges that expired before ``moment`` (spent or not); returns how many."""
        cutoff = moment.timestamp()
        return self.run(
            lambda db: int(db.execute("DELETE FROM agentsurface_challenges WHERE expires_at < ?", (cutoff,)).rowcount)
        )


def _challenge(row: tuple[Any, ...]) -> Challenge:
    ident, scope, procedure, digest, level, nonce, expires = row[:7]
    return Challenge(
        id=str(ident),
        caller=str(scope),
        procedure=str(procedure),
        digest=str(digest),
        expires_at=datetime.fromtimestamp(float(expires), UTC),
        level=level,
        nonce=bytes(nonce),
    )
