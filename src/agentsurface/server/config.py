"""What an app configures the procedure server with: the types of its hooks (``authenticate``,
``audit``), the server's limits, and the record the audit hook receives for every call."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import datetime, timedelta
from typing import Any, TypeAlias

from starlette.requests import Request

from .._core.limits import DEFAULT_LIMITS
from .._core.records import record
from .procedures import Caller

Authenticate: TypeAlias = Callable[[Request], "Caller | Awaitable[Caller | None] | None"]


@record
class ServerLimits:
    max_body_bytes: int = 65_536
    max_depth: int = 32
    # Seconds an approval stays usable on the server: the page's own approval window, so an
    # approval the page still honours is never refused here, nor one it dropped accepted.
    confirmation_max_age: float = DEFAULT_LIMITS.confirmation_ttl
    # Seconds a server-minted approval challenge stays usable (spent once, before this).
    challenge_ttl: float = 120.0
    # How many live (unspent, unexpired) approval challenges one caller may hold for one
    # procedure; past it, asking for another is RATE_LIMITED until one is spent or expires.
    # None: no cap of its own (the rate limit and the expiry still bound them).
    live_challenges: int | None = 8
    clock_skew: float = 30.0  # how far in the future an approval's time may be (clocks differ)
    # How long invocation records are kept for replay (None: for ever), pruned in the background.
    retention: timedelta | None = timedelta(days=1)
    prune_every: float = 300.0  # seconds between two background prunes (at most)


@record
class CallRecord:
    """One call as the app's audit hook sees it (accepted, replayed or refused)."""

    at: datetime
    procedure_id: str
    caller: Caller | None
    invocation_id: str | None
    outcome: str  # "ok" or an error code
    status: int
    replayed: bool = False
    input: str | None = None  # canonical JSON of what was sent, once it parsed
    confirmation_id: str | None = None
    reason: str | None = None  # the refusal's ``details.reason``, if it gave one
    # Refusals of unknown or over-budget callers are audited once per caller and minute: this
    # many more like this one were refused since the last record and not audited one by one.
    repeats: int = 0


Audit: TypeAlias = Callable[[CallRecord, Any], None]
