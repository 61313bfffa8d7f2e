"""Time for the registry: ``now()`` and timers, injectable for deterministic tests.

``SystemClock`` uses wall time and the running asyncio loop (in Pyodide that is the browser's
event loop). ``ManualClock`` only moves when a test calls ``advance()``, firing due timers in
order, so timeouts, TTLs and expiries are testable without sleeping.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import math
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Protocol, runtime_checkable

Cancel = Callable[[], None]


@runtime_checkable
class Clock(Protocol):
    def now(self) -> float:
        """Seconds since the epoch."""
        ...

    def call_later(self, delay: float, callback: Callable[[], None]) -> Cancel:
        """Run ``callback`` after ``delay`` seconds; returns a function that cancels it."""
        ...


def _noop() -> None:
    return None


class SystemClock:
    """Wall-clock time; timers on the running asyncio loop (none outside a loop)."""

    def __init__(self, now: Callable[[], float] = time.time) -> None:
        self._now = now
        if type(self).now is SystemClock.now:  # not overridden: the clock function itself, no
            self.now = now  # type: ignore[method-assign]  # method around it (read ~5x a call)

    def now(self) -> float:
        return self._now()

    def call_later(self, delay: float, callback: Callable[[], None]) -> Cancel:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return _noop
        handle = loop.call_later(max(delay, 0.0), callback)
        return handle.cancel


class ManualClock:
    """A clock that advances only when told to; timers fire during ``advance()``."""

    def __init__(self, start: float = 1_800_000_000.0) -> None:
        self._now = start
        self._timers: list[tuple[float, int, Callable[[], None]]] = []
        self._cancelled: set[int] = set()
        self._seq = itertools.count()

    def now(self) -> float:
        return self._now

    def call_later(self, delay: float, callback: Callable[[], None]) -> Cancel:
        seq = next(self._seq)
        heapq.heappush(self._timers, (self._now + max(delay, 0.0), seq, callback))
        return lambda: self._cancelled.add(seq)

    def advance(self, seconds: float) -> None:
        """Move time forward, firing every timer that falls due, in due order."""
        target = self._now + seconds
        while self._timers and self._timers[0][0] <= target:
            due, seq, callback = heapq.heappop(self._timers)
            if seq in self._cancelled:
                self._cancelled.discard(seq)
                continue
            self._now = max(self._now, due)
            callback()
        self._now = target

    @property
    def pending_timers(self) -> int:
        return sum(1 for _, seq, _ in self._timers if seq not in self._cancelled)


_SYSTEM_CLOCK = SystemClock()  # stateless: one serves every registry on wall time


def as_clock(value: Clock | Callable[[], float] | None) -> Clock:
    if value is None:
        return _SYSTEM_CLOCK
    if isinstance(value, Clock):
        return value
    if callable(value):
        return SystemClock(value)
    raise TypeError(f"clock must be a Clock or a callable returning seconds, got {value!r}")


_second_text: tuple[int, str] = (0, "1970-01-01T00:00:00")


def iso(epoch_seconds: float) -> str:
    """Epoch seconds as the wire's timestamp: ISO 8601, UTC, milliseconds, ``Z``.

    What ``datetime.fromtimestamp(t, UTC).isoformat(timespec="milliseconds")`` writes (the
    microseconds rounded half to even, then truncated to milliseconds), with the text of the
    whole second kept from the last call: audit and events stamp many records a second."""
    global _second_text
    second = math.floor(epoch_seconds)
    micros = round((epoch_seconds - second) * 1_000_000)
    if micros >= 1_000_000:
        second, micros = second + 1, micros - 1_000_000
    cached_second, text = _second_text
    if cached_second != second:
        text = datetime.fromtimestamp(second, UTC).strftime("%Y-%m-%dT%H:%M:%S")
        _second_text = (second, text)
    return f"{text}.{micros // 1000:03d}Z"
