"""The checked fields of contracts: descriptions, meta, schemas, timeouts, flags, governance
defaults and concurrency, each validated once when a contract is declared."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeAlias, TypeVar, get_origin, overload

from ..errors import DefinitionError
from ..jsonvalue import FrozenDict, JsonValue, NotJsonError, freeze, json_size, to_json_value
from ..records import record
from ..schemas.schema import Schema, as_schema, check_schema_subset
from ..schemas.type_hints import vet_hint
from .kinds import (
    AUDIT_LEVELS,
    CONFIRMATION_LEVELS,
    DEFAULTS,
    PROCEDURE_EFFECTS,
    VIEW_EFFECTS,
    AuditLevel,
    ConfirmationLevel,
    confirmation_rank,
)

SchemaSource: TypeAlias = object
"""What a schema field takes: a Schema, a JSON Schema mapping, or a type hint / pydantic model."""

Given = TypeVar("Given")
Stored = TypeVar("Stored")


class Checked(Generic[Given, Stored]):
    """The type of a contract field given as ``Given`` and stored as ``Stored``.

    ``input: Checked[SchemaSource, Schema] = Checked(EMPTY_INPUT)``: the constructor takes any
    schema source and ``__post_init__`` stores the Schema made of it. Type checkers check a
    constructor call against ``Given`` and a read against ``Stored`` (a dataclass field typed
    by a descriptor). ``Checked()``, with no default, makes a required field (a type checker
    sees an assignment there, and only the call at run time says the value is missing).

    At run time it only gives the dataclass the field's default: ``slots=True`` puts the slot
    in its place, and without slots the instance's own value shadows it."""

    __slots__ = ("default",)

    def __init__(self, *default: Stored) -> None:
        self.default = default

    @overload
    def __get__(self, instance: None, owner: type[Any]) -> Stored: ...
    @overload
    def __get__(self, instance: object, owner: type[Any] | None = None) -> Stored: ...
    def __get__(self, instance: object, owner: type[Any] | None = None) -> Stored:
        if instance is None and self.default:
            return self.default[0]
        raise AttributeError("no default")  # dataclasses read this as "a required field"

    if TYPE_CHECKING:  # what the constructor accepts; at run time the slot (or __dict__) holds it

        def __set__(self, instance: object, value: Given) -> None: ...


MAX_COMPONENT_DESCRIPTION = 500
MAX_CAPABILITY_DESCRIPTION = 300
MAX_META_BYTES = 2048


def checked_description(value: object, limit: int, what: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise DefinitionError("INVALID_DEFINITION", f"{what} description must be a non-empty string")
    if len(value) > limit:
        raise DefinitionError(
            "LIMIT_EXCEEDED", f"{what} description is {len(value)} chars; the limit is {limit}"
        )
    return value


def checked_meta(value: Mapping[str, Any] | None) -> FrozenDict | None:
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


def checked_schema(value: Any, what: str, *, forbid_extra: bool = False) -> Schema:
    try:
        if isinstance(value, type) or get_origin(value) is not None:  # a type hint or pydantic model
            value = vet_hint(value, what=what, input=what.split(".")[-1] == "input")
        schema = as_schema(value, forbid_extra=forbid_extra)
        check_schema_subset(schema.json_schema)
    except DefinitionError as exc:
        raise exc.at(what) from None
    return schema


def checked_timeout(value: float | None) -> float | None:
    if value is not None and (not isinstance(value, (int, float)) or value <= 0):
        raise DefinitionError(
            "INVALID_DEFINITION", f"timeout must be a positive number of seconds, got {value!r}"
        )
    return None if value is None else float(value)


def checked_flag(value: object, what: str) -> bool:
    # bool("no") is True: a non-bool governance flag would silently mean the opposite.
    if not isinstance(value, bool):
        raise DefinitionError("INVALID_DEFINITION", f"{what} must be True or False, got {value!r}")
    return value


def checked_names(value: object, what: str, where: str) -> tuple[str, ...]:
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


def check_view_effect(effect: object, where: str) -> None:
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


def with_optional_fields(
    out: dict[str, JsonValue],
    output: Schema | None,
    meta: Mapping[str, Any] | None,
    untrusted_output: bool,
) -> dict[str, JsonValue]:
    """``out`` with the fields a capability's JSON carries only when set: ``outputSchema``,
    ``meta`` and ``untrustedOutput``."""
    if output is not None:
        out["outputSchema"] = output.json_schema
    stored = frozen_meta(meta)
    if stored:
        out["meta"] = stored
    if untrusted_output:
        out["untrustedOutput"] = True
    return out


def resolved(value: ConfirmationLevel | None) -> ConfirmationLevel:
    """A governance level that ``__post_init__`` resolved from the defaults table."""
    assert value is not None
    return value


@record
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


DEFAULT_CONCURRENCY = Concurrency()  # frozen: one instance serves every action that sets none


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
        base.idempotent if idempotent is None else checked_flag(idempotent, "idempotent"),
        base.reversible if reversible is None else checked_flag(reversible, "reversible"),
        level,
        audit if audit is not None else base.audit,
    )


def settle_governance(contract: Any) -> None:
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
        ("meta", checked_meta(contract.meta)),
        ("timeout", checked_timeout(contract.timeout)),
    ):
        object.__setattr__(contract, name, value)


