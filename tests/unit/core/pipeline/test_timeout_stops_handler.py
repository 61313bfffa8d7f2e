"""A call the pipeline gave up on (timeout, cancellation) must not apply its effect later: its
signal fires, its task is cancelled and given a short grace to unwind, and the TIMEOUT details
say whether the handler stopped or may still be running (``handler``: "stopped" | "unknown").

Sync handlers run inline on the event loop: nothing can interrupt them, and no deadline can be
observed until they return, so they never outlive their call (their result is what they did)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from agentsurface import AgentSurfaceRegistry, CancelSignal
from agentsurface._core.clock import SystemClock
from agentsurface._core.pipeline import HANDLER_STOP_GRACE
from agentsurface.lowlevel import ActionContract, ComponentContract
from agentsurface.testing import ManualClock

from .helpers import advance, assert_matrix_compliant, details_of, make_registry, spin

WRITER = ComponentContract(
    type="late.writer",
    description="writes after a delay",
    actions={"write": ActionContract("Write a value", input={"type": "object"}, timeout=1.0)},
)
WRITE = {"capabilityId": "view:late.writer.write", "input": {}}

Handler = Callable[[Any, Any], Any]


def writer(handler: Handler, **options: Any) -> AgentSurfaceRegistry:
    registry = make_registry([WRITER], **options)
    registry.register(WRITER.bind(actions={"write": handler}))
    return registry


async def test_a_handler_that_outlives_its_timeout_never_writes_real_time() -> None:
    # Real clock, real sleep: the timeout fires while the handler sleeps before its write.
    writes: list[str] = []

    async def slow_write(value: Any, ctx: Any) -> None:
        await asyncio.sleep(0.3)
        writes.append("landed")

    registry = writer(slow_write, clock=SystemClock())
    result = assert_matrix_compliant(await registry.invoke(WRITE, timeout=0.05))
    assert result.code == "TIMEOUT"
    assert details_of(result) == {"timeoutMs": 50, "idempotent": False, "handler": "stopped"}
    await asyncio.sleep(0.5)  # well past when the write would have happened
    assert writes == []


async def test_a_gated_write_released_after_the_timeout_does_not_land() -> None:
    writes: list[str] = []
    gate = asyncio.Event()

    async def gated_write(value: Any, ctx: Any) -> None:
        await gate.wait()
        writes.append("landed")

    registry = writer(gated_write)
    pending = asyncio.ensure_future(registry.invoke(WRITE))
    await advance(registry, 1.0)
    result = await pending
    assert details_of(result)["handler"] == "stopped"
    gate.set()
    await spin()
    assert writes == []


async def test_a_handler_gets_its_signal_then_a_grace_to_clean_up() -> None:
    steps: list[str] = []
    cleaned = asyncio.Event()

    async def tidy(value: Any, ctx: Any) -> None:
        try:
            await asyncio.Event().wait()  # never set: only the timeout ends this
        finally:
            steps.append(f"signal {ctx.signal.reason}")
            await cleaned.wait()  # cleanup that itself awaits
            steps.append("cleaned up")

    registry = writer(tidy)
    pending = asyncio.ensure_future(registry.invoke(WRITE))
    await advance(registry, 1.0)
    assert steps == ["signal timeout"] and not pending.done()  # within the grace
    cleaned.set()
    result = await pending
    assert steps == ["signal timeout", "cleaned up"]
    assert details_of(result)["handler"] == "stopped"


async def test_a_handler_that_ignores_cancellation_is_reported_as_unknown() -> None:
    writes: list[str] = []
    gate = asyncio.Event()

    async def stubborn(value: Any, ctx: Any) -> None:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            await gate.wait()  # swallows the cancellation and carries on
        writes.append("landed")

    registry = writer(stubborn)
    pending = asyncio.ensure_future(registry.invoke(WRITE))
    await advance(registry, 1.0)
    assert not pending.done()
    await advance(registry, HANDLER_STOP_GRACE)
    result = assert_matrix_compliant(await pending)
    assert result.code == "TIMEOUT" and result.error is not None
    assert details_of(result)["handler"] == "unknown"
    assert result.error.retry == "no" and "could not be stopped" in result.error.message
    gate.set()
    await spin()
    assert writes == ["landed"]  # what "unknown" warned about


async def test_an_awaitable_that_is_not_a_coroutine_is_never_claimed_stopped() -> None:
    # A promise-like future: cancelling our wrapper cannot stop the work behind it.
    outside: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def foreign(value: Any, ctx: Any) -> Awaitable[None]:
        return asyncio.shield(outside)

    registry = writer(foreign)
    pending = asyncio.ensure_future(registry.invoke(WRITE))
    await advance(registry, 1.0)
    assert details_of(await pending)["handler"] == "unknown"
    outside.set_result(None)


async def test_an_externally_cancelled_call_stops_its_handler_too() -> None:
    writes: list[str] = []
    gate = asyncio.Event()

    async def gated_write(value: Any, ctx: Any) -> None:
        await gate.wait()
        writes.append("landed")

    registry = writer(gated_write)
    signal = CancelSignal()
    pending = asyncio.ensure_future(registry.invoke(WRITE, signal=signal))
    await spin()
    signal.abort("agent gave up")
    result = assert_matrix_compliant(await pending)
    assert result.code == "CANCELLED" and result.error is not None and result.error.retry == "yes"
    gate.set()
    await spin()
    assert writes == []


async def test_a_sync_handler_runs_to_completion_and_reports_what_it_did() -> None:
    writes: list[str] = []
    clock = ManualClock()

    def slow_sync(value: Any, ctx: Any) -> dict[str, str]:
        clock.advance(5.0)  # "takes" longer than its 1 s timeout
        writes.append("landed")
        return {"wrote": "yes"}

    registry = writer(slow_sync, clock=clock)
    result = await registry.invoke(WRITE)
    assert result.ok and result.output == {"wrote": "yes"}  # its effect is reported, not hidden
    assert writes == ["landed"]


async def test_a_cancelled_call_whose_handler_will_not_stop_is_not_safe_to_retry() -> None:
    gate = asyncio.Event()

    async def stubborn(value: Any, ctx: Any) -> None:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            await gate.wait()

    registry = writer(stubborn)
    signal = CancelSignal()
    pending = asyncio.ensure_future(registry.invoke(WRITE, signal=signal))
    await spin()
    signal.abort("agent gave up")
    await advance(registry, HANDLER_STOP_GRACE)
    result = assert_matrix_compliant(await pending)
    assert result.code == "CANCELLED" and result.error is not None
    assert result.error.retry == "no" and "could not be stopped" in result.error.message
    gate.set()


def test_a_system_clock_reads_its_function_and_a_subclass_keeps_its_own_now() -> None:
    readings = iter([5.0, 6.0])
    clock = SystemClock(lambda: next(readings))
    assert (clock.now(), clock.now()) == (5.0, 6.0)

    class Shifted(SystemClock):
        def now(self) -> float:
            return super().now() + 100.0

    assert Shifted(lambda: 1.0).now() == 101.0
