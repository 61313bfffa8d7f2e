"""The devices console under clumsy and hostile use, in Chromium 156: clicks on every non-button
region, an open confirmation left ticking, a double-click over two queued confirmations (the
bait-and-switch), a viewer's session, and a refusal of the person's own action."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from test_console import START_CALL, call, console_server, open_console, shot, statuses, text_of

__all__ = ["console_server"]  # the fresh-backend fixture, shared with test_console

ROOT = Path(__file__).resolve().parent.parent
PYSCRIPT_ERRORS = "() => document.querySelectorAll('.py-error, py-error').length"

@pytest.fixture
def limited_server(web_dist: Path) -> Iterator[str]:
    """The demo backend with a tiny rate-limit budget (5 calls, next one in ~17 minutes)."""
    import sys

    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from demo.server.backend import start_demo_server

    from agentsurface.server import RateLimit

    server, url = start_demo_server(ROOT, port=0, rate_limit=RateLimit(burst=5, per_second=0.001))
    yield url
    server.shutdown()
    server.server_close()


def tool_names(run: Any) -> list[str]:
    return list(run.page.evaluate("async () => (await document.modelContext.getTools()).map((t) => t.name)"))


def assert_quiet(run: Any) -> None:
    assert run.console_errors == []
    assert run.page.evaluate(PYSCRIPT_ERRORS) == 0


def queue_two_disables(run: Any) -> None:
    """A: disable dev-0003 (selected first); B: disable dev-0003 and dev-0017."""
    call(run, "view_devices__filters__setFilters", {"status": "offline", "city": "Milan"})
    call(run, "view_devices__table__selectRows", {"ids": ["dev-0003"]})
    run.page.wait_for_function(
        "async () => (await document.modelContext.getTools()).some((t) => t.name === 'domain_devices__disable')"
    )
    run.page.evaluate(START_CALL, ["domain_devices__disable", {"reason": "A"}])
    run.page.wait_for_selector("#agentsurface-confirm-approve")
    call(run, "view_devices__table__selectRows", {"ids": ["dev-0003", "dev-0017"]})
    run.page.evaluate(
        """() => { window.callB = (async () => {
            const tool = (await document.modelContext.getTools()).find((t) => t.name === 'domain_devices__disable');
            return await document.modelContext.executeTool(tool, {reason: 'B'});
        })().then((text) => ({text}), (error) => ({error: String(error)})); }"""
    )
    run.page.wait_for_function("() => document.getElementById('agentsurface-confirm-waiting').textContent.includes('1 more')")


def test_clicks_on_every_non_button_region_raise_no_error(open_page: Any, console_server: str) -> None:
    run = open_console(open_page, console_server)
    page = run.page
    page.click("#tabs", position={"x": 2, "y": 2})  # the tab bar's padding
    page.click(".brand")
    page.click("#rows tr:first-child td:nth-child(2) .id")  # text inside a row: opens the drawer
    page.wait_for_selector("#drawer:not([hidden])")
    page.click("#drawer dl")  # the drawer's body, not a button
    page.click("#drawer h2")
    page.click("table.devices thead")
    call(run, "view_devices__filters__setFilters", {"status": "offline", "city": "Milan"})
    call(run, "view_devices__table__selectRows", {"ids": ["dev-0003"]})
    run.page.evaluate(START_CALL, ["domain_devices__disable", {"reason": "regions"}])
    page.wait_for_selector("#agentsurface-confirm-approve:not([disabled])")
    for selector in (
        "#agentsurface-confirm-title",
        "#agentsurface-confirm-summary",
        ".agentsurface-confirm-meta",
        "#agentsurface-confirm-input",
        ".agentsurface-confirm-actions",
    ):
        page.click(selector)
    page.mouse.click(5, 5)  # the backdrop around the dialog
    time.sleep(2.5)  # the countdown ticks every second while the dialog is open
    assert page.is_visible("#agentsurface-confirm-approve")
    assert_quiet(run)


def test_a_double_click_on_approve_never_approves_the_next_request(open_page: Any, console_server: str) -> None:
    run = open_console(open_page, console_server)
    queue_two_disables(run)
    page = run.page
    page.wait_for_selector("#agentsurface-confirm-approve:not([disabled])")
    assert "dev-0017" not in page.inner_text("#agentsurface-confirm-summary")  # A is shown
    page.dblclick("#agentsurface-confirm-approve")  # the person meant A only
    page.wait_for_function("() => document.getElementById('agentsurface-confirm-summary').textContent.includes('dev-0017')")
    assert page.is_disabled("#agentsurface-confirm-approve")  # B arrived under the pointer: not clickable yet
    assert "Another request replaced" in page.inner_text("#agentsurface-confirm-live")
    shot(run, "6-next-request-protected")
    time.sleep(1.0)
    assert page.is_visible("#agentsurface-confirm-approve")  # B still waits for its own decision
    assert statuses(console_server)["dev-0017"] == "offline"
    # A's rows changed under it (B's selection), so its Approve applied nothing and said so.
    assert page.inner_text("#notice").startswith("Not applied")
    assert statuses(console_server)["dev-0003"] == "offline"
    page.click("#agentsurface-confirm-deny")
    assert statuses(console_server)["dev-0017"] == "offline"
    assert_quiet(run)


def test_the_click_that_closes_the_dialog_does_not_reach_the_page(open_page: Any, console_server: str) -> None:
    run = open_console(open_page, console_server)
    page = run.page
    call(run, "view_devices__filters__setFilters", {"status": "offline", "city": "Milan"})
    call(run, "view_devices__table__selectRows", {"ids": ["dev-0003"]})
    run.page.evaluate(START_CALL, ["domain_devices__disable", {"reason": "one"}])
    box = page.wait_for_selector("#agentsurface-confirm-deny:not([disabled])").bounding_box()
    assert box is not None
    page.mouse.dblclick(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.wait_for_selector("#agentsurface-confirm", state="hidden")
    time.sleep(0.3)
    assert page.is_hidden("#drawer")  # the second click did not open a row underneath
    assert_quiet(run)


def test_a_viewers_agent_is_not_offered_write_tools_and_an_operators_is(open_page: Any, console_server: str) -> None:
    viewer = open_page("/index.html?token=demo-acme-viewer", variant="webmcp", base=console_server)
    viewer.page.wait_for_function("() => document.body.dataset.ready === 'true'")
    call(viewer, "view_devices__table__selectRows", {"ids": ["dev-0001"]})
    call(viewer, "view_devices__table__openDevice", {"deviceId": "dev-0001"})
    names = tool_names(viewer)
    assert "domain_devices__query" in names
    assert "domain_devices__disable" not in names and "domain_devices__rename" not in names
    operator = open_console(open_page, console_server)
    call(operator, "view_devices__table__selectRows", {"ids": ["dev-0001"]})
    call(operator, "view_devices__table__openDevice", {"deviceId": "dev-0001"})
    operator.page.wait_for_function(
        "async () => (await document.modelContext.getTools()).some((t) => t.name === 'domain_devices__rename')"
    )
    assert "domain_devices__disable" in tool_names(operator)


# What the person's other tab does: spend the person's own budget on the procedure server (the
# procedures' real URL; a wrong path is a 404 that spends nothing, so count the 200s).
SPEND_PERSONS_BUDGET = """async () => {
    const ok = [];
    for (let i = 0; i < 50; i++) {
        const r = await fetch('/api/agent/procedures/devices.query', {method: 'POST',
            body: JSON.stringify({invocationId: `other-tab-${i}`, input: {}}),
            headers: {'Content-Type': 'application/json', Authorization: 'Bearer demo-acme-operator'}});
        if (r.status === 429) return {ok, limited: true};
        ok.push(r.status);
    }
    return {ok, limited: false};
}"""


def enable_from_drawer(page: Any, device_id: str) -> None:
    page.fill("#filter-text", device_id)
    page.click(f"#rows tr[data-id='{device_id}'] .name")
    page.click("#drawer [data-action=enable]")


# The browser itself logs every refused HTTP response; that line is the point of this test.
@pytest.mark.allow_page_errors(r"status of 4\d\d")
def test_a_refusal_of_the_persons_own_action_is_shown(open_page: Any, limited_server: str) -> None:
    """The agent and the person have separate budgets (5 calls each on this server; the page's
    own reads at start, session.describe and devices.query, are two of the person's): the agent
    spending all of its budget leaves the person's button working; once the person's own budget
    is spent, the refusal of their click is shown in the page, not swallowed."""
    run = open_console(open_page, limited_server)
    page = run.page
    first, second = [i for i, s in statuses(limited_server).items() if s == "disabled"][:2]

    # The agent runs out of calls: its sixth query is refused ...
    for _ in range(5):
        assert not call(run, "domain_devices__query", {}).get("isError")
    refused = call(run, "domain_devices__query", {})
    assert refused.get("isError") is True and text_of(refused)["code"] == "RATE_LIMITED"
    # ... and the person's own button still works (the third of their 5 calls, after the page's start).
    enable_from_drawer(page, first)
    page.wait_for_function(
        "() => document.querySelector('#notice:not([hidden])')?.textContent.includes('enabled')"
    )
    assert not page.locator("#notice.error").count()

    spent = page.evaluate(SPEND_PERSONS_BUDGET)
    assert spent == {"ok": [200] * 2, "limited": True}
    enable_from_drawer(page, second)
    page.wait_for_selector("#notice.error:not([hidden])")
    assert page.inner_text("#notice").startswith("Refused: Too many calls")
    after = statuses(limited_server)
    assert after[first] != "disabled" and after[second] == "disabled"
    assert page.evaluate(PYSCRIPT_ERRORS) == 0
