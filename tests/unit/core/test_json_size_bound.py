"""``shallow_json_bound``: an upper bound of a small shallow value's JSON size, worked out
without encoding it. The pipeline trusts it to skip encoding a call's input and output; a bound
below the true size would let a value past a size limit."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from agentsurface._core.jsonvalue import (
    NOT_PLAIN,
    json_size,
    json_size_at_most,
    plain_copy,
    shallow_json_bound,
    to_json_value,
)

SAFE = 2**53
# Every character a JSON writer escapes or widens: controls, quotes, backslashes, non-ASCII,
# lone surrogates (sized as their escape) and astral characters (4 bytes in UTF-8).
TEXT = st.text(
    st.characters(codec=None, exclude_categories=()) | st.sampled_from(["\x00", "\x1f", '"', "\\", "\ud800"]),
    max_size=12,
)
SCALAR = (
    st.none()
    | st.booleans()
    | st.integers(-SAFE, SAFE)
    | st.integers(min_value=-(10**40), max_value=10**40)  # to_json_value keeps these (not plain)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.floats(min_value=-1e-300, max_value=1e-300, allow_nan=False)
    | TEXT
)
SHALLOW = st.dictionaries(TEXT, SCALAR | st.lists(SCALAR, max_size=16), max_size=16)


@settings(max_examples=600, deadline=None)
@given(value=SHALLOW)
def test_the_bound_of_a_shallow_value_is_never_below_its_size(value: dict[str, Any]) -> None:
    copied = to_json_value(value)  # as the pipeline's outputs without a schema are
    bound = shallow_json_bound(copied)
    if any(type(v) is int and abs(v) > SAFE for v in _scalars(copied)):
        assert bound == -1  # an integer JavaScript cannot hold is sized by encoding it
        return
    assert bound >= json_size(copied) >= 2
    assert json_size_at_most(copied, bound)
    if plain_copy(value) is not NOT_PLAIN:
        assert shallow_json_bound(plain_copy(value)) == bound


def _scalars(value: dict[str, Any]) -> list[Any]:
    return [x for v in value.values() for x in (v if type(v) is list else [v])]


def test_the_widest_scalars_stay_within_the_bound() -> None:
    widest = {
        "\x00": "\x1f" * 16,
        "k": -2.2250738585072014e-308,
        "i": -(2**53),
        "s": ["\ud800", "\U0001f600", 5e-324, None, False],
    }
    assert shallow_json_bound(widest) >= json_size(widest)


def test_anything_else_is_sized_by_encoding() -> None:
    nested = {"a": {"b": 1}}
    too_many = dict.fromkeys(map(str, range(17)), 1)
    long_list = {"a": list(range(17))}
    deep_list = {"a": [[1]]}
    huge = {"n": 10**400}  # to_json_value keeps it: 401 digits
    for value in (nested, too_many, long_list, deep_list, huge, {"a": [2**53 + 1]}, [1, 2], "text", 3):
        assert shallow_json_bound(value) == -1
    assert not json_size_at_most(huge, 100)
    assert json_size_at_most(too_many, json_size(too_many))
    assert not json_size_at_most(too_many, json_size(too_many) - 1)


def test_a_limit_below_the_bound_is_decided_by_the_exact_size() -> None:
    value = {"n": 0}  # 7 bytes; bounded by 2 + 6 + 4 + 24 = 36
    assert shallow_json_bound(value) == 36 and json_size(value) == 7
    assert json_size_at_most(value, 7)
    assert not json_size_at_most(value, 6)
