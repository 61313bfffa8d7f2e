"""Snapshots (reference doc 03, "Snapshot", "Availability"): AS-SNAP-001/002/003 and
AS-AVAIL-002, scopes, budgets, immutability, procedure references."""

from __future__ import annotations

import dataclasses
import json
import logging
from itertools import permutations
from typing import Any

import pytest

from agentsurface import Consumer, Decision, Policy, PolicyContext
from agentsurface._core.jsonvalue import FrozenDict, thaw
from agentsurface._core.registry.registry import AgentSurfaceRegistry
from agentsurface.lowlevel import ActionBinding, Budget, ComponentContract, ObservationBinding
from tests.support import ROWS_OUTPUT, bind_devices, devices_contract, disable_procedure, registry_for


@pytest.fixture
def contract() -> ComponentContract:
    return devices_contract()


@pytest.fixture
def registry(contract: ComponentContract) -> AgentSurfaceRegistry:
    return registry_for([contract], environment="test")


class Vote(Policy):
    """Votes ``outcome`` on discovery for the capability names in ``only`` (all if empty)."""

    def __init__(self, outcome: Any, *only: str, reason: str | None = None, name: str = "vote") -> None:
        self.outcome = outcome
        self.only = only
        self.reason = reason
        self.name = name
        self.seen: list[PolicyContext] = []

    def on_discovery(self, ctx: PolicyContext) -> Decision | None:
        self.seen.append(ctx)
        if self.only and ctx.capability_id.rsplit(".", 1)[-1] not in self.only:
            return None
        if isinstance(self.outcome, Exception):
            raise self.outcome
        return Decision(self.outcome, self.reason) if self.reason else self.outcome


def _descriptor(registry: AgentSurfaceRegistry, capability_id: str, **options: Any) -> Any:
    found = registry.snapshot(**options).find(capability_id)
    assert len(found) == 1, found
    return found[0]


# ----------------------------------------------------------------------------- AS-SNAP-001


def test_AS_SNAP_001_snapshot_is_synchronous_and_never_runs_handlers(
    registry: AgentSurfaceRegistry, contract: ComponentContract
) -> None:
    calls: list[str] = []
    proc = disable_procedure()
    registry = registry_for([contract, proc])

    def read(ctx: Any) -> Any:
        calls.append("read")
        return {"rows": []}

    def execute(value: Any, ctx: Any) -> None:
        calls.append("execute")

    def bind() -> dict[str, Any]:
        calls.append("bind")
        return {"ids": []}

    binding = contract.bind(
        observations={"visibleRows": read},
        actions={"selectRows": execute, "clearSelection": ActionBinding(execute, precondition=lambda v, c: calls.append("pre"))},
        procedures=[proc.reference(bind=bind, bound_fields=["ids"])],
    )
    registry.register(binding)
    snapshot = registry.snapshot()
    assert type(snapshot).__name__ == "Snapshot"  # a value, not an awaitable
    assert calls == []
    assert snapshot.components[0].observations[0].capability_id == "view:devices.table.visibleRows"
    assert snapshot.procedures[0].procedure_id == "domain:devices.disable"


def test_AS_SNAP_001_snapshot_has_no_side_effects(
    registry: AgentSurfaceRegistry, contract: ComponentContract
) -> None:
    registry.register(bind_devices(contract))
    events: list[Any] = []
    registry.subscribe(events.append)
    first = registry.snapshot()
    second = registry.snapshot()
    assert events == []
    assert registry.version == "1"
    assert first.to_json()["components"] == second.to_json()["components"]


# ----------------------------------------------------------------------------- AS-SNAP-002


def test_AS_SNAP_002_internal_metadata_never_reaches_the_snapshot(contract: ComponentContract) -> None:
    seen: list[Any] = []

    class Peek(Policy):
        name = "peek"

        def on_discovery(self, ctx: PolicyContext) -> None:
            seen.append(ctx.internal)

    proc = disable_procedure()
    registry = registry_for([devices_contract(meta={"visible": "yes"}), proc])
    registry.register(
        bind_devices(
            devices_contract(meta={"visible": "yes"}),
            internal={"secretToken": "s3cr3t-t0ken", "tenant": "acme-internal"},
            policies=[Peek()],
            procedures=[proc.reference()],
        )
    )
    snapshot = registry.snapshot()
    serialized = json.dumps(snapshot.to_json())
    assert "s3cr3t-t0ken" not in serialized
    assert "acme-internal" not in serialized
    assert "internal" not in serialized
    assert "visible" in serialized  # meta is agent-visible, internal is not
    assert seen and seen[0]["secretToken"] == "s3cr3t-t0ken"  # policies may read it
    for descriptor in (*snapshot.components, *snapshot.capabilities()):
        assert "internal" not in {f.name for f in dataclasses.fields(descriptor)}


# ----------------------------------------------------------------------------- AS-SNAP-003


def test_AS_SNAP_003_ordering_is_priority_type_instance_never_mount_order() -> None:
    contracts = {
        "zebra": devices_contract("zebra.panel"),
        "alpha": devices_contract("alpha.panel"),
        "low": devices_contract("low.panel", priority=5),
        "neg": devices_contract("aaa.panel", priority=-1),
    }
    mounts = [("zebra", "z"), ("alpha", "b"), ("alpha", "a"), ("low", "default"), ("neg", "x"), ("alpha", "B")]
    expected = [
        ("low.panel", "default"),
        ("alpha.panel", "B"),
        ("alpha.panel", "a"),
        ("alpha.panel", "b"),
        ("zebra.panel", "z"),
        ("aaa.panel", "x"),
    ]
    for order in list(permutations(mounts))[::97]:  # a spread of different mount orders
        registry = registry_for(contracts.values())
        for key, instance in order:
            registry.register(bind_devices(contracts[key], instance))
        snapshot = registry.snapshot()
        assert [(c.type, c.instance_id) for c in snapshot.components] == expected
        assert [c.priority for c in snapshot.components] == [5, 0, 0, 0, 0, -1]


def test_AS_SNAP_003_budget_drops_lowest_priority_first_and_says_so() -> None:
    high, mid, low = (devices_contract(f"{n}.panel", priority=p) for n, p in (("high", 10), ("mid", 5), ("low", 0)))
    registry = registry_for([high, mid, low])
    for c in (low, high, mid):
        registry.register(bind_devices(c))
    snapshot = registry.snapshot(budget=Budget(max_components=2))
    assert [c.type for c in snapshot.components] == ["high.panel", "mid.panel"]
    assert snapshot.truncated == {"droppedComponents": 1}
    assert snapshot.to_json()["truncated"] == {"droppedComponents": 1}
    full = registry.snapshot(budget=Budget(max_components=3))
    assert full.truncated is None
    assert "truncated" not in full.to_json()
    assert registry.snapshot(budget=Budget(max_components=0)).truncated == {"droppedComponents": 3}


def test_AS_SNAP_003_byte_budget(registry: AgentSurfaceRegistry, contract: ComponentContract) -> None:
    for instance in ("a", "b", "c"):
        registry.register(bind_devices(contract, instance))
    one = len(json.dumps(registry.snapshot().components[0].to_json(), separators=(",", ":")))
    snapshot = registry.snapshot(budget=Budget(max_bytes=2 * one + 1))
    assert [c.instance_id for c in snapshot.components] == ["a", "b"]
    assert snapshot.truncated == {"droppedComponents": 1}


def test_AS_SNAP_003_budget_also_drops_the_procedures_of_dropped_components() -> None:
    high, low, proc = devices_contract("high.panel", priority=1), devices_contract("low.panel"), disable_procedure()
    registry = registry_for([high, low, proc])
    registry.register(bind_devices(high))
    registry.register(bind_devices(low, procedures=[proc.reference()]))
    assert len(registry.snapshot().procedures) == 1
    snapshot = registry.snapshot(budget=Budget(max_components=1))
    assert snapshot.procedures == ()


@pytest.mark.parametrize("budget", [{"max_components": -1}, {"max_bytes": "1k"}, {"max_components": True}])
def test_budget_values_are_checked(budget: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="budget"):
        Budget(**budget)


# ----------------------------------------------------------------------------- scope


def test_scope_matches_whole_segments_only() -> None:
    contracts = [devices_contract(t) for t in ("devices", "devices.table", "devices.map.marker", "devicesx.panel", "reports.panel")]
    registry = registry_for(contracts)
    for c in contracts:
        registry.register(bind_devices(c))

    def types(scope: Any) -> list[str]:
        return sorted(c.type for c in registry.snapshot(scope=scope).components)

    assert types(["devices"]) == ["devices", "devices.map.marker", "devices.table"]
    assert types(["devices.map"]) == ["devices.map.marker"]
    assert types(["dev"]) == []
    assert types(["devices.tab"]) == []
    assert types(["reports", "devicesx"]) == ["devicesx.panel", "reports.panel"]
    assert types([]) == []
    assert len(types(None)) == 5


def test_scope_also_filters_procedures(contract: ComponentContract) -> None:
    proc = disable_procedure()
    other = devices_contract("reports.panel")
    registry = registry_for([contract, other, proc])
    registry.register(bind_devices(contract, procedures=[proc.reference()]))
    registry.register(bind_devices(other))
    assert len(registry.snapshot(scope=["devices"]).procedures) == 1
    assert registry.snapshot(scope=["reports"]).procedures == ()


@pytest.mark.parametrize("scope", ["devices", [""], [3], {"devices": True}])
def test_scope_must_be_a_list_of_prefixes(registry: AgentSurfaceRegistry, scope: Any) -> None:
    with pytest.raises(TypeError, match="scope"):
        registry.snapshot(scope=scope)


def test_snapshot_consumer_must_be_a_consumer(registry: AgentSurfaceRegistry) -> None:
    with pytest.raises(TypeError, match="consumer must be a Consumer"):
        registry.snapshot(consumer="agent")  # type: ignore[arg-type]


# ----------------------------------------------------------------------------- availability


def test_include_unavailable_false_filters_visible_disabled(
    registry: AgentSurfaceRegistry, contract: ComponentContract
) -> None:
    registry.register(bind_devices(contract, when_clear=lambda: False))
    names = [a.name for a in registry.snapshot().components[0].actions]
    assert "clearSelection" in names
    filtered = registry.snapshot(include_unavailable=False)
    assert [a.name for a in filtered.components[0].actions] == ["selectRows"]


def test_include_unavailable_false_drops_a_component_with_nothing_available(
    registry: AgentSurfaceRegistry, contract: ComponentContract
) -> None:
    handle = registry.register(bind_devices(contract))
    handle.update(enabled=False)
    assert registry.snapshot(include_unavailable=False).components == ()


def test_disabled_component_is_visible_disabled(registry: AgentSurfaceRegistry, contract: ComponentContract) -> None:
    handle = registry.register(bind_devices(contract))
    handle.update(enabled=False)
    component = registry.snapshot().components[0]
    for capability in (*component.observations, *component.actions):
        assert capability.available is False
        assert capability.unavailable_reason == "component-disabled"


def test_binding_can_start_disabled(registry: AgentSurfaceRegistry, contract: ComponentContract) -> None:
    registry.register(bind_devices(contract, enabled=False))
    assert all(c.unavailable_reason == "component-disabled" for c in registry.snapshot().capabilities())


def test_when_false_uses_the_bindings_reason(registry: AgentSurfaceRegistry, contract: ComponentContract) -> None:
    registry.register(bind_devices(contract, when_clear=lambda: False))
    clear = _descriptor(registry, "view:devices.table.clearSelection")
    assert (clear.available, clear.unavailable_reason) == (False, "No rows are selected")
    assert clear.to_json()["unavailableReason"] == "No rows are selected"


def test_a_throwing_when_counts_as_false_with_when_error(
    registry: AgentSurfaceRegistry, contract: ComponentContract, caplog: Any
) -> None:
    def boom() -> bool:
        raise RuntimeError("when bug")

    registry.register(bind_devices(contract, when_clear=boom))
    with caplog.at_level(logging.WARNING, logger="agentsurface"):
        clear = _descriptor(registry, "view:devices.table.clearSelection")
    assert (clear.available, clear.unavailable_reason) == (False, "when-error")
    assert "when() of view:devices.table.clearSelection raised" in caplog.text


def test_callable_reasons_and_their_failures(registry: AgentSurfaceRegistry, contract: ComponentContract) -> None:
    def bad_reason() -> str:
        raise RuntimeError("reason bug")

    binding = contract.bind(
        observations={
            "visibleRows": ObservationBinding(lambda c: {}, when=lambda: False, unavailable_reason=lambda: "Loading rows")
        },
        actions={
            "selectRows": ActionBinding(lambda v, c: None, when=lambda: False, unavailable_reason=bad_reason),
            "clearSelection": ActionBinding(lambda v, c: None, when=lambda: 0),  # type: ignore[arg-type, return-value]
        },
    )
    registry.register(binding)
    assert _descriptor(registry, "view:devices.table.visibleRows").unavailable_reason == "Loading rows"
    assert _descriptor(registry, "view:devices.table.selectRows").unavailable_reason == "not available right now"
    assert _descriptor(registry, "view:devices.table.clearSelection").available is False


def test_pushed_override_false_wins_and_true_does_not_override_when(
    registry: AgentSurfaceRegistry, contract: ComponentContract
) -> None:
    handle = registry.register(bind_devices(contract, when_clear=lambda: False))
    handle.update(availability={"selectRows": {"available": False, "reason": "busy"}, "clearSelection": True})
    assert _descriptor(registry, "view:devices.table.selectRows").unavailable_reason == "busy"
    assert _descriptor(registry, "view:devices.table.clearSelection").available is False


# ----------------------------------------------------------------------------- AS-AVAIL-002


def test_AS_AVAIL_002_hide_removes_the_capability_entirely(contract: ComponentContract) -> None:
    registry = registry_for([contract])
    registry.register(bind_devices(contract, policies=[Vote("hide", "selectRows")]))
    snapshot = registry.snapshot()
    assert snapshot.find("view:devices.table.selectRows") == []
    assert "selectRows" not in json.dumps(snapshot.to_json())
    assert [a.name for a in snapshot.components[0].actions] == ["clearSelection"]


def test_AS_AVAIL_002_disable_keeps_the_capability_with_a_reason(contract: ComponentContract) -> None:
    registry = registry_for([contract])
    registry.register(
        bind_devices(contract, policies=[Vote("disable", "selectRows", reason="Select rows first")])
    )
    select = _descriptor(registry, "view:devices.table.selectRows")
    assert (select.available, select.unavailable_reason) == (False, "Select rows first")
    plain = registry_for([contract])
    plain.register(bind_devices(contract, policies=[Vote("disable", "selectRows")]))
    assert _descriptor(plain, "view:devices.table.selectRows").unavailable_reason == "disabled by policy"


def test_AS_AVAIL_002_state_reason_wins_over_a_policy_disable(contract: ComponentContract) -> None:
    registry = registry_for([contract])
    registry.register(bind_devices(contract, when_clear=lambda: False, policies=[Vote("disable", reason="policy")]))
    assert _descriptor(registry, "view:devices.table.clearSelection").unavailable_reason == "No rows are selected"


@pytest.mark.parametrize("failure", [RuntimeError("policy bug"), "maybe"])
def test_AS_AVAIL_002_a_throwing_or_invalid_discovery_policy_hides(contract: ComponentContract, failure: Any) -> None:
    registry = registry_for([contract])
    registry.register(bind_devices(contract, policies=[Vote(failure, "selectRows")]))
    snapshot = registry.snapshot()
    assert snapshot.find("view:devices.table.selectRows") == []
    assert len(snapshot.find("view:devices.table.visibleRows")) == 1


def test_AS_AVAIL_002_most_restrictive_vote_wins_across_the_chain(contract: ComponentContract) -> None:
    capability_hide = Vote("hide", "visibleRows", name="cap")
    registry = registry_for([contract], policies=[Vote("expose", name="reg")])
    binding = contract.bind(
        observations={"visibleRows": ObservationBinding(lambda c: {}, policies=[capability_hide])},
        actions={"selectRows": lambda v, c: None, "clearSelection": lambda v, c: None},
        policies=[Vote("disable", "visibleRows", "selectRows", name="comp")],
    )
    registry.register(binding)
    snapshot = registry.snapshot()
    assert snapshot.find("view:devices.table.visibleRows") == []  # disable + hide → hide
    assert _descriptor(registry, "view:devices.table.selectRows").available is False  # expose + disable
    assert _descriptor(registry, "view:devices.table.clearSelection").available is True


def test_AS_AVAIL_002_a_component_with_everything_hidden_disappears(contract: ComponentContract) -> None:
    registry = registry_for([contract], policies=[Vote("hide")])
    registry.register(bind_devices(contract))
    assert registry.snapshot().components == ()


def test_AS_AVAIL_002_discovery_is_per_consumer(contract: ComponentContract) -> None:
    class AdminsOnly(Policy):
        name = "admins-only"

        def on_discovery(self, ctx: PolicyContext) -> str | None:
            return None if "admin" in ctx.consumer.grants else "hide"

    registry = registry_for([contract])
    registry.register(bind_devices(contract, policies=[AdminsOnly()]))
    assert registry.snapshot().components == ()
    admin = Consumer("copilot", "embedded", grants=("admin",))
    assert len(registry.snapshot(consumer=admin).components) == 1


def test_policies_see_the_full_discovery_context(contract: ComponentContract) -> None:
    vote = Vote("expose")
    registry = registry_for([contract], context=lambda: {"user": {"id": "u1"}}, policies=[vote])
    handle = registry.register(bind_devices(contract, "main"))
    consumer = Consumer("peer", "webmcp")
    registry.snapshot(consumer=consumer)
    by_id = {ctx.capability_id: ctx for ctx in vote.seen}
    ctx = by_id["view:devices.table.selectRows"]
    assert (ctx.kind, ctx.effect, ctx.component_type, ctx.instance_id) == ("action", "local-state", "devices.table", "main")
    assert ctx.registration_id == handle.registration_id
    assert ctx.consumer is consumer
    assert ctx.host == {"user": {"id": "u1"}}
    assert ctx.origin == "first-party"
    assert by_id["view:devices.table.visibleRows"].effect == "read"


def test_host_context_is_read_lazily_once_per_snapshot_and_failures_are_contained(contract: ComponentContract) -> None:
    calls: list[int] = []

    def context() -> dict[str, Any]:
        calls.append(1)
        raise RuntimeError("context bug")

    vote = Vote("expose")
    registry = registry_for([contract], context=context)
    registry.register(bind_devices(contract))
    registry.snapshot()
    assert calls == []  # no policies: the host context is never needed
    with_policy = registry_for([contract], context=context, policies=[vote])
    with_policy.register(bind_devices(contract))
    with_policy.snapshot()
    assert len(calls) == 1
    assert all(ctx.host == {} for ctx in vote.seen)


# ----------------------------------------------------------------------------- immutability and shape


def test_descriptors_are_immutable(registry: AgentSurfaceRegistry, contract: ComponentContract) -> None:
    registry.register(bind_devices(contract))
    snapshot = registry.snapshot(budget=Budget(max_components=0))
    with pytest.raises(dataclasses.FrozenInstanceError):
        snapshot.surface_version = "9"  # type: ignore[misc]
    with pytest.raises(TypeError):
        snapshot.truncated["droppedComponents"] = 0  # type: ignore[index]
    snapshot = registry.snapshot()
    assert isinstance(snapshot.components, tuple)
    component = snapshot.components[0]
    with pytest.raises(dataclasses.FrozenInstanceError):
        component.description = "x"  # type: ignore[misc]
    assert isinstance(component.actions, tuple)
    action = component.actions[0]
    with pytest.raises(dataclasses.FrozenInstanceError):
        action.available = False  # type: ignore[misc]
    assert isinstance(action.input_schema, FrozenDict)
    with pytest.raises(TypeError):
        action.input_schema["properties"]["x"] = {}
    with pytest.raises(AttributeError):
        component.observations.append(None)  # type: ignore[attr-defined]


def test_snapshot_json_shape(contract: ComponentContract) -> None:
    proc = disable_procedure()
    registry = registry_for([devices_contract(meta={"area": "north"}), proc], route=lambda: {"path": "/devices"})
    handle = registry.register(
        bind_devices(devices_contract(meta={"area": "north"}), "main", parent=("app.page", "root"),
                     procedures=[proc.reference()])
    )
    out = registry.snapshot().to_json()
    assert set(out) == {"surfaceId", "surfaceVersion", "capturedAt", "components", "procedures", "route"}
    assert out["route"] == {"path": "/devices"}
    assert out["capturedAt"].endswith("Z")
    (component,) = out["components"]
    assert component["type"] == "devices.table"
    assert component["instanceId"] == "main"
    assert component["registrationId"] == handle.registration_id
    assert component["parent"] == {"type": "app.page", "instanceId": "root"}
    assert component["meta"] == {"area": "north"}
    (obs,) = component["observations"]
    assert obs == {
        "capabilityId": "view:devices.table.visibleRows",
        "name": "visibleRows",
        "description": "Rows currently visible",
        "outputSchema": FrozenDict(ROWS_OUTPUT) | {"required": ("rows",)},
        "available": True,
    }
    select = next(a for a in component["actions"] if a["name"] == "selectRows")
    assert {k: select[k] for k in ("effect", "idempotent", "reversible", "confirmation", "available")} == {
        "effect": "local-state",
        "idempotent": False,
        "reversible": True,
        "confirmation": "never",
        "available": True,
    }
    json.dumps(out)  # plain JSON throughout


def test_route_failures_are_contained(contract: ComponentContract) -> None:
    def route() -> dict[str, str]:
        raise RuntimeError("router bug")

    registry = registry_for([contract], route=route)
    assert registry.snapshot().route is None


# ----------------------------------------------------------------------------- procedures


def test_procedure_references_are_listed_with_bound_fields_removed(contract: ComponentContract) -> None:
    proc = disable_procedure()
    registry = registry_for([contract, proc])
    ref = proc.reference(
        bind=lambda: {"ids": ["d1"]},
        bound_fields=["ids"],
        describe=lambda: "2 devices selected",
        confirmation="required",
    )
    handle = registry.register(bind_devices(contract, "main", procedures=[ref]))
    snapshot = registry.snapshot()
    (descriptor,) = snapshot.procedures
    assert descriptor.procedure_id == descriptor.capability_id == "domain:devices.disable"
    assert descriptor.name == "devices.disable"
    assert set(descriptor.input_schema["properties"]) == {"reason"}
    assert thaw(descriptor.input_schema["required"]) == ["reason"]
    assert descriptor.effect == "server-mutation"
    assert descriptor.confirmation == "required"
    assert descriptor.contextual_note == "2 devices selected"
    assert descriptor.description == "Disable devices"  # stable text, volatile note kept apart
    out = descriptor.to_json()
    assert out["boundFields"] == [{"path": "ids", "locked": True, "source": "ui-state"}]
    assert out["context"] == {"type": "devices.table", "instanceId": "main"}
    assert out["registrationId"] == handle.registration_id
    # Procedures live at the top level, never inside the component.
    component = snapshot.to_json()["components"][0]
    assert "procedures" not in component
    assert "domain:" not in json.dumps(component)


def test_procedure_reference_availability_and_failing_describe(contract: ComponentContract, caplog: Any) -> None:
    proc = disable_procedure()
    registry = registry_for([contract, proc])

    def describe() -> str:
        raise RuntimeError("describe bug")

    ref = proc.reference(when=lambda: False, unavailable_reason="Select devices first", describe=describe)
    registry.register(bind_devices(contract, procedures=[ref]))
    with caplog.at_level(logging.WARNING, logger="agentsurface"):
        (descriptor,) = registry.snapshot().procedures
    assert (descriptor.available, descriptor.unavailable_reason) == (False, "Select devices first")
    assert descriptor.contextual_note is None
    assert registry.snapshot(include_unavailable=False).procedures == ()


def test_one_procedure_referenced_by_two_instances_is_listed_per_context(contract: ComponentContract) -> None:
    proc = disable_procedure()
    registry = registry_for([contract, proc])
    for instance in ("b", "a"):
        registry.register(bind_devices(contract, instance, procedures=[proc.reference()]))
    procedures = registry.snapshot().procedures
    assert [p.context for p in procedures] == [("devices.table", "a"), ("devices.table", "b")]


# ----------------------------------------------------------------------------- descriptor cache


def test_warm_snapshots_reuse_descriptors_until_something_volatile_changes(contract: ComponentContract) -> None:
    proc = disable_procedure()
    registry = registry_for([contract, proc])
    state: dict[str, Any] = {"selected": [], "note": "nothing selected"}
    ref = proc.reference(describe=lambda: state["note"])
    handle = registry.register(
        bind_devices(contract, when_clear=lambda: bool(state["selected"]), procedures=[ref])
    )
    first, second = registry.snapshot(), registry.snapshot()
    assert second.components[0] is first.components[0]  # nothing changed: same frozen objects
    assert second.procedures[0] is first.procedures[0]

    state["selected"] = ["d1"]  # a lazy when() flip
    third = registry.snapshot()
    assert third.components[0] is not first.components[0]
    assert third.find("view:devices.table.clearSelection")[0].available is True
    assert third.find("view:devices.table.selectRows")[0] is first.find("view:devices.table.selectRows")[0]

    state["note"] = "1 device selected"  # a volatile note
    assert registry.snapshot().procedures[0].contextual_note == "1 device selected"

    handle.update(availability={"selectRows": (False, "busy")})
    select = registry.snapshot().find("view:devices.table.selectRows")[0]
    assert (select.available, select.unavailable_reason) == (False, "busy")
    assert registry.snapshot(include_unavailable=False).find("view:devices.table.selectRows") == []
    assert registry.snapshot().find("view:devices.table.selectRows")[0].unavailable_reason == "busy"
