"""Meta mode: a capability's argument sent beside ``input`` in ``surface_act`` is named as
misplaced (it belongs inside ``input``), with a JSON pointer to the key that was sent."""

from __future__ import annotations

import asyncio
from typing import Any

from agentsurface._core.pipeline.invocation import InvocationResult

from .helpers import EventLog, InvokeSpy, details, devices_surface, error_code, settle, tool, toolset_for

SELECT_ID = "view:devices.table.selectRows"


async def act(args: Any) -> tuple[InvocationResult, list[Any]]:
    surface = devices_surface(selected=["d1"])
    spy, events = InvokeSpy(surface.registry), EventLog(surface.registry)
    toolset = toolset_for(surface.registry, mode="meta")
    result: InvocationResult = await settle(
        asyncio.ensure_future(tool(toolset, "surface_act").execute(args, tool_call_id="c"))
    )
    # Refused at the envelope: nothing reached the registry, no handler ran.
    assert spy.requests == [] and events.of("invocation-started") == [] and surface.state.calls == []
    assert error_code(result) == "INVALID_INPUT"
    return result, details(result)["issues"]


async def test_an_argument_beside_input_is_said_to_belong_inside_input() -> None:
    result, issues = await act({"capabilityId": SELECT_ID, "ids": ["d1"]})
    assert issues == [
        {"path": "/ids", "message": f"'ids' is an argument of {SELECT_ID}; put it inside input"}
    ]
    assert result.error is not None and "inside input" in result.error.message
    assert "d1" not in result.error.message  # the key is named, never the value


async def test_a_misplaced_argument_is_named_even_when_input_is_also_sent() -> None:
    _result, issues = await act({"capabilityId": SELECT_ID, "input": {}, "ids": ["d1"], "mode": "x"})
    assert issues == [
        {"path": "/ids", "message": f"'ids' is an argument of {SELECT_ID}; put it inside input"},
        {"path": "/mode", "message": "unknown property 'mode'"},
    ]


async def test_a_key_the_target_does_not_take_stays_an_unknown_property() -> None:
    _result, issues = await act({"capabilityId": "view:devices.table.nope", "ids": ["d1"]})
    assert issues == [{"path": "/ids", "message": "unknown property 'ids'"}]


async def test_the_pointer_to_a_misplaced_or_unknown_key_is_escaped() -> None:
    _result, issues = await act({"capabilityId": SELECT_ID, "a/b~c": 1})
    assert [i["path"] for i in issues] == ["/a~1b~0c"]
