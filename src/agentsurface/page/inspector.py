"""The drop-in surface inspector: the tools as the agent sees them (an unavailable one with the
reason its ``when()`` check gives), a log of its calls (one row per call: a confirmed call's
approval round is inside its row) and the page's start-up error, if any, rendered as text into
an element the app gives, at most once per animation frame."""

from __future__ import annotations

import asyncio
import dataclasses
import sys
import weakref
from collections import deque
from datetime import UTC, datetime
from typing import Any

from agentsurface import AgentSurfaceRegistry, Consumer, SurfaceEvent
from agentsurface.adapters.webmcp import WebMCPAdapter

from .._core.records import record
from .dom import Cancel, PageDom
from .scheduling import Coalescer


@record
class ToolRow:
    """One capability as the agent sees it: exposed as ``name`` (its wire name over WebMCP, or
    its capability id where nothing is exposed), or unavailable with the reason."""

    name: str
    capability_id: str
    title: str
    hints: tuple[str, ...]  # annotations that are true, without the "Hint" suffix
    available: bool
    reason: str | None = None


@record
class CallEntry:
    """One call, as logged: settled, or waiting for the person's approval (``status``
    ``"pending"``). ``confirmation`` says how a confirmation round inside it went: ``"waiting"``,
    ``"approved"``, ``"denied"``, ``"expired"`` or ``"stale"`` (Approve pressed on a preview
    that no longer held) (None when the call needed none)."""

    at: str
    capability_id: str
    status: str
    code: str | None
    duration_ms: float | None
    invocation_id: str | None = None
    confirmation_id: str | None = None
    confirmation: str | None = None

    @property
    def outcome(self) -> str:
        return self.code or self.status


_CONFIRMATION_NOTES = {
    "waiting": "waiting for the person's approval",
    "approved": "approved by the person",
    "denied": "denied by the person",
    "expired": "the approval expired",
    "stale": "not applied: the state changed since the person was shown it",
}

# The inspectors alive in this page: the runtime shows a start-up error in them (startup_failed).
_LIVE: weakref.WeakSet[SurfaceInspector] = weakref.WeakSet()


def startup_failed(message: str) -> None:
    """Called by the embed script (web/agentsurface.js) when the page failed to start: every
    inspector installed before the failure shows ``message``."""
    for inspector in list(_LIVE):
        inspector.show_startup_error(str(message))


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
        self.startup_error: str | None = None
        self._rounds: dict[str, str | None] = {}  # confirmation id -> the waiting call's invocation id
        # What the DOM shows now (the render changes only what differs).
        self._texts: dict[str, str] = {}
        self._shown_rows: list[ToolRow] | None = None
        self._shown_calls: list[CallEntry] = []
        self._call_items: list[tuple[CallEntry, Any]] = []
        self._build(root)
        self._render_soon = Coalescer(self._render, self.dom.request_frame)
        self._unsubscribe: Cancel = registry.subscribe(self._on_event)
        self._render_soon.request()
        _LIVE.add(self)

    def show_startup_error(self, message: str) -> None:
        """Show that the page failed to start, and why (the embed script calls this)."""
        if self._closed:
            return
        self.startup_error = message
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

    def warnings(self) -> list[str]:
        """What the developer should fix: a consequential capability whose approval nothing in
        the page would show (no confirmation dialog installed)."""
        if self.registry.confirmations.handled:
            return []
        snapshot = self.registry.snapshot(consumer=self._consumer_or_adapters(), include_unavailable=True)
        needing = sorted(c.capability_id for c in snapshot.capabilities() if c.confirmation == "required")
        if not needing:
            return []
        return [
            f"{', '.join(needing)} need the person's approval, but no confirmation dialog is installed: "
            "calls would wait until their approval expires (ConfirmationDialog(registry))"
        ]

    def _consumer_or_adapters(self) -> Consumer | None:
        adapter = self.adapter
        return self._consumer or (adapter.consumer if adapter is not None else None)

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
            self._settled(event.data)
            self._render_soon.request()
        elif event.type == "confirmation-resolved":
            self._resolved(str(event.data.get("confirmationId")), str(event.data.get("outcome")))
            self._render_soon.request()
        elif event.type == "surface-changed":
            self._after_adapter_settles()
        elif event.type == "confirmation-requested":
            self._render_soon.request()  # a dialog may have been installed since the last render

    def _settled(self, data: Any) -> None:
        duration = data.get("durationMs")
        cid = data.get("confirmationId")
        entry = CallEntry(
            at=datetime.now(UTC).strftime("%H:%M:%S"),
            capability_id=str(data.get("capabilityId")),
            status=str(data.get("status")),
            code=None if data.get("code") is None else str(data.get("code")),
            duration_ms=float(duration) if isinstance(duration, int | float) else None,
            invocation_id=None if data.get("invocationId") is None else str(data.get("invocationId")),
            confirmation_id=cid if isinstance(cid, str) else None,
        )
        if entry.code == "CONFIRMATION_REQUIRED" and entry.confirmation_id is not None:
            # The first round of a call that needs the person: one row, waiting for them.
            self._rounds[entry.confirmation_id] = entry.invocation_id
            self.calls.appendleft(
                dataclasses.replace(entry, status="pending", code=None, confirmation="waiting")
            )
            return
        first = self._take_round(entry.confirmation_id)
        if first is not None:  # the same call, run again once approved: its row, completed
            total = None
            if first.duration_ms is not None and entry.duration_ms is not None:
                total = first.duration_ms + entry.duration_ms
            self._replace(first, dataclasses.replace(entry, at=first.at, duration_ms=total, confirmation="approved"))
            return
        self.calls.appendleft(entry)

    def _resolved(self, cid: str, outcome: str) -> None:
        """A confirmation decided: a denied or expired one ends its call's row (no second round
        follows); an approved one waits for the second round."""
        waiting = self._find(cid)
        if waiting is None:
            return
        if outcome == "approved":
            self._replace(waiting, dataclasses.replace(waiting, confirmation="approved"))
            return
        self._take_round(cid)
        self._replace(
            waiting,
            dataclasses.replace(
                waiting, status="error", code="CONFIRMATION_INVALID", confirmation=outcome
            ),
        )

    def _find(self, cid: str | None) -> CallEntry | None:
        if cid is None or cid not in self._rounds:
            return None
        return next((e for e in self.calls if e.confirmation_id == cid), None)

    def _take_round(self, cid: str | None) -> CallEntry | None:
        found = self._find(cid)
        if cid is not None:
            self._rounds.pop(cid, None)
        return found

    def _replace(self, old: CallEntry, new: CallEntry) -> None:
        for index, entry in enumerate(self.calls):
            if entry is old:
                self.calls[index] = new
                return

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
        self._error = dom.create("p", "", {"class": "agent-inspector-error"})
        self._warning = dom.create("p", "", {"class": "agent-inspector-warning", "role": "status"})
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
                self._error,
                self._warning,
                dom.create("h3", "Tools the agent sees", {"id": "agent-inspector-tools-title"}),
                self._tools,
                dom.create("h3", "Agent calls", {"id": "agent-inspector-calls-title"}),
                log,
            ],
        )
        dom.replace_children(root, [section])

    def _render(self) -> None:
        """Change only what changed since the last render: a call adds one row to the log and
        leaves the tools alone, and every DOM node it touches crosses into JavaScript."""
        if self._closed or self.registry.closed:
            return
        self.renders += 1
        failed = self.startup_error
        self._set_text("headline", self._headline, self.headline())
        self._set_text("error", self._error, "" if failed is None else f"The page failed to start: {failed}")
        self._set_text("warning", self._warning, " ".join(f"Warning: {w}." for w in self.warnings()))
        rows = self.rows()
        if rows != self._shown_rows:
            self._shown_rows = rows
            self.dom.replace_children(self._tools, [self._tool_item(row) for row in rows])
        entries = list(self.calls)
        if len(entries) != len(self._shown_calls) or any(
            a is not b for a, b in zip(entries, self._shown_calls, strict=True)
        ):
            # Rows already shown keep their elements (by entry identity); only new ones are made.
            items = {id(entry): item for entry, item in self._call_items}
            self._call_items = [(entry, items.get(id(entry)) or self._call_item(entry)) for entry in entries]
            self._shown_calls = entries
            self.dom.replace_children(self._log, [item for _, item in self._call_items])

    def _set_text(self, key: str, element: Any, text: str) -> None:
        if self._texts.get(key) != text:
            self._texts[key] = text
            self.dom.set_text(element, text)

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
        note = _CONFIRMATION_NOTES.get(entry.confirmation or "", "")
        text = f"{entry.at} {entry.capability_id} {entry.outcome}{ms}" + (f" · {note}" if note else "")
        kind = entry.status if entry.status in ("ok", "pending") else "error"
        return self.dom.create("li", text, {"class": kind})

    def close(self) -> None:
        """Stop following the registry; the rendered content stays. Idempotent."""
        if self._closed:
            return
        self._closed = True
        _LIVE.discard(self)
        self._render_soon.close()
        for task in list(self._tasks):
            task.cancel()
        try:
            self._unsubscribe()
        finally:
            if self._owns_dom:
                self.dom.close()


def _default_dom() -> PageDom | None:
    if sys.platform != "emscripten":
        return None
    from agentsurface.browser.dom import BrowserDom

    return BrowserDom()

