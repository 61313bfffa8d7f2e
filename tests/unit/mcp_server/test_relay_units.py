"""The relay's pieces without a socket: proofs, the pairings file, the pairing desk's limits and
the source registry's names and routing."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from agentsurface.adapters.relay_protocol import (
    checked_tool,
    is_secret,
    new_code,
    new_nonce,
    new_secret,
    normalize_code,
    proof,
    proof_matches,
)
from agentsurface.mcp_server.errors import PageGone
from agentsurface.mcp_server.options import OptionsError, add_arguments, from_namespace
from agentsurface.mcp_server.relay.pairing import (
    CODE_ATTEMPTS,
    FAILURES_IN_ALL,
    FAILURES_PER_ORIGIN,
    PAIRINGS_PER_WINDOW,
    WINDOW_S,
    PairingDesk,
    PairingStore,
)
from agentsurface.mcp_server.relay.sources import SourceRegistry, UnknownTool

A, B = "http://127.0.0.1:8001", "http://127.0.0.1:8002"
RELAY = "127.0.0.1:47821"


def test_a_proof_is_bound_to_secret_side_origin_relay_and_both_nonces() -> None:
    secret, rn, pn = new_secret(), new_nonce(), new_nonce()
    made = proof(secret, "page", A, RELAY, rn, pn)
    assert proof_matches(made, proof(secret, "page", A, RELAY, rn, pn))
    others = [
        proof(new_secret(), "page", A, RELAY, rn, pn),  # another secret
        proof(secret, "relay", A, RELAY, rn, pn),  # reflected to the other side
        proof(secret, "page", B, RELAY, rn, pn),  # replayed from another origin
        proof(secret, "page", A, "127.0.0.1:1", rn, pn),  # another relay
        proof(secret, "page", A, RELAY, new_nonce(), pn),  # another connection
        proof(secret, "page", A, RELAY, rn, new_nonce()),
    ]
    assert not any(proof_matches(made, other) for other in others)
    assert not proof_matches(made, None) and not proof_matches(made, 42)


def test_codes_and_secrets_have_their_shape() -> None:
    assert all(len(c) == 6 and c.isdigit() for c in (new_code() for _ in range(50)))
    assert is_secret(new_secret()) and not is_secret("ab") and not is_secret(new_secret().upper())
    assert normalize_code(" 123-456 ") == "123456"


def test_listing_entries_are_checked() -> None:
    good = {"name": "view_a__b", "description": "d", "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": True}}
    assert checked_tool(good) == {**good, "title": None}
    for bad in (
        {**good, "name": "has space"},
        {**good, "name": "x" * 129},
        {**good, "inputSchema": "{}"},
        {**good, "annotations": {"readOnlyHint": "yes"}},
        {**good, "description": 3},
        "not a tool",
    ):
        assert checked_tool(bad) is None


def test_the_pairings_file_is_private_and_survives_a_restart(tmp_path: Path) -> None:
    path = tmp_path / "config" / "agentsurface" / "relay-pairings.json"
    store = PairingStore(path)
    secret = store.pair(A)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(path.parent).st_mode) == 0o700
    again = PairingStore(path)
    assert again.secret(A) == secret and again.secret(B) is None and again.origins == [A]
    assert again.pair(A) != secret  # pairing again replaces the secret
    assert again.forget(A) and PairingStore(path).secret(A) is None
    assert [p.name for p in path.parent.iterdir()] == ["relay-pairings.json"]  # no temporary left


def test_a_broken_pairings_file_is_said_not_ignored(tmp_path: Path) -> None:
    path = tmp_path / "p.json"
    path.write_text("[1, 2]")
    with pytest.raises(ValueError, match="not a pairings file"):
        PairingStore(path)
    path.write_text(json.dumps({"origins": {A: "not-a-secret", B: new_secret()}}))
    assert PairingStore(path).origins == [B]


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_pairing_codes_have_few_tries_and_pairings_are_rate_limited() -> None:
    clock = Clock()
    desk = PairingDesk(clock=clock)
    pairing = desk.start(A)
    assert not isinstance(pairing, str)
    assert desk.start(A) == "busy"  # one at a time per origin
    wrong = "000000" if pairing.code != "000000" else "111111"
    results = [desk.check(pairing, wrong) for _ in range(CODE_ATTEMPTS)]
    assert results == [False] * (CODE_ATTEMPTS - 1) + [None]
    assert desk.check(pairing, pairing.code) is None  # over: even the right code is refused now
    for _ in range(PAIRINGS_PER_WINDOW - 1):
        started = desk.start(f"http://h{clock.now}")
        assert not isinstance(started, str)
        clock.now += 1
    assert desk.start("http://another") == "rate-limited"
    clock.now += WINDOW_S + 1
    fresh = desk.start(B)
    assert not isinstance(fresh, str) and desk.check(fresh, fresh.code) is True


class FakeTab:
    """What a tab's socket receives (a recording send)."""

    def __init__(self) -> None:
        self.frames: list[dict[str, Any]] = []

    async def send(self, text: str) -> None:
        self.frames.append(json.loads(text))


def _tool(name: str) -> dict[str, Any]:
    return {"name": name, "description": name, "inputSchema": {"type": "object"}, "annotations": {}}


async def test_names_are_kept_and_prefixed_only_on_a_clash() -> None:
    changes: list[int] = []
    sources = SourceRegistry(lambda: changes.append(1))
    one, two = FakeTab(), FakeTab()
    s1, s2 = sources.add(A, one.send), sources.add(B, two.send)
    assert sources.set_tools(s1, [_tool("read"), _tool("write")]) is None
    assert sources.set_tools(s2, [_tool("read"), _tool("other")]) is None
    assert sorted(t.name for t in sources.tools()) == ["other", "t1-read", "t2-read", "write"]
    # A tab naming a tool like another tab's prefixed name does not take it over.
    sources.set_tools(s2, [_tool("read"), _tool("t1-read")])
    assert sources.routes()["t1-read"] == (s1, "read")
    # Nor does one that connected first: its look-alike name is prefixed in turn.
    first = SourceRegistry(lambda: None)
    s3, s4, s5 = (first.add(A, FakeTab().send) for _ in range(3))
    first.set_tools(s3, [_tool("t2-read")])
    first.set_tools(s4, [_tool("read")])
    first.set_tools(s5, [_tool("read")])
    assert first.routes()["t2-read"] == (s4, "read") and first.routes()["t1-t2-read"] == (s3, "t2-read")
    assert sources.set_tools(s1, [_tool("a"), _tool("a")]) is not None  # repeated: refused
    assert sources.set_tools(s1, "nope") is not None
    sources.remove(s2, "closed")
    assert sorted(t.name for t in sources.tools()) == ["read", "write"]
    assert changes


async def test_a_call_goes_only_to_its_tab_and_settles_only_from_it() -> None:
    sources = SourceRegistry(lambda: None)
    one, two = FakeTab(), FakeTab()
    s1, s2 = sources.add(A, one.send), sources.add(B, two.send)
    sources.set_tools(s1, [_tool("read")])
    sources.set_tools(s2, [_tool("read")])
    call = asyncio.ensure_future(sources.call("t2-read", {"x": 1}))
    await asyncio.sleep(0)
    assert one.frames == [] and two.frames[0]["name"] == "read" and two.frames[0]["input"] == {"x": 1}
    call_id = two.frames[0]["id"]
    sources.settle(s1, {"type": "result", "id": call_id, "text": "forged"})  # another tab
    await asyncio.sleep(0)
    assert not call.done()
    sources.settle(s2, {"type": "result", "id": call_id, "text": "{}"})
    assert await call == {"text": "{}"}
    with pytest.raises(UnknownTool):
        await sources.call("read", {})  # ambiguous: only prefixed names exist


async def test_a_tab_that_goes_fails_its_pending_calls_and_cancel_reaches_the_tab() -> None:
    sources = SourceRegistry(lambda: None)
    tab = FakeTab()
    source = sources.add(A, tab.send)
    sources.set_tools(source, [_tool("slow")])
    pending = asyncio.ensure_future(sources.call("slow", {}))
    await asyncio.sleep(0)
    sources.remove(source, "the tab was closed")
    with pytest.raises(PageGone, match="the tab was closed"):
        await pending
    other = sources.add(B, tab.send)
    sources.set_tools(other, [_tool("slow")])
    cancelled = asyncio.ensure_future(sources.call("slow", {}))
    await asyncio.sleep(0)
    cancelled.cancel()
    with pytest.raises(asyncio.CancelledError):
        await cancelled
    assert tab.frames[-1] == {"type": "cancel", "id": tab.frames[-2]["id"]}


def _options(*argv: str) -> Any:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    return from_namespace(parser.parse_args(list(argv)))


def test_relay_options_launch_no_browser_and_take_no_url() -> None:
    options = _options("--relay", "--relay-port", "0", "--allow-origin", "https://App.example", "--http", "0")
    assert (options.relay, options.relay_port, options.allow_origins, options.http_port) == (
        True, 0, ("https://app.example",), 0
    )
    assert _options("--relay").relay_port == 47821
    for bad in (
        ["--relay", "http://127.0.0.1:8000/"],
        ["--relay", "--cdp", "http://127.0.0.1:9222"],
        ["--relay", "--headless"],
        ["--relay", "--relay-port", "70000"],
        ["--relay", "--allow-origin", "app.example"],
        [],
    ):
        with pytest.raises(OptionsError):
            _options(*bad)


def _fail(desk: PairingDesk, origin: str) -> None:
    pairing = desk.start(origin)
    assert not isinstance(pairing, str), pairing
    wrong = "000000" if pairing.code != "000000" else "111111"
    while desk.check(pairing, wrong) is not None:
        pass


def test_failed_pairings_block_an_origin_then_everyone_until_restart() -> None:
    clock = Clock()
    desk = PairingDesk(clock=clock)
    for _ in range(FAILURES_PER_ORIGIN):
        _fail(desk, A)
        clock.now += WINDOW_S + 1
    assert desk.start(A) == "blocked"
    for index in range(FAILURES_IN_ALL - FAILURES_PER_ORIGIN):
        _fail(desk, f"http://guesser{index}")
        clock.now += WINDOW_S + 1
    assert desk.start(B) == "blocked"  # at most 30 guesses of a million per run of the relay


class Host:
    """A page's side of one connection, recording what it sends."""

    origin = A
    relay = RELAY

    def __init__(self, secret: str | None = None) -> None:
        self.secret = secret
        self.sent: list[dict[str, Any]] = []

    def load_secret(self) -> str | None:
        return self.secret

    def save_secret(self, secret: str) -> None:
        self.secret = secret

    async def ask_code(self, attempts: int) -> str | None:
        return "123456"

    def send(self, text: str) -> None:
        self.sent.append(json.loads(text))


def _hello(**changes: Any) -> dict[str, Any]:
    from agentsurface.adapters.relay_protocol import PROTOCOL

    return {"type": "hello", "protocol": PROTOCOL, "relay": RELAY, "nonce": new_nonce(), **changes}


async def test_the_page_talks_only_to_the_relay_it_dialled_and_that_proves_the_pairing() -> None:
    from agentsurface.adapters.relay_context import RelayClientSession, RelayModelContext

    for hello in (_hello(relay="127.0.0.1:1"), _hello(protocol="other/1"), _hello(nonce="short")):
        host = Host(new_secret())
        session = RelayClientSession(host, RelayModelContext())
        assert await session.handle(hello) is False and session.next == "stop" and host.sent == []
    # A welcome without the relay's proof (or with a wrong one) sends no tool.
    for welcome in ({"type": "welcome", "proof": None}, {"type": "welcome", "proof": "0" * 64}):
        host = Host(new_secret())
        session = RelayClientSession(host, RelayModelContext())
        assert await session.handle(_hello())
        assert [m["type"] for m in host.sent] == ["auth"] and host.secret not in json.dumps(host.sent)
        assert await session.handle(welcome) is False and session.next == "stop"
        assert [m["type"] for m in host.sent] == ["auth"]
    # The right proof: welcomed, the listing goes out.
    secret = new_secret()
    host = Host(secret)
    session = RelayClientSession(host, RelayModelContext())
    hello = _hello()
    await session.handle(hello)
    page_nonce = host.sent[0]["nonce"]
    answer = proof(secret, "relay", A, RELAY, hello["nonce"], page_nonce)
    assert await session.handle({"type": "welcome", "proof": answer}) and session.state == "welcomed"
    assert host.sent[-1] == {"type": "tools", "tools": []}


async def test_a_relay_that_forgot_the_pairing_makes_the_page_pair_again_and_a_call_is_not_accepted_before_welcome() -> None:
    from agentsurface.adapters.relay_context import RelayClientSession, RelayModelContext

    host = Host(new_secret())
    session = RelayClientSession(host, RelayModelContext())
    await session.handle(_hello())
    assert await session.handle({"type": "call", "id": 1, "name": "x", "input": {}}) is False  # not welcomed
    host = Host(new_secret())
    session = RelayClientSession(host, RelayModelContext())
    await session.handle(_hello())
    assert await session.handle({"type": "refused", "reason": "not-paired"}) is False
    assert session.force_pairing and session.next == "retry"
    again = RelayClientSession(host, RelayModelContext(), force_pairing=True)
    await again.handle(_hello())
    assert host.sent[-1] == {"type": "pair"}
    assert await again.handle({"type": "pairing", "relay": RELAY, "attempts": 3})
    assert host.sent[-1] == {"type": "pair-code", "code": "123456"}
    fresh = new_secret()
    assert await again.handle({"type": "paired", "secret": fresh}) is False
    assert again.next == "reconnect" and host.secret == fresh


async def test_a_burst_of_tool_changes_is_one_listing() -> None:
    from agentsurface.adapters.model_context import WebMCPTool
    from agentsurface.adapters.relay_context import RelayModelContext

    async def execute(tool_input: Any, call: Any) -> dict[str, Any]:
        return {"content": []}

    context = RelayModelContext()
    sent: list[dict[str, Any]] = []
    context.connect(lambda text: sent.append(json.loads(text)))
    for name in ("a", "b", "c"):
        await context.register_tool(WebMCPTool(name, name, name, {"type": "object"}, {}, execute))
    await context.unregister_tool("b")
    await asyncio.sleep(0)
    assert [[t["name"] for t in frame["tools"]] for frame in sent] == [[], ["a", "c"]]
    context.disconnect()
    await context.register_tool(WebMCPTool("d", "d", "d", {"type": "object"}, {}, execute))
    await asyncio.sleep(0)
    assert len(sent) == 2  # detached: nothing goes out


async def test_a_call_that_never_waits_is_answered_in_the_same_turn_and_one_that_waits_later() -> None:
    from agentsurface import (
        AgentComponent,
        AgentSurfaceRegistry,
        CapabilityAuthority,
        Consumer,
        action,
        compile_manifest,
        observation,
    )
    from agentsurface.adapters.relay_context import RelayModelContext
    from agentsurface.adapters.webmcp import WebMCPAdapter

    class Lamp(AgentComponent, type="home.lamp", description="A lamp."):
        on = False

        @observation("Whether the lamp is on.")
        def lit(self) -> bool:
            return self.on

        @action("Switch the lamp on.", confirmation="required")
        def switch_on(self) -> bool:
            self.on = True
            return True

    registry = AgentSurfaceRegistry(authority=CapabilityAuthority.from_manifest(compile_manifest([Lamp])))
    lamp = Lamp()
    registry.register(lamp)
    context = RelayModelContext()
    adapter = WebMCPAdapter(model_context=context)
    await adapter.start(registry=registry, consumer=Consumer("relay-agent", "webmcp"))
    sent: list[dict[str, Any]] = []
    context.connect(lambda text: sent.append(json.loads(text)))
    read, write = sorted(context.tool_names)

    context.receive({"type": "call", "id": 1, "name": read, "input": {}})
    (frame,) = [f for f in sent if f.get("type") == "result"]  # before any turn of the loop
    assert frame["id"] == 1 and json.loads(frame["text"]) == {"content": [{"type": "text", "text": "false"}]}

    context.receive({"type": "call", "id": 2, "name": write, "input": {}})
    assert [f["id"] for f in sent if f.get("type") == "result"] == [1]  # it waits for the person
    context.receive({"type": "cancel", "id": 2})
    for _ in range(50):
        await asyncio.sleep(0)
        if len([f for f in sent if f.get("type") == "result"]) == 2:
            break
    last = [f for f in sent if f.get("type") == "result"][-1]
    assert last["id"] == 2 and not lamp.on
    assert json.loads(last["text"])["isError"] is True

    context.receive({"type": "call", "id": 3, "name": "nope", "input": {}})
    assert sent[-1] == {"type": "result", "id": 3, "rejected": "NotFoundError", "message": "no tool 'nope'"}
    await adapter.aclose()
