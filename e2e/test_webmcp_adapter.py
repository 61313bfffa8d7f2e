"""The WebMCP adapter end to end, in real Chromium (headless, offline).

The page (e2e/pages/adapter*.html + adapter.py) declares a small drawing board with agentsurface
and starts ``WebMCPAdapter()``. The test plays two roles:

- the app and its user, through the page's hooks (``window.adapterPage``: mount, unmount,
  setAvailable, stop, churn, liveProxies, state) and real Playwright clicks on the page's dialogs;
- the agent, only through the browser's own client: ``document.modelContext.getTools()`` /
  ``executeTool()`` on Chromium's shape B, ``navigator.modelContextTesting`` (the polyfill's
  testing shim) on shape A. Our Python is never called to play the agent.

One page load per shape (Pyodide boots in ~5-10 s): the tests of a class share its page and run
in file order; each leaves the surface as it found it (a call it starts is settled before it
ends), and each class ends with ``stop()``. Every promise the test awaits is bounded, so a hung
call fails its test instead of hanging the suite.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Page, Route
from playwright.sync_api import TimeoutError as PlaywrightTimeout

NATIVE = "/e2e/pages/adapter.html"
POLYFILL = "/e2e/pages/adapter-polyfill.html"
PROVIDE = "/e2e/pages/adapter-provide.html"
ARTIFACTS = Path(__file__).resolve().parent / "artifacts"

BOARD = {
    "domain_board__archive": "domain:board.archive",
    "domain_board__export": "domain:board.export",
    "view_board__canvas__draw": "view:board.canvas.draw",
    "view_board__canvas__eraseAll": "view:board.canvas.eraseAll",
    "view_board__canvas__strokes": "view:board.canvas.strokes",
    "view_board__canvas__undo": "view:board.canvas.undo",
}
PALETTE = {
    "view_board__palette__colors": "view:board.palette.colors",
    "view_board__palette__pick": "view:board.palette.pick",
}
READ_ONLY = {"view_board__canvas__strokes", "domain_board__export", "view_board__palette__colors"}
CONSEQUENTIAL = {"view_board__canvas__eraseAll", "domain_board__archive"}  # confirmation / destructive
DRAW, ERASE, UNDO, STROKES, EXPORT = (
    "view_board__canvas__draw",
    "view_board__canvas__eraseAll",
    "view_board__canvas__undo",
    "view_board__canvas__strokes",
    "domain_board__export",
)
STROKE = {"label": "zigzag", "points": [{"x": 1, "y": 2}, {"x": 30, "y": 40}]}
POLL = {"polling": 50, "timeout": 15_000}
# page.evaluate() waits for a promise without any timeout: every promise the test awaits goes
# through within(), so a hung call fails the test instead of hanging the suite.
WITHIN = """window.within = (promise, what, ms) => {
    let timer;
    const limit = new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${what}: not settled within ${ms} ms`)), ms);
    });
    return Promise.race([promise, limit]).finally(() => clearTimeout(timer));
};"""


def settle(page: Page, expression: str, what: str | None = None, ms: int = 20_000) -> Any:
    """Evaluate a promise-valued JS expression, bounded."""
    return page.evaluate(f"() => within({expression}, {json.dumps(what or expression)}, {ms})")


def listed(page: Page, list_js: str) -> Any:
    """What the agent's client lists (``list_js`` is a function, sync or async)."""
    return settle(page, f"Promise.resolve(({list_js})())", "listing tools")


# --------------------------------------------------------------------------- shared pages


@dataclass
class SharedPage:
    """A page loaded once for a whole test class, with what it logged and tried to fetch."""

    page: Page
    variant: str
    external_requests: list[str] = field(default_factory=list)
    console: list[tuple[str, str]] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    timings: dict[str, Any] = field(default_factory=dict)

    @property
    def console_errors(self) -> list[str]:
        return [text for kind, text in self.console if kind == "error"] + self.page_errors

    def state(self) -> dict[str, Any]:
        return json.loads(self.page.evaluate("() => window.adapterPage.state()"))

    def live_proxies(self) -> int:
        return self.page.evaluate("() => window.adapterPage.liveProxies()")

    def assert_quiet(self) -> None:
        assert self.console_errors == []
        assert self.external_requests == []  # offline: nothing but the local server
        assert self.state()["diagnostics"] == []


def _shared_page(browsers: Any, server_url: str, path: str, variant: str) -> Iterator[SharedPage]:
    """Like conftest's open_page (offline guard, console capture), but for a whole class."""
    context = browsers.get(variant).new_context(viewport={"width": 1000, "height": 700})
    context.set_default_timeout(20_000)  # clicks and waits; a failing wait should not idle long
    context.set_default_navigation_timeout(60_000)
    page = context.new_page()
    run = SharedPage(page, variant)
    local = urlsplit(server_url)

    def guard(route: Route) -> None:
        target = urlsplit(route.request.url)
        if (target.scheme, target.netloc) == (local.scheme, local.netloc):
            route.fallback()
        else:
            run.external_requests.append(route.request.url)
            route.abort()

    try:
        context.route("**/*", guard)
        page.on("console", lambda message: run.console.append((message.type, message.text)))
        page.on("pageerror", lambda error: run.page_errors.append(str(error)))
        page.add_init_script(WITHIN)
        started = time.perf_counter()
        page.goto(server_url + path)
        page.wait_for_function("() => window.agentSurface")
        run.timings = settle(
            page, "window.agentSurface.ready.then(() => window.agentSurface.timings)", "boot", 120_000
        )
        run.timings["wallMs"] = round((time.perf_counter() - started) * 1000)
        yield run
    finally:
        context.close()
    if run.external_requests:
        pytest.fail(f"page requested external URLs (must be offline): {run.external_requests}")


@pytest.fixture(autouse=True)
def _screenshot_shared_page_on_failure(request: pytest.FixtureRequest) -> Iterator[None]:
    """open_page's screenshots, for the class-scoped pages (a failed call phase has been
    counted in session.testsfailed by the time this teardown runs)."""
    failed_before = request.session.testsfailed
    yield
    if request.session.testsfailed == failed_before:
        return
    for name in ("native", "polyfill", "provide_only"):
        if name in request.fixturenames:
            run: SharedPage = request.getfixturevalue(name)
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            shot = re.sub(r"[^\w.-]+", "_", request.node.nodeid.split("::", 1)[-1])
            try:
                run.page.screenshot(path=str(ARTIFACTS / f"{shot}.png"), full_page=True)
            except Exception as exc:  # a crashed page must not hide the real failure
                print(f"screenshot failed: {exc}")


# --------------------------------------------------------------------------- the agent: shape B

B_LIST = """async () => (await document.modelContext.getTools()).map(
    ({name, title, description, inputSchema, annotations}) =>
        ({name, title, description, inputSchema, annotations}))"""
B_NAMES = "async () => (await document.modelContext.getTools()).map((tool) => tool.name).sort()"
B_START = """([name, input, withSignal]) => {
    const agent = {settled: false, controller: withSignal ? new AbortController() : null};
    agent.promise = (async () => {
        const tool = (await document.modelContext.getTools()).find((t) => t.name === name);
        if (!tool) throw new Error(`no tool ${name}`);
        const options = agent.controller ? {signal: agent.controller.signal} : undefined;
        return await document.modelContext.executeTool(tool, input, options);
    })().finally(() => { agent.settled = true; });
    agent.promise.catch(() => {});  // handled: read later (an unhandled rejection is a page error)
    window.agentCall = agent;
}"""


def b_call(page: Page, name: str, tool_input: Any) -> dict[str, Any]:
    """executeTool resolves to the JSON text of what execute returned: the MCP-style content."""
    page.evaluate(B_START, [name, tool_input, False])
    return json.loads(settle(page, "window.agentCall.promise", f"agent call {name}"))


def payload(result: dict[str, Any]) -> Any:
    assert result["content"][0]["type"] == "text"
    return json.loads(result["content"][0]["text"])


# Playwright's wait_for_function does not await a promise (an async predicate is truthy at once),
# so the predicate starts one getTools() at a time and compares the last answer. Each wait gets a
# fresh holder: a listing started before the change cannot satisfy it.
WAIT_FOR_NAMES = """(expected) => {
    const poll = window.agentPoll;
    if (!poll.busy) {
        poll.busy = true;
        Promise.resolve((%s)())
            .then((names) => { poll.latest = JSON.stringify(names); })
            .finally(() => { poll.busy = false; });
    }
    return poll.latest === JSON.stringify(expected);
}"""


def wait_for_names(page: Page, names_js: str, expected: set[str]) -> None:
    """Poll the agent's tool list until it is exactly ``expected`` (the adapter settles async)."""
    page.evaluate("() => { window.agentPoll = {latest: null, busy: false}; }")
    try:
        page.wait_for_function(WAIT_FOR_NAMES % names_js, arg=sorted(expected), **POLL)
    except PlaywrightTimeout:
        current = set(listed(page, names_js))
        pytest.fail(
            f"tool list never became the expected set: missing {expected - current}, extra {current - expected}"
        )


def walk_keys(schema: Any) -> set[str]:
    if isinstance(schema, dict):
        return set(schema) | {k for value in schema.values() for k in walk_keys(value)}
    if isinstance(schema, list):
        return {k for value in schema for k in walk_keys(value)}
    return set()


def wait_dialog(page: Page, selector: str) -> str:
    page.wait_for_selector(selector, state="visible", timeout=15_000)
    return page.inner_text(selector)


# =========================================================================== shape B


@pytest.fixture(scope="class")
def native(browsers: Any, server_url: str) -> Iterator[SharedPage]:
    yield from _shared_page(browsers, server_url, NATIVE, "webmcp")


class TestNativeChromium:
    """Chromium 156 with WebMCPTesting: ``document.modelContext``, the adapter's "abortable" shape."""

    def test_tools_carry_wire_names_titles_inlined_schemas_and_truthful_hints(
        self, native: SharedPage, record_timing: Any
    ) -> None:
        record_timing(native.timings, "adapter page, WebMCPTesting")
        page = native.page
        state = native.state()
        assert state["shape"] == "abortable"
        assert page.evaluate("() => window.adapterPage.shape") == "abortable"
        assert state["wireNames"] == BOARD  # the authoritative way back to capability ids

        tools = {tool["name"]: tool for tool in listed(page, B_LIST)}
        assert set(tools) == set(BOARD)
        assert {name: tool["title"] for name, tool in tools.items()} == {
            "domain_board__archive": "Archive (board)",
            "domain_board__export": "Export (board)",
            "view_board__canvas__draw": "Draw (board canvas)",
            "view_board__canvas__eraseAll": "Erase all (board canvas)",
            "view_board__canvas__strokes": "Strokes (board canvas)",
            "view_board__canvas__undo": "Undo (board canvas)",
        }
        assert tools[ERASE]["description"] == (
            "[view · local-state · requires confirmation] Erase every stroke on the board."
        )
        assert tools["domain_board__archive"]["description"].startswith(
            "[domain · destructive · requires confirmation] "
        )

        for name, tool in tools.items():
            assert tool["inputSchema"]["type"] == "object", name
            assert not walk_keys(tool["inputSchema"]) & {"$ref", "$defs", "definitions"}, name
        draw = tools[DRAW]["inputSchema"]
        assert draw["required"] == ["label", "points"]
        point = draw["properties"]["points"]["items"]  # pydantic's $defs/Point, inlined
        assert point["type"] == "object" and point["required"] == ["x", "y"]
        assert point["properties"]["x"] == {"maximum": 1000, "minimum": 0, "title": "X", "type": "integer"}
        assert tools[EXPORT]["inputSchema"]["properties"]["format"]["enum"] == ["svg", "png"]

        hints = {name: tool["annotations"] for name, tool in tools.items()}
        assert {n for n, a in hints.items() if a["readOnlyHint"]} == READ_ONLY & set(BOARD)
        assert {n for n, a in hints.items() if a["consequentialHint"]} == CONSEQUENTIAL
        assert not any(a["untrustedContentHint"] for a in hints.values())
        native.assert_quiet()

    def test_execute_tool_reaches_the_registry_and_returns_results(self, native: SharedPage) -> None:
        page = native.page
        proxies = native.live_proxies()
        before = len(payload(b_call(page, STROKES, {})))
        drawn = b_call(page, DRAW, STROKE)
        assert "isError" not in drawn
        assert payload(drawn) == before + 1
        assert payload(b_call(page, STROKES, {}))[-1] == STROKE
        exported = b_call(page, EXPORT, {"format": "png"})
        assert payload(exported) == {"format": "png", "strokes": before + 1}
        state = native.state()
        assert state["strokes"][-1] == STROKE  # the page's own state changed, through the registry
        assert state["server"][-1] == ["domain:board.export", {"format": "png"}]  # the page's executor ran
        assert payload(b_call(page, UNDO, {})) == before
        assert native.live_proxies() == proxies  # a call's abort listener goes with the call
        native.assert_quiet()

    def test_bad_input_is_a_typed_error_in_content(self, native: SharedPage) -> None:
        page = native.page
        draws = native.state()["calls"].get("draw", 0)
        result = b_call(page, DRAW, {"label": "", "points": []})
        assert result["isError"] is True
        error = payload(result)
        assert error["code"] == "INVALID_INPUT"
        assert error["retry"] == "with-changes"
        assert {issue["path"] for issue in error["details"]["issues"]} == {"/label", "/points"}
        wrong_type = payload(b_call(page, DRAW, {"label": 5}))
        assert wrong_type["code"] == "INVALID_INPUT"
        assert {"path": "/points", "message": "Field required"} in wrong_type["details"]["issues"]
        assert native.state()["calls"].get("draw", 0) == draws  # the handler never ran
        native.assert_quiet()

    def test_surface_changes_reach_get_tools(self, native: SharedPage) -> None:
        page = native.page
        page.evaluate("() => window.adapterPage.mount()")
        wait_for_names(page, B_NAMES, set(BOARD) | set(PALETTE))
        tools = {tool["name"]: tool for tool in listed(page, B_LIST)}
        assert tools["view_board__palette__pick"]["inputSchema"]["properties"]["color"]["enum"] == [
            "black",
            "red",
            "blue",
        ]
        assert tools["view_board__palette__colors"]["annotations"]["readOnlyHint"] is True
        assert payload(b_call(page, "view_board__palette__pick", {"color": "red"})) == "red"
        assert native.state()["color"] == "red"

        page.evaluate("() => window.adapterPage.unmount()")
        wait_for_names(page, B_NAMES, set(BOARD))
        page.evaluate("() => window.adapterPage.setAvailable(false)")
        wait_for_names(page, B_NAMES, set(BOARD) - {UNDO})
        page.evaluate("() => window.adapterPage.setAvailable(true)")
        wait_for_names(page, B_NAMES, set(BOARD))
        assert native.state()["wireNames"] == BOARD
        native.assert_quiet()

    def test_confirmation_completes_after_a_real_click_on_approve(self, native: SharedPage) -> None:
        page = native.page
        b_call(page, DRAW, STROKE)
        strokes = len(native.state()["strokes"])
        page.evaluate(B_START, [ERASE, {}, False])
        summary = wait_dialog(page, "#confirm-dialog")
        assert "view:board.canvas.eraseAll" in summary
        assert native.state()["calls"].get("eraseAll", 0) == 0  # nothing ran before the decision
        page.click("#confirm-approve")
        result = json.loads(settle(page, "window.agentCall.promise", "agent call"))
        assert "isError" not in result and payload(result) == strokes
        state = native.state()
        assert state["strokes"] == [] and state["calls"]["eraseAll"] == 1
        assert state["counters"]["approvals"] == 1
        assert state["counters"]["hookPrompts"] == 0  # shape B has no requestUserInteraction
        assert state["pending"] == []
        assert page.is_hidden("#confirm-dialog")
        native.assert_quiet()

    def test_untrusted_click_does_not_approve_and_deny_fails_cleanly(self, native: SharedPage) -> None:
        page = native.page
        before = native.state()
        erased = before["calls"]["eraseAll"]
        page.evaluate(B_START, [ERASE, {}, False])
        wait_dialog(page, "#confirm-dialog")
        page.evaluate("() => document.getElementById('confirm-approve').click()")  # a script, not the user
        untrusted = before["counters"]["untrusted"] + 1
        page.wait_for_function(
            f"() => JSON.parse(window.adapterPage.state()).counters.untrusted === {untrusted}"
        )
        page.wait_for_timeout(300)  # room for a wrongly accepted approval to run the action
        state = native.state()
        assert state["counters"]["approvals"] == before["counters"]["approvals"]
        assert len(state["pending"]) == 1 and state["calls"]["eraseAll"] == erased
        assert page.evaluate("() => window.agentCall.settled") is False
        assert page.is_visible("#confirm-dialog")

        page.click("#confirm-deny")
        result = json.loads(settle(page, "window.agentCall.promise", "agent call"))
        assert result["isError"] is True
        error = payload(result)
        assert error["code"] == "CONFIRMATION_INVALID"
        assert error["details"] == {"reason": "denied"}
        state = native.state()
        assert state["calls"]["eraseAll"] == erased and state["counters"]["denials"] == 1
        assert state["pending"] == []
        native.assert_quiet()

    def test_the_agents_abort_signal_cancels_a_call_waiting_for_confirmation(
        self, native: SharedPage
    ) -> None:
        page = native.page
        baseline = native.live_proxies()
        erased = native.state()["calls"]["eraseAll"]
        page.evaluate(B_START, [ERASE, {}, True])
        wait_dialog(page, "#confirm-dialog")
        # No proxy per call: the abort listener is a JS closure that tells Python the call's id.
        assert native.live_proxies() == baseline
        page.evaluate("() => window.agentCall.controller.abort()")
        outcome = settle(page, "window.agentCall.promise.then(() => 'resolved', (e) => e.name)")
        assert outcome == "AbortError"
        page.wait_for_function(f"() => window.adapterPage.liveProxies() === {baseline}")
        # The record is withdrawn with the call: the page's dialog closes, and nothing is left
        # for a late approval to apply.
        page.wait_for_selector("#confirm-dialog", state="hidden", timeout=5_000)
        state = native.state()
        assert state["calls"]["eraseAll"] == erased and state["pending"] == []
        native.assert_quiet()

    def test_a_thousand_mount_cycles_leave_the_live_proxy_count_where_it_started(
        self, native: SharedPage, record_timing: Any
    ) -> None:
        check_churn(native, 1000, B_NAMES, record_timing, "WebMCPTesting")

    def test_stop_leaves_no_tools_and_no_proxies(self, native: SharedPage) -> None:
        page = native.page
        erased = native.state()["calls"]["eraseAll"]
        settle(page, "document.modelContext.getTools().then((tools) => { window.keptTool = tools[0]; })")
        page.evaluate(B_START, [ERASE, {}, False])
        wait_dialog(page, "#confirm-dialog")  # stop() with a call waiting for the user
        state = json.loads(settle(page, "window.adapterPage.stop()"))
        waiting = json.loads(settle(page, "window.agentCall.promise", "the waiting call"))
        assert waiting["isError"] is True
        assert payload(waiting)["code"] == "CONFIRMATION_REQUIRED"  # the original answer
        page.click("#confirm-approve")  # a late approval of the leftover record runs nothing
        page.wait_for_timeout(200)
        assert native.state()["calls"]["eraseAll"] == erased
        assert state["tools"] == [] and state["wireNames"] == {}
        # stop() resolves before the aborted call unwinds; its abort listener goes with it.
        assert native.live_proxies() == 0
        assert listed(page, B_NAMES) == []
        stale = settle(
            page, "document.modelContext.executeTool(window.keptTool, {}).then(() => 'ran', (e) => e.name)"
        )
        assert stale != "ran"  # a tool the agent kept cannot be executed after stop()
        settle(page, "window.adapterPage.stop()")  # idempotent
        page.evaluate("() => window.adapterPage.mount()")  # surface changes after stop reach nobody
        page.wait_for_timeout(200)
        assert listed(page, B_NAMES) == []
        native.assert_quiet()


# =========================================================================== shape A (polyfill)

A_NAMES = "() => navigator.modelContextTesting.listTools().map((tool) => tool.name).sort()"
# The polyfill's listTools() gives name/description/inputSchema only; the annotations it was
# handed live in its own tool map (navigator.modelContext.tools, a public field of its class).
A_LIST = """() => navigator.modelContextTesting.listTools().map((tool) => ({
    ...tool,
    inputSchema: JSON.parse(tool.inputSchema),
    annotations: navigator.modelContext.tools.get(tool.name).annotations ?? null,
}))"""
A_START = """([name, input]) => {
    const agent = {settled: false};
    agent.promise = navigator.modelContextTesting.executeTool(name, JSON.stringify(input))
        .finally(() => { agent.settled = true; });
    agent.promise.catch(() => {});
    window.agentCall = agent;
}"""
A_OUTCOME = """window.agentCall.promise.then(
    (text) => ({ok: true, text}), (e) => ({ok: false, name: e.name, message: e.message}))"""


def a_call(page: Page, name: str, tool_input: Any) -> dict[str, Any]:
    """The shim resolves to the JSON of the CallToolResult, and REJECTS (UnknownError) when the
    tool failed or isError is set: then the text is in the rejection's message."""
    page.evaluate(A_START, [name, tool_input])
    return a_outcome(page)


def a_outcome(page: Page) -> dict[str, Any]:
    outcome = settle(page, A_OUTCOME, "agent call")
    if outcome["ok"]:
        result = json.loads(outcome["text"])
        assert result.get("isError") is not True
        return {"ok": True, "output": payload(result)}
    assert outcome["name"] == "UnknownError", outcome
    return {"ok": False, "message": outcome["message"]}


def check_shape_a_listing(run: SharedPage, shape: str) -> None:
    page = run.page
    assert run.state()["shape"] == shape
    assert page.evaluate("() => 'modelContext' in document") is False
    assert page.evaluate("() => navigator.modelContext.__isWebMCPPolyfill") is True
    tools = {tool["name"]: tool for tool in page.evaluate(A_LIST)}
    assert set(tools) == set(BOARD)
    for name, tool in tools.items():
        assert not walk_keys(tool["inputSchema"]) & {"$ref", "$defs", "definitions"}, name
        # The draft's tool shape knows readOnlyHint only (no title, no consequentialHint).
        expected = {"readOnlyHint": True} if name in READ_ONLY else None
        assert tool["annotations"] == expected, name
    assert tools[DRAW]["inputSchema"]["properties"]["points"]["items"]["required"] == ["x", "y"]


def check_shape_a_execution(run: SharedPage) -> None:
    page = run.page
    before = len(a_call(page, STROKES, {})["output"])
    assert a_call(page, DRAW, STROKE) == {"ok": True, "output": before + 1}
    assert a_call(page, EXPORT, {"format": "svg"}) == {
        "ok": True,
        "output": {"format": "svg", "strokes": before + 1},
    }
    assert run.state()["server"][-1] == ["domain:board.export", {"format": "svg"}]
    # The polyfill validates input against the tool's schema before execute: bad input never
    # reaches the registry (its own error text, not our INVALID_INPUT).
    draws = run.state()["calls"]["draw"]
    bad = a_call(page, DRAW, {"label": "", "points": []})
    assert bad["ok"] is False and bad["message"].startswith("Input validation error")
    assert run.state()["calls"]["draw"] == draws
    assert a_call(page, UNDO, {}) == {"ok": True, "output": before}


def check_shape_a_surface_changes(run: SharedPage) -> None:
    page = run.page
    page.evaluate("() => window.adapterPage.mount()")
    wait_for_names(page, A_NAMES, set(BOARD) | set(PALETTE))
    assert a_call(page, "view_board__palette__pick", {"color": "blue"}) == {"ok": True, "output": "blue"}
    page.evaluate("() => window.adapterPage.unmount()")
    wait_for_names(page, A_NAMES, set(BOARD))
    page.evaluate("() => window.adapterPage.setAvailable(false)")
    wait_for_names(page, A_NAMES, set(BOARD) - {UNDO})
    page.evaluate("() => window.adapterPage.setAvailable(true)")
    wait_for_names(page, A_NAMES, set(BOARD))


def check_hook_approves(run: SharedPage) -> None:
    """requestUserInteraction: the polyfill's shim hands execute a client whose
    requestUserInteraction(cb) simply runs cb(); our confirm hook opens the page's prompt."""
    page = run.page
    a_call(page, DRAW, STROKE)
    strokes = len(run.state()["strokes"])
    before = run.state()["counters"]
    proxies = run.live_proxies()
    page.evaluate(A_START, [ERASE, {}])
    assert "Erase every stroke" in wait_dialog(page, "#interaction-dialog")
    assert run.live_proxies() == proxies + 1  # the callback handed to requestUserInteraction
    state = run.state()
    assert state["hookClients"][-1] == ["requestUserInteraction"]  # the polyfill's client, as passed
    page.evaluate("() => document.getElementById('interaction-approve').click()")  # untrusted
    page.wait_for_timeout(300)
    assert page.evaluate("() => window.agentCall.settled") is False
    page.click("#interaction-approve")
    assert a_outcome(page) == {"ok": True, "output": strokes}
    state = run.state()
    assert state["counters"]["hookPrompts"] == before["hookPrompts"] + 1
    assert state["counters"]["hookAnswers"] == before["hookAnswers"] + 1
    assert state["counters"]["untrusted"] == before["untrusted"] + 1
    assert state["counters"]["approvals"] == before["approvals"]  # not through the host dialog
    assert state["pending"] == [] and state["strokes"] == []
    assert page.is_hidden("#interaction-dialog") and page.is_hidden("#confirm-dialog")
    assert run.live_proxies() == proxies


def check_hook_denies(run: SharedPage) -> None:
    page = run.page
    erased = run.state()["calls"]["eraseAll"]
    page.evaluate(A_START, [ERASE, {}])
    wait_dialog(page, "#interaction-dialog")
    page.click("#interaction-deny")
    outcome = a_outcome(page)
    assert outcome["ok"] is False
    # isError makes the shim throw, and its own catch re-wraps that: "Tool was executed but the
    # invocation failed. ...: " + our error object (code, retry, details intact).
    prefix, _, text = outcome["message"].partition(": {")
    assert prefix.startswith("Tool was executed but the invocation failed")
    error = json.loads("{" + text)
    assert error["code"] == "CONFIRMATION_INVALID" and error["details"] == {"reason": "denied"}
    assert run.state()["calls"]["eraseAll"] == erased


def check_churn(run: SharedPage, cycles: int, names_js: str, record_timing: Any, shape: str) -> None:
    """Mount and unmount the palette ``cycles`` times: the live proxy count and the browser's
    tools end where they started, and only the palette's two tools come and go."""
    started = time.perf_counter()
    churn = json.loads(settle(run.page, f"window.adapterPage.churn({cycles})", ms=120_000))
    record_timing(
        {"cycles": cycles, "ms": round((time.perf_counter() - started) * 1000)},
        f"{cycles} mount/unmount cycles, {shape}",
    )
    assert churn["peak"] == churn["before"] + 2  # the palette's two tools while mounted
    assert churn["after"] == churn["before"] == len(BOARD)
    wait_for_names(run.page, names_js, set(BOARD))
    run.assert_quiet()


def check_stop(run: SharedPage) -> None:
    page = run.page
    closed = run.state()["counters"]["hookClosed"]
    page.evaluate(A_START, [ERASE, {}])
    wait_dialog(page, "#interaction-dialog")  # stop() with the in-call prompt open
    state = json.loads(settle(page, "window.adapterPage.stop()"))
    outcome = a_outcome(page)
    assert outcome["ok"] is False and '"code":"CONFIRMATION_REQUIRED"' in outcome["message"]
    page.wait_for_selector("#interaction-dialog", state="hidden", timeout=5_000)  # hook cancelled
    assert run.state()["counters"]["hookClosed"] == closed + 1
    assert state["tools"] == []
    page.wait_for_function("() => window.adapterPage.liveProxies() === 0")  # once the call unwound
    assert page.evaluate(A_NAMES) == []
    settle(page, "window.adapterPage.stop()")  # idempotent
    page.evaluate("() => window.adapterPage.mount()")
    page.wait_for_timeout(200)
    assert page.evaluate(A_NAMES) == []


@pytest.fixture(scope="class")
def polyfill(browsers: Any, server_url: str) -> Iterator[SharedPage]:
    yield from _shared_page(browsers, server_url, POLYFILL, "plain")


class TestPolyfillIncremental:
    """@mcp-b/webmcp-polyfill 2.3.2 on ``navigator.modelContext``: registerTool/unregisterTool."""

    def test_tools_listed_with_read_only_hints(self, polyfill: SharedPage, record_timing: Any) -> None:
        record_timing(polyfill.timings, "adapter page, polyfill")
        check_shape_a_listing(polyfill, "incremental")
        polyfill.assert_quiet()

    def test_execute_tool_through_the_testing_shim(self, polyfill: SharedPage) -> None:
        check_shape_a_execution(polyfill)
        polyfill.assert_quiet()

    def test_surface_changes_are_registered_and_unregistered(self, polyfill: SharedPage) -> None:
        check_shape_a_surface_changes(polyfill)
        polyfill.assert_quiet()

    def test_confirm_hook_approves_through_request_user_interaction(self, polyfill: SharedPage) -> None:
        check_hook_approves(polyfill)
        polyfill.assert_quiet()

    def test_confirm_hook_denial_is_confirmation_invalid(self, polyfill: SharedPage) -> None:
        check_hook_denies(polyfill)
        polyfill.assert_quiet()

    def test_host_dialog_deciding_while_the_prompt_is_open_settles_the_call(
        self, polyfill: SharedPage
    ) -> None:
        """Both UIs are up (the host dialog lists every pending confirmation); the user answers in
        the host's: the call completes and the hook's prompt is cancelled (it closes)."""
        page = polyfill.page
        a_call(page, DRAW, STROKE)
        strokes = len(polyfill.state()["strokes"])
        before = polyfill.state()["counters"]
        page.evaluate(A_START, [ERASE, {}])
        wait_dialog(page, "#interaction-dialog")
        wait_dialog(page, "#confirm-dialog")
        page.click("#confirm-approve")
        assert a_outcome(page) == {"ok": True, "output": strokes}
        page.wait_for_selector("#interaction-dialog", state="hidden", timeout=5_000)
        page.wait_for_function(f"() => window.adapterPage.liveProxies() === {len(BOARD)}")
        counters = polyfill.state()["counters"]
        assert counters["approvals"] == before["approvals"] + 1
        assert counters["hookClosed"] == before["hookClosed"] + 1
        assert counters["hookAnswers"] == before["hookAnswers"]  # the prompt never answered
        polyfill.assert_quiet()

    def test_a_thousand_mount_cycles_leave_the_live_proxy_count_where_it_started(
        self, polyfill: SharedPage, record_timing: Any
    ) -> None:
        check_churn(polyfill, 1000, A_NAMES, record_timing, "polyfill")

    def test_stop_leaves_no_tools(self, polyfill: SharedPage) -> None:
        check_stop(polyfill)
        polyfill.assert_quiet()


@pytest.fixture(scope="class")
def provide_only(browsers: Any, server_url: str) -> Iterator[SharedPage]:
    yield from _shared_page(browsers, server_url, PROVIDE, "plain")


class TestPolyfillProvideContextOnly:
    """The same draft without registerTool/unregisterTool (removed by the page before our script
    runs): the adapter falls back to provideContext, re-sending the whole set on each change."""

    def test_the_adapter_uses_provide_context(self, provide_only: SharedPage, record_timing: Any) -> None:
        record_timing(provide_only.timings, "adapter page, polyfill without registerTool")
        page = provide_only.page
        assert (
            page.evaluate(
                "() => ['registerTool', 'unregisterTool'].some((name) => name in navigator.modelContext)"
            )
            is False
        )
        check_shape_a_listing(provide_only, "provide")
        provide_only.assert_quiet()

    def test_execute_tool_and_surface_changes(self, provide_only: SharedPage) -> None:
        check_shape_a_execution(provide_only)
        check_shape_a_surface_changes(provide_only)
        provide_only.assert_quiet()

    def test_confirm_hook_approves_and_denies(self, provide_only: SharedPage) -> None:
        check_hook_approves(provide_only)
        check_hook_denies(provide_only)
        provide_only.assert_quiet()

    def test_mount_cycles_leave_the_live_proxy_count_where_it_started(
        self, provide_only: SharedPage, record_timing: Any
    ) -> None:
        # Every provideContext call re-creates the whole set's proxies and releases the old ones.
        check_churn(provide_only, 200, A_NAMES, record_timing, "polyfill, provideContext only")

    def test_stop_clears_the_context(self, provide_only: SharedPage) -> None:
        check_stop(provide_only)
        provide_only.assert_quiet()


# =========================================================================== no WebMCP


def test_without_webmcp_the_page_works_and_nothing_is_registered(open_page: Any, record_timing: Any) -> None:
    run = open_page(NATIVE, variant="plain", before_goto=lambda run: run.page.add_init_script(WITHIN))
    record_timing(run.wait_ready(), "adapter page, no WebMCP")
    page = run.page
    assert page.evaluate(
        "() => ({document: 'modelContext' in document, navigator: 'modelContext' in navigator,"
        " testing: 'modelContextTesting' in navigator})"
    ) == {"document": False, "navigator": False, "testing": False}
    assert page.inner_text("#status") == "ready"
    state = json.loads(page.evaluate("() => window.adapterPage.state()"))
    assert state["shape"] is None and page.evaluate("() => window.adapterPage.shape") is None
    assert state["tools"] == [] and state["wireNames"] == {} and state["liveProxies"] == 0
    assert state["diagnostics"] == []
    # The app itself keeps working: components mount, the page renders, stop() is a no-op.
    assert page.inner_text("#palette") == "no palette"
    page.evaluate("() => window.adapterPage.mount()")
    assert page.inner_text("#palette") == "palette mounted"
    page.evaluate("() => window.adapterPage.setAvailable(false)")
    page.evaluate("() => window.adapterPage.unmount()")
    state = json.loads(settle(page, "window.adapterPage.stop()"))
    assert state["tools"] == [] and state["liveProxies"] == 0
    assert run.console_errors == []
