"""Do the page's procedure contracts agree with what the backend serves?

The backend manifest is the exposure ceiling: a procedure the backend does not serve is not
exposed, and one it serves with another effect or schema is a deployment skew the page must not
paper over. Each disagreement says which procedure and what differs, in words a developer can
act on.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Literal

from .. import AuthorityError, ProcedureContract
from .._core.records import record
from .wire import ServedProcedureInfo, schema_hash

Problem = Literal["not-served", "effect", "input-schema", "output-schema"]


@record
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
    output = None if contract.output is None else contract.output.json_schema
    return compare_declared(contract.id, contract.effect, contract.input.json_schema, output, served)


def compare_declared(
    procedure_id: str,
    effect: str,
    input_schema: Mapping[str, Any],
    output_schema: Mapping[str, Any] | None,
    served: Mapping[str, ServedProcedureInfo],
) -> list[ContractDisagreement]:
    """:func:`compare` for a procedure as a manifest entry declares it (its JSON)."""
    info = served.get(procedure_id)
    if info is None:
        return [ContractDisagreement(procedure_id, "not-served")]
    out: list[ContractDisagreement] = []
    if effect != info.effect:
        out.append(ContractDisagreement(procedure_id, "effect", effect, info.effect))
    page_input = schema_hash(input_schema)
    if page_input != info.input_schema_hash:
        out.append(ContractDisagreement(procedure_id, "input-schema", page_input, info.input_schema_hash))
    page_output = None if output_schema is None else schema_hash(output_schema)
    if page_output != info.output_schema_hash:
        out.append(ContractDisagreement(procedure_id, "output-schema", page_output, info.output_schema_hash))
    return out


def manifest_disagreements(
    manifest: Mapping[str, Any], served: Mapping[str, ServedProcedureInfo]
) -> list[ContractDisagreement]:
    """Every way the procedures of a contract manifest disagree with the backend's."""
    out: list[ContractDisagreement] = []
    for entry in manifest.get("contracts") or ():
        body = entry.get("contract") if isinstance(entry, Mapping) else None
        if not isinstance(body, Mapping) or body.get("kind") != "procedure":
            continue
        output = body.get("outputSchema")
        out.extend(
            compare_declared(
                str(body.get("id")),
                str(body.get("effect")),
                body.get("inputSchema") or {},
                output if isinstance(output, Mapping) else None,
                served,
            )
        )
    return out


def procedure_contracts(items: Iterable[Any]) -> list[ProcedureContract]:
    """The procedure contracts among ``items`` (contracts or component classes)."""
    out: list[ProcedureContract] = []
    for item in items:
        contract = getattr(item, "contract", item)
        if isinstance(contract, ProcedureContract):
            out.append(contract)
    return out
