"""The page's pydantic-free schemas of simple hints, held side by side with pydantic's: the same
JSON Schema (so the same contract digest), the same typed value for every value they prove
valid, and pydantic's own answer for everything else."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal, Optional

import pytest
from annotated_types import Ge, Gt, Interval, Le, Lt, MaxLen, MinLen
from hypothesis import given, settings
from hypothesis import strategies as st

from agentsurface._core.contracts.signatures import Signature, _model_name
from agentsurface._core.jsonvalue import thaw
from agentsurface._core.schemas.schema import Invalid, ModelSchema, Valid
from agentsurface._core.schemas.simple_hints import (
    SimpleHintSchema,
    SimpleParamsSchema,
    simple_json_schema,
    simple_output_json_schema,
    simple_schema,
)


@dataclass
class Point:  # a record an observation returns (dataclass: pydantic writes its schema as a model's)
    x: str
    z: int | None = None


@dataclass(frozen=True)
class Tagged:
    ids: Annotated[list[str], MaxLen(2)]
    mode: Literal["a", "b"] = "a"


@dataclass
class Documented:
    """A docstring of its own: pydantic writes it as the description."""

    x: str


@dataclass
class Nested:
    x: Point


@dataclass
class Factory:
    ids: list[str] = field(default_factory=list)


SIMPLE: list[Any] = [
    str,
    int,
    float,
    bool,
    list[str],
    list[int],
    list[float],
    list[list[bool]],
    Literal["a", "b"],
    Literal["only"],
    Literal[1, 2, 3],
    Optional[str],  # noqa: UP045 (the spelling pydantic sees as well)
    str | None,
    list[int] | None,
    float | None,
    list[str | None],
    Literal["a"] | None,
    Literal["a", "b"] | None,
    Literal[1, 2] | None,
    Annotated[str, MaxLen(1)],
    Annotated[str, MinLen(1), MaxLen(4)] | None,
    Annotated[list[str], MinLen(1), MaxLen(2)],
    list[Annotated[str, MaxLen(2)]],
    Annotated[int, Ge(1), Lt(3)],
    Annotated[float, Gt(0), Le(2.5)] | None,
]
# Records (dataclasses of simple fields): an observation's or action's output, never an input.
RECORDS: list[Any] = [Point, list[Point], Point | None, Tagged, list[Tagged] | None]
NOT_SIMPLE: list[Any] = [
    Literal["a", 1],
    Literal[True],
    str | int,
    str | int | None,
    dict[str, int],
    tuple[int, ...],
    set[str],
    Any,
    bytes,
    Annotated[str, Interval(ge=1)],  # grouped metadata: left to pydantic
    Annotated[int, MaxLen(2)],  # a length of a number
    Annotated[str, Ge(1)],  # a bound of a string
    Annotated[str, MaxLen(2), MaxLen(3)],
    Annotated[Literal["a"], MaxLen(2)],
    Point,  # a record as an input
]
NOT_SIMPLE_OUTPUTS: list[Any] = [Documented, Nested, Factory, list[Nested]]

JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**40), 2**40)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.sampled_from(["a", "b", "only", "", "\ud800"])
    | st.sampled_from([1, 2, 3]),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.sampled_from(["ids", "mode", "x", "z"]), inner, max_size=3)
    ),
    max_leaves=6,
)


def _same(ours: Any, theirs: Any) -> None:
    assert type(ours) is type(theirs)
    if isinstance(theirs, Valid):
        assert ours.json == theirs.json
        assert _typed(ours.value) == _typed(theirs.value)
    else:
        assert ours == theirs


def _typed(value: Any) -> Any:
    """A value with its types spelled out (1 == 1.0 == True in Python)."""
    if isinstance(value, list):
        return [_typed(v) for v in value]
    if isinstance(value, dict):
        return {k: _typed(v) for k, v in value.items()}
    if hasattr(value, "__dict__") and not isinstance(value, type):
        return {k: _typed(v) for k, v in vars(value).items() if not k.startswith("_")}
    return (type(value).__name__, value)


@pytest.mark.parametrize("hint", SIMPLE, ids=str)
def test_a_simple_hint_has_pydantics_json_schema(hint: Any) -> None:
    assert simple_json_schema(hint) == thaw(ModelSchema(hint).json_schema)
    assert simple_output_json_schema(hint) == thaw(ModelSchema(hint).json_schema)


@pytest.mark.parametrize("hint", RECORDS, ids=str)
def test_a_record_output_has_pydantics_json_schema(hint: Any) -> None:
    assert simple_output_json_schema(hint) == thaw(ModelSchema(hint).json_schema)
    assert simple_json_schema(hint) is None  # never an input: pydantic makes the handler's instance


@pytest.mark.parametrize("hint", NOT_SIMPLE, ids=str)
def test_anything_else_is_left_to_pydantic(hint: Any) -> None:
    assert simple_json_schema(hint) is None
    if hint is not Point:
        assert simple_schema(hint) is None


@pytest.mark.parametrize("hint", NOT_SIMPLE_OUTPUTS, ids=str)
def test_records_outside_the_simple_set_are_left_to_pydantic(hint: Any) -> None:
    assert simple_output_json_schema(hint) is None
    assert simple_schema(hint) is None


@pytest.mark.parametrize("hint", SIMPLE + RECORDS, ids=str)
@settings(max_examples=60, deadline=None)
@given(value=JSON)
def test_a_value_gets_pydantics_answer(hint: Any, value: Any) -> None:
    ours = simple_schema(hint)
    assert isinstance(ours, SimpleHintSchema)
    theirs = ModelSchema(hint)
    _same(ours.validate(value), theirs.validate(value))


RECORD_VALUES = st.builds(Point, st.sampled_from(["a", "", "\ud800"]), st.none() | st.integers(0, 3)) | st.builds(
    Tagged, st.lists(st.sampled_from(["a", "b"]), max_size=3), st.sampled_from(["a", "b", "c"])
)


@pytest.mark.parametrize("hint", SIMPLE + RECORDS, ids=str)
@settings(max_examples=40, deadline=None)
@given(
    value=JSON
    | st.tuples(st.integers())
    | st.sampled_from(["1", "1.5", "true"])
    | RECORD_VALUES
    | st.lists(RECORD_VALUES, max_size=2)
)
def test_an_output_gets_pydantics_answer(hint: Any, value: Any) -> None:
    ours = simple_schema(hint)
    assert ours is not None
    _same(ours.validate_output(value), ModelSchema(hint).validate_output(value))


class _Methods:
    def select(self, ids: list[str], mode: Literal["replace", "add"] = "replace") -> None: ...
    def scale(self, x: float, z: int | None = None, label: str = "s", on: bool = False) -> None: ...
    def nothing(self) -> None: ...
    def points(self, values: list[float], limit: int = 3) -> None: ...
    def bounded(
        self,
        ids: Annotated[list[Annotated[str, MaxLen(1)]], MaxLen(2)],
        x: Annotated[str, MinLen(1)] | None = None,
        z: Annotated[int, Ge(0), Le(2)] = 1,
    ) -> None: ...


METHODS = [_Methods.select, _Methods.scale, _Methods.nothing, _Methods.points, _Methods.bounded]


@pytest.mark.parametrize("method", METHODS, ids=lambda m: m.__name__)
@settings(max_examples=80, deadline=None)
@given(value=JSON)
def test_parameters_get_pydantics_schema_and_answer(method: Any, value: Any) -> None:
    sig = Signature(method, f"t.x.{method.__name__}")
    where = f"t.x.{method.__name__}"
    ours = SimpleParamsSchema.build(_model_name(where), sig.fields)
    assert ours is not None
    theirs = sig.input_schema(where)  # CPython: pydantic's create_model
    assert thaw(ours.json_schema) == thaw(theirs.json_schema)
    mine, pydantics = ours.validate(value), theirs.validate(value)
    _same(mine, pydantics)
    if isinstance(mine, Valid):  # the handler receives the same keyword arguments
        assert _typed(sig.call_args(mine.value, None)) == _typed(sig.call_args(pydantics.value, None))


def test_a_valid_call_converts_without_pydantic_and_an_invalid_one_gets_its_issues() -> None:
    sig = Signature(_Methods.scale, "t.x.scale")
    ours = SimpleParamsSchema.build("ScaleInput", sig.fields)
    assert ours is not None
    valid = ours.validate({"x": 2})
    assert isinstance(valid, Valid)
    assert sig.call_args(valid.value, None) == {"x": 2.0, "z": None, "label": "s", "on": False}
    assert type(valid.value.x) is float
    assert "_pydantic" not in vars(ours)  # proven valid: pydantic never asked
    invalid = ours.validate({"x": "2", "extra": 1})
    assert isinstance(invalid, Invalid)
    assert {issue.path for issue in invalid.issues} == {"/x", "/extra"}


def test_a_valid_record_output_is_proven_without_pydantic() -> None:
    for hint, value, plain in (
        (list[Point], [Point("a", 1), Point("b")], [{"x": "a", "z": 1}, {"x": "b", "z": None}]),
        (Point | None, Point("a"), {"x": "a", "z": None}),
        (Tagged, Tagged(["a"], "b"), {"ids": ["a"], "mode": "b"}),
    ):
        ours = simple_schema(hint)
        assert ours is not None
        valid = ours.validate_output(value)
        assert isinstance(valid, Valid) and valid.json == plain
        assert "_pydantic" not in vars(ours)  # proven valid: pydantic never asked
    too_many = simple_schema(Tagged)
    assert too_many is not None  # not proven (maxItems 2): pydantic's answer, whatever it is
    _same(too_many.validate_output(Tagged(["a", "b", "c"])), ModelSchema(Tagged).validate_output(Tagged(["a", "b", "c"])))
    assert "_pydantic" in vars(too_many)


def test_defaults_and_names_outside_the_simple_set_are_left_to_pydantic() -> None:
    assert SimpleParamsSchema.build("A", {"ids": (list[str], [])}) is None  # a mutable default
    assert SimpleParamsSchema.build("A", {"x": (float, 1)}) is None  # an int default of a float
    assert SimpleParamsSchema.build("A", {"x": (str, None)}) is None  # None for a non-optional
    assert SimpleParamsSchema.build("A", {"x": (float, math.inf)}) is None  # not JSON
    assert SimpleParamsSchema.build("A", {"_x": (int, ...)}) is None


def _readme_table() -> type:
    from agentsurface import AgentComponent, action, observation

    class DevicesTable(AgentComponent, type="devices.table", description="The devices table"):
        def __init__(self, rows: list[str]) -> None:
            self.rows, self.selected, self.zoomed = rows, [], []

        @observation("Ids of the rows currently shown")
        def visible_rows(self) -> list[str]:
            return self.rows

        @action("Select rows by id")
        def select_rows(self, ids: list[str], mode: Literal["replace", "add"] = "replace") -> None:
            self.selected = ids

        @action("Zoom")
        def zoom(self, factor: float, steps: int | None = None) -> float:
            self.zoomed.append((factor, steps))
            return factor

    return DevicesTable


def test_a_component_defined_the_pages_way_has_the_same_contract_and_gets_typed_values(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import asyncio

    from agentsurface import AgentSurfaceRegistry, CapabilityAuthority, Consumer, Invocation, compile_manifest
    from agentsurface._core.schemas import simple_hints

    with_pydantic = _readme_table()
    monkeypatch.setattr(simple_hints, "SIMPLE_HINTS", True)
    in_the_page = _readme_table()
    contract = in_the_page.contract
    assert contract.to_json() == with_pydantic.contract.to_json()  # the same digest, the same contract.json
    assert isinstance(contract.actions["zoom"].input, SimpleParamsSchema)
    assert isinstance(contract.observations["visibleRows"].output, SimpleHintSchema)

    registry = AgentSurfaceRegistry(authority=CapabilityAuthority.from_manifest(compile_manifest([with_pydantic])))
    table = in_the_page(["dev-1"])
    registry.register(table)  # the reviewed manifest accepts the page's contract
    consumer = Consumer("agent", "webmcp")
    result = asyncio.run(
        registry.invoke(Invocation("view:devices.table.zoom", {"factor": 2}), consumer=consumer)
    )
    assert result.ok, result
    assert table.zoomed == [(2.0, None)] and type(table.zoomed[0][0]) is float
