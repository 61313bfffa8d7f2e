"""web/agentsurface.js's lean boot: a page that needs nothing but agentsurface at start gets
it from its zip (no package loader on the way to its first tool), and agentsurface's own
dependencies still arrive when they are needed: in the background after the first tools, or on
first import (loaded there and then, where Python can wait; a clear error where it cannot)."""

from __future__ import annotations

import json

LEAN = "/e2e/pages/lean-boot.html"


def _tool_call(page, input_json: str) -> dict:
    return json.loads(
        page.evaluate(
            """async (input) => {
                const tools = await document.modelContext.getTools();
                const tool = tools.find((t) => t.name.endsWith("rename"));
                return await document.modelContext.executeTool(tool, JSON.parse(input));
            }""",
            input_json,
        )
    )


def test_the_first_tool_comes_from_the_zip_without_pydantic_or_jsonschema(open_page, record_timing):
    run = open_page(LEAN, variant="webmcp")
    timings = run.wait_ready()
    record_timing(timings, "agentsurface.js lean boot (zip)")
    page = run.page
    assert page.evaluate("() => window.agentSurface.loadedFrom") == "zip"
    assert page.evaluate("() => window.leanAtStart") == ""  # none of them imported at start
    assert ".zip/agentsurface/__init__.py" in page.evaluate("() => window.leanFile")
    # records' generated methods come from the build's compiled code, and only while each is
    # made: dataclasses itself is left as it was (agentsurface._compat.generated_code)
    code = json.loads(page.evaluate("() => window.leanDataclassExec"))
    assert code["installed"] is False and code["compiled"] > 50
    # Pyodide booted with the build's stdlib zip, which holds the boot's modules compiled
    assert page.evaluate("() => window.leanStdlibBytecode()") is True
    # An invalid input right away: the compiled check cannot prove it valid, so jsonschema
    # decides and writes the issue, loaded on first import if the background load is not done.
    refused = _tool_call(page, json.dumps({"name": ""}))
    assert refused["isError"] is True
    error = json.loads(refused["content"][0]["text"])
    assert error["code"] == "INVALID_INPUT"
    assert error["details"]["issues"] == [{"message": "violates minLength 1", "path": "/name"}]
    accepted = _tool_call(page, json.dumps({"name": "lamp"}))
    assert not accepted.get("isError")
    assert json.loads(accepted["content"][0]["text"]) == {"name": "lamp"}
    page.evaluate("() => window.agentSurface.complete")
    assert page.evaluate("() => window.leanLoadedNow()") == "jsonschema"  # imported; pydantic only loaded
    loaded = page.evaluate("() => Object.keys(window.agentSurface.pyodide.loadedPackages)")
    assert {name.replace("_", "-").lower() for name in loaded} == {
        "annotated-types", "attrs", "jsonschema", "jsonschema-specifications", "pydantic",
        "pydantic-core", "pyrsistent", "pyrsistent-as-rpds-py", "referencing", "rpds-py",
        "typing-inspection", "typing-extensions",
    }
    assert isinstance(page.evaluate("() => window.agentSurface.timings.completeMs"), int)
    assert run.console_errors == []


def test_a_dependency_imported_where_python_cannot_wait_fails_clearly(open_page):
    run = open_page(LEAN, variant="webmcp")
    run.wait_ready()
    # Before the background load has finished (it may have: then the import just works).
    answer = run.page.evaluate("() => window.leanImportNow('jsonschema')")
    if answer != "imported":
        assert answer.startswith("ModuleNotFoundError: No module named 'jsonschema'")
        assert "data-packages" in answer
    run.page.evaluate("() => window.agentSurface.complete")
    assert run.page.evaluate("() => window.leanImportNow('jsonschema')") == "imported"
    assert run.console_errors == []


def test_a_type_hint_in_a_page_script_loads_pydantic_on_first_import(open_page):
    run = open_page("/e2e/pages/lean-typed.html", variant="plain")
    run.wait_ready()
    assert run.page.evaluate("() => window.agentSurface.loadedFrom") == "zip"
    result = json.loads(run.page.evaluate("() => window.leanTyped"))
    assert result == {
        "hadPydantic": False,
        "schema": {"items": {"type": "string"}, "type": "array"},
        "valid": "Valid",
        "invalid": "Invalid",
    }
    assert run.console_errors == []


def test_a_call_made_while_the_dependencies_still_load_waits_for_them(open_page):
    held, released = [], []

    def hold(route):
        route.continue_() if released else held.append(route)

    def hold_wheels(run):
        # The background load's wheels wait until the test lets them through.
        run.page.route("**/dist/wheels/*.whl", hold)

    run = open_page(LEAN, variant="webmcp", before_goto=hold_wheels)
    run.wait_ready()
    page = run.page
    assert page.evaluate("() => 'completeMs' in window.agentSurface.timings") is False
    page.evaluate(
        """() => { window.pendingCall = (async () => {
            const tool = (await document.modelContext.getTools()).find((t) => t.name.endsWith("rename"));
            return await document.modelContext.executeTool(tool, { name: "" });
        })(); }"""
    )
    page.wait_for_timeout(300)
    assert held, "the background load never asked for a wheel"
    assert page.evaluate("() => window.leanLoadedNow()") == ""  # the call waits, nothing failed
    released.append(True)
    for route in held:
        route.continue_()
    answer = json.loads(page.evaluate("() => window.pendingCall"))
    assert answer["isError"] is True
    assert json.loads(answer["content"][0]["text"])["code"] == "INVALID_INPUT"
    page.evaluate("() => window.agentSurface.complete")
    assert run.console_errors == []


def test_a_burst_of_odd_inputs_while_the_dependencies_load_is_answered_call_by_call(open_page):
    """Sixty calls at once right after ready, most of them invalid: each gets its own typed
    answer (jsonschema is imported once, after the background load), none fails in the page."""
    run = open_page(LEAN, variant="webmcp")
    run.wait_ready()
    answers = run.page.evaluate(
        """async () => {
            const tool = (await document.modelContext.getTools()).find((t) => t.name.endsWith("rename"));
            const inputs = [{name: ""}, {name: "x".repeat(50)}, {name: 5}, {}, {name: "ok", extra: 1},
                            {name: "a\\ud800"}, {name: "ok"}];
            const pending = !("completeMs" in window.agentSurface.timings);
            const calls = Array.from({length: 60}, (_, i) => document.modelContext
                .executeTool(tool, inputs[i % inputs.length])
                .then((text) => JSON.parse(JSON.parse(text).content[0].text).code ?? "ok"));
            return {pending, codes: [...new Set(await Promise.all(calls))].sort()};
        }"""
    )
    assert answers["codes"] == ["INVALID_INPUT", "ok"], answers
    assert run.console_errors == []
