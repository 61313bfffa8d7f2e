"""Every registration writes an audit record; a refused one writes none."""

from __future__ import annotations

from agent_surface import (
    AgentSurfaceRegistry,
    compile_manifest,
    create_capability_authority,
)
from agent_surface._core.audit import AuditEvent, AuditSink, MemoryAuditSink
from agent_surface.testing import ManualClock

from ..support import toolbar_contract


def test_every_registration_writes_a_registration_audit_record() -> None:
    contract = toolbar_contract()
    audit = MemoryAuditSink()
    registry = AgentSurfaceRegistry(
        authority=create_capability_authority(compile_manifest([contract])), audit=audit
    )
    first = registry.register(contract.bind(instance_id="top"))
    second = registry.register(contract.bind(instance_id="bottom"))
    records = [(e.type, e.registration_id, e.detail) for e in audit.events()]
    assert records == [
        ("registration", first.registration_id, "app.toolbar@top"),
        ("registration", second.registration_id, "app.toolbar@bottom"),
    ]
    first.unregister()
    assert [e.type for e in audit.events()][-1] == "unregistration"


def test_a_refused_registration_writes_no_registration_record() -> None:
    contract = toolbar_contract()
    audit = MemoryAuditSink()
    registry = AgentSurfaceRegistry(
        authority=create_capability_authority(compile_manifest([contract])), audit=audit
    )
    registry.register(contract.bind())
    assert registry.register(contract.bind()).status == "rejected"  # duplicate instance
    assert [e.type for e in audit.events()] == ["registration", "registration-rejected"]


class _ListSink:
    def __init__(self) -> None:
        self.events: list[AuditEvent] = []

    def record(self, event: AuditEvent) -> None:
        self.events.append(event)


def test_the_memory_sink_reads_back_what_any_sink_receives() -> None:
    """The default sink builds lifecycle records when read: the same records, timestamps and
    order as a sink that receives each AuditEvent when it happens."""
    contract = toolbar_contract()
    authority = create_capability_authority(compile_manifest([contract]))
    memory, plain = MemoryAuditSink(), _ListSink()
    sinks: tuple[AuditSink, AuditSink] = (memory, plain)
    clocks = (ManualClock(start=1_700_000_000.0004), ManualClock(start=1_700_000_000.0004))
    registries = [
        AgentSurfaceRegistry(authority=authority, audit=sink, clock=clock)
        for sink, clock in zip(sinks, clocks, strict=True)
    ]
    for registry, clock in zip(registries, clocks, strict=True):
        handle = registry.register(contract.bind(instance_id="top"))
        clock.advance(1.2345)
        registry.register(contract.bind(instance_id="top"))  # rejected: a duplicate
        clock.advance(0.5)
        handle.unregister()
    read = memory.events()
    assert [e.type for e in read] == ["registration", "registration-rejected", "unregistration"]
    assert [(e.at, e.type, e.detail) for e in read] == [(e.at, e.type, e.detail) for e in plain.events]
    assert read[0].at == "2023-11-14T22:13:20.000Z" and read[-1].at == "2023-11-14T22:13:21.734Z"
    assert all(isinstance(e, AuditEvent) for e in read) and read == memory.events()
