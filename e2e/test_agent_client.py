"""The WebMCP agent client (``agentsurface.testing.WebMCPAgent`` and the ``webmcp_agent``
fixture) is a product: here it drives a small notes page (e2e/pages/agent-client*.py) in
Chromium 156 on the native ``document.modelContext`` and on the polyfill's testing shim.

Covered: listing (names, titles, schemas, hints), calls with parsed typed results, a clear error
for a tool that does not exist, waiting for tools that the page's own button mounts and unmounts
(and a clear error when one never appears or never goes), approving and denying the page's dialog
with trusted clicks (a script's click does not approve), call timeouts and cancellation, a page
without WebMCP, and the pytest fixture on pytest-playwright's ``page``. Playwright stays optional.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page

from agentsurface.testing import (
    AgentClientError,
    DialogSelectors,
    ToolCallRejected,
    ToolNotFound,
    WebMCPAgent,
    with_webmcp,
)
from agentsurface.testing.webmcp_results import result_from_outcome
from notes_page import ADD, ARCHIVED, CLEAR, LIST, NOTES, WAIT

NATIVE = "/e2e/pages/agent-client.html"
POLYFILL = "/e2e/pages/agent-client-polyfill.html"


def open_notes(open_page: Any, path: str, variant: str) -> tuple[Any, WebMCPAgent]:
    run = open_page(path, variant=variant)
    run.wait_ready()
    agent = WebMCPAgent(run.page, timeout_ms=20_000)
    agent.wait_for_tool(NOTES)
    return run, agent


def page_state(page: Page) -> dict[str, Any]:
    return json.loads(page.evaluate("() => window.notesPage.state()"))


# =========================================================================== native shape


def test_lists_and_calls_tools_with_typed_results(open_page: Any) -> None:
    run, agent = open_notes(open_page, NATIVE, "webmcp")
    assert agent.shape == "native"
    assert agent.tool_names() == LIST
    add = agent.tool(ADD)
    assert add.title == "Add (notes list)"
    assert add.description.endswith("Add a note.")
    assert add.input_schema is not None and add.input_schema["required"] == ["text"]
    assert agent.tool(NOTES).annotations["readOnlyHint"] is True
    assert agent.tool(CLEAR).annotations["consequentialHint"] is True

    assert agent.call(ADD, {"text": "buy milk"}).expect_ok() == 1
    result = agent.call(NOTES)
    assert result.ok and result.output == ["buy milk"] and result.error is None
    assert result.content["content"][0]["type"] == "text"

    bad = agent.call(ADD, {"text": ""})
    assert not bad.ok and bad.output is None
    error = bad.expect_error("INVALID_INPUT")
    assert error.retry == "with-changes" and error.message
    assert [issue["path"] for issue in error.details["issues"]] == ["/text"]
    with pytest.raises(AssertionError, match="INVALID_INPUT"):
        bad.expect_ok()
    with pytest.raises(AssertionError, match="expected error NOT_FOUND"):
        bad.expect_error("NOT_FOUND")
    assert page_state(run.page)["notes"] == ["buy milk"]  # the invalid call never ran

    with pytest.raises(ToolNotFound, match=r"no tool 'view_notes__list__remove'") as missing:
        agent.call("view_notes__list__remove", {})
    assert missing.value.listed == LIST


def test_waits_for_tools_the_page_mounts_and_unmounts(open_page: Any) -> None:
    run, agent = open_notes(open_page, NATIVE, "webmcp")
    with pytest.raises(ToolNotFound, match=r"'view_notes__archive__archived' never appeared within 300 ms"):
        agent.wait_for_tool(ARCHIVED, timeout_ms=300)

    run.page.click("#toggle-archive")  # the person opens the archive: its component mounts
    tool = agent.wait_for_tool(ARCHIVED)
    assert tool.annotations["readOnlyHint"] is True
    assert agent.call(ARCHIVED).expect_ok() == ["old note"]
    with pytest.raises(ToolNotFound, match="never went away within 300 ms") as stuck:
        agent.wait_for_tool_gone(ARCHIVED, timeout_ms=300)
    assert ARCHIVED in stuck.value.listed

    run.page.click("#toggle-archive")
    agent.wait_for_tool_gone(ARCHIVED)
    assert agent.tool_names() == LIST
    assert page_state(run.page)["archiveOpen"] is False


# Keeps toolchange events from the agent runtime's own listener (registered on its first call,
# so after this one): its map of tool objects then goes stale, as in a race with a change.
_DEAFEN_RUNTIME = """() => document.modelContext.addEventListener("toolchange", (event) => {
  if (window.__deafRuntime !== false) event.stopImmediatePropagation();
})"""
_RUN = "([name]) => window.__agentSurfaceAgent.run('stale-' + Math.random(), name, {})"


def test_a_tool_gone_since_the_agent_last_called_it_is_not_found(open_page: Any) -> None:
    run, agent = open_notes(open_page, NATIVE, "webmcp")
    run.page.evaluate(_DEAFEN_RUNTIME)
    run.page.click("#toggle-archive")
    agent.wait_for_tool(ARCHIVED)
    assert agent.call(ARCHIVED).expect_ok() == ["old note"]  # the runtime now holds its tool object

    run.page.click("#toggle-archive")
    agent.wait_for_tool_gone(ARCHIVED)
    outcome = run.page.evaluate(_RUN, [ARCHIVED])  # the held object is stale: not an UnknownError
    assert outcome == {"rejected": "NotFoundError", "message": f"no tool {ARCHIVED}"}

    run.page.click("#toggle-archive")  # back under the same name: called, once
    agent.wait_for_tool(ARCHIVED)
    assert result_from_outcome(ARCHIVED, run.page.evaluate(_RUN, [ARCHIVED])).expect_ok() == ["old note"]
    assert agent.call(ADD, {"text": "x"}).expect_ok() == 1
    assert page_state(run.page)["notes"] == ["x"]
    assert run.page.evaluate("() => Object.keys(window.__agentSurfaceAgent.calls).length") == 0


def test_approves_and_denies_with_trusted_clicks(open_page: Any) -> None:
    run, agent = open_notes(open_page, NATIVE, "webmcp")
    agent.call(ADD, {"text": "a"}).expect_ok()
    agent.call(ADD, {"text": "b"}).expect_ok()

    pending = agent.start(CLEAR)
    assert "view:notes.list.clear" in agent.wait_for_dialog()
    # A script's click is not the person's: it never approves (once the buttons accept input).
    run.page.wait_for_selector("#agentsurface-confirm-approve:not([disabled])")
    run.page.evaluate("() => document.getElementById('agentsurface-confirm-approve').click()")
    run.page.wait_for_function("() => JSON.parse(window.notesPage.state()).untrusted === 1", timeout=5_000)
    assert not pending.settled and page_state(run.page)["notes"] == ["a", "b"]

    seen = agent.approve()  # waits out the dialog's input protection, then a real click
    assert "Remove every note" in seen
    assert pending.result().expect_ok() == 2
    assert pending.settled and pending.result().output == 2  # read once, kept
    state = page_state(run.page)
    assert state["notes"] == [] and state["cleared"] == 1 and state["pending"] == []
    assert run.page.is_hidden("#agentsurface-confirm-dialog")

    agent.call(ADD, {"text": "c"}).expect_ok()
    pending = agent.start(CLEAR)
    agent.deny()
    error = pending.result().expect_error("CONFIRMATION_INVALID")
    assert error.details == {"reason": "denied"} and error.retry == "no"
    assert page_state(run.page)["notes"] == ["c"]

    with pytest.raises(AgentClientError, match="no confirmation dialog"):
        agent.approve(timeout_ms=300)  # nothing is pending


def test_call_timeouts_and_cancellation(open_page: Any) -> None:
    run, agent = open_notes(open_page, NATIVE, "webmcp")
    pending = agent.start(WAIT, {"ms": 30_000})
    with pytest.raises(AgentClientError, match=r"the call to view_notes__list__wait did not settle within 300 ms"):
        pending.result(timeout_ms=300)
    assert not pending.settled
    pending.cancel()  # the signal the client handed to executeTool
    with pytest.raises(ToolCallRejected) as rejected:
        pending.result()
    assert rejected.value.name == "AbortError" and rejected.value.tool == WAIT
    assert agent.call(WAIT, {"ms": 10}).expect_ok() == 10

    # The selectors are the caller's: a dialog that is not on this page is never found.
    elsewhere = WebMCPAgent(run.page, dialog=DialogSelectors(dialog="#nowhere"), timeout_ms=300)
    with pytest.raises(AgentClientError, match=r"no confirmation dialog \(#nowhere\)"):
        elsewhere.wait_for_dialog()


def test_a_page_without_webmcp_is_a_clear_error(open_page: Any) -> None:
    run = open_page(NATIVE, variant="plain")
    run.wait_ready()
    agent = WebMCPAgent(run.page, timeout_ms=300)
    assert agent.shape is None
    with pytest.raises(AgentClientError, match="the page offers no WebMCP client"):
        agent.list_tools()
    with pytest.raises(AgentClientError, match="waiting for tool 'view_notes__list__notes': the page offers no"):
        agent.wait_for_tool(NOTES)


# =========================================================================== polyfill shape


def test_the_polyfill_shape(open_page: Any) -> None:
    run, agent = open_notes(open_page, POLYFILL, "plain")
    assert agent.shape == "polyfill"
    assert agent.tool_names() == LIST
    assert agent.tool(NOTES).annotations == {"readOnlyHint": True}
    assert agent.tool(ADD).title is None  # the draft's tools have no title
    assert agent.tool(ADD).input_schema is not None  # listed as JSON text, parsed

    assert agent.call(ADD, {"text": "x"}).expect_ok() == 1
    # The polyfill validates input itself: the call is refused before our tool runs.
    with pytest.raises(ToolCallRejected, match="Input validation error") as refused:
        agent.call(ADD, {"text": ""})
    assert refused.value.name == "UnknownError"

    run.page.click("#toggle-archive")
    assert agent.call(agent.wait_for_tool(ARCHIVED).name).expect_ok() == ["old note"]
    run.page.click("#toggle-archive")
    agent.wait_for_tool_gone(ARCHIVED)

    pending = agent.start(CLEAR)
    agent.deny()
    # The shim rejects results with isError; the client reads our typed error back out of it.
    error = pending.result().expect_error("CONFIRMATION_INVALID")
    assert error.details == {"reason": "denied"}
    pending = agent.start(CLEAR)
    agent.approve()
    assert pending.result().expect_ok() == 1
    assert page_state(run.page)["notes"] == []


# =========================================================================== the pytest fixture


def test_the_webmcp_agent_fixture_drives_pytest_playwrights_page(
    page: Page, webmcp_agent: WebMCPAgent, server_url: str
) -> None:
    assert webmcp_agent.page is page
    page.goto(server_url + NATIVE)
    webmcp_agent.wait_for_tool(NOTES, timeout_ms=60_000)  # includes booting Pyodide
    assert webmcp_agent.shape == "native"  # launched through browser_type_launch_args + with_webmcp
    assert webmcp_agent.call(ADD, {"text": "from the fixture"}).expect_ok() == 1
    pending = webmcp_agent.start(CLEAR)
    webmcp_agent.approve()
    assert pending.result().expect_ok() == 1


# =========================================================================== without a browser


def test_with_webmcp_adds_the_feature_once() -> None:
    off = "--disable-features=HeapProfilerReporting,GwpAsanMalloc,GwpAsanPartitionAlloc"
    assert with_webmcp({}) == {"args": ["--enable-features=WebMCPTesting", off]}
    merged = with_webmcp({"args": ["--mute-audio", "--enable-features=Foo"], "headless": True}, executable_path="c")
    assert merged == {
        "args": ["--mute-audio", "--enable-features=Foo,WebMCPTesting", off],
        "headless": True,
        "executable_path": "c",
    }
    assert with_webmcp(merged) == merged


def test_agentsurface_testing_imports_without_playwright() -> None:
    code = textwrap.dedent("""
        import sys
        sys.modules["playwright"] = None  # as if it were not installed: importing it fails
        import agentsurface.testing as testing
        import agentsurface.testing.plugin
        assert testing.WebMCPAgent and "playwright" not in [m for m in sys.modules if sys.modules[m]]
        print("ok")
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"


def test_the_fixture_says_what_to_install_without_pytest_playwright(tmp_path: Path) -> None:
    (tmp_path / "test_uses_agent.py").write_text("def test_it(webmcp_agent):\n    pass\n")
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:playwright", "-p", "no:cacheprovider", "-q", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert done.returncode == 1, done.stdout
    assert "webmcp_agent drives pytest-playwright's `page` fixture" in done.stdout
    assert "pip install pytest-playwright" in done.stdout
