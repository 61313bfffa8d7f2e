"""A type-hinted component with simple hints reaches its first tool without pydantic: the
schemas pydantic would write, the compiled JSON-Schema check, and the handler still gets typed
values (a float for a number, the defaults filled in). An invalid input gets pydantic's issues,
pydantic loaded then."""

from __future__ import annotations

import json

TYPED = "/e2e/pages/typed-lean.html"


def _call(page, suffix: str, tool_input: dict) -> dict:
    text = page.evaluate(
        """async ([suffix, input]) => {
            const tool = (await document.modelContext.getTools()).find((t) => t.name.endsWith(suffix));
            return await document.modelContext.executeTool(tool, input);
        }""",
        [suffix, tool_input],
    )
    return json.loads(text)


def test_a_type_hinted_component_needs_no_pydantic_before_its_first_tool(open_page):
    run = open_page(TYPED, variant="webmcp")
    run.wait_ready()
    page = run.page
    assert page.evaluate("() => window.agentSurface.loadedFrom") == "zip"  # agentsurface alone at boot
    assert page.evaluate("() => window.typedAtFirstTool") == ""
    tools = page.evaluate(
        "async () => Object.fromEntries((await document.modelContext.getTools()).map((t) => [t.name, t.inputSchema]))"
    )
    zoom = next(schema for name, schema in tools.items() if name.endswith("zoom"))
    zoom = json.loads(zoom) if isinstance(zoom, str) else zoom
    assert zoom["properties"]["factor"] == {"title": "Factor", "type": "number"}
    assert zoom["required"] == ["factor"]
    selected = _call(page, "selectRows", {"ids": ["dev-1"]})
    assert not selected.get("isError"), selected
    assert json.loads(selected["content"][0]["text"]) == ["dev-1"]
    zoomed = _call(page, "zoom", {"factor": 2})
    assert json.loads(zoomed["content"][0]["text"]) == 2.0
    assert json.loads(page.evaluate("() => window.typedReceived()")) == [
        {"ids": ["list", ["dev-1"]], "mode": ["str", "replace"]},
        {"factor": ["float", 2.0], "steps": ["NoneType", None]},
    ]
    assert run.console_errors == []


def test_an_invalid_input_gets_pydantics_issues(open_page):
    run = open_page(TYPED, variant="webmcp")
    run.wait_ready()
    refused = _call(run.page, "zoom", {"factor": "2", "extra": 1})
    assert refused["isError"] is True
    error = json.loads(refused["content"][0]["text"])
    assert error["code"] == "INVALID_INPUT"
    assert {issue["path"] for issue in error["details"]["issues"]} == {"/factor", "/extra"}
    assert run.page.evaluate("() => window.typedPydanticNow()") is True
    assert json.loads(run.page.evaluate("() => window.typedReceived()")) == []
    assert run.console_errors == []
