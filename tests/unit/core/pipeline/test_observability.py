"""Events, audit and teardown. AS-OBSV-001/002, event ordering, dispose."""

from __future__ import annotations

import asyncio
import io
from typing import Any

import pytest

from agentsurface import (
    AgentSurfaceRegistry,
    AuditEvent,
    CapabilityAuthority,
    ConsoleAuditSink,
    MemoryAuditSink,
    RegistryClosedError,
    compile_manifest,
)
from agentsurface.lowlevel import ActionContract, ComponentContract, ObservationContract
from agentsurface.testing import ManualClock

from .helpers import (
    A,
    DevicesState,
    Events,
    Gate,
    advance,
    bind_table,
    bind_toolbar,
    details_of,
    devices_table,
    disable_procedure,
    gated_widget,
    make_registry,
    manual,
    settled,
    spin,
    toolbar,
)

SELECT = "view:devices.table.selectRows"


def settled_audit(sink: MemoryAuditSink) -> list[AuditEvent]:
    return [e for e in sink.events() if e.type == "invocation-settled"]


# --------------------------------------------------------------------------- AS-OBSV-001


async def test_AS_OBSV_001_queue_wait_and_execution_are_measured_separately() -> None:
    sink = MemoryAuditSink()
    first_gate = Gate()
    contract = ComponentContract(
        type="obs.timed",
        description="timed fixture",
        actions={
            "first": ActionContract("holds the slot", input={"type": "object"}),
            "second": ActionContract("runs after the first", input={"type": "object"}),
        },
    )
    registry = make_registry([contract], audit=sink)
    clock = manual(registry)

    async def first(value: Any, ctx: Any) -> None:
        await first_gate.run()

    def second(value: Any, ctx: Any) -> None:
        clock.advance(0.007)  # execution visibly consumes injected time

    registry.register(contract.bind(actions={"first": first, "second": second}))
    one = asyncio.ensure_future(registry.invoke({"capabilityId": "view:obs.timed.first", "input": {}}))
    two = asyncio.ensure_future(registry.invoke({"capabilityId": "view:obs.timed.second", "input": {}}))
    await advance(registry, 0.123)  # time passes while `second` waits for the slot
    first_gate.release_all()
    assert (await settled(one)).ok and (await settled(two)).ok
    by_cap = {e.capability_id: e for e in settled_audit(sink)}
    a, b = by_cap["view:obs.timed.first"], by_cap["view:obs.timed.second"]
    assert (b.queue_wait_ms, b.execution_ms) == (123.0, 7.0)
    assert a.queue_wait_ms == 0.0 and a.execution_ms == 123.0
    assert b.duration_ms == 130.0


async def test_AS_OBSV_001_audit_levels_per_capability() -> None:
    sink = MemoryAuditSink()
    tb, proc = toolbar(), disable_procedure(effect="external-side-effect", confirmation="optional")
    contract = devices_table()
    registry = make_registry([contract, tb, proc], audit=sink, procedure_executor=lambda cid, value, ctx: {"sent": True})
    state = DevicesState()
    state.selected = ["d1"]
    registry.register(bind_table(contract, state))
    registry.register(bind_toolbar(tb, state, proc))
    await registry.invoke({"capabilityId": "view:devices.table.visibleRows"})  # observation: audit none
    await registry.invoke({"capabilityId": SELECT, "input": {"ids": ["d1"]}}, consumer=A)  # metadata
    await registry.invoke({"capabilityId": "domain:devices.disable", "input": {"reason": "r"}})  # full
    events = settled_audit(sink)
    assert [e.capability_id for e in events] == [SELECT, "domain:devices.disable"]
    meta, full = events
    assert meta.payload is None and meta.consumer_id == "adapter-a" and meta.status == "ok"
    assert full.payload == {"input": {"deviceIds": ["d1"], "reason": "r"}, "output": {"sent": True}}
    assert all(e.at.endswith("Z") for e in sink.events())


async def test_a_failing_audit_sink_never_breaks_invocation() -> None:
    class Broken:
        def record(self, event: AuditEvent) -> None:
            raise OSError("disk full")

    contract = devices_table()
    registry = make_registry([contract], audit=Broken())
    state = DevicesState()
    registry.register(bind_table(contract, state))
    assert (await registry.invoke({"capabilityId": SELECT, "input": {"ids": ["d1"]}})).ok


# --------------------------------------------------------------------------- AS-OBSV-002


def test_AS_OBSV_002_console_sink_writes_to_stderr_never_stdout(capsys: pytest.CaptureFixture[str]) -> None:
    ConsoleAuditSink().record(AuditEvent(at="2026-08-01T00:00:00.000Z", type="registration"))
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith("[agentsurface audit] ")
    assert '"type": "registration"' in err
    stream = io.StringIO()
    ConsoleAuditSink(stream).record(AuditEvent(at="t", type="late-settlement", detail="timeout"))
    assert "late-settlement" in stream.getvalue()


async def test_AS_OBSV_002_development_registry_audits_on_stderr_only(
    capsys: pytest.CaptureFixture[str],
) -> None:
    contract = devices_table()
    authority = CapabilityAuthority.from_manifest(compile_manifest([contract]))
    registry = AgentSurfaceRegistry(authority=authority, environment="development", clock=ManualClock())
    registry.register(bind_table(contract, DevicesState()))
    await registry.invoke({"capabilityId": SELECT, "input": {"ids": ["d1"]}})
    out, err = capsys.readouterr()
    assert out == ""
    assert "[agentsurface audit]" in err and "invocation-settled" in err


# --------------------------------------------------------------------------- events


async def test_invocation_started_strictly_precedes_settled_for_every_call() -> None:
    a, b = Gate(), Gate()
    contract, bind = gated_widget({"a": a, "b": b}, timeout=5.0)
    registry = make_registry([contract])
    events = Events(registry)
    registry.register(bind())
    calls = [
        asyncio.ensure_future(
            registry.invoke({"invocationId": f"e{i}", "capabilityId": f"view:conc.widget.{n}", "input": {}})
        )
        for i, n in enumerate(["a", "b", "a", "nope"])
    ]
    await spin()
    a.release_all()
    await spin()
    await advance(registry, 5.0)  # b times out
    a.release_all()
    b.release_all()
    results = [await settled(c) for c in calls]
    assert [r.code for r in results] == [None, "TIMEOUT", None, "CAPABILITY_NOT_FOUND"]
    for i, result in enumerate(results):
        mine = [e for e in events.events if e.data.get("invocationId") == f"e{i}"]
        assert [e.type for e in mine] == ["invocation-started", "invocation-settled"]
        started, done = mine
        assert started["capabilityId"] == done["capabilityId"] == result.capability_id
        assert started["consumerId"] == "anonymous"
        assert done["status"] == result.status
        assert done.data.get("code") == result.code
        assert isinstance(done["durationMs"], float)
    timed_out = next(e for e in events.of("invocation-settled") if e["invocationId"] == "e1")
    assert timed_out["durationMs"] == 5000.0


async def test_confirmation_requested_precedes_resolved_and_settlement_follows() -> None:
    tb, proc = toolbar(), disable_procedure()
    registry = make_registry([tb, proc], procedure_executor=lambda cid, value, ctx: None)
    events = Events(registry)
    state = DevicesState()
    state.selected = ["d1"]
    registry.register(bind_toolbar(tb, state, proc))
    first = await registry.invoke(
        {"invocationId": "c1", "capabilityId": "domain:devices.disable", "input": {}}
    )
    cid = details_of(first)["confirmationId"]
    registry.confirmations.resolve(cid, approved=True)
    await registry.invoke(
        {"invocationId": "c1", "capabilityId": "domain:devices.disable", "input": {}, "confirmationId": cid}
    )
    relevant = [
        (e.type, e.data.get("outcome") or e.data.get("code") or e.data.get("status"))
        for e in events.events
        if e.type != "surface-changed" and e.type != "component-registered"
    ]
    assert relevant == [
        ("invocation-started", None),
        ("confirmation-requested", None),
        ("invocation-settled", "CONFIRMATION_REQUIRED"),
        ("confirmation-resolved", "approved"),
        ("invocation-started", None),
        ("invocation-settled", "ok"),
    ]
    requested = events.of("confirmation-requested")[0]
    assert requested["confirmationId"] == cid and requested["capabilityId"] == "domain:devices.disable"
    assert requested["expiresAt"] == details_of(first)["expiresAt"]


async def test_a_failing_event_listener_never_breaks_invocation() -> None:
    contract = devices_table()
    registry = make_registry([contract])
    state = DevicesState()
    registry.register(bind_table(contract, state))

    def explode(event: Any) -> None:
        raise RuntimeError("listener bug")

    registry.subscribe(explode)
    events = Events(registry)
    assert (await registry.invoke({"capabilityId": SELECT, "input": {"ids": ["d1"]}})).ok
    assert events.types == ["invocation-started", "invocation-settled"]


async def test_surface_changed_flag_reports_moves_during_the_call() -> None:
    gate = Gate()
    contract, bind = gated_widget({"a": gate})
    table = devices_table()
    registry = make_registry([contract, table])
    registry.register(bind())
    pending = asyncio.ensure_future(registry.invoke({"capabilityId": "view:conc.widget.a", "input": {}}))
    await spin()
    registry.register(bind_table(table, DevicesState()))
    gate.release_all()
    result = await settled(pending)
    assert result.ok and result.surface_changed is True
    assert result.surface_version == registry.version
    assert "surfaceChanged" in result.to_json()
    quiet = await registry.invoke({"capabilityId": SELECT, "input": {"ids": ["d1"]}})
    assert quiet.surface_changed is False and "surfaceChanged" not in quiet.to_json()


# --------------------------------------------------------------------------- dispose


async def test_dispose_settles_in_flight_drains_queues_and_expires_confirmations() -> None:
    sink = MemoryAuditSink()
    running_gate, queued_gate, read_gate = Gate(), Gate(), Gate()
    contract = ComponentContract(
        type="conf.teardown",
        description="teardown fixture",
        observations={"peek": ObservationContract("peek", output={"type": "number"})},
        actions={
            "run": ActionContract("run", input={"type": "object"}),
            "wait": ActionContract("wait", input={"type": "object"}),
            "risky": ActionContract("risky", input={"type": "object"}, confirmation="required"),
        },
    )
    registry = make_registry([contract], audit=sink)

    async def run(value: Any, ctx: Any) -> None:
        await running_gate.run()

    async def wait(value: Any, ctx: Any) -> None:
        await queued_gate.run()

    async def peek(ctx: Any) -> Any:
        return await read_gate.run()

    registry.register(
        contract.bind(
            observations={"peek": peek}, actions={"run": run, "wait": wait, "risky": lambda v, c: None}
        )
    )
    events = Events(registry)
    risky = await registry.invoke({"capabilityId": "view:conf.teardown.risky", "input": {}})
    cid = details_of(risky)["confirmationId"]
    waiting = asyncio.ensure_future(registry.confirmations.wait_for(cid))
    in_flight = asyncio.ensure_future(
        registry.invoke({"capabilityId": "view:conf.teardown.run", "input": {}})
    )
    queued = asyncio.ensure_future(registry.invoke({"capabilityId": "view:conf.teardown.wait", "input": {}}))
    reading = asyncio.ensure_future(registry.invoke({"capabilityId": "view:conf.teardown.peek"}))
    await spin()
    assert (running_gate.entered, queued_gate.entered, read_gate.entered) == (1, 0, 1)

    registry.close()
    assert [e["outcome"] for e in events.of("confirmation-resolved")] == ["expired"]
    assert await asyncio.wait_for(waiting, 1) == "expired"
    for future in (in_flight, queued, reading):
        result = await settled(future)
        assert result.code == "CANCELLED"
    assert queued_gate.entered == 0
    assert registry.confirmations.pending() == []
    assert sorted(str(e.code) for e in settled_audit(sink)) == [
        "CANCELLED",
        "CANCELLED",
        "CONFIRMATION_REQUIRED",
    ]  # the observation is audit level "none"
    assert len(registry._invoker.actions) == 0 and registry._invoker.observations.queued == 0
    registry.close()  # idempotent
    with pytest.raises(RegistryClosedError):
        await registry.invoke({"capabilityId": "view:conf.teardown.run", "input": {}})
    # Late handler completions are only audited.
    running_gate.release_all()
    read_gate.release_all()
    await spin()
    assert {e.detail for e in sink.events() if e.type == "late-settlement"} == {"disposed"}


async def test_manual_clock_leaves_no_timers_behind_after_settlement() -> None:
    contract = devices_table()
    registry = make_registry([contract])
    registry.register(bind_table(contract, DevicesState()))
    for i in range(5):
        assert (await registry.invoke({"capabilityId": SELECT, "input": {"ids": [f"d{i}"]}})).ok
    assert manual(registry).pending_timers == 0


class _ListSink:
    """A sink of the host's own: it receives every record as an AuditEvent at once."""

    def __init__(self) -> None:
        self.records: list[AuditEvent] = []

    def record(self, event: AuditEvent) -> None:
        self.records.append(event)


@pytest.mark.parametrize("sink", [MemoryAuditSink(), _ListSink()], ids=["memory", "host's own"])
def test_mounts_and_unmounts_are_audited_with_type_and_instance(sink: Any) -> None:
    """The default sink writes a mount's detail only when its record is read; a host's sink gets
    it written: both read the same."""
    contract = devices_table()
    clock = ManualClock(1_780_000_000.0)
    registry = AgentSurfaceRegistry(
        authority=CapabilityAuthority.from_manifest(compile_manifest([contract])), audit=sink, clock=clock
    )
    handle = registry.register(bind_table(contract, DevicesState(), instance_id="row-7"))
    clock.advance(1.5)
    handle.close()
    records = sink.events() if isinstance(sink, MemoryAuditSink) else sink.records
    lifecycle = [(e.type, e.registration_id, e.detail, e.at) for e in records]
    assert lifecycle == [
        ("registration", handle.registration_id, "devices.table@row-7", "2026-05-28T20:26:40.000Z"),
        ("unregistration", handle.registration_id, "devices.table@row-7", "2026-05-28T20:26:41.500Z"),
    ]
