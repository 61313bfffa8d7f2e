"""The drop-in confirmation dialog (agentsurface.page.dialog) in Chromium 156, driven by the
browser's own agent client: ``document.modelContext.executeTool`` on the native shape,
``navigator.modelContextTesting.executeTool`` on @mcp-b/webmcp-polyfill (where the same dialog runs
inside ``requestUserInteraction``). The person is Playwright's trusted input; scripts clicking or
dispatching events stand for a hostile page script or agent.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page

from a11y import axe_violations, describe_violations

NATIVE = "/e2e/pages/page-dialog.html"
POLYFILL = "/e2e/pages/page-dialog-polyfill.html"
ARTIFACTS = Path(__file__).resolve().parent / "artifacts"
TOOL = "view_bank__vault__openDrawer"
EMPTY = "view_bank__vault__emptyDrawer"
DIALOG = "#agentsurface-confirm-dialog"
APPROVE = "#agentsurface-confirm-approve"
DENY = "#agentsurface-confirm-deny"
ARMED = f"{APPROVE}:not([disabled])"

WITHIN = """window.within = (promise, what, ms) => {
    let timer;
    const limit = new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${what}: not settled within ${ms} ms`)), ms);
    });
    return Promise.race([promise, limit]).finally(() => clearTimeout(timer));
};"""
# The agent's call, left running while the person decides: window.calls[key].promise.
NATIVE_START = """([name, input, key]) => {
    const call = {settled: false};
    call.promise = (async () => {
        const tool = (await document.modelContext.getTools()).find((t) => t.name === name);
        if (!tool) throw new Error(`no tool ${name}`);
        return JSON.parse(await document.modelContext.executeTool(tool, input));
    })().finally(() => { call.settled = true; });
    call.promise.catch(() => {});
    (window.calls ||= {})[key] = call;
}"""
# The polyfill's shim resolves to the JSON of the result, and rejects when isError is set.
POLYFILL_START = """([name, input, key]) => {
    const call = {settled: false};
    call.promise = navigator.modelContextTesting.executeTool(name, JSON.stringify(input)).then(
        (text) => ({ok: true, result: JSON.parse(text)}), (e) => ({ok: false, message: e.message}))
        .finally(() => { call.settled = true; });
    (window.calls ||= {})[key] = call;
}"""


class DialogPage:
    def __init__(self, page: Page, start: str) -> None:
        self.page = page
        self.start = start

    def state(self) -> dict[str, Any]:
        return json.loads(self.page.evaluate("() => window.dialogPage.state()"))

    def ask(self, drawer: str, key: str, tool: str = TOOL) -> None:
        """The agent calls openDrawer; returns once the request is pending in the registry."""
        waiting = len(self.state()["pending"])
        self.page.evaluate(self.start, [tool, {"drawer": drawer}, key])
        self.page.wait_for_function(
            f"() => JSON.parse(window.dialogPage.state()).pending.length === {waiting + 1}"
        )

    def outcome(self, key: str) -> Any:
        return self.page.evaluate(f"() => within(window.calls[{key!r}].promise, {key!r}, 20000)")

    def settled(self, key: str) -> bool:
        return bool(self.page.evaluate(f"() => window.calls[{key!r}].settled"))

    def under_clicks(self) -> int:
        return int(self.page.evaluate("() => window.underClicks"))

    def active_id(self) -> str:
        return str(self.page.evaluate("() => document.activeElement && document.activeElement.id"))


def payload(result: dict[str, Any]) -> Any:
    assert result["content"][0]["type"] == "text"
    return json.loads(result["content"][0]["text"])


def _open(browsers: Any, server_url: str, path: str, variant: str, start: str) -> Iterator[DialogPage]:
    context = browsers.get(variant).new_context(viewport={"width": 1000, "height": 700})
    context.set_default_timeout(20_000)
    context.set_default_navigation_timeout(60_000)
    try:
        page = context.new_page()
        page.add_init_script(WITHIN)
        page.goto(server_url + path)
        page.wait_for_function("() => window.agentSurface")
        page.evaluate("() => within(window.agentSurface.ready, 'boot', 120000)")
        yield DialogPage(page, start)
    finally:
        context.close()


@pytest.fixture(scope="class")
def native(browsers: Any, server_url: str) -> Iterator[DialogPage]:
    yield from _open(browsers, server_url, NATIVE, "webmcp", NATIVE_START)


@pytest.fixture(scope="class")
def polyfill(browsers: Any, server_url: str) -> Iterator[DialogPage]:
    yield from _open(browsers, server_url, POLYFILL, "plain", POLYFILL_START)


@pytest.fixture(autouse=True)
def _screenshot_on_failure(request: pytest.FixtureRequest) -> Iterator[None]:
    failed_before = request.session.testsfailed
    yield
    if request.session.testsfailed == failed_before:
        return
    for name in ("native", "polyfill"):
        if name in request.fixturenames:
            run: DialogPage = request.getfixturevalue(name)
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            shot = re.sub(r"[^\w.-]+", "_", request.node.nodeid.split("::", 1)[-1])
            run.page.screenshot(path=str(ARTIFACTS / f"{shot}.png"))


class TestNativeShape:
    """Chromium's document.modelContext: the adapter waits while the person decides."""

    def test_a_real_click_on_approve_completes_the_agents_call(self, native: DialogPage) -> None:
        page = native.page
        assert native.state()["shape"] == "abortable"  # document.modelContext, withdrawn by abort
        drawer = '<b id="injected">gold</b>'
        native.ask(drawer, "click")
        page.wait_for_selector(DIALOG, state="visible")
        assert page.is_disabled(APPROVE) and page.is_disabled(DENY)  # input protection
        assert native.active_id() == DIALOG[1:]  # focus moved into the dialog, not onto a button
        assert page.get_attribute(DIALOG, "role") == "dialog"
        assert page.get_attribute(DIALOG, "aria-modal") == "true"
        title = page.text_content("#" + page.get_attribute(DIALOG, "aria-labelledby"))
        assert title == "An agent asks for your approval"
        assert page.text_content("#agentsurface-confirm-summary")
        assert page.text_content("#agentsurface-confirm-effect") == "Effect: local-state"
        assert page.text_content("#agentsurface-confirm-input") == json.dumps({"drawer": drawer}, indent=2)
        assert page.query_selector("#injected") is None  # shown as text, never parsed as HTML
        assert re.fullmatch(
            r"Expires in \d+:\d\d", page.text_content("#agentsurface-confirm-countdown") or ""
        )
        assert "An agent asks for your approval" in (page.text_content("#agentsurface-confirm-live") or "")
        assert native.state()["opened"] == []  # nothing ran before the decision
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "page-dialog-open.png"))

        page.wait_for_selector(ARMED)
        page.click(APPROVE)
        result = native.outcome("click")
        assert "isError" not in result and payload(result) == drawer
        state = native.state()
        assert state["opened"] == [drawer] and state["pending"] == []
        assert state["decided"] == [[True, {"drawer": drawer}]] and state["prompts"] == 0
        assert page.is_hidden(DIALOG)
        page.wait_for_timeout(800)  # the close shield drops
        assert native.under_clicks() == 0 and state["diagnostics"] == []

    def test_keyboard_tab_stays_inside_and_enter_on_approve_approves(self, native: DialogPage) -> None:
        page = native.page
        opened = len(native.state()["opened"])
        native.ask("silver", "first")
        native.ask("bronze", "second")
        page.wait_for_selector(ARMED)
        assert page.text_content("#agentsurface-confirm-waiting") == "1 more waiting"
        ring = []
        for _ in range(5):
            page.keyboard.press("Tab")
            ring.append(native.active_id())
        assert ring == [
            "agentsurface-confirm-input",
            "agentsurface-confirm-reason",  # why, if the person denies
            "agentsurface-confirm-deny",
            "agentsurface-confirm-approve",
            "agentsurface-confirm-input",  # Tab stays inside
        ]
        page.keyboard.press("Shift+Tab")
        assert native.active_id() == "agentsurface-confirm-approve"
        page.keyboard.press("Enter")
        assert payload(native.outcome("first")) == "silver"
        # The next request is on screen; focus went back to the dialog and Enter does nothing
        # during its input protection, even with Approve focused by a script.
        assert native.active_id() == DIALOG[1:]
        page.keyboard.press("Enter")
        page.evaluate(f"() => document.querySelector('{APPROVE}').focus()")
        page.keyboard.press("Enter")
        page.wait_for_timeout(200)
        state = native.state()
        assert len(state["pending"]) == 1 and not native.settled("second")
        assert state["opened"][opened:] == ["silver"]
        page.wait_for_selector(ARMED)
        page.focus(APPROVE)
        page.keyboard.press("Enter")
        assert payload(native.outcome("second")) == "bronze"

    def test_escape_denies(self, native: DialogPage) -> None:
        page = native.page
        opened, proxies = native.state()["opened"], native.state()["liveProxies"]
        native.ask("platinum", "escape")
        page.wait_for_selector(ARMED)
        page.keyboard.press("Escape")
        result = native.outcome("escape")
        assert result["isError"] is True
        error = payload(result)
        assert error["code"] == "CONFIRMATION_INVALID" and error["details"] == {"reason": "denied"}
        assert native.state()["opened"] == opened and page.is_hidden(DIALOG)
        assert native.state()["liveProxies"] == proxies  # the countdown's timer was freed on close

    def test_untrusted_clicks_and_dispatched_events_never_decide(self, native: DialogPage) -> None:
        page = native.page
        opened = native.state()["opened"]
        native.ask("diamond", "untrusted")
        page.wait_for_selector(ARMED)
        verdicts = len(native.state()["verdicts"])
        page.evaluate(
            """(selector) => {
                const approve = document.querySelector(selector);
                approve.click();
                approve.dispatchEvent(new PointerEvent("pointerdown", {bubbles: true}));
                approve.dispatchEvent(new MouseEvent("click", {bubbles: true, detail: 1}));
                document.dispatchEvent(new KeyboardEvent("keydown", {key: "Escape", bubbles: true}));
                approve.focus();
                approve.dispatchEvent(new KeyboardEvent("keydown", {key: "Enter", bubbles: true}));
            }""",
            APPROVE,
        )
        page.wait_for_timeout(300)  # room for a wrongly accepted decision to run the action
        state = native.state()
        assert state["verdicts"][verdicts:] == ["untrusted"] * 3
        assert len(state["pending"]) == 1 and state["opened"] == opened
        assert not native.settled("untrusted") and page.is_visible(DIALOG)
        assert (
            page.text_content("#agentsurface-confirm-warning")
            == "Ignored an action that did not come from you."
        )
        page.click(DENY)
        assert native.outcome("untrusted")["isError"] is True

    def test_a_double_click_approves_only_the_request_it_began_on(self, native: DialogPage) -> None:
        page = native.page
        opened = native.state()["opened"]
        native.ask("first-drawer", "a")
        native.ask("second-drawer", "b")
        page.wait_for_selector(ARMED)
        page.dblclick(APPROVE)
        assert payload(native.outcome("a")) == "first-drawer"
        page.wait_for_timeout(300)
        state = native.state()
        assert state["opened"][len(opened) :] == ["first-drawer"]
        assert len(state["pending"]) == 1 and not native.settled("b")
        assert "second-drawer" in (page.text_content("#agentsurface-confirm-input") or "")
        assert "Another request replaced the previous one" in (
            page.text_content("#agentsurface-confirm-live") or ""
        )
        # The last request: the double-click's second click lands on the close shield, never on
        # the page underneath.
        page.wait_for_selector(ARMED)
        page.dblclick(APPROVE)
        assert payload(native.outcome("b")) == "second-drawer"
        page.wait_for_timeout(800)
        assert native.under_clicks() == 0
        page.click("#under")  # the shield is gone: the page takes clicks again
        assert native.under_clicks() == 1

    def test_no_serious_accessibility_violations_with_the_dialog_open(self, native: DialogPage) -> None:
        page = native.page
        native.ask("axe", "axe")
        page.wait_for_selector(ARMED)
        violations = axe_violations(page)
        assert not violations, describe_violations(violations)
        page.click(DENY)
        assert native.outcome("axe")["isError"] is True


    def test_a_preview_is_a_table_of_text_and_a_stale_one_is_refused(self, native: DialogPage) -> None:
        """Issue 39.3: the preview (what the call will change) is an accessible table of plain
        text; if the state it was computed from changes before Approve, nothing applies."""
        page = native.page
        page.wait_for_timeout(800)  # the previous test's close shield drops
        native.ask("gold", "empty", tool=EMPTY)
        page.wait_for_selector(ARMED)
        cells = page.evaluate(
            "() => [...document.querySelectorAll('#agentsurface-confirm-preview-rows td')].map((td) => td.textContent)"
        )
        assert cells == ["gold", "contents", '["<img src=x onerror=window.pwned=1>","ingot\\u202egnp.exe"]', "[]"]
        assert page.query_selector("#agentsurface-confirm-preview img") is None
        assert page.evaluate("() => window.pwned") is None
        assert page.text_content("#agentsurface-confirm-preview-caption") == "What will change (1 change)"
        violations = axe_violations(page)
        assert not violations, describe_violations(violations)
        page.keyboard.press("Tab")  # the preview is first in the dialog's Tab ring
        assert native.active_id() == "agentsurface-confirm-preview"
        page.screenshot(path=str(ARTIFACTS / "page-dialog-preview.png"))

        page.evaluate("() => window.dialogPage.restock('gold', 'silver')")  # changed under the dialog
        page.click(APPROVE)
        result = native.outcome("empty")
        assert result["isError"] is True
        error = payload(result)
        assert error["code"] == "CONFIRMATION_INVALID" and error["details"] == {"reason": "stale"}
        state = native.state()
        assert state["verdicts"][-1] == "outdated" and state["pending"] == []
        assert state["contents"]["gold"][-1] == "silver" and len(state["contents"]["gold"]) == 3  # not emptied
        assert page.is_hidden(DIALOG)
        assert (page.text_content("#agentsurface-confirm-live") or "").startswith("Not applied")
        assert page.is_hidden("#agentsurface-confirm-preview") or page.is_hidden(DIALOG)


class TestPolyfillShape:
    """@mcp-b/webmcp-polyfill's navigator.modelContext: the dialog is the confirm hook, run
    inside the client's requestUserInteraction, and the agent gets one final result."""

    def test_the_same_dialog_runs_inside_request_user_interaction(self, polyfill: DialogPage) -> None:
        page = polyfill.page
        assert polyfill.state()["shape"] == "incremental"
        polyfill.ask("gold", "approve")
        page.wait_for_selector(ARMED)
        assert polyfill.state()["prompts"] == 1
        page.evaluate(f"() => document.querySelector('{APPROVE}').click()")  # untrusted
        page.wait_for_timeout(300)
        assert not polyfill.settled("approve")
        page.click(APPROVE)
        outcome = polyfill.outcome("approve")
        assert outcome["ok"] is True and payload(outcome["result"]) == "gold"
        state = polyfill.state()
        assert state["opened"] == ["gold"] and state["pending"] == [] and state["diagnostics"] == []

    def test_escape_in_the_prompt_denies_with_one_final_result(self, polyfill: DialogPage) -> None:
        page = polyfill.page
        polyfill.ask("silver", "deny")
        page.wait_for_selector(ARMED)
        assert polyfill.state()["prompts"] == 2
        page.keyboard.press("Escape")
        outcome = polyfill.outcome("deny")
        assert outcome["ok"] is False and "CONFIRMATION_INVALID" in outcome["message"]
        state = polyfill.state()
        assert state["opened"] == ["gold"] and state["pending"] == [] and state["diagnostics"] == []
