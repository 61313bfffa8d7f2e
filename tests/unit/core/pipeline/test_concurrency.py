"""Admission, timeouts, cancellation, unmount races and navigation settlement.

AS-CONC-001/002/010/011/012, AS-OBS-001..003, AS-NAV-001..004. Every handler is gated or
timed by the ManualClock; nothing sleeps.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from agentsurface import (
    AgentSurfaceRegistry,
    CancelSignal,
    Consumer,
    DefinitionError,
    InvocationResult,
    Limits,
    MemoryAuditSink,
)
from agentsurface.lowlevel import ActionContract, ComponentContract, Concurrency, ObservationContract

from .helpers import (
    A,
    B,
    DevicesState,
    Gate,
    advance,
    details_of,
    disable_procedure,
    gated_widget,
    make_registry,
    settled,
    spin,
)

_seq = 0


def call(
    registry: AgentSurfaceRegistry, name: str, *, type_: str = "conc.widget", **options: Any
) -> asyncio.Future[InvocationResult]:
    global _seq
    _seq += 1
    request = {"invocationId": f"inv_{_seq}", "capabilityId": f"view:{type_}.{name}", "input": {}}
    request.update(options.pop("request", {}))
    return asyncio.ensure_future(registry.invoke(request, **options))


def late_events(sink: MemoryAuditSink) -> list[Any]:
    return [e for e in sink.events() if e.type == "late-settlement"]


# --------------------------------------------------------------------------- AS-CONC-001


async def test_AS_CONC_001_default_instance_mode_serializes_different_capabilities() -> None:
    a, b = Gate(), Gate()
    contract, bind = gated_widget({"a": a, "b": b})
    registry = make_registry([contract])
    registry.register(bind())
    first, second = call(registry, "a"), call(registry, "b")
    await spin()
    assert (a.entered, b.entered) == (1, 0)
    a.release_all()
    await spin()
    assert b.entered == 1
    b.release_all()
    assert all(r.ok for r in await asyncio.gather(first, second))


async def test_AS_CONC_001_instance_groups_are_per_registration() -> None:
    a = Gate()
    contract, bind = gated_widget({"a": a})
    registry = make_registry([contract])
    registry.register(bind("left"))
    registry.register(bind("right"))
    running = [
        call(registry, "a", request={"instanceId": "left"}),
        call(registry, "a", request={"instanceId": "right"}),
    ]
    await spin()
    assert a.entered == 2  # two instances never block each other
    a.release_all()
    await asyncio.gather(*running)


async def test_AS_CONC_001_capability_mode_runs_distinct_capabilities_in_parallel() -> None:
    a, b = Gate(), Gate()
    cap = Concurrency("capability")
    contract, bind = gated_widget({"a": a, "b": b}, {"a": cap, "b": cap})
    registry = make_registry([contract])
    registry.register(bind())
    running = [call(registry, "a"), call(registry, "b"), call(registry, "a")]
    await spin()
    assert (a.entered, b.entered) == (1, 1)
    a.release_all()
    await spin()
    assert a.entered == 2
    a.release_all()
    b.release_all()
    assert all(r.ok for r in await asyncio.gather(*running))


async def test_AS_CONC_001_key_mode_shares_one_queue_across_capabilities() -> None:
    a, b = Gate(), Gate()
    key = Concurrency("key", key="export")
    contract, bind = gated_widget({"a": a, "b": b}, {"a": key, "b": key})
    registry = make_registry([contract])
    registry.register(bind())
    running = [call(registry, "a"), call(registry, "b")]
    await spin()
    assert (a.entered, b.entered) == (1, 0)
    a.release_all()
    await spin()
    assert b.entered == 1
    b.release_all()
    await asyncio.gather(*running)


async def test_AS_CONC_001_parallel_mode_admits_exactly_max() -> None:
    a = Gate()
    contract, bind = gated_widget({"a": a}, {"a": Concurrency("parallel", max=2, queue_depth=4)})
    registry = make_registry([contract])
    registry.register(bind())
    running = [call(registry, "a") for _ in range(4)]
    await spin()
    assert a.entered == 2
    a.release_all()
    await spin()
    assert a.entered == 4
    a.release_all()
    assert all(r.ok for r in await asyncio.gather(*running))


async def test_AS_CONC_001_group_queue_depth_overflow_is_rate_limited_and_reserves_nothing() -> None:
    a = Gate()
    contract, bind = gated_widget({"a": a}, {"a": Concurrency("capability", queue_depth=1)})
    registry = make_registry([contract])
    registry.register(bind())
    first, queued = call(registry, "a"), call(registry, "a")
    await spin()
    overflow = await call(registry, "a")
    assert overflow.code == "RATE_LIMITED"
    assert overflow.error is not None and overflow.error.retry == "after-delay"
    assert details_of(overflow)["reason"] == "queue-full"
    assert isinstance(details_of(overflow)["retryAfterMs"], int)
    a.release_all()
    await spin()
    a.release_all()
    assert all(r.ok for r in await asyncio.gather(first, queued))
    assert a.entered == 2
    assert len(registry._invoker.actions) == 0  # idle groups are dropped


async def test_AS_CONC_001_settled_groups_leave_no_reservation_behind() -> None:
    a = Gate()
    contract, bind = gated_widget({"a": a}, {"a": Concurrency("capability", queue_depth=0)})
    registry = make_registry([contract])
    registry.register(bind())
    for i in range(10):
        running = call(registry, "a")
        await spin()
        assert a.entered == i + 1
        rejected = await call(registry, "a")
        assert rejected.code == "RATE_LIMITED"
        a.release_all()
        assert (await running).ok
    assert len(registry._invoker.actions) == 0


async def test_AS_CONC_001_procedures_queue_per_identity_and_never_block_view_actions() -> None:
    view_gate, exec_gate = Gate(), Gate()
    proc = disable_procedure(effect="server-query")
    widget = ComponentContract(
        type="devices.toolbar",
        description="toolbar",
        observations={"mode": ObservationContract("mode", output={"type": "string"})},
        actions={"a": ActionContract("gated", input={"type": "object"})},
    )

    async def executor(cid: str, value: Any, ctx: Any) -> Any:
        await exec_gate.run()
        return {"disabled": 1}

    async def a(value: Any, ctx: Any) -> None:
        await view_gate.run()

    registry = make_registry([widget, proc], procedure_executor=executor)
    state = DevicesState()
    state.selected = ["d1"]
    reference = proc.reference(bind=lambda: {"deviceIds": state.selected}, bound_fields=["deviceIds"])
    registry.register(
        widget.bind(observations={"mode": lambda ctx: "x"}, actions={"a": a}, procedures=[reference])
    )
    running = [
        call(registry, "disable", type_="x", request={"capabilityId": "domain:devices.disable"}),
        call(registry, "disable", type_="x", request={"capabilityId": "domain:devices.disable"}),
        call(registry, "a", type_="devices.toolbar"),
    ]
    await spin()
    assert exec_gate.entered == 1
    assert view_gate.entered == 1
    exec_gate.release_all()
    await spin()
    assert exec_gate.entered == 2
    exec_gate.release_all()
    view_gate.release_all()
    assert all(r.ok for r in await asyncio.gather(*running))


# --------------------------------------------------------------------------- AS-CONC-002


async def test_AS_CONC_002_actions_run_fifo_per_instance_with_a_bounded_queue() -> None:
    order: list[int] = []
    gate = Gate()
    contract = ComponentContract(
        type="conc.fifo",
        description="fifo",
        actions={
            "go": ActionContract(
                "go",
                input={"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]},
            )
        },
    )
    registry = make_registry([contract])  # default action_queue_depth: 2

    async def go(value: Any, ctx: Any) -> None:
        order.append(value["n"])
        await gate.run()

    registry.register(contract.bind(actions={"go": go}))
    running = [
        asyncio.ensure_future(registry.invoke({"capabilityId": "view:conc.fifo.go", "input": {"n": n}}))
        for n in (1, 2, 3)
    ]
    await spin()
    overflow = await registry.invoke({"capabilityId": "view:conc.fifo.go", "input": {"n": 4}})
    assert overflow.code == "RATE_LIMITED"
    assert details_of(overflow)["reason"] == "queue-full"
    for _ in range(3):
        gate.release_all()
        await spin()
    assert all(r.ok for r in await asyncio.gather(*running))
    assert order == [1, 2, 3]  # FIFO, and the overflow never ran


# --------------------------------------------------------------------------- AS-CONC-010


async def test_AS_CONC_010_unmount_before_execute() -> None:
    slow, fast = Gate(), Gate()
    contract, bind = gated_widget({"slow": slow, "fast": fast})
    registry = make_registry([contract])
    handle = registry.register(bind())
    running, queued = call(registry, "slow"), call(registry, "fast")
    await spin()
    handle.close()
    slow.release_all()
    r1, r2 = await asyncio.gather(running, queued)
    assert r1.code == "COMPONENT_UNMOUNTED" and details_of(r1) == {"phase": "mid-flight"}
    assert r2.code == "COMPONENT_UNMOUNTED" and details_of(r2) == {"phase": "resolve"}
    assert fast.entered == 0  # the queued handler never ran
    assert r1.surface_changed is True


async def test_AS_CONC_010_unmount_during_execute_handler_wins() -> None:
    slow = Gate()
    contract, bind = gated_widget({"slow": slow})
    registry = make_registry([contract])
    handle = registry.register(bind())
    pending = call(registry, "slow")
    await spin()
    slow.release_all()
    result = await pending
    handle.close()
    assert result.ok


async def test_AS_CONC_010_unmount_during_execute_unmount_wins_and_late_settlement_is_audited() -> None:
    sink = MemoryAuditSink()
    slow = Gate()
    contract, bind = gated_widget({"slow": slow})
    registry = make_registry([contract], audit=sink)
    handle = registry.register(bind())
    pending = call(registry, "slow")
    await spin()
    handle.close()
    result = await pending
    assert result.code == "COMPONENT_UNMOUNTED"
    assert details_of(result) == {"phase": "mid-flight"}
    await spin()
    # The handler was stopped when the call settled; its end is audited, never returned.
    (late,) = late_events(sink)
    assert late.invocation_id == result.invocation_id and late.detail == "unmounted"
    assert late.status == "cancelled" and slow.finished == 0
    slow.release_all()
    await spin()
    assert len(late_events(sink)) == 1 and slow.finished == 0


# --------------------------------------------------------------------------- AS-CONC-011


async def test_AS_CONC_011_timeout_with_late_resolution() -> None:
    sink = MemoryAuditSink()
    slow = Gate()
    contract, bind = gated_widget({"slow": slow}, timeout=10.0)
    registry = make_registry([contract], audit=sink)
    registry.register(bind())
    signals: list[CancelSignal] = []
    pending = call(registry, "slow")
    await advance(registry, 9.999)
    assert not pending.done()
    await advance(registry, 0.002)
    result = await pending
    assert result.code == "TIMEOUT"
    assert result.error is not None and result.error.retry == "no"  # not idempotent: verify first
    assert details_of(result) == {"timeoutMs": 10_000, "idempotent": False, "handler": "stopped"}
    assert "verify" in result.error.message.lower()
    await spin()
    # The handler was stopped at the deadline: its end is audited, and releasing it later
    # lands nothing.
    (late,) = late_events(sink)
    assert late.detail == "timeout" and late.status == "cancelled"
    slow.release_all()
    await spin()
    assert len(late_events(sink)) == 1 and slow.finished == 0
    # The late resolution never overwrote the terminal result.
    replay = await registry.invoke(
        {"invocationId": result.invocation_id, "capabilityId": "view:conc.widget.slow", "input": {}}
    )
    assert replay == result
    assert slow.entered == 1
    del signals


async def test_AS_CONC_011_idempotent_timeout_says_retry_and_signal_is_aborted() -> None:
    seen: list[CancelSignal] = []
    contract = ComponentContract(
        type="conc.idem",
        description="idempotent",
        actions={"set": ActionContract("set", input={"type": "object"}, idempotent=True, timeout=2.0)},
    )
    registry = make_registry([contract])

    async def set_(value: Any, ctx: Any) -> None:
        seen.append(ctx.signal)
        await ctx.signal.wait()  # a cooperative handler stops when told to

    registry.register(contract.bind(actions={"set": set_}))
    pending = asyncio.ensure_future(registry.invoke({"capabilityId": "view:conc.idem.set", "input": {}}))
    await advance(registry, 2.0)
    result = await pending
    assert result.code == "TIMEOUT"
    assert result.error is not None and result.error.retry == "yes"
    assert details_of(result) == {"timeoutMs": 2000, "idempotent": True, "handler": "stopped"}
    assert seen[0].aborted and seen[0].reason == "timeout"


async def test_AS_CONC_011_per_call_timeout_overrides_the_contract() -> None:
    slow = Gate()
    contract, bind = gated_widget({"slow": slow}, timeout=10.0)
    registry = make_registry([contract])
    registry.register(bind())
    pending = call(registry, "slow", timeout=0.5)
    await advance(registry, 0.5)
    result = await pending
    assert result.code == "TIMEOUT" and details_of(result)["timeoutMs"] == 500
    # The slot was released: the next call runs at once.
    slow.release_all()
    nxt = call(registry, "slow")
    await spin()
    assert slow.entered == 2
    slow.release_all()
    assert (await nxt).ok


async def test_AS_CONC_011_default_timeouts_come_from_limits() -> None:
    slow = Gate()
    contract, bind = gated_widget({"slow": slow})
    registry = make_registry([contract], limits=Limits(action_timeout=3.0))
    registry.register(bind())
    pending = call(registry, "slow")
    await advance(registry, 2.9)
    assert not pending.done()
    await advance(registry, 0.1)
    assert details_of(await pending)["timeoutMs"] == 3000
    slow.release_all()


# --------------------------------------------------------------------------- AS-CONC-012


async def test_AS_CONC_012_external_cancel_before_queue_entry() -> None:
    fast = Gate()
    contract, bind = gated_widget({"fast": fast})
    registry = make_registry([contract])
    registry.register(bind())
    signal = CancelSignal()
    signal.abort("user pressed stop")
    result = await call(registry, "fast", signal=signal)
    assert result.code == "CANCELLED"
    assert fast.entered == 0


async def test_AS_CONC_012_external_cancel_while_queued() -> None:
    slow, fast = Gate(), Gate()
    contract, bind = gated_widget({"slow": slow, "fast": fast})
    registry = make_registry([contract])
    registry.register(bind())
    signal = CancelSignal()
    running = call(registry, "slow")
    queued = call(registry, "fast", signal=signal)
    await spin()
    signal.abort()
    await spin()
    assert queued.done()
    result = await queued
    assert result.code == "CANCELLED"
    slow.release_all()
    assert (await running).ok
    assert fast.entered == 0
    # The cancelled waiter left the queue: the next call is admitted at once.
    after = call(registry, "fast")
    await spin()
    assert fast.entered == 1
    fast.release_all()
    assert (await after).ok


async def test_AS_CONC_012_external_cancel_while_running_settles_cancelled_and_audits_late() -> None:
    sink = MemoryAuditSink()
    slow = Gate()
    contract, bind = gated_widget({"slow": slow})
    registry = make_registry([contract], audit=sink)
    registry.register(bind())
    signal = CancelSignal()
    pending = call(registry, "slow", signal=signal)
    await spin()
    signal.abort()
    result = await pending
    assert result.code == "CANCELLED"
    slow.release_all()
    await spin()
    assert [e.detail for e in late_events(sink)] == ["cancelled"]


async def test_AS_CONC_012_cancelling_the_callers_task_still_settles_the_invocation() -> None:
    sink = MemoryAuditSink()
    slow = Gate()
    contract, bind = gated_widget({"slow": slow})
    registry = make_registry([contract], audit=sink)
    registry.register(bind())
    seen: list[str] = []
    registry.subscribe(lambda e: seen.append(e.type))
    request = {"invocationId": "abandon", "capabilityId": "view:conc.widget.slow", "input": {}}
    owner = asyncio.ensure_future(registry.invoke(request))
    await spin()
    joined = asyncio.ensure_future(registry.invoke(dict(request)))
    await spin()
    owner.cancel()
    await spin()
    assert owner.cancelled()
    assert (await joined).code == "CANCELLED"  # a joined caller gets the typed result
    assert seen.count("invocation-started") == 1 and seen.count("invocation-settled") == 1
    settled = [e for e in sink.events() if e.type == "invocation-settled"]
    assert [e.code for e in settled] == ["CANCELLED"]
    # The slot was released: the registry keeps serving.
    slow.release_all()
    nxt = call(registry, "slow")
    await spin()
    slow.release_all()
    assert (await nxt).ok


# --------------------------------------------------------------------------- AS-OBS


GAUGE = ComponentContract(
    type="conf.gauge",
    description="a slow gauge",
    observations={"readValue": ObservationContract("read the gauge", output={"type": "number"})},
)
OBS_LIMITS = Limits(
    max_concurrent_observations_per_consumer=2,
    max_concurrent_observations_total=3,
    max_queued_observations_per_consumer=1,
)


class Gauge:
    def __init__(self, **options: Any) -> None:
        self.gate = Gate()
        self.registry = make_registry([GAUGE], limits=OBS_LIMITS, **options)

        async def read(ctx: Any) -> Any:
            return await self.gate.run()

        self.registry.register(GAUGE.bind(observations={"readValue": read}))

    def observe(self, consumer: Consumer) -> asyncio.Future[InvocationResult]:
        return asyncio.ensure_future(
            self.registry.invoke({"capabilityId": "view:conf.gauge.readValue"}, consumer=consumer)
        )

    async def settle_one(self, value: float = 42) -> None:
        waiters = self.gate._waiters
        while waiters and waiters[0].done():  # reads stopped on timeout or cancel
            waiters.pop(0)
        if waiters:
            waiters.pop(0).set_result(value)
        await spin()


async def test_AS_OBS_001_per_consumer_overflow_is_rate_limited_queue_full() -> None:
    g = Gauge()
    held = [g.observe(A), g.observe(A), g.observe(A)]  # 2 running + 1 queued
    await spin()
    overflow = await g.observe(A)
    assert overflow.code == "RATE_LIMITED"
    assert details_of(overflow)["reason"] == "queue-full"
    assert isinstance(details_of(overflow)["retryAfterMs"], int)
    assert g.gate.entered == 2
    g.registry.close()
    await spin()
    assert all(r.code == "CANCELLED" for r in await asyncio.gather(*held))


async def test_AS_OBS_001_global_cap_is_independent_of_per_consumer_room() -> None:
    g = Gauge()
    held = [g.observe(A), g.observe(A), g.observe(B), g.observe(B)]  # total 3 running, B queued
    await spin()
    assert g.gate.entered == 3
    overflow = await g.observe(B)
    assert details_of(overflow)["reason"] == "queue-full"
    g.registry.close()
    await asyncio.gather(*held)


async def test_AS_OBS_002_a_saturated_consumer_cannot_starve_another() -> None:
    g = Gauge()
    a_calls = [g.observe(A), g.observe(A), g.observe(A)]  # A: 2 running + 1 queued
    b = g.observe(B)
    await spin()
    assert g.gate.entered == 3  # B admitted at once despite A's queue
    for _ in range(4):
        await g.settle_one()
    assert (await b).ok and (await b).output == 42
    assert all(r.ok for r in await asyncio.gather(*a_calls))


async def test_AS_OBS_002_release_wakes_the_oldest_waiter_with_room() -> None:
    g = Gauge()
    a1, a2, b1 = g.observe(A), g.observe(A), g.observe(B)  # total full (3)
    await spin()
    a3 = g.observe(A)  # queued: A is at its cap
    b2 = g.observe(B)  # queued: total is at its cap
    await spin()
    assert g.gate.entered == 3
    await g.settle_one(1)  # a1 settles: A frees a slot -> a3 (the oldest waiter) runs
    assert g.gate.entered == 4
    assert not b2.done()
    await g.settle_one(2)  # a2 settles -> b2 has room
    assert g.gate.entered == 5
    for _ in range(3):
        await g.settle_one(3)
    outputs = [r.output for r in await asyncio.gather(a1, a2, b1, a3, b2)]
    assert outputs == [1, 2, 3, 3, 3]


async def test_AS_OBS_003_settlement_admits_queued_fifo_and_observations_skip_action_queues() -> None:
    g = Gauge()
    p1, p2, queued = g.observe(A), g.observe(A), g.observe(A)
    await spin()
    assert g.gate.entered == 2
    assert len(g.registry._invoker.actions) == 0
    await g.settle_one(1)
    assert g.gate.entered == 3
    await g.settle_one(2)
    await g.settle_one(3)
    assert [r.output for r in await asyncio.gather(p1, p2, queued)] == [1, 2, 3]
    assert g.registry._invoker.observations.active == 0


async def test_AS_OBS_003_timeout_and_cancellation_release_slots() -> None:
    g = Gauge()
    hung1, hung2 = g.observe(A), g.observe(A)
    queued = g.observe(A)
    await spin()
    assert g.gate.entered == 2
    await advance(g.registry, 5.0)  # default observation timeout
    assert (await hung1).code == "TIMEOUT"
    assert (await hung2).code == "TIMEOUT"
    assert details_of(await hung1) == {"timeoutMs": 5000, "idempotent": True, "handler": "stopped"}
    assert g.gate.entered == 3  # the queued read was dispatched
    signal = CancelSignal()
    cancelled = asyncio.ensure_future(
        g.registry.invoke({"capabilityId": "view:conf.gauge.readValue"}, consumer=A, signal=signal)
    )
    await spin()
    signal.abort()
    assert (await cancelled).code == "CANCELLED"
    await g.settle_one(7)  # the timed-out and cancelled reads were stopped: only queued waits
    assert (await queued).ok
    assert g.registry._invoker.observations.active == 0
    assert g.registry._invoker.observations.queued == 0


async def test_AS_OBS_003_disposal_drains_queues_as_cancelled() -> None:
    g = Gauge()
    running = [g.observe(A), g.observe(A)]
    queued = g.observe(A)
    await spin()
    g.registry.close()
    await spin()
    assert (await queued).code == "CANCELLED"
    assert all(r.code == "CANCELLED" for r in await asyncio.gather(*running))
    assert g.gate.entered == 2  # the queued read never dispatched


# --------------------------------------------------------------------------- AS-NAV


NAV = ComponentContract(
    type="app.navigation",
    description="top-level navigation",
    actions={
        "goTo": ActionContract(
            "navigate to a section",
            effect="navigation",
            input={
                "type": "object",
                "properties": {"to": {"type": "string"}},
                "required": ["to"],
                "additionalProperties": False,
            },
        )
    },
)


def nav_registry(execute: Any, **options: Any) -> tuple[Any, Any]:
    registry = make_registry([NAV], **options)
    holder: dict[str, Any] = {}

    def run(value: Any, ctx: Any) -> Any:
        return execute(value, ctx, holder["handle"])

    holder["handle"] = registry.register(NAV.bind(actions={"goTo": run}))
    return registry, holder["handle"]


GO = {"capabilityId": "view:app.navigation.goTo", "input": {"to": "/reports"}}


async def test_AS_NAV_001_sync_commit_and_owner_unmount_in_the_same_task_settles_ok() -> None:
    registry, _handle = nav_registry(lambda value, ctx, handle: handle.close())
    result = await registry.invoke(GO)
    assert result.ok
    assert result.surface_changed is True


async def test_AS_NAV_001_async_commit_resolving_after_the_unmount_settles_ok() -> None:
    async def execute(value: Any, ctx: Any, handle: Any) -> None:
        handle.close()
        await asyncio.sleep(0)
        await asyncio.sleep(0)

    registry, _handle = nav_registry(execute)
    assert (await registry.invoke(GO)).ok


async def test_AS_NAV_002_router_refusal_settles_execution_failed() -> None:
    def refuse(value: Any, ctx: Any, handle: Any) -> None:
        raise RuntimeError("route guard refused: /admin requires role=root")

    registry, _handle = nav_registry(refuse)
    result = await registry.invoke(GO)
    assert result.code == "EXECUTION_FAILED"
    assert details_of(result) == {"reason": "handler-error"}
    assert "root" not in str(result.to_json())


async def test_AS_NAV_002_abandoning_after_the_unmount_abort_settles_cancelled() -> None:
    async def execute(value: Any, ctx: Any, handle: Any) -> None:
        handle.close()  # aborts ctx.signal but does not settle the navigation
        await asyncio.sleep(0)
        if ctx.signal.aborted:
            raise RuntimeError("transition abandoned")

    registry, _handle = nav_registry(execute)
    result = await registry.invoke(GO)
    assert result.code == "CANCELLED"


async def test_AS_NAV_003_unmounted_before_dispatch_is_component_unmounted() -> None:
    calls: list[Any] = []
    registry, handle = nav_registry(lambda value, ctx, h: calls.append(value))
    handle.close()
    result = await registry.invoke(GO)
    assert result.code == "COMPONENT_UNMOUNTED"
    assert details_of(result) == {"phase": "resolve"}
    by_id = await registry.invoke({**GO, "registrationId": handle.registration_id})
    assert by_id.code == "COMPONENT_UNMOUNTED"
    assert calls == []


async def test_AS_NAV_003_navigation_queued_behind_another_call_and_unmounted_never_runs() -> None:
    gate = Gate()
    calls: list[str] = []

    async def execute(value: Any, ctx: Any, handle: Any) -> None:
        calls.append(value["to"])
        if value["to"] == "/first":
            await gate.run()

    registry, handle = nav_registry(execute)
    first = asyncio.ensure_future(registry.invoke({**GO, "input": {"to": "/first"}}))
    second = asyncio.ensure_future(registry.invoke({**GO, "input": {"to": "/second"}}))
    await spin()
    handle.close()
    await spin()
    assert (await settled(second)).code == "COMPONENT_UNMOUNTED"
    gate.release_all()
    assert (await settled(first)).ok  # the running navigation is not settled by the unmount
    assert calls == ["/first"]


async def test_AS_NAV_004_a_timeout_cannot_overwrite_an_accepted_navigation() -> None:
    accepted = Gate()

    async def execute(value: Any, ctx: Any, handle: Any) -> None:
        handle.close()
        await accepted.run()  # the router accepts later

    registry, _handle = nav_registry(execute)
    pending = asyncio.ensure_future(registry.invoke(GO, timeout=5.0))
    await advance(registry, 0.01)
    accepted.release_all()
    result = await pending
    assert result.ok
    await advance(registry, 10.0)  # the timeout tick is inert now
    assert manual_timers(registry) == 0
    assert await registry.invoke({**GO, "invocationId": result.invocation_id}) == result


async def test_AS_NAV_004_a_navigation_that_never_settles_still_times_out() -> None:
    never = Gate()

    async def execute(value: Any, ctx: Any, handle: Any) -> None:
        handle.close()  # abort only; the handler hangs
        await never.run()

    registry, _handle = nav_registry(execute)
    pending = asyncio.ensure_future(registry.invoke(GO, timeout=1.0))
    await advance(registry, 0.999)
    assert not pending.done()
    await advance(registry, 0.001)
    assert (await pending).code == "TIMEOUT"


def manual_timers(registry: Any) -> int:
    return int(registry.clock.pending_timers)


def test_AS_CONC_001_invalid_groups_are_definition_errors() -> None:
    for bad in (
        {"mode": "parallel"},
        {"mode": "parallel", "max": 0},
        {"mode": "parallel", "max": 1.5},
        {"mode": "parallel", "max": True},
        {"mode": "key"},
        {"mode": "key", "key": ""},
        {"mode": "sequential"},
        {"mode": "instance", "queue_depth": -1},
    ):
        with pytest.raises(DefinitionError):
            Concurrency(**bad)
    assert Concurrency().mode == "instance"
    assert Concurrency("parallel", max=3, queue_depth=0).to_json() == {
        "mode": "parallel",
        "max": 3,
        "queueDepth": 0,
    }
