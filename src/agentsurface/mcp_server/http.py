"""``agentsurface mcp URL --http PORT``: the bridge over Streamable HTTP on 127.0.0.1, behind
a bearer token made at start (a request without it gets 401: there is no unauthenticated
listener), with the SDK's DNS-rebinding protection on.

The listener runs on the procedure server's uvicorn configuration
(:func:`agentsurface.server.server_config`): a connection that sends nothing or half its headers
is closed after ``header_timeout``, a body that does not arrive within ``body_timeout`` gets a
typed 408, and past ``max_connections`` a new connection gets a typed 503. A POST's body is read
within ``max_body_bytes`` and parsed strictly (UTF-8, JSON, depth, no duplicate keys) before the
SDK sees it: a malformed one gets a 4xx JSON-RPC error, never a 500. At most ``max_sessions`` MCP
sessions are open at once (each holds its server task and streams); past that an ``initialize``
gets 503 until one ends or expires (``session_idle_seconds`` without a request in flight).

Streams are resumable: each SSE stream opens with a priming event (an id, and ``retry``: how
long a client waits before it reconnects), every event has an id, and a client that reconnects
with ``Last-Event-ID`` gets what it missed from a bounded event store (:mod:`.events`).
"""

from __future__ import annotations

import json
import logging
import secrets
import socket
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import field
from typing import Any, TextIO

import anyio
import uvicorn
from mcp import types
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from pydantic import ValidationError
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import ClientDisconnect, Request
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .._core.records import record
from ..server.body import check_content_type, parse_json, read_limited, too_large
from ..server.config import ServerLimits
from ..server.errors import Refusal, invalid_input
from ..server.running import BODY_TIMEOUT, HEADER_TIMEOUT, server_config
from .bridge import Bridge
from .events import BoundedEventStore, EventLimits

PATH = "/mcp"
log = logging.getLogger("agentsurface.mcp_server.http")


@record
class ListenerLimits:
    """What one client of the HTTP listener may hold: read deadlines and open connections (as
    the procedure server's :func:`~agentsurface.server.server_config`), the size and depth of a
    body (as its :class:`~agentsurface.server.ServerLimits`), and open MCP sessions.

    A session costs about 70 KiB while it is open (its server task, streams and transport:
    ``tests/integration/mcp_server/test_http_listener.py`` measures it), so ``max_sessions`` bounds the
    listener's sessions at a few megabytes; the SDK's own cap, 10,000, would be about 700 MB.
    """

    header_timeout: float = HEADER_TIMEOUT
    body_timeout: float = BODY_TIMEOUT
    max_connections: int = 100
    max_body_bytes: int = ServerLimits().max_body_bytes
    max_depth: int = ServerLimits().max_depth
    max_sessions: int = 100
    session_idle_seconds: float = 30 * 60.0
    # Resumable streams: the SSE retry a client is told, and the event store's bounds.
    retry_ms: int = 1000
    events: EventLimits = field(default_factory=EventLimits)


class BearerToken:
    """ASGI middleware: only requests carrying ``Authorization: Bearer <token>`` get through."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self._expected = f"Bearer {token}".encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            given = dict(scope.get("headers") or []).get(b"authorization", b"")
            if not secrets.compare_digest(given, self._expected):
                await _unauthorized(send)
                return
        await self.app(scope, receive, send)


async def _unauthorized(send: Send) -> None:
    body = b'{"error":"unauthorized","message":"send the token agentsurface mcp printed: Authorization: Bearer <token>"}'
    await send(
        {
            "type": "http.response.start",
            "status": 401,
            "headers": [
                (b"content-type", b"application/json"),
                (b"www-authenticate", b'Bearer realm="agentsurface"'),
                (b"content-length", str(len(body)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


class _SessionManager(StreamableHTTPSessionManager):
    """The SDK's manager, with every stream of a session primed when its client opened it on
    2025-11-25 or later (the first version whose clients parse a priming event), whatever
    version a later request's header names: the SDK decides per request, and a client of that
    version (the official conformance suite's, for one) may send an older header."""

    def _admit_session(self, requestor: Any) -> Any:
        transport = super()._admit_session(requestor)
        mint = getattr(transport, "_mint_priming_event", None)
        if mint is None:
            return transport  # another SDK: its own per-request rule applies
        opened: list[str] = []

        async def by_session(stream_id: str, protocol_version: str) -> Any:
            if not opened:  # the session's opening request: initialize, with its client's version
                opened.append(protocol_version)
            return await mint(stream_id, max(protocol_version, opened[0]))

        setattr(transport, "_mint_priming_event", by_session)  # noqa: B010 (a method of this instance)
        return transport


class _Endpoint:
    """The MCP endpoint as a raw ASGI app (a class, so Starlette's Route passes scope/receive/send)."""

    def __init__(self, manager: StreamableHTTPSessionManager) -> None:
        self.manager = manager

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.manager.handle_request(scope, receive, send)


def bind(port: int) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    return sock


class StrictBody:
    """ASGI middleware: a POST's body is read within the limit and parsed as strict JSON and as
    one JSON-RPC message before the SDK sees it (the SDK answers bytes that are not UTF-8, or
    JSON nested past Python's recursion limit, with a 500, and repeats a malformed message back
    in its error). A refused body gets a 4xx JSON-RPC error whose ``data`` is the typed
    ``INVALID_INPUT``; a client gone before its body arrived is one log line."""

    def __init__(self, app: ASGIApp, limits: ListenerLimits) -> None:
        self.app = app
        self.limits = limits

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("method") != "POST":
            await self.app(scope, receive, send)
            return
        request = Request(scope, receive)
        try:
            raw = await self._read(request)
            value = parse_json(raw, max_depth=self.limits.max_depth)
        except Refusal as refusal:
            code = types.INVALID_REQUEST if refusal.status in (413, 415) else types.PARSE_ERROR
            await _rpc_error(send, refusal.status, code, refusal.error.message, refusal.error.to_json())
            return
        except ClientDisconnect:
            log.warning(
                "a request's body did not arrive in full (the client disconnected, or missed the "
                "body deadline); nothing was done"
            )
            return
        try:
            types.JSONRPCMessage.model_validate(value)
        except ValidationError:  # its text would repeat the client's keys and values: not sent
            error = invalid_input(
                "The body is not a JSON-RPC 2.0 message (jsonrpc, and method or result or error).",
                [("/", "must be one JSON-RPC 2.0 request, notification or response")],
            )
            await _rpc_error(send, 400, types.INVALID_REQUEST, error.message, error.to_json())
            return
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": raw, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)

    async def _read(self, request: Request) -> bytes:
        limit = self.limits.max_body_bytes
        declared = request.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > limit:
            raise too_large(limit)
        check_content_type(request.headers.get("content-type"))
        return await read_limited(request.stream(), limit)


async def _rpc_error(send: Send, status: int, code: int, message: str, data: Any) -> None:
    """A JSON-RPC error with no usable request id (the SDK's convention: ``"server-error"``)."""
    error = {
        "jsonrpc": "2.0",
        "id": "server-error",
        "error": {"code": code, "message": message, "data": data},
    }
    body = json.dumps(error).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"cache-control", b"no-store"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


def http_app(bridge: Bridge, port: int, token: str, limits: ListenerLimits | None = None) -> Starlette:
    limits = limits or ListenerLimits()
    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[f"127.0.0.1:{port}", f"localhost:{port}"],
        allowed_origins=[f"http://127.0.0.1:{port}", f"http://localhost:{port}"],
    )
    manager = _SessionManager(
        app=bridge.server,
        security_settings=security,
        max_sessions=limits.max_sessions,
        max_request_body_size=limits.max_body_bytes,
        session_idle_timeout=limits.session_idle_seconds,
        event_store=BoundedEventStore(limits.events),
        retry_interval=limits.retry_ms,
    )

    @asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        async with manager.run():
            yield

    return Starlette(
        routes=[Route(PATH, endpoint=_Endpoint(manager), methods=["GET", "POST", "DELETE"])],
        middleware=[Middleware(BearerToken, token=token), Middleware(StrictBody, limits=limits)],
        lifespan=lifespan,
    )


def listener(app: ASGIApp, port: int, limits: ListenerLimits) -> uvicorn.Server:
    """uvicorn for ``app`` on the procedure server's safe configuration, with ``limits``."""
    config = server_config(
        app,
        host="127.0.0.1",
        port=port,
        header_timeout=limits.header_timeout,
        body_timeout=limits.body_timeout,
        max_connections=limits.max_connections,
        log_level="warning",
        timeout_graceful_shutdown=2,  # an open event stream does not hold Ctrl-C up
    )
    return uvicorn.Server(config)


async def serve_http(
    bridge: Bridge, port: int, *, out: TextIO = sys.stdout, limits: ListenerLimits | None = None
) -> None:
    limits = limits or ListenerLimits()
    sock = bind(port)
    port = sock.getsockname()[1]
    token = secrets.token_urlsafe(32)
    server = listener(http_app(bridge, port, token, limits), port, limits)

    def stop() -> None:  # uvicorn shuts down in order (a cancelled lifespan logs a traceback)
        server.should_exit = True

    try:
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(bridge.open_page, stop)
            tasks.start_soon(bridge.watch_changes)
            tasks.start_soon(_announce, server, port, token, out)
            await server.serve(sockets=[sock])
            tasks.cancel_scope.cancel()
    finally:
        with anyio.CancelScope(shield=True):
            await bridge.link.aclose()


async def _announce(server: uvicorn.Server, port: int, token: str, out: TextIO) -> None:
    """Once the listener accepts connections: where it is and the token to send."""
    while not server.started:
        await anyio.sleep(0.02)
    print(f"agentsurface mcp: Streamable HTTP at http://127.0.0.1:{port}{PATH}", file=out)
    print(f"agentsurface mcp: token {token}", file=out)
    print(f"agentsurface mcp: send the header  Authorization: Bearer {token}", file=out, flush=True)
