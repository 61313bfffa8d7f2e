"""View contracts and their bindings: observations, actions, and the component type holding them.

A component contract is what the manifest hashes for a component type; ``bind()`` attaches an
instance's live handlers to it (checked: every declared capability, nothing else).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import field
from typing import Any

from ..errors import DefinitionError
from ..ids import (
    DEFAULT_INSTANCE_ID,
    format_capability_id,
    validate_capability_name,
    validate_component_type,
    validate_instance_id,
)
from ..jsonvalue import FrozenDict, JsonValue, digest
from ..keywords import check_keywords
from ..policies.base import Policy
from ..records import derived, record
from ..schemas.schema import EMPTY_INPUT, Schema
from .bindings import (
    ActionBinding,
    Handler,
    ObservationBinding,
    check_live_options,
    check_policies,
    is_minted,
    mint,
)
from .fields import (
    DEFAULT_CONCURRENCY,
    MAX_CAPABILITY_DESCRIPTION,
    MAX_COMPONENT_DESCRIPTION,
    Checked,
    Concurrency,
    SchemaSource,
    check_view_effect,
    checked_description,
    checked_flag,
    checked_meta,
    checked_names,
    checked_schema,
    checked_timeout,
    frozen_meta,
    settle_governance,
    with_optional_fields,
)
from .kinds import AuditLevel, ConfirmationLevel, Effect, Kind, ViewEffect
from .procedures import ProcedureReference


@record
class ObservationContract:
    """Reads semantic state. Output schema required; effect ``read``; never confirmed."""

    description: str
    output: Checked[SchemaSource, Schema] = Checked()
    meta: Mapping[str, Any] | None = None
    timeout: float | None = None
    untrusted_output: bool = False

    kind: Kind = field(default="observation", init=False)
    effect: Effect = field(default="read", init=False)

    def __post_init__(self) -> None:
        object.__setattr__(
            self, "description", checked_description(self.description, MAX_CAPABILITY_DESCRIPTION, "observation")
        )
        if self.output is None:  # before __post_init__ it holds the source given
            raise DefinitionError("INVALID_DEFINITION", "an observation needs an output schema")
        object.__setattr__(self, "output", checked_schema(self.output, "output"))
        object.__setattr__(self, "meta", checked_meta(self.meta))
        object.__setattr__(self, "timeout", checked_timeout(self.timeout))
        checked_flag(self.untrusted_output, "untrusted_output")

    @property
    def idempotent(self) -> bool:
        return True

    @property
    def confirmation(self) -> ConfirmationLevel:
        return "never"

    @property
    def audit(self) -> AuditLevel:
        return "none"

    def to_json(self) -> dict[str, JsonValue]:
        out: dict[str, JsonValue] = {
            "kind": "observation",
            "description": self.description,
        }
        return with_optional_fields(out, self.output, self.meta, self.untrusted_output)


@record
class ActionContract:
    """Changes presentation state: effect ``local-state`` or ``navigation``."""

    description: str
    effect: ViewEffect = "local-state"
    input: Checked[SchemaSource, Schema] = Checked(EMPTY_INPUT)
    output: Checked[SchemaSource, Schema | None] = Checked(None)
    idempotent: bool | None = None
    reversible: bool | None = None
    confirmation: ConfirmationLevel | None = None
    audit: AuditLevel | None = None
    meta: Mapping[str, Any] | None = None
    timeout: float | None = None
    concurrency: Checked[Concurrency | None, Concurrency] = Checked(DEFAULT_CONCURRENCY)
    untrusted_output: bool = False

    kind: Kind = field(default="action", init=False)

    def __post_init__(self) -> None:
        object.__setattr__(
            self, "description", checked_description(self.description, MAX_CAPABILITY_DESCRIPTION, "action")
        )
        check_view_effect(self.effect, "a view action")
        object.__setattr__(
            self, "input", checked_schema(EMPTY_INPUT if self.input is None else self.input, "input")
        )
        if self.output is not None:
            object.__setattr__(self, "output", checked_schema(self.output, "output"))
        settle_governance(self)
        if self.concurrency is None:  # None: the default, as for input and output
            object.__setattr__(self, "concurrency", DEFAULT_CONCURRENCY)
        elif not isinstance(self.concurrency, Concurrency):
            raise DefinitionError("INVALID_DEFINITION", "concurrency must be a Concurrency")
        checked_flag(self.untrusted_output, "untrusted_output")

    def to_json(self) -> dict[str, JsonValue]:
        out: dict[str, JsonValue] = {
            "kind": "action",
            "description": self.description,
            "effect": self.effect,
            "inputSchema": self.input.json_schema,
            "idempotent": self.idempotent,
            "reversible": self.reversible,
            "confirmation": self.confirmation,
            "audit": self.audit,
            "concurrency": self.concurrency.to_json(),
        }
        return with_optional_fields(out, self.output, self.meta, self.untrusted_output)


@record(eq=False, weakref=True)
class ComponentContract:
    """A component type's static contract: what an instance of it may expose."""

    type: str
    description: str
    observations: Mapping[str, ObservationContract] = field(default_factory=dict)
    actions: Mapping[str, ActionContract] = field(default_factory=dict)
    meta: Mapping[str, Any] | None = None
    origin: str = "first-party"
    priority: int = 0
    tags: Sequence[str] = ()
    policies: Sequence[str] = ()
    hash: str = field(default="", init=False, compare=False)
    capability_ids: Mapping[str, str] = field(default_factory=dict, init=False, compare=False, repr=False)
    # The same ids as a set: what a registration of this type holds when it references no
    # procedure (made once here, not per mount).
    capability_id_set: frozenset[str] = field(default=frozenset(), init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        validate_component_type(self.type)
        object.__setattr__(
            self,
            "description",
            checked_description(self.description, MAX_COMPONENT_DESCRIPTION, f"component {self.type!r}"),
        )
        seen: set[str] = set()
        for group, expected in (("observations", ObservationContract), ("actions", ActionContract)):
            given = getattr(self, group)
            if type(given) is not dict and not isinstance(given, Mapping):  # a dict skips the ABC check
                raise DefinitionError(
                    "INVALID_DEFINITION",
                    f"{group} must be a mapping of capability name to {expected.__name__}, "
                    f"got {type(given).__name__}",
                    path=self.type,
                )
            members = dict(given)
            for name, member in members.items():
                try:
                    validate_capability_name(name)
                    # The whole id has the 128-char cap too, not only each part.
                    format_capability_id("view", self.type, name)
                except DefinitionError as exc:
                    raise exc.at(f"{self.type}.{group}") from None
                if not isinstance(member, expected):
                    raise DefinitionError(
                        "INVALID_DEFINITION",
                        f"{group[:-1]} {name!r} must be a {expected.__name__}",
                        path=self.type,
                    )
                if name in seen:
                    raise DefinitionError(
                        "DUPLICATE_CAPABILITY", f"capability {name!r} is declared twice", path=self.type
                    )
                seen.add(name)
            object.__setattr__(self, group, FrozenDict(members))
        # No capability of its own is fine: a toolbar may host only procedure references, and
        # a component may mount before it declares anything.
        if not isinstance(self.priority, int) or isinstance(self.priority, bool):
            raise DefinitionError("INVALID_DEFINITION", "priority must be an integer", path=self.type)
        if not isinstance(self.origin, str) or not self.origin:
            raise DefinitionError("INVALID_DEFINITION", "origin must be a non-empty string", path=self.type)
        object.__setattr__(self, "tags", checked_names(self.tags, "tags", self.type))
        object.__setattr__(self, "policies", checked_names(self.policies, "policies", self.type))
        object.__setattr__(self, "meta", checked_meta(self.meta))
        ids = {
            name: format_capability_id("view", self.type, name)
            for name in (*self.observations, *self.actions)
        }
        object.__setattr__(self, "capability_ids", FrozenDict(ids))
        object.__setattr__(self, "capability_id_set", frozenset(ids.values()))
        object.__setattr__(self, "hash", digest(self.to_json()))

    @property
    def id(self) -> str:
        return self.type

    def capability_id(self, name: str) -> str:
        cached = self.capability_ids.get(name)
        return cached if cached is not None else format_capability_id("view", self.type, name)

    def capability(self, name: str) -> ObservationContract | ActionContract | None:
        return self.observations.get(name) or self.actions.get(name)

    def to_json(self) -> dict[str, JsonValue]:
        """The canonical static form, hashed into the manifest."""
        out: dict[str, JsonValue] = {
            "kind": "component",
            "type": self.type,
            "description": self.description,
            "origin": self.origin,
            "priority": self.priority,
            "tags": list(self.tags),
            "policies": list(self.policies),
            "observations": {n: c.to_json() for n, c in sorted(self.observations.items())},
            "actions": {n: c.to_json() for n, c in sorted(self.actions.items())},
        }
        meta = frozen_meta(self.meta)
        if meta:
            out["meta"] = meta
        return out

    def bind(
        self,
        *,
        instance_id: str = DEFAULT_INSTANCE_ID,
        observations: Mapping[str, ObservationBinding | Callable[..., Any]] | None = None,
        actions: Mapping[str, ActionBinding | Callable[..., Any]] | None = None,
        procedures: Sequence[ProcedureReference] = (),
        policies: Sequence[Policy] = (),
        enabled: bool = True,
        parent: tuple[str, str] | None = None,
        internal: Mapping[str, Any] | None = None,
    ) -> ComponentBinding:
        """Attach live handlers. Every declared capability needs exactly one handler."""
        return _bind_component(
            self,
            instance_id,
            observations or {},
            actions or {},
            procedures,
            policies,
            enabled,
            parent,
            internal,
        )


@record(hot=True, eq=False)
class ComponentBinding:
    contract: ComponentContract
    instance_id: str
    observations: Mapping[str, ObservationBinding]
    actions: Mapping[str, ActionBinding]
    procedures: tuple[ProcedureReference, ...]
    policies: tuple[Policy, ...]
    enabled: bool
    parent: tuple[str, str] | None
    internal: Mapping[str, Any]

    @property
    def type(self) -> str:
        return self.contract.type

    @derived
    def any_when(self) -> bool:
        """Whether any capability has a ``when()`` (without one, a fresh registration publishes
        ``enabled`` everywhere). ``bind()`` fills it in as it checks the members."""
        members: tuple[ObservationBinding | ActionBinding | ProcedureReference, ...] = (
            *self.observations.values(), *self.actions.values(), *self.procedures
        )
        return any(member.when is not None for member in members)



def _bind_component(
    contract: ComponentContract,
    instance_id: str,
    observations: Mapping[str, ObservationBinding | Handler],
    actions: Mapping[str, ActionBinding | Handler],
    procedures: Sequence[ProcedureReference],
    policies: Sequence[Policy],
    enabled: bool,
    parent: tuple[str, str] | None,
    internal: Mapping[str, Any] | None,
) -> ComponentBinding:
    validate_instance_id(instance_id)
    where = f"{contract.type}@{instance_id}"
    if type(observations) is not dict or type(actions) is not dict:  # a dict skips the ABC check
        for group, given in (("observations", observations), ("actions", actions)):
            if not isinstance(given, Mapping):
                raise DefinitionError(
                    "INVALID_DEFINITION",
                    f"{group} must be a mapping of capability name to handler, got {type(given).__name__}",
                    path=where,
                )
    obs, obs_when = _bind_members(
        contract.observations, observations, ObservationBinding, "read", where, "observations"
    )
    acts, acts_when = _bind_members(contract.actions, actions, ActionBinding, "execute", where, "actions")
    refs = tuple(procedures) if procedures else ()
    refs_when = _check_references(refs, where) if refs else False
    bound_policies = check_policies(policies, where) if policies else ()
    if parent is not None:
        # A bare "devices.table" would otherwise unpack into ('d', 'e').
        if not (isinstance(parent, tuple) and len(parent) == 2):
            raise DefinitionError(
                "INVALID_DEFINITION",
                f"parent must be a (component type, instance id) tuple, got {parent!r}",
                path=where,
            )
        try:
            validate_component_type(parent[0])
            validate_instance_id(parent[1])
        except DefinitionError as exc:
            raise exc.at(f"{where}.parent") from None
    binding = ComponentBinding(  # positional: a third cheaper than by keyword, per mount
        contract,
        instance_id,
        FrozenDict(obs),
        FrozenDict(acts),
        refs,
        bound_policies,
        bool(enabled),
        None if parent is None else (parent[0], parent[1]),
        dict(internal) if internal else {},
    )
    binding.__dict__["any_when"] = (  # the derived value, known here at no cost
        obs_when or acts_when or refs_when
    )
    mint(binding)
    return binding



def _check_references(refs: tuple[ProcedureReference, ...], where: str) -> bool:
    """Check the references; whether any has a ``when()``."""
    seen_procs: set[str] = set()
    timed = False
    for ref in refs:
        if not is_minted(ref) or not isinstance(ref, ProcedureReference):
            raise DefinitionError(
                "INVALID_DEFINITION", "procedures must come from ProcedureContract.reference()", path=where
            )
        if ref.procedure_id in seen_procs:
            raise DefinitionError(
                "DUPLICATE_CAPABILITY", f"procedure {ref.procedure_id!r} is referenced twice", path=where
            )
        seen_procs.add(ref.procedure_id)
        timed = timed or ref.when is not None
    return timed


def _mismatch(
    declared: Mapping[str, Any], given: Mapping[str, Any], handler_name: str, where: str, group: str
) -> DefinitionError:
    """The error for members that are not the declared ones: the extra names, else the missing."""
    extra = sorted(set(given) - set(declared))
    if extra:
        return DefinitionError("INVALID_DEFINITION", f"{group} {extra} are not declared in the contract", path=where)
    missing = sorted(set(declared) - set(given))
    return DefinitionError("INVALID_DEFINITION", f"{group} {missing} have no {handler_name} handler", path=where)


def _bind_members(
    declared: Mapping[str, Any],
    given: Mapping[str, Any],
    binding_type: type[Any],
    handler_name: str,
    where: str,
    group: str,
) -> tuple[dict[str, Any], bool]:
    """The members as bindings, and whether any has a ``when()``."""
    if given.keys() != declared.keys():
        raise _mismatch(declared, given, handler_name, where, group)
    out: dict[str, Any] = {}
    timed = False
    for name, value in given.items():
        if not isinstance(value, binding_type):
            # A bare handler (the common case: binding is per mount) has no options to check.
            if not callable(value):
                raise DefinitionError(
                    "INVALID_DEFINITION", f"{handler_name} of {name!r} is not callable", path=where
                )
            out[name] = binding_type(value)
            continue
        member = value
        if not callable(getattr(member, handler_name)):
            raise DefinitionError(
                "INVALID_DEFINITION", f"{handler_name} of {name!r} is not callable", path=where
            )
        precondition = getattr(member, "precondition", None)
        preview = getattr(member, "preview", None)
        if (
            member.unavailable_reason is not None or member.policies or member.when is not None
            or precondition is not None or preview is not None
        ):
            timed = timed or member.when is not None
            check_live_options(
                f"{where}.{name}",
                member.unavailable_reason,
                member.policies,
                when=member.when,
                precondition=precondition,
                preview=preview,
            )
        out[name] = member
    return out, timed


# A keyword typo names the keyword it meant (a dataclass __init__ says only "unexpected").
check_keywords(ObservationContract)
check_keywords(ActionContract)
check_keywords(ComponentContract)
