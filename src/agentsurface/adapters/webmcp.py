"""The WebMCP adapter: the registry's surface as browser tools, one per available capability.

It reconciles on every surface change (touching only added, removed or changed tools where the
browser allows it), routes every call through ``registry.invoke``, completes confirmations within
the call, and withdraws everything on ``stop()``. Nothing here imports ``js``: the browser shapes
are wrapped by ``agentsurface.browser`` behind the ``ModelContext`` protocol.

Public: the names in ``__all__``. The sibling modules (``projection``, ``confirmation``,
``model_context``) are internal; the protocol types a test double needs are re-exported here.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, Literal

from .._catalog import Descriptor, Target
from .._core.consumer import Consumer
from .._core.contracts.context import CancelSignal
from .._core.errors import RegistryClosedError, error, surface_shut_down
from .._core.events import SurfaceEvent
from .._core.ids import random_id
from .._core.jsonvalue import JsonValue
from .._core.pipeline.invocation import MISSING, Invocation, InvocationResult
from .._core.registry.registry import AgentSurfaceRegistry
from .confirmation import ConfirmHook, InCallConfirmation
from .model_context import (
    ModelContext,
    ModelContextError,
    Shape,
    ToolCall,
    ToolExecute,
    WebMCPTool,
    detect_model_context,
)
from .projection import Curation, DirectProjection, content, content_json, project_meta

if TYPE_CHECKING:  # loaded in start() for meta mode: the default direct mode never needs it
    from ..toolset import AgentTool, AgentToolset

__all__ = [
    "ConfirmHook",
    "Curation",
    "Descriptor",
    "ModelContext",
    "ModelContextError",
    "Shape",
    "ToolCall",
    "WebMCPAdapter",
    "WebMCPTool",
]

log = logging.getLogger("agentsurface.webmcp")


class WebMCPAdapter:
    """The WebMCP adapter: ``await adapter.start(registry=..., consumer=...)``, ``await
    adapter.aclose()`` (or ``async with adapter:``) to withdraw every tool.

    ``scope`` limits exposure (the browser agent is the least-trusted consumer);
    ``expose_capability(descriptor)`` returns False to skip a capability, ``{"description": ...}``
    to reword it, or None/True to keep it as authored; ``confirm(pending, client)`` opts into
    prompting through ``requestUserInteraction``. ``model_context`` replaces browser detection (a
    test double implementing ``ModelContext``); in the page, detection comes from the page layer."""

    name = "webmcp"

    def __init__(
        self,
        *,
        scope: Sequence[str] | None = None,
        expose_capability: Curation | None = None,
        confirm: ConfirmHook | None = None,
        mode: Literal["direct", "meta"] = "direct",
        model_context: ModelContext | None = None,
    ) -> None:
        if mode not in ("direct", "meta"):
            raise ValueError("mode must be 'direct' or 'meta'")
        self.scope = None if scope is None else tuple(scope)
        self.mode = mode
        self._projection = DirectProjection(expose_capability, self._diagnose)
        self._confirm = confirm
        self._given_context = model_context
        self._context: ModelContext | None = None
        self._registry: AgentSurfaceRegistry | None = None
        self._consumer: Consumer | None = None
        self._unsubscribe: Callable[[], None] | None = None
        self._registered: dict[str, WebMCPTool] = {}
        self._targets: dict[str, Target] = {}
        self._meta: AgentToolset | None = None
        self._dirty = False
        self._running = False
        self._loop_task: asyncio.Future[None] | None = None
        self._stop_signal = CancelSignal()
        self.diagnostics: list[str] = []

    # ------------------------------------------------------------------ lifecycle

    @property
    def shape(self) -> str | None:
        """Which browser API is in use (``None`` before start or without WebMCP)."""
        return None if self._context is None else self._context.shape

    @property
    def tool_names(self) -> list[str]:
        return sorted(self._registered)

    @property
    def exposed_tools(self) -> list[WebMCPTool]:
        """The tools the browser currently has from this adapter, by name."""
        return [self._registered[name] for name in sorted(self._registered)]

    def wire_name_map(self) -> dict[str, str]:
        """Wire name → canonical capability id for the tools currently exposed (direct mode).
        The authoritative way back from a browser tool name; never string surgery."""
        return {name: target.capability_id for name, target in sorted(self._targets.items())}

    @property
    def consumer(self) -> Consumer | None:
        return self._consumer

    async def start(self, *, registry: AgentSurfaceRegistry, consumer: Consumer) -> None:
        """Detect the browser's model context and expose the surface. Without WebMCP: no-op."""
        if self._running:
            raise RuntimeError("this adapter is already started")
        if not isinstance(consumer, Consumer):
            raise TypeError("consumer must be a Consumer with a stable id")
        context = self._given_context if self._given_context is not None else detect_model_context()
        if context is None:
            log.info("no WebMCP model context on this page; the adapter stays idle")
            return
        self._context, self._registry, self._consumer = context, registry, consumer
        self._running = True
        self._stop_signal = CancelSignal()
        if self.mode == "meta":
            from ..toolset import AgentToolset

            self._meta = AgentToolset(
                registry, consumer=consumer, mode="meta", confirmations="wait", scope=self.scope
            )
        self._unsubscribe = registry.subscribe(self._on_event, ("surface-changed",))
        self._dirty = True
        # The first pass is the loop task too: a surface change while it awaits the browser
        # must not start a second, concurrent loop (duplicate registrations), and stop()
        # during start() must wait for it before withdrawing (no orphaned tool).
        self._loop_task = asyncio.ensure_future(self._reconcile())
        await self.settled()

    async def __aenter__(self) -> WebMCPAdapter:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Withdraw every tool this adapter exposed and release everything. Safe to repeat."""
        if not self._running:
            return
        self._running = False
        self._stop_signal.abort("adapter stopped")  # pending confirmation waits give up
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        if self._meta is not None:
            self._meta.close()
            self._meta = None
        task = self._loop_task
        if task is not None and not task.done():
            with contextlib.suppress(Exception):  # reconcile failures are already recorded
                await task
        await self._withdraw_all()
        self._targets.clear()
        context, self._context = self._context, None
        if context is not None:
            context.close()

    async def settled(self) -> None:
        """Wait until the browser reflects the latest surface (useful in tests and demos)."""
        await asyncio.sleep(0)  # the registry coalesces surface-changed to the end of this turn
        while self._loop_task is not None and not self._loop_task.done():
            await asyncio.shield(self._loop_task)

    # ------------------------------------------------------------------ reconcile

    def _on_event(self, event: SurfaceEvent) -> None:
        if event.type == "surface-changed" and self._running:
            self._dirty = True
            if self._loop_task is None or self._loop_task.done():
                self._loop_task = asyncio.ensure_future(self._reconcile())

    async def _reconcile(self) -> None:
        # One loop at a time; changes arriving meanwhile set _dirty and are picked up by the
        # next pass, so the browser converges to the latest surface with no duplicate tools.
        while self._dirty and self._running:
            self._dirty = False
            try:  # a projection that raises must not kill the loop (start() would raise too)
                await self._apply(*self._project())
            except Exception as exc:
                self._diagnose(f"reconcile failed: {exc}")

    def _project(self) -> tuple[dict[str, WebMCPTool], dict[str, Target]]:
        assert self._registry is not None and self._context is not None
        if self._meta is not None:
            return project_meta(self._meta.tools(), _meta_executor), {}
        snap = self._registry.snapshot(consumer=self._consumer, scope=self.scope, include_unavailable=False)
        return self._projection.project(snap, self._context.shape, self._executor)

    async def _apply(self, desired: dict[str, WebMCPTool], targets: dict[str, Target]) -> None:
        context = self._context
        assert context is not None
        if context.shape == "provide":
            if [t.signature for t in desired.values()] != [t.signature for t in self._registered.values()]:
                await context.provide_context(list(desired.values()))
                self._registered = dict(desired)
            self._targets = dict(targets)
            return
        current = self._registered
        stale = [n for n, t in current.items() if n not in desired or desired[n].signature != t.signature]
        for name in stale:  # withdraw first: the browser rejects a duplicate name
            try:
                await context.unregister_tool(name)
            except ModelContextError as exc:
                self._diagnose(str(exc))
            current.pop(name, None)
            self._targets.pop(name, None)
        # Tools that survive unchanged keep their registration and echo the latest version.
        # (Meta tools have no target: they resolve through the toolset on every call.)
        for name in current:
            if name in targets:
                self._targets[name] = targets[name]
        fresh = [(name, tool) for name, tool in desired.items() if name not in current]
        if not fresh or not self._running or self._dirty:
            return  # nothing to add, or a newer surface is waiting: the next pass registers against it
        # Asked for in order within one turn of the loop (each task calls registerTool as it
        # starts) and awaited together: the browser's promises settle in the same turn, so twelve
        # tools cost one round of the event loop instead of twelve (each a chance for the browser
        # to lay the page out before the next).
        outcomes = await asyncio.gather(
            *(context.register_tool(tool) for _, tool in fresh), return_exceptions=True
        )
        unexpected: BaseException | None = None
        for (name, tool), outcome in zip(fresh, outcomes, strict=True):
            if isinstance(outcome, ModelContextError):
                self._diagnose(str(outcome))
            elif isinstance(outcome, BaseException):
                unexpected = unexpected or outcome
            else:
                current[name] = tool
                if name in targets:
                    self._targets[name] = targets[name]
        if unexpected is not None:  # raised once every registration that went through is kept
            raise unexpected

    async def _withdraw_all(self) -> None:
        context = self._context
        if context is None:
            return
        try:
            if context.shape == "provide":
                if not await context.clear_context():
                    await context.provide_context([])
            else:
                for name in list(self._registered):
                    try:
                        await context.unregister_tool(name)
                    except ModelContextError as exc:
                        self._diagnose(str(exc))
        finally:
            self._registered.clear()

    def _diagnose(self, message: str) -> None:
        log.warning("webmcp: %s", message)
        self.diagnostics.append(message)
        del self.diagnostics[:-100]

    # ------------------------------------------------------------------ calls

    def _executor(self, name: str) -> ToolExecute:
        return _ToolExecutor(self, name)

    def _start_call(
        self, name: str, input: JsonValue, call: ToolCall
    ) -> InvocationResult | Awaitable[InvocationResult]:
        """The result of one browser call now, or an awaitable of it if the call must wait."""
        registry, target = self._registry, self._targets.get(name)
        if registry is None or target is None or not self._running:
            # A tool the agent kept from an older listing: answered with the version the
            # registry is at now, like every other result ("0" only before any start).
            return InvocationResult(
                "error",
                random_id("inv_", 16),
                name,
                "0" if registry is None else registry.version,
                error=error(
                    "CAPABILITY_NOT_FOUND", f"{name} is not on the current surface. List the tools again."
                ),
            )
        # No invocation id: the registry mints one for a fresh call (an id the agent never
        # supplied has nobody to join or conflict with), and a confirmed retry reuses it.
        request = Invocation(
            capability_id=target.capability_id,
            input=MISSING if input is None else input,
            instance_id=target.instance_id,
            registration_id=target.registration_id,
            surface_version=target.surface_version,
        )
        try:
            outcome = registry.start_invocation(request, consumer=self._consumer, signal=call.signal)
        except RegistryClosedError:
            return _shut_down(registry, request)
        if isinstance(outcome, InvocationResult) and outcome.code != "CONFIRMATION_REQUIRED":
            return outcome
        return self._complete(registry, request, outcome, call)

    async def _complete(
        self,
        registry: AgentSurfaceRegistry,
        request: Invocation,
        outcome: InvocationResult | Awaitable[InvocationResult],
        call: ToolCall,
    ) -> InvocationResult:
        """A call that waits: in the pipeline, or for the user's confirmation."""
        try:
            result = outcome if isinstance(outcome, InvocationResult) else await outcome
            if result.code == "CONFIRMATION_REQUIRED":
                flow = InCallConfirmation(
                    registry, self._consumer, self._stop_signal, self._confirm, self._diagnose
                )
                result = await flow.complete(request, result, call)
        except RegistryClosedError:
            result = _shut_down(registry, request)
        return result


class _ToolExecutor:
    """A projected tool's ``execute``: awaitable like any ``ToolExecute``, plus ``now`` for the
    browser layer, which answers a call that never waits without making a coroutine or a task."""

    __slots__ = ("_adapter", "_name")

    def __init__(self, adapter: WebMCPAdapter, name: str) -> None:
        self._adapter = adapter
        self._name = name

    def now(self, input: JsonValue, call: ToolCall) -> str | Awaitable[dict[str, Any]]:
        """The tool content now, as JSON text (``content_json``), or an awaitable of it (which
        must be awaited): that has not started yet, so it reads ``call`` (its client's UI, for
        a confirmation) only then."""
        outcome = self._adapter._start_call(self._name, input, call)
        return content_json(outcome) if isinstance(outcome, InvocationResult) else _content_of(outcome)

    async def __call__(self, input: JsonValue, call: ToolCall) -> dict[str, Any]:
        outcome = self._adapter._start_call(self._name, input, call)
        return content(outcome) if isinstance(outcome, InvocationResult) else await _content_of(outcome)


async def _content_of(outcome: Awaitable[InvocationResult]) -> dict[str, Any]:
    return content(await outcome)


def _shut_down(registry: AgentSurfaceRegistry, request: Invocation) -> InvocationResult:
    # The page disposed the registry under a listed tool: answer in content, never raise into
    # the browser (as the embedded toolset does).
    return InvocationResult(
        "error", random_id("inv_", 16), request.capability_id, registry.version, error=surface_shut_down()
    )


def _meta_executor(tool: AgentTool) -> ToolExecute:
    async def execute(input: JsonValue, call: ToolCall) -> dict[str, Any]:
        return content(await tool.execute(input))

    return execute
