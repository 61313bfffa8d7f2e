"""Builders for the toolset conformance tests: a devices table with live state, a destructive
``domain:devices.disable`` procedure bound to the selection, registries over a manual clock, and
small spies on what reaches the registry."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from agentsurface import AgentSurfaceRegistry, Consumer, Invocation, InvocationResult, ProcedureContract
from agentsurface._core.events import SurfaceEvent
from agentsurface.lowlevel import (
    ActionBinding,
    ActionContract,
    ComponentBinding,
    ComponentContract,
    ObservationContract,
    RegistrationHandle,
)
from agentsurface.testing import ManualClock
from agentsurface.toolset import AgentTool, AgentToolset
from tests.support import make_registry

CONSUMER = Consumer("copilot-panel", "embedded")

IDS_INPUT: dict[str, Any] = {
    "type": "object",
    "properties": {"ids": {"type": "array", "items": {"type": "string"}, "minItems": 1}},
    "required": ["ids"],
    "additionalProperties": False,
}
STATE_OUTPUT: dict[str, Any] = {
    "type": "object",
    "properties": {"selectedIds": {"type": "array", "items": {"type": "string"}}},
    "required": ["selectedIds"],
}
DISABLE_INPUT: dict[str, Any] = {
    "type": "object",
    "properties": {
        "deviceIds": {"type": "array", "items": {"type": "string"}},
        "reason": {"type": "string"},
    },
    "required": ["deviceIds", "reason"],
    "additionalProperties": False,
}

SELECT_PREFIX = "[view · local-state]"
DISABLE_DESCRIPTION = "[domain · destructive · requires confirmation] Disable the given devices"


@dataclass
class DevicesState:
    """What the page shows: the selection, plus a log of every handler that ran."""

    selected: list[str] = field(default_factory=list)
    calls: list[tuple[str, Any]] = field(default_factory=list)


def devices_contract(type_: str = "devices.table", *, priority: int = 0) -> ComponentContract:
    return ComponentContract(
        type=type_,
        description="The devices table",
        priority=priority,
        observations={"readState": ObservationContract("The current selection", output=STATE_OUTPUT)},
        actions={
            "selectRows": ActionContract("Select rows by device id", input=IDS_INPUT),
            "clearSelection": ActionContract("Clear the selection"),
        },
    )


def disable_contract(**overrides: Any) -> ProcedureContract:
    options: dict[str, Any] = {
        "id": "domain:devices.disable",
        "description": "Disable the given devices",
        "effect": "destructive",
        "input": DISABLE_INPUT,
        "output": {
            "type": "object",
            "properties": {"disabled": {"type": "integer"}},
            "required": ["disabled"],
        },
    }
    options.update(overrides)
    return ProcedureContract(**options)


def bind_devices(
    contract: ComponentContract,
    state: DevicesState,
    instance_id: str = "default",
    *,
    procedure: ProcedureContract | None = None,
    describe: Callable[[], str] | None = None,
) -> ComponentBinding:
    def read(ctx: Any) -> dict[str, Any]:
        state.calls.append(("readState", None))
        return {"selectedIds": list(state.selected)}

    def select(value: Any, ctx: Any) -> None:
        state.calls.append(("selectRows", value))
        state.selected = list(value["ids"])

    def clear(value: Any, ctx: Any) -> None:
        state.calls.append(("clearSelection", value))
        state.selected = []

    procedures: tuple[Any, ...] = ()
    if procedure is not None:
        procedures = (
            procedure.reference(
                bind=lambda: {"deviceIds": list(state.selected)},
                bound_fields=("deviceIds",),
                when=lambda: bool(state.selected),
                unavailable_reason="Select at least one device first",
                describe=describe,
            ),
        )
    return contract.bind(
        instance_id=instance_id,
        observations={"readState": read},
        actions={
            "selectRows": select,
            "clearSelection": ActionBinding(
                clear, when=lambda: bool(state.selected), unavailable_reason="No rows are selected"
            ),
        },
        procedures=procedures,
    )



class ExecutorLog:
    """A procedure executor that records what reached the server."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, Any, str]] = []

    def __call__(self, capability_id: str, effective: Any, ctx: Any) -> dict[str, Any]:
        self.calls.append((capability_id, effective, ctx.invocation_id))
        return {"disabled": len(effective["deviceIds"])}


@dataclass
class Devices:
    registry: AgentSurfaceRegistry
    state: DevicesState
    server: ExecutorLog
    clock: ManualClock
    handle: RegistrationHandle


def devices_surface(
    *,
    selected: Sequence[str] = (),
    describe: Callable[[], str] | None = None,
    with_procedure: bool = True,
    **registry_options: Any,
) -> Devices:
    """One devices table (``default``) referencing the destructive disable procedure."""
    clock = registry_options.setdefault("clock", ManualClock())
    server = ExecutorLog()
    registry = make_registry(
        [devices_contract(), disable_contract(), devices_contract("aux.panel")],
        procedure_executor=server,
        **registry_options,
    )
    state = DevicesState(selected=list(selected))
    handle = registry.register(
        bind_devices(
            devices_contract(),
            state,
            procedure=disable_contract() if with_procedure else None,
            describe=describe,
        )
    )
    return Devices(registry, state, server, clock, handle)


def toolset_for(registry: AgentSurfaceRegistry, **options: Any) -> AgentToolset:
    options.setdefault("consumer", CONSUMER)
    if "topology" not in options and "confirmations" not in options:
        options["topology"] = "embedded"
    return AgentToolset(registry, **options)


def tool(toolset: AgentToolset, name: str) -> AgentTool:
    tools = toolset.tools()
    for candidate in tools:
        if candidate.name == name:
            return candidate
    raise AssertionError(f"no tool {name!r} in {[t.name for t in tools]}")


def definitions(tools: Sequence[AgentTool]) -> str:
    """The bytes a host puts in the provider tool block (canonical JSON of the definitions)."""
    return json.dumps([t.definition() for t in tools], sort_keys=True, separators=(",", ":"))


class InvokeSpy:
    """Records every request the toolset hands to ``registry.invoke``."""

    def __init__(self, registry: AgentSurfaceRegistry) -> None:
        self.requests: list[Invocation] = []
        original = registry.invoke

        async def invoke(request: Any, **kwargs: Any) -> InvocationResult:
            self.requests.append(request)
            return await original(request, **kwargs)

        registry.invoke = invoke  # type: ignore[method-assign]


class EventLog:
    def __init__(self, registry: AgentSurfaceRegistry) -> None:
        self.events: list[SurfaceEvent] = []
        registry.subscribe(self.events.append)

    def of(self, type_: str) -> list[SurfaceEvent]:
        return [e for e in self.events if e.type == type_]


async def until_pending(registry: AgentSurfaceRegistry, count: int = 1) -> list[Any]:
    """Yield to the loop (no real sleep) until ``count`` confirmations are pending."""
    for _ in range(200):
        pending = registry.confirmations.pending()
        if len(pending) >= count:
            return pending
        await asyncio.sleep(0)
    raise AssertionError(f"expected {count} pending confirmation(s), got {registry.confirmations.pending()}")


async def settle(task: asyncio.Future[Any]) -> Any:
    """Await ``task`` with loop yields only; fail instead of hanging when it never settles."""
    for _ in range(200):
        if task.done():
            return task.result()
        await asyncio.sleep(0)
    task.cancel()
    raise AssertionError("the tool call did not settle")


def plain(value: Any) -> Any:
    """``value`` as plain JSON data (frozen mappings and tuples become dicts and lists)."""
    return json.loads(json.dumps(value))


def output_of(result: InvocationResult) -> dict[str, Any]:
    """The output object of a successful result."""
    assert result.ok, result
    assert isinstance(result.output, dict), result.output
    return result.output


def error_code(result: InvocationResult) -> str:
    return result.code if result.code is not None else f"ok({result.status})"


def details(result: InvocationResult) -> dict[str, Any]:
    assert result.error is not None, f"expected an error, got {result}"
    return dict(result.error.details or {})
