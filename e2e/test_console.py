"""The devices console end to end in Chromium 156 (AS-EXAMPLE-001): "show me the offline devices
in Milan, select the visible ones and disable them".

The agent is the browser's own WebMCP client (document.modelContext.getTools/executeTool), driven
through agentsurface's agent client (``agentsurface.testing.WebMCPAgent``): it never touches the
DOM. The person approves or denies in the page's dialog with a real click. The backend (SQLite) is
checked directly over HTTP.
"""

from __future__ import annotations

import json
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentsurface.testing import DialogSelectors, ToolResult, WebMCPAgent

ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = ROOT / "e2e" / "artifacts"
MILAN_OFFLINE = ["dev-0003", "dev-0017", "dev-0026", "dev-0051", "dev-0079", "dev-0080", "dev-0112"]

# The console uses the library's drop-in dialog (ids agentsurface-confirm-...): the defaults.
CONSOLE_DIALOG = DialogSelectors()

# A raw executeTool started from page code, for tests that need the call's promise in the page
# (test_console_hostile); the tests here use the agent client.
# As an agent does: a call that meets a surface changing under it (CAPABILITY_NOT_FOUND, retry
# "after-refresh": a loaded machine widens that moment) lists the tools again and retries, a few
# times; a call still running after a second (waiting for the person) is left to run.
START_CALL = """([name, input]) => {
  window.agentCall = (async () => {
    for (let attempt = 0; ; attempt++) {
      const tool = (await document.modelContext.getTools()).find((t) => t.name === name);
      const call = document.modelContext.executeTool(tool, input);
      const early = await Promise.race([call, new Promise((r) => setTimeout(() => r(null), 1000))]);
      const seen = typeof early === 'string' ? early : JSON.stringify(early);
      if (early === null || attempt >= 10 || !seen.includes('CAPABILITY_NOT_FOUND')) return await call;
      await new Promise((r) => setTimeout(r, 100));
    }
  })().then((text) => ({text}), (error) => ({error: String(error)}));
}"""


@pytest.fixture
def console_server(web_dist: Path) -> Iterator[str]:
    """A fresh backend (seeded in-memory database) per test, serving the page too."""
    import sys

    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from demo.server.backend import start_demo_server

    server, url = start_demo_server(ROOT, port=0)
    yield url
    server.shutdown()
    server.server_close()


def read(base: str, procedure: str, input: Any, token: str = "demo-acme-operator") -> Any:
    """One of the app's own reads, as the page makes it: a call to the procedure server."""
    envelope = json.dumps({"invocationId": f"inv-e2e-{time.monotonic_ns()}", "input": input}).encode()
    request = urllib.request.Request(base + "/api/agent/procedures/" + procedure, data=envelope, headers={
        "Authorization": f"Bearer {token}", "Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read())["output"]


def statuses(base: str) -> dict[str, str]:
    """Read as the tenant's viewer: another caller, so the check spends neither the person's
    budget nor their agent's."""
    body = read(base, "devices.query", {"limit": 200}, token="demo-acme-viewer")
    return {d["id"]: d["status"] for d in body["devices"]}


def agent_for(run: Any) -> WebMCPAgent:
    return WebMCPAgent(run.page, dialog=CONSOLE_DIALOG)


def open_console(open_page: Any, base: str) -> Any:
    run = open_page("/index.html", variant="webmcp", base=base)
    run.page.wait_for_function("() => document.body.dataset.ready === 'true'")
    agent_for(run).wait_for_tool("view_devices__table__selectVisible")
    return run


def call(run: Any, name: str, input: dict[str, Any]) -> Any:
    """The tool content as the browser returned it (``{"content": [...], "isError"?}``)."""
    return agent_for(run).call(name, input).content


def text_of(content: Any) -> Any:
    return json.loads(content["content"][0]["text"])


def shot(run: Any, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    run.page.screenshot(path=str(ARTIFACTS / f"console-{name}.png"))


def select_offline_in_milan(agent: WebMCPAgent) -> None:
    assert "domain_devices__disable" not in agent.tool_names()  # nothing selected: unavailable, not registered
    filters = agent.call("view_devices__filters__setFilters", {"status": "offline", "city": "Milan"})
    assert filters.expect_ok() == {"status": "offline", "city": "Milan", "text": None}
    rows = agent.call("view_devices__table__visibleRows", {}).expect_ok()
    assert sorted(r["id"] for r in rows) == MILAN_OFFLINE
    assert sorted(agent.call("view_devices__table__selectVisible", {}).expect_ok()) == MILAN_OFFLINE
    # The table shows what the agent did, and the disable tool appears once rows are selected.
    agent.page.wait_for_function("() => document.querySelectorAll('#rows tr.selected').length === 7")
    agent.wait_for_tool("domain_devices__disable")


def start_disable(agent: WebMCPAgent) -> Any:
    pending = agent.start("domain_devices__disable", {"reason": "maintenance"})
    dialog = agent.wait_for_dialog()
    assert "Disable 7 device(s)" in dialog and "destructive" in dialog and "dev-0112" in dialog
    return pending


def preview_rows(run: Any) -> list[list[str]]:
    """The dialog's preview table as the person reads it: row, field, before, after."""
    return run.page.evaluate("""() => [...document.querySelectorAll('#agentsurface-confirm-preview-rows tr')]
        .map((tr) => [...tr.cells].map((td) => td.textContent))""")


def test_AS_EXAMPLE_001_agent_disables_offline_milan_devices_after_approval(open_page: Any, console_server: str) -> None:
    run = open_console(open_page, console_server)
    agent = agent_for(run)
    shot(run, "1-loaded")
    before = statuses(console_server)
    assert all(before[i] == "offline" for i in MILAN_OFFLINE)

    select_offline_in_milan(agent)
    shot(run, "2-selected")
    pending = start_disable(agent)
    shot(run, "3-confirmation")
    # The preview: each selected device, its status before → after, in an accessible table.
    rows = preview_rows(run)
    assert [r[0].split(" · ")[0] for r in rows] == MILAN_OFFLINE
    assert {tuple(r[1:]) for r in rows} == {("status", "offline", "disabled")}
    assert run.page.is_visible("#agentsurface-confirm-preview")
    assert run.page.inner_text("#agentsurface-confirm-preview caption") == "What will change (7 changes)"
    assert run.page.locator("#agentsurface-confirm-preview th[scope=col]").all_inner_texts() == [
        "Row", "Field", "Before", "After"
    ]
    assert statuses(console_server) == before  # nothing happens before the person decides

    # A script (or an agent driving the DOM with scripts) cannot approve: untrusted clicks are ignored.
    run.page.wait_for_selector("#agentsurface-confirm-approve:not([disabled])")  # after the input protection
    run.page.evaluate("() => document.getElementById('agentsurface-confirm-approve').click()")
    run.page.wait_for_function(
        "() => document.getElementById('agentsurface-confirm-warning').textContent.length > 0"
    )
    assert statuses(console_server) == before
    assert not pending.settled
    agent.approve()  # a real user gesture

    result: ToolResult = pending.result()
    assert result.ok, result.error
    assert result.expect_ok()["disabled"] == 7
    after = statuses(console_server)
    assert all(after[i] == "disabled" for i in MILAN_OFFLINE)
    assert {k: v for k, v in after.items() if k not in MILAN_OFFLINE} == {
        k: v for k, v in before.items() if k not in MILAN_OFFLINE
    }  # exactly those rows changed
    run.page.wait_for_function("() => document.getElementById('notice').textContent.includes('7 device(s) disabled')")
    assert run.page.locator("#rows tr").count() == 0  # no offline device left in Milan
    assert run.page.is_hidden("#agentsurface-confirm")
    shot(run, "4-done")
    run.page.wait_for_function(  # the library's inspector logs the call (rendered on the next frame)
        "() => document.querySelector('.agent-inspector-calls').textContent.includes('domain:devices.disable')"
    )
    activity = run.page.inner_text(".agent-inspector-calls")
    assert "domain:devices.disable" in activity
    assert run.console_errors == []


def test_AS_EXAMPLE_001_denial_leaves_the_database_unchanged(open_page: Any, console_server: str) -> None:
    run = open_console(open_page, console_server)
    agent = agent_for(run)
    before = statuses(console_server)
    select_offline_in_milan(agent)
    pending = start_disable(agent)
    agent.deny()
    result = pending.result()
    assert result.ok is False and result.content.get("isError") is True
    error = result.expect_error("CONFIRMATION_INVALID")
    assert error.details == {"reason": "denied"}
    assert error.retry == "no"
    assert statuses(console_server) == before
    assert run.page.locator("#rows tr").count() == 7  # still offline, still selected
    assert run.page.inner_text("#notice").startswith("You denied: Disable 7 device(s)")
    shot(run, "5-denied")


def test_a_selection_changed_under_the_dialog_is_refused_as_stale(open_page: Any, console_server: str) -> None:
    """Issue 39.3: the person approves what the preview showed; the rows it was computed from
    changed before Approve (here the agent deselects one while the dialog is open), so the call
    is refused as stale and nothing is disabled, then or later."""
    run = open_console(open_page, console_server)
    agent = agent_for(run)
    before = statuses(console_server)
    select_offline_in_milan(agent)
    pending = start_disable(agent)
    assert len(preview_rows(run)) == 7
    moved = agent.call("view_devices__table__selectRows", {"ids": ["dev-0112"], "mode": "remove"})
    assert "dev-0112" not in moved.expect_ok()
    run.page.wait_for_function("() => document.querySelectorAll('#rows tr.selected').length === 6")
    assert len(preview_rows(run)) == 7  # the dialog still shows what the person was asked
    shot(run, "6-stale-before-approve")
    agent.approve()  # a real click, on a preview that no longer holds

    result = pending.result()
    error = result.expect_error("CONFIRMATION_INVALID")
    assert error.details == {"reason": "stale"} and error.retry == "with-confirmation"
    assert statuses(console_server) == before  # nothing applied
    run.page.wait_for_selector("#agentsurface-confirm", state="hidden")
    run.page.wait_for_function("() => document.getElementById('notice').textContent.startsWith('Not applied')")
    assert "nothing was done" in run.page.inner_text("#notice")
    assert run.page.inner_text("#agentsurface-confirm-live").startswith("Not applied")
    shot(run, "7-stale-refused")
    # Asking again shows the person the current rows: six.
    again = agent.start("domain_devices__disable", {"reason": "maintenance"})
    assert "Disable 6 device(s)" in agent.wait_for_dialog()
    assert len(preview_rows(run)) == 6
    agent.deny()
    assert again.result().expect_error("CONFIRMATION_INVALID").details == {"reason": "denied"}
    assert statuses(console_server) == before
    assert run.console_errors == []


# The forged calls below are refused on purpose; the browser logs each refused fetch.
@pytest.mark.allow_page_errors(r"status of 401", r"status of 403", r"status of 428")
def test_agent_cannot_redirect_the_locked_selection_and_the_server_refuses_forgeries(
    open_page: Any, console_server: str
) -> None:
    run = open_console(open_page, console_server)
    agent = agent_for(run)
    select_offline_in_milan(agent)
    result = agent.call("domain_devices__disable", {"deviceIds": ["dev-0002"]})
    assert result.content["isError"] is True
    error = result.expect_error("INVALID_INPUT")
    assert error.details["lockedFields"] == ["deviceIds"]
    assert run.page.is_hidden("#agentsurface-confirm")  # refused before any confirmation was created

    # Page code calling the backend directly, bypassing the surface: the server is the authority.
    forged = run.page.evaluate("""async () => {
        const approved = {id: 'forged', approvedAt: new Date().toISOString()};
        const post = (token, input, confirmation) => fetch('/api/agent/procedures/devices.disable', {
            method: 'POST',
            headers: Object.assign({'Content-Type': 'application/json'},
                                   token ? {Authorization: 'Bearer ' + token} : {}),
            body: JSON.stringify({invocationId: crypto.randomUUID(), input, confirmation}),
        }).then(async (r) => [r.status, (await r.json()).error.code]);
        return {
            noAuth: await post(null, {deviceIds: ['dev-0003']}, approved),
            viewer: await post('demo-acme-viewer', {deviceIds: ['dev-0003']}, approved),
            noApproval: await post('demo-acme-operator', {deviceIds: ['dev-0003']}),
            otherTenant: await post('demo-acme-operator', {deviceIds: ['dev-0130']}, approved),
        };
    }""")
    assert forged == {
        "noAuth": [401, "NOT_AUTHENTICATED"],
        "viewer": [403, "NOT_AUTHORIZED"],
        "noApproval": [428, "CONFIRMATION_REQUIRED"],
        # Made-up evidence answers no server-minted challenge: refused before the domain is read.
        "otherTenant": [428, "CONFIRMATION_REQUIRED"],
    }
    assert statuses(console_server)["dev-0003"] == "offline"


DRAWER_TOOLS = {"view_devices__drawer__openDevice", "view_devices__drawer__close", "domain_devices__rename"}


def test_the_drawers_tools_exist_only_while_the_drawer_is_open(open_page: Any, console_server: str) -> None:
    """The drawer's component is attached to the drawer's element: opening the drawer (the
    person's click, or the agent's openDevice) adds its tools to getTools(), closing removes them.
    No sync call anywhere: the page surface follows the DOM."""
    run = open_console(open_page, console_server)
    agent = agent_for(run)
    assert not DRAWER_TOOLS & set(agent.tool_names())
    run.page.click("#rows tr[data-id='dev-0003'] .name")  # the person opens it
    run.page.wait_for_selector("#drawer h2")
    for name in DRAWER_TOOLS:
        agent.wait_for_tool(name)
    assert text_of(call(run, "view_devices__drawer__openDevice", {}))["id"] == "dev-0003"
    run.page.click("#drawer [data-action=close]")  # the person closes it
    for name in DRAWER_TOOLS:
        agent.wait_for_tool_gone(name)
    assert run.page.locator("#drawer").count() == 0
    agent.call("view_devices__table__openDevice", {"deviceId": "dev-0017"}).expect_ok()  # the agent opens it
    agent.wait_for_tool("domain_devices__rename")
    assert agent.call("view_devices__drawer__close", {}).ok  # and closes it
    agent.wait_for_tool_gone("domain_devices__rename")
    assert not DRAWER_TOOLS & set(agent.tool_names())
    assert run.console_errors == []
