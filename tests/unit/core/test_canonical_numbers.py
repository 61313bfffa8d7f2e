"""Canonical JSON writes numbers and strings as JavaScript does, so one value has one text and one
digest on both sides (numbers, lone surrogates, key order)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentsurface import AgentSurfaceRegistry, CapabilityAuthority, compile_manifest
from agentsurface._core.jsonvalue import canonical_json, digest, json_size
from agentsurface.lowlevel import ActionContract, ComponentContract

# What JavaScript's JSON.stringify writes for these numbers (ES Number::toString).
JS_NUMBER_TEXT = [
    (1e20, "100000000000000000000"),
    (10**20, "100000000000000000000"),
    (2.0**53, "9007199254740992"),
    (2**53, "9007199254740992"),
    (2**53 + 1, "9007199254740992"),  # read as JavaScript reads it: the nearest double
    (2**64, "18446744073709552000"),
    (1e21, "1e+21"),
    (10**21, "1e+21"),
    (1.5e16, "15000000000000000"),
    (100.0, "100"),
    (-0.0, "0"),
    (0.1, "0.1"),
    (123.456, "123.456"),
    (1e-6, "0.000001"),
    (1e-7, "1e-7"),
    (-1.25e-7, "-1.25e-7"),
    (0.00012, "0.00012"),
    (5e-324, "5e-324"),
    (1.7976931348623157e308, "1.7976931348623157e+308"),
    (2.5e21, "2.5e+21"),
]


@pytest.mark.parametrize(("number", "text"), JS_NUMBER_TEXT)
def test_canonical_json_writes_numbers_as_javascript_does(number: float, text: str) -> None:
    assert canonical_json(number) == text
    assert canonical_json({"n": number}) == f'{{"n":{text}}}'


def test_one_number_has_one_canonical_form_and_digest() -> None:
    assert canonical_json({"x": 1e20}) == canonical_json({"x": 10**20})
    assert digest({"x": 1e20}) == digest({"x": 10**20})
    assert digest([2.0**53]) == digest([2**53])


def test_a_lone_surrogate_gets_an_escaped_canonical_form_and_a_digest() -> None:
    assert canonical_json("a\ud800b") == '"a\\ud800b"'
    assert canonical_json({"k\udfff": "\udbff"}) == '{"k\\udfff":"\\udbff"}'
    assert digest("\ud800") != digest("\ud801")
    assert digest("\ud800").startswith("sha256:")
    # A surrogate pair is one character to JavaScript: written as the character itself.
    assert canonical_json("\ud83d\ude00") == canonical_json("\U0001f600") == '"\U0001f600"'
    assert json_size("\ud800") == len('"\\ud800"')


def test_canonical_keys_sort_by_utf16_code_unit_like_javascript() -> None:
    # U+1F600 is D83D DE00 in UTF-16, which sorts before U+FF01 (code points say otherwise).
    assert canonical_json({"\uff01": 1, "\U0001f600": 2}) == '{"\U0001f600":2,"\uff01":1}'


def test_canonical_json_still_refuses_what_is_not_json() -> None:
    with pytest.raises(ValueError):
        canonical_json(float("nan"))
    with pytest.raises(ValueError):
        canonical_json(10**400)
    with pytest.raises(TypeError):
        canonical_json({1: "a"})
    with pytest.raises(TypeError):
        canonical_json({"a"})


async def test_an_input_with_a_lone_surrogate_is_answered_not_crashed() -> None:
    notes = ComponentContract(
        type="app.notes",
        description="Notes",
        actions={
            "write": ActionContract(
                "Write a note",
                input={"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
            )
        },
    )
    written: list[str] = []
    registry = AgentSurfaceRegistry(authority=CapabilityAuthority.from_manifest(compile_manifest([notes])))
    registry.register(notes.bind(actions={"write": lambda value, ctx: written.append(value["text"])}))
    result = await registry.invoke({"capabilityId": "view:app.notes.write", "input": {"text": "x\ud800"}})
    assert result.ok, result.to_json()
    assert written == ["x\ud800"]


@settings(max_examples=500, deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False))
def test_every_float_has_one_canonical_text_that_reads_back_as_itself(number: float) -> None:
    text = canonical_json(number)
    assert float(json.loads(text)) == number
    if number.is_integer() and abs(number) < 1e21:
        assert text.lstrip("-").isdigit()  # integral values below 1e21: no point, no exponent
        assert canonical_json(int(number)) == text
    if number.is_integer() and abs(number) <= 2**53:
        assert text == str(int(number))  # exact within the safe range


@settings(max_examples=500, deadline=None)
@given(st.integers(min_value=-(2**1023), max_value=2**1023))
def test_an_int_and_the_double_javascript_reads_it_as_share_one_canonical_text(number: int) -> None:
    assert canonical_json(number) == canonical_json(float(number))
    assert digest([number]) == digest([float(number)])
