"""``freeze``, ``thaw`` and ``frozen_copy`` (agentsurface/_core/jsonvalue.py) on every kind of
value they meet, exact types and their subclasses alike, against the plain recursive definition
they are a faster form of; and an authority keeps nothing mutable of the manifest it was minted
from."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentsurface import CapabilityAuthority, compile_manifest
from agentsurface._core.jsonvalue import FrozenDict, freeze, frozen_copy, thaw
from tests.support import devices_contract


class Items(list[Any]):
    pass


class Text(str):
    pass


def reference_freeze(value: Any) -> Any:
    if isinstance(value, FrozenDict):
        return value
    if isinstance(value, Mapping):
        return FrozenDict({k: reference_freeze(v) for k, v in value.items()})
    if isinstance(value, (list, tuple)):
        return tuple(reference_freeze(v) for v in value)
    return value


leaves = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=3)
values = st.recursive(
    leaves | st.text(max_size=3).map(Text),
    lambda inner: st.lists(inner, max_size=3)
    | st.lists(inner, max_size=3).map(tuple)
    | st.lists(inner, max_size=3).map(Items)
    | st.dictionaries(st.text(max_size=3), inner, max_size=3)
    | st.dictionaries(st.text(max_size=3), inner, max_size=3).map(OrderedDict)
    | st.dictionaries(st.text(max_size=3), inner, max_size=3).map(MappingProxyType),
    max_leaves=12,
)


def _mutable_inside(value: Any) -> bool:
    if isinstance(value, (list, dict)) and not isinstance(value, FrozenDict):
        return True
    children = value.values() if isinstance(value, Mapping) else value if isinstance(value, tuple) else ()
    return any(_mutable_inside(v) for v in children)


@settings(max_examples=300, deadline=None)
@given(values)
def test_freeze_thaw_and_frozen_copy_agree_with_the_plain_definition(value: Any) -> None:
    frozen = freeze(value)
    assert frozen == reference_freeze(value)
    assert type(frozen) is type(reference_freeze(value))
    assert not _mutable_inside(frozen)
    thawed = thaw(frozen)
    assert freeze(thawed) == frozen
    assert frozen_copy(value) == frozen and not _mutable_inside(frozen_copy(value))


def test_a_frozen_dict_built_by_hand_is_copied_deeply_by_frozen_copy_only() -> None:
    held = [1, 2]
    hand_made = FrozenDict({"a": held})
    assert freeze(hand_made) is hand_made  # freeze trusts a FrozenDict
    copied = frozen_copy(hand_made)
    assert copied == {"a": (1, 2)} and copied is not hand_made
    held.append(3)
    assert copied == {"a": (1, 2)}


def test_an_authority_keeps_nothing_of_the_callers_manifest() -> None:
    manifest = compile_manifest([devices_contract()])
    entry = manifest["contracts"][0]
    assert isinstance(entry, dict)
    sneaky = FrozenDict({**manifest, "contracts": [FrozenDict(entry)]})  # a list inside a FrozenDict
    authority = CapabilityAuthority.from_manifest(sneaky)
    assert not _mutable_inside(authority.manifest)
    sneaky["contracts"].append({"id": "late"})
    assert [c["id"] for c in authority.manifest["contracts"]] == [entry["id"]]
    with pytest.raises(TypeError):
        authority.manifest["contracts"][0]["contract"]["type"] = "other"  # type: ignore[index]
