"""``agentsurface mcp`` and a page that is not ready yet (issue 43.5): a one-shot client's first
``tools/list`` waits (bounded) for the page to list its first tool, instead of answering ``[]``
while Pyodide boots; a page that loads without any WebMCP client is an error that names the
flags, instead of ``[]`` forever."""

from __future__ import annotations

import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp.shared.exceptions import McpError

from agentsurface.testing.static import StaticServer
from mcp_client import McpClient
from test_mcp_bridge import start_chromium

# A page whose one tool appears 3 s after load, as a Pyodide page's first tools do.
LATE_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>late</title><link rel="icon" href="data:,"></head>
<body><p>booting</p><script>
setTimeout(() => {
  document.modelContext.registerTool({
    name: "late_echo", description: "Echo the text", annotations: {readOnlyHint: true},
    inputSchema: {type: "object", properties: {text: {type: "string"}}, required: ["text"]},
    execute: async (input) => JSON.stringify(input.text),
  });
  document.querySelector("p").textContent = "ready";
}, 3000);
</script></body></html>
"""


@pytest.fixture
def late_page(tmp_path: Path) -> Iterator[str]:
    (tmp_path / "index.html").write_text(LATE_PAGE)
    server = StaticServer(tmp_path)
    yield server.url + "/index.html"
    server.close()


def bridge(*args: str) -> list[str]:
    return [sys.executable, "-m", "agentsurface", "mcp", *args]


def test_a_one_shot_client_gets_the_tools_of_a_page_still_booting(chromium_executable: str, late_page: str) -> None:
    with tempfile.TemporaryFile("w+") as errlog:
        client = McpClient.stdio(bridge(late_page, "--headless", "--browser", chromium_executable), errlog=errlog)
        try:
            started = time.monotonic()
            assert [t.name for t in client.list_tools()] == ["late_echo"]  # the first answer, not []
            assert time.monotonic() - started < 20
            result = client.call("late_echo", {"text": "hi"})
            assert not result.isError and result.content[0].text == '"hi"'  # type: ignore[union-attr]
        except AssertionError as failed:
            errlog.seek(0)
            raise AssertionError(f"{failed}\n--- the bridge's stderr ---\n{errlog.read()[-4000:]}") from failed
        finally:
            client.close()


def test_a_call_before_the_first_listing_waits_for_the_page_too(chromium_executable: str, late_page: str) -> None:
    with tempfile.TemporaryFile("w+") as errlog:
        client = McpClient.stdio(bridge(late_page, "--headless", "--browser", chromium_executable), errlog=errlog)
        try:
            result = client.call("late_echo", {"text": "early"})
            assert not result.isError and result.content[0].text == '"early"'  # type: ignore[union-attr]
        finally:
            client.close()


def test_a_chromium_without_webmcp_is_an_error_naming_the_flags(
    chromium_executable: str, late_page: str, tmp_path: Path
) -> None:
    process, endpoint = start_chromium(chromium_executable, tmp_path / "profile", "NoSuchFeature")
    try:
        with tempfile.TemporaryFile("w+") as errlog:
            client = McpClient.stdio(bridge(late_page, "--cdp", endpoint), errlog=errlog)
            try:
                started = time.monotonic()
                with pytest.raises(McpError, match=r"loaded without WebMCP .*--enable-features=WebMCP,WebMCPTesting"):
                    client.list_tools()
                assert time.monotonic() - started < 15  # said once the page loaded, not at the timeout
                with pytest.raises(McpError, match="loaded without WebMCP"):
                    client.call("late_echo", {"text": "x"})
            finally:
                client.close()
            errlog.seek(0)
            said = errlog.read()
            assert said.count("loaded without WebMCP") == 1, said  # said once on stderr, too
            assert "Traceback" not in said
    finally:
        process.kill()
        process.wait(timeout=10)


HANGING_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>hang</title><link rel="icon" href="data:,"></head>
<body><script>
document.modelContext.registerTool({
  name: "wait_for_person", description: "Waits as a call waiting for the person's approval does",
  inputSchema: {type: "object", properties: {}},
  execute: () => new Promise(() => {}),
});
</script></body></html>
"""


def test_a_client_leaving_during_an_approval_wait_leaves_no_traceback(
    chromium_executable: str, tmp_path: Path
) -> None:
    """Issue 43.10: the client exits while a call waits (for the person's approval): the bridge
    ends quietly."""
    (tmp_path / "index.html").write_text(HANGING_PAGE)
    server = StaticServer(tmp_path)
    try:
        with tempfile.TemporaryFile("w+") as errlog:
            client = McpClient.stdio(
                bridge(server.url + "/index.html", "--headless", "--browser", chromium_executable), errlog=errlog
            )
            try:
                assert [t.name for t in client.list_tools()] == ["wait_for_person"]
                _request_id, pending = client.start_call("wait_for_person", {})
                time.sleep(1.0)
                assert not pending.done()
            finally:
                client.close()  # stdin closes: the bridge shuts down mid-call
            time.sleep(2.0)
            errlog.seek(0)
            said = errlog.read()
            assert "Traceback" not in said, said
    finally:
        server.close()
