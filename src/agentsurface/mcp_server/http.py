"""``agentsurface mcp URL --http PORT``: the bridge over Streamable HTTP on 127.0.0.1, behind
a bearer token made at start (a request without it gets 401: there is no unauthenticated
listener), with the SDK's DNS-rebinding protection on."""

from __future__ import annotations

import secrets
import socket
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TextIO

import anyio
import uvicorn
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from .bridge import Bridge

PATH = "/mcp"


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


def http_app(bridge: Bridge, port: int, token: str) -> Starlette:
    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[f"127.0.0.1:{port}", f"localhost:{port}"],
        allowed_origins=[f"http://127.0.0.1:{port}", f"http://localhost:{port}"],
    )
    manager = StreamableHTTPSessionManager(app=bridge.server, security_settings=security)

    @asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        async with manager.run():
            yield

    return Starlette(
        routes=[Route(PATH, endpoint=_Endpoint(manager), methods=["GET", "POST", "DELETE"])],
        middleware=[Middleware(BearerToken, token=token)],
        lifespan=lifespan,
    )


async def serve_http(bridge: Bridge, port: int, *, out: TextIO = sys.stdout) -> None:
    sock = bind(port)
    port = sock.getsockname()[1]
    token = secrets.token_urlsafe(32)
    server = uvicorn.Server(uvicorn.Config(http_app(bridge, port, token), log_level="warning"))
    try:
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(bridge.open_page, tasks.cancel_scope.cancel)
            tasks.start_soon(bridge.watch_changes)
            tasks.start_soon(_announce, server, port, token, out)
            await server.serve(sockets=[sock])
            tasks.cancel_scope.cancel()
    finally:
        with anyio.CancelScope(shield=True):
            await bridge.link.close()


async def _announce(server: uvicorn.Server, port: int, token: str, out: TextIO) -> None:
    """Once the listener accepts connections: where it is and the token to send."""
    while not server.started:
        await anyio.sleep(0.02)
    print(f"agentsurface mcp: Streamable HTTP at http://127.0.0.1:{port}{PATH}", file=out)
    print(f"agentsurface mcp: token {token}", file=out)
    print(f"agentsurface mcp: send the header  Authorization: Bearer {token}", file=out, flush=True)
