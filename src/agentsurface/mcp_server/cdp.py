"""The bridge's own Chrome DevTools Protocol connection, for its calls to the page: one hop from
this process to the browser, where Playwright's ``evaluate`` takes two (to its driver process,
then to the browser) and costs 2-3 ms more per call. Playwright stays attached for everything
else (the page's events, navigation, the polyfill).

Two ways in: the debugging pipe the bridge gave the Chromium it started
(``--remote-debugging-pipe``: commands on fd 3, replies on fd 4, each JSON message ending in a
NUL byte), or, with ``--cdp``, a WebSocket to the browser's DevTools endpoint.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import os
from typing import Any
from urllib.parse import urlsplit

from .._core.errors import AgentSurfaceError

# How long finding and opening a --cdp browser's WebSocket may take before the bridge does
# without it (Playwright's evaluate answers instead).
CONNECT_TIMEOUT_S = 5.0


class CdpError(AgentSurfaceError):
    """A command failed: the browser answered an error, a script threw, the page's session
    ended, or the connection closed."""


class CdpConnection:
    """``await CdpConnection.pipe(write_fd, read_fd)`` or ``await CdpConnection.websocket(url)``;
    ``await connection.send(method, params, session)`` answers the command's ``result``;
    ``close()`` closes it (a pipe's Chromium quits then)."""

    def __init__(self) -> None:
        self._ids = 0
        self._pending: dict[int, tuple[asyncio.Future[dict[str, Any]], str | None]] = {}
        self._write: Any = None  # sends one encoded message (set by the way in)
        self._closers: list[Any] = []  # what close() closes, in order
        self._closed: str | None = None  # why, once no command can be answered any more
        self.ended_sessions: set[str] = set()  # sessions the browser detached (a tab closed)

    # ------------------------------------------------------------------ ways in

    @classmethod
    async def pipe(cls, write_fd: int, read_fd: int) -> CdpConnection:
        """Over a debugging pipe; takes both ends (closing them on ``close()``)."""
        loop = asyncio.get_running_loop()
        connection = cls()
        writes = os.fdopen(write_fd, "wb", buffering=0)
        reads = os.fdopen(read_fd, "rb", buffering=0)
        transports: list[asyncio.BaseTransport] = []

        def close_pipe() -> None:
            # A transport closes its file only on a later turn of the loop, which may never come
            # (the caller may block waiting for Chromium to exit, or the loop may be ending): both
            # stop watching their fd now (abort: the writer drops anything unsent), and the files
            # are closed here; the transports' own close later finds them closed.
            with contextlib.suppress(RuntimeError):  # the loop has ended
                for transport in transports:
                    if isinstance(transport, asyncio.WriteTransport):
                        transport.abort()
                    else:
                        transport.close()
            for file in (writes, reads):
                with contextlib.suppress(OSError):
                    file.close()

        connection._closers.append(close_pipe)
        try:
            writer, _ = await loop.connect_write_pipe(asyncio.Protocol, writes)
            transports.append(writer)
            reader, _ = await loop.connect_read_pipe(lambda: _PipeReplies(connection), reads)
            transports.append(reader)
        except BaseException:
            connection.close()
            raise
        connection._write = lambda message: writer.write(message.encode() + b"\0")
        return connection

    @classmethod
    async def websocket(cls, endpoint: str) -> CdpConnection:
        """To a browser's DevTools endpoint: ``http://host:port`` (its WebSocket is looked up) or
        the ``ws://`` address itself. Raises ``CdpError`` when neither answers in time."""
        from websockets.asyncio.client import connect  # the [mcp] extra's

        try:
            address = await asyncio.wait_for(_websocket_address(endpoint), CONNECT_TIMEOUT_S)
            socket = await asyncio.wait_for(
                connect(address, max_size=None, compression=None), CONNECT_TIMEOUT_S
            )
        except (OSError, ValueError, KeyError, TimeoutError) as exc:
            raise CdpError(f"no DevTools WebSocket at {endpoint} ({exc})") from exc
        connection = cls()
        outgoing: asyncio.Queue[str] = asyncio.Queue()

        async def write_all() -> None:  # in order, one after another
            with contextlib.suppress(Exception):  # closed: the reader says so
                while True:
                    await socket.send(await outgoing.get())

        async def read_all() -> None:
            with contextlib.suppress(Exception):
                async for message in socket:
                    connection._received(message if isinstance(message, bytes) else message.encode())
            connection._lost("the browser closed its DevTools WebSocket")

        tasks = [asyncio.ensure_future(write_all()), asyncio.ensure_future(read_all())]

        def close_socket() -> None:
            for task in tasks:
                task.cancel()
            with contextlib.suppress(RuntimeError):  # the loop has ended
                socket.transport.abort()  # no closing handshake: the browser needs none

        connection._closers.append(close_socket)
        connection._write = outgoing.put_nowait
        return connection

    # ------------------------------------------------------------------ commands

    def send(
        self, method: str, params: dict[str, Any] | None = None, session: str | None = None
    ) -> asyncio.Future[dict[str, Any]]:
        """The command's ``result``; fails with ``CdpError``. Cancelling the future forgets the
        command (its reply is dropped when it comes)."""
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        if self._closed is not None or self._write is None:
            future.set_exception(CdpError(self._closed or "the DevTools connection is not open"))
            return future
        self._ids += 1
        message: dict[str, Any] = {"id": self._ids, "method": method, "params": params or {}}
        if session is not None:
            message["sessionId"] = session
        self._pending[self._ids] = (future, session)
        future.add_done_callback(functools.partial(self._forget, self._ids))
        self._write(json.dumps(message))
        return future

    def _forget(self, id_: int, _future: asyncio.Future[dict[str, Any]]) -> None:
        self._pending.pop(id_, None)  # answered, failed, or cancelled by its caller

    def _received(self, raw: bytes) -> None:
        try:
            message = json.loads(raw)
        except ValueError:
            return  # not ours to answer; nothing waits on it
        if not isinstance(message, dict):
            return
        if "id" not in message:
            if message.get("method") == "Target.detachedFromTarget":  # the page's session ended
                session = (message.get("params") or {}).get("sessionId")
                if isinstance(session, str):
                    self.ended_sessions.add(session)
                self._fail(lambda waiting: waiting == session, "the page's debugging session ended")
            return
        entry = self._pending.pop(message["id"], None)
        if entry is None or entry[0].done():
            return
        future = entry[0]
        error = message.get("error")
        if isinstance(error, dict):
            future.set_exception(CdpError(str(error.get("message") or error)))
        else:
            future.set_result(message.get("result") or {})

    def _fail(self, which: Any, reason: str) -> None:
        for id_, (future, session) in list(self._pending.items()):
            if which(session):
                self._pending.pop(id_, None)
                if not future.done():
                    future.set_exception(CdpError(reason))

    def _lost(self, reason: str) -> None:
        if self._closed is None:
            self._closed = reason
        self._fail(lambda _session: True, reason)

    @property
    def closed(self) -> bool:
        return self._closed is not None

    def close(self) -> None:
        """Close it now and fail what still waits. Twice is fine."""
        self._lost("the DevTools connection was closed")
        closers, self._closers = self._closers, []
        for close in closers:
            close()


class _PipeReplies(asyncio.Protocol):
    def __init__(self, connection: CdpConnection) -> None:
        self._connection = connection
        self._buffer = bytearray()

    def data_received(self, data: bytes) -> None:
        self._buffer += data
        while (end := self._buffer.find(b"\0")) >= 0:
            message, self._buffer = bytes(self._buffer[:end]), self._buffer[end + 1 :]
            self._connection._received(message)

    def connection_lost(self, exc: Exception | None) -> None:
        self._connection._lost("the browser closed its debugging pipe")


async def _websocket_address(endpoint: str) -> str:
    """The browser's WebSocket for ``endpoint`` (``/json/version`` of an http address)."""
    parts = urlsplit(endpoint)
    if parts.scheme in ("ws", "wss"):
        return endpoint
    version_url = endpoint.rstrip("/") + "/json/version"

    def read() -> str:
        import urllib.request  # here: the bridge imports this module before it starts Chromium

        with urllib.request.urlopen(version_url, timeout=CONNECT_TIMEOUT_S) as response:
            return str(json.loads(response.read())["webSocketDebuggerUrl"])

    return await asyncio.to_thread(read)


async def evaluate(connection: CdpConnection, session: str, function: str, arg: Any) -> Any:
    """``function(arg)`` in the page's main world, awaited, its value returned as JSON (as
    Playwright's ``evaluate``); ``CdpError`` when it throws or cannot run. ``arg`` is written
    into the expression as JSON (a JavaScript literal: ``json.dumps`` escapes every non-ASCII
    character, so nothing in it can end the literal)."""
    expression = f"({function})({json.dumps(arg)})"
    result = await connection.send(
        "Runtime.evaluate",
        {"expression": expression, "awaitPromise": True, "returnByValue": True},
        session,
    )
    details = result.get("exceptionDetails")
    if details is not None:
        thrown = details.get("exception") or {}
        raise CdpError(str(thrown.get("description") or details.get("text") or "the script threw"))
    return (result.get("result") or {}).get("value")
