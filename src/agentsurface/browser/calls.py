"""One browser call into a tool: the JS ``execute`` the browser holds, and the Python entry it
calls, with JSON text (not proxied objects) crossing the boundary both ways.

Per call, nothing is proxied: the JS side stringifies the input, listens for its abort signal
with a JS closure and tells Python by call id, and parses the JSON text Python answers. The
call runs inside the browser's call: one that never waits (most view calls) answers
synchronously, with no coroutine, task or event-loop hop; one that waits goes on as a task,
started eagerly, and its promise settles when it ends. Except while the loader
is still loading agentsurface's deferred dependencies: a call may need one (jsonschema for an
input the compiled check cannot prove valid), so it runs as a task of the loop once they are in
(calls arriving together would otherwise import the same package from several stacks at once).
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Awaitable, Callable, Coroutine
from json.scanner import make_scanner
from typing import Any

from pyodide.code import run_js
from pyodide.ffi import jsnull

from .._compat import running_loop_or_none, set_running_loop
from .._core.contracts.context import CancelSignal
from .._core.jsonvalue import plain_encoder
from ..adapters.model_context import ToolCall, WebMCPTool
from .convert import js_to_json
from .packages import dependencies_pending, dependencies_ready
from .proxies import destroy, make_proxy

# ``entry(inputJson, callId, interactive, aborted)`` answers JSON text now, or ``undefined`` when
# the call waits: then ``entry.settle(callId, resolve, reject)`` hands it the promise's callbacks
# (so a call answered at once makes no promise and passes Python no function); and
# ``entry.cancel(callId)`` on abort. A call answered at once returns its value, not a promise,
# as a plain JS tool does (the browser then has no promise to wait a task for); a failure is
# always a rejected promise, never a throw. The browser's client object (shape A) stays in JS
# until Python asks for it (``execute.clientOf(callId)``): it is needed only for in-page UI, and
# handing a JS object to Python on every call costs a proxy each time.
_WRAP_SOURCE = """(entry) => {
  let seq = 0;
  const clients = new Map();  // a waiting call's client, read by Python only for in-page UI
  function execute(input, extra) {
    const id = ++seq;
    const signal = extra != null ? extra.signal : undefined;
    const interactive = extra != null && typeof extra.requestUserInteraction === "function";
    const listens = signal != null && typeof signal.addEventListener === "function";
    if (interactive) clients.set(id, extra);
    let text;
    try {
      const json = input == null ? undefined : JSON.stringify(input);
      text = entry(json, id, interactive, listens && signal.aborted === true);
    } catch (failure) {
      clients.delete(id);
      return Promise.reject(failure);
    }
    if (typeof text === "string") {
      clients.delete(id);
      try {
        return JSON.parse(text);
      } catch (failure) {
        return Promise.reject(failure);
      }
    }
    // The call waits: only now can an abort reach it (nothing runs while Python answers).
    const onAbort = () => entry.cancel(id);
    if (listens) {
      if (signal.aborted) entry.cancel(id);
      else signal.addEventListener("abort", onAbort, { once: true });
    }
    return new Promise((resolve, reject) => entry.settle(id, resolve, reject)).then(JSON.parse).finally(() => {
      clients.delete(id);
      if (listens) signal.removeEventListener("abort", onAbort);
    });
  }
  execute.clientOf = (id) => clients.get(id);
  return execute;
}"""

_wrap: Any = None
# The C scanner json.loads ends up in (typeshed types its argument oddly).
_scan: Callable[[str, int], tuple[Any, int]] = make_scanner(json.JSONDecoder())  # type: ignore[arg-type]


def _loads(text: str) -> Any:
    """``json.loads`` of ``JSON.stringify``'s text, without the wrapper's checks on the way."""
    try:
        value, end = _scan(text, 0)
    except StopIteration:
        return json.loads(text)  # raises the usual JSONDecodeError
    return value if end == len(text) else json.loads(text)

_dumps = plain_encoder(ensure_ascii=True)  # tool content: plain JSON, built by the adapter


def _wrapper() -> Any:
    global _wrap
    if _wrap is None:
        _wrap = run_js(_WRAP_SOURCE)
    return _wrap


class ToolEntry:
    """The Python side of one registered tool's ``execute``: owns its proxy and its calls."""

    def __init__(self, tool: WebMCPTool) -> None:
        self._tool = tool
        self._calls: dict[int, CancelSignal] = {}
        self._waiting: dict[int, asyncio.Task[str]] = {}  # calls not answered at once, by id
        # The adapter's execute can answer a call that never waits without a coroutine.
        # (Its JSON text then, made without building the content as a dict first.)
        self._now: Callable[[Any, ToolCall], str | Awaitable[dict[str, Any]]] | None = getattr(
            tool.execute, "now", None
        )
        self._proxy: Any = make_proxy(self)
        self.execute: Any = _wrapper()(self._proxy)  # the JS function the browser calls

    def __call__(self, input_json: Any, call_id: int, interactive: bool, aborted: bool) -> str | None:
        tool_input = None if input_json is None or input_json is jsnull else _loads(input_json)
        cancel = CancelSignal()
        if aborted:
            cancel.abort("cancelled")
        call = ToolCall(signal=cancel)
        if dependencies_pending():
            if interactive is True:
                call.request_user_interaction = _user_interaction(self.execute, call_id, call)
            task = _start(self._run_when_ready(call_id, tool_input, call), eager=False)
        else:
            _claim_loop()
            outcome = (self._now or self._tool.execute)(tool_input, call)  # a failure: JS rejects
            if isinstance(outcome, str):  # answered without waiting: no coroutine, task or hop
                return outcome
            if isinstance(outcome, dict):  # an execute of another kind that answered at once
                return _dumps(outcome)
            # Only a call that waits can ask the user (a confirmation): what ``outcome`` runs
            # has not started yet, so it finds the client's UI here when it needs it.
            if interactive is True:
                call.request_user_interaction = _user_interaction(self.execute, call_id, call)
            task = _start(self._answer_later(call_id, outcome), eager=True)
            if task.done():
                return _answer(task)  # settled without waiting: no promise hop back to JS
        # Only a waiting call can be aborted (JS listens for its signal once this returns).
        self._calls[call_id] = cancel
        self._waiting[call_id] = task
        return None

    def settle(self, call_id: int, resolve: Any, reject: Any) -> None:
        """The promise callbacks of a call that did not answer at once."""
        task = self._waiting.pop(call_id, None)
        if task is None:
            reject("agentsurface: no such call waiting")
        elif task.done():
            _settle(task, resolve, reject)
        else:
            task.add_done_callback(lambda done: _settle(done, resolve, reject))

    def cancel(self, call_id: int) -> None:
        signal = self._calls.get(call_id)
        if signal is not None:
            signal.abort("cancelled")

    async def _answer_later(self, call_id: int, outcome: Awaitable[dict[str, Any]]) -> str:
        try:
            return _dumps(await outcome)
        finally:
            if self._calls:
                self._calls.pop(call_id, None)

    async def _run_when_ready(self, call_id: int, tool_input: Any, call: ToolCall) -> str:
        await dependencies_ready()
        return await self._answer_later(call_id, self._tool.execute(tool_input, call))

    def release(self) -> None:
        destroy(self._proxy)
        self._proxy = None
        self.execute = None


def _claim_loop() -> asyncio.AbstractEventLoop:
    """The browser called us directly, not through one of the loop's handles: claim the running
    loop for this thread state as the WebLoop does before each handle, so what runs now (and a
    task's steps) sees the loop it belongs to."""
    loop = running_loop_or_none()  # still set from the last call, most often
    if loop is None:
        loop = asyncio.get_event_loop()
        set_running_loop(loop)
    return loop


def _start(coroutine: Coroutine[Any, Any, str], eager: bool) -> asyncio.Task[str]:
    """Run the coroutine now, inside the browser's call, up to its first real wait (``eager``),
    or as a task of the loop."""
    if not eager or sys.version_info < (3, 12):  # no eager tasks (Pyodide runs 3.14)
        return asyncio.get_event_loop().create_task(coroutine)
    return asyncio.Task(coroutine, loop=_claim_loop(), eager_start=True)


def _answer(task: asyncio.Task[str]) -> str:
    return task.result()  # an exception propagates to JS as a rejection of the call


def _settle(task: asyncio.Task[str], resolve: Any, reject: Any) -> None:
    if task.cancelled():
        reject("the call was cancelled")
        return
    failure = task.exception()
    if failure is not None:
        reject(str(failure))
    else:
        resolve(task.result())


def _user_interaction(execute: Any, call_id: int, call: ToolCall) -> Callable[[Any], Coroutine[Any, Any, Any]]:
    """Shape A's ``client.requestUserInteraction``, callable with a Python callback. The client
    is fetched from JS when first asked for, and kept on the call (``call.client``) for the
    host's confirm hook, which runs inside it."""

    async def request(ui: Any) -> Any:
        client = call.client
        if client is None:
            client = call.client = execute.clientOf(call_id)
        callback = make_proxy(ui)  # JS calls it and gets a Promise for the coroutine
        try:
            return js_to_json(await client.requestUserInteraction(callback))
        finally:
            destroy(callback)

    return request
