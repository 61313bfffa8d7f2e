"""The console's agent surface: what an agent may see and do, and nothing else.

Observations read the view; view actions change it; domain procedures reference the backend's
operations, bound to what the user has on screen (the selection is bound and locked: an agent
cannot aim ``disable`` at devices the user has not selected).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from agent_surface import (
    ActionContext,
    AgentComponent,
    AgentSurfaceError,
    AgentSurfaceRegistry,
    CapabilityAuthority,
    CapabilityError,
    PreconditionFailure,
    ProcedureContract,
    ProcedureReference,
    action,
    create_registry,
    has_permission,
    observation,
    require_confirmation,
)
from agent_surface.compiler.load import authority_from_contract
from agent_surface.core.jsonvalue import JsonValue

from .model import ROUTES, ConsoleState, Filters, Route, Status


class Row(BaseModel):
    id: str
    name: str
    model: str
    city: str
    status: Status
    lastSeen: str


class ActiveFilters(BaseModel):
    status: Status | None = None
    city: str | None = None
    text: str | None = None


# ---------------------------------------------------------------- domain procedures (backend)

DEVICE_IDS = {"type": "array", "items": {"type": "string", "maxLength": 64}, "minItems": 1, "maxItems": 100}

DISABLE = ProcedureContract(
    id="domain:devices.disable",
    description="Disable devices so they stop reporting. The devices are the ones selected in the table.",
    effect="destructive",
    input={
        "type": "object",
        "properties": {
            "deviceIds": {**DEVICE_IDS, "description": "Bound to the table selection."},
            "reason": {"type": "string", "maxLength": 200, "description": "Why, for the audit log."},
        },
        "required": ["deviceIds"],
        "additionalProperties": False,
    },
    output={
        "type": "object",
        "properties": {
            "disabled": {"type": "integer"},
            "devices": {"type": "array", "items": {"type": "object"}},
        },
        "required": ["disabled"],
    },
)

RENAME = ProcedureContract(
    id="domain:devices.rename",
    description="Rename the device open in the details drawer.",
    effect="server-mutation",
    input={
        "type": "object",
        "properties": {
            "deviceId": {"type": "string", "maxLength": 64},
            "name": {"type": "string", "minLength": 1, "maxLength": 80},
        },
        "required": ["deviceId", "name"],
        "additionalProperties": False,
    },
    output={"type": "object", "properties": {"device": {"type": "object"}}, "required": ["device"]},
)

QUERY = ProcedureContract(
    id="domain:devices.query",
    description="Search all devices of the tenant on the server (not only the ones on screen).",
    effect="server-query",
    input={
        "type": "object",
        "properties": {
            "status": {"enum": ["online", "offline", "disabled"]},
            "city": {"type": "string", "maxLength": 80},
            "text": {"type": "string", "maxLength": 80},
            "limit": {"type": "integer", "minimum": 1, "maximum": 200},
        },
        "additionalProperties": False,
    },
    output={
        "type": "object",
        "properties": {
            "devices": {"type": "array", "items": {"type": "object"}},
            "total": {"type": "integer"},
        },
        "required": ["devices", "total"],
    },
)


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


# ---------------------------------------------------------------- view components


class DevicesTable(
    AgentComponent, type="devices.table", description="The devices table: rows and selection."
):
    def __init__(self, state: ConsoleState) -> None:
        self.state = state

    @observation("The rows currently shown (after filters), with status, city, model and last seen.")
    def visible_rows(self) -> list[Row]:
        return [Row.model_validate(d.row()) for d in self.state.visible()]

    @observation("The ids of the selected rows.")
    def selection(self) -> list[str]:
        return list(self.state.selected)

    @action("Select rows by device id. mode: replace (default), add or remove.", idempotent=True)
    def select_rows(
        self, ids: list[str] = Field(max_length=200), mode: Literal["replace", "add", "remove"] = "replace"
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

    def agent_procedures(self) -> list[ProcedureReference]:
        state = self.state
        return [
            DISABLE.reference(
                bind=lambda: {"deviceIds": list(state.selected)},
                bound_fields=["deviceIds"],
                when=lambda: bool(state.selected),
                unavailable_reason="Select at least one device first.",
                describe=lambda: f"Bound to the {len(state.selected)} selected device(s).",
                policies=[may(DISABLE), require_confirmation(summary=_disable_summary)],
            ),
            QUERY.reference(policies=[may(QUERY)]),
        ]


class DevicesFilters(AgentComponent, type="devices.filters", description="The filter bar above the table."):
    def __init__(self, state: ConsoleState) -> None:
        self.state = state

    @observation("The active filters (status, city, free text); null means not filtered.")
    def active(self) -> ActiveFilters:
        return ActiveFilters.model_validate(self.state.filters.to_json())

    @action("Set the table filters. Omitted fields are cleared.", idempotent=True)
    def set_filters(
        self,
        status: Status | None = None,
        city: str | None = Field(None, max_length=80),
        text: str | None = Field(None, max_length=80),
    ) -> ActiveFilters:
        self.state.set_filters(Filters(status, city or None, text or None))
        return ActiveFilters.model_validate(self.state.filters.to_json())

    @action("Remove every filter.", idempotent=True)
    def clear_filters(self) -> None:
        self.state.set_filters(Filters())


class DeviceDrawer(AgentComponent, type="devices.drawer", description="The details drawer for one device."):
    def __init__(self, state: ConsoleState) -> None:
        self.state = state

    @observation("The device open in the drawer, or null.")
    def open_device(self) -> Row | None:
        device = self.state.device(self.state.drawer) if self.state.drawer else None
        return None if device is None else Row.model_validate(device.row())

    @action("Open the details drawer for a device.", name="open")
    def open_drawer(self, device_id: str = Field(alias="deviceId", max_length=64)) -> None:
        self.state.open_drawer(device_id)

    @open_drawer.precondition
    def _known(self, device_id: str) -> PreconditionFailure | None:
        if self.state.device(device_id) is None:
            return PreconditionFailure("No such device in the console.", {"reason": "unknown-device"})
        return None

    @action("Close the details drawer.", name="close", idempotent=True)
    def close_drawer(self) -> None:
        self.state.open_drawer(None)

    @close_drawer.when
    def _is_open(self) -> bool:
        return self.state.drawer is not None

    def agent_procedures(self) -> list[ProcedureReference]:
        state = self.state
        return [
            RENAME.reference(
                bind=lambda: {"deviceId": state.drawer or ""},
                bound_fields=["deviceId"],
                when=lambda: state.drawer is not None,
                unavailable_reason="Open a device in the drawer first.",
                describe=lambda: f"Bound to device {state.drawer}." if state.drawer else "",
                policies=[may(RENAME)],
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


CONTRACTS: list[Any] = [DevicesTable, DevicesFilters, DeviceDrawer, Navigation, DISABLE, RENAME, QUERY]

# ---------------------------------------------------------------- the backend executor

FetchJson = Callable[[str, dict[str, Any], dict[str, str]], Awaitable[tuple[int, Any]]]


class BackendExecutor:
    """Executes domain procedures by calling the backend, which re-checks everything.

    ``fetch_json(path, body, headers) -> (status, json)`` is injected: ``pyfetch`` in the page,
    urllib in CPython tests. Server errors arrive as typed ``{"error": {...}}`` bodies.
    """

    def __init__(
        self, fetch_json: FetchJson, token: str, on_result: Callable[[str, Any], None] | None = None
    ):
        self._fetch = fetch_json
        self._token = token
        self._on_result = on_result

    async def __call__(self, procedure_id: str, payload: Any, ctx: ActionContext) -> Any:
        path = "/api/procedures/" + procedure_id.split(":", 1)[1]
        headers = {"Authorization": f"Bearer {self._token}", "X-Agent-Invocation-Id": ctx.invocation_id}
        if ctx.confirmation:
            headers["X-Agent-Confirmation-Id"] = ctx.confirmation["id"]
        status, body = await self._fetch(path, payload, headers)
        if status >= 400 or not isinstance(body, dict) or "error" in body:
            raise AgentSurfaceError(_server_error(status, body))
        if self._on_result is not None:
            self._on_result(procedure_id, body)
        return body


def _server_error(status: int, body: Any) -> CapabilityError:
    err = body.get("error") if isinstance(body, dict) else None
    try:
        if isinstance(err, dict):
            return CapabilityError(
                err["code"],
                str(err.get("message", "The server refused the call.")),
                err.get("retry") or _default_retry(err["code"]),
                err.get("details"),
            )
    except (KeyError, ValueError):
        pass
    transient = status >= 500 or status == 0
    return CapabilityError(
        "EXECUTION_FAILED",
        "The server could not complete the call.",
        "after-delay" if transient else "no",
        {"reason": "transport", "transient": transient},
    )


def _default_retry(code: str) -> Any:
    from agent_surface.core.errors import ERROR_MATRIX

    return ERROR_MATRIX[code].retry[0]  # type: ignore[index]


# ---------------------------------------------------------------- assembly


def committed_authority() -> CapabilityAuthority:
    """The reviewed contract (``agent-surface snapshot`` writes ``contract.json`` next to this
    module; the page gets it through pyscript.json ``files``) is the authority: a contract changed
    without a new snapshot is refused at registration."""
    return authority_from_contract(Path(__file__).with_name("contract.json").read_bytes())


class ConsoleSurface:
    """The registry with the console's components mounted over one ConsoleState."""

    def __init__(self, registry: AgentSurfaceRegistry, state: ConsoleState) -> None:
        self.registry = registry
        self.state = state
        self.table = registry.register(DevicesTable(state).bind(instance_id="main"))
        self.filters = registry.register(DevicesFilters(state).bind(instance_id="main"))
        self.drawer = registry.register(DeviceDrawer(state).bind(instance_id="main"))
        self.navigation = registry.register(Navigation(state))
        state.subscribe(registry.sync_availability)


def create_console_surface(
    state: ConsoleState,
    executor: BackendExecutor,
    *,
    session: Mapping[str, Any],
    **registry_options: Any,
) -> ConsoleSurface:
    """The console's registry. ``session`` is the backend's ``/api/session`` answer (user, role,
    tenant, allowedProcedures): it is the host context the policies read. The executor is set
    before anything registers (a procedure reference needs one at registration)."""
    host = dict(session)
    authority = committed_authority()
    registry = create_registry(authority=authority, context=lambda: host, **registry_options)
    registry.set_procedure_executor(executor)
    return ConsoleSurface(registry, state)


__all__ = ["CONTRACTS", "ROUTES", "BackendExecutor", "ConsoleSurface", "create_console_surface"]
