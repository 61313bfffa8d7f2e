"""Resumable streams for ``agentsurface mcp --http``: the events each SSE stream sent, kept for a
while so a client whose connection dropped reconnects with ``Last-Event-ID`` and gets what it
missed (the SDK's ``EventStore``).

Bounded three ways, all sessions together: at most ``max_events`` events and ``max_bytes`` of
their JSON, none older than ``max_age`` seconds; the oldest go first. An id names its stream with
a random key (``<key>-<n>``), so ids cannot be guessed across streams, and an id that is unknown,
malformed or already dropped replays nothing (the client has missed too much: it asks again).
"""

from __future__ import annotations

import re
import secrets
import time
from collections import OrderedDict
from collections.abc import Callable

from mcp.server.streamable_http import EventCallback, EventId, EventMessage, EventStore, StreamId
from mcp.types import JSONRPCMessage

from .._core.records import record

_ID = re.compile(r"([A-Za-z0-9_-]{16})-([0-9]{1,12})")


@record
class EventLimits:
    max_events: int = 1000
    max_bytes: int = 4 * 1024 * 1024
    max_age: float = 5 * 60.0


@record(frozen=False)
class _Event:
    key: str
    number: int
    message: JSONRPCMessage | None  # None: a priming event (an id, nothing to replay)
    size: int
    at: float


class BoundedEventStore(EventStore):
    def __init__(
        self, limits: EventLimits | None = None, *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.limits = limits or EventLimits()
        self._clock = clock
        self._events: OrderedDict[EventId, _Event] = OrderedDict()  # oldest first
        self._keys: dict[StreamId, str] = {}  # stream → its random key
        self._streams: dict[str, StreamId] = {}  # key → stream
        self._counts: dict[str, int] = {}  # key → events of that stream still kept
        self._next: dict[str, int] = {}
        self.bytes = 0

    @property
    def count(self) -> int:  # (no __len__: the SDK tests the store for truth)
        return len(self._events)

    async def store_event(self, stream_id: StreamId, message: JSONRPCMessage | None) -> EventId:
        key = self._keys.get(stream_id)
        if key is None:
            key = secrets.token_urlsafe(12)  # 16 characters
            self._keys[stream_id], self._streams[key], self._next[key] = key, stream_id, 1
        number = self._next[key]
        self._next[key] = number + 1
        size = 0 if message is None else len(message.model_dump_json(by_alias=True, exclude_none=True))
        event_id = f"{key}-{number}"
        self._events[event_id] = _Event(key, number, message, size, self._clock())
        self._counts[key] = self._counts.get(key, 0) + 1
        self.bytes += size
        self._trim()
        return event_id

    async def replay_events_after(
        self, last_event_id: EventId, send_callback: EventCallback
    ) -> StreamId | None:
        self._trim()
        match = _ID.fullmatch(last_event_id)
        if match is None or last_event_id not in self._events:
            return None
        key, after = match.group(1), int(match.group(2))
        stream = self._streams.get(key)
        if stream is None:
            return None
        for event_id, event in list(self._events.items()):
            if event.key == key and event.number > after and event.message is not None:
                await send_callback(EventMessage(event.message, event_id))
        return stream

    def _trim(self) -> None:
        limits, oldest = self.limits, self._clock() - self.limits.max_age
        while self._events:
            event_id, event = next(iter(self._events.items()))
            if (
                len(self._events) <= limits.max_events
                and self.bytes <= limits.max_bytes
                and event.at >= oldest
            ):
                break
            del self._events[event_id]
            self.bytes -= event.size
            self._counts[event.key] -= 1
            if self._counts[event.key] == 0:  # the stream's last event went: forget the stream
                del self._counts[event.key]
                self._keys.pop(self._streams.pop(event.key), None)
                self._next.pop(event.key, None)
