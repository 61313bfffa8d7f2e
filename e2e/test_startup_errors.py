"""Start-up failures are visible: when a page's script raises at start, the embed script rejects
``ready`` and leaves the error in ``window.agentSurface.error``, the surface inspector shows it,
and the test client fails at once with its text instead of waiting out its timeout. A page that
loads the runtime from a path that 404s fails the client at once too, naming the URL."""

from __future__ import annotations

import time
from typing import Any

import pytest

from agentsurface.testing import AgentClientError, ToolNotFound, WebMCPAgent

LONG = 60_000  # the client's timeout: the failure must come long before it


@pytest.mark.allow_page_errors(r"agentsurface failed to start", r"TypeError")
def test_a_script_that_raises_at_start_fails_the_client_at_once_with_its_text(open_page: Any) -> None:
    run = open_page("/e2e/pages/startup-error.html", variant="webmcp")
    agent = WebMCPAgent(run.page, timeout_ms=LONG)
    started = time.perf_counter()
    with pytest.raises(AgentClientError) as info:
        agent.wait_for_tool("view_notes__list__notes")
    elapsed = time.perf_counter() - started
    message = str(info.value)
    assert "the page failed to start" in message and "TypeError" in message, message
    assert "startup-error.py" in message  # the traceback names the script
    assert elapsed < 30, f"the client waited {elapsed:.1f} s"
    page = run.page
    assert "TypeError" in page.evaluate("() => window.agentSurface.error")
    assert page.evaluate("() => window.agentSurface.ready.then(() => 'ok', () => 'rejected')") == "rejected"
    page.wait_for_function(
        "() => document.querySelector('.agent-inspector-error')?.textContent.includes('TypeError')"
    )
    shown = page.locator(".agent-inspector-error").inner_text()
    assert shown.startswith("The page failed to start:"), shown
    with pytest.raises(ToolNotFound) as missing:
        agent.tool("view_notes__list__notes")
    assert "the page failed to start" in str(missing.value)


@pytest.mark.allow_page_errors(r"404")
def test_a_runtime_that_404s_fails_the_client_at_once_naming_the_url(open_page: Any) -> None:
    run = open_page("/e2e/pages/startup-missing-runtime.html", variant="webmcp")
    agent = WebMCPAgent(run.page, timeout_ms=LONG)
    started = time.perf_counter()
    with pytest.raises(AgentClientError) as info:
        agent.wait_for_tool("anything")
    assert time.perf_counter() - started < 10
    assert "/e2e/pages/web/agentsurface.js answered HTTP 404" in str(info.value)
