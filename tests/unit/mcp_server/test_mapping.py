"""agentsurface mcp without a browser: annotations, results, the non-object guard, options and
the HTTP token (the e2e suite drives the whole bridge in Chromium)."""

from __future__ import annotations

import argparse
import json
from typing import Any

import anyio
import httpx
import pytest
from mcp import types
from mcp.shared.exceptions import McpError
from mcp.shared.message import SessionMessage

from agentsurface.mcp_server.annotations import mcp_annotations
from agentsurface.mcp_server.guard import refusal
from agentsurface.mcp_server.http import BearerToken
from agentsurface.mcp_server.options import OptionsError, add_arguments, from_namespace
from agentsurface.mcp_server.results import call_result, mcp_tool
from agentsurface.testing.webmcp_results import Tool
from tests._shared.mcp_server.fake_page import INITIALIZED, fake_bridge, initialize, tools_call


def test_annotations_follow_the_pages_hints_only() -> None:
    read = mcp_annotations({"readOnlyHint": True}, "Rows")
    assert (read.readOnlyHint, read.idempotentHint, read.destructiveHint, read.openWorldHint) == (True, True, None, False)
    assert read.title == "Rows"
    local = mcp_annotations({"readOnlyHint": False})
    assert (local.readOnlyHint, local.destructiveHint, local.idempotentHint) == (False, False, None)
    risky = mcp_annotations({"readOnlyHint": False, "consequentialHint": True, "untrustedContentHint": True})
    assert (risky.destructiveHint, risky.openWorldHint) == (True, True)
    assert mcp_annotations({}).readOnlyHint is False  # absent means not read-only


def test_tools_keep_name_description_and_schema() -> None:
    schema = {"type": "object", "properties": {"x": {"type": "integer"}}, "additionalProperties": False}
    tool = mcp_tool(Tool("view_a__b__c", "does c", schema, title="C", annotations={"readOnlyHint": True}))
    assert (tool.name, tool.description, tool.inputSchema, tool.title) == ("view_a__b__c", "does c", schema, "C")
    assert mcp_tool(Tool("t", "", None)).inputSchema == {"type": "object", "properties": {}}


def _text(result: types.CallToolResult) -> Any:
    first = result.content[0]
    assert isinstance(first, types.TextContent)
    return json.loads(first.text)


def test_results_carry_output_and_typed_errors() -> None:
    ok = call_result("t", {"text": json.dumps({"content": [{"type": "text", "text": '{"a":1}'}]})})
    assert (ok.isError, ok.structuredContent, _text(ok)) == (False, {"a": 1}, {"a": 1})
    listed = call_result("t", {"text": json.dumps({"content": [{"type": "text", "text": "[1,2]"}]})})
    assert listed.structuredContent is None and _text(listed) == [1, 2]
    error = {"code": "INVALID_INPUT", "message": "bad", "retry": "with-changes", "details": {"issues": []}}
    failed = call_result("t", {"text": json.dumps({"content": [{"type": "text", "text": json.dumps(error)}], "isError": True})})
    assert failed.isError is True and failed.structuredContent == error and _text(failed) == error


@pytest.mark.parametrize(
    ("name", "message", "code"),
    [
        ("AbortError", "aborted", "CANCELLED"),
        ("NotFoundError", "no tool t", "CAPABILITY_NOT_FOUND"),
        ("UnknownError", "Input validation error: Instance type", "INVALID_INPUT"),
        ("TypeError", "boom", "EXECUTION_FAILED"),
    ],
)
def test_a_rejected_call_is_a_typed_error(name: str, message: str, code: str) -> None:
    result = call_result("t", {"rejected": name, "message": message})
    assert result.isError is True and result.structuredContent is not None
    assert result.structuredContent["code"] == code == _text(result)["code"]


def _call(arguments: Any) -> SessionMessage:
    request = types.JSONRPCRequest(jsonrpc="2.0", id=7, method="tools/call", params={"name": "t", "arguments": arguments})
    return SessionMessage(types.JSONRPCMessage(request))


@pytest.mark.parametrize(("arguments", "kind"), [([1], "an array"), ("x", "a string"), (3, "a number"), (True, "a boolean")])
def test_non_object_arguments_are_answered_invalid_input(arguments: Any, kind: str) -> None:
    answer = refusal(_call(arguments))
    assert answer is not None
    response = answer.message.root
    assert isinstance(response, types.JSONRPCResponse) and response.id == 7
    assert response.result["isError"] is True
    payload = response.result["structuredContent"]
    assert payload["code"] == "INVALID_INPUT" and kind in payload["message"]


def test_object_or_missing_arguments_pass() -> None:
    assert refusal(_call({"a": 1})) is None
    assert refusal(_call(None)) is None
    ping = types.JSONRPCRequest(jsonrpc="2.0", id=1, method="ping")
    assert refusal(SessionMessage(types.JSONRPCMessage(ping))) is None


async def test_the_guard_runs_in_every_session_of_the_bridges_server() -> None:
    # stdio and HTTP both run bridge.server.run: non-object arguments get the typed result there,
    # not the SDK's JSON-RPC -32602.
    bridge, link = fake_bridge()
    to_server, server_reads = anyio.create_memory_object_stream[SessionMessage | Exception](8)
    server_writes, from_server = anyio.create_memory_object_stream[SessionMessage](8)

    async def send(payload: dict[str, Any]) -> None:
        await to_server.send(SessionMessage(types.JSONRPCMessage.model_validate(payload)))

    async def answer() -> dict[str, Any]:
        with anyio.fail_after(5):
            message = await from_server.receive()
        return message.message.model_dump(by_alias=True, mode="json", exclude_none=True)

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(bridge.server.run, server_reads, server_writes, bridge.initialization_options())
        await send(initialize(1))
        assert "result" in await answer()
        await send(INITIALIZED)
        await send(tools_call(2, [1]))
        refused = await answer()
        assert refused["id"] == 2 and "error" not in refused, refused
        assert refused["result"]["isError"] is True
        assert refused["result"]["structuredContent"]["code"] == "INVALID_INPUT"
        await send(tools_call(3, {"a": 1}))
        assert (await answer())["result"]["structuredContent"] == {"a": 1}
        assert link.calls == [("echo", {"a": 1})]
        tasks.cancel_scope.cancel()


@pytest.mark.parametrize("name", ["<b>x</b>", "a\nb", "x" * 200])
async def test_an_unknown_tool_is_named_only_when_it_could_be_a_name(name: str) -> None:
    bridge, _ = fake_bridge()
    await bridge.current_tools()
    request = types.CallToolRequest(params=types.CallToolRequestParams(name=name, arguments={}))
    with pytest.raises(McpError) as refused:
        await bridge._call_tool(request)
    assert name not in refused.value.error.message and "echo" in refused.value.error.message
    request = types.CallToolRequest(params=types.CallToolRequestParams(name="ech0", arguments={}))
    with pytest.raises(McpError, match="unknown tool 'ech0'"):
        await bridge._call_tool(request)


def _options(*argv: str) -> Any:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    return from_namespace(parser.parse_args(list(argv)))


def test_options_are_checked_before_anything_starts() -> None:
    options = _options("http://127.0.0.1:8000/index.html", "--cdp", "http://127.0.0.1:9222", "--allow-origin", "https://Example.com/x")
    assert options.origin == "http://127.0.0.1:8000"
    assert options.origins == {"http://127.0.0.1:8000", "https://example.com"}
    for bad in (
        ["ftp://x"],
        ["http://127.0.0.1/", "--cdp", "nowhere"],
        ["http://127.0.0.1/", "--cdp", "http://127.0.0.1:9222", "--allow-origin", "example.com"],
        ["http://127.0.0.1/", "--browser", "/no/such/chromium"],
        ["http://127.0.0.1/", "--cdp", "http://127.0.0.1:9222", "--http", "70000"],
    ):
        with pytest.raises(OptionsError):
            _options(*bad)


async def test_the_http_listener_refuses_requests_without_the_token() -> None:
    async def app(scope: Any, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"in"})

    guarded = BearerToken(app, "s3cret")
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=guarded), base_url="http://127.0.0.1") as client:
        assert (await client.post("/mcp")).status_code == 401
        assert (await client.post("/mcp", headers={"Authorization": "Bearer wrong"})).status_code == 401
        assert (await client.post("/mcp", headers={"Authorization": "s3cret"})).status_code == 401
        refused = await client.post("/mcp", headers={"Authorization": "Bearer s3cre"})
        assert refused.status_code == 401 and refused.headers["www-authenticate"].startswith("Bearer")
        assert (await client.post("/mcp", headers={"Authorization": "Bearer s3cret"})).text == "in"


def test_arguments_past_the_bound_are_refused_before_any_page_sees_them() -> None:
    """Every transport to every page has the bound a procedure server has for a body: a tab on
    the relay or over CDP never parses megabytes an agent sent."""
    from agentsurface.mcp_server.guard import MAX_ARGUMENT_BYTES

    assert MAX_ARGUMENT_BYTES == 65_536
    assert refusal(_call({"text": "x" * (MAX_ARGUMENT_BYTES - 20)})) is None
    answer = refusal(_call({"text": "é" * MAX_ARGUMENT_BYTES}))  # two bytes each in UTF-8
    assert answer is not None
    payload = answer.message.root.result["structuredContent"]  # type: ignore[union-attr]
    assert payload["code"] == "INVALID_INPUT" and f"at most {MAX_ARGUMENT_BYTES}" in payload["message"]
