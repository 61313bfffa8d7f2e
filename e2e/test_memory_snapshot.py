"""Pages that opt in with ``data-memory-snapshot`` boot Pyodide from the runtime build's memory
snapshot (agentsurface/_runtime_build/memory_snapshot.py) and then behave as a page booted the
usual way: the devices console (index.html) reaches its tools and answers calls, state that must
differ per visit does, and a snapshot that does not fit the page or the runtime is refused:
skipped with a warning where the page can boot without it, a start that fails clearly where its
bytes are not the ones the build wrote."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agentsurface._runtime_build.memory_snapshot import MEMORY_INFO, MEMORY_SNAPSHOT
from test_console import agent_for, console_server  # noqa: F401 (console_server: a fixture)
from test_console_lean_boot import AT_FIRST_TOOL

FETCHED = "() => performance.getEntriesByType('resource').map((entry) => entry.name)"
RANDOM = "() => window.agentSurface.pyodide.runPython('__import__(\"random\").random()')"


def _warnings(run: Any) -> list[str]:
    return [text for kind, text in run.console if kind == "warning"]


def test_the_console_boots_from_the_snapshot_and_works(open_page: Any, console_server: str) -> None:  # noqa: F811
    def watch(run: Any) -> None:
        run.context.add_init_script(script=f"({AT_FIRST_TOOL})({json.dumps(['pydantic', 'jsonschema'])})")

    run = open_page("/index.html", variant="webmcp", base=console_server, before_goto=watch)
    page = run.page
    page.wait_for_function("() => document.body.dataset.ready === 'true'")
    assert page.evaluate("() => window.agentSurface.memorySnapshot") is True
    assert any(url.endswith(MEMORY_SNAPSHOT) for url in page.evaluate(FETCHED))
    # The library came from the snapshot: already imported before the page's first script ran,
    # and its not-yet-imported modules still read from the zip written after the restore.
    assert page.evaluate("() => window.agentSurface.pyodide.runPython('import agentsurface.browser.memory_snapshot as m; m.__name__')")
    assert page.evaluate("() => window.modulesAtFirstTool") == []  # pydantic, jsonschema: loaded after
    # The page's scripts share Pyodide's globals: the build's own names are not among them.
    leftover = "[n for n in ('skipped', 'pkgutil', 'importlib', 'annotated_types', 'zip_path') if n in globals()]"
    assert page.evaluate(f"() => window.agentSurface.pyodide.runPython({json.dumps(leftover)}).toJs()") == []
    # A view call and a procedure answered by the server.
    agent = agent_for(run)
    assert agent.call("view_devices__filters__setFilters", {"status": "offline", "city": "Milan"}).expect_ok() == {
        "status": "offline", "city": "Milan", "text": None}
    found = agent.call("domain_devices__query", {"status": "offline", "city": "Milan"}).expect_ok()
    assert found["total"] == 7
    # The background load (Pyodide's package loader, after a restore) brings pydantic in.
    page.evaluate("() => window.agentSurface.complete")
    assert page.evaluate("() => window.agentSurface.pyodide.runPython('import pydantic; pydantic.VERSION')")
    path = page.evaluate("() => window.agentSurface.pyodide.runPython('import json, sys; json.dumps(sys.path)')")
    assert len(json.loads(path)) == len(set(json.loads(path)))  # the restore's repeated entries dropped
    assert run.console_errors == []
    assert _warnings(run) == []


def test_every_visit_gets_its_own_random_state(open_page: Any, console_server: str) -> None:  # noqa: F811
    # The snapshot froze the random module's state at build time: without seeding it again, every
    # visit would draw the same numbers.
    draws = []
    for _ in range(2):
        run = open_page("/index.html", variant="webmcp", base=console_server)
        run.wait_ready()
        assert run.page.evaluate("() => window.agentSurface.memorySnapshot") is True
        draws.append(run.page.evaluate(RANDOM))
        run.context.close()
    assert draws[0] != draws[1]


def test_a_page_without_the_attribute_never_fetches_the_snapshot(open_page: Any) -> None:
    run = open_page("/e2e/pages/lean-boot.html", variant="webmcp")
    run.wait_ready()
    assert run.page.evaluate("() => window.agentSurface.memorySnapshot") is False
    fetched = run.page.evaluate(FETCHED)
    assert any(url.endswith("agentsurface-zip.json") for url in fetched)  # the list is the loader's fetches
    assert not [url for url in fetched if "agentsurface-memory" in url]
    assert run.console_errors == []


def test_a_snapshot_of_another_build_is_skipped_with_a_warning(open_page: Any, console_server: str) -> None:  # noqa: F811
    def stale(run: Any) -> None:
        def answer(route: Any) -> None:
            info = json.loads(route.fetch().text())
            route.fulfill(json={**info, "zip_sha256": "0" * 64})

        run.context.route(f"**/{MEMORY_INFO}", answer)

    run = open_page("/index.html", variant="webmcp", base=console_server, before_goto=stale)
    run.page.wait_for_function("() => document.body.dataset.ready === 'true'")
    assert run.page.evaluate("() => window.agentSurface.memorySnapshot") is False
    assert run.page.evaluate("() => window.agentSurface.loadedFrom") == "zip"
    assert agent_for(run).call("view_devices__table__visibleRows", {}).expect_ok()
    assert _warnings(run) == [
        "agentsurface: data-memory-snapshot not used: it was made from another build of the runtime (rebuild it)"
    ]
    assert run.console_errors == []


def test_a_page_loading_pydantic_at_start_boots_without_the_snapshot(open_page: Any) -> None:
    run = open_page("/e2e/pages/memory-snapshot-pydantic.html", variant="webmcp")
    run.wait_ready()
    assert run.page.evaluate("() => window.agentSurface.memorySnapshot") is False
    assert run.page.evaluate("() => window.pydanticVersion").startswith("2.")
    assert _warnings(run) == [
        "agentsurface: data-memory-snapshot not used: "
        "the page loads agentsurface's wheel or its dependencies with Pyodide's package loader at start"
    ]
    assert run.console_errors == []


@pytest.mark.allow_page_errors(r"agentsurface failed to start", r"integrity")
def test_snapshot_bytes_other_than_the_builds_fail_the_start_clearly(open_page: Any, console_server: str) -> None:  # noqa: F811
    def tampered(run: Any) -> None:
        def answer(route: Any) -> None:
            body = bytearray(route.fetch().body())
            body[len(body) // 2] ^= 0xFF  # one byte of the interpreter's memory changed in transit
            route.fulfill(body=bytes(body), headers={"content-type": "application/gzip"})

        run.context.route(f"**/{MEMORY_SNAPSHOT}", answer)

    run = open_page("/index.html", variant="webmcp", base=console_server, before_goto=tampered)
    run.page.wait_for_function("() => window.agentSurface?.error !== null && window.agentSurface?.error !== undefined")
    error = run.page.evaluate("() => window.agentSurface.error")
    assert error.startswith("could not load the memory snapshot from "), error
    assert run.page.evaluate("async () => (await document.modelContext.getTools()).length") == 0
