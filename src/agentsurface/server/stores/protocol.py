"""Where calls are applied once: an invocation store in the app's own database.

``execute_once`` opens one transaction, looks the invocation up by (caller scope, invocation id),
and either replays the recorded outcome, refuses a different input under the same id, or runs
the app's work and records its outcome in that same transaction, so a change and its record
commit together or not at all. Any database can implement the protocol; SQLite (WAL mode) ships.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any, Literal, Protocol, TypeVar

from ..._core.errors import AgentSurfaceError
from ..._core.records import record
from ..challenges.challenge import Challenge
from ..ratelimit import RateLimit

T = TypeVar("T")


@record
class Outcome:
    """A settled call: the HTTP status and JSON body to answer (and to replay).

    ``keep`` commits the work's writes (a success); otherwise they are rolled back (a refusal).
    ``record`` stores the outcome for replay under its invocation id.
    """

    status: int
    body: dict[str, Any]
    keep: bool = True
    record: bool = True


@record
class Settlement:
    kind: Literal["applied", "replayed", "conflict"]
    outcome: Outcome | None  # None for a conflict


@record
class InvocationKey:
    scope: str  # whose id space: the caller (and tenant), never what the page claims
    invocation_id: str
    procedure_id: str


class InvocationStore(Protocol):
    """Everything the server asks of a store: the calls applied once, readiness, retention,
    the shared rate-limit buckets and the approval challenges. SQLite, PostgreSQL and Django's
    database implement all of it (mypy checks each against this Protocol), and the server checks
    a store of the app's own when it starts (:func:`missing_members`)."""

    # Errors that mean "the database could not be reached": answered as a transient refusal.
    transient_errors: tuple[type[BaseException], ...]

    @property
    def where(self) -> str:
        """What the store is, for messages: a path, or a DSN without its password."""
        ...

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

    def check(self) -> None:
        """Readiness: raises when the database does not answer."""
        ...

    def close(self) -> None:
        """Release the store's connections (idempotent)."""
        ...

    def forget_before(self, moment: datetime) -> int:
        """Drop invocation records older than ``moment`` (retention); returns how many."""
        ...

    # ------------------------------------------------------------------ rate limits

    def take_token(self, key: str, limit: RateLimit) -> int | None:
        """Spend one call of ``key``'s bucket, shared by every process on this database: None
        if allowed, else milliseconds until one is."""
        ...

    def forget_idle_buckets(self, idle_seconds: float) -> int:
        """Drop rate-limit buckets untouched for ``idle_seconds`` (they would be full again)."""
        ...

    # ------------------------------------------------------------------ approval challenges

    def save_challenge(self, challenge: Challenge, *, cap: int | None = None, now: datetime | None = None) -> Challenge | datetime:
        """Keep ``challenge``, or the live one already issued for the same call; with ``cap``,
        at most that many live challenges per caller and procedure: past it, the moment the
        oldest expires (a datetime) instead."""
        ...

    def claim_challenge(self, db: Any, challenge_id: str) -> tuple[Challenge, bool] | None:
        """In the call's transaction: the challenge and whether it was spent (locked until the
        transaction ends), or None."""
        ...

    def spend_challenge(self, db: Any, challenge_id: str, invocation_id: str, at: datetime) -> bool:
        """In the call's transaction: mark it spent by ``invocation_id`` (False if it was)."""
        ...

    def forget_challenges_before(self, moment: datetime) -> int:
        """Drop challenges that expired before ``moment``; returns how many."""
        ...


_MEMBERS = (
    "transient_errors", "where", "execute_once", "run", "check", "close", "forget_before",
    "take_token", "forget_idle_buckets",
    "save_challenge", "claim_challenge", "spend_challenge", "forget_challenges_before",
)


def missing_members(store: object) -> list[str]:
    """What a store of the app's own lacks of :class:`InvocationStore` (the server refuses to
    start with an incomplete one rather than fail on the first call that needs the rest)."""
    return [name for name in _MEMBERS if not hasattr(store, name)]


class StoreMisuse(AgentSurfaceError, RuntimeError):
    """The app's work ended the store's transaction itself (commit/rollback inside work)."""


class StoreUnavailable(AgentSurfaceError, RuntimeError):
    """The store's database cannot be reached at start (the message names it, never a password)."""


class StoreVersionError(AgentSurfaceError, RuntimeError):
    """The database holds the store's tables at a schema version newer than this release."""


# The version of the store's own tables (invocation records, rate-limit buckets), recorded in
# ``agentsurface_schema_version`` so a later release can migrate what an earlier one created.
SCHEMA_VERSION = 2


__all__ = [
    "SCHEMA_VERSION",
    "InvocationKey",
    "InvocationStore",
    "Outcome",
    "Settlement",
    "StoreMisuse",
    "StoreUnavailable",
    "StoreVersionError",
    "missing_members",
]
