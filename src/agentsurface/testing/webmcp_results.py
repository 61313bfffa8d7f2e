"""What a WebMCP agent client sees of a page, as Python values: listed tools, parsed call results,
and the client's own errors (a missing tool, a call the browser refused, a wait that ran out).

Pure Python, no Playwright: the client (:mod:`.webmcp_agent`) hands these functions what the
browser's API returned.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import field
from typing import Any

from .._core.errors import AgentSurfaceError
from .._core.records import record

__all__ = [
    "AgentClientError",
    "Tool",
    "ToolCallRejected",
    "ToolError",
    "ToolNotFound",
    "ToolResult",
]

# The polyfill's testing shim rejects a call whose result has isError with this text, followed
# by ": " and the text of the result's content.
_POLYFILL_FAILED = (
    "Tool was executed but the invocation failed. For example, the script function threw an error"
)


class AgentClientError(AgentSurfaceError, AssertionError):
    """The agent client could not do what the test asked (no WebMCP on the page, a wait that ran
    out, a call that never settled). An AssertionError, so pytest reports it as a failed check."""


class ToolNotFound(AgentClientError):
    """The page does not offer a tool of that name (or it never appeared / never went away)."""

    def __init__(self, message: str, name: str, listed: list[str]) -> None:
        super().__init__(message)
        self.name = name
        self.listed = listed


class ToolCallRejected(AgentClientError):
    """The browser's client refused or abandoned the call itself, so there is no tool result:
    e.g. the polyfill's input validation, or the call's own abort signal (``name`` AbortError)."""

    def __init__(self, tool: str, name: str, message: str) -> None:
        super().__init__(f"calling {tool}: the browser's client rejected the call ({name}): {message}")
        self.tool = tool
        self.name = name
        self.message = message


@record
class Tool:
    """A tool as the agent's client lists it."""

    name: str
    description: str
    input_schema: Mapping[str, Any] | None
    title: str | None = None
    annotations: Mapping[str, Any] = field(default_factory=dict)


@record
class ToolError:
    """A failed call's typed error (agentsurface's code, message, retry and details)."""

    code: str | None
    message: str
    retry: str | None = None
    details: Mapping[str, Any] = field(default_factory=dict)


@record
class ToolResult:
    """One settled call: ``ok`` with its ``output``, or not ok with its ``error``.

    ``content`` is the tool content as the browser returned it (``{"content": [...], "isError":
    ...}``); ``output`` is its first text part decoded as JSON (the text itself when it is not JSON).
    """

    ok: bool
    output: Any = None
    error: ToolError | None = None
    content: Mapping[str, Any] = field(default_factory=dict)

    def expect_ok(self) -> Any:
        """The output; fails the test with the error when the call failed."""
        if not self.ok:
            raise AssertionError(f"the call failed: {self.error}")
        return self.output

    def expect_error(self, code: str | None = None) -> ToolError:
        """The error (checking its code when given); fails the test when the call succeeded."""
        if self.ok or self.error is None:
            raise AssertionError(f"the call succeeded with {self.output!r}; expected an error {code or ''}")
        if code is not None and self.error.code != code:
            raise AssertionError(f"expected error {code}, got {self.error}")
        return self.error


def parse_tool(raw: Mapping[str, Any]) -> Tool:
    schema = raw.get("inputSchema")
    if isinstance(schema, str):  # the polyfill (and older Chrome) list it as JSON text
        schema = json.loads(schema) if schema else None
    return Tool(
        name=str(raw["name"]),
        description=str(raw.get("description") or ""),
        input_schema=schema,
        title=raw.get("title"),
        annotations=dict(raw.get("annotations") or {}),
    )


def _decode(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text


def _error_from(value: Any) -> ToolError:
    if isinstance(value, dict) and isinstance(value.get("code"), str):
        return ToolError(
            code=value["code"],
            message=str(value.get("message", "")),
            retry=value.get("retry"),
            details=dict(value.get("details") or {}),
        )
    return ToolError(code=None, message=value if isinstance(value, str) else json.dumps(value))


def result_from_content(content: Any) -> ToolResult:
    """A result from tool content (``{"content": [{"type": "text", "text": ...}], "isError"?}``)."""
    if not isinstance(content, dict) or not isinstance(content.get("content"), list):
        return ToolResult(ok=True, output=content, content={"content": content})
    texts = [part.get("text", "") for part in content["content"] if isinstance(part, dict)]
    value = _decode(texts[0]) if texts else None
    if content.get("isError"):
        return ToolResult(ok=False, error=_error_from(value), content=content)
    return ToolResult(ok=True, output=value, content=content)


def result_from_outcome(tool: str, outcome: Mapping[str, Any]) -> ToolResult:
    """A result from what the client's runtime recorded: ``{"text": ...}`` when the browser's
    executeTool resolved, ``{"rejected": name, "message": ...}`` when it rejected."""
    if "rejected" not in outcome:
        text = outcome.get("text")
        return result_from_content(_decode(text) if isinstance(text, str) else text)
    name, message = str(outcome["rejected"]), str(outcome.get("message", ""))
    prefix = _POLYFILL_FAILED + ": "
    if message.startswith(prefix):
        # The polyfill rejects a result with isError, its content's text after the prefix; a
        # typed error there is a tool result. Anything else (execute threw) stays a rejection.
        text = message[len(prefix) :]
        value = _decode(text)
        if isinstance(value, dict) and isinstance(value.get("code"), str):
            content = {"content": [{"type": "text", "text": text}], "isError": True}
            return ToolResult(ok=False, error=_error_from(value), content=content)
    raise ToolCallRejected(tool, name, message)
