"""The small protocol the WebMCP adapter speaks, whatever the browser exposes.

Three shapes exist in the wild; ``agentsurface.browser`` detects which one a page has and
wraps it in an object with this interface (tests use fakes of each):

- ``abortable``   Chromium 156 ``document.modelContext``: ``registerTool(tool, {signal})`` returns a
                  promise; a tool is withdrawn by aborting its signal; duplicates reject.
- ``incremental`` the early-2026 draft (``navigator.modelContext``) with registerTool/unregisterTool.
- ``provide``     the same draft without them: ``provideContext({tools})`` replaces the whole set.
"""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import field
from typing import Any, Literal, Protocol, runtime_checkable

from .._core import page_services
from .._core.contracts.context import CancelSignal
from .._core.errors import AgentSurfaceError
from .._core.jsonvalue import JsonValue
from .._core.records import record

Shape = Literal["abortable", "incremental", "provide"]
UserInteraction = Callable[[Callable[[], Awaitable[Any]]], Awaitable[Any]]


class ModelContextError(AgentSurfaceError):
    """The browser refused an operation (e.g. InvalidStateError for a duplicate name)."""

    def __init__(self, operation: str, name: str | None, kind: str, message: str) -> None:
        where = f" {name!r}" if name else ""
        super().__init__(f"{operation}{where} failed: {kind}: {message}")
        self.operation = operation
        self.name = name
        self.kind = kind


@record(frozen=False)
class ToolCall:
    """What the browser passed with a call: a cancel signal (shape B) and/or a client that can
    run in-page UI (shape A's ``requestUserInteraction``). In the page, ``client`` is fetched
    when ``request_user_interaction`` first runs (the host's confirm hook runs inside it)."""

    signal: CancelSignal | None = None
    request_user_interaction: UserInteraction | None = None
    client: Any = None


ToolExecute = Callable[[JsonValue, ToolCall], Awaitable[dict[str, Any]]]


@record
class WebMCPTool:
    """A tool as handed to the browser layer. ``signature`` changes iff a re-registration is due."""

    name: str
    title: str
    description: str
    input_schema: Mapping[str, Any]
    annotations: Mapping[str, bool]
    execute: ToolExecute = field(repr=False, compare=False)
    signature: str = ""


@runtime_checkable
class ModelContext(Protocol):
    shape: Shape

    async def register_tool(self, tool: WebMCPTool) -> None:
        """Register one tool (abortable/incremental). Raise ModelContextError when refused."""
        ...

    async def unregister_tool(self, name: str) -> None:
        """Withdraw one tool (abortable: abort its signal; incremental: unregisterTool)."""
        ...

    async def provide_context(self, tools: Sequence[WebMCPTool]) -> None:
        """Replace the whole tool set (provide shape; also the fallback to clear)."""
        ...

    async def clear_context(self) -> bool:
        """Clear every tool if the browser can; False when it has no clearContext."""
        ...

    def close(self) -> None:
        """Release whatever the wrapper holds (JS proxies)."""
        ...



def detect_model_context() -> ModelContext | None:
    """The browser's model context (found by the page layer), ``None`` without WebMCP or outside
    a browser."""
    detect = page_services.model_context_detector
    if detect is not None:
        found: ModelContext | None = detect()
        return found
    if sys.platform == "emscripten":
        raise ModelContextError(
            "detect", None, "NotConnected",
            "the page layer is not loaded: import agentsurface.page (or agentsurface.browser) "
            "before start(), or pass model_context=",
        )
    return None  # CPython: no browser, nothing to expose to
