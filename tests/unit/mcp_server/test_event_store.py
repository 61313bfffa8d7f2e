"""The bounded event store behind ``mcp --http``'s resumable streams: replay after an id, and
its bounds (count, bytes, age)."""

from __future__ import annotations

from mcp.server.streamable_http import EventMessage
from mcp.types import JSONRPCMessage, JSONRPCNotification

from agentsurface.mcp_server.events import BoundedEventStore, EventLimits


def note(n: int, pad: int = 0) -> JSONRPCMessage:
    params = {"progressToken": 1, "progress": n, "message": "x" * pad}
    return JSONRPCMessage(JSONRPCNotification(jsonrpc="2.0", method="notifications/progress", params=params))


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


async def replayed(store: BoundedEventStore, after: str) -> tuple[str | None, list[tuple[str | None, int]]]:
    sent: list[EventMessage] = []

    async def send(event: EventMessage) -> None:
        sent.append(event)

    stream = await store.replay_events_after(after, send)
    return stream, [(e.event_id, e.message.root.params["progress"]) for e in sent]  # type: ignore[union-attr,index]


async def test_replays_what_came_after_the_id_on_that_stream_only() -> None:
    store = BoundedEventStore()
    priming = await store.store_event("2", None)
    first = await store.store_event("2", note(1))
    other = await store.store_event("3", note(100))
    second = await store.store_event("2", note(2))
    assert len({priming, first, other, second}) == 4
    assert await replayed(store, priming) == ("2", [(first, 1), (second, 2)])
    assert await replayed(store, first) == ("2", [(second, 2)])
    assert await replayed(store, second) == ("2", [])
    assert await replayed(store, other) == ("3", [])
    # Ids of another shape, or never given, replay nothing.
    for unknown in ("", "2", "x" * 16 + "-1", first.split("-")[0] + "-99", "<script>"):
        assert await replayed(store, unknown) == (None, [])


async def test_the_oldest_events_go_past_the_count_the_bytes_or_the_age() -> None:
    clock = Clock()
    store = BoundedEventStore(EventLimits(max_events=3, max_bytes=10_000, max_age=60), clock=clock)
    ids = [await store.store_event("s", note(n)) for n in range(5)]
    assert store.count == 3
    assert await replayed(store, ids[0]) == (None, [])  # dropped: the client missed too much
    assert await replayed(store, ids[2]) == ("s", [(ids[3], 3), (ids[4], 4)])

    big = BoundedEventStore(EventLimits(max_events=100, max_bytes=3000, max_age=60), clock=clock)
    for n in range(10):
        await big.store_event("s", note(n, pad=1000))
    assert big.bytes <= 3000 and big.count == 2

    clock.now = 61
    assert await replayed(store, ids[4]) == (None, [])
    assert store.count == 0 and store.bytes == 0
    fresh = await store.store_event("s", note(9))  # the stream goes on under a new key
    assert fresh.split("-")[0] != ids[0].split("-")[0]
