"""Schemas that cross the agent boundary.

Two sources, one interface:
- ``schema_from_type(hint)``: a pydantic model or any type hint. The agent sees pydantic's JSON
  Schema; values are validated by pydantic-core in strict JSON mode (no silent coercion).
- ``schema_from_json(schema)``: a raw JSON Schema, validated with ``jsonschema`` (imported lazily:
  it is the heaviest import on the browser's start-up path).

Either way the agent-visible schema must stay inside the supported subset, checked here at
registration time (``check_schema_subset``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from functools import cached_property
from typing import Any, Protocol, runtime_checkable

from ..errors import DefinitionError
from ..jsonvalue import (
    NOT_PLAIN,
    FrozenDict,
    JsonValue,
    NotJsonError,
    find_lone_surrogate,
    freeze,
    json_size,
    plain_copy,
    thaw,
    to_json_value,
)
from ..pointer import ROOT, json_pointer
from ..records import record
from .accept import ANNOTATIONS, UNPROVEN, Accept, compile_accept
from .formats import FORMAT_CHECKS

MAX_SCHEMA_BYTES = 16_384
MAX_SCHEMA_DEPTH = 8

_KEYWORDS = (
    frozenset(
        {
            "type",
            "enum",
            "const",
            "properties",
            "required",
            "additionalProperties",
            "items",
            "minItems",
            "maxItems",
            "uniqueItems",
            "minLength",
            "maxLength",
            "pattern",
            "format",
            "minimum",
            "maximum",
            "exclusiveMinimum",
            "exclusiveMaximum",
            "multipleOf",
            "anyOf",
            "$defs",
            "$ref",
        }
    )
    | ANNOTATIONS
)
_TYPES = frozenset({"object", "array", "string", "number", "integer", "boolean", "null"})
FORMATS = frozenset({"date-time", "date", "uuid", "email", "uri"})
_DRAFT_2020 = "https://json-schema.org/draft/2020-12/schema"


def _unsupported(path: str, message: str) -> DefinitionError:
    return DefinitionError("UNSUPPORTED_SCHEMA", message, path=path or "$")


def check_schema_subset(
    schema: object, *, max_bytes: int = MAX_SCHEMA_BYTES, max_depth: int = MAX_SCHEMA_DEPTH
) -> None:
    """Raise ``DefinitionError(UNSUPPORTED_SCHEMA)`` naming the first offending keyword/path."""
    if not isinstance(schema, Mapping):
        raise _unsupported("$", f"a schema must be a JSON object, got {type(schema).__name__}")
    try:
        # to_json_value also refuses NaN/Infinity and non-string keys, which json.dumps lets by.
        size = json_size(to_json_value(schema))
    except NotJsonError as exc:
        raise _unsupported("$", f"schema is not plain JSON ({exc})") from None
    if size > max_bytes:
        raise DefinitionError(
            "LIMIT_EXCEEDED", f"schema is {size} bytes serialized; the limit is {max_bytes}"
        )
    defs = schema.get("$defs", {})
    _walk(schema, "$", 0, max_depth, defs if isinstance(defs, Mapping) else {}, root=True)


def _walk(
    node: object, path: str, depth: int, max_depth: int, defs: Mapping[str, Any], *, root: bool = False
) -> None:
    if depth > max_depth:
        raise _unsupported(path, f"schema nesting exceeds depth {max_depth}")
    if not isinstance(node, Mapping):
        raise _unsupported(
            path,
            "a subschema must be a JSON object (boolean schemas are only allowed as additionalProperties)",
        )
    for key in node:
        if key == "$schema" and root:
            if node[key] != _DRAFT_2020:
                raise _unsupported(path, f"only JSON Schema draft 2020-12 is supported, got {node[key]!r}")
            continue
        if key not in _KEYWORDS:
            raise _unsupported(f"{path}.{key}", f"keyword {key!r} is outside the supported subset")
    _check_type(node, path)
    if "format" in node and node["format"] not in FORMATS:
        raise _unsupported(f"{path}.format", f"format {node['format']!r} is not one of {sorted(FORMATS)}")
    if "additionalProperties" in node and not isinstance(node["additionalProperties"], bool):
        raise _unsupported(f"{path}.additionalProperties", "additionalProperties must be true or false")
    if "required" in node and not (
        isinstance(node["required"], (list, tuple)) and all(isinstance(r, str) for r in node["required"])
    ):
        raise _unsupported(f"{path}.required", "required must be a list of property names")
    if "enum" in node and not isinstance(node["enum"], (list, tuple)):
        raise _unsupported(f"{path}.enum", "enum must be a list")
    _check_keyword_values(node, path)
    if "pattern" in node:
        if not isinstance(node["pattern"], str):
            raise _unsupported(f"{path}.pattern", "pattern must be a string")
        try:
            re.compile(node["pattern"])
        except re.error as exc:
            raise _unsupported(f"{path}.pattern", f"invalid regular expression: {exc}") from None
    if "$ref" in node:
        ref = node["$ref"]
        if not isinstance(ref, str) or not ref.startswith("#/$defs/"):
            raise _unsupported(f"{path}.$ref", f"only internal '#/$defs/...' refs are allowed, got {ref!r}")
        if ref[len("#/$defs/") :] not in defs:
            raise _unsupported(f"{path}.$ref", f"{ref!r} points to no entry of $defs")
    if "$defs" in node:
        if not root:
            raise _unsupported(f"{path}.$defs", "$defs is only allowed at the schema root")
        if not isinstance(node["$defs"], Mapping):
            raise _unsupported(f"{path}.$defs", "$defs must be an object")
        for name, sub in node["$defs"].items():
            _walk(sub, f"{path}.$defs.{name}", depth + 1, max_depth, defs)
    if "items" in node:
        _walk(node["items"], f"{path}.items", depth + 1, max_depth, defs)
    if "properties" in node:
        props = node["properties"]
        if not isinstance(props, Mapping):
            raise _unsupported(f"{path}.properties", "properties must be an object")
        for name, sub in props.items():
            _walk(sub, f"{path}.properties.{name}", depth + 1, max_depth, defs)
    if "anyOf" in node:
        options = node["anyOf"]
        if not isinstance(options, (list, tuple)) or not options:
            raise _unsupported(f"{path}.anyOf", "anyOf must be a non-empty list")
        for i, sub in enumerate(options):
            _walk(sub, f"{path}.anyOf[{i}]", depth + 1, max_depth, defs)


_COUNTS = ("minItems", "maxItems", "minLength", "maxLength")
_BOUNDS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf")


def _check_keyword_values(node: Mapping[str, Any], path: str) -> None:
    # A malformed constraint (e.g. minLength "3") would otherwise pass registration and only
    # blow up inside the validator when an agent first calls the capability.
    for key in _COUNTS:
        value = node.get(key)
        if key in node and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
            raise _unsupported(f"{path}.{key}", f"{key} must be a non-negative integer, got {value!r}")
    for key in _BOUNDS:
        value = node.get(key)
        if key in node and (isinstance(value, bool) or not isinstance(value, (int, float))):
            raise _unsupported(f"{path}.{key}", f"{key} must be a number, got {value!r}")
    if "multipleOf" in node and node["multipleOf"] <= 0:
        raise _unsupported(f"{path}.multipleOf", "multipleOf must be greater than 0")
    if "uniqueItems" in node and not isinstance(node["uniqueItems"], bool):
        raise _unsupported(f"{path}.uniqueItems", "uniqueItems must be true or false")


def _check_type(node: Mapping[str, Any], path: str) -> None:
    if "type" not in node:
        return
    value = node["type"]
    names = value if isinstance(value, (list, tuple)) else [value]
    if not names or any(not isinstance(t, str) or t not in _TYPES for t in names):
        raise _unsupported(f"{path}.type", f"type {value!r} is not a JSON Schema type")


def inline_refs(schema: Mapping[str, Any]) -> dict[str, Any]:
    """Return ``schema`` with every internal ``$ref`` replaced by its ``$defs`` entry.

    Browsers are converging on rejecting ``$ref``/``$defs`` in tool input schemas. Recursive
    definitions cannot be inlined; they raise UNSUPPORTED_SCHEMA. Only subschema positions
    (``properties``, ``items``, ``anyOf``) are expanded: values such as ``const``, ``enum``,
    ``default`` or a property that happens to be named ``$defs`` are data and stay as they are.
    """
    defs = schema.get("$defs") or {}

    def expand(node: Any, stack: tuple[str, ...]) -> Any:
        if not isinstance(node, Mapping):
            return thaw(node)
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            name = ref[len("#/$defs/") :]
            if name not in defs:
                raise _unsupported("$", f"{ref!r} points to no entry of $defs")
            if name in stack:
                raise _unsupported("$", f"recursive $ref {ref!r} cannot be inlined")
            target = expand(defs[name], (*stack, name))
            siblings = expand({k: v for k, v in node.items() if k != "$ref"}, stack)
            return {**target, **siblings}
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key == "$defs":
                continue
            if key == "properties" and isinstance(value, Mapping):
                out[key] = {name: expand(sub, stack) for name, sub in value.items()}
            elif key == "items":
                out[key] = expand(value, stack)
            elif key == "anyOf" and isinstance(value, (list, tuple)):
                out[key] = [expand(sub, stack) for sub in value]
            else:
                out[key] = thaw(value)
        return out

    result: dict[str, Any] = expand(schema, ())
    return result


# --------------------------------------------------------------------------- validation


@record
class Issue:
    """One agent-safe validation problem: where (JSON pointer) and what, never the value."""

    path: str
    message: str

    def to_json(self) -> dict[str, JsonValue]:
        return {"path": self.path, "message": self.message}


@record
class Valid:
    value: Any  # what handlers receive (a model instance for model schemas)
    json: JsonValue  # the same value as plain JSON (effective input, digests, output)


@record
class Invalid:
    issues: tuple[Issue, ...]


ValidationResult = Valid | Invalid

MAX_ISSUES = 20


@runtime_checkable
class Schema(Protocol):
    """Agent-visible JSON Schema plus a validator for values."""

    @property
    def json_schema(self) -> FrozenDict: ...

    def validate(self, value: JsonValue) -> ValidationResult: ...


def validate_output(schema: Schema, value: Any) -> ValidationResult:
    """Check what a handler returned, with the schema's output validator when it has one
    (model schemas accept model instances there, not only plain JSON)."""
    check: Callable[[Any], ValidationResult] | None = getattr(schema, "validate_output", None)
    return check(value) if check is not None else schema.validate(value)


class ModelSchema:
    """A schema from a pydantic model or type hint, validated by pydantic-core.

    ``forbid_extra``: objects refuse unknown properties (``additionalProperties: false`` in the
    schema, pydantic's ``extra="forbid"`` when validating), unless a model of the hint sets
    ``extra="allow"``, which then governs the whole hint as its models say.
    """

    def __init__(self, hint: Any, *, strict: bool = True, forbid_extra: bool = False) -> None:
        from pydantic import TypeAdapter  # imported on first use: off the page's start-up path

        self.hint = hint
        self._adapter: Any = TypeAdapter(hint)
        self._strict = strict
        raw = self._adapter.json_schema(mode="validation")
        self._extra: str | None = None
        if forbid_extra and not _allows_extra(raw):
            raw = _closed_objects(raw)
            self._extra = "forbid"
        self._json_schema = freeze(raw)

    @property
    def json_schema(self) -> FrozenDict:
        return self._json_schema  # type: ignore[no-any-return]

    def validate(self, value: JsonValue) -> ValidationResult:
        from pydantic import ValidationError

        try:
            text = json.dumps(value, allow_nan=False)
        except (TypeError, ValueError):
            return Invalid((Issue(ROOT, "value is not JSON"),))
        try:
            if self._extra is None:
                parsed = self._adapter.validate_json(text, strict=self._strict)
            else:
                parsed = self._adapter.validate_json(text, strict=self._strict, extra=self._extra)
        except ValidationError as exc:
            # pydantic's parser refuses a lone surrogate escape ("\ud800", which JSON text and
            # JavaScript strings may hold) as unreadable JSON at the root: say what and where.
            surrogate = find_lone_surrogate(value) if exc.errors()[0]["type"] == "json_invalid" else None
            if surrogate is not None:
                parts, char, what = surrogate
                message = f"{what} with a lone surrogate (\\u{ord(char):04x}) is not valid Unicode text"
                return Invalid((Issue(json_pointer(parts), message),))
            return _pydantic_invalid(exc)
        return Valid(parsed, to_json_value(self._adapter.dump_python(parsed, mode="json")))

    def validate_output(self, value: Any) -> ValidationResult:
        """Check what a handler returned: model instances and plain values are both fine."""
        from pydantic import ValidationError

        try:
            parsed = self._adapter.validate_python(value)
            plain = to_json_value(self._adapter.dump_python(parsed, mode="json"))
        except ValidationError as exc:
            return _pydantic_invalid(exc)
        except (NotJsonError, ValueError, TypeError) as exc:
            return Invalid((Issue(ROOT, f"not JSON: {exc}"),))
        return Valid(parsed, plain)


def _allows_extra(node: Any) -> bool:
    """Whether any object of a JSON Schema explicitly accepts unknown properties (a model with
    ``extra="allow"``)."""
    if not isinstance(node, dict):
        return False
    if node.get("additionalProperties") is True:
        return True
    subs: list[Any] = []
    for key in ("properties", "$defs"):
        if isinstance(node.get(key), dict):
            subs.extend(node[key].values())
    subs.append(node.get("items"))
    for key in ("anyOf", "oneOf", "allOf", "prefixItems"):
        if isinstance(node.get(key), list):
            subs.extend(node[key])
    return any(_allows_extra(sub) for sub in subs)


def _closed_objects(node: Any) -> Any:
    """The schema with ``additionalProperties: false`` on every object that lists properties
    and says nothing of others (pydantic's models under ``extra="ignore"``). Only subschema
    positions are walked: ``const``, ``default`` and the like are data."""
    if not isinstance(node, dict):
        return node
    out = dict(node)
    for key in ("properties", "$defs"):
        if isinstance(out.get(key), dict):
            out[key] = {name: _closed_objects(sub) for name, sub in out[key].items()}
    if "items" in out:
        out["items"] = _closed_objects(out["items"])
    for key in ("anyOf", "oneOf", "allOf", "prefixItems"):
        if isinstance(out.get(key), list):
            out[key] = [_closed_objects(sub) for sub in out[key]]
    if out.get("type") == "object" and isinstance(out.get("properties"), dict):
        out.setdefault("additionalProperties", False)
    return out


def _pydantic_invalid(exc: Any) -> Invalid:
    """A pydantic ``ValidationError`` as agent-safe issues (never the input)."""
    return Invalid(
        tuple(Issue(json_pointer(e["loc"]), e["msg"]) for e in exc.errors(include_input=False)[:MAX_ISSUES])
    )


class JsonSchemaSchema:
    """A raw JSON Schema (subset), validated with ``jsonschema`` loaded on first use."""

    def __init__(self, schema: Mapping[str, Any]) -> None:
        self._json_schema = freeze(schema)

    @property
    def json_schema(self) -> FrozenDict:
        return self._json_schema  # type: ignore[no-any-return]

    @cached_property
    def _validator(self) -> Any:
        from ..._compat import import_jsonschema

        jsonschema = import_jsonschema()
        checker = jsonschema.FormatChecker(formats=())
        for name, check in FORMAT_CHECKS.items():
            checker.checks(name)(check)
        return jsonschema.Draft202012Validator(thaw(self._json_schema), format_checker=checker)

    @cached_property
    def _accepts(self) -> Accept | None:
        return compile_accept(self._json_schema)

    def proven(self, value: Any) -> Any:
        """A plain copy of ``value`` when the compiled check proves it valid, else ``UNPROVEN``:
        what ``validate`` answers for the common valid value, without building its result (the
        pipeline's hot path takes it so)."""
        accepts = self._accepts
        if accepts is None:
            return UNPROVEN
        plain = plain_copy(value)
        return plain if plain is not NOT_PLAIN and accepts(plain) else UNPROVEN

    def validate(self, value: JsonValue) -> ValidationResult:
        # Compiled once per schema, the check proves the common valid value without jsonschema;
        # anything it cannot prove valid gets the full validation and its issues.
        proven = self.proven(value)
        if proven is not UNPROVEN:
            return Valid(proven, proven)
        try:
            plain = to_json_value(value)
        except NotJsonError as exc:
            return Invalid((Issue(json_pointer(exc.parts), exc.reason),))
        errors = sorted(self._validator.iter_errors(plain), key=lambda e: list(e.absolute_path))
        if not errors:
            return Valid(plain, plain)
        return Invalid(tuple(_describe(e) for e in errors[:MAX_ISSUES]))

    def validate_output(self, value: Any) -> ValidationResult:
        return self.validate(value)


def _describe(err: Any) -> Issue:
    """An agent-safe message: built from the failing keyword, never echoing the value."""
    keyword = err.validator
    constraint = err.validator_value
    path = json_pointer(err.absolute_path)
    if keyword == "type":
        message = f"expected {' or '.join(constraint) if isinstance(constraint, list) else constraint}"
    elif keyword == "required":
        missing = [name for name in constraint if isinstance(err.instance, dict) and name not in err.instance]
        message = f"missing required property {missing[0]!r}" if missing else "missing required property"
    elif keyword == "additionalProperties":
        extra = sorted(set(err.instance) - set(err.schema.get("properties", {})))
        message = f"unexpected property {extra[0]!r}" if extra else "unexpected property"
    elif keyword in ("enum", "const"):
        message = "not one of the allowed values"
    elif keyword == "format":
        message = f"must be a valid {constraint}"
    elif keyword == "anyOf":
        message = "does not match any allowed shape"
    else:
        message = f"violates {keyword} {json.dumps(constraint)}"
    return Issue(path, message)


def schema_from_json(schema: Mapping[str, Any]) -> JsonSchemaSchema:
    """A schema from raw JSON Schema. The subset is checked at registration, not here."""
    if not isinstance(schema, Mapping):
        raise _unsupported("$", f"a schema must be a JSON object, got {type(schema).__name__}")
    return JsonSchemaSchema(schema)


def schema_from_type(hint: Any, *, strict: bool = True, forbid_extra: bool = False) -> ModelSchema:
    """A schema from a pydantic model or any type hint pydantic understands.

    ``forbid_extra=True`` refuses unknown properties (procedure inputs are built so)."""
    try:
        return ModelSchema(hint, strict=strict, forbid_extra=forbid_extra)
    except Exception as exc:  # pydantic raises several error types for unusable hints
        raise DefinitionError("UNSUPPORTED_SCHEMA", f"cannot build a schema from {hint!r}: {exc}") from exc


def as_schema(value: Any, *, forbid_extra: bool = False) -> Schema:
    """Accept a Schema, a JSON Schema mapping, or a type hint / pydantic model (built with
    ``forbid_extra``, see :func:`schema_from_type`)."""
    if isinstance(value, (ModelSchema, JsonSchemaSchema)):
        return value
    if isinstance(value, Mapping):
        return schema_from_json(value)
    if isinstance(value, Schema):
        return value
    return schema_from_type(value, forbid_extra=forbid_extra)


EMPTY_OBJECT_SCHEMA: Mapping[str, Any] = {
    "type": "object",
    "properties": {},
    "additionalProperties": False,
}
# The input schema of a capability that takes none (shared: it holds no per-contract state).
EMPTY_INPUT: Schema = JsonSchemaSchema(EMPTY_OBJECT_SCHEMA)
