"""Hostile agent input and misbehaving handlers: typed results, sanitized messages, the
registry keeps serving. AS-SER-001 (JsonValue-only payloads, size caps fail loudly)."""

from __future__ import annotations

import asyncio
import datetime
import logging
import math
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel

from agentsurface import AgentComponent, CapabilityFailure, Invocation, Limits, action, observation
from agentsurface._core.errors import error
from agentsurface.lowlevel import ActionContract, ComponentContract, ObservationContract

from .helpers import (
    IDS_INPUT,
    DevicesState,
    Gate,
    advance,
    bind_table,
    details_of,
    devices_table,
    make_registry,
    settled,
)

SELECT = "view:devices.table.selectRows"


class Row(BaseModel):
    id: str
    online: bool


READ = "view:devices.table.visibleRows"


def _deep_dict(depth: int) -> dict[str, Any]:
    root: dict[str, Any] = {}
    node = root
    for _ in range(depth):
        node["a"] = {}
        node = node["a"]
    return root


def _deep_list(depth: int) -> list[Any]:
    root: list[Any] = []
    node = root
    for _ in range(depth):
        child: list[Any] = []
        node.append(child)
        node = child
    return root


def _cycle() -> dict[str, Any]:
    loop: dict[str, Any] = {"ids": ["a"]}
    loop["self"] = loop
    return loop


HOSTILE_INPUTS: list[Any] = [
    pytest.param(None, id="none"),
    pytest.param(b'{"ids": ["a"]}', id="bytes"),
    pytest.param('{"ids": ["a"]}', id="json-encoded-string"),
    pytest.param(["a"], id="list"),
    pytest.param(7, id="int"),
    pytest.param(True, id="bool"),
    pytest.param({"ids": "a"}, id="wrong-type"),
    pytest.param({"ids": [1, 2]}, id="wrong-item-type"),
    pytest.param({"ids": []}, id="violates-minItems"),
    pytest.param({"ids": ["a"], "extra": 1}, id="extra-key"),
    pytest.param({"ids": ["a"], "__proto__": {"admin": True}}, id="proto-key"),
    pytest.param({}, id="missing-key"),
    pytest.param({"ids": ["a" * 300_000]}, id="huge-string"),
    pytest.param({"ids": ["x"] * 100_000}, id="huge-array"),
    pytest.param(_deep_dict(10_000), id="10k-deep-dict"),
    pytest.param(_deep_list(10_000), id="10k-deep-list"),
    pytest.param({"ids": [_deep_list(100)]}, id="100-deep"),
    pytest.param(_cycle(), id="cycle"),
    pytest.param({"ids": [math.nan]}, id="nan"),
    pytest.param({"ids": [math.inf]}, id="inf"),
    pytest.param({"ids": [-math.inf]}, id="-inf"),
    pytest.param({"ids": [object()]}, id="object"),
    pytest.param({"ids": [b"a"]}, id="nested-bytes"),
    pytest.param({"ids": {"a", "b"}}, id="set"),
    pytest.param({"ids": [Decimal("1.5")]}, id="decimal"),
    pytest.param({"ids": [datetime.datetime(2026, 1, 1)]}, id="datetime"),
    pytest.param({"ids": [lambda: None]}, id="function"),
    pytest.param({1: ["a"]}, id="int-key"),
    pytest.param({("t",): ["a"]}, id="tuple-key"),
]


@pytest.fixture
def table() -> tuple[Any, DevicesState]:
    contract = devices_table()
    registry = make_registry([contract])
    state = DevicesState()
    registry.register(bind_table(contract, state))
    return registry, state


@pytest.mark.parametrize("hostile", HOSTILE_INPUTS)
async def test_hostile_action_input_is_invalid_input_never_raises_never_runs(
    table: tuple[Any, DevicesState], hostile: Any
) -> None:
    registry, state = table
    result = await registry.invoke({"capabilityId": SELECT, "input": hostile})
    assert result.code == "INVALID_INPUT", result
    assert result.error is not None and result.error.retry == "with-changes"
    issues = details_of(result)["issues"]
    assert issues and all(set(i) == {"path", "message"} for i in issues)
    assert len(str(result.to_json())) < 4000  # the value is never echoed back
    assert state.select_calls == []
    # ...and the registry keeps serving.
    follow = await registry.invoke({"capabilityId": SELECT, "input": {"ids": ["d1"]}})
    assert follow.ok and state.select_calls == [{"ids": ["d1"]}]


@pytest.mark.parametrize("hostile", HOSTILE_INPUTS)
async def test_hostile_observation_input_is_refused_without_reading(
    table: tuple[Any, DevicesState], hostile: Any
) -> None:
    registry, state = table
    result = await registry.invoke({"capabilityId": READ, "input": hostile})
    if hostile is None or hostile == {}:
        assert result.ok  # "no input" spelled as null or {} is fine for an observation
        return
    assert result.code == "INVALID_INPUT"
    assert state.read_calls == 0


@pytest.mark.parametrize(
    "field",
    ["instanceId", "registrationId", "surfaceId", "surfaceVersion", "confirmationId"],
)
@pytest.mark.parametrize("value", [["x"], {"a": 1}, 5, b"x", 1.5])
async def test_hostile_envelope_fields_are_invalid_input(
    table: tuple[Any, DevicesState], field: str, value: Any
) -> None:
    registry, state = table
    result = await registry.invoke({"capabilityId": SELECT, "input": {"ids": ["d1"]}, field: value})
    assert result.code == "INVALID_INPUT"
    assert field in result.error.message
    assert state.select_calls == []


@pytest.mark.parametrize("value", [5, ["x"], "", "x" * 257, None])
async def test_hostile_invocation_ids(table: tuple[Any, DevicesState], value: Any) -> None:
    registry, _state = table
    result = await registry.invoke({"capabilityId": SELECT, "input": {"ids": ["d1"]}, "invocationId": value})
    if value in ("", None):  # absent: the registry mints one
        assert result.ok and result.invocation_id.startswith("inv_")
    else:
        assert result.code == "INVALID_INPUT"


@pytest.mark.parametrize(
    ("value", "code"),
    [
        (5, "CAPABILITY_NOT_FOUND"),
        (None, "CAPABILITY_NOT_FOUND"),
        (["view:devices.table.selectRows"], "CAPABILITY_NOT_FOUND"),
        ({"x": 1}, "CAPABILITY_NOT_FOUND"),
        (b"view:x", "INVALID_INPUT"),  # not even JSON: refused while fingerprinting the request
    ],
)
async def test_hostile_capability_ids_are_typed_errors(
    table: tuple[Any, DevicesState], value: Any, code: str
) -> None:
    registry, state = table
    result = await registry.invoke({"capabilityId": value, "input": {"ids": ["d1"]}})
    assert result.code == code
    assert state.select_calls == []


JSON_SCALARS = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=20)
ANY_VALUES = st.recursive(
    JSON_SCALARS | st.binary(max_size=5),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(st.text(max_size=5) | st.integers(), children, max_size=4)
    ),
    max_leaves=20,
)


@given(value=ANY_VALUES)
async def test_arbitrary_values_never_raise_and_only_valid_ids_run(value: Any) -> None:
    contract = devices_table()
    registry = make_registry([contract])
    state = DevicesState()
    registry.register(bind_table(contract, state))
    result = await registry.invoke({"capabilityId": SELECT, "input": value})
    valid = (
        isinstance(value, dict)
        and set(value) == {"ids"}
        and isinstance(value["ids"], list)
        and len(value["ids"]) >= 1
        and all(isinstance(i, str) for i in value["ids"])
    )
    assert result.ok is valid
    assert len(state.select_calls) == (1 if valid else 0)


async def test_pydantic_typed_action_rejects_coercion_and_json_strings() -> None:
    class Pager(AgentComponent, type="conf.pager", description="pager"):
        def __init__(self) -> None:
            self.pages: list[int] = []

        @action("Go to a page")
        def go(self, page: int) -> None:
            self.pages.append(page)

    registry = make_registry([Pager])
    pager = Pager()
    registry.register(pager)
    for hostile in ({"page": "3"}, {"page": 3.5}, {"page": True}, '{"page": 3}', {"page": 3, "x": 1}, None):
        result = await registry.invoke({"capabilityId": "view:conf.pager.go", "input": hostile})
        assert result.code == "INVALID_INPUT", hostile
    assert (await registry.invoke({"capabilityId": "view:conf.pager.go", "input": {"page": 3}})).ok
    assert pager.pages == [3]


# --------------------------------------------------------------------------- handlers


def widget(output: Any = None, **options: Any) -> ComponentContract:  # options: ActionContract
    return ComponentContract(
        type="conf.faulty",
        description="a handler that misbehaves on demand",
        observations={"peek": ObservationContract("peek", output={"type": "object"})},
        actions={"run": ActionContract("run", input={"type": "object"}, output=output, **options)},
    )


def faulty_registry(
    handler: Any,
    *,
    output: Any = None,
    limits: Limits | None = None,
    timeout: float | None = None,
    **options: Any,
) -> Any:
    contract = widget(output, timeout=timeout)
    registry = make_registry([contract], limits=limits or Limits(), **options)
    box = {"handler": handler}
    registry.register(
        contract.bind(
            observations={"peek": lambda ctx: {"ok": True}},
            actions={"run": lambda value, ctx: box["handler"](value, ctx)},
        )
    )
    return registry, box


RUN = {"capabilityId": "view:conf.faulty.run", "input": {}}


async def assert_keeps_serving(registry: Any, box: dict[str, Any]) -> None:
    box["handler"] = lambda value, ctx: {"fine": True}
    after = await registry.invoke(RUN)
    assert after.ok, after
    assert (await registry.invoke({"capabilityId": "view:conf.faulty.peek"})).ok


async def test_handler_plain_exception_is_sanitized_execution_failed(
    caplog: pytest.LogCaptureFixture,
) -> None:
    def boom(value: Any, ctx: Any) -> None:
        raise ValueError("SELECT * FROM users WHERE password='secret' -- at /srv/app.py line 12")

    registry, box = faulty_registry(boom)
    with caplog.at_level(logging.ERROR, logger="agentsurface"):
        result = await registry.invoke(RUN)
    assert result.code == "EXECUTION_FAILED"
    assert result.error is not None and result.error.retry == "no"
    assert details_of(result) == {"reason": "handler-error"}
    text = str(result.to_json())
    assert "SELECT" not in text and "secret" not in text and "/srv" not in text
    # The operator channel keeps the cause.
    assert any("secret" in (r.exc_text or "") or r.exc_info for r in caplog.records)
    await assert_keeps_serving(registry, box)


async def test_async_handler_exception_is_sanitized_execution_failed() -> None:
    async def boom(value: Any, ctx: Any) -> None:
        await asyncio.sleep(0)
        raise KeyError("internal-key-0xdeadbeef")

    registry, box = faulty_registry(boom)
    result = await registry.invoke(RUN)
    assert result.code == "EXECUTION_FAILED"
    assert "deadbeef" not in str(result.to_json())
    await assert_keeps_serving(registry, box)


@pytest.mark.parametrize(
    "raised",
    [
        error("PRECONDITION_FAILED", "Select a row first.", reason="precondition"),
        error("NOT_AUTHORIZED", "Only owners may do that.", origin="client"),
        error("EXECUTION_FAILED", "The service is busy; retry in a minute.", "after-delay", transient=True),
        error("CAPABILITY_NOT_AVAILABLE", "The table is loading.", reason="loading"),
    ],
)
async def test_handler_agentsurface_error_is_relayed_verbatim(raised: Any) -> None:
    def refuse(value: Any, ctx: Any) -> None:
        raise CapabilityFailure(raised)

    registry, box = faulty_registry(refuse)
    result = await registry.invoke(RUN)
    assert result.error == raised
    await assert_keeps_serving(registry, box)


async def test_hanging_handler_times_out_and_the_registry_keeps_serving() -> None:
    never = Gate()

    async def hang(value: Any, ctx: Any) -> None:
        await never.run()

    registry, box = faulty_registry(lambda v, c: hang(v, c), timeout=4.0)
    pending = asyncio.ensure_future(registry.invoke(RUN))
    await advance(registry, 4.0)
    result = await settled(pending)
    assert result.code == "TIMEOUT"
    await assert_keeps_serving(registry, box)


@pytest.mark.parametrize(
    "value",
    [
        pytest.param({1, 2}, id="set"),
        pytest.param(object(), id="object"),
        pytest.param({"n": math.nan}, id="nan"),
        pytest.param({"n": math.inf}, id="inf"),
        pytest.param({"when": datetime.datetime(2026, 1, 1)}, id="datetime"),
        pytest.param({1: "int key"}, id="int-key"),
        pytest.param(b"bytes", id="bytes"),
        pytest.param(_cycle(), id="cycle"),
        pytest.param(_deep_list(10_000), id="10k-deep"),
    ],
)
@pytest.mark.parametrize("environment", ["production", "development", "test"])
async def test_AS_SER_001_non_json_output_is_execution_failed(
    value: Any, environment: str, caplog: pytest.LogCaptureFixture
) -> None:
    registry, box = faulty_registry(lambda v, c: value, environment=environment)
    with caplog.at_level(logging.ERROR, logger="agentsurface"):
        result = await registry.invoke(RUN)
    assert result.code == "EXECUTION_FAILED"
    assert details_of(result) == {"reason": "output-invalid"}
    assert any(r.levelno >= logging.ERROR for r in caplog.records)  # the defect is logged
    await assert_keeps_serving(registry, box)


async def test_AS_SER_001_output_over_the_cap_fails_loudly_never_truncated() -> None:
    limits = Limits(max_output_bytes=1000)
    registry, box = faulty_registry(lambda v, c: {"blob": "x" * 2000}, limits=limits)
    result = await registry.invoke(RUN)
    assert result.code == "EXECUTION_FAILED"
    assert details_of(result) == {"reason": "output-too-large"}
    assert "1000" in result.error.message
    assert "xxxx" not in str(result.to_json())
    # Exactly at the cap passes (the cap counts compact UTF-8 JSON bytes).
    box["handler"] = lambda v, c: {"b": "x" * (1000 - len('{"b":""}'))}
    assert (await registry.invoke(RUN)).ok
    box["handler"] = lambda v, c: {"b": "é" * 600}  # 1200 bytes in UTF-8, 600 characters
    assert details_of(await registry.invoke(RUN)) == {"reason": "output-too-large"}
    # Small and shallow, so sized by a bound: one integer of 1,500 digits is no small number.
    box["handler"] = lambda v, c: {"n": 10**1500}
    assert details_of(await registry.invoke(RUN)) == {"reason": "output-too-large"}
    box["handler"] = lambda v, c: {"n": [1, 2, -(10**1500)]}
    assert details_of(await registry.invoke(RUN)) == {"reason": "output-too-large"}
    await assert_keeps_serving(registry, box)


async def test_AS_SER_001_default_cap_applies_to_observations() -> None:
    contract = ComponentContract(
        type="conf.big",
        description="big",
        observations={"dump": ObservationContract("dump", output={"type": "array"})},
    )
    registry = make_registry([contract])
    registry.register(contract.bind(observations={"dump": lambda ctx: ["y" * 100] * 400}))  # ~41 kB
    result = await registry.invoke({"capabilityId": "view:conf.big.dump"})
    assert result.code == "EXECUTION_FAILED"
    assert details_of(result) == {"reason": "output-too-large"}


async def test_AS_SER_001_output_violating_its_schema_is_execution_failed() -> None:
    schema = {"type": "object", "properties": {"count": {"type": "integer"}}, "required": ["count"]}
    registry, box = faulty_registry(lambda v, c: {"count": "three"}, output=schema)
    result = await registry.invoke(RUN)
    assert result.code == "EXECUTION_FAILED"
    assert details_of(result) == {"reason": "output-invalid"}
    assert "three" not in str(result.to_json())
    box["handler"] = lambda v, c: {"count": 3}
    good = await registry.invoke(RUN)
    assert good.ok and good.output == {"count": 3}
    box["handler"] = lambda v, c: None  # a declared output schema makes "nothing" invalid too
    assert details_of(await registry.invoke(RUN)) == {"reason": "output-invalid"}


async def test_AS_SER_001_observation_output_is_validated_and_models_are_serialized() -> None:
    class Board(AgentComponent, type="conf.board", description="board"):
        def __init__(self) -> None:
            self.rows: Any = [Row(id="d1", online=True)]

        @observation("Rows")
        def rows_now(self) -> list[Row]:
            return self.rows  # type: ignore[no-any-return]

    registry = make_registry([Board])
    board = Board()
    registry.register(board)
    ok = await registry.invoke({"capabilityId": "view:conf.board.rowsNow"})
    assert ok.ok and ok.output == [{"id": "d1", "online": True}]
    board.rows = [{"id": 5}]
    bad = await registry.invoke({"capabilityId": "view:conf.board.rowsNow"})
    assert bad.code == "EXECUTION_FAILED" and details_of(bad) == {"reason": "output-invalid"}


async def test_AS_SER_001_tuple_output_is_json_array_and_results_are_plain_json() -> None:
    registry, _box = faulty_registry(lambda v, c: {"pair": (1, 2), "nested": {"t": ("a",)}})
    result = await registry.invoke(RUN)
    assert result.ok
    assert result.output == {"pair": [1, 2], "nested": {"t": ["a"]}}


async def test_invocation_objects_are_accepted_like_the_wire_form() -> None:
    contract = devices_table()
    registry = make_registry([contract])
    state = DevicesState()
    registry.register(bind_table(contract, state))
    result = await registry.invoke(Invocation(capability_id=SELECT, input={"ids": ["d9"]}))
    assert result.ok and state.select_calls == [{"ids": ["d9"]}]
    assert IDS_INPUT["required"] == ["ids"]
