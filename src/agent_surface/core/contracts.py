"""Static contracts (identity and governance) and the bindings that attach live behaviour.

A contract is what the manifest hashes and the authority approves: ids, descriptions, kinds,
effects, schemas, confirmation floor, required policies. A binding supplies handlers and live
state at mount time and cannot change any of that.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from .errors import DefinitionError, DefinitionErrorCode
from .ids import (
    DEFAULT_INSTANCE_ID,
    format_capability_id,
    parse_procedure_id,
    validate_capability_name,
    validate_component_type,
    validate_instance_id,
)
from .jsonvalue import FrozenDict, JsonValue, NotJsonError, digest, freeze, json_size, to_json_value
from .kinds import (
    AUDIT_LEVELS,
    CONFIRMATION_LEVELS,
    DEFAULTS,
    PROCEDURE_EFFECTS,
    VIEW_EFFECTS,
    AuditLevel,
    ConfirmationLevel,
    Effect,
    Kind,
    ProcedureEffect,
    ViewEffect,
    confirmation_rank,
)
from .policy import Policy
from .schema import EMPTY_OBJECT_SCHEMA, Schema, as_schema, check_schema_subset

MAX_COMPONENT_DESCRIPTION = 500
MAX_CAPABILITY_DESCRIPTION = 300
MAX_META_BYTES = 2048


def _description(value: object, limit: int, what: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise DefinitionError("INVALID_DEFINITION", f"{what} description must be a non-empty string")
    if len(value) > limit:
        raise DefinitionError(
            "LIMIT_EXCEEDED", f"{what} description is {len(value)} chars; the limit is {limit}"
        )
    return value


def _meta(value: Mapping[str, Any] | None) -> FrozenDict | None:
    if value is None:
        return None
    try:
        plain = to_json_value(value)
    except NotJsonError as exc:
        raise DefinitionError("INVALID_DEFINITION", f"meta is not JSON: {exc}") from None
    if not isinstance(plain, dict):
        raise DefinitionError("INVALID_DEFINITION", "meta must be an object")
    if json_size(plain) > MAX_META_BYTES:
        raise DefinitionError("LIMIT_EXCEEDED", f"meta exceeds {MAX_META_BYTES} bytes serialized")
    return freeze(plain)  # type: ignore[no-any-return]


def _schema(value: Any, what: str) -> Schema:
    try:
        schema = as_schema(value)
        check_schema_subset(schema.json_schema)
    except DefinitionError as exc:
        raise exc.at(what) from None
    return schema


def _timeout(value: float | None) -> float | None:
    if value is not None and (not isinstance(value, (int, float)) or value <= 0):
        raise DefinitionError(
            "INVALID_DEFINITION", f"timeout must be a positive number of seconds, got {value!r}"
        )
    return None if value is None else float(value)


def _flag(value: object, what: str) -> bool:
    # bool("no") is True: a non-bool governance flag would silently mean the opposite.
    if not isinstance(value, bool):
        raise DefinitionError("INVALID_DEFINITION", f"{what} must be True or False, got {value!r}")
    return value


def _names(value: object, what: str, where: str) -> tuple[str, ...]:
    """A sorted, de-duplicated tuple of strings; a bare string is refused (it would split
    into characters)."""
    if isinstance(value, str) or not isinstance(value, (list, tuple, set, frozenset)):
        raise DefinitionError(
            "INVALID_DEFINITION", f"{what} must be a list of strings, got {value!r}", path=where
        )
    for item in value:
        if not isinstance(item, str) or not item:
            raise DefinitionError(
                "INVALID_DEFINITION", f"{what} must contain non-empty strings, got {item!r}", path=where
            )
    return tuple(sorted(set(value)))


def _view_effect(effect: object, where: str) -> None:
    if not isinstance(effect, str):
        raise DefinitionError("INVALID_DEFINITION", f"{where} effect must be a string, got {effect!r}")
    if effect in VIEW_EFFECTS:
        return
    if effect in PROCEDURE_EFFECTS:
        raise DefinitionError(
            "PLANE_VIOLATION",
            f"{where} declares the server effect {effect!r}; view actions are 'local-state' or "
            "'navigation', server effects belong to domain procedure references",
        )
    raise DefinitionError(
        "INVALID_DEFINITION", f"{where} effect must be 'local-state' or 'navigation', got {effect!r}"
    )


def frozen_meta(value: Mapping[str, Any] | None) -> FrozenDict | None:
    """The frozen meta a contract stored in ``__post_init__`` (a dataclass field keeps the
    type its constructor accepts, so this gives the checker the stored type back)."""
    assert value is None or isinstance(value, FrozenDict)
    return value


def resolved(value: ConfirmationLevel | None) -> ConfirmationLevel:
    """A governance level that ``__post_init__`` resolved from the defaults table."""
    assert value is not None
    return value


@dataclass(frozen=True, slots=True)
class Concurrency:
    """How actions queue: per ``instance`` (default), per ``capability``, per ``key``, or
    ``parallel`` with a bounded ``max``. ``queue_depth`` overrides the registry default."""

    mode: Literal["instance", "capability", "key", "parallel"] = "instance"
    key: str | None = None
    max: int | None = None
    queue_depth: int | None = None

    def __post_init__(self) -> None:
        if self.mode not in ("instance", "capability", "key", "parallel"):
            raise DefinitionError("INVALID_DEFINITION", f"unknown concurrency mode {self.mode!r}")
        if self.mode == "key" and not self.key:
            raise DefinitionError("INVALID_DEFINITION", "concurrency mode 'key' needs a key")
        if self.mode == "parallel" and not (
            isinstance(self.max, int) and not isinstance(self.max, bool) and self.max >= 1
        ):
            raise DefinitionError(
                "INVALID_DEFINITION", "concurrency mode 'parallel' needs an integer max >= 1"
            )
        if self.queue_depth is not None and (
            isinstance(self.queue_depth, bool)
            or not isinstance(self.queue_depth, int)
            or self.queue_depth < 0
        ):
            raise DefinitionError("INVALID_DEFINITION", "queue_depth must be an integer >= 0")

    def to_json(self) -> dict[str, JsonValue]:
        out: dict[str, JsonValue] = {"mode": self.mode}
        if self.key is not None:
            out["key"] = self.key
        if self.max is not None:
            out["max"] = self.max
        if self.queue_depth is not None:
            out["queueDepth"] = self.queue_depth
        return out


def _governance(
    effect: str,
    idempotent: bool | None,
    reversible: bool | None,
    confirmation: ConfirmationLevel | None,
    audit: AuditLevel | None,
) -> tuple[bool, bool | None, ConfirmationLevel, AuditLevel]:
    base = DEFAULTS[effect]
    if confirmation is not None and confirmation not in CONFIRMATION_LEVELS:
        raise DefinitionError("INVALID_DEFINITION", f"confirmation must be one of {CONFIRMATION_LEVELS}")
    if audit is not None and audit not in AUDIT_LEVELS:
        raise DefinitionError("INVALID_DEFINITION", f"audit must be one of {AUDIT_LEVELS}")
    level = confirmation if confirmation is not None else base.confirmation
    if effect == "destructive" and confirmation_rank(level) < confirmation_rank("optional"):
        raise DefinitionError(
            "INVALID_DEFINITION", "a destructive capability cannot lower confirmation below 'optional'"
        )
    return (
        base.idempotent if idempotent is None else _flag(idempotent, "idempotent"),
        base.reversible if reversible is None else _flag(reversible, "reversible"),
        level,
        audit if audit is not None else base.audit,
    )


def _settle_governance(contract: Any) -> None:
    """Resolve an action's or procedure's governance fields (defaults table) and its
    meta/timeout in place, on a frozen dataclass still being initialized."""
    idem, rev, conf, aud = _governance(
        contract.effect, contract.idempotent, contract.reversible, contract.confirmation, contract.audit
    )
    for name, value in (
        ("idempotent", idem),
        ("reversible", rev),
        ("confirmation", conf),
        ("audit", aud),
        ("meta", _meta(contract.meta)),
        ("timeout", _timeout(contract.timeout)),
    ):
        object.__setattr__(contract, name, value)


@dataclass(frozen=True, slots=True)
class ObservationContract:
    """Reads semantic state. Output schema required; effect ``read``; never confirmed."""

    description: str
    output: Any
    meta: Mapping[str, Any] | None = None
    timeout: float | None = None
    untrusted_output: bool = False

    kind: Kind = field(default="observation", init=False)
    effect: Effect = field(default="read", init=False)

    def __post_init__(self) -> None:
        object.__setattr__(
            self, "description", _description(self.description, MAX_CAPABILITY_DESCRIPTION, "observation")
        )
        if self.output is None:
            raise DefinitionError("INVALID_DEFINITION", "an observation needs an output schema")
        object.__setattr__(self, "output", _schema(self.output, "output"))
        object.__setattr__(self, "meta", _meta(self.meta))
        object.__setattr__(self, "timeout", _timeout(self.timeout))
        _flag(self.untrusted_output, "untrusted_output")

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
            "outputSchema": self.output.json_schema,
        }
        meta = frozen_meta(self.meta)
        if meta:
            out["meta"] = meta
        if self.untrusted_output:
            out["untrustedOutput"] = True
        return out


@dataclass(frozen=True, slots=True)
class ActionContract:
    """Changes presentation state: effect ``local-state`` or ``navigation``."""

    description: str
    effect: ViewEffect = "local-state"
    input: Any = None
    output: Any = None
    idempotent: bool | None = None
    reversible: bool | None = None
    confirmation: ConfirmationLevel | None = None
    audit: AuditLevel | None = None
    meta: Mapping[str, Any] | None = None
    timeout: float | None = None
    concurrency: Concurrency = field(default_factory=Concurrency)
    untrusted_output: bool = False

    kind: Kind = field(default="action", init=False)

    def __post_init__(self) -> None:
        object.__setattr__(
            self, "description", _description(self.description, MAX_CAPABILITY_DESCRIPTION, "action")
        )
        _view_effect(self.effect, "a view action")
        object.__setattr__(
            self, "input", _schema(EMPTY_OBJECT_SCHEMA if self.input is None else self.input, "input")
        )
        if self.output is not None:
            object.__setattr__(self, "output", _schema(self.output, "output"))
        _settle_governance(self)
        if not isinstance(self.concurrency, Concurrency):
            raise DefinitionError("INVALID_DEFINITION", "concurrency must be a Concurrency")
        _flag(self.untrusted_output, "untrusted_output")

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
        if self.output is not None:
            out["outputSchema"] = self.output.json_schema
        meta = frozen_meta(self.meta)
        if meta:
            out["meta"] = meta
        if self.untrusted_output:
            out["untrustedOutput"] = True
        return out


@dataclass(frozen=True, slots=True, eq=False, weakref_slot=True)
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

    def __post_init__(self) -> None:
        validate_component_type(self.type)
        object.__setattr__(
            self,
            "description",
            _description(self.description, MAX_COMPONENT_DESCRIPTION, f"component {self.type!r}"),
        )
        seen: set[str] = set()
        for group, expected in (("observations", ObservationContract), ("actions", ActionContract)):
            given = getattr(self, group)
            if not isinstance(given, Mapping):
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
        object.__setattr__(self, "tags", _names(self.tags, "tags", self.type))
        object.__setattr__(self, "policies", _names(self.policies, "policies", self.type))
        object.__setattr__(self, "meta", _meta(self.meta))
        ids = {
            name: format_capability_id("view", self.type, name)
            for name in (*self.observations, *self.actions)
        }
        object.__setattr__(self, "capability_ids", FrozenDict(ids))
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


@dataclass(frozen=True, slots=True, eq=False, weakref_slot=True)
class ProcedureContract:
    """A reference to an existing backend procedure (``domain:`` plane)."""

    id: str
    description: str
    effect: ProcedureEffect
    input: Any = None
    output: Any = None
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
            _description(self.description, MAX_CAPABILITY_DESCRIPTION, f"procedure {self.id!r}"),
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
        input_schema = _schema(EMPTY_OBJECT_SCHEMA if self.input is None else self.input, f"{self.id}.input")
        if input_schema.json_schema.get("type") != "object":
            raise DefinitionError(
                "UNSUPPORTED_SCHEMA", "a procedure input schema must be an object schema", path=self.id
            )
        object.__setattr__(self, "input", input_schema)
        if self.output is not None:
            object.__setattr__(self, "output", _schema(self.output, f"{self.id}.output"))
        _settle_governance(self)
        object.__setattr__(self, "policies", _names(self.policies, "policies", self.id))
        _flag(self.untrusted_output, "untrusted_output")
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
        if self.output is not None:
            out["outputSchema"] = self.output.json_schema
        meta = frozen_meta(self.meta)
        if meta:
            out["meta"] = meta
        if self.untrusted_output:
            out["untrustedOutput"] = True
        return out

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
    ) -> ProcedureReference:
        """Make this procedure contextually available from a mounted component.

        ``bind`` returns UI-derived input values (e.g. the selected ids); ``bound_fields`` names
        its keys, which are removed from the agent's schema and locked unless ``overridable``.
        ``confirmation`` may raise the contract's floor, never lower it.
        """
        return _reference(
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
        )


# --------------------------------------------------------------------------- bindings

Handler = Callable[..., Any]
# Bindings minted by ``bind()``/``reference()``; the registry refuses anything else. A private
# weak set, so the proof cannot be copied onto a hand-made object through public attributes.
_MINTED: weakref.WeakSet[Any] = weakref.WeakSet()


def is_minted(binding: object) -> bool:
    try:
        return binding in _MINTED
    except TypeError:
        return False


@dataclass(frozen=True, eq=False)
class ObservationBinding:
    read: Handler
    when: Callable[[], bool] | None = None
    unavailable_reason: str | Callable[[], str] | None = None
    policies: Sequence[Policy] = ()


@dataclass(frozen=True, eq=False)
class ActionBinding:
    execute: Handler
    when: Callable[[], bool] | None = None
    unavailable_reason: str | Callable[[], str] | None = None
    precondition: Callable[..., Any] | None = None
    policies: Sequence[Policy] = ()


@dataclass(frozen=True, eq=False)
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

    @property
    def procedure_id(self) -> str:
        return self.contract.id


@dataclass(frozen=True, eq=False)
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


def _check_policies(policies: Sequence[Policy], where: str) -> tuple[Policy, ...]:
    out = tuple(policies)
    for policy in out:
        if not isinstance(policy, Policy):
            raise DefinitionError("INVALID_DEFINITION", f"{policy!r} is not a Policy", path=where)
    return out


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
    for group, given in (("observations", observations), ("actions", actions)):
        if not isinstance(given, Mapping):
            raise DefinitionError(
                "INVALID_DEFINITION",
                f"{group} must be a mapping of capability name to handler, got {type(given).__name__}",
                path=where,
            )
    obs = _bind_members(
        contract.observations, observations, ObservationBinding, "read", where, "observations"
    )
    acts = _bind_members(contract.actions, actions, ActionBinding, "execute", where, "actions")
    refs = tuple(procedures)
    seen_procs: set[str] = set()
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
    bound_policies = _check_policies(policies, where)
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
    binding = ComponentBinding(
        contract=contract,
        instance_id=instance_id,
        observations=FrozenDict(obs),
        actions=FrozenDict(acts),
        procedures=refs,
        policies=bound_policies,
        enabled=bool(enabled),
        parent=None if parent is None else (parent[0], parent[1]),
        internal=dict(internal or {}),
    )
    _MINTED.add(binding)
    return binding


def _check_live_options(holder: ObservationBinding | ActionBinding | ProcedureReference, where: str) -> None:
    # Checked at bind time: a non-callable when() would otherwise only surface later, silently,
    # as a "when-error" in every snapshot.
    for attr in ("when", "precondition", "bind", "describe"):
        value = getattr(holder, attr, None)
        if value is not None and not callable(value):
            raise DefinitionError("INVALID_DEFINITION", f"{attr} must be callable, got {value!r}", path=where)
    reason = holder.unavailable_reason
    if reason is not None and not (isinstance(reason, str) or callable(reason)):
        raise DefinitionError(
            "INVALID_DEFINITION",
            f"unavailable_reason must be a string or a callable, got {reason!r}",
            path=where,
        )
    _check_policies(holder.policies, where)


def _bind_members(
    declared: Mapping[str, Any],
    given: Mapping[str, Any],
    binding_type: type[Any],
    handler_name: str,
    where: str,
    group: str,
) -> dict[str, Any]:
    extra = sorted(set(given) - set(declared))
    if extra:
        raise DefinitionError(
            "INVALID_DEFINITION", f"{group} {extra} are not declared in the contract", path=where
        )
    missing = sorted(set(declared) - set(given))
    if missing:
        raise DefinitionError(
            "INVALID_DEFINITION", f"{group} {missing} have no {handler_name} handler", path=where
        )
    out: dict[str, Any] = {}
    for name, value in given.items():
        member = value if isinstance(value, binding_type) else binding_type(value)
        if not callable(getattr(member, handler_name)):
            raise DefinitionError(
                "INVALID_DEFINITION", f"{handler_name} of {name!r} is not callable", path=where
            )
        _check_live_options(member, f"{where}.{name}")
        out[name] = member
    return out


def _reference(
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
        policies=_check_policies(policies, contract.id),
        concurrency=concurrency,
    )
    _check_live_options(ref, contract.id)
    if concurrency is not None and not isinstance(concurrency, Concurrency):
        raise DefinitionError("INVALID_DEFINITION", "concurrency must be a Concurrency", path=contract.id)
    _MINTED.add(ref)
    return ref
