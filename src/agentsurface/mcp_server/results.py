"""What the page answered, as MCP: tools as MCP tools (one to one) and call outcomes as
``CallToolResult`` with ``isError`` and agentsurface's typed error (code, message, retry, details)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from mcp import types

from ..testing.webmcp_results import Tool, ToolCallRejected, result_from_outcome
from .annotations import mcp_annotations
from .errors import rejected

_EMPTY_OBJECT: dict[str, Any] = {"type": "object", "properties": {}}


def mcp_tool(tool: Tool) -> types.Tool:
    """The page's tool as an MCP tool: same name, description and input schema."""
    schema = dict(tool.input_schema) if isinstance(tool.input_schema, Mapping) else dict(_EMPTY_OBJECT)
    schema.setdefault("type", "object")
    return types.Tool(
        name=tool.name,
        title=tool.title,
        description=tool.description,
        inputSchema=schema,
        annotations=mcp_annotations(tool.annotations, tool.title),
    )


def error_result(payload: Mapping[str, Any]) -> types.CallToolResult:
    """A failed call: the typed error as JSON text and as structured content."""
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=json.dumps(payload, ensure_ascii=False))],
        structuredContent=dict(payload),
        isError=True,
    )


def call_result(name: str, outcome: Mapping[str, Any]) -> types.CallToolResult:
    """A settled executeTool: the page's content parts as they came, ``isError`` as the page
    set it, and the decoded output (an object) or typed error as structured content."""
    try:
        result = result_from_outcome(name, outcome)
    except ToolCallRejected as exc:
        return error_result(rejected(exc.name, exc.message))
    parts = result.content.get("content")
    content: list[types.ContentBlock] = []
    for part in parts if isinstance(parts, list) else [result.output]:
        if isinstance(part, Mapping) and part.get("type") == "text" and isinstance(part.get("text"), str):
            content.append(types.TextContent(type="text", text=part["text"]))
        else:
            content.append(types.TextContent(type="text", text=json.dumps(part, ensure_ascii=False)))
    if not result.ok:
        assert result.error is not None
        error: dict[str, Any] = {"code": result.error.code, "message": result.error.message}
        if result.error.retry is not None:
            error["retry"] = result.error.retry
        if result.error.details:
            error["details"] = dict(result.error.details)
        return types.CallToolResult(content=content, structuredContent=error, isError=True)
    structured = dict(result.output) if isinstance(result.output, Mapping) else None
    return types.CallToolResult(content=content, structuredContent=structured, isError=False)
