"""Where calls are applied once: an invocation store in the app's own database.

``execute_once`` opens one transaction, looks the invocation up by (caller scope, invocation id),
and either replays the recorded outcome, refuses a different input under the same id, or runs
the app's work and records its outcome in that same transaction, so a change and its record
commit together or not at all. Any database can implement the protocol; SQLite (WAL mode) ships.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, Protocol, TypeVar

from ..._core.errors import AgentSurfaceError

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
]
