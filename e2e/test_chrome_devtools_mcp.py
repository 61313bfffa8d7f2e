"""Google's ``chrome-devtools-mcp`` (pinned in e2e/npm/package.json, installed by scripts/test.sh)
reaching the devices console's tools through its experimental WebMCP category: the official
``mcp`` SDK client drives it over stdio; it attaches to the test's Chromium with ``--browserUrl``.

Its two meta tools take the page's tools by name, the input as a JSON *string*:
``list_webmcp_tools`` and ``execute_webmcp_tool``. The person approves in the page.
"""

from __future__ import annotations

import json
import re
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import BrowserContext, Page, Playwright

from agentsurface.testing import WebMCPAgent
from conftest import _guard
from mcp_client import McpClient
from test_mcp_bridge import MILAN_OFFLINE, serve_console, start_chromium, statuses

ROOT = Path(__file__).resolve().parent.parent
SERVER = ROOT / "e2e" / "npm" / "node_modules" / "chrome-devtools-mcp" / "build" / "src" / "bin" / "chrome-devtools-mcp.js"
FEATURES = ("WebMCP", "WebMCPTesting", "DevToolsWebMCPSupport")


@pytest.fixture(scope="module")
def devtools_chromium(chromium_executable: str) -> Iterator[str]:
    # Chromium's helper processes can still be writing the profile as the browser exits: a
    # leftover file in a throwaway profile must not fail the test.
    with tempfile.TemporaryDirectory(prefix="as-cdm-chromium-", ignore_cleanup_errors=True) as profile:
        process, endpoint = start_chromium(chromium_executable, Path(profile), *FEATURES)
        yield endpoint
        process.terminate()
        process.wait(timeout=10)


@pytest.fixture
def console_page(playwright: Playwright, devtools_chromium: str, web_dist: Path) -> Iterator[tuple[Page, str]]:
    server, base = serve_console()
    browser = playwright.chromium.connect_over_cdp(devtools_chromium)
    context: BrowserContext = browser.contexts[0]
    _guard.watch_context(context)
    page = context.new_page()
    page.goto(base + "/index.html")
    WebMCPAgent(page, timeout_ms=120_000).wait_for_tool("view_devices__table__selectVisible")
    yield page, base
    page.close()
    browser.close()
    server.shutdown()
    server.server_close()


@pytest.fixture
def devtools_mcp(devtools_chromium: str) -> Iterator[McpClient]:
    node = shutil.which("node")
    if node is None or not SERVER.exists():
        pytest.fail(
            "chrome-devtools-mcp is not installed: npm ci --prefix e2e/npm (scripts/test.sh does it)", pytrace=False
        )
    command = [
        node, str(SERVER), "--browserUrl", devtools_chromium, "--categoryExperimentalWebmcp",
        "--usageStatistics=false", "--performanceCrux=false",
    ]  # fmt: skip
    with tempfile.TemporaryFile("w+") as errlog:
        client = McpClient.stdio(command, errlog=errlog)
        try:
            yield client
        finally:
            client.close()


def page_id(client: McpClient, url: str) -> int:
    listing = client.call("list_pages", {}).content[0].text  # type: ignore[union-attr]
    found = re.search(rf"^(\d+): .*\({re.escape(url)}\)", listing, re.MULTILINE)
    assert found, listing
    return int(found.group(1))


def execute(client: McpClient, page: int, tool: str, input: dict[str, object]) -> dict[str, object]:
    """execute_webmcp_tool, its answer parsed: {status, output, error}."""
    result = client.call("execute_webmcp_tool", {"pageId": page, "toolName": tool, "input": json.dumps(input)})
    assert not result.isError, result.content
    text = result.content[0].text  # type: ignore[union-attr]
    return dict(json.loads(text[text.index("{") :]))


def content_of(answer: dict[str, object]) -> object:
    """Our tool content ({"content": [{"text": ...}], "isError"?}) inside the tool's output."""
    output = answer["output"]
    content = json.loads(output) if isinstance(output, str) else output
    assert isinstance(content, dict), answer
    return json.loads(content["content"][0]["text"]), content.get("isError", False)


def test_chrome_devtools_mcp_lists_and_runs_our_tools(devtools_mcp: McpClient, console_page: tuple[Page, str]) -> None:
    page, base = console_page
    assert {"list_webmcp_tools", "execute_webmcp_tool"} <= devtools_mcp.tool_names()
    pid = page_id(devtools_mcp, base + "/index.html")
    listing = devtools_mcp.call("list_webmcp_tools", {"pageId": pid}).content[0].text  # type: ignore[union-attr]
    for name in ("view_devices__filters__setFilters", "view_devices__table__selectVisible", "domain_devices__query"):
        assert name in listing, listing
    # The browser carries WebMCP's own hints to the client (it drops MCP's destructiveHint, which
    # its API does not know): the client sees which tools need the person.
    hints = {
        line.split('"', 2)[1]: json.loads(line.rsplit("annotations=", 1)[1])
        for line in listing.splitlines()
        if line.startswith("name=") and "annotations=" in line
    }
    assert hints["domain_devices__query"]["readOnly"] is True
    assert hints["view_devices__filters__setFilters"]["consequential"] is False

    value, failed = content_of(execute(devtools_mcp, pid, "view_devices__filters__setFilters", {"status": "offline", "city": "Milan"}))
    assert (value, failed) == ({"status": "offline", "city": "Milan", "text": None}, False)
    value, failed = content_of(execute(devtools_mcp, pid, "view_devices__filters__setFilters", {"status": 5}))
    assert failed is True and value["code"] == "INVALID_INPUT"  # type: ignore[index]
    value, _ = content_of(execute(devtools_mcp, pid, "view_devices__table__selectVisible", {}))
    assert sorted(value) == MILAN_OFFLINE  # type: ignore[arg-type]

    person = WebMCPAgent(page)
    person.wait_for_tool("domain_devices__disable")
    relisted = devtools_mcp.call("list_webmcp_tools", {"pageId": pid}).content[0].text  # type: ignore[union-attr]
    disable = next(line for line in relisted.splitlines() if line.startswith('name="domain_devices__disable"'))
    assert json.loads(disable.rsplit("annotations=", 1)[1])["consequential"] is True
    pending = devtools_mcp.start(
        devtools_mcp.session.call_tool(
            "execute_webmcp_tool",
            {"pageId": pid, "toolName": "domain_devices__disable", "input": json.dumps({"reason": "maintenance"})},
        )
    )
    assert "Disable 7 device(s)" in person.wait_for_dialog()
    assert not pending.done()
    person.approve()  # the person's trusted click; chrome-devtools-mcp was not asked to click
    result = pending.result(timeout=60)
    text = result.content[0].text
    value, failed = content_of(json.loads(text[text.index("{") :]))
    assert failed is False and value["disabled"] == 7  # type: ignore[index]
    after = statuses(base)
    assert all(after[i] == "disabled" for i in MILAN_OFFLINE)
