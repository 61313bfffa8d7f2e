"""``registry.start_invocation``: a call that never waits is answered on the spot, one that waits
is handed back as an awaitable that has run nothing of its wait yet, and either way the call
settles exactly as ``invoke`` settles it (events, audit, the identity cache, the queue slot)."""

from __future__ import annotations

import asyncio
import inspect
from typing import Any

import pytest

from agentsurface import InvocationResult
from agentsurface._core.errors import RegistryClosedError
from agentsurface.lowlevel import ActionContract, ComponentContract, ObservationContract

from .helpers import A, Events, Gate, make_registry, spin

NUDGE_INPUT = {"type": "object", "properties": {"by": {"type": "number"}}, "required": ["by"]}
WIDGET = ComponentContract(
    type="start.widget",
    description="a widget with a sync and an async action",
    observations={"peek": ObservationContract("the count", output={"type": "object"})},
    actions={
        "nudge": ActionContract("sync", input=NUDGE_INPUT),
        "slow": ActionContract("async", input=NUDGE_INPUT),
    },
)


class Widget:
    def __init__(self) -> None:
        self.count = 0
        self.slow_started = 0
        self.gate = Gate()

    def binding(self) -> Any:
        def nudge(value: Any, ctx: Any) -> Any:
            self.count += value["by"]
            return {"count": self.count}

        async def slow(value: Any, ctx: Any) -> Any:
            self.slow_started += 1
            await self.gate.run()
            self.count += value["by"]
            return {"count": self.count}

        return WIDGET.bind(
            observations={"peek": lambda ctx: {"count": self.count}}, actions={"nudge": nudge, "slow": slow}
        )


def widget_registry(**options: Any) -> tuple[Any, Widget]:
    widget = Widget()
    registry = make_registry([WIDGET], **options)
    registry.register(widget.binding())
    return registry, widget


def call(name: str, by: int = 1, **extra: Any) -> dict[str, Any]:
    return {"capabilityId": f"view:start.widget.{name}", "input": {"by": by}, **extra}


async def test_a_call_that_never_waits_is_answered_on_the_spot() -> None:
    registry, widget = widget_registry()
    events = Events(registry)
    outcome = registry.start_invocation(call("nudge", 3), consumer=A)
    assert isinstance(outcome, InvocationResult)
    assert outcome.ok and outcome.output == {"count": 3} and widget.count == 3
    assert events.types.count("invocation-settled") == 1
    assert registry.audit_sink.events()[-1].status == "ok"
    # The identity cache holds it: a retry with its minted id replays, not runs again.
    replay = await registry.invoke(call("nudge", 3, invocationId=outcome.invocation_id), consumer=A)
    assert replay == outcome and widget.count == 3


async def test_a_refusal_is_answered_on_the_spot_too() -> None:
    registry, _ = widget_registry()
    outcome = registry.start_invocation({"capabilityId": "view:start.widget.nudge", "input": {}}, consumer=A)
    assert isinstance(outcome, InvocationResult)
    assert outcome.code == "INVALID_INPUT"


async def test_a_call_that_waits_runs_nothing_of_its_wait_until_awaited() -> None:
    registry, widget = widget_registry()
    events = Events(registry)
    outcome = registry.start_invocation(call("slow", 5), consumer=A)
    assert not isinstance(outcome, InvocationResult) and inspect.isawaitable(outcome)
    await spin()
    # The async handler was called (its coroutine made), not started; nothing settled.
    assert widget.slow_started == 0
    assert events.types.count("invocation-settled") == 0
    running = asyncio.ensure_future(outcome)
    await spin()
    assert widget.slow_started == 1
    widget.gate.release_all()
    result = await running
    assert result.ok and result.output == {"count": 5}
    assert events.types.count("invocation-settled") == 1


async def test_a_waiting_call_holds_its_queue_slot_until_it_settles() -> None:
    registry, widget = widget_registry()
    first = asyncio.ensure_future(registry.invoke(call("slow", 1), consumer=A))
    await spin()
    # The group's one slot is taken: this call waits at admission, so it comes back awaitable.
    queued = registry.start_invocation(call("slow", 2), consumer=A)
    assert not isinstance(queued, InvocationResult)
    second = asyncio.ensure_future(queued)
    await spin()
    assert widget.slow_started == 1
    widget.gate.release_all()
    assert (await first).ok
    await spin()
    assert widget.slow_started == 2
    widget.gate.release_all()
    assert (await second).output == {"count": 3}
    # Both slots went back: a sync call is answered on the spot again.
    assert isinstance(registry.start_invocation(call("nudge", 1), consumer=A), InvocationResult)


async def test_a_caller_joining_a_call_in_flight_gets_an_awaitable_of_its_result() -> None:
    registry, widget = widget_registry()
    first = asyncio.ensure_future(registry.invoke(call("slow", 4, invocationId="same"), consumer=A))
    await spin()
    joined = registry.start_invocation(call("slow", 4, invocationId="same"), consumer=A)
    assert not isinstance(joined, InvocationResult)
    widget.gate.release_all()
    assert await joined == await first
    assert widget.slow_started == 1


async def test_cancelling_the_awaiting_task_settles_the_call_as_cancelled() -> None:
    registry, widget = widget_registry()
    events = Events(registry)
    outcome = registry.start_invocation(call("slow", 1, invocationId="c1"), consumer=A)
    assert not isinstance(outcome, InvocationResult)
    running = asyncio.ensure_future(outcome)
    await spin()
    running.cancel()
    with pytest.raises(asyncio.CancelledError):
        await running
    assert events.types.count("invocation-settled") == 1
    replay = await registry.invoke(call("slow", 1, invocationId="c1"), consumer=A)
    assert replay.code == "CANCELLED"
    # Its slot was released: the next call runs.
    again = asyncio.ensure_future(registry.invoke(call("slow", 1), consumer=A))
    await spin()
    widget.gate.release_all()
    assert (await again).ok


async def test_a_closed_registry_refuses_to_start() -> None:
    registry, _ = widget_registry()
    registry.close()
    with pytest.raises(RegistryClosedError):
        registry.start_invocation(call("nudge"), consumer=A)
