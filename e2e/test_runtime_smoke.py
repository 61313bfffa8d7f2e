"""The offline browser runtime, end to end in Chromium: Pyodide + agentsurface + WebMCP.

The agent is the browser's own client on shape B (document.modelContext.getTools/executeTool),
the polyfill's navigator.modelContextTesting on shape A, and nobody when WebMCP is absent.
The page code is e2e/pages/smoke.py (run by web/agentsurface.js).
"""

from __future__ import annotations

import importlib.metadata
import json

import pytest

SMOKE = "/e2e/pages/smoke.html"
SMOKE_POLYFILL = "/e2e/pages/smoke-polyfill.html"
LEAN = "/e2e/pages/lean-boot.html"


def smoke_result(run) -> dict:
    return json.loads(run.page.evaluate("() => window.smokeResult"))


def assert_python_stack(result: dict) -> None:
    assert result["python"].startswith("3.14")
    assert result["agentSurface"] == "agentsurface"
    assert result["pydantic"] == "2.14.3"
    assert result["order"] == {"item": "lamp", "qty": 3}  # pydantic coerced "3"
    assert result["jsonschemaRejects"] is True  # jsonschema ran (on the rpds shim) and said no
    assert result["rpdsModule"] == "rpds <- pyrsistent_as_rpds.pure"


def test_webmcp_flag_python_tool_reaches_the_browser_client(open_page, record_timing):
    run = open_page(SMOKE, variant="webmcp")
    timings = run.wait_ready()
    result = smoke_result(run)
    record_timing({**timings, "importMs": result["importMs"]}, "agentsurface.js, WebMCPTesting")

    assert_python_stack(result)
    assert result["shape"] == "document"

    tools = run.page.evaluate("""async () => (await document.modelContext.getTools()).map(
        ({name, title, description, inputSchema, annotations}) =>
            ({name, title, description, inputSchema, annotations}))""")
    assert [tool["name"] for tool in tools] == ["smoke.add"]
    assert tools[0]["title"] == "Add two numbers"
    assert tools[0]["inputSchema"]["required"] == ["a", "b"]
    assert tools[0]["annotations"]["readOnlyHint"] is True

    output = run.page.evaluate("""async () => {
        const [tool] = await document.modelContext.getTools();
        window.withdrawnTool = tool;
        return await document.modelContext.executeTool(tool, {a: 2, b: 3});
    }""")
    assert isinstance(output, str)  # shape B resolves to the JSON text of what execute returned
    assert json.loads(output)["sum"] == 5
    assert json.loads(output)["computedBy"].startswith("python 3.14")

    after = run.page.evaluate("""async () => {
        window.smokeAbort();
        await new Promise((resolve) => setTimeout(resolve, 0));
        let error = null;
        try { await document.modelContext.executeTool(window.withdrawnTool, {a: 1, b: 1}); }
        catch (e) { error = e.name; }
        return {tools: (await document.modelContext.getTools()).length, error};
    }""")
    assert after["tools"] == 0
    assert after["error"] is not None  # the withdrawn tool can no longer be executed
    assert run.console_errors == []


def test_polyfill_python_tool_reaches_the_testing_shim(open_page, record_timing):
    run = open_page(SMOKE_POLYFILL, variant="plain")
    timings = run.wait_ready()
    result = smoke_result(run)
    record_timing({**timings, "importMs": result["importMs"]}, "agentsurface.js, polyfill")

    assert_python_stack(result)
    assert result["shape"] == "navigator"
    surface = run.page.evaluate("""() => ({
        documentModelContext: 'modelContext' in document,
        polyfill: navigator.modelContext.__isWebMCPPolyfill === true,
        shapeA: ['provideContext', 'clearContext', 'registerTool', 'unregisterTool']
            .every((name) => typeof navigator.modelContext[name] === 'function'),
    })""")
    assert surface == {"documentModelContext": False, "polyfill": True, "shapeA": True}

    tools = run.page.evaluate("() => navigator.modelContextTesting.listTools()")
    assert [tool["name"] for tool in tools] == ["smoke.add"]
    assert json.loads(tools[0]["inputSchema"])["required"] == ["a", "b"]  # a JSON string here

    output = run.page.evaluate(
        "() => navigator.modelContextTesting.executeTool('smoke.add', JSON.stringify({a: 2, b: 3}))"
    )
    call_result = json.loads(output)  # an MCP CallToolResult, serialized
    assert call_result["isError"] is False
    assert call_result["structuredContent"]["sum"] == 5
    assert json.loads(call_result["content"][0]["text"])["sum"] == 5

    rejected = run.page.evaluate("""() => navigator.modelContextTesting
        .executeTool('smoke.add', JSON.stringify({a: 'two'})).then(() => null, (e) => e.message)""")
    assert rejected is not None and "Input validation error" in rejected

    remaining = run.page.evaluate(
        "() => { window.smokeAbort(); return navigator.modelContextTesting.listTools().length; }"
    )
    assert remaining == 0
    assert run.console_errors == []


def test_without_webmcp_the_page_boots_quietly(open_page, record_timing):
    run = open_page(SMOKE, variant="plain")
    timings = run.wait_ready()
    result = smoke_result(run)
    record_timing({**timings, "importMs": result["importMs"]}, "agentsurface.js, no WebMCP")

    assert_python_stack(result)
    assert result["shape"] == "none"
    absent = run.page.evaluate(
        "() => ({document: 'modelContext' in document, navigator: 'modelContext' in navigator})"
    )
    assert absent == {"document": False, "navigator": False}
    assert run.page.inner_text("#status") == "ready"
    assert run.console_errors == []


@pytest.mark.allow_page_errors(
    r"^Failed to load resource: the server responded with a status of 404",
    r"^agentsurface failed to start: TypeError: Failed to fetch dynamically imported module: .*/pyodide\.mjs$",
)
def test_loader_failure_rejects_ready_and_dispatches_error(open_page):
    def break_pyodide(run):
        run.page.route("**/pyodide.mjs", lambda route: route.fulfill(status=404, body="gone"))

    run = open_page(SMOKE, variant="plain", before_goto=break_pyodide)
    run.page.wait_for_function("() => window.agentSurface")
    outcome = run.page.evaluate(
        "() => window.agentSurface.ready.then(() => 'resolved', (e) => 'rejected: ' + e.message)"
    )
    assert outcome.startswith("rejected: ")
    run.page.wait_for_function("() => document.getElementById('status').textContent !== 'booting…'")
    assert run.page.inner_text("#status").startswith("error: ")
    assert any("agentsurface failed to start" in text for text in run.console_errors)


@pytest.mark.parametrize(
    "page",
    [
        pytest.param("/e2e/pages/pyscript.html", id="web-config-passthrough"),
        pytest.param("/e2e/pages/pyscript-micropip.html", id="inline-config-micropip"),
    ],
)
def test_pyscript_runs_agentsurface_and_pydantic(open_page, record_timing, page):
    run = open_page(page, variant="plain")
    run.page.wait_for_function("() => document.getElementById('out').textContent.startsWith('hello')")
    ready_ms = run.page.evaluate("() => Math.round(performance.now())")
    record_timing({"readyMs": ready_ms}, f"PyScript {page.rsplit('/', 1)[-1]}")

    text = run.page.inner_text("#out")
    assert text.startswith("hello PyScript: agentsurface on Python 3.14")
    assert "pydantic 2.14.3" in text
    assert run.page.get_attribute("#out", "data-agentsurface") == "agentsurface"
    assert run.console_errors == []


_SRI_REFUSED = (
    r"^Failed to find a valid digest in the 'integrity' attribute for resource '.*/agentsurface-",
    r"^Fetch API cannot load .*/agentsurface-.*SRI's integrity checks failed",
    r"^agentsurface failed to start: Error: could not load agentsurface",
)


@pytest.mark.parametrize(
    "served",
    [
        pytest.param(
            "whl",
            marks=pytest.mark.allow_page_errors(
                *_SRI_REFUSED,
                # Pyodide's own report while loading the packages it was given at boot:
                r"^The following error occurred while loading agentsurface:",
                r"^Failed to fetch$",
            ),
        ),
        pytest.param("zip", marks=pytest.mark.allow_page_errors(*_SRI_REFUSED)),
    ],
)
def test_integrity_blocks_a_tampered_agentsurface(open_page, web_dist, served):
    file = next((web_dist / "wheels").glob(f"agentsurface-*.{served}"))
    tampered = file.read_bytes() + b"\0"  # still a readable zip, but not the bytes the build wrote

    def tamper(run):
        run.page.route(f"**/{file.name}", lambda route: route.fulfill(body=tampered))

    # The smoke page loads jsonschema at start too, so it installs the wheel; the lean page
    # needs agentsurface alone and imports it from the zip.
    run = open_page(SMOKE if served == "whl" else LEAN, variant="plain", before_goto=tamper)
    run.page.wait_for_function("() => window.agentSurface")
    outcome = run.page.evaluate(
        "() => window.agentSurface.ready.then(() => 'resolved', (e) => 'rejected: ' + e.message)"
    )
    assert outcome.startswith("rejected: could not load agentsurface")
    assert any("integrity" in text for text in run.console_errors)  # the browser's SRI check


# Imports a module the page has not imported yet from each served wheel, counting what the import
# system compiles from source: the build ships Pyodide-compiled bytecode, so nothing should be.
# agentsurface comes from its zip (zipimport compiles a source with zipimport._compile_source).
COMPILED_ON_IMPORT = """
import importlib, importlib._bootstrap_external as external, json, sys, zipimport
compiled = []
original, original_zip = external.SourceLoader.source_to_code, zipimport._compile_source
def counting(self, data, path, *args, **kwargs):
    compiled.append(path)
    return original(self, data, path, *args, **kwargs)
def counting_zip(path, source):
    if not path.startswith("/lib/python3"):  # Pyodide serves its stdlib zip as sources
        compiled.append(path)
    return original_zip(path, source)
external.SourceLoader.source_to_code = counting
zipimport._compile_source = counting_zip
try:
    for name in ("agentsurface.explain", "pydantic.json_schema", "jsonschema.validators", "typing_extensions"):
        importlib.import_module(name)
finally:
    external.SourceLoader.source_to_code = original
    zipimport._compile_source = original_zip
json.dumps([compiled, sys.modules["agentsurface.explain"].__file__])
"""


@pytest.mark.parametrize(
    ("page", "explain_file"),
    [
        pytest.param(SMOKE, "/site-packages/agentsurface/explain.py", id="wheels"),
        pytest.param(LEAN, ".zip/agentsurface/explain.pyc", id="zip"),  # zipimport used the pyc
    ],
)
def test_served_wheels_import_from_bytecode_compiled_at_build_time(open_page, page, explain_file):
    run = open_page(page, variant="plain")
    run.wait_ready()
    run.page.evaluate("() => window.agentSurface.complete.then(() => null)")
    compiled, loaded_from = json.loads(
        run.page.evaluate("(code) => window.agentSurface.pyodide.runPython(code)", COMPILED_ON_IMPORT)
    )
    assert compiled == []
    assert loaded_from.endswith(explain_file)
    loaded = run.page.evaluate(
        "() => window.agentSurface.pyodide.runPython("
        "'import sys; sorted(m for m in (\"agentsurface.explain\", \"pydantic.json_schema\") if m in sys.modules)')"
        ".toJs()"
    )
    assert loaded == ["agentsurface.explain", "pydantic.json_schema"]


# In the page: the records of a module imported now get the build's compiled code (builtins.exec
# is handed code, never text to compile), and dataclasses is left as it was, so a dataclass of
# the page's own is compiled by dataclasses itself (exec is handed its text).
RECORDS_IN_THE_PAGE = """
import builtins, dataclasses, importlib, json, sys, types
installed = "exec" in vars(dataclasses)
seen = []
real_exec = builtins.exec
def spying(source, globals=None, locals=None, /):
    seen.append("code" if isinstance(source, types.CodeType) else "text")
    return real_exec(source, globals, locals)
assert "agentsurface.explain" not in sys.modules
builtins.exec = spying
try:
    importlib.import_module("agentsurface.explain")
    records = list(seen)
    seen.clear()
    @dataclasses.dataclass(frozen=True)
    class PagesOwn:
        x: int
    own = list(seen)
finally:
    builtins.exec = real_exec
installed = installed or "exec" in vars(dataclasses)
json.dumps({"installed": installed, "records": records, "own": own})
"""


@pytest.mark.parametrize("page", [pytest.param(SMOKE, id="wheels"), pytest.param(LEAN, id="zip")])
def test_records_get_compiled_code_and_the_pages_own_dataclasses_are_untouched(open_page, page):
    run = open_page(page, variant="plain")
    run.wait_ready()
    run.page.evaluate("() => window.agentSurface.complete.then(() => null)")
    seen = json.loads(run.page.evaluate("(code) => window.agentSurface.pyodide.runPython(code)", RECORDS_IN_THE_PAGE))
    assert seen["installed"] is False  # dataclasses.exec is never left in place
    assert seen["records"] and set(seen["records"]) == {"code"}  # explain's records: none compiled here
    assert seen["own"] and set(seen["own"]) == {"text"}  # compiled by dataclasses, as without us
    assert run.console_errors == []


@pytest.mark.parametrize(
    ("page", "loaded_from"),
    [pytest.param(SMOKE, "wheel", id="wheel"), pytest.param(LEAN, "zip", id="zip")],
)
def test_the_page_reads_the_version_from_the_served_metadata(open_page, page, loaded_from):
    # The wheel Pyodide installs and the zip the page imports in place both carry the .dist-info:
    # agentsurface.__version__ (read on first access) is the installed metadata's, as in CPython.
    run = open_page(page, variant="plain")
    run.wait_ready()
    assert run.page.evaluate("() => window.agentSurface.loadedFrom") == loaded_from
    version = run.page.evaluate(
        "() => window.agentSurface.pyodide.runPython('import agentsurface; agentsurface.__version__')"
    )
    assert version == importlib.metadata.version("agentsurface")
    assert run.console_errors == []
