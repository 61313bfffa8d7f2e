"""The relay's listener on a real loopback socket, with the page's side of the protocol
(``RelayClientSession`` over the WebMCP adapter and a real registry) run on CPython, and the
clients a hostile local process would write: no Origin, a forged Host, another origin's secret,
a replayed proof, guessed codes, a program posing as the relay."""

from __future__ import annotations

import asyncio
import io
import json
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.client import ClientConnection, connect
from websockets.asyncio.server import ServerConnection, serve
from websockets.exceptions import ConnectionClosed, InvalidStatus

from agentsurface import (
    AgentComponent,
    AgentSurfaceRegistry,
    CapabilityAuthority,
    Consumer,
    action,
    compile_manifest,
    observation,
)
from agentsurface.adapters.relay_context import RelayClientSession, RelayModelContext
from agentsurface.adapters.relay_protocol import PROTOCOL, new_nonce, proof
from agentsurface.adapters.webmcp import WebMCPAdapter
from agentsurface.mcp_server.errors import PageGone
from agentsurface.mcp_server.options import BridgeOptions
from agentsurface.mcp_server.relay.link import RelayLink

A, B, C = "http://127.0.0.1:8101", "http://127.0.0.1:8102", "http://localhost:8103"


class Vault(AgentComponent, type="bank.vault", description="The bank vault."):
    def __init__(self) -> None:
        self.opened: list[str] = []

    @observation("The drawers opened so far.")
    def opened_drawers(self) -> list[str]:
        return list(self.opened)

    @action("Open one drawer.", confirmation="required")
    def open_drawer(self, drawer: str) -> str:
        self.opened.append(drawer)
        return drawer


@dataclass
class Relay:
    link: RelayLink
    log: io.StringIO
    changes: list[int]

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.link.listener.port}"

    def codes(self) -> list[str]:
        return [m.replace(" ", "") for m in re.findall(r"pairing code: (\d{3} \d{3})", self.log.getvalue())]

    async def wait_tools(self, count: int) -> list[str]:
        for _ in range(400):
            names = [t.name for t in await self.link.list_tools()]
            if len(names) == count:
                return sorted(names)
            await asyncio.sleep(0.01)
        raise AssertionError(f"expected {count} tools, have {names}")


@pytest.fixture
async def relay(tmp_path: Path) -> AsyncIterator[Relay]:
    log = io.StringIO()
    changes: list[int] = []
    options = BridgeOptions(url="", relay=True, relay_port=0, pairings=str(tmp_path / "pairings.json"), allow_origins=(C,))
    link = RelayLink(options, lambda: changes.append(1), log=log)
    await link.open()
    yield Relay(link, log, changes)
    await link.aclose()


@dataclass
class Tab:
    """A page of ``origin`` on CPython: a registry, the WebMCP adapter over the relay model
    context, its localStorage, and the person's answers to the pairing dialog."""

    origin: str
    relay: str
    storage: dict[str, str] = field(default_factory=dict)
    answers: asyncio.Queue[str | None] = field(default_factory=asyncio.Queue)
    asked: int = 0
    socket: ClientConnection | None = None
    sending: set[asyncio.Future[None]] = field(default_factory=set)

    def __post_init__(self) -> None:
        self.vault = Vault()
        self.registry = AgentSurfaceRegistry(authority=CapabilityAuthority.from_manifest(compile_manifest([Vault])))
        self.registry.register(self.vault)
        self.context = RelayModelContext()
        self.adapter = WebMCPAdapter(model_context=self.context)

    async def start(self) -> None:
        await self.adapter.start(registry=self.registry, consumer=Consumer("relay-agent", "webmcp"))

    # RelayHost
    def load_secret(self) -> str | None:
        return self.storage.get(self.relay)

    def save_secret(self, secret: str) -> None:
        self.storage[self.relay] = secret

    async def ask_code(self, attempts: int) -> str | None:
        self.asked += 1
        return await self.answers.get()

    def send(self, text: str) -> None:
        if self.socket is not None:
            task = asyncio.ensure_future(self.socket.send(text))
            self.sending.add(task)
            task.add_done_callback(self.sending.discard)

    async def connect_once(self, *, force_pairing: bool = False) -> RelayClientSession:
        """One connection, run until it ends or is welcomed (then it keeps running)."""
        session = RelayClientSession(self, self.context, force_pairing=force_pairing)
        self.socket = await connect(f"ws://{self.relay}/", origin=self.origin)  # type: ignore[arg-type]
        welcomed = asyncio.get_running_loop().create_future()

        async def pump() -> None:
            assert self.socket is not None
            try:
                async for raw in self.socket:
                    keep = await session.handle(json.loads(raw))
                    if session.state == "welcomed" and not welcomed.done():
                        welcomed.set_result(True)
                    if not keep:
                        await self.socket.close()
                        break
            except ConnectionClosed:
                pass
            finally:
                session.closed()
                if not welcomed.done():
                    welcomed.set_result(False)

        self.pump = asyncio.ensure_future(pump())
        await welcomed
        return session


async def _paired_tab(relay: Relay, origin: str = A) -> Tab:
    tab = Tab(origin, relay.address)
    await tab.start()
    pairing = asyncio.ensure_future(tab.connect_once())
    while not relay.codes():
        await asyncio.sleep(0.01)
    await tab.answers.put(relay.codes()[-1])
    first = await pairing
    assert first.next == "reconnect" and tab.load_secret() is not None
    second = await tab.connect_once()
    assert second.state == "welcomed"
    return tab


async def test_pairing_then_challenge_response_lists_the_tabs_tools_and_calls_run_the_pipeline(relay: Relay) -> None:
    tab = await _paired_tab(relay)
    assert relay.link.gate.store.origins == [A]
    names = await relay.wait_tools(2)
    assert names == ["view_bank__vault__openDrawer", "view_bank__vault__openedDrawers"]
    read = await relay.link.call("view_bank__vault__openedDrawers", {})
    assert json.loads(json.loads(read["text"])["content"][0]["text"]) == []
    # A consequential call waits for the person (here: the registry's confirmation store, which
    # the page's dialog resolves); the relay cannot approve it.
    write = asyncio.ensure_future(relay.link.call("view_bank__vault__openDrawer", {"drawer": "d1"}))
    while not tab.registry.confirmations.pending():
        await asyncio.sleep(0.01)
    assert tab.vault.opened == []
    tab.registry.confirmations.resolve(tab.registry.confirmations.pending()[0].confirmation_id, approved=True)
    assert "d1" in (await write)["text"] and tab.vault.opened == ["d1"]
    denied = asyncio.ensure_future(relay.link.call("view_bank__vault__openDrawer", {"drawer": "d2"}))
    while not tab.registry.confirmations.pending():
        await asyncio.sleep(0.01)
    tab.registry.confirmations.resolve(tab.registry.confirmations.pending()[0].confirmation_id, approved=False)
    assert "CONFIRMATION_INVALID" in (await denied)["text"] and tab.vault.opened == ["d1"]


async def test_closing_the_tab_mid_call_answers_page_gone_and_withdraws_its_tools(relay: Relay) -> None:
    tab = await _paired_tab(relay)
    await relay.wait_tools(2)
    waiting = asyncio.ensure_future(relay.link.call("view_bank__vault__openDrawer", {"drawer": "d1"}))
    while not tab.registry.confirmations.pending():
        await asyncio.sleep(0.01)
    assert tab.socket is not None
    await tab.socket.close()
    with pytest.raises(PageGone, match="closed, reloaded or disconnected"):
        await waiting
    assert await relay.wait_tools(0) == []
    await tab.pump  # the page saw the connection end: its call gave up (CANCELLED)
    for item in tab.registry.confirmations.pending():  # approving now runs nothing
        tab.registry.confirmations.resolve(item.confirmation_id, approved=True)
    await asyncio.sleep(0.05)
    assert tab.vault.opened == []


async def test_hostile_local_clients_are_refused_before_any_tool(relay: Relay) -> None:
    tab = await _paired_tab(relay)
    await relay.wait_tools(2)
    secret = tab.load_secret()
    assert secret is not None
    url = f"ws://{relay.address}/"
    with pytest.raises(InvalidStatus, match="403"):  # no Origin: not a page
        await connect(url)
    with pytest.raises(InvalidStatus, match="403"):  # two Hosts
        await connect(url, origin=A, additional_headers={"Host": "attacker.example"})  # type: ignore[arg-type]
    assert await _raw_upgrade(relay.link.listener.port, "attacker.example", A) == 403  # DNS rebinding
    assert await _raw_upgrade(relay.link.listener.port, relay.address, "null") == 403  # a sandboxed frame
    assert await _raw_upgrade(relay.link.listener.port, relay.address, A) == 101

    async def refusal(origin: str, answer: Any) -> dict[str, Any]:
        async with connect(url, origin=origin) as socket:  # type: ignore[arg-type]
            hello = json.loads(await socket.recv())
            await socket.send(json.dumps(answer(hello)))
            refused = json.loads(await socket.recv())
            with pytest.raises(ConnectionClosed):
                await socket.recv()
            assert socket.close_code == 1008
            return refused

    def replayed_secret(hello: dict[str, Any]) -> dict[str, Any]:
        nonce = new_nonce()  # A's secret, proving for B (the relay checks B's pairing: none)
        return {"type": "auth", "nonce": nonce, "proof": proof(secret, "page", B, hello["relay"], hello["nonce"], nonce)}

    def proof_for_a(hello: dict[str, Any]) -> dict[str, Any]:
        nonce = new_nonce()  # a proof made for A, sent with Origin B
        return {"type": "auth", "nonce": nonce, "proof": proof(secret, "page", A, hello["relay"], hello["nonce"], nonce)}

    assert (await refusal(B, replayed_secret))["reason"] == "not-paired"
    assert (await refusal(B, proof_for_a))["reason"] == "not-paired"
    relay.link.gate.store.pair(B)  # B is paired too now: A's secret still does not open B
    assert (await refusal(B, replayed_secret))["reason"] == "bad-proof"
    assert (await refusal(B, proof_for_a))["reason"] == "bad-proof"

    captured: dict[str, Any] = {}

    def replay_old_proof(hello: dict[str, Any]) -> dict[str, Any]:
        if not captured:  # a proof seen on an earlier connection: its relay nonce is spent
            nonce = new_nonce()
            captured.update(type="auth", nonce=nonce, proof=proof(secret, "page", A, hello["relay"], new_nonce(), nonce))
        return captured

    assert (await refusal(A, replay_old_proof))["reason"] == "bad-proof"
    assert (await refusal(A, lambda hello: {"type": "call", "id": 1, "name": "x"}))["reason"] == "protocol"
    assert sorted(t.name for t in await relay.link.list_tools()) == [
        "view_bank__vault__openDrawer",
        "view_bank__vault__openedDrawers",
    ]  # only the paired tab's


async def _raw_upgrade(port: int, host: str, origin: str) -> int:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(
        (
            f"GET / HTTP/1.1\r\nHost: {host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            f"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nOrigin: {origin}\r\n\r\n"
        ).encode()
    )
    status = int((await reader.readline()).split()[1])
    writer.close()
    return status


async def test_guessing_the_pairing_code_fails_and_pairs_nothing(relay: Relay) -> None:
    tab = Tab(B, relay.address)
    await tab.start()
    for _ in range(3):
        await tab.answers.put("000000" if "000000" not in relay.codes() else "111111")
    session = await tab.connect_once()
    await tab.pump
    assert session.refusal == "pairing-failed" and session.next == "stop"
    assert tab.asked == 3 and tab.load_secret() is None and relay.link.gate.store.origins == []
    declined = Tab(B, relay.address)
    await declined.start()
    await declined.answers.put(None)  # the person chose "Don't connect"
    session = await declined.connect_once()
    await declined.pump
    assert session.next == "stop" and relay.link.gate.store.origins == []
    assert await relay.link.list_tools() == []


async def test_an_allowed_origin_connects_without_pairing(relay: Relay) -> None:
    tab = Tab(C, relay.address)
    await tab.start()
    session = await tab.connect_once()
    assert session.state == "welcomed" and tab.asked == 0 and tab.load_secret() is None
    assert len(await relay.wait_tools(2)) == 2


async def test_a_program_posing_as_the_relay_gets_no_tools_and_no_secret(relay: Relay) -> None:
    tab = await _paired_tab(relay)
    secret = tab.load_secret()
    seen: list[dict[str, Any]] = []

    async def fake(socket: ServerConnection) -> None:
        await socket.send(json.dumps({"type": "hello", "protocol": PROTOCOL, "relay": fake_relay, "nonce": new_nonce()}))
        async for raw in socket:
            seen.append(json.loads(raw))
            await socket.send(json.dumps({"type": "welcome", "proof": "0" * 64}))

    async with serve(fake, "127.0.0.1", 0) as server:
        fake_relay = f"127.0.0.1:{next(iter(server.sockets)).getsockname()[1]}"
        tab.relay = fake_relay
        tab.storage[fake_relay] = secret  # the same secret, as if the fake took the relay's port
        session = await tab.connect_once()
        await tab.pump
    assert session.next == "stop" and "could not prove" in str(session.refusal)
    assert [m["type"] for m in seen] == ["auth"] and secret not in json.dumps(seen)


async def test_cancelling_a_call_cancels_it_in_the_tab(relay: Relay) -> None:
    tab = await _paired_tab(relay)
    await relay.wait_tools(2)
    waiting = asyncio.ensure_future(relay.link.call("view_bank__vault__openDrawer", {"drawer": "d1"}))
    while not tab.registry.confirmations.pending():
        await asyncio.sleep(0.01)
    assert tab.context._calls  # the page runs it, waiting for the person
    waiting.cancel()  # what MCP cancellation does to the bridge's call
    with pytest.raises(asyncio.CancelledError):
        await waiting
    for _ in range(200):
        if not tab.context._calls:
            break
        await asyncio.sleep(0.01)
    assert not tab.context._calls  # the page's call ended (CANCELLED), its answer went nowhere
    for item in tab.registry.confirmations.pending():
        tab.registry.confirmations.resolve(item.confirmation_id, approved=True)
    await asyncio.sleep(0.05)
    assert tab.vault.opened == []
