"""The official ``mcp`` SDK client, driven from sync tests: it runs on its own event loop in a
thread, so a test can hold it and sync Playwright (the person's clicks) at the same time.

``McpClient.stdio(command)`` starts a server process over stdio; ``McpClient.http(url, headers)``
connects over Streamable HTTP. Server notifications are recorded with the time they arrived.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import threading
import time
from collections.abc import AsyncIterator, Callable, Coroutine
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any, TextIO, TypeVar

import httpx
from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

T = TypeVar("T")
Streams = AbstractAsyncContextManager[tuple[Any, ...]]


class McpClient:
    def __init__(self, streams: Callable[[], Streams], *, timeout_s: float = 120) -> None:
        self.timeout_s = timeout_s
        self.notifications: list[tuple[float, str]] = []
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()
        self._streams = streams
        self._closing = asyncio.Event()  # bound to the loop on first use, in _hold
        self._ready: concurrent.futures.Future[ClientSession] = concurrent.futures.Future()
        self._opened = asyncio.run_coroutine_threadsafe(self._hold(), self._loop)
        self.session = self._ready.result(timeout=timeout_s)
        self.initialized: types.InitializeResult = self.run(self.session.initialize())

    @classmethod
    def stdio(cls, command: list[str], *, errlog: TextIO, **options: Any) -> McpClient:
        params = StdioServerParameters(command=command[0], args=command[1:])
        return cls(lambda: stdio_client(params, errlog=errlog), **options)

    @classmethod
    def http(cls, url: str, headers: dict[str, str], **options: Any) -> McpClient:
        @asynccontextmanager
        async def streams() -> AsyncIterator[tuple[Any, ...]]:
            async with (
                httpx.AsyncClient(headers=headers, timeout=httpx.Timeout(60, read=300)) as http,
                streamable_http_client(url, http_client=http) as (read, write, _),
            ):
                yield read, write

        return cls(streams, **options)

    async def _hold(self) -> None:
        """Enter and leave the transport and session in one task (anyio requires it)."""
        try:
            async with self._streams() as (read, write), ClientSession(
                read, write, message_handler=self._on_message
            ) as session:
                self._ready.set_result(session)
                await self._closing.wait()
        except BaseException as exc:
            if not self._ready.done():
                self._ready.set_exception(exc)
            raise

    async def _on_message(self, message: Any) -> None:
        if isinstance(message, types.ServerNotification):
            self.notifications.append((time.perf_counter(), message.root.method))

    # ------------------------------------------------------------------ sync API

    def run(self, coro: Coroutine[Any, Any, T], timeout_s: float | None = None) -> T:
        return self.start(coro).result(timeout=timeout_s or self.timeout_s)

    def start(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        return asyncio.run_coroutine_threadsafe(coro, self._loop)

    def list_tools(self) -> list[types.Tool]:
        return self.run(self.session.list_tools()).tools

    def tool_names(self) -> set[str]:
        return {tool.name for tool in self.list_tools()}

    def call(self, name: str, arguments: dict[str, Any] | None = None) -> types.CallToolResult:
        return self.run(self.session.call_tool(name, arguments or {}))

    def start_call(self, name: str, arguments: dict[str, Any]) -> tuple[int, concurrent.futures.Future[Any]]:
        """Start a call; its JSON-RPC request id (for a cancellation) and its future."""

        async def begin() -> tuple[int, asyncio.Task[types.CallToolResult]]:
            request_id = self.session._request_id  # the id the next request is sent with
            task = asyncio.ensure_future(self.session.call_tool(name, arguments))
            await asyncio.sleep(0)  # let it send before anything else does
            return request_id, task

        request_id, task = self.run(begin())
        future: concurrent.futures.Future[Any] = concurrent.futures.Future()

        def settle(done: asyncio.Task[types.CallToolResult]) -> None:
            if done.exception() is not None:
                future.set_exception(done.exception())  # type: ignore[arg-type]
            else:
                future.set_result(done.result())

        self._loop.call_soon_threadsafe(task.add_done_callback, settle)
        return request_id, future

    def cancel(self, request_id: int, reason: str = "the test cancels it") -> None:
        """MCP cancellation: notifications/cancelled for that request."""
        note = types.ClientNotification(
            types.CancelledNotification(params=types.CancelledNotificationParams(requestId=request_id, reason=reason))
        )
        self.run(self.session.send_notification(note))

    def wait_for(self, predicate: Callable[[], bool], what: str, timeout_s: float | None = None) -> None:
        limit = time.perf_counter() + (timeout_s or self.timeout_s)
        while not predicate():
            if time.perf_counter() > limit:
                raise AssertionError(f"timed out waiting for {what}")
            time.sleep(0.05)

    def wait_for_tools(self, present: set[str], absent: set[str] = frozenset(), timeout_s: float | None = None) -> set[str]:  # type: ignore[assignment]
        names: set[str] = set()

        def ok() -> bool:
            nonlocal names
            names = self.tool_names()
            return present <= names and not absent & names

        self.wait_for(ok, f"tools {sorted(present)} listed and {sorted(absent)} not", timeout_s)
        return names

    def list_changed_count(self) -> int:
        return sum(1 for _, method in self.notifications if method == "notifications/tools/list_changed")

    def close(self) -> None:
        self._loop.call_soon_threadsafe(self._closing.set)
        with contextlib.suppress(Exception):
            self._opened.result(timeout=30)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
