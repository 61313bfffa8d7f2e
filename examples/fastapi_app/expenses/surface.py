"""What the page offers the agent: the expense book on screen, and the app's routes it may call
(declared in expenses.routes, taken from the reviewed contract: the page never imports FastAPI)."""

from collections.abc import Mapping
from typing import Any

from agentsurface import AgentComponent, ProcedureContract, ProcedureReference, observation
from agentsurface.page import State


class Book(State):
    """The expenses on screen; assigning ``items`` redraws the page."""

    def __init__(self) -> None:
        self.items: list[dict[str, Any]] = []


class ExpenseBook(AgentComponent, type="expenses.book", description="The signed-in person's expense book"):
    def __init__(self, book: Book, procedures: Mapping[str, ProcedureContract]) -> None:
        self.book = book
        self.procedures = procedures

    @observation("The expenses shown on the page")
    def shown(self) -> list[dict[str, Any]]:
        return self.book.items

    def agent_procedures(self) -> list[ProcedureReference]:
        listed, add, delete = (self.procedures[f"domain:expenses.{name}"] for name in ("list", "add", "delete"))
        return [
            listed.reference(),
            add.reference(),
            delete.reference(when=lambda: bool(self.book.items), unavailable_reason="there are no expenses"),
        ]
