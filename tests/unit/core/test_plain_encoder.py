"""``plain_encoder``: json's C encoder built once, for values known to be plain JSON. It must
write exactly what ``json.dumps`` with the same options writes, and refuse what it refuses."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentsurface._core import jsonvalue
from agentsurface._core.jsonvalue import plain_encoder

PLAIN = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=20,
)
OPTIONS = [
    {"sort_keys": False, "ensure_ascii": False},
    {"sort_keys": True, "ensure_ascii": False},
    {"sort_keys": False, "ensure_ascii": True},
]


@pytest.mark.parametrize("options", OPTIONS)
@given(value=PLAIN)
def test_it_writes_what_json_dumps_writes(options: dict[str, bool], value: Any) -> None:
    assert plain_encoder(**options)(value) == json.dumps(value, separators=(",", ":"), **options)


@pytest.mark.parametrize("accelerated", [True, False])
def test_it_refuses_what_json_refuses(monkeypatch: pytest.MonkeyPatch, accelerated: bool) -> None:
    if not accelerated:  # an interpreter without json's C accelerator takes the standard encoder
        monkeypatch.setattr(jsonvalue, "c_make_encoder", None)
    strict = plain_encoder(allow_nan=False)
    with pytest.raises(ValueError):
        strict({"x": math.nan})
    with pytest.raises(TypeError, match="not JSON serializable"):
        plain_encoder()({"x": object()})
    assert plain_encoder()({"x": math.inf}) == '{"x":Infinity}'
    assert plain_encoder(ensure_ascii=True)(["é"]) == '["\\u00e9"]'
