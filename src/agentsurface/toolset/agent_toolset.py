"""The agent toolset: one registry projected for one consumer as provider-neutral tools, either
one tool per capability ("direct" mode) or the three meta verbs (``meta``).

Tools separate the stable definition (name, description, input schema: safe in a cached prompt
prefix) from live ``state`` (availability, reason, contextual note), which hosts render apart
with ``capability_state()``. Every call goes through ``registry.invoke``; tools execute nothing
themselves and never raise.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import Any, Literal

from .._catalog import CatalogEntry, Target, catalog_entries
from .._core.consumer import Consumer
from .._core.contracts.context import CancelSignal
from .._core.errors import ErrorPayload, RegistryClosedError, error, surface_shut_down
from .._core.events import SurfaceEvent
from .._core.ids import random_id
from .._core.jsonvalue import canonical_json
from .._core.pipeline.confirmation import Outcome
from .._core.pipeline.failures import confirmation_invalid
from .._core.pipeline.invocation import Invocation, InvocationResult
from .._core.registry.descriptors import Budget, Snapshot
from .._core.registry.registry import AgentSurfaceRegistry
from ..wire_names import assign_wire_names
from .meta import build_meta_tools
from .tools import AgentTool, ToolState

log = logging.getLogger("agentsurface")

Mode = Literal["direct", "meta"]
Topology = Literal["embedded", "remote"]
ConfirmationMode = Literal["wait", "two-phase"]


class AgentToolset:
    """Tools for one consumer over one registry: ``AgentToolset(registry, consumer=...,
    topology=...)`` (one of ``topology`` / ``confirmations`` is required); ``close()`` or ``with``."""

    def __init__(
        self,
        registry: AgentSurfaceRegistry,
        *,
        consumer: Consumer,
        mode: Mode = "direct",
        topology: Topology | None = None,
        confirmations: ConfirmationMode | None = None,
        scope: Sequence[str] | None = None,
        budget: Budget | None = None,
        environment: str | None = None,
    ) -> None:
        if not isinstance(registry, AgentSurfaceRegistry):
            raise TypeError("AgentToolset needs an AgentSurfaceRegistry")
        if not isinstance(consumer, Consumer):
            raise TypeError("consumer must be a Consumer (a stable id per toolset)")
        if mode not in ("direct", "meta"):
            raise ValueError(f"mode must be 'direct' or 'meta', got {mode!r}")
        if topology is None and confirmations is None:
            raise ValueError(
                "AgentToolset: declare topology ('embedded' | 'remote') or confirmations "
                "('wait' | 'two-phase'); embedded loops wait for the host's confirmation, remote "
                "loops return CONFIRMATION_REQUIRED to the model"
            )
        if topology not in (None, "embedded", "remote"):
            raise ValueError(f"topology must be 'embedded' or 'remote', got {topology!r}")
        if confirmations not in (None, "wait", "two-phase"):
            raise ValueError(f"confirmations must be 'wait' or 'two-phase', got {confirmations!r}")
        if budget is not None and mode != "meta":
            raise ValueError(
                "budget is only valid in meta mode: a direct catalog would drop tools with no "
                "marker the model can see; use scope instead"
            )
        self.registry = registry
        self.consumer = consumer
        self.mode: Mode = mode
        self.confirmation_mode: ConfirmationMode = confirmations or (
            "two-phase" if topology == "remote" else "wait"
        )
        self.scope = None if scope is None else tuple(scope)
        self.budget = budget
        self.development = (environment or registry.environment) == "development"
        self._listeners: list[Callable[[list[AgentTool]], None]] = []
        self._waits: set[CancelSignal] = set()
        self._disposed = False
        # Change-feed baseline: the signature listeners last saw, or the catalog tools() returned
        # first, kept as is and serialized only if a listener ever needs the comparison.
        self._signature: str | None = None
        self._baseline: Sequence[AgentTool] | None = None
        self._meta_tools: list[AgentTool] | None = None
        # The direct tools last built, with the catalog entries and names they were built from.
        self._built: tuple[tuple[CatalogEntry, ...], tuple[str, ...], tuple[AgentTool, ...]] | None = None
        self._unsubscribe = registry.subscribe(self._on_event)

    # ------------------------------------------------------------------ catalog

    def tools(self) -> list[AgentTool]:
        if self.mode == "meta":
            if self._meta_tools is None:
                self._meta_tools = build_meta_tools(self)
            return self._meta_tools
        tools = self._build_direct()
        if self._signature is None and self._baseline is None:
            self._baseline = tuple(tools)  # a copy: the host may edit the list it got
        return tools

    def wire_name_map(self) -> Mapping[str, str]:
        """Wire name → canonical capability id for the current catalog (empty in meta mode).
        The only way back from a provider's tool name. Computed from the live snapshot on every
        call: a map cached from an earlier catalog would still resolve unregistered tools."""
        if self.mode != "direct":
            return {}
        entries = catalog_entries(self.snapshot())
        names = assign_wire_names(e.wire for e in entries).names
        return {name: e.descriptor.capability_id for e, name in zip(entries, names, strict=True)}

    def snapshot(self, scope: Sequence[str] | None = None, budget: Budget | None = None) -> Snapshot:
        return self.registry.snapshot(
            consumer=self.consumer, scope=scope if scope is not None else self.scope, budget=budget
        )

    def _build_direct(self) -> list[AgentTool]:
        entries = catalog_entries(self.snapshot())
        names = assign_wire_names(e.wire for e in entries).names
        built = self._built
        if built is not None and built[1] is names and _same(built[0], entries):
            return list(built[2])  # an unchanged catalog: the same frozen tools, a new list
        tools = self._direct_tools(entries, names)
        self._built = (tuple(entries), names, tuple(tools))
        return tools

    def _direct_tools(self, entries: Sequence[CatalogEntry], names: Sequence[str]) -> list[AgentTool]:
        tools = []
        states: dict[tuple[bool, str | None, str | None], ToolState] = {}  # frozen: shared
        call = self.call
        for entry, name in zip(entries, names, strict=True):
            d = entry.descriptor
            key = entry.state_key
            state = states.get(key)
            if state is None:
                state = states[key] = ToolState(*key)
            tools.append(
                AgentTool(
                    name,
                    entry.description,
                    entry.input_schema,
                    state,
                    d.kind,
                    d.capability_id,
                    partial(call, entry.target),  # what AgentTool.execute awaits
                )
            )
        return tools

    # ------------------------------------------------------------------ calling

    async def call(
        self,
        target: Target,
        input: Any,
        *,
        tool_call_id: str | None = None,
        invocation_id: str | None = None,
        confirmation_id: str | None = None,
    ) -> InvocationResult:
        """Invoke ``target`` through the registry; in wait mode, complete a confirmation in-call."""
        request = Invocation(
            capability_id=target.capability_id,
            input=input,
            invocation_id=invocation_id or tool_call_id or random_id("inv_", 16),
            instance_id=target.instance_id,
            registration_id=target.registration_id,
            surface_version=target.surface_version,
            confirmation_id=confirmation_id,
        )
        try:
            result = await self.registry.invoke(request, consumer=self.consumer)
            if self.confirmation_mode != "wait" or result.code != "CONFIRMATION_REQUIRED":
                return result
            assert result.error is not None and result.error.details is not None
            cid = result.error.details.get("confirmationId")
            if not isinstance(cid, str):
                return result
            outcome = await self._wait(cid)
            if outcome is None:
                return result  # disposed while waiting: the original result, nothing executes
            if outcome in ("denied", "stale"):
                # Final, as the WebMCP adapter answers them: a retry would meet whatever phase
                # fails first (a surface change since), hiding the person's "no" or the stale
                # preview behind a code that invites asking again. The store has audited it.
                said = self.registry.confirmations.reason_of(cid) if outcome == "denied" else None
                return _error_result(request, confirmation_invalid(outcome, said), self.registry.version)
            # Same invocation id and confirmation id: the registry checks the evidence.
            retry = dataclasses.replace(request, confirmation_id=cid)
            return await self.registry.invoke(retry, consumer=self.consumer)
        except RegistryClosedError:
            return _error_result(request, surface_shut_down(), self.registry.version)
        except Exception:
            log.exception("toolset call of %s failed", target.capability_id)
            return _error_result(
                request, error("EXECUTION_FAILED", "The call failed unexpectedly."), self.registry.version
            )

    async def _wait(self, confirmation_id: str) -> Outcome | None:
        """Wait for the user's decision; None if the toolset was disposed meanwhile."""
        if self._disposed:
            return None
        signal = CancelSignal()
        self._waits.add(signal)
        try:
            outcome = await self.registry.confirmations.wait_for(confirmation_id, signal=signal)
        except asyncio.CancelledError:
            if not signal.aborted:
                raise
            return None
        finally:
            self._waits.discard(signal)
        return None if self._disposed else outcome

    # ------------------------------------------------------------------ change feed

    def subscribe(self, listener: Callable[[list[AgentTool]], None]) -> Callable[[], None]:
        """Called when ``tools()`` would differ (definitions or state). Never in meta mode."""
        self._listeners.append(listener)

        def unsubscribe() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return unsubscribe

    def _on_event(self, event: SurfaceEvent) -> None:
        if self._disposed or event.type != "surface-changed" or self.mode == "meta":
            return
        if not self._listeners:
            # Unobserved change: the baseline is whatever tools() returns next, so a listener
            # added later compares with the catalog the host actually saw.
            self._signature, self._baseline = None, None
            return
        if self._signature is None and self._baseline is not None:
            self._signature = _signature(self._baseline)
        self._baseline = None
        tools = self._build_direct()
        signature = _signature(tools)
        if signature == self._signature:
            return
        self._signature = signature
        for listener in tuple(self._listeners):
            try:
                listener(tools)
            except Exception:
                log.exception("toolset listener failed")

    def __enter__(self) -> AgentToolset:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        """Unsubscribe and settle in-flight confirmation waits (they return the original
        CONFIRMATION_REQUIRED; nothing executes). Idempotent."""
        if self._disposed:
            return
        self._disposed = True
        self._unsubscribe()
        self._listeners.clear()
        for signal in list(self._waits):
            signal.abort("toolset disposed")
        self._waits.clear()


def _same(a: Sequence[object], b: Sequence[object]) -> bool:
    return len(a) == len(b) and all(x is y for x, y in zip(a, b, strict=True))


def _signature(tools: Sequence[AgentTool]) -> str:
    return canonical_json([[t.name, t.description, t.input_schema, t.state.to_json()] for t in tools])


def _error_result(request: Invocation, err: ErrorPayload, version: str) -> InvocationResult:
    return InvocationResult(
        status="error",
        invocation_id=request.invocation_id or "",
        capability_id=request.capability_id,
        surface_version=version,
        error=err,
    )
