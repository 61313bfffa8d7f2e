"""Canonical JSON takes the C encoder only where it writes exactly what the hand-written
encoder writes (issue 11): same text for every value, so digests and confirmation evidence
are unchanged (the ES number forms and UTF-16 key order stay pinned in test_properties)."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from agentsurface._core import jsonvalue
from agentsurface._core.jsonvalue import canonical_json, freeze

keys = st.text(max_size=4) | st.sampled_from(["a", "b", "id", "\U0001f600", "\uffff", "é"])
numbers = (
    st.integers(-(2**60), 2**60)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.floats(-1e17, 1e17, allow_nan=False)
    | st.sampled_from([0.0, -0.0, 1e-4, 9.999e-5, 1e16, 1e16 - 2, 0.1, 5e-324, 123.0])
)
values = st.recursive(
    st.none() | st.booleans() | numbers | st.text(max_size=6),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.lists(inner, max_size=3).map(tuple)
        | st.dictionaries(keys, inner, max_size=4)
        | st.dictionaries(keys, inner, max_size=3).map(freeze)
    ),
    max_leaves=12,
)


@settings(max_examples=600, deadline=None)
@given(values)
def test_the_c_encoder_is_taken_only_where_it_writes_the_same_text(value: Any) -> None:
    if jsonvalue._encodes_alike(value, 0):
        assert jsonvalue._encode_plain(value) == jsonvalue._written(value)


@settings(max_examples=200, deadline=None)
@given(values)
def test_canonical_json_equals_the_hand_written_encoding(value: Any) -> None:
    by_hand = jsonvalue._written(value)
    if jsonvalue._SURROGATE_RE.search(by_hand):
        by_hand = jsonvalue._escape_lone_surrogates(by_hand)
    assert canonical_json(value) == by_hand


def test_the_common_request_shapes_take_the_c_encoder() -> None:
    request = {"capabilityId": "view:a.b", "input": {"ids": ["x"], "limit": 10, "ratio": 0.5}}
    assert jsonvalue._encodes_alike(request, 0)
    assert not jsonvalue._encodes_alike({"n": 1.0}, 0)  # written "1" by ES, "1.0" by repr
    assert not jsonvalue._encodes_alike({"\U0001f600": 1, "\uffff": 2}, 0)  # UTF-16 key order
