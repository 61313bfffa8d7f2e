"""Issue 43.6 in Chromium: a page that forgot ``ConfirmationDialog`` warns of it, in its
inspector from the start and in the console at the first consequential call (which would
otherwise wait for its approval to expire with nothing to click)."""

from __future__ import annotations

import time

from agentsurface.testing import WebMCPAgent

PAGE = "/e2e/pages/no-dialog.html"
TOOL = "view_bank__vault__openDrawer"


def test_a_page_without_a_dialog_warns_in_the_inspector_and_the_console(open_page) -> None:  # type: ignore[no-untyped-def]
    run = open_page(PAGE, variant="webmcp")
    agent = WebMCPAgent(run.page)
    agent.wait_for_tool(TOOL)
    run.page.wait_for_function(
        "() => document.querySelector('.agent-inspector-warning')?.textContent.includes('no confirmation dialog')"
    )
    warning = run.page.locator(".agent-inspector-warning").inner_text()
    assert "view:bank.vault.openDrawer need the person's approval" in warning
    call = agent.start(TOOL, {"drawer": "A1"})
    deadline = time.monotonic() + 30
    said: list[tuple[str, str]] = []
    while time.monotonic() < deadline:
        said = [(kind, text) for kind, text in run.console if "nothing shows it" in text]
        if said:
            break
        run.page.wait_for_timeout(100)
    assert said, run.console
    (kind, text), *_ = said
    assert kind != "error", said  # a warning, not an error
    assert "view:bank.vault.openDrawer waits for the person's approval" in text
    assert "ConfirmationDialog(registry)" in text
    assert not call.settled
    call.cancel()
