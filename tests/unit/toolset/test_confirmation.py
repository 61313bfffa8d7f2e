"""Confirmation topology: wait mode completes a confirmation inside one tool call, two-phase
mode hands CONFIRMATION_REQUIRED to the caller.

Requirements: AS-TOPO-002 (embedded → wait, remote → two-phase, explicit override),
AS-TOPO-003 (dispose settles in-flight waits with the original CONFIRMATION_REQUIRED).
Time moves only through ManualClock.advance; the loop is driven with asyncio.sleep(0).
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from agentsurface import Limits
from agentsurface._core.pipeline.invocation import InvocationResult

from .helpers import (
    Devices,
    InvokeSpy,
    details,
    devices_surface,
    error_code,
    settle,
    tool,
    toolset_for,
    until_pending,
)

DISABLE = "domain_devices__disable"


def start(
    surface: Devices, *, call_id: str = "call_disable", **options: Any
) -> asyncio.Task[InvocationResult]:
    toolset = toolset_for(surface.registry, **options)
    return asyncio.ensure_future(
        tool(toolset, DISABLE).execute({"reason": "maintenance"}, tool_call_id=call_id)
    )


async def test_AS_TOPO_002_embedded_waits_and_retries_once_with_the_same_ids() -> None:
    surface = devices_surface(selected=["d1", "d2"])
    spy = InvokeSpy(surface.registry)
    task = start(surface, topology="embedded")

    (pending,) = await until_pending(surface.registry)
    assert not task.done()  # the call is held open on the user's decision
    assert surface.server.calls == []
    assert surface.registry.confirmations.resolve(pending.confirmation_id, approved=True)

    result = await settle(task)
    assert result.ok and result.output == {"disabled": 2}
    assert result.invocation_id == "call_disable"
    assert [r.invocation_id for r in spy.requests] == ["call_disable", "call_disable"]
    assert [r.confirmation_id for r in spy.requests] == [None, pending.confirmation_id]
    # The retry is the same request plus the evidence: same target, tokens and input.
    first, retry = spy.requests
    assert (first.capability_id, first.registration_id, first.surface_version, first.input) == (
        retry.capability_id,
        retry.registration_id,
        retry.surface_version,
        retry.input,
    )
    assert surface.server.calls == [
        ("domain:devices.disable", {"reason": "maintenance", "deviceIds": ["d1", "d2"]}, "call_disable")
    ]


async def test_AS_TOPO_002_remote_returns_confirmation_required_to_the_caller() -> None:
    surface = devices_surface(selected=["d1"])
    toolset = toolset_for(surface.registry, topology="remote")
    disable = tool(toolset, DISABLE)

    first = await disable.execute({"reason": "maintenance"}, tool_call_id="turn_1")
    assert error_code(first) == "CONFIRMATION_REQUIRED"
    confirmation_id = details(first)["confirmationId"]
    assert [p.confirmation_id for p in surface.registry.confirmations.pending()] == [confirmation_id]
    assert surface.server.calls == []

    # A later turn resumes with the evidence once the user approved.
    surface.registry.confirmations.resolve(confirmation_id, approved=True)
    second = await disable.execute(
        {"reason": "maintenance"}, tool_call_id="turn_2", confirmation_id=confirmation_id
    )
    assert second.ok and second.output == {"disabled": 1}
    assert len(surface.server.calls) == 1
    # Evidence is single-use.
    third = await disable.execute(
        {"reason": "maintenance"}, tool_call_id="turn_3", confirmation_id=confirmation_id
    )
    assert error_code(third) == "CONFIRMATION_INVALID"
    assert details(third) == {"reason": "consumed"}
    assert len(surface.server.calls) == 1


async def test_AS_TOPO_002_remote_can_opt_into_waiting() -> None:
    surface = devices_surface(selected=["d1"])
    task = start(surface, topology="remote", confirmations="wait")
    (pending,) = await until_pending(surface.registry)
    surface.registry.confirmations.resolve(pending.confirmation_id, approved=True)
    assert (await settle(task)).ok


async def test_AS_TOPO_002_embedded_can_opt_into_two_phase() -> None:
    surface = devices_surface(selected=["d1"])
    task = start(surface, topology="embedded", confirmations="two-phase")
    result = await settle(task)
    assert error_code(result) == "CONFIRMATION_REQUIRED"
    assert surface.server.calls == []


async def test_wait_mode_denial_is_confirmation_invalid_and_never_runs() -> None:
    surface = devices_surface(selected=["d1"])
    task = start(surface, topology="embedded")
    (pending,) = await until_pending(surface.registry)
    surface.registry.confirmations.resolve(pending.confirmation_id, approved=False, reason="user declined")

    result = await settle(task)
    assert error_code(result) == "CONFIRMATION_INVALID"
    assert details(result) == {"reason": "denied", "personSaid": "user declined"}  # the person's words
    assert result.error is not None and result.error.retry == "no"
    assert surface.server.calls == []


@pytest.mark.parametrize("ttl", [120.0, 5.0])
async def test_wait_mode_expiry_is_confirmation_invalid_and_never_runs(ttl: float) -> None:
    surface = devices_surface(selected=["d1"], limits=Limits(confirmation_ttl=ttl))
    task = start(surface, topology="embedded")
    await until_pending(surface.registry)

    surface.clock.advance(ttl - 0.5)
    for _ in range(5):
        await asyncio.sleep(0)
    assert not task.done()  # still inside the TTL

    surface.clock.advance(1.0)
    result = await settle(task)
    assert error_code(result) == "CONFIRMATION_INVALID"
    assert details(result) == {"reason": "expired"}
    assert result.error is not None and result.error.retry == "with-confirmation"
    assert surface.registry.confirmations.pending() == []
    assert surface.server.calls == []


async def test_AS_TOPO_003_dispose_mid_wait_returns_the_original_confirmation_required() -> None:
    surface = devices_surface(selected=["d1"])
    spy = InvokeSpy(surface.registry)
    toolset = toolset_for(surface.registry, topology="embedded")
    task = asyncio.ensure_future(tool(toolset, DISABLE).execute({"reason": "x"}, tool_call_id="call_4"))
    (pending,) = await until_pending(surface.registry)

    toolset.close()
    result = await settle(task)
    assert error_code(result) == "CONFIRMATION_REQUIRED"
    assert details(result)["confirmationId"] == pending.confirmation_id
    assert result.invocation_id == "call_4"

    # Nothing executes afterwards either, even if the user approves late.
    surface.registry.confirmations.resolve(pending.confirmation_id, approved=True)
    for _ in range(10):
        await asyncio.sleep(0)
    assert surface.server.calls == []
    assert len(spy.requests) == 1


async def test_AS_TOPO_003_dispose_settles_every_waiting_call() -> None:
    surface = devices_surface(selected=["d1"])
    toolset = toolset_for(surface.registry, topology="embedded")
    disable = tool(toolset, DISABLE)
    tasks = [
        asyncio.ensure_future(disable.execute({"reason": reason}, tool_call_id=f"call_{reason}"))
        for reason in ("a", "b", "c")
    ]
    await until_pending(surface.registry, 3)
    toolset.close()
    results = [await settle(t) for t in tasks]
    assert [error_code(r) for r in results] == ["CONFIRMATION_REQUIRED"] * 3
    assert surface.server.calls == []


async def test_AS_TOPO_003_a_disposed_toolset_does_not_start_new_waits() -> None:
    surface = devices_surface(selected=["d1"])
    toolset = toolset_for(surface.registry, topology="embedded")
    disable = tool(toolset, DISABLE)
    toolset.close()
    result = await settle(asyncio.ensure_future(disable.execute({"reason": "x"}, tool_call_id="late")))
    assert error_code(result) == "CONFIRMATION_REQUIRED"
    assert surface.server.calls == []


async def test_registry_dispose_mid_wait_settles_the_call_without_executing() -> None:
    surface = devices_surface(selected=["d1"])
    task = start(surface, topology="embedded")
    await until_pending(surface.registry)
    surface.registry.close()
    result = await settle(task)
    assert not result.ok
    assert result.invocation_id == "call_disable"
    assert surface.server.calls == []


async def test_a_transport_retry_of_a_waiting_call_joins_it() -> None:
    surface = devices_surface(selected=["d1"])
    toolset = toolset_for(surface.registry, topology="embedded")
    disable = tool(toolset, DISABLE)
    first = asyncio.ensure_future(disable.execute({"reason": "x"}, tool_call_id="same"))
    (pending,) = await until_pending(surface.registry)
    second = asyncio.ensure_future(disable.execute({"reason": "x"}, tool_call_id="same"))
    for _ in range(5):
        await asyncio.sleep(0)
    # One request, one record: the retry reuses the pending confirmation.
    assert [p.confirmation_id for p in surface.registry.confirmations.pending()] == [pending.confirmation_id]
    surface.registry.confirmations.resolve(pending.confirmation_id, approved=True)
    a, b = await settle(first), await settle(second)
    assert a.ok and b.ok
    assert len(surface.server.calls) == 1


async def test_calls_that_need_no_confirmation_never_wait() -> None:
    surface = devices_surface()
    toolset = toolset_for(surface.registry, topology="embedded")
    task = asyncio.ensure_future(
        tool(toolset, "view_devices__table__selectRows").execute({"ids": ["d1"]}, tool_call_id="c")
    )
    result = await settle(task)
    assert result.ok
    assert surface.registry.confirmations.pending() == []


async def test_a_denial_in_wait_mode_is_final_with_the_persons_words_and_no_retry() -> None:
    """As the WebMCP adapter answers it: the person's "no" reaches the caller as
    CONFIRMATION_INVALID ``denied`` with what they said, and nothing is invoked again."""
    surface = devices_surface(selected=["d1", "d2"])
    spy = InvokeSpy(surface.registry)
    task = start(surface, topology="embedded")
    (pending,) = await until_pending(surface.registry)
    surface.state.selected = ["d3"]  # even with the selection moved meanwhile
    assert surface.registry.confirmations.resolve(pending.confirmation_id, approved=False, reason="not today")
    result = await settle(task)
    assert error_code(result) == "CONFIRMATION_INVALID"
    assert details(result)["reason"] == "denied" and details(result)["personSaid"] == "not today"
    assert [r.confirmation_id for r in spy.requests] == [None]  # never retried
    assert surface.server.calls == []
