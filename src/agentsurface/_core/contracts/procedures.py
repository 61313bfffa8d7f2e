"""Domain procedure contracts, and their references from mounted components.

A procedure contract names an existing backend procedure (``domain:`` plane) with its server
effect and governance; a reference makes it contextually available while a component is
mounted, binding some input fields to what the user has on screen.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import field
from typing import Any

from ..errors import DefinitionError, DefinitionErrorCode
from ..ids import parse_procedure_id
from ..jsonvalue import FrozenDict, JsonValue, digest, freeze
from ..keywords import check_keywords, keywords_checked
from ..policies.base import Policy
from ..records import record
from ..schemas.schema import EMPTY_INPUT, Schema
from .bindings import check_live_options, check_policies, mint
from .fields import (
    MAX_CAPABILITY_DESCRIPTION,
    Checked,
    Concurrency,
    SchemaSource,
    checked_description,
    checked_flag,
    checked_names,
    checked_schema,
    resolved,
    settle_governance,
    with_optional_fields,
)
from .kinds import (
    CONFIRMATION_LEVELS,
    PROCEDURE_EFFECTS,
    VIEW_EFFECTS,
    AuditLevel,
    ConfirmationLevel,
    Kind,
    ProcedureEffect,
    confirmation_rank,
)


@record(eq=False, weakref=True)
class ProcedureContract:
    """A reference to an existing backend procedure (``domain:`` plane)."""

    id: str
    description: str
    effect: ProcedureEffect
    input: Checked[SchemaSource, Schema] = Checked(EMPTY_INPUT)
    output: Checked[SchemaSource, Schema | None] = Checked(None)
    idempotent: bool | None = None
    reversible: bool | None = None
    confirmation: ConfirmationLevel | None = None
    audit: AuditLevel | None = None
    meta: Mapping[str, Any] | None = None
    timeout: float | None = None
    untrusted_output: bool = False
    policies: Sequence[str] = ()
    hash: str = field(default="", init=False, compare=False)

    kind: Kind = field(default="procedure", init=False)

    def __post_init__(self) -> None:
        parse_procedure_id(self.id)
        object.__setattr__(
            self,
            "description",
            checked_description(self.description, MAX_CAPABILITY_DESCRIPTION, f"procedure {self.id!r}"),
        )
        if not isinstance(self.effect, str) or self.effect not in PROCEDURE_EFFECTS:
            code: DefinitionErrorCode = (
                "PLANE_VIOLATION" if self.effect in ("read", *VIEW_EFFECTS) else "INVALID_DEFINITION"
            )
            raise DefinitionError(
                code,
                f"procedure {self.id!r} must declare a server effect {sorted(PROCEDURE_EFFECTS)}, "
                f"got {self.effect!r}",
            )
        # Unknown fields are refused, as view inputs refuse them: a model's extra="ignore"
        # would silently drop the agent's {"amount": 3} (extra="allow" on a model keeps them).
        input_schema = checked_schema(
            EMPTY_INPUT if self.input is None else self.input, f"{self.id}.input", forbid_extra=True
        )
        if input_schema.json_schema.get("type") != "object":
            raise DefinitionError(
                "UNSUPPORTED_SCHEMA", "a procedure input schema must be an object schema", path=self.id
            )
        object.__setattr__(self, "input", input_schema)
        if self.output is not None:
            object.__setattr__(self, "output", checked_schema(self.output, f"{self.id}.output"))
        settle_governance(self)
        object.__setattr__(self, "policies", checked_names(self.policies, "policies", self.id))
        checked_flag(self.untrusted_output, "untrusted_output")
        object.__setattr__(self, "hash", digest(self.to_json()))

    def to_json(self) -> dict[str, JsonValue]:
        out: dict[str, JsonValue] = {
            "kind": "procedure",
            "id": self.id,
            "description": self.description,
            "effect": self.effect,
            "inputSchema": self.input.json_schema,
            "idempotent": self.idempotent,
            "reversible": self.reversible,
            "confirmation": self.confirmation,
            "audit": self.audit,
            "policies": list(self.policies),
        }
        return with_optional_fields(out, self.output, self.meta, self.untrusted_output)

    @keywords_checked("ProcedureContract.reference(...)")
    def reference(
        self,
        *,
        bind: Callable[[], Mapping[str, Any]] | None = None,
        bound_fields: Sequence[str] = (),
        overridable: Sequence[str] = (),
        when: Callable[[], bool] | None = None,
        unavailable_reason: str | Callable[[], str] | None = None,
        describe: Callable[[], str] | None = None,
        confirmation: ConfirmationLevel | None = None,
        policies: Sequence[Policy] = (),
        concurrency: Concurrency | None = None,
        preview: Callable[[Any], Any] | None = None,
    ) -> ProcedureReference:
        """Make this procedure contextually available from a mounted component.

        ``bind`` returns UI-derived input values (e.g. the selected ids); ``bound_fields`` names
        its keys, which are removed from the agent's schema and locked unless ``overridable``.
        ``confirmation`` may raise the contract's floor, never lower it. ``preview``
        (``effective_input -> list[Change]``, synchronous) says what an approved call will
        change, from the page's state: the dialog shows it, and the call is refused as stale
        if it differs when the person approves or just before the call leaves the page.
        """
        return _make_reference(
            self,
            bind,
            bound_fields,
            overridable,
            when,
            unavailable_reason,
            describe,
            confirmation,
            policies,
            concurrency,
            preview,
        )


@record(eq=False, weakref=True)
class ProcedureReference:
    contract: ProcedureContract
    bind: Callable[[], Mapping[str, Any]] | None
    bound_fields: tuple[str, ...]
    locked_fields: tuple[str, ...]
    agent_schema: FrozenDict  # the contract's input schema minus locked bound fields
    confirmation: ConfirmationLevel
    when: Callable[[], bool] | None = None
    unavailable_reason: str | Callable[[], str] | None = None
    describe: Callable[[], str] | None = None
    policies: tuple[Policy, ...] = ()
    concurrency: Concurrency | None = None
    preview: Callable[[Any], Any] | None = None

    @property
    def procedure_id(self) -> str:
        return self.contract.id



def _make_reference(
    contract: ProcedureContract,
    bind: Callable[[], Mapping[str, Any]] | None,
    bound_fields: Sequence[str],
    overridable: Sequence[str],
    when: Callable[[], bool] | None,
    unavailable_reason: str | Callable[[], str] | None,
    describe: Callable[[], str] | None,
    confirmation: ConfirmationLevel | None,
    policies: Sequence[Policy],
    concurrency: Concurrency | None,
    preview: Callable[[Any], Any] | None,
) -> ProcedureReference:
    schema = contract.input.json_schema
    properties = dict(schema.get("properties") or {})
    for what, value in (("bound_fields", bound_fields), ("overridable", overridable)):
        if isinstance(value, str):  # "ids" would split into 'i', 'd', 's'
            raise DefinitionError(
                "INVALID_DEFINITION", f"{what} must be a list of field names, got {value!r}", path=contract.id
            )
    fields = tuple(bound_fields)
    if fields and bind is None:
        raise DefinitionError("INVALID_DEFINITION", "bound_fields need a bind() function", path=contract.id)
    if bind is not None and not fields:
        raise DefinitionError(
            "INVALID_DEFINITION", "bind() needs bound_fields naming the keys it returns", path=contract.id
        )
    for name in (*fields, *overridable):
        if name not in properties:
            raise DefinitionError(
                "INVALID_DEFINITION", f"bound field {name!r} is not an input property", path=contract.id
            )
    if set(overridable) - set(fields):
        raise DefinitionError(
            "INVALID_DEFINITION", "overridable fields must also be bound fields", path=contract.id
        )
    locked = tuple(f for f in fields if f not in overridable)
    agent_schema = dict(schema)
    agent_schema["properties"] = {k: v for k, v in properties.items() if k not in locked}
    required = [r for r in schema.get("required", ()) if r not in fields]
    if required:
        agent_schema["required"] = required
    else:
        agent_schema.pop("required", None)
    level = resolved(contract.confirmation)
    if confirmation is not None:
        if confirmation not in CONFIRMATION_LEVELS:
            raise DefinitionError("INVALID_DEFINITION", f"confirmation must be one of {CONFIRMATION_LEVELS}")
        if confirmation_rank(confirmation) < confirmation_rank(level):
            raise DefinitionError(
                "INVALID_DEFINITION",
                f"a reference cannot lower confirmation below the contract's {contract.confirmation!r}",
                path=contract.id,
            )
        level = confirmation
    ref = ProcedureReference(
        contract=contract,
        bind=bind,
        bound_fields=fields,
        locked_fields=locked,
        agent_schema=freeze(agent_schema),
        confirmation=level,
        when=when,
        unavailable_reason=unavailable_reason,
        describe=describe,
        policies=check_policies(policies, contract.id),
        concurrency=concurrency,
        preview=preview,
    )
    check_live_options(
        contract.id,
        ref.unavailable_reason,
        ref.policies,
        when=ref.when,
        bind=ref.bind,
        describe=ref.describe,
        preview=ref.preview,
    )
    if concurrency is not None and not isinstance(concurrency, Concurrency):
        raise DefinitionError("INVALID_DEFINITION", "concurrency must be a Concurrency", path=contract.id)
    mint(ref)
    return ref



# A function decorated as a procedure by a framework integration (agentsurface.fastapi,
# agentsurface.django) carries its declaration under this attribute: an object whose
# ``contract`` is the ProcedureContract. The compiler finds such a contract through the
# top-level function that declares it.
ROUTE_MARKER = "__agentsurface_procedure__"


def route_contract(obj: object) -> ProcedureContract | None:
    """The procedure contract a framework route declares, if ``obj`` is such a function."""
    if not callable(obj):
        return None
    contract = getattr(getattr(obj, ROUTE_MARKER, None), "contract", None)
    return contract if isinstance(contract, ProcedureContract) else None

# A keyword typo names the keyword it meant (a dataclass __init__ says only "unexpected").
check_keywords(ProcedureContract)
