"""The page side of the devices app: a component that references the shared contracts."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from agentsurface import (
    AgentComponent,
    ProcedureContract,
    ProcedureReference,
    observation,
    require_confirmation,
)
from tests._shared.server.domain import DISABLE, NOTE, QUERY, RENAME


class DevicesPage(AgentComponent, type="devices.page", description="The devices list and its selection."):
    def __init__(
        self, selected: list[str], *, confirm_disable: bool = True, preview: Callable[[Any], Any] | None = None
    ) -> None:
        self.selected = selected
        self.confirm_disable = confirm_disable
        self.preview = preview

    @observation("Ids of the selected devices")
    def selection(self) -> list[str]:
        return list(self.selected)

    def agent_procedures(self) -> list[ProcedureReference]:
        policies = [require_confirmation()] if self.confirm_disable else []
        return [
            DISABLE.reference(
                bind=lambda: {"deviceIds": list(self.selected)},
                bound_fields=["deviceIds"],
                policies=policies,
                preview=self.preview,
            ),
            RENAME.reference(),
            NOTE.reference(),
        ]


class SearchBox(AgentComponent, type="devices.search", description="Search over all devices."):
    @observation("Always empty")
    def text(self) -> str:
        return ""

    def agent_procedures(self) -> list[ProcedureReference]:
        return [QUERY.reference()]


PAGE_CONTRACTS: list[Any] = [DevicesPage, SearchBox, DISABLE, RENAME, NOTE, QUERY]


def variant(contract: ProcedureContract, **changes: Any) -> ProcedureContract:
    """The same procedure as another deployment might declare it."""
    fields: dict[str, Any] = {
        "id": contract.id,
        "description": contract.description,
        "effect": contract.effect,
        "input": dict(contract.input.json_schema),
        "output": None if contract.output is None else dict(contract.output.json_schema),
    }
    return ProcedureContract(**{**fields, **changes})
