"""Surface events and their dispatcher.

Events are dispatched after the mutation that caused them, in one total order. A listener that
mutates the registry while an event is being dispatched gets its events queued behind the
current ones (never nested), and a failing listener cannot stop the others.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable, Iterable
from typing import Any

from .jsonvalue import FrozenDict
from .records import record

log = logging.getLogger("agentsurface")

EVENT_TYPES = frozenset(
    {
        "surface-changed",
        "component-registered",
        "component-unregistered",
        "component-rejected",
        "availability-changed",
        "collision-suspected",
        "invocation-started",
        "invocation-settled",
        "confirmation-requested",
        "confirmation-resolved",
    }
)


@record
class SurfaceEvent:
    type: str
    data: FrozenDict

    def __getitem__(self, key: str) -> Any:
        return self.data[key]

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, **self.data}


def make_event(type_: str, **data: Any) -> SurfaceEvent:
    return SurfaceEvent(type_, FrozenDict({k: v for k, v in data.items() if v is not None}))


Listener = Callable[[SurfaceEvent], None]


class _Subscription:
    __slots__ = ("listener", "types")

    def __init__(self, listener: Listener, types: frozenset[str] | None) -> None:
        self.listener = listener
        self.types = types


_NOTHING: frozenset[str] = frozenset()


class EventBus:
    __slots__ = ("_dispatching", "_listeners", "_queue", "_wanted", "active")

    def __init__(self) -> None:
        # Listeners exist or a dispatch is running (queued events still reach listeners): kept
        # as a plain attribute, read on every mount and unmount.
        self.active = False
        self._listeners: list[_Subscription] = []
        self._queue: deque[SurfaceEvent] | None = None  # made by the first emit that has listeners
        self._dispatching = False
        # Event types some listener takes, or None when one takes every type.
        self._wanted: frozenset[str] | None = _NOTHING

    def subscribe(self, listener: Listener, types: Iterable[str] | None = None) -> Callable[[], None]:
        """Call ``listener`` with every event, or only with those of ``types``."""
        wanted = None if types is None else frozenset(types)
        if wanted is not None and not wanted <= EVENT_TYPES:
            raise ValueError(f"unknown event types: {sorted(wanted - EVENT_TYPES)}")
        entry = _Subscription(listener, wanted)
        self._listeners.append(entry)
        self.active = True
        self._update_wanted()

        def unsubscribe() -> None:
            # Remove this subscription only (the same callable may be subscribed twice).
            for i, existing in enumerate(self._listeners):
                if existing is entry:
                    del self._listeners[i]
                    self.active = bool(self._listeners) or self._dispatching
                    self._update_wanted()
                    return

        return unsubscribe

    def _update_wanted(self) -> None:
        wanted: set[str] = set()
        for entry in self._listeners:
            if entry.types is None:
                self._wanted = None
                return
            wanted |= entry.types
        self._wanted = frozenset(wanted)

    def wants(self, type_: str) -> bool:
        """Whether an event of this type would reach a listener (or a dispatch is running):
        the pipeline builds its per-call events only then."""
        wanted = self._wanted
        return wanted is None or type_ in wanted or self._dispatching

    @property
    def has_listeners(self) -> bool:
        return bool(self._listeners)

    def emit(self, *events: SurfaceEvent) -> None:
        if not self._listeners and not self._dispatching:
            return
        queue = self._queue
        if queue is None:
            queue = self._queue = deque()
        queue.extend(events)
        if self._dispatching:
            return
        self._dispatching = self.active = True
        try:
            while queue:
                event = queue.popleft()
                for entry in tuple(self._listeners):
                    if entry.types is not None and event.type not in entry.types:
                        continue
                    try:
                        entry.listener(event)
                    except Exception:
                        log.exception("agentsurface event listener failed on %s", event.type)
        finally:
            self._dispatching = False
            self.active = bool(self._listeners)

    def clear(self) -> None:
        self._listeners.clear()
        self.active = self._dispatching
        self._wanted = _NOTHING
        if self._queue is not None:
            self._queue.clear()
