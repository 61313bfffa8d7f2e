"""Fakes of the three WebMCP shapes, behind the adapter's ``ModelContext`` protocol.

Each fake behaves like the page API it stands for (as wrapped by ``agentsurface.browser``):

- ``AbortableModelContext``: Chromium 156 ``document.modelContext``. ``register_tool`` validates
  the name (1-128 chars of ``[A-Za-z0-9_.-]``) and refuses duplicates with ``InvalidStateError``,
  adds the tool, then yields before its promise settles (so reconciles can interleave); a tool is
  withdrawn by aborting its signal (``unregister_tool``). There is no provide/clear context.
- ``IncrementalModelContext``: the early-2026 draft as the ``@mcp-b/webmcp-polyfill`` implements
  it: synchronous ``registerTool`` (a duplicate throws ``Error("Tool already registered")``),
  ``unregisterTool`` (unknown names are ignored), ``provideContext`` and ``clearContext``.
- ``ProvideModelContext``: the draft without registerTool/unregisterTool: ``provideContext`` only,
  ``clearContext`` optional (``clear_context()`` answers False when the page has none).

Every fake counts live handles (what the browser layer would hold as JS proxies: one per
registered tool, one per tool of the provided set), records each operation and each refusal, and
exposes ``agent``: a client like the browser's testing API that lists tools and calls them.

``dispose()`` only records the call: a fake never cleans up behind the adapter's back, so a test
sees exactly what the adapter withdrew itself.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from agentsurface._core.contracts.context import CancelSignal
from agentsurface.adapters.model_context import (
    ModelContextError,
    Shape,
    ToolCall,
    UserInteraction,
    WebMCPTool,
)

WEBMCP_NAME = re.compile(r"[A-Za-z0-9_.-]{1,128}")


@dataclass(frozen=True, slots=True)
class ListedTool:
    """A tool as the browser's testing client lists it (JSON values, as they crossed to JS)."""

    name: str
    title: str
    description: str
    input_schema: dict[str, Any]
    annotations: dict[str, Any]


@dataclass(frozen=True, slots=True)
class ToolResult:
    """What ``execute`` resolved to, after the JSON round trip the browser does."""

    raw: dict[str, Any]

    @property
    def is_error(self) -> bool:
        return self.raw.get("isError") is True

    @property
    def payload(self) -> Any:
        """The JSON value in the first text block (the output, or the error object)."""
        return json.loads(self.raw["content"][0]["text"])

    @property
    def code(self) -> str | None:
        if not self.is_error:
            return None
        code = self.payload.get("code")
        assert isinstance(code, str)
        return code


class FakeClient:
    """Shape A's ``client`` argument, like the polyfill's: ``requestUserInteraction(callback)``
    runs the callback and refuses once the call that received the client has settled."""

    def __init__(self, interaction: UserInteraction | None = None) -> None:
        self.active = True
        self.prompts = 0
        self._interaction = interaction

    async def request_user_interaction(self, callback: Callable[[], Awaitable[Any]]) -> Any:
        if not self.active:
            raise RuntimeError("ModelContextClient is no longer active after execute() resolved")
        self.prompts += 1
        if self._interaction is not None:
            return await self._interaction(callback)
        return await callback()


_DEFAULT = object()


class Agent:
    """The browser agent's view of one fake: list tools, call them."""

    def __init__(self, context: FakeModelContext) -> None:
        self._context = context
        self.clients: list[FakeClient] = []

    def tools(self) -> list[ListedTool]:
        out = []
        for tool in self._context.tools.values():
            if tool.name in self._context.foreign:
                continue
            out.append(
                ListedTool(
                    tool.name,
                    tool.title,
                    tool.description,
                    json.loads(json.dumps(tool.input_schema)),
                    json.loads(json.dumps(dict(tool.annotations))),
                )
            )
        return out

    def names(self) -> set[str]:
        return {t.name for t in self.tools()}

    def tool(self, name: str) -> ListedTool:
        for tool in self.tools():
            if tool.name == name:
                return tool
        raise KeyError(f"{name!r} is not listed; listed: {sorted(self.names())}")

    def execute_of(self, name: str) -> Callable[[Any, ToolCall], Awaitable[dict[str, Any]]]:
        """The tool's ``execute`` as the page handed it over (an agent may keep it around)."""
        return self._context.tools[name].execute

    async def call(
        self,
        name: str,
        input: Any = None,
        *,
        signal: CancelSignal | None = None,
        request_user_interaction: Any = _DEFAULT,
    ) -> ToolResult:
        """Run a listed tool like ``executeTool`` does and return its JSON-round-tripped result.

        Shape B passes ``{signal}``; shape A passes a client whose ``requestUserInteraction``
        runs the callback (``request_user_interaction=None`` simulates a client without it, a
        callable replaces how the UI callback is run).
        """
        if name not in self._context.tools or name in self._context.foreign:
            raise KeyError(f"Tool not found: {name}")
        tool = self._context.tools[name]
        if self._context.shape == "abortable":
            if request_user_interaction is not _DEFAULT:
                raise TypeError("document.modelContext passes no client: there is no requestUserInteraction")
            call = ToolCall(signal=signal)
            client = None
        else:
            if signal is not None:
                raise TypeError("the draft's execute(input, client) carries no AbortSignal")
            client = FakeClient(
                None if request_user_interaction in (_DEFAULT, None) else request_user_interaction
            )
            self.clients.append(client)
            call = ToolCall(
                request_user_interaction=None
                if request_user_interaction is None
                else client.request_user_interaction,
                client=client,
            )
        self._context.executions += 1
        try:
            returned = await tool.execute(json.loads(json.dumps(input)), call)
        finally:
            if client is not None:
                client.active = False
        # executeTool resolves to the JSON string of what execute returned.
        raw = json.loads(json.dumps(returned))
        assert isinstance(raw, dict)
        return ToolResult(raw)


@dataclass
class FakeModelContext:
    """What the three fakes share: the page's tool map, handles, an operation log, refusals."""

    shape: Shape = field(init=False)
    register_yields: int = 0
    tools: dict[str, WebMCPTool] = field(default_factory=dict, init=False)
    log: list[tuple[str, str | None]] = field(default_factory=list, init=False)
    errors: list[ModelContextError] = field(default_factory=list, init=False)
    foreign: set[str] = field(default_factory=set, init=False)
    disposed: int = field(default=0, init=False)
    executions: int = field(default=0, init=False)
    used_after_dispose: list[str] = field(default_factory=list, init=False)
    _handles: int = field(default=0, init=False)
    _gate: asyncio.Event | None = field(default=None, init=False)
    suspended: int = field(default=0, init=False)

    def __post_init__(self) -> None:
        self.agent = Agent(self)

    # ---- what tests read

    @property
    def live_handles(self) -> int:
        """Proxies the browser layer would hold right now (foreign tools are not ours)."""
        return self._handles

    def count(self, operation: str, name: str | None = None) -> int:
        return sum(1 for op, n in self.log if op == operation and (name is None or n == name))

    def operations(self) -> list[tuple[str, str | None]]:
        return list(self.log)

    def reset_log(self) -> None:
        self.log.clear()

    def add_foreign_tool(self, tool: WebMCPTool) -> None:
        """A tool some other script on the page registered (not the adapter's to withdraw)."""
        self.tools[tool.name] = tool
        self.foreign.add(tool.name)

    # ---- suspension: hold() makes settling registrations wait until release()

    def hold(self) -> None:
        if self._gate is None:
            self._gate = asyncio.Event()

    def release(self) -> None:
        gate, self._gate = self._gate, None
        if gate is not None:
            gate.set()

    async def _settle(self) -> None:
        for _ in range(self.register_yields):
            await asyncio.sleep(0)
        gate = self._gate
        if gate is not None:
            self.suspended += 1
            try:
                await gate.wait()
            finally:
                self.suspended -= 1

    # ---- helpers for the subclasses

    def _refuse(self, operation: str, name: str | None, kind: str, message: str) -> ModelContextError:
        exc = ModelContextError(operation, name, kind, message)
        self.errors.append(exc)
        return exc

    def _touch(self, operation: str, name: str | None) -> None:
        self.log.append((operation, name))
        if self.disposed:
            self.used_after_dispose.append(operation)

    def _replace_all(self, tools: Sequence[WebMCPTool], operation: str) -> None:
        """provideContext: validate the whole set, then swap it in (one handle per tool)."""
        seen: set[str] = set()
        for tool in tools:
            if not tool.name or not tool.description:
                raise self._refuse(
                    operation, tool.name, "TypeError", "name and description must be non-empty"
                )
            if tool.name in seen:
                raise self._refuse(operation, tool.name, "Error", f"Tool already registered: {tool.name}")
            seen.add(tool.name)
        foreign = {n: t for n, t in self.tools.items() if n in self.foreign}
        # Like the polyfill: provideContext replaces the page's whole map, foreign tools too.
        self.foreign -= set(foreign)
        self._handles = len(tools)
        self.tools = {t.name: t for t in tools}

    async def register_tool(self, tool: WebMCPTool) -> None:
        raise NotImplementedError

    async def unregister_tool(self, name: str) -> None:
        raise NotImplementedError

    async def provide_context(self, tools: Sequence[WebMCPTool]) -> None:
        raise NotImplementedError

    async def clear_context(self) -> bool:
        self._touch("clear", None)
        self.tools.clear()
        self.foreign.clear()
        self._handles = 0
        return True

    def close(self) -> None:
        self.disposed += 1


@dataclass
class AbortableModelContext(FakeModelContext):
    """Chromium 156 ``document.modelContext``: awaited registration, abort to withdraw."""

    register_yields: int = 2

    def __post_init__(self) -> None:
        super().__post_init__()
        self.shape = "abortable"

    async def register_tool(self, tool: WebMCPTool) -> None:
        self._touch("register", tool.name)
        if WEBMCP_NAME.fullmatch(tool.name) is None:
            raise self._refuse("registerTool", tool.name, "InvalidStateError", "invalid tool name")
        if tool.name in self.tools:
            raise self._refuse("registerTool", tool.name, "InvalidStateError", "duplicate tool name")
        if not tool.description:
            raise self._refuse("registerTool", tool.name, "TypeError", "description must be non-empty")
        # The page holds the tool (and its proxy/AbortController) from the call on; the promise
        # settles a few turns of the event loop later.
        self.tools[tool.name] = tool
        self._handles += 1
        await self._settle()

    async def unregister_tool(self, name: str) -> None:
        # Aborting the tool's signal: a name the wrapper does not hold aborts nothing.
        self._touch("unregister", name)
        if name in self.tools and name not in self.foreign:
            del self.tools[name]
            self._handles -= 1

    async def provide_context(self, tools: Sequence[WebMCPTool]) -> None:
        self._touch("provide", None)
        raise self._refuse("provideContext", None, "TypeError", "document.modelContext has no provideContext")

    async def clear_context(self) -> bool:
        self._touch("clear", None)
        return False  # shape B has no clearContext


@dataclass
class IncrementalModelContext(FakeModelContext):
    """``navigator.modelContext`` with registerTool/unregisterTool (the polyfill's behaviour)."""

    def __post_init__(self) -> None:
        super().__post_init__()
        self.shape = "incremental"

    async def register_tool(self, tool: WebMCPTool) -> None:
        self._touch("register", tool.name)
        if not tool.name or not tool.description:
            raise self._refuse(
                "registerTool", tool.name, "TypeError", "name and description must be non-empty"
            )
        if tool.name in self.tools:
            raise self._refuse("registerTool", tool.name, "Error", f"Tool already registered: {tool.name}")
        self.tools[tool.name] = tool
        self._handles += 1
        await self._settle()

    async def unregister_tool(self, name: str) -> None:
        self._touch("unregister", name)
        if name in self.tools:  # the polyfill ignores unknown names
            del self.tools[name]
            if name in self.foreign:
                self.foreign.discard(name)
            else:
                self._handles -= 1

    async def provide_context(self, tools: Sequence[WebMCPTool]) -> None:
        self._touch("provide", None)
        self._replace_all(tools, "provideContext")


@dataclass
class ProvideModelContext(FakeModelContext):
    """``navigator.modelContext`` with provideContext only (``has_clear``: clearContext too)."""

    has_clear: bool = True
    provided: list[list[str]] = field(default_factory=list, init=False)

    def __post_init__(self) -> None:
        super().__post_init__()
        self.shape = "provide"

    async def register_tool(self, tool: WebMCPTool) -> None:
        self._touch("register", tool.name)
        raise self._refuse(
            "registerTool", tool.name, "TypeError", "modelContext.registerTool is not a function"
        )

    async def unregister_tool(self, name: str) -> None:
        self._touch("unregister", name)
        raise self._refuse(
            "unregisterTool", name, "TypeError", "modelContext.unregisterTool is not a function"
        )

    async def provide_context(self, tools: Sequence[WebMCPTool]) -> None:
        self._touch("provide", None)
        self._replace_all(tools, "provideContext")
        self.provided.append([t.name for t in tools])
        await self._settle()

    async def clear_context(self) -> bool:
        if not self.has_clear:
            return False  # the wrapper answers False without touching the page
        return await super().clear_context()


def make_context(shape: Shape, **options: Any) -> FakeModelContext:
    if shape == "abortable":
        return AbortableModelContext(**options)
    if shape == "incremental":
        return IncrementalModelContext(**options)
    return ProvideModelContext(**options)


SHAPES: tuple[Shape, ...] = ("abortable", "incremental", "provide")
