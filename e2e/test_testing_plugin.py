"""The ``testing`` extra's tools in an app's own pytest session, as docs/guides/testing.md shows them: a page
test on pytest-playwright's sync ``page`` with the plugin's ``static_server`` (a folder on a free
127.0.0.1 port) and ``webmcp_agent``, then harness tests in the same session, sync (``call``,
``read``) and ``async def`` (pytest-asyncio), which used to fail once Playwright's sync API had
left its event loop on the thread ("cannot be called from a running event loop")."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

CONFTEST = '''
import shutil

import pytest
from agentsurface.testing import with_webmcp


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    return with_webmcp(browser_type_launch_args, executable_path=shutil.which("chromium"))
'''

TESTS = '''
import pytest
from agentsurface import AgentComponent, action, observation
from agentsurface.testing import assert_fails_with, assert_ok, create_test_surface


class Notes(AgentComponent, type="notes.list", description="The notes"):
    def __init__(self):
        self.items = []

    @observation("The notes")
    def notes(self) -> list[str]:
        return self.items

    @action("Add a note")
    def add(self, text: str) -> int:
        self.items.append(text)
        return len(self.items)


def test_1_a_page_first(page, webmcp_agent, static_server):
    base = static_server("site")
    page.goto(base + "/index.html")
    assert page.locator("h1").inner_text() == "Notes"
    assert webmcp_agent.shape == "native"  # Chromium's WebMCP testing API is on
    assert page.evaluate("() => fetch('/missing.txt').then((r) => r.status)") == 404


@pytest.mark.asyncio
async def test_2_async_harness_after_the_page():
    surface = create_test_surface(contracts=[Notes])
    surface.mount(Notes())
    assert_ok(await surface.invoke("view:notes.list.add", {"text": "milk"}))
    assert await surface.observe("view:notes.list.notes") == ["milk"]


def test_3_sync_harness_after_the_page():
    surface = create_test_surface(contracts=[Notes])
    surface.mount(Notes())
    assert_ok(surface.call("view:notes.list.add", {"text": "eggs"}))
    assert_fails_with(surface.call("view:notes.list.add", {"text": 3}), "INVALID_INPUT")
    assert surface.read("view:notes.list.notes") == ["eggs"]
    surface.close()


def test_4_a_missing_folder_says_what_to_do(static_server):
    with pytest.raises(FileNotFoundError, match="run `agentsurface bundle --out nothing/` first"):
        static_server("nothing")
'''


def test_the_testing_tools_share_one_session_with_pytest_playwright(tmp_path: Path) -> None:
    (tmp_path / "conftest.py").write_text(textwrap.dedent(CONFTEST))
    (tmp_path / "test_app.py").write_text(textwrap.dedent(TESTS))
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "index.html").write_text("<!doctype html><title>Notes</title><h1>Notes</h1>")
    (tmp_path / "pytest.ini").write_text("[pytest]\n")  # its own rootdir, not this repository's
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTEST_ADDOPTS")}
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_app.py"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "4 passed" in result.stdout, result.stdout
