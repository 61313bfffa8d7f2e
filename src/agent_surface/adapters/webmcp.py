"""The WebMCP adapter: the registry's surface as browser tools, one per available capability.

It reconciles on every surface change (touching only added, removed or changed tools where the
browser allows it), routes every call through ``registry.invoke``, completes confirmations within
the call, and withdraws everything on ``stop()``. Nothing here imports ``js``: the browser shapes
are wrapped by ``agent_surface.browser`` behind the ``ModelContext`` protocol.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

from ..catalog import CatalogEntry, Descriptor, Target, catalog_entries
from ..core.confirmation import PendingConfirmation
from ..core.consumer import Consumer
from ..core.context import CancelSignal
from ..core.errors import DefinitionError, RegistryDisposedError, error, surface_shut_down
from ..core.invocation import MISSING, Invocation, InvocationResult
from ..core.jsonvalue import JsonValue, canonical_json, thaw
from ..core.kinds import READ_ONLY_EFFECTS
from ..core.registry import AgentSurfaceRegistry, random_id
from ..core.schema import inline_refs
from ..core.snapshot import ProcedureDescriptor
from ..wire_names import assign_wire_names
from .model_context import ModelContext, ModelContextError, ToolCall, WebMcpTool

log = logging.getLogger("agent_surface.webmcp")

# ``False`` skips the capability, a mapping rewords it (``{"description": ...}``), and ``None`` or
# ``True`` keep it as authored: a hook that forgets to return must not hide the whole surface.
Curation = Callable[[Descriptor], Mapping[str, str] | bool | None]
ConfirmHook = Callable[[PendingConfirmation, Any], Any]


def content(result: InvocationResult) -> dict[str, Any]:
    """Tool content for a result: capability errors ride in content with code/retry/details."""
    if result.ok:
        return {"content": [{"type": "text", "text": canonical_json(result.output)}]}
    assert result.error is not None
    return {"content": [{"type": "text", "text": canonical_json(result.error.to_json())}], "isError": True}


def annotations_for(descriptor: Descriptor, shape: str) -> dict[str, bool]:
    """Derived from the contract only (kind, effect, confirmation, declared untrusted output)."""
    read_only = descriptor.kind == "observation" or descriptor.effect in READ_ONLY_EFFECTS
    out: dict[str, bool] = {"readOnlyHint": read_only}
    if shape != "abortable":  # the draft's tool shape knows readOnlyHint only
        return out if read_only else {}
    if descriptor.effect in ("destructive", "external-side-effect") or descriptor.confirmation == "required":
        out["consequentialHint"] = True
    if descriptor.untrusted_output:
        out["untrustedContentHint"] = True
    return out


_WORD = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")


def title_for(descriptor: Descriptor, component_type: str | None, instance_id: str | None) -> str:
    """A human title from the capability: ``selectRows`` on devices.table → 'Select rows (devices table)'."""
    if isinstance(descriptor, ProcedureDescriptor):
        path = descriptor.procedure_id.split(":", 1)[1]
        *scope, name = path.split(".")
        where = " ".join(scope)
    else:
        name = descriptor.name
        where = (component_type or "").replace(".", " ")
    words = _WORD.findall(name) or [name]
    label = " ".join(w.lower() for w in words).capitalize()
    suffix = f" ({where}{' @ ' + instance_id if instance_id else ''})" if where else ""
    return (label + suffix)[:128]


class WebMcpAdapter:
    """Create with ``create_webmcp_adapter``; ``await start(registry=..., consumer=...)``."""

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
        self._curate = expose_capability
        self._confirm = confirm
        self._given_context = model_context
        self._context: ModelContext | None = None
        self._registry: AgentSurfaceRegistry | None = None
        self._consumer: Consumer | None = None
        self._unsubscribe: Callable[[], None] | None = None
        self._registered: dict[str, WebMcpTool] = {}
        self._targets: dict[str, Target] = {}
        self._meta: Any = None
        self._pending_targets: dict[str, Target] = {}
        self._dirty = False
        self._running = False
        self._loop_task: asyncio.Future[None] | None = None
        self._stop_signal = CancelSignal()
        self.diagnostics: list[str] = []
        self._schema_warned: set[str] = set()
        # Wire schemas by (registration, capability): structure is frozen per registration, so a
        # surface change need not inline every tool's schema again.
        self._wire_schemas: dict[tuple[str | None, str], dict[str, Any]] = {}

    # ------------------------------------------------------------------ lifecycle

    @property
    def shape(self) -> str | None:
        """Which browser API is in use (``None`` before start or without WebMCP)."""
        return None if self._context is None else self._context.shape

    @property
    def tool_names(self) -> list[str]:
        return sorted(self._registered)

    @property
    def exposed_tools(self) -> list[WebMcpTool]:
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
        context = self._given_context if self._given_context is not None else _detect()
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
        self._unsubscribe = registry.subscribe(self._on_event)
        self._dirty = True
        # The first pass is the loop task too: a surface change while it awaits the browser
        # must not start a second, concurrent loop (duplicate registrations), and stop()
        # during start() must wait for it before withdrawing (no orphaned tool).
        self._loop_task = asyncio.ensure_future(self._reconcile())
        await self.settled()

    async def stop(self) -> None:
        """Withdraw every tool this adapter exposed and release everything. Safe to repeat."""
        if not self._running:
            return
        self._running = False
        self._stop_signal.abort("adapter stopped")  # pending confirmation waits give up
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        if self._meta is not None:
            self._meta.dispose()
            self._meta = None
        task = self._loop_task
        if task is not None and not task.done():
            with contextlib.suppress(Exception):  # reconcile failures are already recorded
                await task
        await self._withdraw_all()
        self._targets.clear()
        context, self._context = self._context, None
        if context is not None:
            context.dispose()

    async def settled(self) -> None:
        """Wait until the browser reflects the latest surface (useful in tests and demos)."""
        await asyncio.sleep(0)  # the registry coalesces surface-changed to the end of this turn
        while self._loop_task is not None and not self._loop_task.done():
            await asyncio.shield(self._loop_task)

    # ------------------------------------------------------------------ reconcile

    def _on_event(self, event: Any) -> None:
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
                await self._apply(self._project())
            except Exception as exc:
                self._diagnose(f"reconcile failed: {exc}")

    def _project(self) -> dict[str, WebMcpTool]:
        assert self._registry is not None and self._context is not None
        if self._meta is not None:
            return self._project_meta()
        snap = self._registry.snapshot(consumer=self._consumer, scope=self.scope, include_unavailable=False)
        shape = self._context.shape
        kept: list[tuple[CatalogEntry, str]] = []
        for entry in catalog_entries(snap):
            text = self._curated(entry.descriptor)
            if text is not None:
                kept.append((entry, text))
        names = assign_wire_names(entry.wire for entry, _ in kept).names
        desired: dict[str, WebMcpTool] = {}
        schemas: dict[tuple[str | None, str], dict[str, Any]] = {}
        self._pending_targets = {}
        for (entry, text), name in zip(kept, names, strict=True):
            descriptor, target = entry.descriptor, entry.target
            description = f"{entry.prefix} {text}"
            key = (target.registration_id, descriptor.capability_id)
            wire_schema = schemas[key] = self._wire_schemas.get(key) or self._wire_schema(
                descriptor.capability_id, entry.input_schema
            )
            notes = annotations_for(descriptor, shape)
            title = title_for(descriptor, entry.component_type, entry.wire.qualifier)
            signature = canonical_json([name, title, description, wire_schema, notes, target.registration_id])
            desired[name] = WebMcpTool(
                name, title, description, wire_schema, notes, self._executor(name), signature
            )
            self._pending_targets[name] = target
        self._wire_schemas = schemas  # only what the current surface uses
        return desired

    def _wire_schema(self, capability_id: str, schema: Mapping[str, Any]) -> dict[str, Any]:
        try:
            return inline_refs(thaw(schema))
        except DefinitionError as exc:
            # A recursive schema cannot be inlined: expose it as authored rather than failing
            # the whole projection (and every other tool with it); say so once.
            if capability_id not in self._schema_warned:
                self._schema_warned.add(capability_id)
                self._diagnose(f"{capability_id}: {exc.message}; its input schema keeps $ref")
            return dict(thaw(schema))

    def _project_meta(self) -> dict[str, WebMcpTool]:
        out: dict[str, WebMcpTool] = {}
        self._pending_targets = {}
        for tool in self._meta.tools():
            notes = {"readOnlyHint": tool.name != "surface_act"}
            signature = canonical_json([tool.name, tool.description, thaw(tool.input_schema), notes])
            out[tool.name] = WebMcpTool(
                tool.name,
                tool.name.replace("_", " ").capitalize(),
                tool.description,
                thaw(tool.input_schema),
                notes,
                self._meta_executor(tool),
                signature,
            )
        return out

    def _curated(self, descriptor: Descriptor) -> str | None:
        """The authored text to expose, or None to skip. Curation never touches execution or
        annotations."""
        if self._curate is None:
            return descriptor.description
        try:
            verdict = self._curate(descriptor)
        except Exception as exc:
            self._diagnose(f"expose_capability raised for {descriptor.capability_id}: {exc}; skipping it")
            return None
        if verdict is False:
            return None
        if verdict is None or verdict is True:
            return descriptor.description
        if not isinstance(verdict, Mapping):
            self._diagnose(
                f"expose_capability returned {type(verdict).__name__} for {descriptor.capability_id}; "
                "expected False (skip), a mapping (reword) or None/True (keep); keeping it as authored"
            )
            return descriptor.description
        text = verdict.get("description")
        return text if isinstance(text, str) and text else descriptor.description

    async def _apply(self, desired: dict[str, WebMcpTool]) -> None:
        context = self._context
        assert context is not None
        targets = self._pending_targets
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
        for name, tool in desired.items():
            if name in current:
                continue
            if not self._running or self._dirty:
                return  # a newer surface is waiting: the next pass registers against it
            try:
                await context.register_tool(tool)
            except ModelContextError as exc:
                self._diagnose(str(exc))
                continue
            current[name] = tool
            if name in targets:
                self._targets[name] = targets[name]

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

    def _executor(self, name: str) -> Callable[[JsonValue, ToolCall], Any]:
        async def execute(input: JsonValue, call: ToolCall) -> dict[str, Any]:
            return await self._execute(name, input, call)

        return execute

    def _meta_executor(self, tool: Any) -> Callable[[JsonValue, ToolCall], Any]:
        async def execute(input: JsonValue, call: ToolCall) -> dict[str, Any]:
            return content(await tool.execute(input))

        return execute

    async def _execute(self, name: str, input: JsonValue, call: ToolCall) -> dict[str, Any]:
        return content(await self._run(name, input, call))

    async def _run(self, name: str, input: JsonValue, call: ToolCall) -> InvocationResult:
        """The full result of one browser call (its tool content drops the envelope)."""
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
        request = Invocation(
            capability_id=target.capability_id,
            input=MISSING if input is None else input,
            invocation_id=random_id("inv_", 16),
            instance_id=target.instance_id,
            registration_id=target.registration_id,
            surface_version=target.surface_version,
        )
        try:
            result = await registry.invoke(request, consumer=self._consumer, signal=call.signal)
            if result.code == "CONFIRMATION_REQUIRED":
                result = await self._complete_confirmation(registry, request, result, call)
        except RegistryDisposedError:
            # The page disposed the registry under a listed tool: answer in content, never raise
            # into the browser (as the embedded toolset does).
            result = InvocationResult(
                "error",
                request.invocation_id or "",
                request.capability_id,
                registry.version,
                error=surface_shut_down(),
            )
        return result

    async def _complete_confirmation(
        self, registry: AgentSurfaceRegistry, request: Invocation, first: InvocationResult, call: ToolCall
    ) -> InvocationResult:
        assert first.error is not None and first.error.details is not None
        cid = first.error.details.get("confirmationId")
        if not isinstance(cid, str):
            return first
        confirmations = registry.confirmations
        # The wait ends when the user decides, when the adapter stops, or when the browser
        # cancels the call (shape B's signal): a cancelled call must not hang until the TTL.
        give_up = CancelSignal()
        removers = [self._stop_signal.add_listener(give_up.abort)]
        if call.signal is not None:
            removers.append(call.signal.add_listener(give_up.abort))
        try:
            if self._confirm is not None and call.request_user_interaction is not None:
                pending = confirmations.get(cid)
                if pending is not None:
                    await self._prompt(cid, pending, call, give_up)
            if not give_up.aborted:
                try:
                    await confirmations.wait_for(cid, signal=give_up)
                except asyncio.CancelledError:
                    if not give_up.aborted:
                        raise
        finally:
            for remove in removers:
                remove()
        if self._stop_signal.aborted:
            return first  # stop() while waiting: nothing executes
        if give_up.aborted:
            return InvocationResult(
                "error",
                first.invocation_id,
                request.capability_id,
                registry.version,
                error=error("CANCELLED", "The invocation was cancelled.", "yes"),
            )
        retry = Invocation(
            request.capability_id,
            request.input,
            request.invocation_id,
            request.instance_id,
            request.registration_id,
            None,
            request.surface_version,
            cid,
        )
        return await registry.invoke(retry, consumer=self._consumer, signal=call.signal)

    async def _prompt(
        self, cid: str, pending: PendingConfirmation, call: ToolCall, give_up: CancelSignal
    ) -> None:
        """Run the host's confirm UI through requestUserInteraction; on failure fall back to waiting."""
        assert (
            self._confirm is not None
            and call.request_user_interaction is not None
            and self._registry is not None
        )
        confirm = self._confirm
        hook_tasks: list[asyncio.Future[Any]] = []

        async def ui() -> Any:
            answer = confirm(pending, call.client)
            if not inspect.isawaitable(answer):
                return answer
            # Its own task: in the browser the client calls ui() from JS, so cancelling the
            # prompt below would not reach the host's dialog; cancelling this task does.
            task = asyncio.ensure_future(answer)
            hook_tasks.append(task)
            return await task

        prompt = asyncio.ensure_future(call.request_user_interaction(ui))
        gave_up = asyncio.ensure_future(give_up.wait())
        # The host's own confirmation UI (or the TTL) may settle the record while the prompt is
        # open: then the call proceeds on that outcome instead of waiting for the prompt.
        settled = asyncio.ensure_future(self._registry.confirmations.wait_for(cid))
        try:
            await asyncio.wait({prompt, gave_up, settled}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            gave_up.cancel()
            if not settled.done():
                settled.cancel()
            if not prompt.done():
                # Stopped, cancelled or decided elsewhere with the dialog open: its late answer
                # must not count, and the host's dialog is told to close (cancelled).
                prompt.add_done_callback(_ignore_outcome)
                prompt.cancel()
            for task in hook_tasks:
                if not task.done():
                    task.add_done_callback(_ignore_outcome)
                    task.cancel()
        if not prompt.done() or prompt.cancelled():
            return  # cancelled above (a task is only marked cancelled once it has run again)
        try:
            answer = prompt.result()
        except Exception as exc:
            self._diagnose(f"confirm hook failed ({exc}); waiting for the host's confirmation UI")
            return
        if not give_up.aborted:  # an answer racing stop()/cancel does not count either
            self._registry.confirmations.resolve(cid, approved=bool(answer))


def _ignore_outcome(task: asyncio.Future[Any]) -> None:
    if not task.cancelled():
        task.exception()  # retrieved, so asyncio does not log it as never retrieved


def _detect() -> ModelContext | None:
    if sys.platform != "emscripten":
        return None  # CPython: no browser, nothing to expose to
    from ..browser.model_context import detect_model_context

    return detect_model_context()


def create_webmcp_adapter(
    *,
    scope: Sequence[str] | None = None,
    expose_capability: Curation | None = None,
    confirm: ConfirmHook | None = None,
    mode: Literal["direct", "meta"] = "direct",
    model_context: ModelContext | None = None,
) -> WebMcpAdapter:
    """The WebMCP adapter. ``scope`` limits exposure (the browser agent is the least-trusted
    consumer); ``expose_capability(descriptor)`` returns False to skip a capability,
    ``{"description": ...}`` to reword it, or None/True to keep it as authored; ``confirm(pending, client)`` opts into prompting
    through ``requestUserInteraction``. ``model_context`` is a test seam."""
    return WebMcpAdapter(
        scope=scope,
        expose_capability=expose_capability,
        confirm=confirm,
        mode=mode,
        model_context=model_context,
    )
