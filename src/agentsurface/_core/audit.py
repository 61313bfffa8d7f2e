"""Audit events, settled-call records and sinks. Sinks never throw into the registry and never block it."""

from __future__ import annotations

import json
import logging
import sys
from collections import deque
from dataclasses import asdict
from typing import Any, Protocol, TextIO, runtime_checkable

from .clock import iso
from .jsonvalue import JsonValue
from .records import record

log = logging.getLogger("agentsurface")


@record(hot=True)
class AuditEvent:
    at: str
    type: str
    capability_id: str | None = None
    registration_id: str | None = None
    invocation_id: str | None = None
    consumer_id: str | None = None
    status: str | None = None
    code: str | None = None
    duration_ms: float | None = None
    queue_wait_ms: float | None = None
    execution_ms: float | None = None
    payload: dict[str, JsonValue] | None = None
    detail: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v is not None}


@record
class Settled:
    """One settled invocation, as the audit trail records it (phase 10)."""

    at: str
    capability_id: str
    registration_id: str | None
    invocation_id: str
    consumer_id: str
    status: str
    code: str | None
    duration_ms: float
    queue_wait_ms: float | None
    execution_ms: float | None
    input: JsonValue
    output: JsonValue

    def audit_event(self, level: str) -> AuditEvent:
        """The ``invocation-settled`` event; the input and output only at level ``full``."""
        return AuditEvent(
            at=self.at,
            type="invocation-settled",
            capability_id=self.capability_id,
            registration_id=self.registration_id,
            invocation_id=self.invocation_id,
            consumer_id=self.consumer_id,
            status=self.status,
            code=self.code,
            duration_ms=self.duration_ms,
            queue_wait_ms=self.queue_wait_ms,
            execution_ms=self.execution_ms,
            payload={"input": self.input, "output": self.output} if level == "full" else None,
        )


def ms(seconds: float | None) -> float | None:
    """Seconds as the milliseconds audit records carry (three decimals)."""
    return None if seconds is None else round(seconds * 1000, 3)


# One settled call, as ``MemoryAuditSink.note_settled`` keeps it until read: epoch seconds and
# the record's level, then the fields of ``Settled`` in order, its times in seconds.
_NotedCall = tuple[
    float,
    str,
    str,
    str | None,
    str,
    str,
    str,
    str | None,
    float,
    float | None,
    float | None,
    JsonValue,
    JsonValue,
]


@runtime_checkable
class AuditSink(Protocol):
    def record(self, event: AuditEvent) -> None: ...


# A registry's own (un)registration line, as ``MemoryAuditSink.note`` keeps it until read:
# epoch seconds, type, registration id, detail.
_Noted = tuple[float, str, str | None, str | None]
# A mount or unmount: its detail ("type@instance") is written only if the record is read.
_NotedMount = tuple[float, str, str, str, str]


class MemoryAuditSink:
    """Keeps the most recent ``capacity`` events."""

    def __init__(self, capacity: int = 1000) -> None:
        self._capacity = capacity
        # Made on the first event: every registry has a sink, many never record into it.
        self._events: deque[AuditEvent | _Noted | _NotedMount | _NotedCall] | None = None

    def record(self, event: AuditEvent) -> None:
        if self._events is None:
            self._events = deque(maxlen=self._capacity)
        self._events.append(event)

    def note(self, at: float, type_: str, registration_id: str | None, detail: str | None) -> None:
        """Record a registry lifecycle event whose ``AuditEvent`` is built only if it is read.

        Every mount and unmount writes one; most are pushed out of the ring unread, and
        building the record and its timestamp text cost more than the rest of an unmount."""
        if self._events is None:
            self._events = deque(maxlen=self._capacity)
        self._events.append((at, type_, registration_id, detail))

    def note_mount(self, at: float, type_: str, registration_id: str, component_type: str, instance_id: str) -> None:
        """As ``note``, for a mount or unmount: detail ``component_type@instance_id``, joined
        only if the record is read."""
        if self._events is None:
            self._events = deque(maxlen=self._capacity)
        self._events.append((at, type_, registration_id, component_type, instance_id))

    def note_settled(self, line: _NotedCall) -> None:
        """Record a settled call whose ``AuditEvent`` is built only if it is read (as ``note``)."""
        if self._events is None:
            self._events = deque(maxlen=self._capacity)
        self._events.append(line)

    def events(self) -> list[AuditEvent]:
        if self._events is None:
            return []
        return [_event(item) for item in self._events]

    def clear(self) -> None:
        if self._events is not None:
            self._events.clear()


def _event(item: AuditEvent | _Noted | _NotedMount | _NotedCall) -> AuditEvent:
    if isinstance(item, AuditEvent):
        return item
    if len(item) == 4:
        at, type_, registration_id, detail = item
        return AuditEvent(at=iso(at), type=type_, registration_id=registration_id, detail=detail)
    if len(item) == 5:
        at, type_, registration_id, component_type, instance_id = item
        detail = f"{component_type}@{instance_id}"
        return AuditEvent(at=iso(at), type=type_, registration_id=registration_id, detail=detail)
    settled: _NotedCall = item
    at, level, capability_id, registration_id, invocation_id, consumer_id, status, code = settled[:8]
    duration, waited, ran, input_, output = settled[8:]
    return Settled(
        iso(at),
        capability_id,
        registration_id,
        invocation_id,
        consumer_id,
        status,
        code,
        round(duration * 1000, 3),
        ms(waited),
        ms(ran),
        input_,
        output,
    ).audit_event(level)


class ConsoleAuditSink:
    """Development sink: one JSON line per event on the diagnostic stream (stderr), never stdout."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self._stream = stream

    def record(self, event: AuditEvent) -> None:
        stream = self._stream or sys.stderr
        stream.write("[agentsurface audit] " + json.dumps(event.to_json(), default=str) + "\n")


class FanOutSink:
    def __init__(self, *sinks: AuditSink) -> None:
        self.sinks = sinks

    def record(self, event: AuditEvent) -> None:
        for sink in self.sinks:
            try:
                sink.record(event)
            except Exception:
                log.exception("audit sink %r failed", sink)


def record_lifecycle(sink: AuditSink, at: float, type_: str, registration_id: str | None, detail: str | None) -> None:
    """A registry lifecycle event into ``sink``; a sink that fails is logged, never raised."""
    try:
        if type(sink) is MemoryAuditSink:  # the default: it builds the record when read
            sink.note(at, type_, registration_id, detail)
        else:
            sink.record(AuditEvent(at=iso(at), type=type_, registration_id=registration_id, detail=detail))
    except Exception:
        log.exception("audit sink failed")


def record_mount(
    sink: AuditSink, at: float, type_: str, registration_id: str, component_type: str, instance_id: str
) -> None:
    """A mount or unmount into ``sink`` (detail ``component_type@instance_id``, which the default
    sink joins only when the record is read); a sink that fails is logged, never raised."""
    try:
        if type(sink) is MemoryAuditSink:
            sink.note_mount(at, type_, registration_id, component_type, instance_id)
        else:
            detail = f"{component_type}@{instance_id}"
            sink.record(AuditEvent(at=iso(at), type=type_, registration_id=registration_id, detail=detail))
    except Exception:
        log.exception("audit sink failed")
