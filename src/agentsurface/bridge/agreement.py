"""Do the page's procedure contracts agree with what the backend serves?

The backend manifest is the exposure ceiling: a procedure the backend does not serve is not
exposed, and one it serves with another effect or schema is a deployment skew the page must not
paper over. Each disagreement says which procedure and what differs, in words a developer can
act on.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from .. import AuthorityError, ProcedureContract
from .wire import ServedProcedureInfo, schema_hash

Problem = Literal["not-served", "effect", "input-schema", "output-schema"]


@dataclass(frozen=True, slots=True)
class ContractDisagreement:
    procedure_id: str
    problem: Problem
    page: str | None = None
    server: str | None = None

    def __str__(self) -> str:
        pid = self.procedure_id
        if self.problem == "not-served":
            return f"{pid} is not served by the backend (absent from its manifest), so it is not exposed"
        if self.problem == "effect":
            return f"{pid}: the page declares effect {self.page!r} but the backend serves it as {self.server!r}"
        which = "input" if self.problem == "input-schema" else "output"
        return (
            f"{pid}: the {which} schema differs between the page ({_short(self.page)}) and the backend "
            f"({_short(self.server)}); deploy the same contract module on both sides"
        )


def _short(value: str | None) -> str:
    return "none" if value is None else value[:19] + "…"


class BackendContractError(AuthorityError):
    """The page's contracts disagree with the backend it would call."""

    def __init__(self, disagreements: Iterable[ContractDisagreement], backend: str) -> None:
        self.disagreements = tuple(disagreements)
        listed = "; ".join(str(d) for d in self.disagreements)
        super().__init__(f"procedure contracts disagree with the backend at {backend}: {listed}")


def compare(contract: ProcedureContract, served: Mapping[str, ServedProcedureInfo]) -> list[ContractDisagreement]:
    """Every way ``contract`` disagrees with the backend manifest ``served`` (empty: agreement)."""
    info = served.get(contract.id)
    if info is None:
        return [ContractDisagreement(contract.id, "not-served")]
    out: list[ContractDisagreement] = []
    if contract.effect != info.effect:
        out.append(ContractDisagreement(contract.id, "effect", contract.effect, info.effect))
    page_input = schema_hash(contract.input.json_schema)
    if page_input != info.input_schema_hash:
        out.append(ContractDisagreement(contract.id, "input-schema", page_input, info.input_schema_hash))
    page_output = None if contract.output is None else schema_hash(contract.output.json_schema)
    if page_output != info.output_schema_hash:
        out.append(ContractDisagreement(contract.id, "output-schema", page_output, info.output_schema_hash))
    return out


def procedure_contracts(items: Iterable[Any]) -> list[ProcedureContract]:
    """The procedure contracts among ``items`` (contracts or component classes)."""
    out: list[ProcedureContract] = []
    for item in items:
        contract = getattr(item, "contract", item)
        if isinstance(contract, ProcedureContract):
            out.append(contract)
    return out
