"""The devices console UI (browser only): tabs, filters, table, drawer and the agent-activity tab.

The agent surface follows the page: each component is attached to its element (the drawer's only
while the drawer is open). The UI only renders the state: every change asks for one render on the
next animation frame, so a burst of agent calls costs one render per frame, and the table updates
its rows by device id instead of rebuilding itself. Listeners are delegated on elements created
once, so re-rendering makes no JS proxy.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from datetime import UTC, datetime
from typing import Any

import js

from agentsurface import PendingConfirmation, SurfaceEvent
from agentsurface.page import Coalescer, SurfaceInspector, on_state_change

from .dom import by_id, closest, data, h, listen, replace_children
from .model import ROUTES, STATUSES, ConsoleState, Device, Filters
from .surface import ConsoleSurface

STATUS_LABEL = {"online": "Online", "offline": "Offline", "disabled": "Disabled"}
HumanApi = Callable[[str, dict[str, Any]], Awaitable[None]]


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


class DeviceRow:
    """One table row, kept while its device is unchanged (only its selection is updated)."""

    def __init__(self, device: Device) -> None:
        self.device = device
        self.selected = False
        self.checkbox = h("input", {"type": "checkbox", "aria-label": f"Select {device.name}"})
        self.element = h(
            "tr",
            {"dataset": {"id": device.id}},
            h("td", {"class": "check"}, self.checkbox),
            h("td", {}, h("div", {"class": "name"}, device.name), h("div", {"class": "id"}, device.id)),
            h("td", {}, h("span", {"class": f"pill {device.status}"}, STATUS_LABEL[device.status])),
            h("td", {}, device.city),
            h("td", {}, device.model),
            h("td", {"title": device.last_seen}, _ago(device.last_seen)),
        )

    def show_selected(self, selected: bool) -> None:
        if selected != self.selected:
            self.selected = selected
            self.element.classList.toggle("selected", selected)
            self.checkbox.checked = selected


class RowsView:
    """The table body, keyed by device id: a render touches only rows whose device or selection
    changed, and reorders the body only when the visible rows changed."""

    def __init__(self, body: Any) -> None:
        self.body = body
        self.rows: dict[str, DeviceRow] = {}
        self.order: list[str] = []

    def render(self, visible: list[Device], selected: set[str]) -> None:
        rows: dict[str, DeviceRow] = {}
        rebuilt = False
        for device in visible:
            row = self.rows.get(device.id)
            if row is None or row.device != device:
                row, rebuilt = DeviceRow(device), True
            rows[device.id] = row
            row.show_selected(device.id in selected)
        order = list(rows)
        if rebuilt or order != self.order:
            replace_children(self.body, [row.element for row in rows.values()])
        self.rows, self.order = rows, order


class ConsoleUI:
    def __init__(
        self,
        state: ConsoleState,
        surface: ConsoleSurface,
        inspector: Callable[[Any], SurfaceInspector],
        session: Mapping[str, Any],
        human_api: HumanApi,
    ) -> None:
        self.state = state
        self.surface = surface
        self.session = session
        self.human_api = human_api
        self._tasks: set[asyncio.Future[None]] = set()
        allowed = session.get("allowedProcedures")
        self.allowed: set[str] = set(allowed) if isinstance(allowed, list) else set()
        self._drawer: Any = None  # the drawer's element while it is open
        self._drawer_device: Device | None = None
        page = surface.page
        assert page.dom is not None, "the console UI runs in the page"
        self._render_soon = Coalescer(self.render, page.dom.request_frame)
        self._build()
        self.rows = RowsView(by_id("rows"))
        self.inspector = inspector(by_id("surface-panel"))
        # The components follow their elements: registered while the element is in the page.
        page.attach(surface.table, by_id("devices-table"))
        page.attach(surface.filters, by_id("filters"))
        page.attach(surface.navigation, by_id("tabs"))
        on_state_change(self._render_soon.request)
        surface.registry.subscribe(self._on_event)
        # No render is requested here: the first one (a row per device, then the browser's
        # layout: the longest step of the boot) is the caller's ``render()``, after the agent's
        # tools, which read the state, not the rows, are published. A frame requested now would
        # run before them (the browser serves an overdue frame before the event loop's next turn).

    def on_decided(self, approved: bool, pending: PendingConfirmation) -> None:
        """The confirmation dialog's verdict, told to the person."""
        verdict = "Approved" if approved else "You denied"
        self.state.tell(f"{verdict}: {pending.summary}", "ok" if approved else "info")

    def on_outdated(self, pending: PendingConfirmation) -> None:
        """Approve was pressed on a preview that no longer held: nothing was applied."""
        self.state.tell(
            f"Not applied: the devices changed after you were asked, so nothing was done. ({pending.summary})",
            "error",
        )

    # ------------------------------------------------------------------ skeleton (built once)

    def _build(self) -> None:
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
            by_id("app"),
            h(
                "header",
                {"class": "topbar"},
                h(
                    "h1",
                    {"class": "brand"},
                    h("span", {"class": "logo", "aria-hidden": "true"}, "◉"),
                    " Devices console",
                ),
                h(
                    "nav",
                    {"class": "tabs", "id": "tabs", "aria-label": "Tabs"},
                    [h("button", {"class": "tab", "dataset": {"route": r}}, TAB_LABEL[r]) for r in ROUTES],
                ),
                h(
                    "div",
                    {"class": "who"},
                    f"{user.get('name', '?')} · {self.session.get('tenant', '?')} · {user.get('role', '?')}",
                ),
                h("div", {"id": "passkey-slot", "class": "passkey"}),  # demo.page.passkey fills it
            ),
            h(
                "main",
                {"class": "layout"},
                h(
                    "section",
                    {"class": "content", "aria-label": "Devices"},
                    h(
                        "div",
                        {"id": "page-devices", "class": "page"},
                        h(
                            "div",
                            {"id": "filters", "class": "filters", "data-agent-instance": "main"},
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
                            {"id": "devices-table", "class": "devices", "data-agent-instance": "main"},
                            h(
                                "thead",
                                {},
                                h(
                                    "tr",
                                    {},
                                    h("th", {"class": "check"}, h("span", {"class": "sr-only"}, "Selected")),
                                    [
                                        h("th", {}, label)
                                        for label in ("Device", "Status", "City", "Model", "Last seen")
                                    ],
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
                # The library's inspector renders into it. Scrollable on its own: focusable.
                h(
                    "aside",
                    {
                        "id": "surface-panel",
                        "class": "surface-panel",
                        "tabindex": "0",
                        "aria-labelledby": "agent-inspector-title",
                    },
                ),
            ),
        )
        app = by_id("app")
        listen(by_id("tabs"), "click", self._on_tab)
        listen(by_id("rows"), "click", self._on_row_click)
        listen(by_id("filter-clear"), "click", lambda _e: self.state.set_filters(Filters()))
        listen(
            by_id("select-visible"),
            "click",
            lambda _e: self.state.select([d.id for d in self.state.visible()]),
        )
        listen(by_id("clear-selection"), "click", lambda _e: self.state.select([]))
        listen(app, "click", self._on_drawer_click)  # delegated: the drawer comes and goes

    # ------------------------------------------------------------------ the person's interactions

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
        action = data(closest(event, "#drawer button[data-action]"), "action")
        if action == "close":
            self.state.open_drawer(None)
        elif action == "enable" and self.state.drawer:
            self._spawn(self.human_api("devices.enable", {"deviceIds": [self.state.drawer]}))

    def _spawn(self, work: Awaitable[None]) -> None:
        task = asyncio.ensure_future(work)
        self._tasks.add(task)  # keep a reference until done (the loop holds only weak ones)
        task.add_done_callback(self._tasks.discard)

    def _on_event(self, event: SurfaceEvent) -> None:
        if event.type == "invocation-settled" and self.state.route == "activity":
            self._render_soon.request()  # the activity tab lists the calls

    # ------------------------------------------------------------------ rendering (once per frame)

    def render(self) -> None:
        state = self.state
        for route in ROUTES:
            by_id(f"page-{route}").hidden = state.route != route
        for tab in by_id("tabs").children:
            tab.classList.toggle("active", data(tab, "route") == state.route)
        self._render_filters()
        visible = state.visible()
        selected = set(state.selected)
        self.rows.render(visible, selected)
        by_id("empty").hidden = bool(visible)
        by_id(
            "selection-count"
        ).textContent = f"{len(selected)} selected · {len(visible)} shown of {len(state.devices)}"
        self._render_notice()
        self._render_drawer()
        if state.route == "activity":
            self._render_activity()

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

    def _render_notice(self) -> None:
        notice = by_id("notice")
        notice.hidden = not self.state.notice
        notice.textContent = self.state.notice or ""
        for tone in ("info", "error"):
            notice.classList.toggle(tone, self.state.notice_tone == tone)

    def _render_drawer(self) -> None:
        """The drawer's element exists only while a device is open; its component is attached
        to it, so the drawer's tools are registered exactly while it is in the page."""
        device = self.state.device(self.state.drawer) if self.state.drawer else None
        if device is None:
            if self._drawer is not None:
                self._drawer.remove()  # the page surface unregisters the drawer's component
                self._drawer, self._drawer_device = None, None
            return
        if self._drawer is None:
            self._drawer = h(
                "aside",
                {
                    "id": "drawer",
                    "class": "drawer",
                    "aria-labelledby": "drawer-title",
                    "data-agent-instance": "main",
                },
            )
            by_id("app").appendChild(self._drawer)  # inside the app: its clicks reach the app's listener
            self.surface.page.attach(self.surface.drawer(), self._drawer)
        if device != self._drawer_device:
            self._drawer_device = device
            replace_children(self._drawer, *self._drawer_content(device))

    def _drawer_content(self, device: Device) -> list[Any]:
        return [
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
        ]

    def _render_activity(self) -> None:
        items = []
        for entry in self.inspector.calls:
            ms = "" if entry.duration_ms is None else f"{entry.duration_ms:.0f} ms"
            items.append(
                h(
                    "li",
                    {"class": "ok" if entry.status == "ok" else "err"},
                    h("span", {"class": "time"}, entry.at),
                    h("span", {"class": "cap"}, entry.capability_id),
                    h("span", {"class": "outcome"}, entry.outcome),
                    h("span", {"class": "ms"}, ms),
                )
            )
        replace_children(by_id("activity"), items)


TAB_LABEL = {"devices": "Devices", "activity": "Agent activity"}
