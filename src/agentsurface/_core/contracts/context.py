"""What handlers receive: read and action contexts, and the cooperative cancel signal."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Mapping
from dataclasses import field
from typing import Any

from ..consumer import Consumer
from ..records import record


class CancelSignal:
    """A cooperative, asyncio-friendly abort signal (like the DOM's AbortSignal).

    Handlers check ``signal.aborted``, call ``signal.raise_if_aborted()``, or ``await
    signal.wait()``; the registry aborts it on timeout, external cancellation or unmount.
    Right after the abort the registry also cancels an async handler's task (it stops at its
    next ``await``; put cleanup in ``finally``) so that no effect lands after the call settled.
    A sync handler runs inline on the event loop: it cannot be interrupted, and it always
    finishes before its deadline can even be observed, so its result reports what it did.
    """

    __slots__ = ("_callbacks", "_event", "reason")

    def __init__(self) -> None:
        self.reason: str | None = None
        self._callbacks: list[Callable[[str], None]] = []
        self._event: asyncio.Event | None = None

    @property
    def aborted(self) -> bool:
        return self.reason is not None

    def abort(self, reason: str = "aborted") -> None:
        if self.reason is not None:
            return
        self.reason = reason
        if self._event is not None:
            self._event.set()
        callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            with contextlib.suppress(Exception):  # a failing listener must not stop the abort
                callback(reason)

    def add_listener(self, callback: Callable[[str], None]) -> Callable[[], None]:
        """Call ``callback(reason)`` on abort (at once if already aborted). Returns a remover."""
        if self.reason is not None:
            callback(self.reason)
            return lambda: None
        self._callbacks.append(callback)

        def remove() -> None:
            if callback in self._callbacks:
                self._callbacks.remove(callback)

        return remove

    async def wait(self) -> str:
        if self.reason is None:
            if self._event is None:
                self._event = asyncio.Event()
            await self._event.wait()
        assert self.reason is not None
        return self.reason

    def raise_if_aborted(self) -> None:
        if self.reason is not None:
            raise asyncio.CancelledError(self.reason)


# The handler's context is made on every call: a hot record (see records).
@record(hot=True)
class ReadContext:
    capability_id: str
    registration_id: str
    consumer: Consumer
    host: Mapping[str, Any] = field(default_factory=dict)


@record(hot=True)
class ActionContext:
    capability_id: str
    registration_id: str
    consumer: Consumer
    invocation_id: str
    signal: CancelSignal
    host: Mapping[str, Any] = field(default_factory=dict)
    confirmation: Mapping[str, str] | None = None
    # For an approval bound to a preview: whether the preview still holds now (False also
    # spoils the approval, audited). Checked just before the handler starts; a handler or
    # executor that waits before it writes (a server challenge, a passkey) asks again then.
    still_approved: Callable[[], bool] | None = None
