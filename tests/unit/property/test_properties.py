"""Property-based invariants: AS-ID-003, AS-SCHEMA-003, AS-LIFE-004, canonical JSON and
manifest determinism. Deterministic (see tests/conftest.py) and kept small."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.stateful import Bundle, RuleBasedStateMachine, initialize, invariant, precondition, rule

from agentsurface import DefinitionError, compile_manifest
from agentsurface._core.ids import MAX_ID_LENGTH, CapabilityId, format_capability_id, parse_capability_id
from agentsurface._core.jsonvalue import canonical_json, digest
from agentsurface._core.registry.registry import AgentSurfaceRegistry, RegistrationHandle
from agentsurface._core.schemas.schema import MAX_SCHEMA_DEPTH, check_schema_subset
from agentsurface.lowlevel import ActionContract, ComponentContract, ObservationContract
from tests.support import devices_contract, disable_procedure, registry_for

LOWER = "abcdefghijklmnopqrstuvwxyz"
DIGITS = "0123456789"


def _word(tail_alphabet: str, min_tail: int = 0, max_tail: int = 10) -> st.SearchStrategy[str]:
    """A lowercase letter followed by ``tail_alphabet`` characters (the grammar's shape)."""
    return st.builds(
        str.__add__, st.sampled_from(LOWER), st.text(tail_alphabet, min_size=min_tail, max_size=max_tail)
    )


segments = _word(LOWER + DIGITS + "-")
component_types = st.lists(segments, min_size=1, max_size=4).map(".".join)
capability_names = _word(LOWER + LOWER.upper() + DIGITS, max_tail=12)
procedure_tails = _word(LOWER + LOWER.upper() + DIGITS + "-", max_tail=12)


# ----------------------------------------------------------------------------- AS-ID-003


@given(component_types, capability_names)
def test_AS_ID_003_format_then_parse_round_trips(component_type: str, name: str) -> None:
    capability_id = format_capability_id("view", component_type, name)
    assert len(capability_id) <= MAX_ID_LENGTH
    parsed = parse_capability_id(capability_id)
    assert parsed == CapabilityId("view", component_type, name)
    assert str(parsed) == capability_id


@given(component_types, procedure_tails)
def test_AS_ID_003_domain_ids_round_trip(path: str, tail: str) -> None:
    capability_id = format_capability_id("domain", path, tail)
    parsed = parse_capability_id(capability_id)
    assert parsed.plane == "domain"
    assert str(parsed) == capability_id


@given(st.text(alphabet="abcXY09-_.:vwiedomn ", max_size=40))
def test_AS_ID_003_parse_is_exact_on_arbitrary_text(text: str) -> None:
    """Whatever parses formats back to the identical string; everything else is INVALID_ID."""
    try:
        parsed = parse_capability_id(text)
    except DefinitionError as exc:
        assert exc.code == "INVALID_ID"
        return
    assert str(parsed) == text
    assert "_" not in text or text.startswith("domain:")  # domain paths are opaque


long_segments = _word(LOWER + DIGITS + "-", min_tail=9, max_tail=14)


@given(st.lists(long_segments, min_size=12, max_size=14).map(".".join), capability_names)
def test_AS_ID_003_over_long_ids_are_always_rejected(component_type: str, name: str) -> None:
    capability_id = f"view:{component_type}.{name}"
    assert len(capability_id) > MAX_ID_LENGTH  # 12 segments of >= 10 chars
    with pytest.raises(DefinitionError, match="the limit is 128"):
        parse_capability_id(capability_id)


# ----------------------------------------------------------------------------- AS-SCHEMA-003

_annotations = st.fixed_dictionaries(
    {},
    optional={
        "description": st.text(max_size=10),
        "title": st.text(max_size=5),
        "deprecated": st.booleans(),
        "examples": st.lists(st.integers(), max_size=2),
    },
)


def _with(base: dict[str, Any], extra: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[dict[str, Any]]:
    return st.tuples(extra, _annotations).map(lambda parts: {**base, **parts[0], **parts[1]})


_leaves = st.one_of(
    _with({"type": "string"}, st.fixed_dictionaries({}, optional={
        "minLength": st.integers(0, 5),
        "maxLength": st.integers(5, 9),
        "pattern": st.sampled_from(["^a", "[0-9]+", "^x$"]),
        "format": st.sampled_from(["date-time", "date", "uuid", "email", "uri"]),
    })),
    _with({"type": "number"}, st.fixed_dictionaries({}, optional={
        "minimum": st.integers(-5, 0),
        "exclusiveMaximum": st.floats(1, 5),
        "multipleOf": st.sampled_from([0.5, 1, 2]),
    })),
    _with({"type": "integer"}, st.fixed_dictionaries({}, optional={"maximum": st.integers(0, 9)})),
    _with({"type": "boolean"}, st.just({})),
    _with({"type": ["string", "null"]}, st.just({})),
    st.builds(lambda values: {"enum": values}, st.lists(st.integers() | st.text(max_size=3), min_size=1, max_size=3)),
    st.builds(lambda value: {"const": value}, st.integers() | st.text(max_size=3) | st.none()),
)


def _schemas(depth: int) -> st.SearchStrategy[dict[str, Any]]:
    if depth == 0:
        return _leaves
    inner = _schemas(depth - 1)
    arrays = st.tuples(inner, st.fixed_dictionaries({}, optional={
        "minItems": st.integers(0, 2), "maxItems": st.integers(2, 4), "uniqueItems": st.booleans()
    })).map(lambda parts: {"type": "array", "items": parts[0], **parts[1]})
    objects = st.tuples(
        st.dictionaries(capability_names, inner, max_size=3), st.booleans(), st.data()
    ).map(lambda parts: _object(*parts))
    unions = st.lists(inner, min_size=1, max_size=3).map(lambda options: {"anyOf": options})
    return st.one_of(_leaves, arrays, objects, unions)


def _object(properties: dict[str, Any], closed: bool, data: Any) -> dict[str, Any]:
    required = data.draw(st.lists(st.sampled_from(sorted(properties)), unique=True)) if properties else []
    out: dict[str, Any] = {"type": "object", "properties": properties, "additionalProperties": not closed}
    if required:
        out["required"] = required
    return out


allowed_schemas = _schemas(3)

FORBIDDEN = [
    "oneOf", "allOf", "not", "if", "then", "else", "patternProperties", "dependentRequired",
    "dependentSchemas", "unevaluatedProperties", "unevaluatedItems", "propertyNames", "contains",
    "prefixItems", "$id", "$anchor", "$dynamicRef", "contentMediaType", "minProperties", "nullable",
]


def _subschemas(schema: dict[str, Any], path: str = "$") -> list[tuple[str, dict[str, Any]]]:
    found = [(path, schema)]
    if isinstance(schema.get("items"), dict):
        found += _subschemas(schema["items"], f"{path}.items")
    for name, sub in (schema.get("properties") or {}).items():
        found += _subschemas(sub, f"{path}.properties.{name}")
    for i, sub in enumerate(schema.get("anyOf") or []):
        found += _subschemas(sub, f"{path}.anyOf[{i}]")
    return found


def _depth(schema: dict[str, Any]) -> int:
    return max(path.count(".items") + path.count(".properties.") + path.count(".anyOf[")
               for path, _ in _subschemas(schema))


@given(allowed_schemas)
def test_AS_SCHEMA_003_random_allowlisted_schemas_are_accepted(schema: dict[str, Any]) -> None:
    check_schema_subset(schema)
    check_schema_subset({"type": "object", "properties": {"value": schema}})


@given(allowed_schemas, st.sampled_from(FORBIDDEN), st.data())
def test_AS_SCHEMA_003_any_forbidden_keyword_anywhere_is_rejected(
    schema: dict[str, Any], keyword: str, data: Any
) -> None:
    nodes = _subschemas(schema)
    path, node = nodes[data.draw(st.integers(0, len(nodes) - 1))]
    node[keyword] = [{"type": "string"}]
    with pytest.raises(DefinitionError) as info:
        check_schema_subset(schema)
    assert info.value.code == "UNSUPPORTED_SCHEMA"
    assert info.value.path == f"{path}.{keyword}"


@given(allowed_schemas)
def test_AS_SCHEMA_003_depth_beyond_the_cap_is_rejected_exactly(schema: dict[str, Any]) -> None:
    def wrap(levels: int) -> dict[str, Any]:
        out = schema
        for _ in range(levels):
            out = {"type": "array", "items": out}
        return out

    spare = MAX_SCHEMA_DEPTH - _depth(schema)
    check_schema_subset(wrap(spare))  # exactly at the cap
    with pytest.raises(DefinitionError, match="exceeds depth 8"):
        check_schema_subset(wrap(spare + 1))


# ----------------------------------------------------------------------------- canonical JSON

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**40), 2**40) | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=6),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=5), children, max_size=4),
    max_leaves=10,
)


@given(st.dictionaries(st.text(max_size=6), json_values, max_size=6), st.data())
def test_canonical_json_is_independent_of_key_order(value: dict[str, Any], data: Any) -> None:
    keys = data.draw(st.permutations(list(value)))
    shuffled = {k: value[k] for k in keys}
    assert canonical_json(shuffled) == canonical_json(value)
    assert digest(shuffled) == digest(value)
    assert canonical_json(value).startswith("{")


@given(json_values)
def test_canonical_json_is_deterministic_and_parses_back(value: Any) -> None:
    text = canonical_json(value)
    assert canonical_json(json.loads(text)) == text
    assert canonical_json([value, value]) == f"[{text},{text}]"


# ----------------------------------------------------------------------------- manifest determinism

_POOL = [
    devices_contract("devices.table"),
    devices_contract("reports.panel", priority=2),
    devices_contract("app.nav", meta={"z": 1, "a": [1, 2]}),
    disable_procedure(),
    disable_procedure(id="domain:reports.export", effect="external-side-effect"),
]


@given(st.permutations(_POOL), st.integers(0, 2))
def test_AS_COMPILER_002_manifest_bytes_ignore_contract_order_and_repeats(
    order: list[Any], repeats: int
) -> None:
    expected = canonical_json(compile_manifest(_POOL))
    assert canonical_json(compile_manifest(order + order[:repeats])) == expected


# ----------------------------------------------------------------------------- AS-LIFE-004

_CONTRACT = ComponentContract(
    type="prop.widget",
    description="property-test widget",
    observations={"state": ObservationContract("state", output={"type": "object"})},
    actions={"poke": ActionContract("poke")},
)
_SLOTS = st.sampled_from(["s0", "s1", "s2", "s3"])


class RegistryMachine(RuleBasedStateMachine):
    """Arbitrary register / unregister / update / invalidate sequences against a model."""

    handles = Bundle("handles")

    @initialize(mode=st.sampled_from(["reject", "replace"]))
    def create(self, mode: str) -> None:
        self.mode = mode
        self.registry: AgentSurfaceRegistry = registry_for([_CONTRACT], on_duplicate_instance=mode)
        self.live: dict[str, RegistrationHandle] = {}  # slot -> the handle the model says is live
        self.enabled: dict[str, bool] = {}
        self.overrides: dict[str, bool | None] = {}
        self.version = 0
        self.all_ids: set[str] = set()
        self.retired: set[str] = set()

    def _expect_bump(self, bumps: int) -> None:
        self.version += bumps
        assert int(self.registry.version) == self.version

    @rule(target=handles, slot=_SLOTS)
    def register(self, slot: str) -> RegistrationHandle:
        handle = self.registry.register(_CONTRACT.bind(
            instance_id=slot,
            observations={"state": lambda ctx: {}},
            actions={"poke": lambda value, ctx: None},
        ))
        assert handle.registration_id not in self.all_ids  # never reused, not even for rejects
        self.all_ids.add(handle.registration_id)
        if slot in self.live and self.mode == "reject":
            assert handle.status == "rejected"
            self._expect_bump(0)
        else:
            assert handle.status == "active"
            if slot in self.live:
                old = self.live[slot]
                assert old.status == "unregistered"
                self.retired.add(old.registration_id)
                self._expect_bump(2)  # unregister the predecessor, then register
            else:
                self._expect_bump(1)
            self.live[slot] = handle
            self.enabled[slot] = True
            self.overrides[slot] = None
        return handle

    @rule(handle=handles)
    def unregister(self, handle: RegistrationHandle) -> None:
        was_live = handle.status == "active"
        handle.close()
        assert handle.status in ("unregistered", "rejected")
        if was_live:
            slot = next(s for s, h in self.live.items() if h is handle)
            del self.live[slot]
            self.retired.add(handle.registration_id)
            self._expect_bump(1)
        else:
            self._expect_bump(0)

    @rule(handle=handles, enabled=st.booleans())
    def toggle(self, handle: RegistrationHandle, enabled: bool) -> None:
        handle.update(enabled=enabled)
        slot = next((s for s, h in self.live.items() if h is handle), None)
        if slot is not None and self.enabled[slot] != enabled:
            self.enabled[slot] = enabled
            self._expect_bump(1)
        else:
            self._expect_bump(0)

    @rule(handle=handles, available=st.none() | st.booleans())
    def push_availability(self, handle: RegistrationHandle, available: bool | None) -> None:
        handle.update(availability={"poke": available})
        slot = next((s for s, h in self.live.items() if h is handle), None)
        if slot is not None and self.overrides[slot] != available:
            self.overrides[slot] = available
            self._expect_bump(1)
        else:
            self._expect_bump(0)

    @precondition(lambda self: bool(self.live))
    @rule(data=st.data())
    def invalidate(self, data: Any) -> None:
        slot = data.draw(st.sampled_from(sorted(self.live)))
        self.live[slot].invalidate()
        self._expect_bump(1)

    @invariant()
    def live_identities_are_unique_and_match_the_model(self) -> None:
        if not hasattr(self, "registry"):
            return
        keys = [(c.type, c.instance_id) for c in self.registry.snapshot().components]
        assert len(keys) == len(set(keys))
        assert sorted(keys) == sorted(("prop.widget", slot) for slot in self.live)
        regs = self.registry.registrations()
        assert {r.registration_id for r in regs} == {h.registration_id for h in self.live.values()}

    @invariant()
    def availability_matches_the_model(self) -> None:
        if not hasattr(self, "registry"):
            return
        for component in self.registry.snapshot().components:
            slot = component.instance_id
            (poke,) = component.actions
            expected = self.enabled[slot] and self.overrides[slot] is not False
            assert poke.available is expected

    @invariant()
    def retired_ids_are_tombstoned_and_never_live(self) -> None:
        if not hasattr(self, "registry"):
            return
        for registration_id in self.retired:
            assert self.registry.registration(registration_id) is None
            assert self.registry.tombstone(registration_id) is not None


# Fewer, shorter runs than the default profile: each step snapshots the registry.
RegistryMachine.TestCase.settings = settings(max_examples=25, stateful_step_count=20)
test_AS_LIFE_004_arbitrary_sequences_keep_unique_identities_and_monotone_versions = RegistryMachine.TestCase
