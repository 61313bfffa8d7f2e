"""The fakes behave like the browsers they stand for (so adapter tests prove something)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from agentsurface import CancelSignal
from agentsurface.adapters.model_context import ModelContext, ModelContextError, ToolCall, WebMCPTool

from .fakes import (
    SHAPES,
    AbortableModelContext,
    FakeClient,
    IncrementalModelContext,
    ProvideModelContext,
    make_context,
)

SEEN: list[ToolCall] = []


async def echo(value: Any, call: ToolCall) -> dict[str, Any]:
    SEEN.append(call)
    if call.request_user_interaction is not None:
        value = {"ui": await call.request_user_interaction(ui_answer)}
    return {"content": [{"type": "text", "text": "1" if value is None else '"x"'}]}


async def ui_answer() -> str:
    return "yes"


def tool(name: str, description: str = "A tool") -> WebMCPTool:
    return WebMCPTool(name, name.title(), description, {"type": "object"}, {"readOnlyHint": True}, echo)


@pytest.mark.parametrize("shape", SHAPES)
def test_every_fake_satisfies_the_model_context_protocol(shape: Any) -> None:
    fake = make_context(shape)
    assert isinstance(fake, ModelContext)
    assert fake.shape == shape


@pytest.mark.parametrize(
    "name",
    ["", "a b", "x" * 129, "tool:name", "caf\u00e9", "a/b"],
    ids=["empty", "space", "129", "colon", "e", "slash"],
)
async def test_abortable_rejects_invalid_names_with_invalid_state_error(name: str) -> None:
    fake = AbortableModelContext()
    with pytest.raises(ModelContextError) as raised:
        await fake.register_tool(tool(name))
    assert raised.value.kind == "InvalidStateError"
    assert fake.tools == {} and fake.live_handles == 0
    assert fake.errors == [raised.value]


async def test_abortable_accepts_the_full_name_alphabet_and_refuses_duplicates() -> None:
    fake = AbortableModelContext()
    await fake.register_tool(tool("A.b-c_9" + "x" * 121))
    await fake.register_tool(tool("dup"))
    with pytest.raises(ModelContextError) as raised:
        await fake.register_tool(tool("dup"))
    assert raised.value.kind == "InvalidStateError"
    assert fake.live_handles == 2


async def test_abortable_registration_settles_later_and_unregister_aborts() -> None:
    fake = AbortableModelContext(register_yields=2)
    task = asyncio.ensure_future(fake.register_tool(tool("t")))
    await asyncio.sleep(0)
    assert not task.done()  # the promise has not settled yet...
    assert "t" in fake.tools  # ...but the page already holds the tool (a duplicate would fail now)
    await task
    await fake.unregister_tool("t")
    await fake.unregister_tool("never-registered")  # aborting nothing is harmless
    assert fake.tools == {} and fake.live_handles == 0
    with pytest.raises(ModelContextError):
        await fake.provide_context([])
    assert await fake.clear_context() is False


async def test_hold_suspends_registration_until_release() -> None:
    fake = AbortableModelContext()
    fake.hold()
    task = asyncio.ensure_future(fake.register_tool(tool("t")))
    for _ in range(5):
        await asyncio.sleep(0)
    assert fake.suspended == 1 and not task.done()
    fake.release()
    await task
    assert fake.suspended == 0


async def test_incremental_behaves_like_the_polyfill() -> None:
    fake = IncrementalModelContext()
    coro = fake.register_tool(tool("t"))
    await coro  # no yield needed: registerTool is synchronous
    with pytest.raises(ModelContextError) as raised:
        await fake.register_tool(tool("t"))
    assert raised.value.kind == "Error" and "already registered" in str(raised.value)
    with pytest.raises(ModelContextError):
        await fake.register_tool(tool("u", description=""))
    await fake.unregister_tool("unknown")
    await fake.unregister_tool("t")
    assert fake.live_handles == 0
    await fake.provide_context([tool("a"), tool("b")])
    assert set(fake.tools) == {"a", "b"} and fake.live_handles == 2
    assert await fake.clear_context() is True
    assert fake.tools == {} and fake.live_handles == 0


async def test_provide_only_has_provide_context() -> None:
    fake = ProvideModelContext(has_clear=False)
    with pytest.raises(ModelContextError):
        await fake.register_tool(tool("t"))
    with pytest.raises(ModelContextError):
        await fake.unregister_tool("t")
    await fake.provide_context([tool("a"), tool("b")])
    await fake.provide_context([tool("c")])
    assert set(fake.tools) == {"c"} and fake.live_handles == 1
    with pytest.raises(ModelContextError):
        await fake.provide_context([tool("d"), tool("d")])
    assert set(fake.tools) == {"c"}  # a refused set changes nothing
    assert await fake.clear_context() is False
    assert fake.provided == [["a", "b"], ["c"]]


async def test_the_agent_calls_like_the_browser_of_each_shape() -> None:
    b = AbortableModelContext()
    await b.register_tool(tool("t"))
    signal = CancelSignal()
    SEEN.clear()
    result = await b.agent.call("t", signal=signal)
    assert result.payload == 1 and not result.is_error
    assert SEEN[-1].signal is signal and SEEN[-1].request_user_interaction is None
    with pytest.raises(TypeError):
        await b.agent.call("t", request_user_interaction=None)
    with pytest.raises(KeyError):
        await b.agent.call("missing")

    a = IncrementalModelContext()
    await a.register_tool(tool("t"))
    await a.agent.call("t", {"k": 1})
    call = SEEN[-1]
    assert isinstance(call.client, FakeClient) and call.client.prompts == 1
    assert call.signal is None
    with pytest.raises(RuntimeError):  # the client is inactive once execute has resolved
        assert call.request_user_interaction is not None
        await call.request_user_interaction(ui_answer)
    await a.agent.call("t", {"k": 1}, request_user_interaction=None)
    assert SEEN[-1].request_user_interaction is None
    with pytest.raises(TypeError):
        await a.agent.call("t", signal=signal)
    listed = a.agent.tool("t")
    assert (listed.title, listed.description, listed.annotations) == ("T", "A tool", {"readOnlyHint": True})


async def test_foreign_tools_are_not_the_adapters() -> None:
    fake = IncrementalModelContext()
    fake.add_foreign_tool(tool("theirs"))
    assert fake.agent.names() == set() and fake.live_handles == 0
    assert "theirs" in fake.tools
