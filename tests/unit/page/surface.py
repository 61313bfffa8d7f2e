"""A small surface for the page layer's tests: a board whose ``undo`` is available while the
app's state says so, and whose export procedure carries a live note."""

from __future__ import annotations

from agentsurface import (
    AgentComponent,
    AgentSurfaceRegistry,
    CapabilityAuthority,
    ProcedureContract,
    action,
    compile_manifest,
    observation,
)
from agentsurface.page import State

EXPORT = ProcedureContract(id="domain:board.export", effect="server-query", description="Export the board")


class BoardState(State):
    def __init__(self) -> None:
        self.strokes: list[str] = []
        self.format = "svg"


class Board(AgentComponent, type="board.canvas", description="A drawing board"):
    def __init__(self, state: BoardState) -> None:
        self.state = state

    @observation("The strokes drawn")
    def strokes(self) -> list[str]:
        return list(self.state.strokes)

    @action("Draw a stroke")
    def draw(self, label: str) -> int:
        self.state.strokes = [*self.state.strokes, label]
        return len(self.state.strokes)

    @action("Undo the last stroke")
    def undo(self) -> int:
        self.state.strokes = self.state.strokes[:-1]
        return len(self.state.strokes)

    @undo.when
    def can_undo(self) -> bool:
        return bool(self.state.strokes)

    def agent_procedures(self) -> list[object]:
        return [EXPORT.reference(describe=lambda: f"exports as {self.state.format}")]


def export(procedure_id: str, value: object, context: object) -> dict[str, str]:
    return {"exported": procedure_id}


def make_registry() -> AgentSurfaceRegistry:
    registry = AgentSurfaceRegistry(authority=CapabilityAuthority.from_manifest(compile_manifest([Board, EXPORT])), procedure_executor=export)
    return registry
