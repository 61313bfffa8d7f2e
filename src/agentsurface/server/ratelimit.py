"""A token bucket per caller: ``burst`` calls at once, refilled at ``per_second``.

:class:`RateLimiter` keeps the buckets in this process; :class:`SharedRateLimiter` keeps them in
the invocation store, so all workers on one database spend one budget.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from typing import Protocol

from .._core.records import record


@record
class RateLimit:
    burst: int = 60
    per_second: float = 10.0

    def __post_init__(self) -> None:
        if isinstance(self.burst, bool) or not isinstance(self.burst, int) or self.burst < 1:
            raise ValueError("a rate limit needs an integer burst >= 1")
        if not isinstance(self.per_second, (int, float)) or not self.per_second > 0:
            raise ValueError("a rate limit needs per_second > 0")


class RateLimiter:
    MAX_KEYS = 10_000  # past this, buckets that have refilled completely are forgotten

    def __init__(self, limit: RateLimit, clock: Callable[[], float] = time.monotonic) -> None:
        self._limit = limit
        self._clock = clock
        self._buckets: dict[str, tuple[float, float]] = {}  # key -> (tokens, when)
        self._lock = threading.Lock()

    def take(self, key: str) -> int | None:
        """Spend one call for ``key``: None if allowed, else milliseconds until one is."""
        burst, rate = float(self._limit.burst), self._limit.per_second
        with self._lock:
            now = self._clock()
            tokens, when = self._buckets.get(key, (burst, now))
            tokens = min(burst, tokens + (now - when) * rate)
            allowed = tokens >= 1.0
            self._buckets[key] = (tokens - 1.0 if allowed else tokens, now)
            if len(self._buckets) > self.MAX_KEYS:
                full = burst / rate
                for stale, (_, seen) in list(self._buckets.items()):
                    if now - seen >= full:
                        del self._buckets[stale]
        return None if allowed else max(1, math.ceil((1.0 - tokens) / rate * 1000))

    def refund(self, key: str) -> None:
        """Give back the call just taken for ``key`` (the shared budget refused it)."""
        burst = float(self._limit.burst)
        with self._lock:
            found = self._buckets.get(key)
            if found is not None:
                self._buckets[key] = (min(burst, found[0] + 1.0), found[1])


class TokenStore(Protocol):
    def take_token(self, key: str, limit: RateLimit) -> int | None: ...


class SharedRateLimiter:
    """One budget per caller for every process on one store (``store.take_token``).

    A bucket of this process is asked first: when it refuses, the shared one would too (it sees
    a superset of the calls), so a flood is refused without touching the database; only calls
    this process would allow cost one short statement. No lock is held beyond that statement.
    """

    def __init__(self, limit: RateLimit, store: TokenStore, clock: Callable[[], float] = time.monotonic) -> None:
        self._limit = limit
        self._store = store
        self._local = RateLimiter(limit, clock)

    def take(self, key: str) -> int | None:
        wait = self._local.take(key)
        if wait is not None:
            return wait
        wait = self._store.take_token(key, self._limit)
        if wait is not None:
            self._local.refund(key)
        return wait
