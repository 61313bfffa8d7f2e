"""Builders shared by the test modules: contracts, manifests, registries, clocks, recorders."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from agentsurface import (
    AgentSurfaceRegistry,
    CapabilityAuthority,
    Consumer,
    MemoryAuditSink,
    ProcedureContract,
    compile_manifest,
)
from agentsurface._core.events import SurfaceEvent
from agentsurface.lowlevel import ActionContract, ComponentBinding, ComponentContract, ObservationContract
from agentsurface.testing import ManualClock

IDS_INPUT: dict[str, Any] = {
    "type": "object",
    "properties": {"ids": {"type": "array", "items": {"type": "string"}}},
    "required": ["ids"],
    "additionalProperties": False,
}
ROWS_OUTPUT: dict[str, Any] = {
    "type": "object",
    "properties": {"rows": {"type": "array", "items": {"type": "string"}}},
    "required": ["rows"],
}


def devices_contract(
    type: str = "devices.table",
    *,
    description: str = "The devices table",
    priority: int = 0,
    origin: str = "first-party",
    meta: Mapping[str, Any] | None = None,
    policies: Sequence[str] = (),
    select_description: str = "Select rows by device id",
) -> ComponentContract:
    """One observation (visibleRows) and two actions (selectRows, clearSelection)."""
    return ComponentContract(
        type=type,
        description=description,
        priority=priority,
        origin=origin,
        meta=meta,
        policies=policies,
        observations={"visibleRows": ObservationContract("Rows currently visible", output=ROWS_OUTPUT)},
        actions={
            "selectRows": ActionContract(select_description, input=IDS_INPUT),
            "clearSelection": ActionContract("Clear the selection"),
        },
    )


def bind_devices(
    contract: ComponentContract,
    instance_id: str = "default",
    *,
    read: Callable[..., Any] | None = None,
    when_clear: Callable[[], bool] | None = None,
    **options: Any,
) -> ComponentBinding:
    from agentsurface.lowlevel import ActionBinding

    return contract.bind(
        instance_id=instance_id,
        observations={"visibleRows": read or (lambda ctx: {"rows": []})},
        actions={
            "selectRows": lambda value, ctx: None,
            "clearSelection": ActionBinding(
                lambda value, ctx: None, when=when_clear, unavailable_reason="No rows are selected"
            ),
        },
        **options,
    )


def disable_procedure(**overrides: Any) -> ProcedureContract:
    options: dict[str, Any] = {
        "id": "domain:devices.disable",
        "description": "Disable devices",
        "effect": "server-mutation",
        "input": {
            "type": "object",
            "properties": {
                "ids": {"type": "array", "items": {"type": "string"}},
                "reason": {"type": "string"},
            },
            "required": ["ids", "reason"],
            "additionalProperties": False,
        },
    }
    options.update(overrides)
    return ProcedureContract(**options)


def echo_backend(procedure_id: str, value: Any, ctx: Any) -> dict[str, Any]:
    """A backend that answers every procedure with what it received."""
    return {"procedureId": procedure_id, "input": value}


def registry_for(contracts: Iterable[Any], **options: Any) -> AgentSurfaceRegistry:
    """A registry whose authority approves exactly ``contracts``; when they include procedures,
    ``echo_backend`` is their executor (a reference needs one at registration)."""
    items = list(contracts)
    if any(isinstance(item, ProcedureContract) for item in items):
        options.setdefault("procedure_executor", echo_backend)
    return AgentSurfaceRegistry(authority=CapabilityAuthority.from_manifest(compile_manifest(items)), **options)


class FakeClock:
    """A callable clock that only moves when told to (seconds since the epoch)."""

    def __init__(self, start: float = 1_800_000_000.0) -> None:
        self.value = start

    def __call__(self) -> float:
        return self.value

    def advance(self, seconds: float) -> None:
        self.value += seconds


class Recorder:
    """Collects every event a registry dispatches."""

    def __init__(self, registry: AgentSurfaceRegistry) -> None:
        self.events: list[SurfaceEvent] = []
        self.unsubscribe = registry.subscribe(self.events.append)

    @property
    def types(self) -> list[str]:
        return [e.type for e in self.events]

    def of(self, type_: str) -> list[SurfaceEvent]:
        return [e for e in self.events if e.type == type_]


# A consumer, a read-only procedure and an empty toolbar: the small surface the conformance
# tests of registration, domain paths and policies build on.
CONSUMER = Consumer("copilot-panel", "embedded")
PING = ProcedureContract(id="domain:app.ping", description="Check the backend is up", effect="server-query")


async def echo_executor(procedure_id: str, value: Any, ctx: Any) -> Any:
    return {"procedure": procedure_id}


def toolbar_contract() -> ComponentContract:
    return ComponentContract(type="app.toolbar", description="The toolbar")


def make_registry(
    contracts: Iterable[Any],
    *,
    clock: ManualClock | None = None,
    audit: Any = None,
    **options: Any,
) -> AgentSurfaceRegistry:
    """A test registry on a ManualClock (environment ``test``, audit kept in memory) whose
    authority approves exactly ``contracts``; ``echo_backend`` executes their procedures unless
    the test gives its own ``procedure_executor``."""
    items = list(contracts)
    authority = CapabilityAuthority.from_manifest(compile_manifest(items))
    options.setdefault("environment", "test")
    if any(isinstance(item, ProcedureContract) for item in items):
        # A procedure reference needs an executor at registration.
        options.setdefault("procedure_executor", echo_backend)
    return AgentSurfaceRegistry(
        authority=authority,
        clock=clock if clock is not None else ManualClock(),
        audit=audit if audit is not None else MemoryAuditSink(),
        **options,
    )
