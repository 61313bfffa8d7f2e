"""The compiled acceptance check of raw JSON Schemas (issue 11) never accepts what the Draft
2020-12 validator rejects, and it does take the common valid inputs (so the fast path is real).
Rejected values keep jsonschema's issues: validation itself is unchanged (AS-SCHEMA-*)."""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentsurface._core.jsonvalue import freeze
from agentsurface._core.schemas.accept import compile_accept
from agentsurface.lowlevel import Invalid, schema_from_json

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-5, 5)
    | st.floats(-5, 5, allow_nan=False)
    | st.sampled_from(["", "a", "ab", "abc", "x1", "A"]),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(["a", "b", "c"]), inner, max_size=3)
    ),
    max_leaves=8,
)
names = st.sampled_from(["a", "b", "c"])
leaf_schemas = st.fixed_dictionaries(
    {},
    optional={
        "type": st.sampled_from(["object", "array", "string", "number", "integer", "boolean", "null"])
        | st.lists(
            st.sampled_from(["string", "integer", "null", "boolean"]), min_size=1, max_size=2, unique=True
        ),
        "minLength": st.integers(0, 3),
        "maxLength": st.integers(0, 3),
        "minItems": st.integers(0, 2),
        "maxItems": st.integers(0, 2),
        "minimum": st.integers(-2, 2) | st.floats(-2, 2),
        "maximum": st.integers(-2, 2),
        "exclusiveMinimum": st.integers(-2, 2),
        "exclusiveMaximum": st.floats(-2, 2),
        "pattern": st.sampled_from(["^a", "b", "[0-9]$"]),
        "enum": st.lists(json_values, min_size=1, max_size=3),
        "const": json_values,
        "required": st.lists(names, max_size=2, unique=True),
        "description": st.just("annotation only"),
    },
)
schemas = st.recursive(
    leaf_schemas,
    lambda inner: st.fixed_dictionaries(
        {},
        optional={
            "properties": st.dictionaries(names, inner, max_size=2),
            "additionalProperties": st.booleans() | inner,
            "items": inner,
            "anyOf": st.lists(inner, min_size=1, max_size=2),
            "type": st.sampled_from(["object", "array"]),
            "required": st.lists(names, max_size=2, unique=True),
        },
    ),
    max_leaves=4,
)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schema=schemas, value=json_values)
def test_the_compiled_check_never_accepts_what_jsonschema_rejects(schema: dict[str, Any], value: Any) -> None:
    accept = compile_accept(freeze(schema))  # contracts hold their schemas frozen
    if accept is not None and accept(value):
        assert jsonschema.Draft202012Validator(schema).is_valid(value), (schema, value)


POKE = {
    "type": "object",
    "properties": {"ids": {"type": "array", "items": {"type": "string"}, "minItems": 1}},
    "required": ["ids"],
    "additionalProperties": False,
}


@pytest.mark.parametrize(
    ("schema", "value"),
    [
        (POKE, {"ids": ["a", "b"]}),
        ({"type": "object", "properties": {"n": {"type": "number"}}, "required": ["n"]}, {"n": 1.5}),
        ({"type": "string", "enum": ["on", "off"]}, "on"),
        ({"anyOf": [{"type": "string"}, {"type": "null"}]}, None),
        ({"type": "integer", "minimum": 0, "maximum": 10}, 10),
    ],
)
def test_common_valid_inputs_take_the_compiled_path(schema: dict[str, Any], value: Any) -> None:
    for form in (schema, freeze(schema)):
        accept = compile_accept(form)
        assert accept is not None and accept(value)


@pytest.mark.parametrize(
    ("schema", "value"),
    [
        (POKE, {"ids": []}),
        (POKE, {"ids": ["a"], "extra": 1}),
        (POKE, {"ids": [1]}),
        ({"type": "integer"}, True),  # a boolean is not an integer
        ({"type": "number", "minimum": 0}, -1),
        ({"enum": [1]}, True),  # 1 == True in Python, not in JSON
        ({"type": "string", "maxLength": 2}, "abc"),
        ({"type": "string", "pattern": "^a"}, "ba"),
    ],
)
def test_rejected_values_still_get_jsonschema_issues(schema: dict[str, Any], value: Any) -> None:
    accept = compile_accept(schema)
    assert accept is None or not accept(value)
    result = schema_from_json(schema).validate(value)
    assert isinstance(result, Invalid) and result.issues


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "string", "format": "date"},
        {"type": "array", "uniqueItems": True},
        {"type": "number", "multipleOf": 2},
        {"$defs": {"a": {"type": "string"}}, "$ref": "#/$defs/a"},
    ],
)
def test_keywords_left_to_jsonschema_are_not_compiled(schema: dict[str, Any]) -> None:
    assert compile_accept(schema) is None


# The common object and array shapes are checked by one function each (accept.py): over
# properties whose own checks are exact, that function answers exactly what jsonschema does.
exact_leaves = st.sampled_from(
    [{"type": "string"}, {"type": "boolean"}, {"type": "null"}, {"type": "array", "items": {"type": "string"}}]
)
object_shapes = st.fixed_dictionaries(
    {"type": st.just("object")},
    optional={
        "properties": st.dictionaries(names, exact_leaves, max_size=3),
        "required": st.lists(names, max_size=3, unique=True),
        "additionalProperties": st.booleans(),
        "title": st.just("annotation only"),
    },
)
array_shapes = st.fixed_dictionaries(
    {"type": st.just("array"), "items": exact_leaves | object_shapes},
    optional={"minItems": st.integers(0, 2), "maxItems": st.integers(0, 2)},
)
shaped_values = st.recursive(
    st.none() | st.booleans() | st.integers(-2, 2) | st.sampled_from(["", "a"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(["a", "b", "c", "d"]), inner, max_size=4),
    max_leaves=8,
)


@settings(max_examples=400, deadline=None)
@given(schema=object_shapes | array_shapes, value=shaped_values)
def test_the_one_function_checks_of_common_shapes_answer_as_jsonschema(schema: dict[str, Any], value: Any) -> None:
    accept = compile_accept(freeze(schema))
    assert accept is not None, schema
    assert accept(value) == jsonschema.Draft202012Validator(schema).is_valid(value), (schema, value)
