"""Admission: per-group FIFO action queues and bounded observation concurrency.

Both hand out slots through futures so a queued call can be cancelled (external signal,
unmount, disposal) without ever running. Groups are created on demand and dropped when idle.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable

from ..base_error import AgentSurfaceError
from ..records import record

Release = Callable[[], None]


class QueueFull(AgentSurfaceError):
    """The group's wait queue is at its bound."""


@record(frozen=False, eq=False)
class _Group:
    max_active: int
    depth: int
    active: int = 0
    # Made when the first caller waits: most groups live for one call and never queue one.
    waiters: deque[asyncio.Future[None]] | None = None


class ActionQueues:
    """One FIFO per concurrency group: ``max_active`` running, ``depth`` waiting."""

    __slots__ = ("_groups",)

    def __init__(self) -> None:
        self._groups: dict[str, _Group] = {}

    def try_acquire(self, key: str, max_active: int) -> Release | None:
        """A slot at once if the group has room and nobody is waiting (the common case)."""
        group = self._groups.get(key)
        if group is None:
            group = self._groups[key] = _Group(max_active, 0)
        if group.active < group.max_active and not group.waiters:
            group.active += 1
            return self._releaser(key, group)
        return None

    async def acquire(self, key: str, max_active: int, depth: int) -> Release:
        group = self._groups.get(key)
        if group is None:
            group = self._groups[key] = _Group(max_active, depth)
        if group.active < group.max_active and not group.waiters:
            group.active += 1
            return self._releaser(key, group)
        group.depth = depth
        waiters = group.waiters
        if waiters is None:
            waiters = group.waiters = deque()
        if len(waiters) >= group.depth:
            raise QueueFull(key)
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        waiters.append(future)
        try:
            await future
        except BaseException:
            if future in waiters:
                waiters.remove(future)
            elif future.done() and not future.cancelled():
                # The slot was handed over just as we were cancelled: pass it on.
                self._release(key, group)
            self._drop_if_idle(key, group)
            raise
        return self._releaser(key, group)

    def _releaser(self, key: str, group: _Group) -> Release:
        released = False

        def release() -> None:
            nonlocal released
            if not released:
                released = True
                self._release(key, group)

        return release

    def _release(self, key: str, group: _Group) -> None:
        waiters = group.waiters
        while waiters:
            nxt = waiters.popleft()
            if not nxt.done():
                nxt.set_result(None)  # the slot passes directly to the next waiter
                return
        group.active -= 1
        self._drop_if_idle(key, group)

    def _drop_if_idle(self, key: str, group: _Group) -> None:
        if group.active <= 0 and not group.waiters and self._groups.get(key) is group:
            del self._groups[key]

    def cancel_all(self) -> None:
        for group in self._groups.values():
            for waiter in group.waiters or ():
                waiter.cancel()
        self._groups.clear()

    def __len__(self) -> int:
        return len(self._groups)


@record(frozen=False, eq=False)
class _Waiter:
    consumer: str
    future: asyncio.Future[None]


class ObservationAdmission:
    """Independent per-consumer and global limits with one FIFO of waiters.

    A release wakes the oldest waiter whose consumer has room, so one saturated consumer
    cannot starve another.
    """

    __slots__ = ("_active", "_per_consumer", "_queue", "_queued_per_consumer", "_total", "_total_active")

    def __init__(self, per_consumer: int, total: int, queued_per_consumer: int) -> None:
        self._per_consumer = per_consumer
        self._total = total
        self._queued_per_consumer = queued_per_consumer
        self._active: dict[str, int] = {}
        self._total_active = 0
        self._queue: deque[_Waiter] = deque()

    def _has_room(self, consumer: str) -> bool:
        return self._total_active < self._total and self._active.get(consumer, 0) < self._per_consumer

    def _take(self, consumer: str) -> None:
        self._active[consumer] = self._active.get(consumer, 0) + 1
        self._total_active += 1

    def try_acquire(self, consumer: str) -> Release | None:
        # _has_room and _take, inline: every observation call comes here.
        queue = self._queue  # most often empty: no scan for this consumer's waiters
        active = self._active
        held = active.get(consumer, 0)
        if (
            self._total_active < self._total
            and held < self._per_consumer
            and (not queue or not any(w.consumer == consumer for w in queue))
        ):
            active[consumer] = held + 1
            self._total_active += 1
            return self._releaser(consumer)
        return None

    async def acquire(self, consumer: str) -> Release:
        if self._has_room(consumer) and not any(w.consumer == consumer for w in self._queue):
            self._take(consumer)
            return self._releaser(consumer)
        if sum(1 for w in self._queue if w.consumer == consumer) >= self._queued_per_consumer:
            raise QueueFull(consumer)
        waiter = _Waiter(consumer, asyncio.get_running_loop().create_future())
        self._queue.append(waiter)
        try:
            await waiter.future
        except BaseException:
            if waiter in self._queue:
                self._queue.remove(waiter)
            elif waiter.future.done() and not waiter.future.cancelled():
                self._release(consumer)
            raise
        return self._releaser(consumer)

    def _releaser(self, consumer: str) -> Release:
        released = False

        def release() -> None:
            nonlocal released
            if not released:
                released = True
                self._release(consumer)

        return release

    def _release(self, consumer: str) -> None:
        count = self._active.get(consumer, 0) - 1
        if count > 0:
            self._active[consumer] = count
        else:
            self._active.pop(consumer, None)
        self._total_active -= 1
        if self._queue:
            self._wake()

    def _wake(self) -> None:
        for waiter in list(self._queue):
            if waiter.future.done():
                self._queue.remove(waiter)
                continue
            if self._has_room(waiter.consumer):
                self._queue.remove(waiter)
                self._take(waiter.consumer)
                waiter.future.set_result(None)
            if self._total_active >= self._total:
                return

    def cancel_all(self) -> None:
        for waiter in self._queue:
            waiter.future.cancel()
        self._queue.clear()

    @property
    def active(self) -> int:
        return self._total_active

    @property
    def queued(self) -> int:
        return len(self._queue)
