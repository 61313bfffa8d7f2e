"""Every registration writes an audit record; a refused one writes none."""

from __future__ import annotations

from agentsurface import AgentSurfaceRegistry, CapabilityAuthority, compile_manifest
from agentsurface._core.audit import AuditEvent, AuditSink, MemoryAuditSink
from agentsurface.testing import ManualClock
from tests.support import toolbar_contract


def test_every_registration_writes_a_registration_audit_record() -> None:
    contract = toolbar_contract()
    audit = MemoryAuditSink()
    registry = AgentSurfaceRegistry(
        authority=CapabilityAuthority.from_manifest(compile_manifest([contract])), audit=audit
    )
    first = registry.register(contract.bind(instance_id="top"))
    second = registry.register(contract.bind(instance_id="bottom"))
    records = [(e.type, e.registration_id, e.detail) for e in audit.events()]
    assert records == [
        ("registration", first.registration_id, "app.toolbar@top"),
        ("registration", second.registration_id, "app.toolbar@bottom"),
    ]
    first.close()
    assert [e.type for e in audit.events()][-1] == "unregistration"


def test_a_refused_registration_writes_no_registration_record() -> None:
    contract = toolbar_contract()
    audit = MemoryAuditSink()
    registry = AgentSurfaceRegistry(
        authority=CapabilityAuthority.from_manifest(compile_manifest([contract])), audit=audit
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
    authority = CapabilityAuthority.from_manifest(compile_manifest([contract]))
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
        handle.close()
    read = memory.events()
    assert [e.type for e in read] == ["registration", "registration-rejected", "unregistration"]
    assert [(e.at, e.type, e.detail) for e in read] == [(e.at, e.type, e.detail) for e in plain.events]
    assert read[0].at == "2023-11-14T22:13:20.000Z" and read[-1].at == "2023-11-14T22:13:21.734Z"
    assert all(isinstance(e, AuditEvent) for e in read) and read == memory.events()


async def test_the_memory_sink_reads_back_settled_calls_as_any_sink_receives_them() -> None:
    """Settled calls too: the default sink keeps them unbuilt, and reads back the records
    (timestamps, times, status, code, payload at level ``full``) a live sink got."""
    from agentsurface.lowlevel import ActionContract, ComponentContract, ObservationContract

    def tick(value: object, ctx: object) -> dict[str, int]:
        clock.advance(0.0123456)  # the handler's own time, in the record's execution_ms
        return {"n": 1}

    contract = ComponentContract(
        type="app.counter",
        description="A counter",
        observations={"read": ObservationContract("the count", output={"type": "object"})},
        actions={
            "tick": ActionContract("tick"),
            "bump": ActionContract(
                "bump it",
                input={
                    "type": "object",
                    "properties": {"by": {"type": "integer"}},
                    "additionalProperties": False,
                },
                audit="full",
            ),
        },
    )
    authority = CapabilityAuthority.from_manifest(compile_manifest([contract]))
    memory, plain = MemoryAuditSink(), _ListSink()
    for sink in (memory, plain):
        clock = ManualClock(start=1_700_000_000.0004)
        registry = AgentSurfaceRegistry(authority=authority, audit=sink, clock=clock)
        registry.register(
            contract.bind(
                observations={"read": lambda ctx: {"n": 0}},
                actions={"tick": tick, "bump": lambda value, ctx: {"by": value["by"]}},
            )
        )
        assert (await registry.invoke({"capabilityId": "view:app.counter.tick"})).ok
        clock.advance(2.5)
        assert (await registry.invoke({"capabilityId": "view:app.counter.bump", "input": {"by": 2}})).ok
        refused = await registry.invoke({"capabilityId": "view:app.counter.bump", "input": {"by": "x"}})
        assert refused.code == "INVALID_INPUT"
    read = [e for e in memory.events() if e.type == "invocation-settled"]
    live = [e for e in plain.events if e.type == "invocation-settled"]
    assert len(read) == 3
    # Ids are random per registry: the rest of each record is the same.
    assert [_without_ids(e) for e in read] == [_without_ids(e) for e in live]
    assert read[0].execution_ms == 12.346 and read[0].payload is None
    assert (
        read[1].payload == {"input": {"by": 2}, "output": {"by": 2}}
        and read[1].at == "2023-11-14T22:13:22.512Z"
    )
    assert read[2].code == "INVALID_INPUT" and read[2].status == "error"


async def test_a_policy_hears_each_settlement_and_the_memory_sink_still_reads_it_back() -> None:
    """A policy that heard a call's settlement gets the same record an audit sink keeps: the
    default sink's record, built when read, is the one a live sink received."""
    from agentsurface import Policy
    from agentsurface._core.audit import Settled
    from agentsurface.lowlevel import ActionContract, ComponentContract

    class Hears(Policy):
        name = "hears"

        def __init__(self) -> None:
            self.heard: list[Settled] = []

        def on_settled(self, ctx: object, settled: Settled) -> None:  # type: ignore[override]
            self.heard.append(settled)

    contract = ComponentContract(
        type="app.counter", description="A counter", actions={"tick": ActionContract("tick", audit="full")}
    )
    authority = CapabilityAuthority.from_manifest(compile_manifest([contract]))
    memory, plain = MemoryAuditSink(), _ListSink()
    policies = (Hears(), Hears())
    for sink, policy in zip((memory, plain), policies, strict=True):
        clock = ManualClock(start=1_700_000_000.0004)
        registry = AgentSurfaceRegistry(authority=authority, audit=sink, clock=clock, policies=[policy])
        registry.register(
            contract.bind(actions={"tick": lambda value, ctx, clock=clock: clock.advance(0.25) or {"n": 1}})
        )
        assert (await registry.invoke({"capabilityId": "view:app.counter.tick"})).ok
    read = [e for e in memory.events() if e.type == "invocation-settled"]
    live = [e for e in plain.events if e.type == "invocation-settled"]
    assert len(read) == 1 and [_without_ids(e) for e in read] == [_without_ids(e) for e in live]
    heard = policies[0].heard
    assert len(heard) == 1 and heard[0].invocation_id == read[0].invocation_id
    assert (heard[0].at, heard[0].execution_ms, heard[0].output) == (read[0].at, 250.0, {"n": 1})
    assert read[0].payload == {"input": {}, "output": {"n": 1}}


def _without_ids(event: AuditEvent) -> dict[str, object]:
    return {k: v for k, v in event.to_json().items() if k not in ("invocation_id", "registration_id")}


async def test_the_memory_sink_holds_no_input_or_output_below_level_full() -> None:
    """Kept unbuilt, a metadata-level line still holds no payload: the ring of 1000 lines must
    not pin an agent's large inputs and outputs that its records drop anyway."""
    from agentsurface.lowlevel import ActionContract, ComponentContract, ObservationContract

    contract = ComponentContract(
        type="app.echo",
        description="Echoes",
        observations={"read": ObservationContract("nothing", output={"type": "object"})},
        actions={"echo": ActionContract("echo it", input={"type": "object"})},
    )
    sink = MemoryAuditSink()
    registry = AgentSurfaceRegistry(authority=CapabilityAuthority.from_manifest(compile_manifest([contract])), audit=sink)
    registry.register(
        contract.bind(observations={"read": lambda ctx: {}}, actions={"echo": lambda value, ctx: {"n": len(value["pad"])}})
    )
    big = {"pad": "x" * 100_000}
    assert (await registry.invoke({"capabilityId": "view:app.echo.echo", "input": big})).ok
    kept = list(sink._events or ())
    assert kept and all("x" * 100_000 not in repr(line) for line in kept)
    assert [e.payload for e in sink.events() if e.type == "invocation-settled"] == [None]
