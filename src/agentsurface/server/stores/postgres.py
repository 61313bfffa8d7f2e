"""The invocation store on PostgreSQL (``pip install 'agentsurface[postgres]'``): psycopg 3 and
its connection pool, for several workers and hosts sharing one database.

Same contract as :class:`~agentsurface.server.SqliteInvocationStore`: each call runs in one
transaction holding the app's writes, the invocation record and the audit row. Duplicates of one
invocation id, from any process, are serialized by a transaction-scoped advisory lock on the
(caller scope, invocation id) pair: the loser waits for the winner's commit, then replays its
outcome. The rate-limit buckets live in the database too, so every worker spends one budget.

The app's work gets a ``psycopg.Connection`` inside the call's transaction (rows as ``dict`` by
default; ``row_factory`` changes that). It must not commit or roll back itself.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any, TypeVar

import psycopg
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict
from psycopg.rows import RowFactory, dict_row, tuple_row
from psycopg_pool import ConnectionPool, PoolTimeout

from ..._core.errors import AgentSurfaceError
from ..challenges import Challenge
from ..ratelimit import RateLimit
from .protocol import (
    SCHEMA_VERSION,
    InvocationKey,
    Outcome,
    Settlement,
    StoreMisuse,
    StoreUnavailable,
    StoreVersionError,
)

T = TypeVar("T")
log = logging.getLogger("agentsurface.server.postgres")

# pg_advisory_xact_lock key of schema creation and migrations (any constant unique to us).
_SCHEMA_LOCK = 0x61675F7375726661  # "ag_surfa"

MIGRATIONS: dict[int, tuple[str, ...]] = {
    1: (
        """CREATE TABLE IF NOT EXISTS agentsurface_invocations (
            scope         TEXT NOT NULL,
            invocation_id TEXT NOT NULL,
            procedure_id  TEXT NOT NULL,
            fingerprint   TEXT NOT NULL,
            status        INTEGER NOT NULL,
            body          TEXT NOT NULL,
            recorded_at   TIMESTAMPTZ NOT NULL DEFAULT now(),
            PRIMARY KEY (scope, invocation_id)
        )""",
        "CREATE INDEX IF NOT EXISTS agentsurface_invocations_by_age ON agentsurface_invocations (recorded_at)",
        """CREATE TABLE IF NOT EXISTS agentsurface_rate_limits (
            key     TEXT PRIMARY KEY,
            tokens  DOUBLE PRECISION NOT NULL,
            at      DOUBLE PRECISION NOT NULL,
            allowed BOOLEAN NOT NULL
        )""",
    ),
    # Server-minted approval challenges (server/challenges): spent once, in the call's transaction.
    2: (
        """CREATE TABLE IF NOT EXISTS agentsurface_challenges (
            id            TEXT PRIMARY KEY,
            scope         TEXT NOT NULL,
            procedure_id  TEXT NOT NULL,
            digest        TEXT NOT NULL,
            level         TEXT NOT NULL,
            nonce         BYTEA NOT NULL,
            expires_at    TIMESTAMPTZ NOT NULL,
            spent_at      TIMESTAMPTZ,
            spent_by      TEXT
        )""",
        "CREATE INDEX IF NOT EXISTS agentsurface_challenges_by_expiry ON agentsurface_challenges (expires_at)",
    ),
}
assert max(MIGRATIONS) == SCHEMA_VERSION

# Errors after which the same call may well succeed: a lost or refused connection, a restart,
# an exhausted pool (PoolTimeout), lock or statement timeouts, serialization failures.
TRANSIENT_ERRORS: tuple[type[BaseException], ...] = (psycopg.OperationalError, PoolTimeout)


def describe_dsn(dsn: str) -> str:
    """``database 'app' on db.internal:5432 as user 'svc'``: never the password."""
    try:
        info = conninfo_to_dict(dsn)
    except psycopg.ProgrammingError:
        return "an unparsable PostgreSQL DSN"
    host = str(info.get("host") or info.get("hostaddr") or "localhost (default socket)")
    port = str(info.get("port") or "5432")
    database = str(info.get("dbname") or info.get("user") or "(default)")
    user = info.get("user")
    return f"database {database!r} on {host}:{port}" + (f" as user {user!r}" if user else "")


def _scrub(message: str, dsn: str) -> str:
    try:
        password = conninfo_to_dict(dsn).get("password")
    except psycopg.ProgrammingError:
        password = None
    first = (message.strip().splitlines() or [""])[0]
    return first.replace(str(password), "***") if password else first


def _lock_key(scope: str, invocation_id: str) -> int:
    raw = hashlib.blake2b(f"{scope}\x1e{invocation_id}".encode(), digest_size=8).digest()
    return int.from_bytes(raw, "big", signed=True)


class PostgresInvocationStore:
    """PostgreSQL through a ``psycopg_pool.ConnectionPool``.

    ``dsn``: ``postgresql://user:password@host:5432/dbname`` (or a libpq key/value string).
    ``setup(db)`` creates the app's tables; it runs at start in one transaction, under the same
    lock as the store's own schema, so workers starting together never race each other.
    ``pool_size`` bounds the connections of this process; a call that cannot get one within
    ``pool_timeout`` seconds is refused as transient (``Retry-After``), never left hanging.
    ``lock_timeout_ms`` bounds how long a duplicate waits for the call it duplicates.
    """

    transient_errors = TRANSIENT_ERRORS

    def __init__(
        self,
        dsn: str,
        *,
        setup: Callable[[psycopg.Connection[Any]], None] | None = None,
        pool_size: int = 10,
        pool_timeout: float = 5.0,
        connect_timeout: float = 5.0,
        lock_timeout_ms: int = 30_000,
        row_factory: RowFactory[Any] = dict_row,
    ) -> None:
        self.dsn_description = describe_dsn(dsn)
        self._dsn = dsn
        self._row_factory = row_factory
        size = max(1, int(pool_size))
        self._pool: ConnectionPool[psycopg.Connection[Any]] = ConnectionPool(
            dsn,
            min_size=1,
            max_size=size,
            timeout=pool_timeout,
            open=False,
            kwargs={
                "autocommit": True,  # transactions are explicit: conn.transaction()
                "connect_timeout": max(1, math.ceil(connect_timeout)),
                "options": f"-c lock_timeout={int(lock_timeout_ms)}",
            },
            configure=self._configure,
            name="agentsurface",
        )
        try:
            # A first connection, made here with a clear message, not in the pool's background.
            with psycopg.connect(dsn, connect_timeout=max(1, math.ceil(connect_timeout)), autocommit=True):
                pass
        except psycopg.Error as exc:
            raise StoreUnavailable(
                f"cannot connect to PostgreSQL {self.dsn_description}: {_scrub(str(exc), dsn)}"
            ) from None
        try:
            self._pool.open(wait=True, timeout=connect_timeout + 1)
        except PoolTimeout:
            self._pool.close()
            raise StoreUnavailable(f"cannot open a connection pool to PostgreSQL {self.dsn_description}") from None
        try:
            self._migrate(setup)
        except BaseException:
            self._pool.close()
            raise

    def _configure(self, conn: psycopg.Connection[Any]) -> None:
        conn.row_factory = self._row_factory

    # ------------------------------------------------------------------ schema

    def _migrate(self, setup: Callable[[psycopg.Connection[Any]], None] | None) -> None:
        with self._transaction() as db:
            db.execute("SELECT pg_advisory_xact_lock(%s)", (_SCHEMA_LOCK,))
            db.execute(
                "CREATE TABLE IF NOT EXISTS agentsurface_schema_version ("
                " component TEXT PRIMARY KEY, version INTEGER NOT NULL)"
            )
            row = db.execute(
                "SELECT version FROM agentsurface_schema_version WHERE component = 'store'"
            ).fetchone()
            current = 0 if row is None else int(_first(row))
            if current > SCHEMA_VERSION:
                raise StoreVersionError(
                    f"the agentsurface tables in {self.dsn_description} are at schema version {current}; "
                    f"this release knows up to {SCHEMA_VERSION}: upgrade agentsurface"
                )
            for version in range(current + 1, SCHEMA_VERSION + 1):
                for statement in MIGRATIONS[version]:
                    db.execute(statement)  # our own constant SQL
            db.execute(
                "INSERT INTO agentsurface_schema_version (component, version) VALUES ('store', %s)"
                " ON CONFLICT (component) DO UPDATE SET version = excluded.version",
                (SCHEMA_VERSION,),
            )
            if setup is not None:
                setup(db)

    @property
    def where(self) -> str:
        """The database's DSN without its password."""
        return self.dsn_description

    def schema_version(self) -> int:
        return self.run(
            lambda db: int(
                _first(db.execute("SELECT version FROM agentsurface_schema_version WHERE component = 'store'")
                       .fetchone())
            )
        )

    # ------------------------------------------------------------------ connections

    @contextmanager
    def _transaction(self) -> Iterator[psycopg.Connection[Any]]:
        with self._pool.connection() as db, db.transaction():
            yield db

    def close(self) -> None:
        self._pool.close()

    def check(self) -> None:
        """Readiness: one round trip to the database (raises a transient error if it is down)."""
        with self._pool.connection() as db:
            db.execute("SELECT 1")

    # ------------------------------------------------------------------ the protocol

    def run(self, work: Callable[[Any], T]) -> T:
        try:
            with self._transaction() as db:
                return work(db)
        except psycopg.ProgrammingError as exc:
            if "forbidden within a Transaction" in str(exc):
                raise StoreMisuse("the transaction was ended inside the app's work") from exc
            raise

    def execute_once(
        self,
        key: InvocationKey,
        fingerprint: str,
        work: Callable[[Any], Outcome],
        finish: Callable[[Any, Outcome], None] | None = None,
    ) -> Settlement:
        def once(db: psycopg.Connection[Any]) -> Settlement:
            # Held until this transaction ends: a duplicate from any process waits here, then
            # (READ COMMITTED: each statement sees what committed before it) finds the record.
            db.execute("SELECT pg_advisory_xact_lock(%s)", (_lock_key(key.scope, key.invocation_id),))
            with db.cursor(row_factory=tuple_row) as cur:
                row = cur.execute(
                    "SELECT fingerprint, status, body FROM agentsurface_invocations"
                    " WHERE scope = %s AND invocation_id = %s",
                    (key.scope, key.invocation_id),
                ).fetchone()
            if row is not None:
                if row[0] != fingerprint:
                    return Settlement("conflict", None)
                return Settlement("replayed", Outcome(int(row[1]), json.loads(row[2])))
            outcome: Outcome | None = None
            try:
                with db.transaction():  # a savepoint: undone unless the outcome keeps it
                    outcome = work(db)
                    if not outcome.keep:
                        raise _Undo
            except _Undo:
                pass
            assert outcome is not None
            if outcome.record:
                db.execute(
                    "INSERT INTO agentsurface_invocations"
                    " (scope, invocation_id, procedure_id, fingerprint, status, body)"
                    " VALUES (%s, %s, %s, %s, %s, %s)",
                    (
                        key.scope,
                        key.invocation_id,
                        key.procedure_id,
                        fingerprint,
                        outcome.status,
                        json.dumps(outcome.body, separators=(",", ":"), ensure_ascii=False),
                    ),
                )
            if finish is not None:
                finish(db, outcome)
            return Settlement("applied", outcome)

        return self.run(once)

    def take_token(self, key: str, limit: RateLimit) -> int | None:
        """Spend one call of ``key``'s bucket, shared by every process on this database: None if
        allowed, else milliseconds until one is. One short statement; the database's clock."""

        # One statement, atomic on its own: no BEGIN/COMMIT round trips (autocommit connections).
        with self._pool.connection() as db, db.cursor(row_factory=tuple_row) as cur:
            row = cur.execute(
                _TAKE, {"key": key, "burst": float(limit.burst), "rate": float(limit.per_second)}
            ).fetchone()
        assert row is not None
        allowed, tokens = bool(row[0]), float(row[1])
        return None if allowed else max(1, math.ceil((1.0 - tokens) / limit.per_second * 1000))

    def forget_before(self, moment: datetime) -> int:
        """Drop invocation records older than ``moment`` (retention); returns how many."""

        def delete(db: psycopg.Connection[Any]) -> int:
            return db.execute(
                "DELETE FROM agentsurface_invocations WHERE recorded_at < %s", (moment.astimezone(UTC),)
            ).rowcount

        return self.run(delete)

    def forget_idle_buckets(self, idle_seconds: float) -> int:
        """Drop rate-limit buckets untouched for ``idle_seconds`` (they would be full again)."""

        def delete(db: psycopg.Connection[Any]) -> int:
            return db.execute(
                "DELETE FROM agentsurface_rate_limits"
                " WHERE at < extract(epoch FROM clock_timestamp()) - %s",
                (float(idle_seconds),),
            ).rowcount

        return self.run(delete)

    # ------------------------------------------------------------------ approval challenges

    def save_challenge(
        self, challenge: Challenge, *, cap: int | None = None, now: datetime | None = None
    ) -> Challenge | datetime:
        """Keep a minted challenge (one short transaction) and return it. With ``cap``: the
        same call asked again (caller, procedure, input and level) while its challenge has more
        than half its life left gets that one back, nothing new kept; and a caller holding
        ``cap`` live (unspent, unexpired at ``now``) challenges of a procedure gets none: the
        answer is then when the first of those expires. Concurrent mints for one caller and
        procedure take turns (a transaction-scoped advisory lock)."""
        with self._pool.connection() as db, db.transaction():
            if cap is not None:
                at = (now or datetime.now(UTC)).astimezone(UTC)
                half = at + (challenge.expires_at.astimezone(UTC) - at) / 2
                db.execute(
                    "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))",
                    (f"agentsurface-challenges\x1f{challenge.caller}\x1f{challenge.procedure}",),
                )
                with db.cursor(row_factory=tuple_row) as cur:
                    same = cur.execute(
                        "SELECT id, scope, procedure_id, digest, level, nonce, expires_at FROM agentsurface_challenges"
                        " WHERE scope = %s AND procedure_id = %s AND digest = %s AND level = %s AND spent_at IS NULL"
                        " AND expires_at > %s ORDER BY expires_at DESC LIMIT 1",
                        (challenge.caller, challenge.procedure, challenge.digest, challenge.level, half),
                    ).fetchone()
                    if same is not None:
                        return _challenge(same)
                    row = cur.execute(
                        "SELECT count(*), min(expires_at) FROM agentsurface_challenges"
                        " WHERE scope = %s AND procedure_id = %s AND spent_at IS NULL AND expires_at > %s",
                        (challenge.caller, challenge.procedure, at),
                    ).fetchone()
                assert row is not None
                if int(row[0]) >= cap:
                    first: datetime = row[1]
                    return first
            db.execute(
                "INSERT INTO agentsurface_challenges"
                " (id, scope, procedure_id, digest, level, nonce, expires_at) VALUES (%s, %s, %s, %s, %s, %s, %s)",
                (
                    challenge.id,
                    challenge.caller,
                    challenge.procedure,
                    challenge.digest,
                    challenge.level,
                    challenge.nonce,
                    challenge.expires_at.astimezone(UTC),
                ),
            )
            return challenge

    def claim_challenge(self, db: psycopg.Connection[Any], challenge_id: str) -> tuple[Challenge, bool] | None:
        """Inside the call's transaction: the row is locked (FOR UPDATE) until it ends, so a
        concurrent call spending the same challenge waits, then sees it spent."""
        with db.cursor(row_factory=tuple_row) as cur:
            row = cur.execute(
                "SELECT id, scope, procedure_id, digest, level, nonce, expires_at, spent_at"
                " FROM agentsurface_challenges WHERE id = %s FOR UPDATE",
                (challenge_id,),
            ).fetchone()
        if row is None:
            return None
        return _challenge(row), row[7] is not None

    def spend_challenge(self, db: psycopg.Connection[Any], challenge_id: str, invocation_id: str, at: datetime) -> bool:
        cur = db.execute(
            "UPDATE agentsurface_challenges SET spent_at = %s, spent_by = %s WHERE id = %s AND spent_at IS NULL",
            (at.astimezone(UTC), invocation_id, challenge_id),
        )
        return cur.rowcount == 1

    def forget_challenges_before(self, moment: datetime) -> int:
        """Drop challenges that expired before ``moment`` (spent or not); returns how many."""

        def delete(db: psycopg.Connection[Any]) -> int:
            return db.execute(
                "DELETE FROM agentsurface_challenges WHERE expires_at < %s", (moment.astimezone(UTC),)
            ).rowcount

        return self.run(delete)


class _Undo(AgentSurfaceError):
    """Rolls the work's savepoint back (a refusal keeps nothing)."""


def _first(row: Any) -> Any:
    return next(iter(row.values())) if isinstance(row, dict) else row[0]


_TAKE = sql.SQL(
    """
    WITH now AS (SELECT extract(epoch FROM clock_timestamp())::double precision AS t)
    INSERT INTO agentsurface_rate_limits AS b (key, tokens, at, allowed)
    SELECT %(key)s, %(burst)s - 1, now.t, TRUE FROM now
    ON CONFLICT (key) DO UPDATE SET
        allowed = LEAST(%(burst)s, b.tokens + GREATEST(0, excluded.at - b.at) * %(rate)s) >= 1,
        tokens = LEAST(%(burst)s, b.tokens + GREATEST(0, excluded.at - b.at) * %(rate)s)
                 - CASE WHEN LEAST(%(burst)s, b.tokens + GREATEST(0, excluded.at - b.at) * %(rate)s) >= 1
                        THEN 1 ELSE 0 END,
        at = GREATEST(b.at, excluded.at)
    RETURNING allowed, tokens
    """
)

__all__ = ["TRANSIENT_ERRORS", "PostgresInvocationStore", "describe_dsn"]


def _challenge(row: Any) -> Challenge:
    return Challenge(
        id=str(row[0]),
        caller=str(row[1]),
        procedure=str(row[2]),
        digest=str(row[3]),
        expires_at=row[6],
        level=row[4],
        nonce=bytes(row[5]),
    )
