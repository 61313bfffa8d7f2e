"""Simple type hints without pydantic: the page's way to its first tool.

In the page (Pyodide), importing pydantic costs more than booting the runtime; most capability
hints are simple (``str``, ``int``, ``float``, ``bool``, ``list[X]``, ``X | None``, a
``Literal`` of strings or of integers, and an action's parameters made of those with plain
defaults). For those, this module writes the very JSON Schema pydantic writes (so the contract's
digest, the reviewed ``contract.json`` and the descriptors are unchanged) and checks a value with
the compiled JSON-Schema acceptance check: a value it proves valid is converted to what pydantic
would hand the handler (``float`` for a number field, the parameters' defaults filled in);
anything it cannot prove valid goes to the pydantic schema itself (loaded then, on first use),
so an invalid value gets pydantic's own issues, as before. Under CPython (the server, the
compiler, tests) ``schema_from_type`` keeps pydantic throughout; the unit tests hold the two
side by side.

Internal: ``schema_for_hint`` (an ``AgentComponent``'s output hints) and ``Signature.input_schema``
use it when ``SIMPLE_HINTS``; the public ``schema_from_type`` stays pydantic's.
"""

from __future__ import annotations

import dataclasses
import inspect
import math
import sys
import types
import typing
from collections.abc import Mapping
from functools import cached_property
from typing import Any, Literal, Union

from ..jsonvalue import FrozenDict, JsonValue, freeze
from .accept import UNPROVEN, Accept, compile_accept, proven_json
from .schema import Schema, Valid, ValidationResult, inline_refs, schema_from_type

# In the page only: the server and the compiler keep validating with pydantic.
SIMPLE_HINTS = sys.platform == "emscripten"

_SCALARS: dict[Any, dict[str, Any]] = {
    str: {"type": "string"},
    int: {"type": "integer"},
    float: {"type": "number"},
    bool: {"type": "boolean"},
}


def simple_json_schema(hint: Any) -> dict[str, Any] | None:
    """pydantic's validation JSON Schema of a simple hint, or None when the hint is not simple."""
    return _Writer(None).schema(hint)


def simple_output_json_schema(hint: Any) -> dict[str, Any] | None:
    """As ``simple_json_schema``, and a dataclass of simple fields (a record an observation or
    action returns: at the top inline, inside ``list[...]`` or ``X | None`` under ``$defs``)."""
    writer = _Writer({})
    if _is_record(hint):
        return writer.record(hint)
    schema = writer.schema(hint)
    if schema is None or writer.defs is None:
        return schema
    return {"$defs": writer.defs, **schema} if writer.defs else schema


# annotated_types markers pydantic honours, as the JSON Schema keyword each writes per type.
_SIZES = {"MinLen": "min", "MaxLen": "max"}
_BOUNDS = {"Ge": ("ge", "minimum"), "Le": ("le", "maximum"), "Gt": ("gt", "exclusiveMinimum"), "Lt": ("lt", "exclusiveMaximum")}


class _Writer:
    def __init__(self, defs: dict[str, Any] | None) -> None:
        self.defs = defs  # None: no records (an input's hints); else the $defs written so far
        self._records: dict[str, Any] = {}

    def schema(self, hint: Any) -> dict[str, Any] | None:
        if hint in _SCALARS:
            return dict(_SCALARS[hint])
        origin = typing.get_origin(hint)
        args = typing.get_args(hint)
        if origin is typing.Annotated:
            return self._annotated(args[0], args[1:])
        if origin is list and len(args) == 1:
            items = self.schema(args[0])
            return None if items is None else {"items": items, "type": "array"}
        if origin is Literal and args:
            kind = _literal_kind(args)
            if kind is None:
                return None
            if len(args) == 1:
                return {"const": args[0], "type": kind}
            if len(set(args)) != len(args):
                return None
            return {"enum": list(args), "type": kind}
        if origin in (Union, types.UnionType) and len(args) == 2 and type(None) in args:
            (inner,) = [a for a in args if a is not type(None)]
            if typing.get_origin(inner) in (Union, types.UnionType):
                return None  # pydantic flattens these: leave them to it
            schema = self.schema(inner)
            return None if schema is None else {"anyOf": [schema, {"type": "null"}]}
        if self.defs is not None and _is_record(hint):
            return self._reference(hint)
        return None

    def _annotated(self, base: Any, metadata: tuple[Any, ...]) -> dict[str, Any] | None:
        """``Annotated[X, MinLen(1), MaxLen(80), Ge(0)...]`` of a str, a list or a number."""
        markers = sys.modules.get("annotated_types")
        if markers is None or not metadata:
            return None
        sized = base is str or typing.get_origin(base) is list
        numeric = base in (int, float)
        if not (sized or numeric):
            return None
        schema = self.schema(base)
        if schema is None:
            return None
        for marker in metadata:
            kind = type(marker).__name__
            if not isinstance(marker, markers.BaseMetadata) or type(marker).__module__ != "annotated_types":
                return None
            if kind in _SIZES and sized:
                size = getattr(marker, f"{_SIZES[kind]}_length")
                if type(size) is not int or size < 0:
                    return None
                noun = "Length" if base is str else "Items"
                keyword = f"{_SIZES[kind]}{noun}"
            elif kind in _BOUNDS and numeric:
                attribute, keyword = _BOUNDS[kind]
                size = getattr(marker, attribute)
                if type(size) not in (int, float) or (type(size) is float and not math.isfinite(size)):
                    return None
            else:
                return None
            if keyword in schema:
                return None  # the same keyword twice: pydantic decides which holds
            schema[keyword] = size
        return schema

    def record(self, cls: Any) -> dict[str, Any] | None:
        """pydantic's schema of a stdlib dataclass whose fields are simple (not records)."""
        if cls.__doc__ != cls.__name__ + str(inspect.signature(cls)).replace(" -> None", ""):
            return None  # a docstring of its own: pydantic writes it as a description
        try:
            hints = typing.get_type_hints(cls, include_extras=True)
        except Exception:
            return None
        inner = _Writer(None)
        properties: dict[str, Any] = {}
        required: list[str] = []
        for item in dataclasses.fields(cls):
            hint = hints.get(item.name)
            schema = None if hint is None or not item.init else inner.schema(hint)
            if schema is None or item.default_factory is not dataclasses.MISSING:
                return None
            if item.default is dataclasses.MISSING:
                required.append(item.name)
            elif _plain_default(hint, item.default):
                schema["default"] = item.default
            else:
                return None
            schema["title"] = field_title(item.name)
            properties[item.name] = schema
        out: dict[str, Any] = {"properties": properties, "title": cls.__name__, "type": "object"}
        if required:
            out["required"] = required
        return out

    def _reference(self, cls: Any) -> dict[str, Any] | None:
        assert self.defs is not None
        name = cls.__name__
        known = self._records.get(name)
        if known is None:
            schema = self.record(cls)
            if schema is None:
                return None
            self._records[name] = cls
            self.defs[name] = schema
        elif known is not cls:
            return None  # two records of one name: pydantic names them apart
        return {"$ref": f"#/$defs/{name}"}


def _is_record(hint: Any) -> bool:
    return isinstance(hint, type) and dataclasses.is_dataclass(hint) and not hasattr(hint, "__pydantic_fields__")


def _literal_kind(values: tuple[Any, ...]) -> str | None:
    if all(type(v) is str for v in values):
        return "string"
    if all(type(v) is int for v in values):
        return "integer"
    return None


def convert(hint: Any, value: Any) -> Any:
    """A plain JSON value the hint's schema accepted, as pydantic's strict JSON mode gives it."""
    if hint is float:
        return float(value)
    origin = typing.get_origin(hint)
    if origin is typing.Annotated:
        return convert(typing.get_args(hint)[0], value)
    if _is_record(hint):  # an output's record, as pydantic dumps it in JSON mode
        hints = typing.get_type_hints(hint, include_extras=True)
        return {  # extra keys dropped, absent fields their defaults: a record's fields only
            f.name: convert(hints[f.name], value[f.name]) if f.name in value else f.default
            for f in dataclasses.fields(hint)
        }
    if origin is list:
        (item,) = typing.get_args(hint)
        return [convert(item, v) for v in value]
    if origin in (Union, types.UnionType):
        if value is None:
            return None
        (inner,) = [a for a in typing.get_args(hint) if a is not type(None)]
        return convert(inner, value)
    return value


def _plain_default(hint: Any, default: Any) -> bool:
    """A default pydantic writes and copies as it is: an immutable JSON scalar of the hint's type."""
    if typing.get_origin(hint) is typing.Annotated:
        return default is not None and _plain_default(typing.get_args(hint)[0], default)
    if default is None:
        return typing.get_origin(hint) in (Union, types.UnionType)
    if type(default) not in (str, int, float, bool) or (
        type(default) is float and not math.isfinite(default)
    ):
        return False
    if typing.get_origin(hint) is Literal:
        return default in typing.get_args(hint) and all(
            type(default) is type(v) for v in typing.get_args(hint)
        )
    inner = hint
    if typing.get_origin(hint) in (Union, types.UnionType):
        (inner,) = [a for a in typing.get_args(hint) if a is not type(None)]
        if typing.get_origin(inner) is typing.Annotated:
            inner = typing.get_args(inner)[0]
    return inner in _SCALARS and type(default) is inner


def field_title(name: str) -> str:
    """pydantic's default title of a model field."""
    return name.title().replace("_", " ").strip()


class _Checked:
    """The compiled acceptance check of a schema; pydantic's schema for anything it cannot prove."""

    _fallback_hint: Any

    def __init__(self, json_schema: Mapping[str, Any]) -> None:
        self._json_schema = freeze(json_schema)

    @property
    def json_schema(self) -> FrozenDict:
        return self._json_schema  # type: ignore[no-any-return]

    @cached_property
    def _accepts(self) -> Accept | None:
        schema = self._json_schema
        return compile_accept(inline_refs(schema) if "$defs" in schema else schema)

    @cached_property
    def _pydantic(self) -> Any:
        from .schema import ModelSchema  # pydantic is imported (in the page: loaded) here

        return ModelSchema(self._fallback_hint)

    def _proven(self, value: Any) -> Any:
        return proven_json(value, self._accepts)


class SimpleHintSchema(_Checked):
    """The schema of one simple hint (an observation's or action's output, a hint in general)."""

    def __init__(self, hint: Any, json_schema: Mapping[str, Any]) -> None:
        super().__init__(json_schema)
        self.hint = self._fallback_hint = hint

    def validate(self, value: JsonValue) -> ValidationResult:
        plain = self._proven(value)
        if plain is UNPROVEN:
            result: ValidationResult = self._pydantic.validate(value)
            return result
        typed = convert(self.hint, plain)
        return Valid(typed, typed)

    def validate_output(self, value: Any) -> ValidationResult:
        # Only plain JSON values of the hint's own types take the fast path: pydantic's lax
        # output check would coerce others (a tuple, a numeric string), and it still does.
        plain = self._proven(_as_plain(self.hint, value)) if _exact(self.hint, value) else UNPROVEN
        if plain is UNPROVEN:
            result: ValidationResult = self._pydantic.validate_output(value)
            return result
        typed = convert(self.hint, plain)
        return Valid(typed, typed)


def _exact(hint: Any, value: Any) -> bool:
    if hint in _SCALARS:
        return type(value) is hint or (hint is float and type(value) is int)
    origin = typing.get_origin(hint)
    if origin is typing.Annotated:
        return _exact(typing.get_args(hint)[0], value)
    if _is_record(hint):
        if type(value) is not hint:
            return False
        hints = typing.get_type_hints(hint, include_extras=True)
        return all(_exact(hints[f.name], getattr(value, f.name)) for f in dataclasses.fields(hint))
    if origin is list:
        (item,) = typing.get_args(hint)
        return type(value) is list and all(_exact(item, v) for v in value)
    if origin is Literal:
        return any(type(value) is type(v) and value == v for v in typing.get_args(hint))
    if origin in (Union, types.UnionType):
        (inner,) = [a for a in typing.get_args(hint) if a is not type(None)]
        return value is None or _exact(inner, value)
    return False


def _as_plain(hint: Any, value: Any) -> Any:
    """An exact value of ``hint`` with its records (dataclass instances) as dicts, for the proof."""
    origin = typing.get_origin(hint)
    if origin is typing.Annotated:
        return _as_plain(typing.get_args(hint)[0], value)
    if _is_record(hint):
        return {f.name: getattr(value, f.name) for f in dataclasses.fields(hint)}
    if origin is list:
        (item,) = typing.get_args(hint)
        return [_as_plain(item, v) for v in value]
    if origin in (Union, types.UnionType) and value is not None:
        (inner,) = [a for a in typing.get_args(hint) if a is not type(None)]
        return _as_plain(inner, value)
    return value


class Arguments:
    """An action's validated parameters, read by name (as from the pydantic model it stands for)."""

    def __init__(self, values: Mapping[str, Any]) -> None:
        self.__dict__.update(values)

    def __repr__(self) -> str:
        return f"Arguments({self.__dict__!r})"


class SimpleParamsSchema(_Checked):
    """An action's input object made of simple parameters, as pydantic's ``create_model`` with
    ``extra="forbid"`` writes and validates it."""

    def __init__(
        self, title: str, fields: Mapping[str, tuple[Any, Any]], json_schema: Mapping[str, Any]
    ) -> None:
        super().__init__(json_schema)
        self._title = title
        self._fields = dict(fields)

    @classmethod
    def build(cls, title: str, fields: Mapping[str, tuple[Any, Any]]) -> SimpleParamsSchema | None:
        """The schema of these parameters (name -> (hint, default or ...)), or None when one of
        them is not simple."""
        properties: dict[str, Any] = {}
        required: list[str] = []
        for name, (hint, default) in fields.items():
            schema = simple_json_schema(hint)
            if schema is None or name.startswith("_"):
                return None
            if default is ...:
                required.append(name)
            elif _plain_default(hint, default):
                schema["default"] = default
            else:
                return None
            schema["title"] = field_title(name)
            properties[name] = schema
        json_schema: dict[str, Any] = {
            "additionalProperties": False,
            "properties": properties,
            "title": title,
            "type": "object",
        }
        if required:
            json_schema["required"] = required
        return cls(title, fields, json_schema)

    @property
    def _fallback_hint(self) -> Any:
        from pydantic import ConfigDict, create_model

        return create_model(  # type: ignore[call-overload]
            self._title, __config__=ConfigDict(extra="forbid"), **self._fields
        )

    def validate(self, value: JsonValue) -> ValidationResult:
        plain = self._proven(value)
        if not isinstance(plain, dict):
            result: ValidationResult = self._pydantic.validate(value)
            return result
        values = {
            name: convert(hint, plain[name]) if name in plain else default
            for name, (hint, default) in self._fields.items()
        }
        return Valid(Arguments(values), values)

    def validate_output(self, value: Any) -> ValidationResult:
        result: ValidationResult = self._pydantic.validate_output(value)
        return result


def schema_for_hint(hint: Any) -> Schema:
    """A capability's schema from a type hint: in the page a simple hint's schema without
    pydantic, anything else (and everything under CPython) ``schema_from_type``."""
    simple = simple_schema(hint) if SIMPLE_HINTS else None
    return simple if simple is not None else schema_from_type(hint)


def simple_schema(hint: Any) -> SimpleHintSchema | None:
    """The pydantic-free schema of a simple hint (an output's: records too), or None."""
    schema = simple_output_json_schema(hint)
    return None if schema is None else SimpleHintSchema(hint, schema)


__all__ = [
    "SIMPLE_HINTS",
    "Arguments",
    "SimpleHintSchema",
    "SimpleParamsSchema",
    "convert",
    "schema_for_hint",
    "simple_json_schema",
    "simple_output_json_schema",
    "simple_schema",
]
