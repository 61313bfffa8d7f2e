"""A small devices app for the WebMCP adapter tests: contracts covering every kind and effect,
live state and handler counters, a registry over a ManualClock, and an oracle for what the
browser should list."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from agentsurface import (
    ActionContext,
    AgentSurfaceRegistry,
    CapabilityAuthority,
    Consumer,
    Limits,
    ProcedureContract,
    compile_manifest,
)
from agentsurface.lowlevel import (
    ActionBinding,
    ActionContract,
    ComponentContract,
    ObservationBinding,
    ObservationContract,
    RegistrationHandle,
)
from agentsurface.testing import ManualClock
from agentsurface.toolset import AgentToolset

CONSUMER = Consumer("browser-agent", "webmcp")

IDS: dict[str, Any] = {
    "type": "object",
    "properties": {"ids": {"type": "array", "items": {"type": "string"}}},
    "required": ["ids"],
    "additionalProperties": False,
}
IDS_REASON: dict[str, Any] = {
    "type": "object",
    "properties": {"ids": {"type": "array", "items": {"type": "string"}}, "reason": {"type": "string"}},
    "required": ["ids", "reason"],
    "additionalProperties": False,
}
ROWS: dict[str, Any] = {
    "type": "object",
    "properties": {"rows": {"type": "array", "items": {"type": "string"}}},
    "required": ["rows"],
}
EMPTY: dict[str, Any] = {"type": "object", "properties": {}, "additionalProperties": False}

DISABLE = ProcedureContract(
    id="domain:devices.disable", description="Disable devices", effect="server-mutation", input=IDS_REASON
)
PURGE = ProcedureContract(
    id="domain:devices.purge",
    description="Purge devices permanently",
    effect="destructive",
    confirmation="optional",
    input=IDS,
)
LOOKUP = ProcedureContract(
    id="domain:devices.lookup",
    description="Look devices up on the server",
    effect="server-query",
    input=IDS,
    untrusted_output=True,
)
NOTIFY = ProcedureContract(
    id="domain:devices.notify",
    description="Email the device owners",
    effect="external-side-effect",
    input=IDS,
)

TABLE = ComponentContract(
    type="devices.table",
    description="The devices table",
    observations={"visibleRows": ObservationContract("Rows currently visible", output=ROWS)},
    actions={
        "selectRows": ActionContract("Select rows by device id", input=IDS),
        "clearSelection": ActionContract("Clear the selection"),
        "wipeFilters": ActionContract("Reset every filter", confirmation="required"),
        "openDevice": ActionContract("Open a device page", effect="navigation", input=IDS),
        "wait": ActionContract("Wait until told to stop", timeout=600),
    },
)
PANEL = ComponentContract(
    type="aux.panel",
    description="An auxiliary panel",
    observations={"status": ObservationContract("Panel status", output={"type": "string"})},
    actions={"toggle": ActionContract("Toggle the panel")},
)
NOTES = ComponentContract(
    type="notes.list",
    description="User notes",
    observations={
        "items": ObservationContract("The notes, as users wrote them", output=ROWS, untrusted_output=True)
    },
)
DETAIL = ComponentContract(
    type="devices.detail",
    description="One device",
    observations={"summary": ObservationContract("The device summary", output={"type": "string"})},
)

CONTRACTS: tuple[Any, ...] = (TABLE, PANEL, NOTES, DETAIL, DISABLE, PURGE, LOOKUP, NOTIFY)
PROCEDURES = {p.id: p for p in (DISABLE, PURGE, LOOKUP, NOTIFY)}


@dataclass
class App:
    """One registry plus the live state the handlers touch."""

    registry: AgentSurfaceRegistry
    clock: ManualClock
    selected: list[str] = field(default_factory=list)
    rows: list[str] = field(default_factory=lambda: ["d1", "d2"])
    calls: Counter[str] = field(default_factory=Counter)
    server: list[tuple[str, Any]] = field(default_factory=list)
    release_wait: asyncio.Event = field(default_factory=asyncio.Event)
    wait_cancelled: list[str] = field(default_factory=list)
    events: list[Any] = field(default_factory=list)
    # What the backend answers instead of the echo below (a test of server refusals sets it).
    backend: Callable[[str, Any, ActionContext], Any] | None = None

    # ---- mounting

    def mount_table(
        self,
        instance_id: str = "default",
        *,
        procedures: tuple[str, ...] = ("domain:devices.disable", "domain:devices.purge"),
        bound: tuple[str, ...] = (),
        wipe_preview: Callable[..., Any] | None = None,
    ) -> RegistrationHandle:
        refs = [
            PROCEDURES[pid].reference(
                bind=(lambda: {"ids": list(self.selected)}) if bound else None, bound_fields=bound
            )
            for pid in procedures
        ]

        def record(name: str, result: Any = None) -> Callable[..., Any]:
            def handler(value: Any, ctx: ActionContext) -> Any:
                self.calls[name] += 1
                return result

            return handler

        def select(value: Any, ctx: ActionContext) -> Any:
            self.calls["selectRows"] += 1
            self.selected = list(value["ids"])
            return {"selected": self.selected}

        def clear(value: Any, ctx: ActionContext) -> None:
            self.calls["clearSelection"] += 1
            self.selected = []

        async def wait(value: Any, ctx: ActionContext) -> str:
            self.calls["wait"] += 1
            waiter = asyncio.ensure_future(self.release_wait.wait())
            aborted = asyncio.ensure_future(ctx.signal.wait())
            try:  # a call given up on is stopped at this await: clean up in finally
                await asyncio.wait({waiter, aborted}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                waiter.cancel()
                aborted.cancel()
                if ctx.signal.aborted:
                    self.wait_cancelled.append(ctx.signal.reason or "")
            return "released"

        binding = TABLE.bind(
            instance_id=instance_id,
            observations={"visibleRows": lambda ctx: {"rows": list(self.rows)}},
            actions={
                "selectRows": select,
                "clearSelection": ActionBinding(
                    clear, when=lambda: bool(self.selected), unavailable_reason="No rows are selected"
                ),
                "wipeFilters": ActionBinding(record("wipeFilters", {"wiped": True}), preview=wipe_preview),
                "openDevice": record("openDevice"),
                "wait": wait,
            },
            procedures=refs,
        )
        return self.registry.register(binding)

    def mount_panel(self, instance_id: str = "default") -> RegistrationHandle:
        def toggle(value: Any, ctx: ActionContext) -> None:
            self.calls[f"toggle@{instance_id}"] += 1

        return self.registry.register(
            PANEL.bind(
                instance_id=instance_id,
                observations={"status": lambda ctx: "ok"},
                actions={"toggle": toggle},
            )
        )

    def mount_notes(self) -> RegistrationHandle:
        return self.registry.register(
            NOTES.bind(observations={"items": ObservationBinding(lambda ctx: {"rows": ["<b>hi</b>"]})})
        )

    def mount_detail(self, *, procedures: tuple[str, ...] = ()) -> RegistrationHandle:
        return self.registry.register(
            DETAIL.bind(
                observations={"summary": lambda ctx: "a device"},
                procedures=[PROCEDURES[p].reference() for p in procedures],
            )
        )

    # ---- the server side of domain procedures

    async def execute_procedure(self, procedure_id: str, value: Any, ctx: ActionContext) -> Any:
        if self.backend is not None:
            return await self.backend(procedure_id, value, ctx)
        self.calls[procedure_id] += 1
        self.server.append((procedure_id, value))
        return {"done": procedure_id, "ids": value.get("ids") if isinstance(value, dict) else None}

    # ---- oracles

    def expected_names(self, scope: tuple[str, ...] | None = None) -> set[str]:
        """What the browser should list: the toolset's available direct tools (independent code)."""
        toolset = AgentToolset(self.registry, consumer=CONSUMER, topology="embedded", scope=scope)
        try:
            return {t.name for t in toolset.tools() if t.state.available}
        finally:
            toolset.close()


def make_app(**limits: Any) -> App:
    clock = ManualClock()
    authority = CapabilityAuthority.from_manifest(compile_manifest(CONTRACTS))
    app: App

    def execute(procedure_id: str, value: Any, ctx: ActionContext) -> Any:  # the app's backend
        return app.execute_procedure(procedure_id, value, ctx)

    registry = AgentSurfaceRegistry(
        authority=authority, clock=clock, limits=Limits(**limits), environment="test", procedure_executor=execute
    )
    app = App(registry, clock)
    registry.subscribe(app.events.append)
    return app


async def turn(times: int = 10) -> None:
    """Let scheduled tasks run (event-loop turns only, no time passes)."""
    for _ in range(times):
        await asyncio.sleep(0)


def started_events(app: App) -> list[Any]:
    return [e for e in app.events if e.type == "invocation-started"]
