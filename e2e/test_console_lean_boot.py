"""The devices console reaches its first tool without pydantic (nor jsonschema, nor the server's
contract modules): its procedures come from the reviewed contract.json, its view hints are simple
(dataclass records, annotated_types constraints), and agentsurface is imported from its zip.
It still refuses what it refused with pydantic, with pydantic's issues (loaded then), and a valid
call reaches the server as before."""

from __future__ import annotations

import json
from typing import Any

from test_console import console_server, open_console  # noqa: F401 (a fixture, and the page's opening)

WATCHED = ["pydantic", "pydantic_core", "jsonschema", "demo.shared.contracts", "demo.shared.session"]
# Stdlib modules the page compiles from source (Pyodide ships its stdlib as sources) that nothing
# on the way to the first tool needs: the library's bridge, transport, dialog and type hints, and
# Pyodide's package loader (the data-packages are imported in place from their wheels).
NOT_COMPILED = [
    "urllib.parse", "ipaddress", "importlib.resources", "uuid", "secrets", "hmac", "pyodide.http",
    "tarfile", "importlib.metadata",
]

# Installed before the page's scripts: which of WATCHED are imported when its first tool appears.
AT_FIRST_TOOL = """(watched) => {
  document.modelContext.addEventListener("toolchange", () => {
    if (window.modulesAtFirstTool !== undefined) return;
    const sys = window.agentSurface.pyodide.pyimport("sys");
    try {
      window.modulesAtFirstTool = watched.filter((name) => sys.modules.has(name));
    } finally {
      sys.destroy();
    }
  });
}"""


def _without_memory_snapshot(route: Any) -> None:
    """index.html as a page that does not opt in: this file tests the boot without the snapshot
    (e2e/test_memory_snapshot.py tests it with)."""
    page = route.fetch().text()
    assert " data-memory-snapshot " in page
    route.fulfill(body=page.replace(" data-memory-snapshot ", " "), content_type="text/html")


def _open(open_page: Any, base: str) -> Any:
    def watch(run: Any) -> None:
        run.context.route("**/index.html", _without_memory_snapshot)
        run.context.add_init_script(script=f"({AT_FIRST_TOOL})({json.dumps(WATCHED + NOT_COMPILED)})")

    run = open_page("/index.html", variant="webmcp", base=base, before_goto=watch)
    run.page.wait_for_function("() => document.body.dataset.ready === 'true'")
    return run


def _call(page: Any, name: str, tool_input: dict[str, Any]) -> dict[str, Any]:
    text = page.evaluate(
        """async ([name, input]) => {
            const tool = (await document.modelContext.getTools()).find((t) => t.name === name);
            if (!tool) throw new Error(`no tool ${name}`);
            return await document.modelContext.executeTool(tool, input);
        }""",
        [name, tool_input],
    )
    return json.loads(text)


def _ok(result: dict[str, Any]) -> Any:
    assert not result.get("isError"), result
    return json.loads(result["content"][0]["text"])


def _issues(result: dict[str, Any]) -> dict[str, str]:
    assert result.get("isError") is True, result
    error = json.loads(result["content"][0]["text"])
    assert error["code"] == "INVALID_INPUT", error
    return {issue["path"]: issue["message"] for issue in error["details"]["issues"]}


def _schemas(page: Any) -> dict[str, Any]:
    tools = page.evaluate(
        "async () => Object.fromEntries((await document.modelContext.getTools()).map((t) => [t.name, t.inputSchema]))"
    )
    return {name: json.loads(s) if isinstance(s, str) else s for name, s in tools.items()}


def test_the_console_reaches_its_first_tool_without_pydantic(open_page: Any, console_server: str) -> None:  # noqa: F811
    run = _open(open_page, console_server)
    page = run.page
    assert page.evaluate("() => window.modulesAtFirstTool") == []
    assert page.evaluate("() => window.agentSurface.loadedFrom") == "zip"  # agentsurface alone at boot
    assert page.evaluate("() => window.agentSurface.memorySnapshot") is False
    # index.html's data-packages, pure-Python wheels, imported in place (no package loader at boot).
    assert sorted(page.evaluate("() => window.agentSurface.inPlace")) == ["annotated-types", "typing-extensions"]
    schemas = _schemas(page)
    assert schemas["view_devices__table__openDevice"]["properties"]["deviceId"] == {
        "maxLength": 64, "title": "Deviceid", "type": "string"}
    assert schemas["view_devices__table__selectRows"]["properties"]["ids"]["maxItems"] == 200
    assert schemas["domain_devices__query"]["properties"]["limit"] == {
        "default": 50, "maximum": 200, "minimum": 1, "title": "Limit", "type": "integer"}
    # Valid calls: the view's records, and a procedure answered by the server.
    assert _ok(_call(page, "view_devices__filters__setFilters", {"status": "offline", "city": "Milan"})) == {
        "status": "offline", "city": "Milan", "text": None}
    rows = _ok(_call(page, "view_devices__table__visibleRows", {}))
    assert len(rows) == 7 and set(rows[0]) == {"id", "name", "model", "city", "status", "lastSeen"}
    found = _ok(_call(page, "domain_devices__query", {"status": "offline", "city": "Milan"}))
    assert found["total"] == 7 and {d["id"] for d in found["devices"]} == {r["id"] for r in rows}
    assert run.console_errors == []


def test_the_console_refuses_what_pydantic_refuses_with_its_issues(open_page: Any, console_server: str) -> None:  # noqa: F811
    run = _open(open_page, console_server)
    page = run.page
    # pydantic's issue, not jsonschema's (the server's own contract, imported then).
    assert _issues(_call(page, "domain_devices__query", {"limit": 5.5})) == {
        "/limit": "Input should be a valid integer"}
    # A trailing line break: Python's `$` would match before it, pydantic-core's does not.
    refused = _issues(_call(page, "domain_devices__query", {"city": "Milan\n"}))
    assert set(refused) == {"/city/str"} or set(refused) == {"/city"}, refused
    # The view's constraints (annotated_types markers), refused as before.
    assert set(_issues(_call(page, "view_devices__filters__setFilters", {"city": "x" * 81}))) <= {
        "/city", "/city/str"}
    assert set(_issues(_call(page, "view_devices__table__selectRows", {"ids": ["x"] * 201}))) == {"/ids"}
    assert set(_issues(_call(page, "view_devices__table__openDevice", {"deviceId": 7, "extra": 1}))) == {
        "/deviceId", "/extra"}
    assert page.evaluate("() => window.agentSurface.pyodide.runPython('\"pydantic\" in __import__(\"sys\").modules')")
    assert run.console_errors == []
