"""The page end of the relay, without the browser: the registry's tools as the WebMCP adapter
projects them (so a relay call runs the same pipeline as a WebMCP call: approvals, policies,
limits, typed refusals), and one connection's handshake with the relay.

``RelayModelContext`` is a ``ModelContext`` whose "browser" is the relay, in the shape of the
current spec (``abortable``: tools with a title and every annotation the contract gives, withdrawn
one by one; no ``requestUserInteraction``, so confirmations wait for the page's own dialog).
``WebMCPAdapter(model_context=RelayModelContext())`` keeps it up to date, and it sends the whole
listing to the relay (coalesced) whenever it changes while a connection is welcomed.
``RelayClientSession`` runs one connection's side of ``relay_protocol``; the socket, the secret's
storage and the pairing dialog are the ``RelayHost`` the browser layer supplies.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Literal, Protocol

from .._core.contracts.context import CancelSignal
from .model_context import Shape, ToolCall, WebMCPTool
from .relay_protocol import PROTOCOL, is_nonce, is_secret, new_nonce, proof, proof_matches

Send = Callable[[str], None]


def _frame(**fields: Any) -> str:
    return json.dumps(fields, ensure_ascii=False)


def _failed(call_id: int, exc: Exception) -> str:
    return _frame(type="result", id=call_id, rejected=type(exc).__name__, message=str(exc))


class RelayModelContext:
    """The tools the adapter registered, mirrored to the welcomed connection (if any)."""

    shape: Shape = "abortable"

    def __init__(self) -> None:
        self._tools: dict[str, WebMCPTool] = {}
        self._send: Send | None = None
        self._listing_due = False
        self._calls: dict[int, CancelSignal] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self.listings_sent = 0

    # ------------------------------------------------------------------ ModelContext

    async def register_tool(self, tool: WebMCPTool) -> None:
        self._tools[tool.name] = tool
        self._listing_changed()

    async def unregister_tool(self, name: str) -> None:
        self._tools.pop(name, None)
        self._listing_changed()

    async def provide_context(self, tools: Sequence[WebMCPTool]) -> None:
        self._tools = {tool.name: tool for tool in tools}
        self._listing_changed()

    async def clear_context(self) -> bool:
        self._tools.clear()
        self._listing_changed()
        return True

    def close(self) -> None:
        self._tools.clear()
        self._listing_changed()
        self.disconnect()

    # ------------------------------------------------------------------ the connection

    @property
    def tool_names(self) -> list[str]:
        return sorted(self._tools)

    def tool(self, name: str) -> WebMCPTool | None:
        """The tool the relay would call by ``name`` (e.g. to time the same call in the page)."""
        return self._tools.get(name)

    def listing(self) -> list[dict[str, Any]]:
        return [
            {
                "name": tool.name,
                "title": tool.title,
                "description": tool.description,
                "inputSchema": dict(tool.input_schema),
                "annotations": dict(tool.annotations),
            }
            for tool in self._tools.values()
        ]

    def connect(self, send: Send) -> None:
        """A welcomed connection: it gets the listing now and on every change."""
        self._send = send
        self._send_listing()

    def disconnect(self) -> None:
        """The connection ended: its running calls have nobody to answer, so they are cancelled
        (a confirmation waiting in the page's dialog gives up as on a browser's abort)."""
        self._send = None
        for signal in self._calls.values():
            signal.abort("the relay connection closed")
        self._calls.clear()

    def _listing_changed(self) -> None:
        # A burst of changes (a drawer mounting three tools) becomes one frame.
        if self._send is None or self._listing_due:
            return
        self._listing_due = True
        asyncio.get_running_loop().call_soon(self._send_listing)

    def _send_listing(self) -> None:
        self._listing_due = False
        if self._send is not None:
            self._send(_frame(type="tools", tools=self.listing()))
            self.listings_sent += 1

    def receive(self, message: dict[str, Any]) -> None:
        """A ``call`` or ``cancel`` from the relay."""
        call_id = message.get("id")
        if not isinstance(call_id, int) or isinstance(call_id, bool):
            return
        if message.get("type") == "cancel":
            signal = self._calls.get(call_id)
            if signal is not None:
                signal.abort("cancelled by the agent")
        elif message.get("type") == "call" and self._send is not None and call_id not in self._calls:
            self._start(call_id, message.get("name"), message.get("input"), self._send)

    def _start(self, call_id: int, name: object, tool_input: Any, send: Send) -> None:
        tool = self._tools.get(name) if isinstance(name, str) else None
        if tool is None:
            send(_frame(type="result", id=call_id, rejected="NotFoundError", message=f"no tool {name!r}"))
            return
        signal = CancelSignal()
        call = ToolCall(signal=signal)
        # The adapter's tools answer a call that never waits at once (``now``: its content as
        # JSON text): the result frame then leaves in this same turn, with no task to schedule.
        now = getattr(tool.execute, "now", None)
        try:
            outcome = tool.execute(tool_input, call) if now is None else now(tool_input, call)
        except Exception as exc:  # the adapter answers in content; this is a defect: say so
            send(_failed(call_id, exc))
            return
        if isinstance(outcome, str):
            send(_frame(type="result", id=call_id, text=outcome))
            return
        self._calls[call_id] = signal
        task = asyncio.ensure_future(self._finish(call_id, outcome, send))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _finish(self, call_id: int, outcome: Awaitable[Any], send: Send) -> None:
        try:
            content = await outcome
            frame = _frame(type="result", id=call_id, text=json.dumps(content, ensure_ascii=False))
        except Exception as exc:
            frame = _failed(call_id, exc)
        finally:
            self._calls.pop(call_id, None)
        if self._send is send:  # the same connection still listens
            send(frame)


class RelayHost(Protocol):
    """What the browser layer gives one connection."""

    origin: str  # the page's origin, as the browser sends it in the handshake
    relay: str  # the address the page dialled, e.g. "127.0.0.1:47821"

    def load_secret(self) -> str | None: ...

    def save_secret(self, secret: str) -> None: ...

    async def ask_code(self, attempts: int) -> str | None:
        """Show the pairing dialog (naming the relay); the code typed, or None if declined."""
        ...

    def send(self, text: str) -> None: ...


# What the connection manager does once this connection ends.
Next = Literal["open", "reconnect", "retry", "stop"]


class RelayClientSession:
    """One connection, from the page's side. ``handle(message)`` for each frame; ``next`` says
    what to do when it closes: ``reconnect`` at once (just paired), ``retry`` with backoff, or
    ``stop`` (the person declined, or the relay could not prove it is the one we paired with)."""

    def __init__(self, host: RelayHost, context: RelayModelContext, *, force_pairing: bool = False) -> None:
        self.host = host
        self.context = context
        self.force_pairing = force_pairing
        self.state: Literal["hello", "auth", "pair", "pairing", "welcomed", "closed"] = "hello"
        self.next: Next = "retry"
        self.refusal: str | None = None
        self.source: str | None = None
        self._secret: str | None = None
        self._nonces: tuple[str, str] | None = None

    async def handle(self, message: dict[str, Any]) -> bool:
        """Process one frame; False when the page closes the connection."""
        kind = message.get("type")
        if self.state == "welcomed" and kind in ("call", "cancel"):
            self.context.receive(message)
            return True
        if kind == "hello" and self.state == "hello":
            return self._hello(message)
        if kind == "welcome" and self.state in ("auth", "pair"):
            return self._welcome(message)
        if kind in ("pairing", "pair-retry") and self.state in ("pair", "pairing"):
            return await self._ask(message)
        if kind == "paired" and self.state == "pairing":
            secret = message.get("secret")
            if not is_secret(secret):
                return self._stop("the relay sent a malformed secret")
            assert isinstance(secret, str)
            self.host.save_secret(secret)
            self.next = "reconnect"
            return False
        if kind == "refused":
            return self._refused(message)
        return self._stop(f"unexpected {kind!r} from the relay in state {self.state}")

    def _hello(self, message: dict[str, Any]) -> bool:
        relay_nonce = message.get("nonce")
        if message.get("protocol") != PROTOCOL or not is_nonce(relay_nonce):
            return self._stop("not an agentsurface relay (protocol or nonce)")
        if message.get("relay") != self.host.relay:
            return self._stop(f"the relay names itself {message.get('relay')!r}, not {self.host.relay!r}")
        assert isinstance(relay_nonce, str)
        secret = None if self.force_pairing else self.host.load_secret()
        if secret is None or not is_secret(secret):
            self.state = "pair"
            self.host.send(_frame(type="pair"))
            return True
        page_nonce = new_nonce()
        self._secret, self._nonces = secret, (relay_nonce, page_nonce)
        answer = proof(secret, "page", self.host.origin, self.host.relay, relay_nonce, page_nonce)
        self.state = "auth"
        self.host.send(_frame(type="auth", nonce=page_nonce, proof=answer))
        return True

    def _welcome(self, message: dict[str, Any]) -> bool:
        if self.state == "auth":
            # The relay proves it holds our secret too: a program posing as the relay cannot.
            assert self._secret is not None and self._nonces is not None
            expected = proof(self._secret, "relay", self.host.origin, self.host.relay, *self._nonces)
            if not proof_matches(expected, message.get("proof")):
                return self._stop("the relay could not prove it is the one this page paired with")
        source = message.get("source")
        self.source = source if isinstance(source, str) else None
        self.state = "welcomed"
        self.next = "retry"
        self.context.connect(self.host.send)
        return True

    async def _ask(self, message: dict[str, Any]) -> bool:
        self.state = "pairing"
        attempts = message.get("attempts")
        code = await self.host.ask_code(attempts if isinstance(attempts, int) else 1)
        if self.state != "pairing":
            return False  # the connection ended while the dialog was open
        if code is None:
            self.host.send(_frame(type="pair-cancel"))
            self.refusal = "declined"
            return self._stop("the person declined to pair this page with the relay")
        self.host.send(_frame(type="pair-code", code=code))
        return True

    def _refused(self, message: dict[str, Any]) -> bool:
        reason = message.get("reason")
        self.refusal = reason if isinstance(reason, str) else "refused"
        # Not paired (any more), or our secret does not match: pair again on the next connection.
        self.force_pairing = self.refusal in ("not-paired", "bad-proof")
        self.next = "stop" if self.refusal in ("declined", "pairing-failed", "blocked") else "retry"
        self.closed()
        return False

    def _stop(self, why: str) -> bool:
        self.refusal = self.refusal or why
        self.next = "stop"
        self.closed()
        return False

    def closed(self) -> None:
        """The connection ended (either side)."""
        if self.state == "welcomed":
            self.context.disconnect()
        self.state = "closed"
