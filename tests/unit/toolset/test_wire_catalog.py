"""Wire names as the toolset emits them: provider-safe, unique per catalog, qualified for repeated
instances, order-independent, and reversed only through the catalog's map.

Requirements: AS-WIRE-004 (≤ 64 characters), AS-WIRE-005 (deterministic, independent of order),
AS-WIRE-006 (unique in one catalog), AS-WIRE-007 (the map round-trips every emitted name),
AS-ADAPTER-001 (unique wire names). The codec itself is covered in tests/unit/test_wire_names.py.
"""

from __future__ import annotations

import asyncio
import re
from functools import cache

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentsurface import AgentSurfaceRegistry, ProcedureContract
from agentsurface.lowlevel import ActionContract, ComponentContract, ObservationContract
from agentsurface.toolset import AgentTool
from agentsurface.wire_names import decode_wire_name

from .helpers import DevicesState, bind_devices, devices_contract, make_registry, output_of, toolset_for

PROVIDER_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
PROPERTY = settings(
    max_examples=40,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

# Short and long types: the long ones push names past 64 characters and into the hashed form.
TYPES = (
    "devices.table",
    "devices.map",
    "a",
    "billing.invoices.table.filters",
    "verylongsegment.verylongsegment.verylongsegment.verylongsegment",
)
LONG_NAME = "selectEveryVisibleRowAcrossAllPages"
SHARED = "domain:shared.lookup"
WHO = {"type": "object", "properties": {"reg": {"type": "string"}}, "required": ["reg"]}


@cache
def shared_procedure() -> ProcedureContract:
    return ProcedureContract(id=SHARED, description="Look something up", effect="server-query", output=WHO)


@cache
def contract_for(type_: str) -> ComponentContract:
    return ComponentContract(
        type=type_,
        description=f"The {type_} component",
        observations={"whoAmI": ObservationContract("Which registration answers", output=WHO)},
        actions={LONG_NAME: ActionContract("Select everything", output=WHO)},
    )


def references_shared(type_: str) -> bool:
    return type_ in ("devices.table", "devices.map", TYPES[4])


def build(components: list[tuple[str, str]]) -> AgentSurfaceRegistry:
    registry = make_registry([*(contract_for(t) for t in TYPES), shared_procedure()], procedure_executor=lambda cid, value, ctx: {"reg": ctx.registration_id})
    for type_, instance in components:
        procedures = (shared_procedure().reference(),) if references_shared(type_) else ()
        registry.register(
            contract_for(type_).bind(
                instance_id=instance,
                observations={"whoAmI": lambda ctx: {"reg": ctx.registration_id}},
                actions={LONG_NAME: lambda value, ctx: {"reg": ctx.registration_id}},
                procedures=procedures,
            )
        )
    return registry


async def reached(tools: list[AgentTool]) -> dict[str, str]:
    """Tool name → registration id that actually answered the call."""
    out: dict[str, str] = {}
    for t in tools:
        result = await t.execute({}, tool_call_id=f"call-{t.name}")
        out[t.name] = output_of(result)["reg"]
    return out


def project(components: list[tuple[str, str]]) -> tuple[dict[str, tuple[str, str, str]], list[AgentTool]]:
    """Name → (capability id, type, instance it reached), checking the map on the way."""
    registry = build(components)
    toolset = toolset_for(registry)
    tools = toolset.tools()
    mapping = toolset.wire_name_map()
    assert set(mapping) == {t.name for t in tools}
    where = {r.registration_id: (r.component_type, r.instance_id) for r in registry.registrations()}
    answered = asyncio.run(reached(tools))
    out: dict[str, tuple[str, str, str]] = {}
    for t in tools:
        assert mapping[t.name] == t.capability_id
        out[t.name] = (mapping[t.name], *where[answered[t.name]])
    return out, tools


instance_ids = st.one_of(
    st.sampled_from(["default", "main", "x_at_y", "a-b", "w1"]),
    st.from_regex(r"[A-Za-z0-9][A-Za-z0-9_-]{0,24}", fullmatch=True),
)
catalogs = st.lists(st.tuples(st.sampled_from(TYPES), instance_ids), min_size=1, max_size=7, unique=True)


@PROPERTY
@given(components=catalogs, data=st.data())
def test_AS_WIRE_004_to_007_emitted_catalogs_are_safe_unique_ordered_and_reversible(
    components: list[tuple[str, str]], data: st.DataObject
) -> None:
    catalog, tools = project(components)
    names = [t.name for t in tools]

    # AS-WIRE-004: the provider alphabet and budget.
    assert all(PROVIDER_NAME.fullmatch(n) for n in names), names
    # AS-WIRE-006: no two tools share a name.
    assert len(names) == len(set(names))

    # AS-WIRE-007: every name leads, through the map, to the capability it names, on a distinct
    # live target; together the tools cover every (capability, component) pair exactly once.
    expected = set()
    for type_, instance in components:
        expected |= {
            (f"view:{type_}.whoAmI", type_, instance),
            (f"view:{type_}.{LONG_NAME}", type_, instance),
        }
        if references_shared(type_):
            expected.add((SHARED, type_, instance))
    assert sorted(catalog.values()) == sorted(expected)
    for capability_id, type_, _instance in catalog.values():
        assert capability_id == SHARED or capability_id.startswith(f"view:{type_}.")

    # Repeated types are qualified with their instance; a lone type keeps the plain name.
    counts = {t: sum(1 for c in components if c[0] == t) for t in TYPES}
    for name, (capability_id, type_, instance) in catalog.items():
        if capability_id == SHARED:
            continue
        plain = decode_wire_name(name)
        if counts[type_] == 1:
            assert "_at_" not in name or len(name) == 64
            assert plain in (capability_id, None)
        else:
            assert plain is None  # a qualified name is never decodable by string surgery
            if len(name) < 64:
                assert name.endswith(f"_at_{instance}")

    # AS-WIRE-005: the same set registered in another order gets the same catalog.
    shuffled = data.draw(st.permutations(components))
    again, _ = project(list(shuffled))
    assert again == catalog


def test_AS_WIRE_005_names_are_stable_across_snapshots_of_the_same_catalog() -> None:
    registry = make_registry([devices_contract()])
    for instance in ("main", "comparison"):
        registry.register(bind_devices(devices_contract(), DevicesState(), instance))
    toolset = toolset_for(registry)
    first = [t.name for t in toolset.tools()]
    assert [t.name for t in toolset.tools()] == first
    assert [t.name for t in toolset_for(registry, topology="remote").tools()] == first


def test_AS_WIRE_006_repeated_instances_are_qualified_with_at() -> None:
    registry = make_registry([devices_contract()])
    for instance in ("main", "comparison"):
        registry.register(bind_devices(devices_contract(), DevicesState(), instance))
    names = sorted(t.name for t in toolset_for(registry).tools())
    assert names == sorted(
        f"view_devices__table__{cap}_at_{inst}"
        for cap in ("readState", "selectRows", "clearSelection")
        for inst in ("main", "comparison")
    )


def test_AS_WIRE_004_long_ids_are_shortened_and_still_reversible() -> None:
    long_type = TYPES[4]
    registry = build([(long_type, "first-instance"), (long_type, "second-instance")])
    toolset = toolset_for(registry)
    mapping = toolset.wire_name_map()
    long_names = [n for n in mapping if mapping[n] == f"view:{long_type}.{LONG_NAME}"]
    assert len(long_names) == 2 and all(len(n) == 64 for n in long_names)
    assert all(decode_wire_name(n) is None for n in long_names)


def test_AS_WIRE_007_the_map_is_the_catalog_s_own() -> None:
    registry = make_registry([devices_contract()])
    registry.register(bind_devices(devices_contract(), DevicesState(), "main"))
    toolset = toolset_for(registry)
    single = dict(toolset.wire_name_map())
    assert single["view_devices__table__selectRows"] == "view:devices.table.selectRows"
    registry.register(bind_devices(devices_contract(), DevicesState(), "side"))
    tools = toolset.tools()
    mapping = toolset.wire_name_map()
    assert "view_devices__table__selectRows" not in mapping
    assert set(mapping) == {t.name for t in tools}
    assert mapping["view_devices__table__selectRows_at_side"] == "view:devices.table.selectRows"


def test_the_map_is_empty_for_an_empty_catalog_and_in_meta_mode() -> None:
    registry = make_registry([devices_contract()])
    assert toolset_for(registry).wire_name_map() == {}
    registry.register(bind_devices(devices_contract(), DevicesState()))
    assert toolset_for(registry, mode="meta").wire_name_map() == {}
