"""The invocation store on the project's own database, through Django's connection.

A procedure's view runs in the call's worker thread, on that thread's Django connection. With
this store the call's transaction is a ``transaction.atomic()`` block on that same connection:
the view's writes (its own ``atomic()`` is a savepoint inside), the invocation record, the
spent approval challenge and the audit row commit together or not at all. SQLite and
PostgreSQL (the backends Django ships for both) are supported; the tables are created on first
use (``CREATE TABLE IF NOT EXISTS``), beside the project's.
"""

from __future__ import annotations

import base64
import json
import math
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, TypeVar

from django.db import DEFAULT_DB_ALIAS, OperationalError, connections, transaction

from ..server.challenges import Challenge
from ..server.ratelimit import RateLimit
from ..server.stores import InvocationKey, InvocationStore, Outcome, Settlement, StoreMisuse

T = TypeVar("T")

_TABLES = (
    """CREATE TABLE IF NOT EXISTS agentsurface_invocations (
        scope TEXT NOT NULL, invocation_id TEXT NOT NULL, procedure_id TEXT NOT NULL,
        fingerprint TEXT NOT NULL, status INTEGER NOT NULL, body TEXT NOT NULL,
        recorded_at DOUBLE PRECISION NOT NULL, PRIMARY KEY (scope, invocation_id))""",
    """CREATE TABLE IF NOT EXISTS agentsurface_challenges (
        id TEXT PRIMARY KEY, scope TEXT NOT NULL, procedure_id TEXT NOT NULL, digest TEXT NOT NULL,
        level TEXT NOT NULL, nonce TEXT NOT NULL, expires_at DOUBLE PRECISION NOT NULL,
        spent_at DOUBLE PRECISION, spent_by TEXT)""",
    """CREATE TABLE IF NOT EXISTS agentsurface_rate_limits (
        key TEXT PRIMARY KEY, tokens DOUBLE PRECISION NOT NULL, at DOUBLE PRECISION NOT NULL)""",
)


class DjangoInvocationStore:
    """Invocation records and approval challenges in the Django database ``using`` (an alias of
    ``DATABASES``), in the same transaction as the procedure's view::

        agent = AgentViews(urlpatterns, store=DjangoInvocationStore())

    The app's work and audit hooks get Django's connection (``connection.cursor()``). On SQLite
    the calls of one process take turns (one writer); several processes on one file may meet
    a busy database, answered as a transient refusal (retry). The tables are created on first
    use; their names start with ``agentsurface_``."""

    transient_errors: tuple[type[BaseException], ...] = (OperationalError,)

    def __init__(self, using: str = DEFAULT_DB_ALIAS) -> None:
        self.using = using
        self._ready = False
        self._setup_lock = threading.Lock()
        self._write_lock = threading.Lock()

    # ------------------------------------------------------------------ plumbing

    @property
    def _connection(self) -> Any:
        return connections[self.using]

    def _ensure_tables(self) -> None:
        if self._ready:
            return
        with self._setup_lock:
            if not self._ready:
                with transaction.atomic(using=self.using), self._connection.cursor() as cur:
                    for statement in _TABLES:
                        cur.execute(statement)
                self._ready = True

    @contextmanager
    def _transaction(self) -> Iterator[Any]:
        """One transaction on this thread's connection (SQLite: one writer of this process at
        a time, so two calls never meet in SQLite's lock upgrade)."""
        self._ensure_tables()
        connection = self._connection
        if connection.in_atomic_block:
            raise StoreMisuse("the store's transaction cannot start inside another atomic block")
        serial = self._write_lock if connection.vendor == "sqlite" else None
        if serial is not None:
            serial.acquire()
        try:
            with transaction.atomic(using=self.using):
                yield connection
                if not connection.in_atomic_block:
                    raise StoreMisuse("the transaction was ended inside the app's work")
        finally:
            if serial is not None:
                serial.release()

    @staticmethod
    def _one(connection: Any, sql: str, params: list[Any]) -> tuple[Any, ...] | None:
        with connection.cursor() as cur:
            cur.execute(sql, params)
            row = cur.fetchone()
        return None if row is None else tuple(row)

    @staticmethod
    def _count(connection: Any, sql: str, params: list[Any]) -> int:
        with connection.cursor() as cur:
            cur.execute(sql, params)
            return int(cur.rowcount)

    @property
    def where(self) -> str:
        """The Django database alias and its vendor (never its settings)."""
        return f"Django's database {self.using!r} ({self._connection.vendor})"

    def check(self) -> None:
        """Readiness: the database answers."""
        self._one(self._connection, "SELECT 1", [])

    def close(self) -> None:
        """Nothing to close: the connections are Django's."""

    # ------------------------------------------------------------------ the protocol

    def run(self, work: Callable[[Any], T]) -> T:
        with self._transaction() as connection:
            return work(connection)

    def execute_once(
        self,
        key: InvocationKey,
        fingerprint: str,
        work: Callable[[Any], Outcome],
        finish: Callable[[Any, Outcome], None] | None = None,
    ) -> Settlement:
        with self._transaction() as connection:
            if connection.vendor == "postgresql":
                # Held until the transaction ends: a duplicate from any process waits here,
                # then finds the record.
                self._one(connection, "SELECT pg_advisory_xact_lock(hashtext(%s))", [f"{key.scope}\x1f{key.invocation_id}"])
            row = self._one(
                connection,
                "SELECT fingerprint, status, body FROM agentsurface_invocations WHERE scope = %s AND invocation_id = %s",
                [key.scope, key.invocation_id],
            )
            if row is not None:
                if row[0] != fingerprint:
                    return Settlement("conflict", None)
                return Settlement("replayed", Outcome(int(row[1]), json.loads(row[2])))
            point = transaction.savepoint(using=self.using)
            try:
                outcome = work(connection)
            except BaseException:
                transaction.savepoint_rollback(point, using=self.using)
                raise
            if outcome.keep:
                transaction.savepoint_commit(point, using=self.using)
            else:
                transaction.savepoint_rollback(point, using=self.using)
            if outcome.record:
                self._count(
                    connection,
                    "INSERT INTO agentsurface_invocations"
                    " (scope, invocation_id, procedure_id, fingerprint, status, body, recorded_at)"
                    " VALUES (%s, %s, %s, %s, %s, %s, %s)",
                    [
                        key.scope,
                        key.invocation_id,
                        key.procedure_id,
                        fingerprint,
                        outcome.status,
                        json.dumps(outcome.body, separators=(",", ":"), ensure_ascii=False),
                        time.time(),
                    ],
                )
            if finish is not None:
                finish(connection, outcome)
            return Settlement("applied", outcome)

    def forget_before(self, moment: datetime) -> int:
        """Drop records older than ``moment`` (retention); returns how many were dropped."""
        cutoff = moment.timestamp()
        return self.run(
            lambda c: self._count(c, "DELETE FROM agentsurface_invocations WHERE recorded_at < %s", [cutoff])
        )

    # ------------------------------------------------------------------ rate limits

    def take_token(self, key: str, limit: RateLimit) -> int | None:
        """Spend one call of ``key``'s bucket, shared by every process on this database: None if
        allowed, else milliseconds until one is."""
        burst, rate = float(limit.burst), float(limit.per_second)

        def take(c: Any) -> tuple[bool, float]:
            if c.vendor == "postgresql":  # two workers read the same bucket one after the other
                self._one(c, "SELECT pg_advisory_xact_lock(hashtext(%s))", [f"agentsurface-rate\x1f{key}"])
            now = time.time()
            row = self._one(c, "SELECT tokens, at FROM agentsurface_rate_limits WHERE key = %s", [key])
            tokens = burst if row is None else min(burst, float(row[0]) + max(0.0, now - float(row[1])) * rate)
            allowed = tokens >= 1.0
            left = tokens - 1.0 if allowed else tokens
            self._count(
                c,
                "INSERT INTO agentsurface_rate_limits (key, tokens, at) VALUES (%s, %s, %s)"
                " ON CONFLICT (key) DO UPDATE SET tokens = excluded.tokens, at = excluded.at",
                [key, left, now if row is None else max(now, float(row[1]))],
            )
            return allowed, left

        allowed, tokens = self.run(take)
        return None if allowed else max(1, math.ceil((1.0 - tokens) / rate * 1000))

    def forget_idle_buckets(self, idle_seconds: float) -> int:
        """Drop rate-limit buckets untouched for ``idle_seconds`` (they would be full again)."""
        cutoff = time.time() - idle_seconds
        return self.run(lambda c: self._count(c, "DELETE FROM agentsurface_rate_limits WHERE at < %s", [cutoff]))

    # ------------------------------------------------------------------ approval challenges

    def save_challenge(
        self, challenge: Challenge, *, cap: int | None = None, now: datetime | None = None
    ) -> Challenge | datetime:
        """Keep a minted challenge (its own short transaction) and return it. With ``cap``, as the
        library's stores: the same call asked again gets its live challenge back (while more than
        half its life is left), and a caller holding ``cap`` live challenges of a procedure gets
        none: the answer is when the first of those expires."""

        def save(c: Any) -> Challenge | datetime:
            if cap is not None:
                at = (now or datetime.now(UTC)).timestamp()
                half = at + (challenge.expires_at.timestamp() - at) / 2
                if c.vendor == "postgresql":
                    self._one(
                        c,
                        "SELECT pg_advisory_xact_lock(hashtext(%s))",
                        [f"agentsurface-challenges\x1f{challenge.caller}\x1f{challenge.procedure}"],
                    )
                same = self._one(
                    c,
                    "SELECT id, scope, procedure_id, digest, level, nonce, expires_at FROM agentsurface_challenges"
                    " WHERE scope = %s AND procedure_id = %s AND digest = %s AND level = %s AND spent_at IS NULL"
                    " AND expires_at > %s ORDER BY expires_at DESC LIMIT 1",
                    [challenge.caller, challenge.procedure, challenge.digest, challenge.level, half],
                )
                if same is not None:
                    return _challenge(same)
                live = self._one(
                    c,
                    "SELECT count(*), min(expires_at) FROM agentsurface_challenges"
                    " WHERE scope = %s AND procedure_id = %s AND spent_at IS NULL AND expires_at > %s",
                    [challenge.caller, challenge.procedure, at],
                )
                if live is not None and int(live[0]) >= cap:
                    return datetime.fromtimestamp(float(live[1]), UTC)
            self._count(
                c,
                "INSERT INTO agentsurface_challenges"
                " (id, scope, procedure_id, digest, level, nonce, expires_at) VALUES (%s, %s, %s, %s, %s, %s, %s)",
                [
                    challenge.id,
                    challenge.caller,
                    challenge.procedure,
                    challenge.digest,
                    challenge.level,
                    base64.b64encode(challenge.nonce).decode("ascii"),
                    challenge.expires_at.timestamp(),
                ],
            )
            return challenge

        return self.run(save)

    def claim_challenge(self, db: Any, challenge_id: str) -> tuple[Challenge, bool] | None:
        """Inside the call's transaction (PostgreSQL: the row locked until it ends)."""
        lock = " FOR UPDATE" if db.vendor == "postgresql" else ""
        row = self._one(
            db,
            "SELECT id, scope, procedure_id, digest, level, nonce, expires_at, spent_at"
            " FROM agentsurface_challenges WHERE id = %s" + lock,
            [challenge_id],
        )
        if row is None:
            return None
        return _challenge(row[:7]), row[7] is not None

    def spend_challenge(self, db: Any, challenge_id: str, invocation_id: str, at: datetime) -> bool:
        return (
            self._count(
                db,
                "UPDATE agentsurface_challenges SET spent_at = %s, spent_by = %s WHERE id = %s AND spent_at IS NULL",
                [at.timestamp(), invocation_id, challenge_id],
            )
            == 1
        )

    def forget_challenges_before(self, moment: datetime) -> int:
        """Drop challenges that expired before ``moment`` (spent or not); returns how many."""
        cutoff = moment.timestamp()
        return self.run(
            lambda c: self._count(c, "DELETE FROM agentsurface_challenges WHERE expires_at < %s", [cutoff])
        )


__all__ = ["DjangoInvocationStore"]

if TYPE_CHECKING:  # mypy checks the store against the whole protocol the server uses

    def _conforms(store: DjangoInvocationStore) -> InvocationStore:
        return store


def _challenge(row: tuple[Any, ...]) -> Challenge:
    ident, scope, procedure, digest, level, nonce, expires = row
    return Challenge(
        id=str(ident),
        caller=str(scope),
        procedure=str(procedure),
        digest=str(digest),
        expires_at=datetime.fromtimestamp(float(expires), UTC),
        level=level,
        nonce=base64.b64decode(str(nonce)),
    )
