"""The devices console UI (browser only): table, filters, drawer, tabs, the host confirmation
dialog and the live agent-surface panel. Listeners are delegated on containers created once, so
re-rendering never creates new JS proxies."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from datetime import UTC, datetime
from typing import Any

import js

from agent_surface import PendingConfirmation

from .confirm import ConfirmDialog
from .dom import by_id, closest, data, h, listen, replace_children
from .model import ROUTES, STATUSES, ConsoleState, Filters

STATUS_LABEL = {"online": "Online", "offline": "Offline", "disabled": "Disabled"}


def _ago(iso: str) -> str:
    try:
        then = datetime.fromisoformat(iso.replace("Z", "+00:00"))
    except ValueError:
        return iso
    seconds = max(0, int((datetime.now(UTC) - then).total_seconds()))
    for size, unit in ((86400, "d"), (3600, "h"), (60, "min")):
        if seconds >= size:
            return f"{seconds // size} {unit} ago"
    return "just now"


class ConsoleUI:
    def __init__(
        self, state: ConsoleState, surface: Any, adapter: Any, session: dict[str, Any], human_api: Any
    ) -> None:
        self.state = state
        self.surface = surface
        self.registry = surface.registry
        self.adapter = adapter
        self.session = session
        self.human_api = human_api
        self.log: list[dict[str, Any]] = []
        self._started: dict[str, float] = {}
        self._tasks: set[Any] = set()
        allowed = session.get("allowedProcedures")
        self.allowed: set[str] = set(allowed) if isinstance(allowed, list) else set()
        self._build()
        self.dialog = ConfirmDialog(self.registry, self._on_decided)
        state.subscribe(self.render)
        self.registry.subscribe(self._on_event)
        self.render()

    # ------------------------------------------------------------------ skeleton (built once)

    def _build(self) -> None:
        root = by_id("app")
        user = self.session.get("user", {})
        status_select = h(
            "select",
            {"id": "filter-status", "aria-label": "Status"},
            h("option", {"value": ""}, "Any status"),
            [h("option", {"value": s}, STATUS_LABEL[s]) for s in STATUSES],
        )
        city_select = h(
            "select", {"id": "filter-city", "aria-label": "City"}, h("option", {"value": ""}, "Any city")
        )
        text_input = h(
            "input",
            {
                "id": "filter-text",
                "type": "search",
                "placeholder": "Search name, id, model…",
                "aria-label": "Search",
            },
        )
        for element in (status_select, city_select):
            listen(element, "change", lambda _e: self._filters_from_form())
        listen(text_input, "input", lambda _e: self._filters_from_form())
        replace_children(
            root,
            h(
                "header",
                {"class": "topbar"},
                h("h1", {"class": "brand"}, h("span", {"class": "logo", "aria-hidden": "true"}, "◉"), " Devices console"),
                h(
                    "nav",
                    {"class": "tabs", "id": "tabs"},
                    h("button", {"class": "tab", "dataset": {"route": "devices"}}, "Devices"),
                    h("button", {"class": "tab", "dataset": {"route": "activity"}}, "Agent activity"),
                ),
                h(
                    "div",
                    {"class": "who"},
                    f"{user.get('name', '?')} · {self.session.get('tenant', '?')} · {user.get('role', '?')}",
                ),
            ),
            h(
                "main",
                {"class": "layout"},
                h(
                    "section",
                    {"class": "content"},
                    h(
                        "div",
                        {"id": "page-devices", "class": "page"},
                        h(
                            "div",
                            {"class": "filters"},
                            status_select,
                            city_select,
                            text_input,
                            h("button", {"id": "filter-clear", "class": "ghost"}, "Clear filters"),
                        ),
                        h("p", {"id": "notice", "class": "notice", "role": "status", "hidden": True}),
                        h(
                            "div",
                            {"class": "toolbar"},
                            h("span", {"id": "selection-count"}),
                            h("button", {"id": "select-visible", "class": "ghost"}, "Select visible"),
                            h("button", {"id": "clear-selection", "class": "ghost"}, "Clear selection"),
                        ),
                        h(
                            "table",
                            {"class": "devices"},
                            h(
                                "thead",
                                {},
                                h(
                                    "tr",
                                    {},
                                    h("th", {"class": "check"}, h("span", {"class": "sr-only"}, "Selected")),
                                    h("th", {}, "Device"),
                                    h("th", {}, "Status"),
                                    h("th", {}, "City"),
                                    h("th", {}, "Model"),
                                    h("th", {}, "Last seen"),
                                ),
                            ),
                            h("tbody", {"id": "rows"}),
                        ),
                        h("p", {"id": "empty", "class": "empty"}, "No device matches these filters."),
                    ),
                    h(
                        "div",
                        {"id": "page-activity", "class": "page"},
                        h("h2", {}, "Agent activity"),
                        h(
                            "p",
                            {"class": "hint"},
                            "Every call an agent made through the WebMCP tools, newest first.",
                        ),
                        h("ol", {"id": "activity", "class": "activity"}),
                    ),
                ),
                h(
                    "aside",
                    # Scrollable on its own: focusable so keyboard users can scroll it.
                    {"class": "surface-panel", "tabindex": "0", "aria-labelledby": "surface-title"},
                    h("h2", {"id": "surface-title"}, "Agent surface"),
                    h("p", {"class": "hint", "id": "surface-meta"}),
                    h("ul", {"id": "tools", "class": "tools"}),
                    h("h3", {}, "Recent calls"),
                    h("ol", {"id": "calls", "class": "calls"}),
                ),
            ),
            h("aside", {"id": "drawer", "class": "drawer", "aria-labelledby": "drawer-title", "hidden": True}),
            h("div", {"id": "confirm", "class": "modal-backdrop", "hidden": True}),
            h("div", {"id": "click-shield", "class": "click-shield", "hidden": True}),
            h("div", {"id": "confirm-live", "class": "sr-only", "role": "status", "aria-live": "assertive"}),
        )
        listen(by_id("tabs"), "click", self._on_tab)
        listen(by_id("rows"), "click", self._on_row_click)
        listen(by_id("filter-clear"), "click", lambda _e: self.state.set_filters(Filters()))
        listen(
            by_id("select-visible"),
            "click",
            lambda _e: self.state.select([d.id for d in self.state.visible()]),
        )
        listen(by_id("clear-selection"), "click", lambda _e: self.state.select([]))
        listen(by_id("drawer"), "click", self._on_drawer_click)

    # ------------------------------------------------------------------ human interactions

    def _filters_from_form(self) -> None:
        status = by_id("filter-status").value or None
        city = by_id("filter-city").value or None
        text = by_id("filter-text").value.strip() or None
        self.state.set_filters(Filters(status, city, text))

    def _on_tab(self, event: Any) -> None:
        route = data(closest(event, "button[data-route]"), "route")
        for known in ROUTES:
            if route == known:
                self.state.go(known)

    def _on_row_click(self, event: Any) -> None:
        device_id = data(closest(event, "tr[data-id]"), "id")
        if device_id is None:
            return  # the table body's padding, or a row that is gone
        checkbox = closest(event, "input[type=checkbox]")
        if checkbox is not None:
            self.state.select([device_id], "add" if checkbox.checked else "remove")
        else:
            self.state.open_drawer(device_id)

    def _on_drawer_click(self, event: Any) -> None:
        action = data(closest(event, "button[data-action]"), "action")
        if action == "close":
            self.state.open_drawer(None)
        elif action == "enable" and self.state.drawer:
            self._spawn(self.human_api("devices.enable", {"deviceIds": [self.state.drawer]}))

    def _spawn(self, work: Awaitable[None]) -> None:
        task = asyncio.ensure_future(work)
        self._tasks.add(task)  # keep a reference until done (the loop holds only weak ones)
        task.add_done_callback(self._tasks.discard)

    def _on_decided(self, approved: bool, pending: PendingConfirmation) -> None:
        verdict = "Approved" if approved else "You denied"
        self.state.tell(f"{verdict}: {pending.summary}", "ok" if approved else "info")

    # ------------------------------------------------------------------ rendering

    def render(self) -> None:
        state = self.state
        for route in ("devices", "activity"):
            by_id(f"page-{route}").hidden = state.route != route
        for tab in by_id("tabs").children:
            tab.classList.toggle("active", data(tab, "route") == state.route)
        self._render_filters()
        self._render_rows()
        self._render_drawer()
        self.render_surface()

    def _render_filters(self) -> None:
        city = by_id("filter-city")
        wanted = ["", *self.state.cities()]
        if [option.value for option in city.options] != wanted:
            replace_children(
                city,
                h("option", {"value": ""}, "Any city"),
                [h("option", {"value": c}, c) for c in wanted[1:]],
            )
        filters = self.state.filters
        by_id("filter-status").value = filters.status or ""
        city.value = filters.city or ""
        text = by_id("filter-text")
        if js.document.activeElement != text:
            text.value = filters.text or ""

    def _render_rows(self) -> None:
        selected = set(self.state.selected)
        rows = []
        for device in self.state.visible():
            rows.append(
                h(
                    "tr",
                    {"class": "selected" if device.id in selected else None, "dataset": {"id": device.id}},
                    h(
                        "td",
                        {"class": "check"},
                        h(
                            "input",
                            {
                                "type": "checkbox",
                                "checked": device.id in selected,
                                "aria-label": f"Select {device.name}",
                            },
                        ),
                    ),
                    h(
                        "td",
                        {},
                        h("div", {"class": "name"}, device.name),
                        h("div", {"class": "id"}, device.id),
                    ),
                    h("td", {}, h("span", {"class": f"pill {device.status}"}, STATUS_LABEL[device.status])),
                    h("td", {}, device.city),
                    h("td", {}, device.model),
                    h("td", {"title": device.last_seen}, _ago(device.last_seen)),
                )
            )
        replace_children(by_id("rows"), rows)
        by_id("empty").hidden = bool(rows)
        count = len(selected)
        by_id(
            "selection-count"
        ).textContent = f"{count} selected · {len(rows)} shown of {len(self.state.devices)}"
        notice = by_id("notice")
        notice.hidden = not self.state.notice
        notice.textContent = self.state.notice or ""
        for tone in ("info", "error"):
            notice.classList.toggle(tone, self.state.notice_tone == tone)

    def _render_drawer(self) -> None:
        drawer = by_id("drawer")
        device = self.state.device(self.state.drawer) if self.state.drawer else None
        drawer.hidden = device is None
        if device is None:
            return
        replace_children(
            drawer,
            h(
                "div",
                {"class": "drawer-head"},
                h("h2", {"id": "drawer-title"}, device.name),
                h("button", {"class": "ghost", "dataset": {"action": "close"}, "aria-label": "Close"}, "✕"),
            ),
            h(
                "dl",
                {},
                h("dt", {}, "Id"),
                h("dd", {}, device.id),
                h("dt", {}, "Status"),
                h("dd", {}, h("span", {"class": f"pill {device.status}"}, STATUS_LABEL[device.status])),
                h("dt", {}, "City"),
                h("dd", {}, device.city),
                h("dt", {}, "Model"),
                h("dd", {}, device.model),
                h("dt", {}, "Last seen"),
                h("dd", {}, f"{_ago(device.last_seen)} ({device.last_seen})"),
            ),
            h("button", {"class": "primary", "dataset": {"action": "enable"}}, "Enable device")
            if device.status == "disabled" and "devices.enable" in self.allowed
            else None,
        )

    def render_surface(self) -> None:
        tools = self.adapter.exposed_tools if self.adapter is not None else []
        shape = getattr(self.adapter, "shape", None)
        by_id("surface-meta").textContent = (
            f"{len(tools)} tools exposed over WebMCP ({shape}) · surface v{self.registry.version}"
            if shape
            else f"No WebMCP in this browser: nothing is exposed · surface v{self.registry.version}"
        )
        items = []
        for tool in tools:
            notes = [k.removesuffix("Hint") for k, v in tool.annotations.items() if v]
            items.append(
                h(
                    "li",
                    {},
                    h("div", {"class": "tool-name"}, tool.name),
                    h("div", {"class": "tool-title"}, tool.title),
                    h("div", {"class": "tool-desc"}, tool.description),
                    h("div", {"class": "badges"}, [h("span", {"class": f"badge {n}"}, n) for n in notes]),
                )
            )
        snap = self.registry.snapshot(consumer=getattr(self.adapter, "consumer", None))
        for cap in snap.capabilities():
            if not cap.available:
                items.append(
                    h(
                        "li",
                        {"class": "off"},
                        h("div", {"class": "tool-name"}, cap.capability_id),
                        h("div", {"class": "tool-desc"}, f"unavailable: {cap.unavailable_reason}"),
                    )
                )
        replace_children(by_id("tools"), items)

    # ------------------------------------------------------------------ agent activity

    def _on_event(self, event: Any) -> None:
        if event.type == "invocation-started":
            self._started[event["invocationId"]] = js.performance.now()
        elif event.type == "invocation-settled":
            self.log.insert(
                0,
                {
                    "at": datetime.now(UTC).strftime("%H:%M:%S"),
                    "capability": event["capabilityId"],
                    "status": event["status"],
                    "code": event.data.get("code"),
                    "ms": round(
                        js.performance.now() - self._started.pop(event["invocationId"], js.performance.now())
                    ),
                },
            )
            del self.log[50:]
            self._render_log()
        elif event.type == "surface-changed":
            self._spawn(self._render_surface_when_settled())

    async def _render_surface_when_settled(self) -> None:
        if self.adapter is not None:
            await self.adapter.settled()  # show the tools the browser really has
        self.render_surface()

    def _render_log(self) -> None:
        def item(entry: dict[str, Any]) -> Any:
            outcome = entry["code"] or "ok"
            return h(
                "li",
                {"class": "ok" if entry["status"] == "ok" else "err"},
                h("span", {"class": "time"}, entry["at"]),
                h("span", {"class": "cap"}, entry["capability"]),
                h("span", {"class": "outcome"}, outcome),
                h("span", {"class": "ms"}, f"{entry['ms']} ms"),
            )

        replace_children(by_id("calls"), [item(e) for e in self.log[:8]])
        replace_children(by_id("activity"), [item(e) for e in self.log])
