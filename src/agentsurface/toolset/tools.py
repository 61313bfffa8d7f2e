"""The toolset's tool types: a provider tool (stable definition plus live state) and the
context block that renders live state apart from the cached definitions."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import field
from typing import Any

from .._core.jsonvalue import FrozenDict, JsonValue
from .._core.pipeline.invocation import MISSING, InvocationResult
from .._core.records import record

# ``execute(input, *, tool_call_id=None, confirmation_id=None)``: what runs a tool's call.
Executor = Callable[..., Awaitable[InvocationResult]]


@record
class ToolState:
    """Live, volatile state: render it outside the tool block."""

    available: bool
    unavailable_reason: str | None = None
    note: str | None = None

    def to_json(self) -> dict[str, JsonValue]:
        out: dict[str, JsonValue] = {"available": self.available}
        if self.unavailable_reason is not None:
            out["unavailableReason"] = self.unavailable_reason
        if self.note is not None:
            out["note"] = self.note
        return out


@record(hot=True, eq=False)  # a toolset builds one per tool on every catalog change
class AgentTool:
    """One provider tool. ``description`` holds no live state."""

    name: str
    description: str
    input_schema: FrozenDict
    state: ToolState
    kind: str
    capability_id: str | None
    _execute: Executor = field(repr=False)

    async def execute(
        self, input: Any = MISSING, *, tool_call_id: str | None = None, confirmation_id: str | None = None
    ) -> InvocationResult:
        """Run the call; ``tool_call_id`` becomes the invocation id (safe transport retries)."""
        return await self._execute(input, tool_call_id=tool_call_id, confirmation_id=confirmation_id)

    def definition(self) -> dict[str, JsonValue]:
        """The stable provider definition: name, description, input schema."""
        return {"name": self.name, "description": self.description, "inputSchema": self.input_schema}


def capability_state(tools: Sequence[AgentTool]) -> str:
    """A trailing context block listing unavailable tools and live notes ('' when none)."""
    lines = []
    for tool in tools:
        parts = []
        if not tool.state.available:
            parts.append(f"unavailable: {tool.state.unavailable_reason or 'not right now'}")
        if tool.state.note:
            parts.append(tool.state.note)
        if parts:
            lines.append(f"- {tool.name}: {' · '.join(parts)}")
    return "Current capability state:\n" + "\n".join(lines) if lines else ""
