"""Every registration writes an audit record; a refused one writes none."""

from __future__ import annotations

from agent_surface import (
    AgentSurfaceRegistry,
    compile_manifest,
    create_capability_authority,
)
from agent_surface._core.audit import MemoryAuditSink

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
