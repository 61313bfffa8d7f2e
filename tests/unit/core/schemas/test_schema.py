"""AS-SCHEMA-001: the supported JSON Schema subset, enforced at registration; schemas from
pydantic models / type hints and from raw JSON Schema; agent-safe structured validation."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any, Literal
from uuid import UUID

import pytest
from pydantic import BaseModel, ConfigDict, Field

from agentsurface import DefinitionError
from agentsurface._core.jsonvalue import FrozenDict, NotJsonError, thaw, to_json_value
from agentsurface._core.schemas.schema import (
    MAX_SCHEMA_BYTES,
    Invalid,
    Issue,
    JsonSchemaSchema,
    ModelSchema,
    Valid,
    as_schema,
    check_schema_subset,
    inline_refs,
)
from agentsurface.lowlevel import ActionContract, ObservationContract, schema_from_json, schema_from_type
from tests.support import IDS_INPUT

FULL_SUBSET: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "title": "Everything allowed",
    "properties": {
        "ids": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 5, "uniqueItems": True},
        "mode": {"type": "string", "enum": ["replace", "add"], "default": "replace"},
        "count": {"type": "integer", "minimum": 0, "maximum": 10, "multipleOf": 1},
        "ratio": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1.5},
        "when": {"type": "string", "format": "date-time", "description": "ISO timestamp"},
        "name": {"type": "string", "minLength": 1, "maxLength": 20, "pattern": "^[a-z]+$"},
        "nested": {"$ref": "#/$defs/nested"},
        "union": {"anyOf": [{"type": "string"}, {"type": "null"}]},
        "tagged": {
            "anyOf": [
                {"type": "object", "properties": {"kind": {"const": "a"}}},
                {"type": "object", "properties": {"kind": {"const": "b"}}},
            ]
        },
        "nullable": {"type": ["string", "null"], "deprecated": True, "examples": ["x"]},
    },
    "required": ["ids"],
    "additionalProperties": False,
    "$defs": {"nested": {"type": "object", "properties": {"a": {"type": "boolean"}}}},
}


def _rejects(schema: Any, code: str = "UNSUPPORTED_SCHEMA") -> DefinitionError:
    with pytest.raises(DefinitionError) as info:
        check_schema_subset(schema)
    assert info.value.code == code, str(info.value)
    return info.value


# ----------------------------------------------------------------------------- subset


def test_AS_SCHEMA_001_accepts_every_allowlisted_keyword() -> None:
    check_schema_subset(FULL_SUBSET)
    ActionContract("Everything", input=FULL_SUBSET)


@pytest.mark.parametrize(
    ("schema", "where"),
    [
        ({"oneOf": [{"type": "string"}]}, "$.oneOf"),
        ({"allOf": [{"type": "string"}]}, "$.allOf"),
        ({"not": {"type": "string"}}, "$.not"),
        ({"if": {"type": "string"}, "then": {"type": "string"}}, "$.if"),
        ({"type": "object", "patternProperties": {"^x": {"type": "string"}}}, "$.patternProperties"),
        ({"type": "object", "dependentRequired": {"a": ["b"]}}, "$.dependentRequired"),
        ({"type": "object", "unevaluatedProperties": False}, "$.unevaluatedProperties"),
        ({"type": "string", "contentEncoding": "base64"}, "$.contentEncoding"),
        ({"type": "object", "properties": {"a": {"type": "string", "oneOf": []}}}, "$.properties.a.oneOf"),
        ({"type": "array", "items": {"type": "string", "not": {}}}, "$.items.not"),
    ],
)
def test_AS_SCHEMA_001_rejects_keywords_outside_the_subset_naming_the_path(
    schema: dict[str, Any], where: str
) -> None:
    error = _rejects(schema)
    assert error.path == where
    assert "outside the supported subset" in str(error)


@pytest.mark.parametrize(
    ("schema", "fragment"),
    [
        ({"$ref": "https://example.com/schema.json"}, "only internal '#/$defs/...' refs"),
        ({"$ref": "#/properties/x"}, "only internal '#/$defs/...' refs"),
        ({"$ref": "#/$defs/missing"}, "points to no entry of $defs"),
        ({"type": "object", "properties": {"a": {"$defs": {}}}}, "only allowed at the schema root"),
        ({"type": "object", "additionalProperties": {"type": "string"}}, "additionalProperties must be true or false"),
        ({"type": "array", "items": [{"type": "string"}]}, "must be a JSON object"),
        ({"type": "array", "items": True}, "must be a JSON object"),
        ({"type": "function"}, "not a JSON Schema type"),
        ({"type": []}, "not a JSON Schema type"),
        ({"type": "string", "format": "hostname"}, "format 'hostname'"),
        ({"type": "string", "pattern": "("}, "invalid regular expression"),
        ({"type": "string", "pattern": 5}, "pattern must be a string"),
        ({"type": "string", "minLength": "3"}, "minLength must be a non-negative integer"),
        ({"type": "array", "maxItems": -1}, "maxItems must be a non-negative integer"),
        ({"type": "array", "minItems": True}, "minItems must be a non-negative integer"),
        ({"type": "number", "minimum": "0"}, "minimum must be a number"),
        ({"type": "number", "multipleOf": 0}, "multipleOf must be greater than 0"),
        ({"type": "array", "uniqueItems": "yes"}, "uniqueItems must be true or false"),
        ({"type": "object", "required": "ids"}, "required must be a list"),
        ({"enum": "abc"}, "enum must be a list"),
        ({"anyOf": []}, "anyOf must be a non-empty list"),
        ({"type": "object", "properties": ["a"]}, "properties must be an object"),
        ({"$schema": "http://json-schema.org/draft-07/schema#"}, "draft 2020-12"),
        ({"type": "object", "properties": {"a": {"$schema": "https://json-schema.org/draft/2020-12/schema"}}},
         "keyword '$schema'"),
        ({"type": "number", "default": float("nan")}, "not plain JSON"),
        ([{"type": "string"}], "must be a JSON object"),
        ("string", "must be a JSON object"),
    ],
)
def test_AS_SCHEMA_001_rejects_malformed_schemas(schema: Any, fragment: str) -> None:
    error = _rejects(schema)
    assert fragment in str(error)


def test_AS_SCHEMA_001_depth_cap_is_eight() -> None:
    def nested(levels: int) -> dict[str, Any]:
        schema: dict[str, Any] = {"type": "string"}
        for _ in range(levels):
            schema = {"type": "object", "properties": {"deep": schema}}
        return schema

    check_schema_subset(nested(8))
    error = _rejects(nested(9))
    assert "exceeds depth 8" in str(error)
    assert error.path is not None and error.path.count(".properties.deep") == 9


def test_AS_SCHEMA_001_size_cap_is_16k_and_reports_limit_exceeded() -> None:
    def sized(chars: int) -> dict[str, Any]:
        return {"type": "object", "properties": {"big": {"type": "string", "description": "x" * chars}}}

    overhead = len(json.dumps(sized(0), separators=(",", ":")))
    check_schema_subset(sized(MAX_SCHEMA_BYTES - overhead))
    error = _rejects(sized(MAX_SCHEMA_BYTES - overhead + 1), code="LIMIT_EXCEEDED")
    assert f"{MAX_SCHEMA_BYTES + 1} bytes" in str(error)
    assert "16384" in str(error)


def test_AS_SCHEMA_001_size_counts_utf8_bytes_not_characters() -> None:
    schema = {"type": "string", "description": "é" * 9000}  # 9000 chars, 18000 bytes
    _rejects(schema, code="LIMIT_EXCEEDED")


def test_AS_SCHEMA_001_subset_is_enforced_when_a_contract_is_declared() -> None:
    with pytest.raises(DefinitionError) as info:
        ActionContract("Select", input={"type": "object", "oneOf": [{"type": "object"}]})
    assert info.value.code == "UNSUPPORTED_SCHEMA"
    assert info.value.path == "input.$.oneOf"
    with pytest.raises(DefinitionError) as info:
        ObservationContract("Read", output={"type": "object", "properties": {"a": {"not": {}}}})
    assert info.value.path == "output.$.properties.a.not"


def test_AS_SCHEMA_001_property_names_are_not_keywords() -> None:
    # A property called "oneOf" is data, not a keyword.
    check_schema_subset({"type": "object", "properties": {"oneOf": {"type": "string"}, "$ref": {}}})


# ----------------------------------------------------------------------------- formats


@pytest.mark.parametrize(
    ("fmt", "good", "bad"),
    [
        ("date-time", ["2026-07-29T10:00:00Z", "2026-07-29T10:00:00.123+02:00"],
         ["2026-07-29", "2026-07-29T10", "2026-07-29 10:00:00Z", "2026-13-01T00:00:00Z", "2026-07-29T10:00:00"]),
        ("date", ["2026-07-29", "2024-02-29"], ["2026-7-29", "2020-W01-1", "20260729", "2026-02-30"]),
        ("uuid", ["12345678-1234-1234-1234-123456789abc", "12345678-1234-1234-1234-123456789ABC"],
         ["12345678123412341234123456789abc", "----12345678123456781234567812345678",
          "{12345678-1234-1234-1234-123456789abc}"]),
        ("email", ["a@example.com"], ["a@", "not an email", "a@b"]),
        ("uri", ["https://example.com/x", "urn:isbn:1"], ["example.com", "no scheme here"]),
    ],
)
def test_AS_SCHEMA_001_supported_formats_are_checked(fmt: str, good: list[str], bad: list[str]) -> None:
    schema = schema_from_json({"type": "string", "format": fmt})
    for value in good:
        assert isinstance(schema.validate(value), Valid), value
    for value in bad:
        result = schema.validate(value)
        assert isinstance(result, Invalid), value
        assert result.issues == (Issue("/", f"must be a valid {fmt}"),)


def test_AS_SCHEMA_001_formats_only_constrain_strings() -> None:
    schema = schema_from_json({"type": ["string", "integer"], "format": "date"})
    assert isinstance(schema.validate(3), Valid)


# ----------------------------------------------------------------------------- raw JSON Schema


def test_raw_json_schema_valid_values_come_back_as_plain_json() -> None:
    schema = schema_from_json(IDS_INPUT)
    result = schema.validate({"ids": ("a", "b")})
    assert isinstance(result, Valid)
    assert result.value == {"ids": ["a", "b"]}
    assert result.json == {"ids": ["a", "b"]}


def test_raw_json_schema_issues_are_structured_and_located() -> None:
    schema = schema_from_json(
        {
            "type": "object",
            "properties": {
                "ids": {"type": "array", "items": {"type": "string"}, "minItems": 1},
                "mode": {"type": "string", "enum": ["replace", "add"]},
            },
            "required": ["ids", "name"],
            "additionalProperties": False,
        }
    )
    result = schema.validate({"ids": [], "mode": "nope", "extra": 1})
    assert isinstance(result, Invalid)
    by_path = {issue.path: issue.message for issue in result.issues}
    assert by_path["/ids"] == 'violates minItems 1'
    assert by_path["/mode"] == "not one of the allowed values"
    assert set(by_path) == {"/", "/ids", "/mode"}
    root = [i.message for i in result.issues if i.path == "/"]
    assert "missing required property 'name'" in root
    assert "unexpected property 'extra'" in root
    assert all(set(i.to_json()) == {"path", "message"} for i in result.issues)


def test_raw_json_schema_validates_refs_and_anyof() -> None:
    schema = schema_from_json(
        {
            "type": "object",
            "properties": {
                "n": {"type": "integer", "exclusiveMinimum": 0},
                "u": {"anyOf": [{"type": "string"}, {"type": "number"}]},
                "r": {"$ref": "#/$defs/point"},
            },
            "$defs": {"point": {"type": "object", "properties": {"x": {"type": "number"}}, "required": ["x"]}},
        }
    )
    assert isinstance(schema.validate({"n": 2, "u": "ok", "r": {"x": 1}}), Valid)
    assert isinstance(schema.validate({"n": 0}), Invalid)
    bad_union = schema.validate({"u": True})
    assert isinstance(bad_union, Invalid)
    assert bad_union.issues == (Issue("/u", "does not match any allowed shape"),)
    bad_ref = schema.validate({"r": {}})
    assert isinstance(bad_ref, Invalid)
    assert bad_ref.issues[0].path == "/r"


@pytest.mark.parametrize(
    ("schema", "value"),
    [
        ({"type": "integer"}, "1"),
        ({"type": "integer"}, True),
        ({"type": "number"}, "1.5"),
        ({"type": "string"}, 1),
        ({"type": "boolean"}, "true"),
        ({"type": "boolean"}, 0),
        ({"type": "array"}, "a,b"),
        ({"type": "null"}, ""),
    ],
)
def test_raw_json_schema_is_strict_without_coercion(schema: dict[str, Any], value: Any) -> None:
    result = schema_from_json(schema).validate(value)
    assert isinstance(result, Invalid)
    assert result.issues[0].message.startswith("expected ")


def test_raw_json_schema_refuses_values_that_are_not_json() -> None:
    result = schema_from_json({"type": "object"}).validate({"when": datetime(2026, 1, 1)})  # type: ignore[dict-item]
    assert isinstance(result, Invalid)
    assert result.issues == (Issue("/when", "datetime is not a JSON value"),)


SECRET = "SECRET-VALUE-4242"


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "object", "properties": {"a": {"type": "integer"}}},
        {"type": "object", "properties": {"a": {"type": "string", "maxLength": 3}}},
        {"type": "object", "properties": {"a": {"type": "string", "pattern": "^x$"}}},
        {"type": "object", "properties": {"a": {"enum": ["x", "y"]}}},
        {"type": "object", "properties": {"a": {"const": "x"}}},
        {"type": "object", "properties": {"a": {"type": "string", "format": "email"}}},
        {"type": "object", "properties": {"a": {"anyOf": [{"type": "integer"}, {"type": "null"}]}}},
    ],
)
def test_validation_issues_never_echo_the_value(schema: dict[str, Any]) -> None:
    result = schema_from_json(schema).validate({"a": SECRET})
    assert isinstance(result, Invalid)
    assert SECRET not in json.dumps([i.to_json() for i in result.issues])


# ----------------------------------------------------------------------------- pydantic / hints


class Point(BaseModel):
    x: int
    y: int = 0


class Shape(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=10, description="Display name")
    center: Point
    at: datetime
    id: UUID
    kind: Literal["a", "b"] = "a"
    tags: list[str] = []
    maybe: int | None = None


SHAPE = {"name": "n", "center": {"x": 1}, "at": "2026-01-01T00:00:00Z", "id": "12345678-1234-1234-1234-123456789abc"}


def test_model_schema_is_pydantic_json_schema_inside_the_subset() -> None:
    schema = schema_from_type(Shape)
    assert isinstance(schema, ModelSchema)
    js = schema.json_schema
    assert js["type"] == "object"
    assert js["additionalProperties"] is False
    assert js["properties"]["center"] == {"$ref": "#/$defs/Point"}
    assert js["properties"]["at"]["format"] == "date-time"
    assert js["properties"]["id"]["format"] == "uuid"
    assert js["properties"]["name"]["description"] == "Display name"
    check_schema_subset(js)
    ActionContract("Draw a shape", input=Shape)


def test_model_schema_validates_to_a_model_and_plain_json() -> None:
    result = schema_from_type(Shape).validate(SHAPE)
    assert isinstance(result, Valid)
    assert isinstance(result.value, Shape)
    assert result.value.center == Point(x=1, y=0)
    assert result.json == {
        "name": "n",
        "center": {"x": 1, "y": 0},
        "at": "2026-01-01T00:00:00Z",
        "id": "12345678-1234-1234-1234-123456789abc",
        "kind": "a",
        "tags": [],
        "maybe": None,
    }
    json.dumps(result.json)


@pytest.mark.parametrize(
    ("patch", "path"),
    [
        ({"center": {"x": "1"}}, "/center/x"),
        ({"center": {"x": 1.5}}, "/center/x"),
        ({"name": ""}, "/name"),
        ({"kind": "c"}, "/kind"),
        ({"extra": 1}, "/extra"),
        ({"tags": "a"}, "/tags"),
        ({"maybe": "1"}, "/maybe"),
    ],
)
def test_model_schema_is_strict_and_reports_pointer_paths(patch: dict[str, Any], path: str) -> None:
    result = schema_from_type(Shape).validate({**SHAPE, **patch})
    assert isinstance(result, Invalid)
    assert path in [issue.path for issue in result.issues]


def test_model_schema_strict_scalars() -> None:
    ints = schema_from_type(int)
    assert ints.json_schema == {"type": "integer"}
    assert isinstance(ints.validate(1), Valid)
    for value in ("1", True, None, [1]):
        assert isinstance(ints.validate(value), Invalid), value
    assert isinstance(schema_from_type(bool).validate("true"), Invalid)
    assert isinstance(schema_from_type(str).validate(1), Invalid)


def test_model_schema_issues_never_echo_the_value() -> None:
    class Tight(BaseModel):
        a: Literal["x"]
        b: int
        c: str = Field(max_length=2, pattern="^z+$")

    result = schema_from_type(Tight).validate({"a": SECRET, "b": SECRET, "c": SECRET})
    assert isinstance(result, Invalid)
    assert {i.path for i in result.issues} == {"/a", "/b", "/c"}
    assert SECRET not in json.dumps([i.to_json() for i in result.issues])


def test_model_schema_from_plain_type_hints() -> None:
    schema = schema_from_type(list[str])
    assert schema.json_schema == {"type": "array", "items": {"type": "string"}}
    assert isinstance(schema.validate(["a"]), Valid)
    assert isinstance(schema.validate(["a", 1]), Invalid)
    optional = schema_from_type(int | None)
    # Frozen: arrays are tuples (thaw() gives the plain JSON back).
    assert optional.json_schema == {"anyOf": ({"type": "integer"}, {"type": "null"})}
    assert thaw(optional.json_schema) == {"anyOf": [{"type": "integer"}, {"type": "null"}]}


def test_model_schema_outside_the_subset_is_refused_at_declaration() -> None:
    # dict[str, int] would become additionalProperties: {schema}, which the subset forbids; the
    # refusal says so in Python terms (tests/unit/core/schemas/test_type_hints.py has every hint).
    with pytest.raises(DefinitionError) as info:
        ObservationContract("Counts", output=dict[str, int])
    assert info.value.code == "UNSUPPORTED_SCHEMA"
    assert "output: dict[str, int] is not supported" in str(info.value)
    assert "pydantic model" in str(info.value)


def test_schema_from_type_refuses_unusable_hints() -> None:
    with pytest.raises(DefinitionError) as info:
        schema_from_type(object())
    assert info.value.code == "UNSUPPORTED_SCHEMA"
    assert "cannot build a schema from" in str(info.value)


def test_as_schema_dispatches_on_the_kind_of_source() -> None:
    raw = as_schema({"type": "string"})
    assert isinstance(raw, JsonSchemaSchema)
    assert isinstance(as_schema(Point), ModelSchema)
    assert as_schema(raw) is raw


def test_schema_json_is_deep_frozen() -> None:
    for schema in (schema_from_json(IDS_INPUT), schema_from_type(Shape)):
        js = schema.json_schema
        assert isinstance(js, FrozenDict)
        with pytest.raises(TypeError):
            js["type"] = "string"  # type: ignore[index]
        with pytest.raises(TypeError):
            js["properties"]["x"] = {}
        assert isinstance(js["required"], tuple)


def test_schema_from_json_refuses_non_mappings() -> None:
    with pytest.raises(DefinitionError) as info:
        schema_from_json(["type", "string"])  # type: ignore[arg-type]
    assert info.value.code == "UNSUPPORTED_SCHEMA"
    assert "got list" in str(info.value)


# ----------------------------------------------------------------------------- JsonValue


def test_to_json_value_accepts_plain_json_and_copies_it() -> None:
    value = {"a": [1, 2.5, "x", True, None, ("t",)], "b": {"c": {}}}
    out = to_json_value(value)
    assert out == {"a": [1, 2.5, "x", True, None, ["t"]], "b": {"c": {}}}
    assert out is not value


@pytest.mark.parametrize(
    ("value", "path", "reason"),
    [
        ({"a": {1: "x"}}, "$.a", "object key 1 is not a string"),
        ({"a": [1, float("nan")]}, "$.a[1]", "non-finite number"),
        ({"a": float("inf")}, "$.a", "non-finite number"),
        ({"when": datetime(2026, 1, 1)}, "$.when", "datetime is not a JSON value"),
        ({"s": {1, 2}}, "$.s", "set is not a JSON value"),
        (b"bytes", "$", "bytes is not a JSON value"),
        ({"f": print}, "$.f", "builtin_function_or_method is not a JSON value"),
    ],
)
def test_to_json_value_rejects_non_json_naming_the_path(value: Any, path: str, reason: str) -> None:
    with pytest.raises(NotJsonError) as info:
        to_json_value(value)
    assert info.value.path == path
    assert info.value.reason == reason
    assert isinstance(info.value, TypeError)


def test_to_json_value_error_carries_an_exact_json_pointer() -> None:
    with pytest.raises(NotJsonError) as info:
        to_json_value({"a.b": [1, {"c/d": {1, 2}}]})
    assert info.value.parts == ("a.b", 1, "c/d")
    assert info.value.pointer == "/a.b/1/c~1d"
    result = schema_from_json({"type": "object"}).validate({"a.b": [object()]})  # type: ignore[list-item]
    assert isinstance(result, Invalid)
    assert result.issues[0].path == "/a.b/0"


def test_to_json_value_catches_cycles_through_the_depth_cap() -> None:
    cyclic: list[Any] = []
    cyclic.append(cyclic)
    with pytest.raises(NotJsonError, match="nested deeper than 64 levels"):
        to_json_value(cyclic)


# ----------------------------------------------------------------------------- inline_refs


def test_inline_refs_replaces_refs_and_drops_defs() -> None:
    schema = schema_from_type(Shape).json_schema
    inlined = inline_refs(schema)
    assert "$defs" not in inlined
    assert "$ref" not in json.dumps(inlined)
    assert inlined["properties"]["center"]["properties"]["x"] == {"title": "X", "type": "integer"}
    check_schema_subset(inlined)
    # The result is plain, mutable JSON (lists, dicts).
    assert isinstance(inlined["required"], list)
    inlined["properties"]["new"] = {}
    assert "new" not in schema["properties"]


def test_inline_refs_keeps_sibling_keywords_of_a_ref() -> None:
    inlined = inline_refs(
        {"type": "object", "properties": {"p": {"$ref": "#/$defs/p", "description": "here"}},
         "$defs": {"p": {"type": "string", "description": "there"}}}
    )
    assert inlined["properties"]["p"] == {"type": "string", "description": "here"}


def test_inline_refs_leaves_data_values_alone() -> None:
    schema = {
        "type": "object",
        "properties": {
            "a": {"const": {"$ref": "#/$defs/x"}},
            "b": {"default": {"$defs": 1}},
            "$defs": {"type": "string"},  # a property that happens to be named $defs
        },
        "$defs": {"x": {"type": "integer"}},
    }
    inlined = inline_refs(schema)
    assert inlined["properties"]["a"] == {"const": {"$ref": "#/$defs/x"}}
    assert inlined["properties"]["b"] == {"default": {"$defs": 1}}
    assert inlined["properties"]["$defs"] == {"type": "string"}


def test_inline_refs_expands_refs_in_items_and_anyof_and_nested_defs() -> None:
    inlined = inline_refs(
        {
            "type": "array",
            "items": {"anyOf": [{"$ref": "#/$defs/a"}, {"type": "null"}]},
            "$defs": {"a": {"type": "object", "properties": {"b": {"$ref": "#/$defs/b"}}}, "b": {"type": "string"}},
        }
    )
    assert inlined == {
        "type": "array",
        "items": {"anyOf": [{"type": "object", "properties": {"b": {"type": "string"}}}, {"type": "null"}]},
    }


def test_inline_refs_refuses_recursive_definitions() -> None:
    with pytest.raises(DefinitionError, match="recursive") as info:
        inline_refs(
            {"$ref": "#/$defs/node",
             "$defs": {"node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/node"}}}}}
        )
    assert info.value.code == "UNSUPPORTED_SCHEMA"
