"""The page's WebSocket to the relay: connect, run one ``RelayClientSession`` per connection,
and come back with backoff while the relay is absent or restarting.

Quiet by design, except for what only the browser can say: Chromium logs each failed WebSocket
connection to the console ("WebSocket connection to 'ws://127.0.0.1:PORT/' failed"), and no page
can silence it. The backoff (0.5 s doubling to 30 s) keeps that to a line now and then while no
relay runs; refusals are clean closes, which the browser does not log.
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
from typing import Any, Literal

import js
from pyodide.ffi import jsnull

from ..adapters.relay_context import RelayClientSession, RelayModelContext
from .proxies import destroy, make_proxy
from .relay_dialog import ask_pairing_code

log = logging.getLogger("agentsurface.relay")

FIRST_DELAY_S = 0.5
MAX_DELAY_S = 30.0
OPEN = 1

Status = Literal["connecting", "welcomed", "waiting", "stopped"]


class BrowserRelayHost:
    """The browser's side of one relay: its address, the origin's secret in localStorage, the
    socket of the current connection and the pairing dialog."""

    def __init__(self, relay: str) -> None:
        self.relay = relay
        self.origin = str(js.location.origin)
        self._key = f"agentsurface-relay-secret:{relay}"
        self.socket: Any = None

    def load_secret(self) -> str | None:
        value = js.localStorage.getItem(self._key)
        return None if value is None or value is jsnull else str(value)

    def save_secret(self, secret: str) -> None:
        js.localStorage.setItem(self._key, secret)

    async def ask_code(self, attempts: int) -> str | None:
        return await ask_pairing_code(self.relay, self.origin, attempts)

    def send(self, text: str) -> None:
        socket = self.socket
        if socket is not None and socket.readyState == OPEN:
            socket.send(text)


class RelaySocket:
    """Keeps one page connected to the relay at ``relay`` until ``stop()``."""

    def __init__(self, context: RelayModelContext, relay: str) -> None:
        self.context = context
        self.host = BrowserRelayHost(relay)
        self.status: Status = "connecting"
        self.connections = 0  # sockets opened (the relay answered)
        self.failures = 0  # attempts the relay never answered
        self.welcomes = 0
        self.first_welcome_ms: float | None = None  # performance.now() at the first welcome
        self.source: str | None = None
        self.refusal: str | None = None
        self._stopped = False
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.ensure_future(self._run())

    def stop(self) -> None:
        self._stopped = True
        if self.host.socket is not None:
            self.host.socket.close(1000, "the page stopped")
        if self._task is not None:
            self._task.cancel()
        self.status = "stopped"

    async def _run(self) -> None:
        delay, force_pairing = FIRST_DELAY_S, False
        while not self._stopped:
            self.status = "connecting"
            session = RelayClientSession(self.host, self.context, force_pairing=force_pairing)
            welcomed = await self._connect_once(session)
            self.refusal = session.refusal
            if session.next == "stop":
                log.warning("agentsurface relay: not connecting again: %s", session.refusal)
                self.status = "stopped"
                return
            force_pairing = session.force_pairing
            if session.next == "reconnect" or welcomed:
                delay = FIRST_DELAY_S
            if session.next == "reconnect":
                continue
            self.status = "waiting"
            await asyncio.sleep(delay * (1 + random.random() / 5))
            delay = min(delay * 2, MAX_DELAY_S)

    @staticmethod
    def _message(session: RelayClientSession, events: asyncio.Queue[tuple[str, str]], data: str) -> None:
        # Once welcomed, a call (or cancel) with nothing queued before it is handled at once: a
        # call that never waits is answered in this same turn, with no hop through the queue.
        if session.state == "welcomed" and events.empty():
            try:
                message = json.loads(data)
            except ValueError:
                message = None  # the loop below says what is wrong with it
            if isinstance(message, dict) and message.get("type") in ("call", "cancel"):
                session.context.receive(message)
                return
        events.put_nowait(("message", data))

    async def _connect_once(self, session: RelayClientSession) -> bool:
        events: asyncio.Queue[tuple[str, str]] = asyncio.Queue()
        try:
            socket = js.WebSocket.new(f"ws://{self.host.relay}/")
        except Exception as exc:  # e.g. SecurityError: a port the browser never dials
            session.next, session.refusal = "stop", f"the browser refused to dial {self.host.relay}: {exc}"
            self.failures += 1
            return False
        handlers = {
            "onopen": make_proxy(lambda _event: events.put_nowait(("open", ""))),
            "onmessage": make_proxy(lambda event: self._message(session, events, str(event.data))),
            "onclose": make_proxy(lambda _event: events.put_nowait(("close", ""))),
        }
        for name, handler in handlers.items():
            setattr(socket, name, handler)
        self.host.socket = socket
        opened = welcomed = False
        try:
            while True:
                kind, data = await events.get()
                if kind == "open":
                    opened = True
                    self.connections += 1
                    continue
                if kind == "close":
                    break
                try:
                    message = json.loads(data)
                except ValueError:
                    message = None
                keep = isinstance(message, dict) and await session.handle(message)
                if session.state == "welcomed" and not welcomed:
                    welcomed = True
                    self.welcomes += 1
                    if self.first_welcome_ms is None:
                        self.first_welcome_ms = float(js.performance.now())
                    self.source = session.source
                    self.status = "welcomed"
                if not keep:
                    socket.close(1000)
                    break
        finally:
            if not opened:
                self.failures += 1
            session.closed()
            self.host.socket = None
            for name, handler in handlers.items():
                setattr(socket, name, None)
                destroy(handler)
        return welcomed
