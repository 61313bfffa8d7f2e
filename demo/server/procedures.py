"""The devices procedures as the backend serves them: the shared contracts, their implementations
over the demo's tables, and who may call them.

Routing, input validation, authorization by permission, idempotency, server-side approval and
error mapping are the library's (:class:`agentsurface.server.ProcedureServer`); what is left here
is domain code. Each implementation runs inside the call's transaction (``call.db``), scoped to the
caller's tenant, never one the page sent.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from agentsurface.server import ProcedureCall, ServedProcedure, precondition_failed, serve

from ..shared.contracts import (
    DISABLE,
    ENABLE,
    QUERY,
    RENAME,
    DisableInput,
    DisableOutput,
    EnableInput,
    EnableOutput,
    QueryInput,
    QueryOutput,
    RenameInput,
    RenameOutput,
)
from ..shared.session import SESSION, SessionInput, SessionOutput
from .db import Change, DeviceFilter, Principal, Role, Tx, UnknownDevicesError, iso_seconds

READ, WRITE = "devices.read", "devices.write"
PERMISSIONS: dict[Role, frozenset[str]] = {
    "viewer": frozenset({READ}),
    "operator": frozenset({READ, WRITE}),
    "admin": frozenset({READ, WRITE}),
}


Channel = Literal["person", "agent"]


@dataclass(frozen=True, slots=True)
class Session:
    """What the server knows of a caller (``Caller.data``): the user, from the database, and who
    acts for them (the person, or their agent)."""

    principal: Principal
    channel: Channel


def _tenant(call: ProcedureCall) -> str:
    tenant = call.caller.tenant
    if tenant is None:  # every demo caller has one; a caller without must not see any tenant
        raise RuntimeError("caller without a tenant")
    return tenant


def _unknown_devices(ids: Sequence[str]) -> Exception:
    shown = ", ".join(ids[:10]) + (", ..." if len(ids) > 10 else "")  # ids matched the contract's pattern
    return precondition_failed(
        "unknown-device",
        f"{len(ids)} requested device id(s) do not exist in your tenant ({shown}); nothing was changed. "
        "Query the devices again and retry with existing ids.",
    )


def _text(value: str | None) -> str | None:
    """Surrounding spaces dropped; blank means absent."""
    return (value or "").strip() or None


def _unique(ids: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(ids))  # duplicates collapse: the operations are idempotent per device


def describe_session(call: ProcedureCall, _value: SessionInput) -> SessionOutput:
    session = call.caller.data
    if not isinstance(session, Session):  # every demo caller is authenticated by demo.server.api
        raise RuntimeError("caller without a session")
    who = session.principal
    return SessionOutput.model_validate({
        "user": {"id": who.user_id, "name": who.name, "role": who.role},
        "tenant": who.tenant,
        "tenantName": who.tenant_name,
        "allowedProcedures": allowed_procedures(PERMISSIONS[who.role]),
    })


def query_devices(call: ProcedureCall, value: QueryInput) -> QueryOutput:
    where = DeviceFilter(value.status, _text(value.city), _text(value.text))
    devices, total = Tx(call.db).query_devices(_tenant(call), where, value.limit)
    return QueryOutput.model_validate({"devices": [d.to_json() for d in devices], "total": total})


def rename_device(call: ProcedureCall, value: RenameInput) -> RenameOutput:
    try:
        device = Tx(call.db).rename(_tenant(call), value.deviceId, value.name.strip(), iso_seconds(call.now))
    except UnknownDevicesError as exc:
        raise _unknown_devices(exc.ids) from None
    return RenameOutput.model_validate({"device": device.to_json()})


def _change(change: Change) -> tuple[int, int, list[dict[str, object]]]:
    return change.changed, len(change.devices) - change.changed, [dict(d.to_json()) for d in change.devices]


def disable_devices(call: ProcedureCall, value: DisableInput) -> DisableOutput:
    try:
        change = Tx(call.db).disable(_tenant(call), _unique(value.deviceIds), _text(value.reason), iso_seconds(call.now))
    except UnknownDevicesError as exc:
        raise _unknown_devices(exc.ids) from None
    done, already, rows = _change(change)
    return DisableOutput.model_validate({"disabled": done, "alreadyDisabled": already, "devices": rows})


def enable_devices(call: ProcedureCall, value: EnableInput) -> EnableOutput:
    try:
        change = Tx(call.db).enable(_tenant(call), _unique(value.deviceIds), iso_seconds(call.now))
    except UnknownDevicesError as exc:
        raise _unknown_devices(exc.ids) from None
    done, already, rows = _change(change)
    return EnableOutput.model_validate({"enabled": done, "alreadyEnabled": already, "devices": rows})


SERVED: tuple[ServedProcedure, ...] = (
    serve(QUERY, query_devices, permissions={READ}),
    serve(RENAME, rename_device, permissions={WRITE}),
    serve(DISABLE, disable_devices, permissions={WRITE}, require_confirmation=True),
    serve(ENABLE, enable_devices, permissions={WRITE}),
    serve(SESSION, describe_session),  # any authenticated caller may ask who they are
)


def allowed_procedures(permissions: frozenset[str]) -> list[str]:
    """The devices procedures (``devices.query``, ...) a caller with ``permissions`` may call:
    what the page may offer the agent (``session.describe``, open to all, is the page's own)."""
    return [p.id.removeprefix("domain:") for p in SERVED if p.permissions and p.permissions <= permissions]
