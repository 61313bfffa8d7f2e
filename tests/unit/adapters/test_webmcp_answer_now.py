"""A projected tool's ``execute.now``: what the page's browser layer calls so that a call which
never waits is answered inside the browser's call, with no coroutine or task. It answers the
JSON text of the content awaiting ``execute`` gives (compact, ASCII: what the browser parses); a
call that waits (an async handler, a confirmation) comes back as an awaitable that has started
nothing yet."""

from __future__ import annotations

import asyncio
import inspect
import json
from typing import Any

from agentsurface.adapters.model_context import ToolCall

from .conftest import Start
from .surface import App, turn

SELECT = "view_devices__table__selectRows"
WAIT = "view_devices__table__wait"
WIPE = "view_devices__table__wipeFilters"


def now_of(fake: Any, name: str) -> Any:
    execute = fake.agent.execute_of(name)
    assert callable(execute.now)
    return execute.now


async def test_a_call_that_never_waits_is_answered_now_as_awaiting_would(app: App, start: Start) -> None:
    app.mount_table()
    _adapter, fake = await start("abortable")
    answered = now_of(fake, SELECT)({"ids": ["d1"]}, ToolCall())
    assert isinstance(answered, str)
    awaited = await fake.agent.execute_of(SELECT)({"ids": ["d1"]}, ToolCall())
    assert json.loads(answered) == awaited == {"content": [{"type": "text", "text": '{"selected":["d1"]}'}]}
    assert answered == json.dumps(awaited, separators=(",", ":"))
    assert app.calls["selectRows"] == 2


async def test_the_text_answered_now_escapes_what_json_escapes(app: App, start: Start) -> None:
    app.mount_table()
    _adapter, fake = await start("abortable")
    # Quotes, a backslash, a control character, non-ASCII and a character outside the BMP.
    ids = ['q"uote', "back\\slash", "tab\t", "caf\u00e9", "\U0001f600"]
    answered = now_of(fake, SELECT)({"ids": ids}, ToolCall())
    awaited = await fake.agent.execute_of(SELECT)({"ids": ids}, ToolCall())
    assert isinstance(answered, str) and answered.isascii()
    assert answered == json.dumps(awaited, separators=(",", ":"), ensure_ascii=True)
    assert json.loads(json.loads(answered)["content"][0]["text"]) == {"selected": ids}


async def test_a_refused_call_is_answered_now(app: App, start: Start) -> None:
    app.mount_table()
    _adapter, fake = await start("abortable")
    answered = json.loads(now_of(fake, SELECT)({"ids": 3}, ToolCall()))
    assert answered["isError"] is True
    assert '"code":"INVALID_INPUT"' in answered["content"][0]["text"]
    assert app.calls["selectRows"] == 0


async def test_an_async_handler_comes_back_awaitable_and_starts_only_when_awaited(app: App, start: Start) -> None:
    app.mount_table()
    _adapter, fake = await start("abortable")
    later = now_of(fake, WAIT)({}, ToolCall())
    assert inspect.isawaitable(later) and not isinstance(later, str)
    await turn()
    assert app.calls["wait"] == 0
    running = asyncio.ensure_future(later)
    await turn()
    assert app.calls["wait"] == 1
    app.release_wait.set()
    answered = await running
    assert answered == {"content": [{"type": "text", "text": '"released"'}]}


async def test_a_call_that_needs_confirmation_comes_back_awaitable(app: App, start: Start) -> None:
    app.mount_table()
    _adapter, fake = await start("abortable")
    later = now_of(fake, WIPE)({}, ToolCall())
    assert not isinstance(later, str)
    running = asyncio.ensure_future(later)
    await turn()
    (pending,) = app.registry.confirmations.pending()
    app.registry.confirmations.resolve(pending.confirmation_id, approved=True)
    await turn()
    assert await running == {"content": [{"type": "text", "text": '{"wiped":true}'}]}
    assert app.calls["wipeFilters"] == 1


async def test_a_tool_kept_from_an_old_listing_is_answered_now(app: App, start: Start) -> None:
    table = app.mount_table()
    adapter, fake = await start("abortable")
    stale = now_of(fake, SELECT)
    table.close()
    await adapter.settled()
    answered = json.loads(stale({"ids": ["d1"]}, ToolCall()))
    assert '"code":"CAPABILITY_NOT_FOUND"' in answered["content"][0]["text"]
