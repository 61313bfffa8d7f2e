"""The relay's WebSocket listener on 127.0.0.1, and each connection's handshake.

Refused at the HTTP upgrade (403): a request whose ``Host`` is not this loopback address (DNS
rebinding) or that carries no usable ``Origin`` (not a page: browsers always send it). Every
other refusal happens inside the socket (a ``refused`` frame, then close 1008), so a page learns
why and the browser logs no error for it. Nothing is listed for a connection until it is
welcomed: by a proof made with its origin's secret, by the pairing code, or because the person
named its origin with ``--allow-origin``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from collections import deque
from http import HTTPStatus
from typing import Any, TextIO
from urllib.parse import urlsplit

from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.datastructures import Headers
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response

from ..._core.base_error import AgentSurfaceError
from ..._core.records import record
from ...adapters.relay_protocol import (
    MAX_FRAME_BYTES,
    PROTOCOL,
    is_nonce,
    new_nonce,
    normalize_code,
    proof,
    proof_matches,
)
from .pairing import Pairing, PairingDesk, PairingStore
from .sources import Source, SourceRegistry

HANDSHAKE_TIMEOUT_S = 10.0
POLICY_VIOLATION = 1008


@record(frozen=False)
class RelayGate:
    """Who may connect: the paired origins (store), ``--allow-origin`` ones, pairings under way."""

    store: PairingStore
    desk: PairingDesk
    allowed: frozenset[str]
    log: TextIO = sys.stderr

    def say(self, text: str) -> None:
        print(f"agentsurface relay: {text}", file=self.log, flush=True)


def single(headers: Headers, name: str) -> str | None:
    """A header given exactly once (a repeated Host or Origin is an attack, not a request)."""
    values = headers.get_all(name)
    return values[0] if len(values) == 1 else None


def browser_origin(headers: Headers) -> str | None:
    """The handshake's ``Origin`` as ``scheme://host[:port]``, or None if it is not one."""
    value = single(headers, "Origin")
    if not value:
        return None
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.netloc or parts.path or parts.query:
        return None
    return f"{parts.scheme}://{parts.netloc}".lower()


def _refuse_http(status: HTTPStatus, text: str) -> Response:
    body = text.encode()
    headers = Headers([("Content-Type", "text/plain; charset=utf-8"), ("Content-Length", str(len(body)))])
    return Response(status.value, status.phrase, headers, body)


_NOT_NOW = {
    "rate-limited": "too many pairing requests; try again in a minute",
    "busy": "a pairing of {origin} is already under way",
    "blocked": "too many failed pairings; restart the relay to pair again",
}


class _Refused(AgentSurfaceError):
    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message


class RelayListener:
    """``await listener.start(port)``; every welcomed connection becomes a source."""

    def __init__(self, gate: RelayGate, sources: SourceRegistry) -> None:
        self.gate = gate
        self.sources = sources
        self.port = 0
        self._server: Server | None = None
        # (origin, reason) of the latest refusals, for tests: bounded, a hostile client may loop.
        self.refusals: deque[tuple[str | None, str]] = deque(maxlen=100)

    async def start(self, port: int) -> None:
        self._server = await serve(
            self._connection,
            "127.0.0.1",
            port,
            process_request=self._check_upgrade,
            max_size=MAX_FRAME_BYTES,
            compression=None,
        )
        self.port = next(iter(self._server.sockets)).getsockname()[1]

    async def aclose(self) -> None:
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 5)
            self._server = None

    # ------------------------------------------------------------------ the upgrade

    def _hosts(self) -> set[str]:
        return {f"127.0.0.1:{self.port}", f"localhost:{self.port}"}

    def _check_upgrade(self, connection: ServerConnection, request: Request) -> Response | None:
        host = (single(request.headers, "Host") or "").lower()
        if host not in self._hosts():
            self.refusals.append((None, "host"))
            return _refuse_http(HTTPStatus.FORBIDDEN, "this relay answers only at its loopback address\n")
        if browser_origin(request.headers) is None:
            self.refusals.append((None, "origin"))
            return _refuse_http(HTTPStatus.FORBIDDEN, "only web pages connect to this relay (no Origin)\n")
        return None

    # ------------------------------------------------------------------ one connection

    async def _connection(self, socket: ServerConnection) -> None:
        request = socket.request
        assert request is not None  # process_request passed it
        origin = browser_origin(request.headers)
        relay = (single(request.headers, "Host") or "").lower()
        assert origin is not None
        try:
            welcomed = await self._handshake(socket, origin, relay)
        except _Refused as refused:
            self.refusals.append((origin, refused.reason))
            self.gate.say(f"refused {origin}: {refused.message}")
            with contextlib.suppress(ConnectionClosed):
                await socket.send(
                    json.dumps({"type": "refused", "reason": refused.reason, "message": refused.message})
                )
                await socket.close(POLICY_VIOLATION, refused.reason)
            return
        except (ConnectionClosed, TimeoutError):
            return
        if welcomed:
            await self._serve(socket, origin)

    async def _receive(self, socket: ServerConnection, timeout: float) -> dict[str, Any]:
        raw = await asyncio.wait_for(socket.recv(), timeout)
        try:
            message = json.loads(raw)
        except ValueError:
            raise _Refused("protocol", "a frame that is not JSON") from None
        if not isinstance(message, dict):
            raise _Refused("protocol", "a frame that is not a JSON object")
        return message

    async def _handshake(self, socket: ServerConnection, origin: str, relay: str) -> bool:
        """True once welcomed; False when the connection ended after a pairing (the page
        connects again with its new secret)."""
        relay_nonce = new_nonce()
        await socket.send(
            json.dumps({"type": "hello", "protocol": PROTOCOL, "relay": relay, "nonce": relay_nonce})
        )
        first = await self._receive(socket, HANDSHAKE_TIMEOUT_S)
        kind = first.get("type")
        if kind == "auth":
            secret = self.gate.store.secret(origin)
            if secret is None:
                raise _Refused("not-paired", f"{origin} is not paired with this relay")
            page_nonce = first.get("nonce")
            if not is_nonce(page_nonce):
                raise _Refused("protocol", "auth without a nonce")
            assert isinstance(page_nonce, str)
            expected = proof(secret, "page", origin, relay, relay_nonce, page_nonce)
            if not proof_matches(expected, first.get("proof")):
                raise _Refused("bad-proof", f"the proof does not match {origin}'s pairing")
            answer = proof(secret, "relay", origin, relay, relay_nonce, page_nonce)
            await self._welcome(socket, answer)
            return True
        if kind == "pair":
            if origin in self.gate.allowed:
                await self._welcome(socket, None)
                return True
            await self._pair(socket, origin, relay)
            return False
        raise _Refused("protocol", f"expected auth or pair, not {kind!r}")

    async def _welcome(self, socket: ServerConnection, answer: str | None) -> None:
        # The tab becomes a source (its tools listed) once it sends its listing.
        await socket.send(json.dumps({"type": "welcome", "proof": answer}))

    async def _pair(self, socket: ServerConnection, origin: str, relay: str) -> None:
        started = self.gate.desk.start(origin)
        if isinstance(started, str):
            raise _Refused(started, _NOT_NOW[started].format(origin=origin))
        pairing: Pairing = started
        code = f"{pairing.code[:3]} {pairing.code[3:]}"
        self.gate.say(f"{origin} asks to pair with this relay ({relay}). Its pairing code: {code}")
        self.gate.say(
            "type it in the page's dialog only if you opened that page and want this agent to use it"
        )
        try:
            await socket.send(json.dumps({"type": "pairing", "relay": relay, "attempts": pairing.attempts}))
            while True:
                message = await self._receive(socket, 300)
                kind = message.get("type")
                if kind == "pair-cancel":
                    raise _Refused("declined", "the person declined the pairing in the page")
                if kind != "pair-code" or not isinstance(message.get("code"), str):
                    raise _Refused("protocol", f"expected pair-code, not {kind!r}")
                verdict = self.gate.desk.check(pairing, normalize_code(message["code"]))
                if verdict is None:
                    raise _Refused("pairing-failed", "wrong pairing code too many times")
                if verdict is False:
                    await socket.send(json.dumps({"type": "pair-retry", "attempts": pairing.attempts}))
                    continue
                secret = self.gate.store.pair(origin)
                self.gate.say(f"paired {origin} (saved in {self.gate.store.path})")
                await socket.send(json.dumps({"type": "paired", "secret": secret}))
                await socket.close(1000, "paired")
                return
        finally:
            self.gate.desk.end(pairing)

    async def _serve(self, socket: ServerConnection, origin: str) -> None:
        source: Source | None = None

        async def send(text: str) -> None:
            await socket.send(text)

        try:
            async for raw in socket:
                message = json.loads(raw) if isinstance(raw, str) else None
                if not isinstance(message, dict):
                    break
                kind = message.get("type")
                if kind == "tools":
                    if source is None:
                        source = self.sources.add(origin, send)
                        self.gate.say(f"{origin} connected as {source.id}")
                    problem = self.sources.set_tools(source, message.get("tools"))
                    if problem is not None:
                        self.gate.say(f"{source.id} ({origin}): listing refused: {problem}")
                elif kind == "result" and source is not None:
                    self.sources.settle(source, message)
        except (ConnectionClosed, ValueError):
            pass
        finally:
            if source is not None:
                self.sources.remove(source, f"the tab of {origin} was closed, reloaded or disconnected")
                self.gate.say(f"{source.id} ({origin}) left")
            with contextlib.suppress(Exception):
                await socket.close()
