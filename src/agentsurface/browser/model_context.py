"""The browser's WebMCP API behind the adapter's ``ModelContext`` protocol.

Detection order: ``document.modelContext`` (Chromium 150+, tools withdrawn by aborting their
signal) before ``navigator.modelContext`` (the early-2026 draft, e.g. the polyfill), where
registerTool/unregisterTool are used when both exist and ``provideContext`` otherwise.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import js

from ..adapters.model_context import ModelContext, ModelContextError, Shape, WebMCPTool
from .calls import ToolEntry
from .convert import error_kind, to_js_object
from .jsvalues import js_get

log = logging.getLogger("agentsurface.webmcp")


def _has(obj: Any, name: str) -> bool:
    return js_get(obj, name) is not None


class _Registered:
    """What one exposed tool holds on the JS side, released together."""

    __slots__ = ("controller", "entry")

    def __init__(self, entry: ToolEntry, controller: Any = None) -> None:
        self.entry = entry
        self.controller = controller

    @property
    def execute(self) -> Any:
        return self.entry.execute

    def release(self) -> None:
        if self.controller is not None:
            self.controller.abort()
        self.entry.release()


def _tool_object(tool: WebMCPTool, execute: Any, shape: Shape) -> Any:
    body: dict[str, Any] = {
        "name": tool.name,
        "description": tool.description,
        "inputSchema": dict(tool.input_schema),
    }
    if shape == "abortable":
        body["title"] = tool.title
    if tool.annotations:
        body["annotations"] = dict(tool.annotations)
    js_tool = to_js_object(body)
    js_tool.execute = execute
    return js_tool


class BrowserModelContext:
    """One page's WebMCP surface, in one of the three shapes."""

    def __init__(self, target: Any, shape: Shape) -> None:
        self._target = target
        self.shape: Shape = shape
        self._tools: dict[str, _Registered] = {}
        self._provided: list[_Registered] = []

    async def register_tool(self, tool: WebMCPTool) -> None:
        entry = ToolEntry(tool)
        controller = js.AbortController.new() if self.shape == "abortable" else None
        js_tool = _tool_object(tool, entry.execute, self.shape)
        try:
            if controller is not None:
                await self._target.registerTool(js_tool, to_js_object({"signal": controller.signal}))
            else:
                outcome = self._target.registerTool(js_tool)
                if _has(outcome, "then"):
                    await outcome
        except Exception as exc:
            entry.release()
            name, message = error_kind(exc)
            raise ModelContextError("registerTool", tool.name, name, message) from None
        self._tools[tool.name] = _Registered(entry, controller)

    async def unregister_tool(self, name: str) -> None:
        held = self._tools.pop(name, None)
        try:
            if self.shape == "incremental":
                outcome = self._target.unregisterTool(name)
                if _has(outcome, "then"):
                    await outcome
        except Exception as exc:
            kind, message = error_kind(exc)
            raise ModelContextError("unregisterTool", name, kind, message) from None
        finally:
            if held is not None:
                held.release()  # abortable: aborting the signal is the unregistration

    async def provide_context(self, tools: Sequence[WebMCPTool]) -> None:
        fresh = [_Registered(ToolEntry(t)) for t in tools]
        js_tools = [_tool_object(t, held.execute, self.shape) for t, held in zip(tools, fresh, strict=True)]
        try:
            self._target.provideContext(to_js_object({"tools": []}) if not js_tools else _context(js_tools))
        except Exception as exc:
            for held in fresh:
                held.release()
            name, message = error_kind(exc)
            raise ModelContextError("provideContext", None, name, message) from None
        old, self._provided = self._provided, fresh
        for held in old:  # the browser dropped them with the replacement
            held.release()

    async def clear_context(self) -> bool:
        if not _has(self._target, "clearContext"):
            return False
        try:
            self._target.clearContext()
        except Exception as exc:
            name, message = error_kind(exc)
            raise ModelContextError("clearContext", None, name, message) from None
        for held in self._provided:
            held.release()
        self._provided = []
        return True

    def close(self) -> None:
        for held in (*self._tools.values(), *self._provided):
            held.release()
        self._tools.clear()
        self._provided = []


def _context(js_tools: list[Any]) -> Any:
    holder = to_js_object({"tools": []})
    for tool in js_tools:
        holder.tools.push(tool)
    return holder


def detect_model_context() -> ModelContext | None:
    """The page's WebMCP API wrapped for the adapter, or None when the page has none."""
    document_context = js_get(js.document, "modelContext")
    if document_context is not None and _has(document_context, "registerTool"):
        return BrowserModelContext(document_context, "abortable")
    navigator_context = js_get(js.navigator, "modelContext")
    if navigator_context is None:
        return None
    if _has(navigator_context, "registerTool") and _has(navigator_context, "unregisterTool"):
        return BrowserModelContext(navigator_context, "incremental")
    if _has(navigator_context, "provideContext"):
        return BrowserModelContext(navigator_context, "provide")
    log.warning("navigator.modelContext has neither registerTool/unregisterTool nor provideContext")
    return None
