"""A committed JSON Schema that stands for a pydantic schema declared elsewhere (the page's way).

A page references procedures whose one source of truth is the server's module of pydantic
models; ``contract.json`` (written by ``agentsurface snapshot``, checked by ``agentsurface
check``) holds the JSON Schema pydantic wrote for each. ``CommittedSchema`` is that JSON Schema,
checked without pydantic: the compiled acceptance check proves the common valid value, which is
then completed as pydantic would hand it on (absent properties with a ``default`` filled in, a
whole number in a ``number`` field as a float); a value it cannot prove valid (or one whose
proof could differ from pydantic-core's: a string with a line break where a ``pattern`` applies,
pydantic's regular expressions not being Python's) goes to the declaring schema itself, loaded
then (in the page: pydantic with it), so it is refused exactly as before, with pydantic's issues.

Internal: made by ``agentsurface.compiler.load.procedures_from_contract``.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from functools import cached_property
from typing import Any

from ..jsonvalue import FrozenDict, JsonValue, freeze, thaw
from .accept import UNPROVEN, Accept, compile_accept, proven_json
from .schema import Schema, Valid, ValidationResult, inline_refs, validate_output


class CommittedSchema:
    """``json_schema`` checked by the compiled acceptance check; ``declared()`` (the schema it was
    written from, loaded on first use) for anything the check cannot prove valid."""

    def __init__(self, json_schema: Mapping[str, Any], declared: Callable[[], Schema]) -> None:
        self._json_schema = freeze(json_schema)
        self._declared = declared

    @property
    def json_schema(self) -> FrozenDict:
        return self._json_schema  # type: ignore[no-any-return]

    @cached_property
    def _plain(self) -> dict[str, Any]:
        return inline_refs(thaw(self._json_schema))

    @cached_property
    def _accepts(self) -> Accept | None:
        schema = self._plain
        return compile_accept(schema) if _provable(schema) else None

    @cached_property
    def declared(self) -> Schema:
        """The schema this one was written from (importing its module, and pydantic)."""
        return self._declared()

    def _proven(self, value: Any) -> Any:
        plain = proven_json(value, self._accepts)
        if plain is UNPROVEN:
            return UNPROVEN
        if _has_line_break(plain):  # pydantic-core's `$` is not Python's: let pydantic decide
            return UNPROVEN
        return complete(self._plain, plain)

    def validate(self, value: JsonValue) -> ValidationResult:
        plain = self._proven(value)
        if plain is UNPROVEN:
            return self.declared.validate(value)
        return Valid(plain, plain)

    def validate_output(self, value: Any) -> ValidationResult:
        plain = self._proven(value)
        if plain is UNPROVEN:
            return validate_output(self.declared, value)
        return Valid(plain, plain)


def _provable(schema: Any) -> bool:
    """Only the keywords pydantic writes and whose check means the same to pydantic-core."""
    if isinstance(schema, list):
        return all(_provable(s) for s in schema)
    if not isinstance(schema, Mapping):
        return True
    if "format" in schema or "uniqueItems" in schema or "multipleOf" in schema:
        return False
    if "enum" in schema or "const" in schema:
        values = schema.get("enum", [schema.get("const")])
        if not all(type(v) is str or v is None for v in values):
            return False
    return all(_provable(v) for k, v in schema.items() if k in ("properties", "items", "anyOf")) and all(
        _provable(v) for v in (schema.get("properties") or {}).values()
    )


def _has_line_break(value: Any) -> bool:
    if isinstance(value, str):
        return "\n" in value or "\r" in value
    if isinstance(value, list):
        return any(_has_line_break(v) for v in value)
    if isinstance(value, dict):
        return any(_has_line_break(v) for v in value.values())
    return False


def complete(schema: Mapping[str, Any], value: Any) -> Any:
    """A value the schema accepted, as pydantic dumps it in JSON mode: the properties it left out
    that have a ``default`` filled in (in the schema's order), a whole number in a ``number``
    field a float."""
    if "anyOf" in schema:
        for option in schema["anyOf"]:
            check = compile_accept(option)
            if check is not None and check(value):
                return complete(option, value)
        return value
    kind = schema.get("type")
    if kind == "number" and type(value) is int:
        return float(value)
    if kind == "array" and isinstance(value, list) and isinstance(schema.get("items"), Mapping):
        return [complete(schema["items"], item) for item in value]
    if kind == "object" and isinstance(value, dict):
        properties: Mapping[str, Any] = schema.get("properties") or {}
        out: dict[str, Any] = {}
        for name, sub in properties.items():
            if name in value:
                out[name] = complete(sub, value[name])
            elif "default" in sub:
                out[name] = copy.deepcopy(sub["default"])
        out.update((k, v) for k, v in value.items() if k not in properties)
        return out
    return value


__all__ = ["CommittedSchema", "complete"]
