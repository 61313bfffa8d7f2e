"""Run an app on uvicorn with defaults that are safe on the open internet.

:func:`server_config` (a ``uvicorn.Config``) and :func:`run` differ from uvicorn's defaults in
what a hostile client could otherwise hold or forge:

- **read timeouts**: a connection that sends nothing, or half its headers, is closed after
  ``header_timeout`` seconds; a request whose declared body does not arrive within
  ``body_timeout`` is answered 408 (typed JSON) and closed; idle keep-alive connections close
  after ``keep_alive`` seconds;
- **a bound on connections**: past ``max_connections`` open connections per worker, new ones are
  answered 503 and closed at once (uvicorn's ``limit_concurrency`` bounds running requests);
- **forwarded headers are not trusted** unless you name your proxies (``trusted_proxies``):
  ``X-Forwarded-For`` from anyone else is ignored, so it cannot pick a rate-limit budget;
- no ``Server`` header.

::

    run("myapp.main:app", host="0.0.0.0", port=8000, workers=4, trusted_proxies=["10.0.0.2"])
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Sequence
from typing import Any

import uvicorn
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

log = logging.getLogger("agentsurface.server.running")

HEADER_TIMEOUT = 10.0
BODY_TIMEOUT = 30.0
KEEP_ALIVE = 5
MAX_CONNECTIONS = 1000
MAX_RUNNING_REQUESTS = 500


def _typed(status: int, code: str, message: str, **details: Any) -> bytes:
    body = json.dumps({"ok": False, "error": {"code": code, "message": message, "retry": "after-delay",
                                              "details": details}}).encode()
    reason = {408: "Request Timeout", 503: "Service Unavailable"}[status]
    return (
        f"HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\ncontent-length: {len(body)}\r\n"
        "connection: close\r\ncache-control: no-store\r\n"
        + ("retry-after: 1\r\n" if status == 503 else "")
        + "\r\n"
    ).encode() + body


TIMED_OUT = _typed(408, "EXECUTION_FAILED", "The request did not arrive in time; nothing was applied.",
                   reason="request-timeout", transient=True, retryAfterMs=1000)
TOO_MANY = _typed(503, "EXECUTION_FAILED", "The server is busy and applied nothing; retry shortly.",
                  reason="server-busy", transient=True, retryAfterMs=1000)


class GuardedHttpToolsProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol with read deadlines and a bound on open connections
    (uvicorn has no header or body read timeout of its own)."""

    _deadline: asyncio.TimerHandle | None = None

    def _arm(self, seconds: float, handler: Any) -> None:
        self._disarm()
        self._deadline = self.loop.call_later(seconds, handler)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        if len(self.connections) > int(getattr(self.config, "agentsurface_max_connections", MAX_CONNECTIONS)):
            log.warning("too many open connections: refusing a new one")
            transport.write(TOO_MANY)
            transport.close()
            return
        self._arm(float(getattr(self.config, "agentsurface_header_timeout", HEADER_TIMEOUT)), self._headers_late)

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._arm(float(getattr(self.config, "agentsurface_header_timeout", HEADER_TIMEOUT)), self._headers_late)

    def on_headers_complete(self) -> None:
        self._arm(float(getattr(self.config, "agentsurface_body_timeout", BODY_TIMEOUT)), self._body_late)
        super().on_headers_complete()

    def on_message_complete(self) -> None:
        self._disarm()
        super().on_message_complete()

    def _headers_late(self) -> None:
        self._deadline = None
        if not self.transport.is_closing():
            self.transport.close()

    def _body_late(self) -> None:
        self._deadline = None
        if self.transport.is_closing():
            return
        cycle = self.cycle
        if cycle is not None and not cycle.response_started:
            cycle.response_started = cycle.response_complete = True  # the app's answer is dropped
            self.transport.write(TIMED_OUT)
        self.transport.close()  # the app sees http.disconnect


def server_config(
    app: Any,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    workers: int | None = None,
    trusted_proxies: Sequence[str] | None = None,
    header_timeout: float = HEADER_TIMEOUT,
    body_timeout: float = BODY_TIMEOUT,
    keep_alive: int = KEEP_ALIVE,
    max_connections: int = MAX_CONNECTIONS,
    max_running_requests: int = MAX_RUNNING_REQUESTS,
    factory: bool = False,
    **uvicorn_options: Any,
) -> uvicorn.Config:
    """A ``uvicorn.Config`` with the safe defaults above; other options pass through to uvicorn.

    ``workers > 1`` needs ``app`` as an import string (``"pkg.module:app"``): each worker
    imports it and opens its own connection pool, so use a store all of them share
    (``postgresql://...``, or one SQLite file on one host).
    """
    proxies = list(trusted_proxies or [])
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        workers=workers,
        http=GuardedHttpToolsProtocol,
        proxy_headers=bool(proxies),
        forwarded_allow_ips=proxies or "",
        timeout_keep_alive=keep_alive,
        limit_concurrency=max_running_requests,
        server_header=False,
        factory=factory,
        **uvicorn_options,
    )
    config.agentsurface_header_timeout = header_timeout  # type: ignore[attr-defined]
    config.agentsurface_body_timeout = body_timeout  # type: ignore[attr-defined]
    config.agentsurface_max_connections = max_connections  # type: ignore[attr-defined]
    return config


def run(app: Any, **options: Any) -> None:
    """Serve ``app`` until interrupted, with :func:`server_config`'s safe defaults."""
    config = server_config(app, **options)
    server = uvicorn.Server(config)
    if config.workers > 1:
        if not isinstance(app, str):
            raise ValueError("several workers need the app as an import string: run('pkg.module:app', workers=4)")
        from uvicorn.supervisors import Multiprocess

        Multiprocess(config, sockets=[config.bind_socket()]).run()
    else:
        server.run()


__all__ = ["GuardedHttpToolsProtocol", "run", "server_config"]
