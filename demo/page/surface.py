"""The console's agent surface: what an agent may see and do, and nothing else.

Observations read the view; view actions change it; domain procedures reference the backend's
operations, bound to what the user has on screen (the selection is bound and locked: an agent
cannot aim ``disable`` at devices the user has not selected).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Annotated, Any, Literal

from annotated_types import MaxLen

from agentsurface import (
    ActionContext,
    AgentComponent,
    AgentSurfaceRegistry,
    CapabilityAuthority,
    Change,
    JsonValue,
    PreconditionFailure,
    ProcedureContract,
    ProcedureReference,
    action,
    has_permission,
    observation,
    require_confirmation,
)
from agentsurface.compiler.load import authority_from_contract, procedures_from_contract
from agentsurface.lowlevel import ProcedureExecutor
from agentsurface.page import Attachment, page_surface

from ..shared.values import DEVICES_QUERY, Status
from .model import ROUTES, ConsoleState, Device, Filters, Route

# The view's records and constraints are written so that the page needs no pydantic for them
# (dataclasses of simple fields, annotated_types markers): pydantic writes the same JSON Schema.


@dataclass(frozen=True, slots=True)
class Row:
    id: str
    name: str
    model: str
    city: str
    status: Status
    lastSeen: str


@dataclass(frozen=True, slots=True)
class ActiveFilters:
    status: Status | None = None
    city: str | None = None
    text: str | None = None


def _row(device: Device) -> Row:
    return Row(device.id, device.name, device.model, device.city, device.status, device.last_seen)


def _active(filters: Filters) -> ActiveFilters:
    return ActiveFilters(filters.status, filters.city, filters.text)


# ---------------------------------------------------------------- domain procedures (backend)
# Declared once, in demo.shared.contracts (pydantic models, imported by the server); the page
# takes them from the reviewed contract.json, which `agentsurface check` holds equal to that module.

CONTRACT_FILE = Path(__file__).with_name("contract.json")
DISABLE_ID, RENAME_ID = "domain:devices.disable", "domain:devices.rename"
QUERY_ID = DEVICES_QUERY  # also the page's own listing at start (opening.py)


@cache
def _contract_text() -> bytes:
    return CONTRACT_FILE.read_bytes()


@cache
def procedures() -> dict[str, ProcedureContract]:
    """The procedures the reviewed contract declares, by id (made on first use, not at import:
    the compiler finds the declarations in demo.shared.contracts)."""
    return procedures_from_contract(_contract_text())


def procedure(procedure_id: str) -> ProcedureContract:
    return procedures()[procedure_id]


def session_allows(host: Mapping[str, Any], permission: str) -> bool:
    """The page-side authorizer: the procedures the backend's session says this person may call.
    It only decides what the agent is offered; the backend re-checks every call."""
    allowed = host.get("allowedProcedures")
    return isinstance(allowed, list) and permission in allowed


def may(procedure: ProcedureContract) -> Any:
    """Hidden from the agent unless the session allows this procedure (e.g. a viewer's agent is
    never offered ``disable``)."""
    return has_permission(procedure.id.split(":", 1)[1], session_allows)


def _disable_summary(effective: Any) -> str:
    ids = list(effective.get("deviceIds", [])) if isinstance(effective, dict) else []
    shown = ", ".join(ids[:6]) + (f" and {len(ids) - 6} more" if len(ids) > 6 else "")
    reason = effective.get("reason") if isinstance(effective, dict) else None
    return f"Disable {len(ids)} device(s): {shown}." + (f" Reason: {reason}" if reason else "")


def _disable_preview(state: ConsoleState, effective: Any) -> list[Change]:
    """What disable will change, from what the page shows: each selected device, its status
    before → after. The dialog shows it; if it differs when the person approves (or just before
    the call leaves the page), the call is refused as stale."""
    ids = effective.get("deviceIds", []) if isinstance(effective, dict) else []
    changes = []
    for device_id in ids:
        device = state.device(device_id)
        row = device_id if device is None else f"{device_id} · {device.name}"
        changes.append(Change(row, "status", None if device is None else device.status, "disabled"))
    return changes


# ---------------------------------------------------------------- view components


class DevicesTable(
    AgentComponent, type="devices.table", description="The devices table: rows and selection."
):
    def __init__(self, state: ConsoleState) -> None:
        self.state = state

    @observation("The rows currently shown (after filters), with status, city, model and last seen.")
    def visible_rows(self) -> list[Row]:
        return [_row(d) for d in self.state.visible()]

    @observation("The ids of the selected rows.")
    def selection(self) -> list[str]:
        return list(self.state.selected)

    @action("Select rows by device id. mode: replace (default), add or remove.", idempotent=True)
    def select_rows(
        self, ids: Annotated[list[str], MaxLen(200)], mode: Literal["replace", "add", "remove"] = "replace"
    ) -> list[str]:
        self.state.select(ids, mode)
        return list(self.state.selected)

    @select_rows.precondition
    def _ids_are_visible(self, ids: list[str], mode: str) -> PreconditionFailure | None:
        shown = {d.id for d in self.state.visible()}
        missing: list[JsonValue] = [i for i in ids if i not in shown]
        if missing and mode != "remove":
            return PreconditionFailure(
                "Some ids are not in the table as filtered; change the filters first.",
                {"notVisible": missing[:20]},
            )
        return None

    @action("Select every row currently shown.", idempotent=True)
    def select_visible(self) -> list[str]:
        self.state.select([d.id for d in self.state.visible()])
        return list(self.state.selected)

    @select_visible.when
    def _has_rows(self) -> bool:
        return bool(self.state.visible())

    @action("Clear the selection.", idempotent=True)
    def clear_selection(self) -> None:
        self.state.select([])

    @action("Open the details drawer for a device (its own tools appear while it is open).")
    def open_device(self, deviceId: Annotated[str, MaxLen(64)]) -> None:
        self.state.open_drawer(deviceId)

    @open_device.precondition
    def _known(self, deviceId: str) -> PreconditionFailure | None:
        if self.state.device(deviceId) is None:
            return PreconditionFailure("No such device in the console.", {"reason": "unknown-device"})
        return None

    def agent_procedures(self) -> list[ProcedureReference]:
        state = self.state
        disable, query = procedure(DISABLE_ID), procedure(QUERY_ID)
        return [
            disable.reference(
                bind=lambda: {"deviceIds": list(state.selected)},
                bound_fields=["deviceIds"],
                when=lambda: bool(state.selected),
                unavailable_reason="Select at least one device first.",
                describe=lambda: f"Bound to the {len(state.selected)} selected device(s).",
                policies=[may(disable), require_confirmation(summary=_disable_summary)],
                preview=lambda effective: _disable_preview(state, effective),
            ),
            query.reference(policies=[may(query)]),
        ]


class DevicesFilters(AgentComponent, type="devices.filters", description="The filter bar above the table."):
    def __init__(self, state: ConsoleState) -> None:
        self.state = state

    @observation("The active filters (status, city, free text); null means not filtered.")
    def active(self) -> ActiveFilters:
        return _active(self.state.filters)

    @action("Set the table filters. Omitted fields are cleared.", idempotent=True)
    def set_filters(
        self,
        status: Status | None = None,
        city: Annotated[str, MaxLen(80)] | None = None,
        text: Annotated[str, MaxLen(80)] | None = None,
    ) -> ActiveFilters:
        self.state.set_filters(Filters(status, city or None, text or None))
        return _active(self.state.filters)

    @action("Remove every filter.", idempotent=True)
    def clear_filters(self) -> None:
        self.state.set_filters(Filters())


class DeviceDrawer(AgentComponent, type="devices.drawer", description="The details drawer for one device."):
    """Exists only while the drawer is open: the page attaches it to the drawer's element, so its
    tools come and go with the drawer."""

    def __init__(self, state: ConsoleState) -> None:
        self.state = state

    @observation("The device open in the drawer, or null.")
    def open_device(self) -> Row | None:
        device = self.state.device(self.state.drawer) if self.state.drawer else None
        return None if device is None else _row(device)

    @action("Close the details drawer.", name="close", idempotent=True)
    def close_drawer(self) -> None:
        self.state.open_drawer(None)

    @close_drawer.when
    def _is_open(self) -> bool:
        return self.state.drawer is not None

    def agent_procedures(self) -> list[ProcedureReference]:
        state = self.state
        rename = procedure(RENAME_ID)
        return [
            rename.reference(
                bind=lambda: {"deviceId": state.drawer or ""},
                bound_fields=["deviceId"],
                when=lambda: state.drawer is not None,
                unavailable_reason="Open a device in the drawer first.",
                describe=lambda: f"Bound to device {state.drawer}." if state.drawer else "",
                policies=[may(rename)],
            )
        ]


class Navigation(AgentComponent, type="app.navigation", description="The app's top-level tabs."):
    def __init__(self, state: ConsoleState) -> None:
        self.state = state

    @observation("The current tab.")
    def route(self) -> Route:
        return self.state.route

    @action("Switch tab: devices or activity.", effect="navigation", name="goTo")
    def go_to(self, route: Route) -> Route:
        self.state.go(route)
        return self.state.route


COMPONENTS: list[Any] = [DevicesTable, DevicesFilters, DeviceDrawer, Navigation]


def contracts() -> list[Any]:
    """What the page offers at most (for ``BackendBridge.connect``): the components and the
    procedures they reference."""
    return [*COMPONENTS, *(procedure(i) for i in (DISABLE_ID, RENAME_ID, QUERY_ID))]

# ---------------------------------------------------------------- the backend executor


def reflecting(executor: ProcedureExecutor, on_result: Callable[[str, Any], None]) -> ProcedureExecutor:
    """``executor`` (the library's BackendBridge), with each successful output also shown in the
    view (``on_result(procedure_id, output)``): the server's answer is the truth."""

    async def execute(procedure_id: str, effective_input: JsonValue, ctx: ActionContext) -> JsonValue:
        output = executor(procedure_id, effective_input, ctx)
        result = await output if inspect.isawaitable(output) else output
        on_result(procedure_id, result)
        return result

    return execute


# ---------------------------------------------------------------- assembly


def committed_authority() -> CapabilityAuthority:
    """The reviewed contract (``agentsurface snapshot`` writes ``contract.json`` next to this
    module; the page gets it through its loader's ``data-files``) is the authority: a contract changed
    without a new snapshot is refused at registration."""
    return authority_from_contract(_contract_text())


class ConsoleSurface:
    """The registry and the console's components over one ConsoleState. The page attaches each
    component to its element (``ui.ConsoleUI``); code without a page (tests, scripts) mounts
    them with ``mount_views()`` / ``mount_drawer()``. Availability follows the state by itself
    (the page surface re-evaluates it after every ``State`` assignment and settled call)."""

    def __init__(self, registry: AgentSurfaceRegistry, state: ConsoleState) -> None:
        self.registry = registry
        self.state = state
        self.page = page_surface(registry)
        self.table = DevicesTable(state)
        self.filters = DevicesFilters(state)
        self.navigation = Navigation(state)

    def drawer(self) -> DeviceDrawer:
        """A new drawer component (one per opening of the drawer)."""
        return DeviceDrawer(self.state)

    def mount_views(self) -> list[Attachment]:
        """Register the always-present views for as long as the code runs (no page)."""
        views = (self.table.bind(instance_id="main"), self.filters.bind(instance_id="main"), self.navigation)
        return [self.page.mount(view) for view in views]

    def mount_drawer(self) -> Attachment:
        """Register a drawer component, as the page does when the drawer opens (no page)."""
        return self.page.mount(self.drawer().bind(instance_id="main"))


def create_console_surface(
    state: ConsoleState,
    executor: ProcedureExecutor,
    *,
    session: Mapping[str, Any],
    **registry_options: Any,
) -> ConsoleSurface:
    """The console's registry. ``session`` is the backend's ``session.describe`` answer (user, role,
    tenant, allowedProcedures): it is the host context the policies read. The registry is built
    with the executor (a procedure reference needs one at registration)."""
    host = dict(session)
    authority = committed_authority()
    registry = AgentSurfaceRegistry(
        authority=authority, context=lambda: host, procedure_executor=executor, **registry_options
    )
    return ConsoleSurface(registry, state)


__all__ = ["COMPONENTS", "ROUTES", "ConsoleSurface", "contracts", "create_console_surface", "procedure", "reflecting"]
