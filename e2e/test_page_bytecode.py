"""A page whose loader tag says ``data-compiled`` fetches its data-files' bytecode with them
(written by ``agentsurface precompile PAGE``) and imports it instead of compiling the sources;
a source that no longer matches its pyc runs as written; a missing pyc fails the start with the
step that makes it. The devices console (index.html) boots this way."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentsurface._runtime_build.page_bytecode import page_python_files, precompile_page
from agentsurface._runtime_build.precompile import pyc_name
from test_console import console_server  # noqa: F401 (a fixture)

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "e2e" / "pages" / "compiled.html"
FETCHED = "() => performance.getEntriesByType('resource').map((entry) => entry.name)"


@pytest.fixture(scope="module")
def compiled_page(web_dist: Path) -> str:
    precompile_page(PAGE)
    return "/e2e/pages/compiled.html"


def test_the_pages_modules_are_imported_from_their_bytecode(open_page: Any, compiled_page: str) -> None:
    run = open_page(compiled_page)
    run.page.wait_for_function("() => window.answer !== undefined")
    assert run.page.evaluate("() => window.answer") == 42
    assert json.loads(run.page.evaluate("() => window.compiledInPage")) == []
    fetched = run.page.evaluate(FETCHED)
    assert any(url.endswith("compiled_app/__pycache__/mod.cpython-314.pyc") for url in fetched)
    assert run.console_errors == [] and run.page_errors == []


def test_a_source_edited_after_the_step_runs_as_written(open_page: Any, compiled_page: str) -> None:
    def edited(run: Any) -> None:
        run.context.route("**/compiled_app/mod.py", lambda route: route.fulfill(body="ANSWER = 43\n"))

    run = open_page(compiled_page, before_goto=edited)
    run.page.wait_for_function("() => window.answer !== undefined")
    assert run.page.evaluate("() => window.answer") == 43  # the stale pyc is not used
    assert [Path(name).name for name in json.loads(run.page.evaluate("() => window.compiledInPage"))] == ["mod.py"]
    assert run.console_errors == [] and run.page_errors == []


@pytest.mark.allow_page_errors(r"agentsurface failed to start", r"status of 404")
def test_a_missing_pyc_fails_the_start_naming_the_step(open_page: Any, compiled_page: str) -> None:
    def missing(run: Any) -> None:
        run.context.route("**/mod.cpython-314.pyc", lambda route: route.fulfill(status=404, body=""))

    run = open_page(compiled_page, before_goto=missing)
    run.page.wait_for_function("() => window.agentSurface?.error !== null && window.agentSurface?.error !== undefined")
    error = run.page.evaluate("() => window.agentSurface.error")
    assert "data-compiled: data-files: compiled_app/__pycache__/mod.cpython-314.pyc: HTTP 404" in error
    assert "agentsurface precompile" in error
    assert run.page.evaluate("() => window.answer") is None


# The server first: fixtures end in reverse, so the page closes before its server stops (the
# console's background imports, a second after it is ready, would otherwise meet a closed port).
def test_the_console_fetches_the_bytecode_of_every_module(console_server: str, open_page: Any) -> None:  # noqa: F811
    run = open_page("/index.html", variant="webmcp", base=console_server)
    run.page.wait_for_function("() => document.body.dataset.ready === 'true'")
    fetched = run.page.evaluate(FETCHED)
    sources = page_python_files((ROOT / "index.html").read_text())
    assert len(sources) == 12
    for source in sources:
        assert any(url.endswith(pyc_name(source)) for url in fetched), source
    # Each module's code came from its pyc: the pyc the import validated is in the page's files.
    cached = run.page.evaluate(
        """() => window.agentSurface.pyodide.runPython(`
import json, os, sys
json.dumps(sorted(name for name, module in sys.modules.items()
                  if name.startswith("demo") and not os.path.exists(module.__cached__ or "")))
`)"""
    )
    assert json.loads(cached) == []
    assert run.console_errors == []
