"""The drop-in surface inspector: the tools as the agent sees them and a log of its calls,
rendered as text into an element the app gives, at most once per animation frame."""

from __future__ import annotations

import asyncio
import sys
from collections import deque
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from agent_surface import AgentSurfaceRegistry, Consumer, SurfaceEvent
from agent_surface.adapters.webmcp import WebMCPAdapter

from .dom import Cancel, PageDom
from .scheduling import Coalescer


@dataclass(frozen=True, slots=True)
class ToolRow:
    """One capability as the agent sees it: exposed as ``name`` (its wire name over WebMCP, or
    its capability id where nothing is exposed), or unavailable with the reason."""

    name: str
    capability_id: str
    title: str
    hints: tuple[str, ...]  # annotations that are true, without the "Hint" suffix
    available: bool
    reason: str | None = None


@dataclass(frozen=True, slots=True)
class CallEntry:
    """One settled invocation, as logged."""

    at: str
    capability_id: str
    status: str
    code: str | None
    duration_ms: float | None

    @property
    def outcome(self) -> str:
        return self.code or self.status


class SurfaceInspector:
    """Renders ``registry``'s surface (through ``adapter`` when given: what the browser really
    has) into ``root``. Every surface change and settled call only marks the view dirty; one
    render per animation frame does the DOM work. ``renders`` counts them."""

    def __init__(
        self,
        registry: AgentSurfaceRegistry,
        root: Any,
        *,
        adapter: WebMCPAdapter | None = None,
        dom: PageDom | None = None,
        consumer: Consumer | None = None,
        log_size: int = 50,
    ) -> None:
        self.registry = registry
        self.adapter = adapter
        found = dom if dom is not None else _default_dom()
        if found is None:
            raise RuntimeError("the inspector needs the page's DOM (run in the browser, or pass dom=)")
        self.dom: PageDom = found
        self._owns_dom = dom is None
        self._consumer = consumer
        self.calls: deque[CallEntry] = deque(maxlen=log_size)
        self.renders = 0
        self._tasks: set[asyncio.Task[None]] = set()
        self._closed = False
        self._build(root)
        self._render_soon = Coalescer(self._render, self.dom.request_frame)
        self._unsubscribe: Cancel = registry.subscribe(self._on_event)
        self._render_soon.request()

    # ------------------------------------------------------------------ what it shows

    def rows(self) -> list[ToolRow]:
        """Exposed tools first (by wire name), then the capabilities the agent sees as
        unavailable, with their reasons."""
        adapter = self.adapter
        consumer = self._consumer or (adapter.consumer if adapter is not None else None)
        snapshot = self.registry.snapshot(consumer=consumer, include_unavailable=True)
        rows: list[ToolRow] = []
        exposed = adapter is not None and adapter.shape is not None
        if adapter is not None and exposed:
            ids = adapter.wire_name_map()
            for tool in adapter.exposed_tools:
                hints = tuple(key.removesuffix("Hint") for key, on in tool.annotations.items() if on)
                rows.append(ToolRow(tool.name, ids.get(tool.name, tool.name), tool.title or "", hints, True))
        for cap in snapshot.capabilities():
            if exposed and cap.available:
                continue  # listed above, as the browser has it
            title = cap.description.split(".")[0] if cap.available else ""
            cid = cap.capability_id
            rows.append(ToolRow(cid, cid, title, (), cap.available, cap.unavailable_reason))
        return rows

    def headline(self) -> str:
        shape = self.adapter.shape if self.adapter is not None else None
        version = self.registry.version
        if self.adapter is None:
            return f"Surface v{version} (no WebMCP adapter)"
        if shape is None:
            return f"No WebMCP in this browser: nothing is exposed · surface v{version}"
        return f"{len(self.adapter.exposed_tools)} tools exposed over WebMCP ({shape}) · surface v{version}"

    # ------------------------------------------------------------------ events

    def _on_event(self, event: SurfaceEvent) -> None:
        if self._closed:
            return
        if event.type == "invocation-settled":
            data = event.data
            duration = data.get("durationMs")
            self.calls.appendleft(
                CallEntry(
                    at=datetime.now(UTC).strftime("%H:%M:%S"),
                    capability_id=str(data.get("capabilityId")),
                    status=str(data.get("status")),
                    code=None if data.get("code") is None else str(data.get("code")),
                    duration_ms=float(duration) if isinstance(duration, int | float) else None,
                )
            )
            self._render_soon.request()
        elif event.type == "surface-changed":
            self._after_adapter_settles()

    def _after_adapter_settles(self) -> None:
        """Render once the adapter has reconciled the browser (show what it really has)."""
        if self.adapter is None:
            self._render_soon.request()
            return
        try:
            task = asyncio.get_running_loop().create_task(self._settle_then_render(self.adapter))
        except RuntimeError:  # no loop: nothing will reconcile later, render what there is
            self._render_soon.request()
            return
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _settle_then_render(self, adapter: WebMCPAdapter) -> None:
        await adapter.settled()
        if not self._closed:
            self._render_soon.request()

    # ------------------------------------------------------------------ DOM (text only)

    def _build(self, root: Any) -> None:
        dom = self.dom
        self.root = root
        self._headline = dom.create("p", "", {"class": "agent-inspector-headline"})
        self._tools = dom.create(
            "ul", None, {"class": "agent-inspector-tools", "aria-labelledby": "agent-inspector-tools-title"}
        )
        self._log = dom.create("ol", None, {"class": "agent-inspector-calls"})
        # The live region wraps the list: an <ol> with role="log" would no longer be a list,
        # and its <li> items would break axe's listitem rule.
        log = dom.create("div", None, {"role": "log", "aria-labelledby": "agent-inspector-calls-title"})
        dom.replace_children(log, [self._log])
        section = dom.create(
            "section", None, {"class": "agent-inspector", "aria-labelledby": "agent-inspector-title"}
        )
        dom.replace_children(
            section,
            [
                dom.create("h2", "Agent surface", {"id": "agent-inspector-title"}),
                self._headline,
                dom.create("h3", "Tools the agent sees", {"id": "agent-inspector-tools-title"}),
                self._tools,
                dom.create("h3", "Agent calls", {"id": "agent-inspector-calls-title"}),
                log,
            ],
        )
        dom.replace_children(root, [section])

    def _render(self) -> None:
        if self._closed or self.registry.closed:
            return
        self.renders += 1
        dom = self.dom
        dom.set_text(self._headline, self.headline())
        dom.replace_children(self._tools, [self._tool_item(row) for row in self.rows()])
        dom.replace_children(self._log, [self._call_item(entry) for entry in self.calls])

    def _tool_item(self, row: ToolRow) -> Any:
        dom = self.dom
        state = "available" if row.available else f"unavailable: {row.reason or 'no reason given'}"
        parts = [
            dom.create("code", row.name, {"class": "agent-inspector-name"}),
            dom.create("span", f" — {row.title}" if row.title else "", {"class": "agent-inspector-title"}),
            dom.create("span", f" [{', '.join(row.hints)}]" if row.hints else "", {"class": "agent-inspector-hints"}),
            dom.create("span", f" ({state})", {"class": "agent-inspector-state"}),
        ]
        attributes = {"class": "available" if row.available else "unavailable", "data-capability": row.capability_id}
        item = dom.create("li", None, attributes)
        dom.replace_children(item, parts)
        return item

    def _call_item(self, entry: CallEntry) -> Any:
        ms = "" if entry.duration_ms is None else f" {entry.duration_ms:.0f} ms"
        text = f"{entry.at} {entry.capability_id} {entry.outcome}{ms}"
        return self.dom.create("li", text, {"class": "ok" if entry.status == "ok" else "error"})

    def close(self) -> None:
        """Stop following the registry; the rendered content stays. Idempotent."""
        if self._closed:
            return
        self._closed = True
        self._render_soon.close()
        for task in list(self._tasks):
            task.cancel()
        try:
            self._unsubscribe()
        finally:
            if self._owns_dom:
                self.dom.close()


def install_surface_inspector(
    registry: AgentSurfaceRegistry, root: Any, *, adapter: WebMCPAdapter | None = None
) -> SurfaceInspector:
    """One line: ``install_surface_inspector(registry, document.getElementById("inspector"),
    adapter=adapter)``."""
    return SurfaceInspector(registry, root, adapter=adapter)


def _default_dom() -> PageDom | None:
    if sys.platform != "emscripten":
        return None
    from agent_surface.browser.dom import BrowserDom

    return BrowserDom()

