"""Coalescing: many requests for the same work within one event-loop turn, or one animation
frame, run that work once."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from .dom import Cancel

log = logging.getLogger("agentsurface")

# Schedules a callback for later and returns how to cancel it.
Defer = Callable[[Callable[[], None]], Cancel]


def next_turn(callback: Callable[[], None]) -> Cancel:
    """Run ``callback`` on the running event loop's next turn (``call_soon``); without a running
    loop (plain synchronous code) there is no later turn to wait for, so it runs now."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        callback()
        return _nothing
    return loop.call_soon(callback).cancel


def _nothing() -> None:
    return None


class Coalescer:
    """Runs ``work`` at most once per ``defer`` slot, however often it is requested in between.

    ``request()`` marks the work as owed; the first request of a slot schedules one run, later
    ones ride on it. A request made while the work runs schedules one more run (the work may
    have read state that the request says changed). ``runs`` counts the runs (for cost figures
    and tests)."""

    def __init__(self, work: Callable[[], None], defer: Defer = next_turn) -> None:
        self._work = work
        self._defer = defer
        self._cancel: Cancel | None = None
        self._closed = False
        self.runs = 0
        self.requests = 0

    @property
    def pending(self) -> bool:
        return self._cancel is not None

    def request(self) -> None:
        self.requests += 1
        if self._cancel is not None or self._closed:
            return
        self._cancel = _nothing  # claimed before deferring: a synchronous defer may run at once
        cancel = self._defer(self._run)
        if self._cancel is _nothing:  # not already run by a synchronous defer
            self._cancel = cancel

    def _run(self) -> None:
        self._cancel = None
        if self._closed:
            return
        self.runs += 1
        try:
            self._work()
        except Exception:  # a failing run must not stop later ones
            log.exception("coalesced page work raised")

    def close(self) -> None:
        """Cancel a scheduled run; later requests do nothing."""
        self._closed = True
        cancel, self._cancel = self._cancel, None
        if cancel is not None:
            cancel()
