"""``agentsurface mcp --relay`` end to end: tabs of a Chromium WITHOUT WebMCP (no flag, no
polyfill) offer their tools to the official ``mcp`` SDK client through the relay, after the person
paired each origin by typing the code the relay printed into the page's dialog.

Two loopback servers are two origins (a third is one the person never pairs). The test is the
person (it types codes and clicks Approve/Deny with real, trusted input) and a hostile local
process (raw WebSocket clients); the relay never touches the page.

Chromium logs every WebSocket connection that finds no listener as a console error
("WebSocket connection to 'ws://127.0.0.1:PORT/' failed"), and no page can keep it from doing
so. Only the restart test meets one (the page retries while the relay is down): it allows exactly
that message, and waits until the page has really failed once, so the allowance is never stale.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import types
from playwright.sync_api import BrowserContext
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from agentsurface.adapters.relay_protocol import new_nonce, proof
from agentsurface.testing import WebMCPAgent
from conftest import PAGE_TIMEOUT_MS, ROOT, Browsers, PageRun, start_server
from relay_process import RelayProcess, free_port

NOTES = {"view_notes__board__listNotes", "view_notes__board__pinNote"}
LEDGER = {"view_ledger__book__listPayments", "view_ledger__book__recordPayment"}
INFO = "view_page__info__about"
PAGE = "/e2e/pages/relay.html"
PAIRING = "dialog.agentsurface-relay-pairing"
WS_FAILED = r"WebSocket connection to 'ws://127\.0\.0\.1:\d+/' failed"


@pytest.fixture(scope="module")
def origins(web_dist: Path) -> Iterator[list[str]]:
    """Three loopback servers of the repository: three origins."""
    servers = [start_server(ROOT, port=0) for _ in range(3)]
    yield [url.rstrip("/") for _, url in servers]
    for server, _ in servers:
        server.shutdown()
        server.server_close()


def state(run: PageRun) -> dict[str, Any]:
    return dict(json.loads(run.page.evaluate("() => window.relayPage.state()")))


def wait_state(run: PageRun, predicate: Callable[[dict[str, Any]], bool], what: str, timeout_s: float = 60) -> dict[str, Any]:
    run.page.wait_for_function("() => window.relayPage", timeout=120_000)
    for _ in range(int(timeout_s * 20)):
        current = state(run)
        if predicate(current):
            return current
        run.page.wait_for_timeout(50)
    raise AssertionError(f"the page never got to {what}: {state(run)}")


def pair(run: PageRun, relay: RelayProcess, origin: str, *, start: int = 0) -> None:
    """The person reads the code the relay printed and types it into the page's dialog."""
    code = relay.pairing_code(origin, start=start)
    dialog = run.page.locator(PAIRING)
    dialog.wait_for(state="visible")
    text = dialog.inner_text()
    assert relay.address in text and origin in text  # it names the relay and the page
    dialog.locator("input").fill(code)
    dialog.get_by_role("button", name="Connect", exact=True).click()
    wait_state(run, lambda s: s["status"] == "welcomed", "welcomed by the relay")


def output(result: types.CallToolResult) -> Any:
    first = result.content[0]
    assert isinstance(first, types.TextContent)
    return json.loads(first.text)


OpenTab = Callable[[str, RelayProcess, str], PageRun]


@pytest.fixture
def relay(tmp_path: Path) -> Iterator[RelayProcess]:
    with RelayProcess(free_port(), tmp_path) as started:
        yield started


@pytest.fixture
def open_tab(browsers: Browsers, relay: RelayProcess) -> Iterator[OpenTab]:
    """A tab of ``origin`` running ``app`` for ``relay``, in a fresh context of the Chromium
    without WebMCP (watched by the page-error guard). Not ``open_page``: its offline guard routes
    every request through this process, which would stall the page's loading whenever the test
    waits on the MCP client instead of on Playwright; these pages only ever load from their
    own loopback server. It depends on ``relay`` so that its tabs close before the relay stops:
    a tab that lost its relay retries, and Chromium logs each failed attempt as a console error."""
    contexts: list[BrowserContext] = []

    def open_one(origin: str, relay: RelayProcess, app: str) -> PageRun:
        return new_tab(browsers, contexts, f"{origin}{PAGE}?relay={relay.port}&app={app}")

    yield open_one
    close_tabs(contexts)


def new_tab(
    browsers: Browsers, contexts: list[BrowserContext], url: str, *, variant: str = "plain",
    before_goto: Callable[[BrowserContext], object] | None = None,
) -> PageRun:
    """``url`` in a fresh context of a shared Chromium (``plain``: without WebMCP), watched by the
    page-error guard; the context is added to ``contexts`` (for :func:`close_tabs`)."""
    context = browsers.get(variant).new_context(viewport={"width": 1200, "height": 800})
    context.set_default_timeout(PAGE_TIMEOUT_MS)
    contexts.append(context)
    if before_goto is not None:
        before_goto(context)
    page = context.new_page()
    run = PageRun(page=page, context=context, variant=variant, url=url)
    page.on("console", lambda message: run.console.append((message.type, message.text)))
    page.goto(run.url)
    return run


def close_tabs(contexts: list[BrowserContext]) -> None:
    for context in contexts:
        with contextlib.suppress(Exception):
            context.close()


async def _refusal(url: str, origin: str, answer: Callable[[dict[str, Any]], dict[str, Any]]) -> dict[str, Any]:
    async with connect(url, origin=origin) as socket:  # type: ignore[arg-type]
        hello = json.loads(await socket.recv())
        await socket.send(json.dumps(answer(hello)))
        refused = dict(json.loads(await socket.recv()))
        with pytest.raises(ConnectionClosed):
            await socket.recv()
        return refused


def hostile_clients(relay: RelayProcess, notes_origin: str, ledger_origin: str, notes_secret: str) -> None:
    """A local process: with no Origin, with a guessed proof, with the notes origin's secret
    (stolen) replayed for the ledger origin; none is welcomed, none sees a tool."""
    url = f"ws://{relay.address}/"

    async def run() -> None:
        with pytest.raises(InvalidStatus, match="403"):
            await connect(url)

        def guessed(hello: dict[str, Any]) -> dict[str, Any]:
            return {"type": "auth", "nonce": new_nonce(), "proof": "0" * 64}

        def replayed(hello: dict[str, Any]) -> dict[str, Any]:
            nonce = new_nonce()
            return {"type": "auth", "nonce": nonce, "proof": proof(notes_secret, "page", ledger_origin, hello["relay"], hello["nonce"], nonce)}

        assert (await _refusal(url, notes_origin, guessed))["reason"] == "bad-proof"
        assert (await _refusal(url, ledger_origin, replayed))["reason"] == "bad-proof"
        assert (await _refusal(url, "http://127.0.0.1:1", replayed))["reason"] == "not-paired"
        # Asking to pair gets a code printed for the person, and nothing else: no welcome, no tool.
        async with connect(url, origin="http://127.0.0.1:1") as socket:  # type: ignore[arg-type]
            await socket.recv()
            await socket.send(json.dumps({"type": "pair"}))
            assert json.loads(await socket.recv())["type"] == "pairing"
            await socket.send(json.dumps({"type": "tools", "tools": [{"name": "planted", "description": ""}]}))
            assert (json.loads(await socket.recv()))["reason"] == "protocol"

    relay.client.run(run())  # on the MCP client's loop: sync Playwright holds this thread's


def test_two_origins_list_call_approve_deny_and_a_closed_tab(
    open_tab: OpenTab, relay: RelayProcess, origins: list[str]
) -> None:
    notes_origin, ledger_origin = origins[0], origins[1]
    client = relay.client
    assert client.list_tools() == []
    notes = open_tab(notes_origin, relay, "notes")
    pair(notes, relay, notes_origin)
    ledger = open_tab(ledger_origin, relay, "ledger")
    pair(ledger, relay, ledger_origin)
    for run in (notes, ledger):
        assert run.page.evaluate("() => 'modelContext' in document || 'modelContext' in navigator") is False
    names = client.wait_for_tools(NOTES | LEDGER)
    shared = sorted(n for n in names if n.endswith("-" + INFO))
    assert len(shared) == 2 and INFO not in names  # one name, two tabs: prefixed, never mixed
    assert sorted(output(client.call(name))[0] for name in shared) == ["ledger", "notes"]
    listed = {t.name: t for t in client.list_tools()}
    assert listed["view_notes__board__listNotes"].annotations.readOnlyHint is True
    assert listed["view_notes__board__pinNote"].annotations.destructiveHint is True  # needs the person
    assert listed["view_notes__board__pinNote"].inputSchema["properties"]["text"]["type"] == "string"

    # A read applies at once.
    read = client.call("view_notes__board__listNotes")
    assert read.isError is False and output(read) == ["first"]

    # An approved write applies once the person clicks Approve in that tab's own dialog.
    _, pending = client.start_call("view_notes__board__pinNote", {"text": "from the agent"})
    shown = WebMCPAgent(notes.page).approve()
    assert "from the agent" in shown
    written = pending.result(timeout=60)
    assert written.isError is False and output(written) == 2
    assert state(notes)["data"] == ["first", "from the agent"]

    # A denied one does not.
    _, pending = client.start_call("view_ledger__book__recordPayment", {"cents": 500})
    WebMCPAgent(ledger.page).deny()
    denied = pending.result(timeout=60)
    assert denied.isError is True and (denied.structuredContent or {})["code"] == "CONFIRMATION_INVALID"
    assert state(ledger)["data"] == []

    # Hostile local clients are refused and add no tool.
    secret = notes.page.evaluate(f"() => localStorage.getItem('agentsurface-relay-secret:{relay.address}')")
    assert isinstance(secret, str) and secret not in relay.log()  # the secret is never printed
    hostile_clients(relay, notes_origin, ledger_origin, secret)
    assert client.tool_names() == names

    # A tab closed while its call waits for the person answers a typed error; its tools go.
    changes = client.list_changed_count()
    _, pending = client.start_call("view_notes__board__pinNote", {"text": "never"})
    WebMCPAgent(notes.page).wait_for_dialog()
    notes.page.close()
    gone = pending.result(timeout=60)
    assert gone.isError is True and (gone.structuredContent or {})["code"] == "COMPONENT_UNMOUNTED"
    client.wait_for(lambda: client.list_changed_count() > changes, "list_changed after the tab closed")
    after = client.wait_for_tools(LEDGER | {INFO}, absent=NOTES)
    assert not any(n.endswith("-" + INFO) for n in after)  # no clash left: the plain name again


def test_an_origin_the_person_did_not_pair_sees_nothing(
    open_tab: OpenTab, relay: RelayProcess, origins: list[str]
) -> None:
    stranger = origins[2]
    run = open_tab(stranger, relay, "notes")
    relay.pairing_code(stranger)
    run.page.locator(PAIRING).get_by_role("button", name="Don't connect", exact=True).click()
    final = wait_state(run, lambda s: s["status"] == "stopped", "stopped after the person declined")
    assert final["refusal"] == "declined" and final["welcomes"] == 0
    relay.wait_for_log(f"refused {stranger}: the person declined")
    assert relay.client.list_tools() == []
    assert relay.pairings.exists() is False  # nothing was paired
    # A reload asks again (the person may change their mind), still nothing without the code.
    run.page.reload()
    relay.wait_for_log(re_count(stranger, 2))
    run.page.locator(PAIRING).wait_for(state="visible")
    assert relay.client.list_tools() == []


def re_count(origin: str, times: int) -> str:
    one = rf"{origin} asks to pair[^\n]*\n"
    return "(?s)" + ".*".join([one] * times)


@pytest.mark.allow_page_errors(WS_FAILED)
def test_a_restarted_relay_is_rejoined(browsers: Browsers, origins: list[str], tmp_path: Path) -> None:
    origin, port = origins[0], free_port()
    contexts: list[BrowserContext] = []  # its own tabs: this test starts and stops relays itself
    try:
        relay = RelayProcess(port, tmp_path)
        try:
            run = new_tab(browsers, contexts, f"{origin}{PAGE}?relay={port}&app=notes")
            pair(run, relay, origin)
            relay.client.wait_for_tools(NOTES)
        finally:
            relay.close()
        # The relay is gone: the page notices, and fails at least once to reach it (the console error).
        wait_state(run, lambda s: s["status"] != "welcomed" and s["failures"] >= 1, "a failed reconnection")
        with RelayProcess(port, tmp_path) as again:
            again.client.wait_for_tools(NOTES, timeout_s=90)
            current = state(run)
            assert current["welcomes"] == 2 and "asks to pair" not in again.log()  # rejoined, not re-paired
            read = again.client.call("view_notes__board__listNotes")
            assert read.isError is False and output(read) == ["first"]
            close_tabs(contexts)
    finally:
        close_tabs(contexts)
