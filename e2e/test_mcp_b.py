"""The MCP-B extension path: ``@mcp-b/global`` 5.x as the page's model-context provider, and an MCP
client over ``@mcp-b/transports`` (the tab client transport, the way MCP-B's extension reaches a
page) listing and calling the tools our ``WebMCPAdapter`` registered into it.

The page (e2e/pages/mcp-b.html) loads @mcp-b/global's IIFE from the e2e npm tools (e2e/npm,
installed by scripts/test.sh), then the notes page of the agent-client tests
(e2e/pages/agent-client.py) under our runtime, then the client: e2e/npm/src/mcp-b-client.js with the
official MCP SDK's client (``@modelcontextprotocol/sdk`` 1.x, and ``@modelcontextprotocol/client``
2.x, the line @mcp-b 5.x is built on), bundled here by esbuild (pinned in
e2e/npm/package.json) into e2e/npm/dist/ (ignored by git). Twice: in Chromium without the WebMCP
flag (@mcp-b/global installs its polyfill) and with it (@mcp-b/global wraps Chromium's own
``document.modelContext``); either way our adapter sees the ``document.modelContext`` shape.

Covered: the tools as our adapter registered them (names, descriptions, input schemas; MCP-B
forwards the MCP hints only, not ``consequentialHint``), an ok write and read, bad input (MCP-B's
MCP server checks the input schema itself; what the schema cannot say reaches us, and our typed
INVALID_INPUT payload reaches the client), a tool appearing and disappearing with
``notifications/tools/list_changed`` when the page's archive opens and closes, an unknown tool, a
consequential call that waits for the person's trusted click (approved, then denied with our
CONFIRMATION_INVALID), and per-call p50 through MCP-B against the page's own ``executeTool``.
"""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page

from notes_page import ADD, ARCHIVED, CLEAR, LIST, NOTES

NPM = Path(__file__).resolve().parent / "npm"
ENTRY = NPM / "src" / "mcp-b-client.js"
BUNDLE = NPM / "dist" / "mcp-b-client.js"
PAGE = "/e2e/pages/mcp-b.html"

MCP_HINTS = {"readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"}


@pytest.fixture(scope="module")
def mcp_b_client_bundle() -> Path:
    """Bundle the page's MCP client (ESM with dependencies) with the pinned esbuild."""
    esbuild = NPM / "node_modules" / ".bin" / "esbuild"
    if not esbuild.exists() or not (NPM / "node_modules" / "@mcp-b" / "global").is_dir():
        pytest.fail("the e2e npm tools are not installed: npm ci --prefix e2e/npm", pytrace=False)
    result = subprocess.run(
        [
            str(esbuild),
            str(ENTRY),
            "--bundle",
            "--format=esm",
            "--platform=browser",
            "--log-level=warning",
            f"--outfile={BUNDLE}",
        ],
        cwd=NPM,
        capture_output=True,
        text=True,
        timeout=60,
    )
    if result.returncode != 0:
        pytest.fail(f"esbuild failed:\n{result.stdout}{result.stderr}", pytrace=False)
    return BUNDLE


def mcp(page: Page, expression: str, *args: Any) -> Any:
    """Evaluate ``expression`` in the page, on ``mcpB`` (the page's MCP client) and up to two
    arguments ``a`` and ``b``."""
    assert len(args) <= 2
    return page.evaluate(f"(args) => ((mcpB, a, b) => {expression})(window.mcpB, ...args)", list(args))


def payload(result: dict[str, Any]) -> Any:
    """Our JSON payload, from the one text item of an MCP tool result."""
    texts = [item["text"] for item in result["content"] if item["type"] == "text"]
    assert len(texts) == 1, result
    return json.loads(texts[0])


def adapter_tools(page: Page) -> dict[str, dict[str, Any]]:
    """The tools our adapter registered, as the page's Python sees them."""
    code = (
        "import json\n"
        "json.dumps({t.name: {'description': t.description, 'inputSchema': dict(t.input_schema),"
        " 'annotations': dict(t.annotations)} for t in adapter.exposed_tools})"
    )
    return json.loads(page.evaluate("(code) => window.agentSurface.pyodide.runPython(code)", code))


def wait_for(predicate: Any, what: str, timeout_s: float = 20.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


P50_JS = """async ([call, n]) => {
  const times = [];
  for (let i = 0; i < n; i++) {
    const started = performance.now();
    await call();
    times.push(performance.now() - started);
  }
  times.sort((x, y) => x - y);
  return times[Math.floor(n / 2)];
}"""


def p50_ms(page: Page, call: str, n: int = 20) -> float:
    """The median of ``n`` sequential awaits of the JS expression ``call``, timed in the page."""
    return float(
        page.evaluate(P50_JS.replace("await call()", f"await ({call})").replace("[call, n]", "[n]"), [n])
    )


@pytest.mark.parametrize(
    ("variant", "sdk"),
    [
        # no WebMCP flag: @mcp-b/global installs its polyfill; the client is @modelcontextprotocol/sdk 1.x
        pytest.param("plain", "sdk", id="polyfilled-sdk1"),
        # @mcp-b/global wraps Chromium's document.modelContext; the client is the SDK's v2 line
        pytest.param("webmcp", "v2", id="over-native-client2"),
    ],
)
def test_mcp_client_over_mcp_b_lists_and_calls_our_tools(
    open_page: Any, mcp_b_client_bundle: Path, record_timing: Any, variant: str, sdk: str
) -> None:
    run = open_page(PAGE, variant=variant)
    timings = run.wait_ready()
    page = run.page
    state = json.loads(page.evaluate("() => window.notesPage.state()"))
    assert state["shape"] == "abortable", state  # registerTool(tool, {signal}) on document.modelContext
    assert state["diagnostics"] == [], state
    assert page.evaluate("() => typeof document.modelContext.listTools") == "function"  # MCP-B's server

    started = time.perf_counter()
    info = mcp(page, "mcpB.connect(a)", sdk)
    connect_ms = (time.perf_counter() - started) * 1000
    assert info["capabilities"]["tools"]["listChanged"] is True, info

    # ---- tools/list: our tools, one to one, as the adapter registered them
    started = time.perf_counter()
    tools = {tool["name"]: tool for tool in mcp(page, "mcpB.listTools()")}
    list_ms = (time.perf_counter() - started) * 1000
    assert sorted(tools) == LIST
    registered = adapter_tools(page)
    assert sorted(registered) == LIST
    for name, ours in registered.items():
        assert tools[name]["description"] == ours["description"], name
        assert tools[name]["inputSchema"] == ours["inputSchema"], name
        # MCP-B keeps the MCP hints (readOnly, destructive, idempotent, openWorld) and drops
        # others: our consequentialHint does not reach the MCP client on this path.
        standard = {hint: value for hint, value in ours["annotations"].items() if hint in MCP_HINTS}
        seen = {hint: value for hint, value in tools[name]["annotations"].items() if hint in MCP_HINTS}
        assert seen == standard, (name, tools[name], ours)
        assert "consequentialHint" not in tools[name]["annotations"]
    assert registered[CLEAR]["annotations"]["consequentialHint"] is True
    # ...but MCP's destructiveHint, registered beside it, does: the client knows what needs the person.
    assert tools[CLEAR]["annotations"]["destructiveHint"] is True
    assert tools[ADD]["annotations"]["destructiveHint"] is False
    assert tools[ADD]["description"].endswith("Add a note.")
    assert tools[ADD]["inputSchema"]["required"] == ["text"]
    assert tools[ADD]["inputSchema"]["properties"]["text"]["minLength"] == 1
    assert tools[NOTES]["annotations"]["readOnlyHint"] is True

    # ---- tools/call: an ok write and read
    added = mcp(page, "mcpB.callTool(a, b)", ADD, {"text": "buy milk"})
    assert not added.get("isError"), added
    assert payload(added) == 1
    started = time.perf_counter()
    read = mcp(page, "mcpB.callTool(a, {})", NOTES)
    call_ms = (time.perf_counter() - started) * 1000
    assert not read.get("isError"), read
    assert payload(read) == ["buy milk"]

    # ---- bad input. What the input schema says, MCP-B's MCP server (the SDK's McpServer) checks
    # itself: refused with its own message before our code runs.
    refused = mcp(page, "mcpB.callTool(a, b)", ADD, {"text": ""})
    assert refused["isError"] is True, refused
    assert "Input validation error" in refused["content"][0]["text"], refused
    assert "String is too short" in refused["content"][0]["text"], refused
    # What the schema cannot say (here: a lone surrogate is not Unicode text), we refuse, and our
    # typed error payload reaches the MCP client as the tool result.
    bad = mcp(page, "mcpB.callTool(a, b)", ADD, {"text": "bad \ud800 note"})
    assert bad["isError"] is True, bad
    error = payload(bad)
    assert error["code"] == "INVALID_INPUT", error
    assert error["retry"] == "with-changes" and "lone surrogate" in error["message"]
    assert [issue["path"] for issue in error["details"]["issues"]] == ["/text"]
    assert json.loads(page.evaluate("() => window.notesPage.state()"))["notes"] == ["buy milk"]

    # ---- a surface change: the archive mounts (tool appears, list_changed), then unmounts
    before = mcp(page, "mcpB.listChanges()")
    started = time.perf_counter()
    page.click("#toggle-archive")
    wait_for(lambda: mcp(page, "mcpB.listChanges()") > before, "tools/list_changed after mounting")
    list_changed_ms = (time.perf_counter() - started) * 1000
    wait_for(lambda: ARCHIVED in [t["name"] for t in mcp(page, "mcpB.listTools()")], "the archive's tool")
    archived = mcp(page, "mcpB.callTool(a, {})", ARCHIVED)
    assert not archived.get("isError"), archived
    assert payload(archived) == ["old note"]

    before = mcp(page, "mcpB.listChanges()")
    page.click("#toggle-archive")
    wait_for(lambda: mcp(page, "mcpB.listChanges()") > before, "tools/list_changed after unmounting")
    wait_for(
        lambda: sorted(t["name"] for t in mcp(page, "mcpB.listTools()")) == LIST, "the archive's tool gone"
    )

    # ---- a tool that does not exist (any more): the client is told so, nothing runs
    gone = mcp(
        page,
        "mcpB.callTool(a, {}).then((r) => ({result: r}), (e) => ({error: String(e && e.message || e)}))",
        ARCHIVED,
    )
    assert ARCHIVED in json.dumps(gone), gone
    assert gone.get("error") or gone["result"].get("isError") is True, gone

    # ---- a consequential call: the MCP client's call waits for the person, whose trusted click
    # on the page's dialog decides it (a script's click does not)
    start_clear = """(name) => {
      window.clearCall = window.mcpB.callTool(name, {}).then(
        (result) => ({result}), (error) => ({error: String(error)}));
    }"""
    page.evaluate(start_clear, CLEAR)
    page.wait_for_selector("#agentsurface-confirm-approve:not([disabled])")
    assert "view:notes.list.clear" in page.inner_text("#confirm-summary")
    page.evaluate("() => document.getElementById('agentsurface-confirm-approve').click()")
    page.wait_for_function("() => JSON.parse(window.notesPage.state()).untrusted === 1")
    assert json.loads(page.evaluate("() => window.notesPage.state()"))["notes"] == ["buy milk"]
    page.click("#agentsurface-confirm-approve")
    approved = page.evaluate("() => window.clearCall")
    assert not approved["result"].get("isError"), approved
    assert payload(approved["result"]) == 1
    assert json.loads(page.evaluate("() => window.notesPage.state()"))["notes"] == []

    mcp(page, "mcpB.callTool(a, b)", ADD, {"text": "keep me"})
    page.evaluate(start_clear, CLEAR)
    page.wait_for_selector("#agentsurface-confirm-deny:not([disabled])")
    page.click("#agentsurface-confirm-deny")
    denied = page.evaluate("() => window.clearCall")["result"]
    assert denied["isError"] is True, denied
    refusal = payload(denied)
    assert refusal["code"] == "CONFIRMATION_INVALID" and refusal["details"] == {"reason": "denied"}, refusal
    assert json.loads(page.evaluate("() => window.notesPage.state()"))["notes"] == ["keep me"]

    # ---- per-call p50: through MCP-B's MCP server vs the page's own executeTool (Chromium's takes
    # the input as an object, the polyfill's as JSON text)
    empty = "{}" if variant == "webmcp" else "'{}'"
    mcp_p50 = p50_ms(page, f"mcpB.callTool({NOTES!r}, {{}})")
    page.evaluate(
        "(name) => document.modelContext.getTools()"
        ".then((ts) => { window.notesTool = ts.find((t) => t.name === name); })",
        NOTES,
    )
    direct_p50 = p50_ms(page, f"document.modelContext.executeTool(window.notesTool, {empty})")

    record_timing(
        {
            "callP50Ms": round(mcp_p50, 1),
            "inPageExecuteToolP50Ms": round(direct_p50, 1),
            "bootMs": timings.get("wallMs"),
            "connectMs": round(connect_ms),
            "toolsListMs": round(list_ms),
            "callMs": round(call_ms),
            "listChangedMs": round(list_changed_ms),
        },
        label=f"MCP-B {variant}, SDK {sdk} (in-page MCP client over @mcp-b/transports)",
    )
