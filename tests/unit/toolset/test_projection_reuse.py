"""Reusing the projection of an unchanged surface (issue 11) never serves a stale catalog: a
change of state, of the registrations or of the consumer's view shows up in the next tools(),
and a procedure shared by components of different types with one instance id is named the
same whatever order they were registered in (AS-WIRE-005)."""

from __future__ import annotations

from agentsurface import Consumer, Decision, Policy, PolicyContext, ProcedureContract
from agentsurface.lowlevel import ComponentContract, ObservationBinding, ObservationContract
from agentsurface.toolset import AgentTool

from .helpers import make_registry, toolset_for

OUT = {"type": "object", "properties": {"n": {"type": "number"}}, "required": ["n"]}
SHARED = ProcedureContract(
    id="domain:shared.lookup", description="Look up", effect="server-query", output=OUT
)
TYPES = ("devices.table", "devices.map")


def contract(type_: str) -> ComponentContract:
    return ComponentContract(
        type=type_,
        description=f"The {type_}",
        observations={"count": ObservationContract("How many", output=OUT)},
    )


CONTRACTS = {t: contract(t) for t in TYPES}


def state(tools: list[AgentTool]) -> dict[str, bool]:
    return {t.name: t.state.available for t in tools}


def test_unchanged_surface_gives_equal_catalogs_to_every_toolset() -> None:
    registry = make_registry(CONTRACTS.values())
    registry.register(
        CONTRACTS["devices.table"].bind(instance_id="t1", observations={"count": lambda ctx: {"n": 1}})
    )
    first = toolset_for(registry).tools()
    second = toolset_for(registry).tools()
    assert [t.definition() for t in first] == [t.definition() for t in second]
    assert first[0] is not second[0]  # tools are the toolset's own (their calls go through it)


def test_a_pushed_state_change_reaches_the_next_catalog() -> None:
    registry = make_registry(CONTRACTS.values())
    handle = registry.register(
        CONTRACTS["devices.table"].bind(instance_id="t1", observations={"count": lambda ctx: {"n": 1}})
    )
    toolset = toolset_for(registry)
    assert state(toolset.tools()) == {"view_devices__table__count": True}
    handle.update(enabled=False)
    assert state(toolset.tools()) == {"view_devices__table__count": False}
    handle.update(availability={"count": (False, "busy")})
    handle.update(enabled=True)
    tools = toolset.tools()
    assert state(tools) == {"view_devices__table__count": False}
    assert tools[0].state.unavailable_reason == "busy"
    handle.update(availability={"count": None})
    assert state(toolset.tools()) == {"view_devices__table__count": True}


def test_when_drift_without_a_version_bump_reaches_the_next_catalog() -> None:
    registry = make_registry(CONTRACTS.values())
    open_ = [True]
    registry.register(
        CONTRACTS["devices.table"].bind(
            instance_id="t1",
            observations={"count": ObservationBinding(lambda ctx: {"n": 1}, when=lambda: open_[0])},
        )
    )
    toolset = toolset_for(registry)
    assert state(toolset.tools()) == {"view_devices__table__count": True}
    open_[0] = False
    assert state(toolset.tools()) == {"view_devices__table__count": False}


class _HideFromPanel(Policy):
    name = "hide-from-panel"

    def on_discovery(self, ctx: PolicyContext) -> Decision:
        return Decision("hide") if ctx.consumer.id == "copilot-panel" else Decision("expose")


def test_consumers_of_one_surface_version_get_their_own_catalogs() -> None:
    registry = make_registry(CONTRACTS.values())
    registry.register(
        CONTRACTS["devices.table"].bind(
            instance_id="t1",
            observations={"count": ObservationBinding(lambda ctx: {"n": 1}, policies=[_HideFromPanel()])},
        )
    )
    other = Consumer("ops-console", "embedded")
    for _ in range(2):  # the second round is served from what the first projected
        assert [t.name for t in toolset_for(registry).tools()] == []
        assert [t.name for t in toolset_for(registry, consumer=other).tools()] == [
            "view_devices__table__count"
        ]


def test_registrations_change_the_names_and_targets() -> None:
    registry = make_registry(CONTRACTS.values())
    registry.register(
        CONTRACTS["devices.table"].bind(instance_id="t1", observations={"count": lambda ctx: {"n": 1}})
    )
    toolset = toolset_for(registry)
    assert [t.name for t in toolset.tools()] == ["view_devices__table__count"]
    second = registry.register(
        CONTRACTS["devices.table"].bind(instance_id="t2", observations={"count": lambda ctx: {"n": 2}})
    )
    assert [t.name for t in toolset.tools()] == [
        "view_devices__table__count_at_t1",
        "view_devices__table__count_at_t2",
    ]
    second.close()
    assert [t.name for t in toolset.tools()] == ["view_devices__table__count"]


def shared_catalog(order: tuple[str, ...]) -> dict[str, tuple[str, str]]:
    registry = make_registry([*CONTRACTS.values(), SHARED], procedure_executor=lambda cid, value, ctx: {"n": 0})
    for type_ in order:
        binding = CONTRACTS[type_].bind(
            instance_id="default",
            observations={"count": lambda ctx: {"n": 0}},
            procedures=(SHARED.reference(),),
        )
        registry.register(binding)
    where = {r.registration_id: r.key for r in registry.registrations()}
    toolset = toolset_for(registry)
    return {
        t.name: where[str(p.registration_id)]
        for t in toolset.tools()
        for p in toolset.snapshot().procedures
        if t.capability_id == SHARED.id and t.name.endswith(p.context[0].replace(".", "_") + "_default")
    }


def test_a_procedure_shared_across_types_with_one_instance_id_is_named_independently_of_order() -> None:
    forward, backward = shared_catalog(TYPES), shared_catalog(TYPES[::-1])
    assert forward == backward
    assert forward == {
        "domain_shared__lookup_at_devices_map_default": ("devices.map", "default"),
        "domain_shared__lookup_at_devices_table_default": ("devices.table", "default"),
    }


def test_one_toolset_reuses_its_tools_until_the_catalog_changes() -> None:
    registry = make_registry(CONTRACTS.values())
    handle = registry.register(
        CONTRACTS["devices.table"].bind(instance_id="t1", observations={"count": lambda ctx: {"n": 1}})
    )
    toolset = toolset_for(registry)
    first = toolset.tools()
    first.clear()  # the host owns the list it got
    again = toolset.tools()
    assert len(again) == 1 and again[0] is toolset.tools()[0]
    handle.update(enabled=False)
    changed = toolset.tools()
    assert changed[0] is not again[0] and not changed[0].state.available
