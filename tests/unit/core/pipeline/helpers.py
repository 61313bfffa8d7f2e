"""Fixtures for the invocation-pipeline conformance suite.

Everything here is deterministic: registries run on a ``ManualClock`` (timers fire only on
``advance``), handlers that must stay in flight wait on explicit gates, and ``spin()`` yields
to the event loop a bounded number of times instead of sleeping.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from agentsurface import AgentSurfaceRegistry, Consumer, InvocationResult, Policy, ProcedureContract
from agentsurface._core.errors import ERROR_MATRIX, MAX_ERROR_MESSAGE
from agentsurface._core.events import SurfaceEvent
from agentsurface.lowlevel import (
    ActionBinding,
    ActionContract,
    ComponentContract,
    Concurrency,
    ObservationBinding,
    ObservationContract,
)
from agentsurface.testing import ManualClock
from tests.support import (
    make_registry as make_registry,  # re-exported: the pipeline tests import it from here
)

REFERENCE = Path(__file__).resolve().parents[4] / ".." / "shared" / "reference"

RETRY_VALUES = frozenset({"no", "yes", "after-refresh", "after-delay", "with-confirmation", "with-changes"})

# Fragments that must never reach an agent-facing message (stack frames, exception reprs).
LEAK_MARKERS = ("Traceback", 'File "', "line ", "Error(", "Exception", "secret", "0xdeadbeef")

IDS_INPUT: dict[str, Any] = {
    "type": "object",
    "properties": {"ids": {"type": "array", "items": {"type": "string"}, "minItems": 1}},
    "required": ["ids"],
    "additionalProperties": False,
}
ROWS_OUTPUT: dict[str, Any] = {
    "type": "object",
    "properties": {"rows": {"type": "array", "items": {"type": "string"}}},
    "required": ["rows"],
}
EMPTY_INPUT: dict[str, Any] = {"type": "object", "properties": {}, "additionalProperties": False}
DISABLE_INPUT: dict[str, Any] = {
    "type": "object",
    "properties": {
        "deviceIds": {"type": "array", "items": {"type": "string"}, "minItems": 1},
        "reason": {"type": "string"},
    },
    "required": ["deviceIds"],
    "additionalProperties": False,
}

A = Consumer("adapter-a", "embedded")
B = Consumer("adapter-b", "embedded")


# --------------------------------------------------------------------------- error matrix


def assert_matrix_compliant(result: InvocationResult, *, author_details: bool = False) -> InvocationResult:
    """Every result: JSON-serializable; every error: a closed code, an allowed retry value,
    only the agent-safe details keys of its row, a short message without leaks.

    ``author_details`` admits the author-provided keys a precondition may add (docs/07)."""
    wire = result.to_json()
    assert json.loads(json.dumps(wire, allow_nan=False)) == wire
    if result.status == "ok":
        assert result.error is None
        return result
    err = result.error
    assert err is not None, result
    spec = ERROR_MATRIX[err.code]
    assert err.retry in RETRY_VALUES
    assert err.retry in spec.retry, f"{err.code} with retry {err.retry}"
    keys = set(err.details or {})
    if not (author_details and err.code == "PRECONDITION_FAILED"):
        assert keys <= set(spec.details), f"{err.code} details {sorted(keys)} not in {spec.details}"
    assert isinstance(err.message, str) and 0 < len(err.message) <= MAX_ERROR_MESSAGE
    for marker in LEAK_MARKERS:
        assert marker not in err.message, f"{marker!r} leaked into {err.message!r}"
    return result


def code_of(result: InvocationResult) -> str | None:
    return result.code


def details_of(result: InvocationResult) -> dict[str, Any]:
    assert result.error is not None, f"expected an error, got {result}"
    return dict(result.error.details or {})


# --------------------------------------------------------------------------- registries



def manual(registry: AgentSurfaceRegistry) -> ManualClock:
    clock = registry.clock
    assert isinstance(clock, ManualClock)
    return clock


async def spin(times: int = 30) -> None:
    """Yield to the loop so concurrent pipelines reach their next await point."""
    for _ in range(times):
        await asyncio.sleep(0)


async def advance(registry: AgentSurfaceRegistry, seconds: float) -> None:
    """Move the manual clock (firing due timers), then let the loop react."""
    await spin()
    manual(registry).advance(seconds)
    await spin()


class Gate:
    """A handler body that counts entries and blocks until released."""

    def __init__(self) -> None:
        self.entered = 0
        self.finished = 0
        self._waiters: list[asyncio.Future[Any]] = []

    async def run(self, value: Any = None) -> Any:
        self.entered += 1
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._waiters.append(future)
        result = await future
        self.finished += 1
        return result

    def release_all(self, value: Any = None) -> None:
        waiters, self._waiters = self._waiters, []
        for future in waiters:
            if not future.done():
                future.set_result(value)

    def fail_all(self, exc: BaseException) -> None:
        waiters, self._waiters = self._waiters, []
        for future in waiters:
            if not future.done():
                future.set_exception(exc)

    @property
    def waiting(self) -> int:
        return sum(1 for f in self._waiters if not f.done())


class Events:
    """Records every event a registry dispatches."""

    def __init__(self, registry: AgentSurfaceRegistry) -> None:
        self.events: list[SurfaceEvent] = []
        self.unsubscribe = registry.subscribe(self.events.append)

    @property
    def types(self) -> list[str]:
        return [e.type for e in self.events]

    def of(self, type_: str) -> list[SurfaceEvent]:
        return [e for e in self.events if e.type == type_]


# --------------------------------------------------------------------------- contracts


def devices_table(**action_options: Any) -> ComponentContract:
    """``devices.table``: observation ``visibleRows``; actions ``selectRows`` and ``clear``."""
    return ComponentContract(
        type="devices.table",
        description="The devices table",
        observations={"visibleRows": ObservationContract("Rows currently visible", output=ROWS_OUTPUT)},
        actions={
            "selectRows": ActionContract("Select rows by device id", input=IDS_INPUT, **action_options),
            "clear": ActionContract("Clear the selection", input=EMPTY_INPUT),
        },
    )


class DevicesState:
    def __init__(self) -> None:
        self.rows = ["d1", "d2", "d3"]
        self.selected: list[str] = []
        self.select_calls: list[Any] = []
        self.read_calls = 0


def bind_table(
    contract: ComponentContract,
    state: DevicesState,
    *,
    instance_id: str = "default",
    select: Callable[..., Any] | None = None,
    read: Callable[..., Any] | None = None,
    select_options: Mapping[str, Any] | None = None,
    read_options: Mapping[str, Any] | None = None,
    **options: Any,
) -> Any:
    def default_select(value: Any, ctx: Any) -> None:
        state.select_calls.append(value)
        state.selected = list(value["ids"])

    def default_read(ctx: Any) -> Any:
        state.read_calls += 1
        return {"rows": list(state.rows)}

    return contract.bind(
        instance_id=instance_id,
        observations={"visibleRows": ObservationBinding(read or default_read, **(read_options or {}))},
        actions={
            "selectRows": ActionBinding(select or default_select, **(select_options or {})),
            "clear": lambda value, ctx: state.selected.clear(),
        },
        **options,
    )


def disable_procedure(**overrides: Any) -> ProcedureContract:
    options: dict[str, Any] = {
        "id": "domain:devices.disable",
        "description": "Disable the given devices",
        "effect": "destructive",
        "input": DISABLE_INPUT,
    }
    options.update(overrides)
    return ProcedureContract(**options)


def toolbar() -> ComponentContract:
    """A component that only hosts procedure references (plus one trivial observation)."""
    return ComponentContract(
        type="devices.toolbar",
        description="The devices toolbar",
        observations={"mode": ObservationContract("Toolbar mode", output={"type": "string"})},
    )


def bind_toolbar(
    contract: ComponentContract,
    state: DevicesState,
    procedure: ProcedureContract,
    *,
    instance_id: str = "default",
    bind: Callable[[], Mapping[str, Any]] | None = None,
    bound_fields: Sequence[str] = ("deviceIds",),
    overridable: Sequence[str] = (),
    policies: Sequence[Policy] = (),
    reference_options: Mapping[str, Any] | None = None,
    **options: Any,
) -> Any:
    reference = procedure.reference(
        bind=bind if bind is not None else (lambda: {"deviceIds": list(state.selected)}),
        bound_fields=bound_fields,
        overridable=overridable,
        policies=policies,
        **(reference_options or {}),
    )
    return contract.bind(
        instance_id=instance_id,
        observations={"mode": lambda ctx: "normal"},
        procedures=[reference],
        **options,
    )


def gated_widget(
    gates: Mapping[str, Gate],
    concurrency: Mapping[str, Concurrency] | None = None,
    *,
    type_: str = "conc.widget",
    effect: str = "local-state",
    timeout: float | None = None,
) -> tuple[ComponentContract, Callable[..., Any]]:
    """A component with one gated action per name; returns (contract, bind(instance_id))."""
    contract = ComponentContract(
        type=type_,
        description="concurrency fixture",
        actions={
            name: ActionContract(
                f"gated action {name}",
                input=EMPTY_INPUT,
                effect=effect,  # type: ignore[arg-type]
                timeout=timeout,
                concurrency=(concurrency or {}).get(name, Concurrency()),
            )
            for name in gates
        },
    )

    def bind(instance_id: str = "default", **options: Any) -> Any:
        def handler(gate: Gate) -> Callable[..., Any]:
            async def execute(value: Any, ctx: Any) -> None:
                await gate.run()

            return execute

        return contract.bind(
            instance_id=instance_id, actions={n: handler(g) for n, g in gates.items()}, **options
        )

    return contract, bind


def load_reference(name: str) -> Any:
    return json.loads((REFERENCE / name).read_text(encoding="utf-8"))


async def settled(future: asyncio.Future[InvocationResult]) -> InvocationResult:
    """The result of an invocation that must already be able to settle (fail, never hang)."""
    await spin()
    assert future.done(), "the invocation did not settle"
    return future.result()
