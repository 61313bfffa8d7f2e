"""A token bucket per caller: ``burst`` calls at once, refilled at ``per_second``."""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
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
