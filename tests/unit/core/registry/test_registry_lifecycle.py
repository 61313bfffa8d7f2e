"""Registration lifecycle (reference doc 03, "Registration lifecycle", "Collisions",
"Versioning"): AS-LIFE-001/002/003/005, AS-VER-001, tombstones and dispose()."""

from __future__ import annotations

import dataclasses
import logging
from typing import Any

import pytest

from agentsurface import (
    AgentComponent,
    AgentSurfaceRegistry,
    CapabilityAuthority,
    DefinitionError,
    Limits,
    Policy,
    RegistryClosedError,
    action,
    compile_manifest,
    observation,
)
from agentsurface._core.registry.registry import RegistrationHandle
from agentsurface.lowlevel import ActionContract, ComponentContract, ObservationContract
from tests.support import FakeClock, Recorder, bind_devices, devices_contract, disable_procedure, registry_for


@pytest.fixture
def contract() -> ComponentContract:
    return devices_contract()


@pytest.fixture
def registry(contract: ComponentContract) -> AgentSurfaceRegistry:
    return registry_for([contract], environment="test")


def _version(registry: AgentSurfaceRegistry) -> int:
    return int(registry.version)


def _live(registry: AgentSurfaceRegistry) -> list[tuple[str, str]]:
    return [(c.type, c.instance_id) for c in registry.snapshot().components]


# ----------------------------------------------------------------------------- AS-LIFE-001


def test_AS_LIFE_001_registration_is_live_immediately(
    registry: AgentSurfaceRegistry, contract: ComponentContract
) -> None:
    handle = registry.register(bind_devices(contract, "main"))
    assert isinstance(handle, RegistrationHandle)
    assert handle.status == "active"
    assert handle.registration_id.startswith("reg_")
    snapshot = registry.snapshot()
    assert _live(registry) == [("devices.table", "main")]
    assert snapshot.components[0].registration_id == handle.registration_id
    assert registry.registration(handle.registration_id) is not None
    assert [r.registration_id for r in registry.registrations()] == [handle.registration_id]


def test_AS_LIFE_001_capabilities_disappear_on_unregister(
    registry: AgentSurfaceRegistry, contract: ComponentContract
) -> None:
    handle = registry.register(bind_devices(contract))
    handle.close()
    assert handle.status == "unregistered"
    assert registry.snapshot().components == ()
    assert registry.snapshot().find("view:devices.table.selectRows") == []
    assert registry.registration(handle.registration_id) is None
    assert registry.registrations() == []


def test_AS_LIFE_001_unregister_aborts_in_flight_signals(
    registry: AgentSurfaceRegistry, contract: ComponentContract
) -> None:
    from agentsurface import CancelSignal

    handle = registry.register(bind_devices(contract))
    reg = registry.registration(handle.registration_id)
    assert reg is not None
    signal = CancelSignal()
    reg.inflight.add(signal)
    handle.close()
    assert signal.aborted
    assert signal.reason == "unmounted"


def test_AS_LIFE_001_post_unregister_handle_calls_are_noops(
    registry: AgentSurfaceRegistry, contract: ComponentContract
) -> None:
    handle = registry.register(bind_devices(contract))
    handle.close()
    version = registry.version
    handle.update(enabled=False)
    handle.update(availability={"selectRows": False})
    handle.invalidate()
    handle.close()
    assert registry.version == version
    assert handle.status == "unregistered"


def test_AS_LIFE_001_dead_handle_calls_warn_in_development(contract: ComponentContract, caplog: Any) -> None:
    registry = registry_for([contract], environment="development")
    handle = registry.register(bind_devices(contract))
    handle.close()
    with caplog.at_level(logging.WARNING, logger="agentsurface"):
        handle.update(enabled=False)
    assert "update() on a unregistered registration does nothing" in caplog.text


def test_AS_LIFE_001_an_agent_component_instance_registers_directly() -> None:
    class Counter(AgentComponent, type="demo.counter", description="A counter"):
        @observation("The current value")
        def value(self) -> int:
            return 1

    registry = registry_for([Counter], environment="test")
    handle = registry.register(Counter())
    assert handle.status == "active"
    assert registry.snapshot().find("view:demo.counter.value")


# ----------------------------------------------------------------------------- AS-LIFE-002


def test_AS_LIFE_002_only_enabled_and_availability_are_updatable(
    registry: AgentSurfaceRegistry, contract: ComponentContract
) -> None:
    handle = registry.register(bind_devices(contract))
    with pytest.raises(TypeError):
        handle.update(description="changed")  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        handle.update(instance_id="other")  # type: ignore[call-arg]
    handle.update(enabled=False)
    assert all(not c.available for c in registry.snapshot().capabilities())


@pytest.mark.parametrize(
    ("patch", "fragment"),
    [
        ({"availability": {"nope": False}}, "'nope' is not a capability of this registration"),
        ({"availability": {"view:other.type.selectRows": False}}, "is not a capability"),
        ({"availability": {"selectRows": "no"}}, "availability override must be"),
        ({"availability": {"selectRows": {"available": "no"}}}, "availability override must be"),
        ({"availability": {"selectRows": (False, 3)}}, "availability override must be"),
        ({"availability": ["selectRows"]}, "availability must be a mapping"),
        ({"enabled": "false"}, "enabled must be True or False"),
    ],
)
def test_AS_LIFE_002_bad_updates_raise_and_change_nothing(
    registry: AgentSurfaceRegistry, contract: ComponentContract, patch: dict[str, Any], fragment: str
) -> None:
    handle = registry.register(bind_devices(contract))
    recorder = Recorder(registry)
    version = registry.version
    with pytest.raises(DefinitionError) as info:
        handle.update(**{"enabled": False, "availability": {"clearSelection": False}, **patch})
    assert info.value.code == "INVALID_DEFINITION"
    assert fragment in str(info.value)
    # Nothing half-applied: still enabled, no override, no bump, no event.
    assert registry.version == version
    assert recorder.events == []
    reg = registry.registration(handle.registration_id)
    assert reg is not None
    assert reg.enabled is True
    assert reg.overrides == {}


def test_AS_LIFE_002_structural_defects_raise_and_register_nothing(
    registry: AgentSurfaceRegistry, contract: ComponentContract
) -> None:
    recorder = Recorder(registry)
    with pytest.raises(DefinitionError):
        registry.register(bind_devices(devices_contract(description="changed")))
    with pytest.raises(DefinitionError):
        registry.register({"type": "devices.table"})
    assert registry.version == "0"
    assert registry.registrations() == []
    assert recorder.events == []


def test_AS_LIFE_002_structural_defects_raise_in_every_environment(contract: ComponentContract) -> None:
    for environment in ("development", "production", "test"):
        registry = registry_for([contract], environment=environment)
        with pytest.raises(DefinitionError):
            registry.register(bind_devices(devices_contract("devices.other")))


def test_AS_LIFE_002_overrides_accept_names_ids_tuples_and_clearing(
    registry: AgentSurfaceRegistry, contract: ComponentContract
) -> None:
    handle = registry.register(bind_devices(contract))

    def select() -> Any:
        (descriptor,) = registry.snapshot().find("view:devices.table.selectRows")
        return descriptor

    handle.update(availability={"selectRows": {"available": False, "reason": "busy"}})
    assert (select().available, select().unavailable_reason) == (False, "busy")
    handle.update(availability={"view:devices.table.selectRows": (False, "loading")})
    assert select().unavailable_reason == "loading"
    handle.update(availability={"selectRows": None})
    assert select().available is True
    handle.update(availability={"selectRows": False})
    assert (select().available, select().unavailable_reason) == (False, "not available right now")


# ----------------------------------------------------------------------------- AS-LIFE-003


def test_AS_LIFE_003_duplicate_instance_gets_a_dead_handle(
    registry: AgentSurfaceRegistry, contract: ComponentContract
) -> None:
    recorder = Recorder(registry)
    first = registry.register(bind_devices(contract))
    version = registry.version
    second = registry.register(bind_devices(contract))
    assert first.status == "active"
    assert second.status == "rejected"
    assert second.registration_id != first.registration_id
    assert registry.version == version  # a rejection is not a surface mutation
    assert [c.registration_id for c in registry.snapshot().components] == [first.registration_id]
    (rejected,) = recorder.of("component-rejected")
    assert rejected.to_json() == {
        "type": "component-rejected",
        "componentType": "devices.table",
        "instanceId": "default",
        "reason": "duplicate",
    }
    # The dead handle does nothing.
    second.update(enabled=False)
    second.invalidate()
    second.close()
    assert registry.version == version
    assert first.status == "active"


def test_AS_LIFE_003_distinct_instances_coexist(registry: AgentSurfaceRegistry, contract: ComponentContract) -> None:
    registry.register(bind_devices(contract, "main"))
    registry.register(bind_devices(contract, "comparison"))
    assert _live(registry) == [("devices.table", "comparison"), ("devices.table", "main")]


def test_AS_LIFE_003_replace_mode_unregisters_the_predecessor(contract: ComponentContract) -> None:
    from agentsurface import CancelSignal

    registry = registry_for([contract], on_duplicate_instance="replace")
    recorder = Recorder(registry)
    first = registry.register(bind_devices(contract))
    reg = registry.registration(first.registration_id)
    assert reg is not None
    signal = CancelSignal()
    reg.inflight.add(signal)
    second = registry.register(bind_devices(contract))
    assert first.status == "unregistered"
    assert second.status == "active"
    assert signal.aborted
    assert [c.registration_id for c in registry.snapshot().components] == [second.registration_id]
    assert registry.tombstone(first.registration_id) is not None
    assert [t for t in recorder.types if t != "surface-changed"] == [
        "component-registered",
        "component-unregistered",
        "component-registered",
    ]


def test_AS_LIFE_003_guard_rejection(contract: ComponentContract) -> None:
    seen: list[dict[str, Any]] = []
    third = devices_contract("widgets.panel", origin="third-party")

    def guard(candidate: Any) -> str:
        seen.append(dict(candidate))
        return "reject" if candidate["origin"] == "third-party" else "accept"

    registry = registry_for([contract, third], on_register=guard)
    recorder = Recorder(registry)
    ok = registry.register(bind_devices(contract))
    refused = registry.register(bind_devices(third))
    assert ok.status == "active"
    assert refused.status == "rejected"
    assert seen[1] == {"type": "widgets.panel", "instanceId": "default", "origin": "third-party"}
    assert [e["reason"] for e in recorder.of("component-rejected")] == ["guard"]
    assert _live(registry) == [("devices.table", "default")]


def test_AS_LIFE_003_a_failing_guard_fails_closed(contract: ComponentContract, caplog: Any) -> None:
    def guard(candidate: Any) -> str:
        raise RuntimeError("guard bug")

    registry = registry_for([contract], on_register=guard)
    with caplog.at_level(logging.ERROR, logger="agentsurface"):
        handle = registry.register(bind_devices(contract))
    assert handle.status == "rejected"
    assert registry.registrations() == []
    assert "on_register guard raised" in caplog.text


def test_AS_LIFE_003_guard_must_say_accept(contract: ComponentContract) -> None:
    registry = registry_for([contract], on_register=lambda candidate: "yes")
    assert registry.register(bind_devices(contract)).status == "rejected"


def test_AS_LIFE_003_capability_duplicates_are_structural() -> None:
    with pytest.raises(DefinitionError) as info:
        ComponentContract(
            type="devices.table",
            description="Devices",
            observations={"go": ObservationContract("Go", output={"type": "object"})},
            actions={"go": ActionContract("Go")},
        )
    assert info.value.code == "DUPLICATE_CAPABILITY"


def test_AS_LIFE_003_cross_plane_suffix_collision_warns_by_default(caplog: Any) -> None:
    contract = devices_contract()
    twin = disable_procedure(id="domain:devices.table.selectRows")
    registry = registry_for([contract, twin])
    recorder = Recorder(registry)
    with caplog.at_level(logging.WARNING, logger="agentsurface"):
        handle = registry.register(bind_devices(contract))
    assert handle.status == "active"
    assert "view:devices.table.selectRows looks like a copy of the domain procedure" in caplog.text
    (event,) = recorder.of("collision-suspected")
    assert event.to_json() == {
        "type": "collision-suspected",
        "viewCapabilityId": "view:devices.table.selectRows",
        "domainProcedureId": "domain:devices.table.selectRows",
    }


def test_AS_LIFE_003_cross_plane_suffix_collision_can_be_an_error_or_off() -> None:
    contract = devices_contract()
    twin = disable_procedure(id="domain:devices.table.selectRows")
    strict = registry_for([contract, twin], duplicate_suffix_policy="error")
    with pytest.raises(DefinitionError) as info:
        strict.register(bind_devices(contract))
    assert info.value.code == "PLANE_VIOLATION"
    assert strict.registrations() == []
    quiet = registry_for([contract, twin], duplicate_suffix_policy="off")
    recorder = Recorder(quiet)
    quiet.register(bind_devices(contract))
    assert recorder.of("collision-suspected") == []


# ----------------------------------------------------------------------------- AS-LIFE-005


def test_AS_LIFE_005_register_cleanup_register_yields_a_new_registration_id(
    registry: AgentSurfaceRegistry, contract: ComponentContract
) -> None:
    recorder = Recorder(registry)
    binding = bind_devices(contract)
    first = registry.register(binding)
    first.close()
    second = registry.register(binding)  # the same binding, remounted
    assert second.status == "active"
    assert second.registration_id != first.registration_id
    assert registry.registration(first.registration_id) is None
    tomb = registry.tombstone(first.registration_id)
    assert tomb is not None
    assert (tomb.component_type, tomb.instance_id) == ("devices.table", "default")
    assert tomb.unregistered_at >= tomb.registered_at
    assert registry.tombstone(second.registration_id) is None
    assert [t for t in recorder.types if t != "surface-changed"] == [
        "component-registered",
        "component-unregistered",
        "component-registered",
    ]
    assert len(registry.snapshot().components) == 1


def test_registration_ids_are_unique_and_never_reused(
    registry: AgentSurfaceRegistry, contract: ComponentContract
) -> None:
    ids = set()
    for _ in range(50):
        handle = registry.register(bind_devices(contract))
        ids.add(handle.registration_id)
        handle.close()
    assert len(ids) == 50


# ----------------------------------------------------------------------------- tombstones


def test_tombstones_are_bounded_by_size(contract: ComponentContract) -> None:
    registry = registry_for([contract], limits=Limits(tombstone_size=2))
    ids = []
    for instance in ("a", "b", "c"):
        handle = registry.register(bind_devices(contract, instance))
        handle.close()
        ids.append(handle.registration_id)
    assert registry.tombstone(ids[0]) is None  # oldest evicted first
    assert registry.tombstone(ids[1]) is not None
    assert registry.tombstone(ids[2]) is not None


def test_tombstones_expire_after_their_ttl(contract: ComponentContract) -> None:
    clock = FakeClock()
    registry = registry_for([contract], limits=Limits(tombstone_ttl=300), clock=clock)
    old = registry.register(bind_devices(contract, "old"))
    old.close()
    clock.advance(200)
    young = registry.register(bind_devices(contract, "young"))
    young.close()
    tomb = registry.tombstone(old.registration_id)
    assert tomb is not None
    assert tomb.unregistered_at == clock.value - 200
    clock.advance(100)  # old is exactly 300 s old: still kept
    assert registry.tombstone(old.registration_id) is not None
    clock.advance(1)
    assert registry.tombstone(old.registration_id) is None
    assert registry.tombstone(young.registration_id) is not None
    clock.advance(200)
    assert registry.tombstone(young.registration_id) is None


def test_tombstones_can_be_turned_off(contract: ComponentContract) -> None:
    registry = registry_for([contract], limits=Limits(tombstone_size=0))
    handle = registry.register(bind_devices(contract))
    handle.close()
    assert registry.tombstone(handle.registration_id) is None


def test_tombstones_keep_identifiers_never_handlers(
    registry: AgentSurfaceRegistry, contract: ComponentContract
) -> None:
    handle = registry.register(bind_devices(contract))
    handle.close()
    tomb = registry.tombstone(handle.registration_id)
    assert tomb is not None
    for field in dataclasses.fields(tomb):
        value = getattr(tomb, field.name)
        assert not callable(value)
        assert isinstance(value, (str, float, int, frozenset))


# ----------------------------------------------------------------------------- AS-VER-001


def test_AS_VER_001_version_bump_matrix(registry: AgentSurfaceRegistry, contract: ComponentContract) -> None:
    assert registry.version == "0"
    handle = registry.register(bind_devices(contract))
    assert _version(registry) == 1
    handle.update(enabled=False)
    assert _version(registry) == 2
    handle.update(enabled=False)  # unchanged: no bump
    assert _version(registry) == 2
    handle.update(availability={"selectRows": {"available": False, "reason": "no rows"}})
    assert _version(registry) == 3
    handle.update(availability={"selectRows": {"available": False, "reason": "no rows"}})
    assert _version(registry) == 3
    handle.update(availability={"selectRows": None})  # clearing an override is a change
    assert _version(registry) == 4
    handle.update()
    assert _version(registry) == 4
    handle.invalidate()
    assert _version(registry) == 5
    registry.register(bind_devices(contract))  # duplicate, rejected: no bump
    assert _version(registry) == 5
    handle.close()
    assert _version(registry) == 6


def test_AS_VER_001_replace_bumps(contract: ComponentContract) -> None:
    registry = registry_for([contract], on_duplicate_instance="replace")
    registry.register(bind_devices(contract))
    before = _version(registry)
    registry.register(bind_devices(contract))
    assert _version(registry) > before


def test_AS_VER_001_guard_rejection_does_not_bump(contract: ComponentContract) -> None:
    registry = registry_for([contract], on_register=lambda c: "reject")
    registry.register(bind_devices(contract))
    assert registry.version == "0"


def test_AS_VER_001_lazy_when_drift_does_not_bump(
    registry: AgentSurfaceRegistry, contract: ComponentContract
) -> None:
    state = {"selected": []}
    registry.register(bind_devices(contract, when_clear=lambda: bool(state["selected"])))
    version = registry.version

    def clear() -> Any:
        (descriptor,) = registry.snapshot().find("view:devices.table.clearSelection")
        return descriptor

    assert (clear().available, clear().unavailable_reason) == (False, "No rows are selected")
    state["selected"] = ["d1"]
    assert registry.version == version
    assert clear().available is True  # ...but the snapshot reflects the fresh evaluation


def test_AS_VER_001_handler_swaps_do_not_bump() -> None:
    class Panel(AgentComponent, type="demo.panel", description="A panel"):
        @observation("Current state")
        def state(self) -> int:
            return 1

        @action("Reset it")
        def reset(self) -> None:
            return None

    registry = registry_for([Panel])
    panel = Panel()
    handle = registry.register(panel)
    version = registry.version
    reg = registry.registration(handle.registration_id)
    assert reg is not None
    read = reg.binding.observations["state"].read
    assert read(None) == 1
    panel.state = lambda: 2  # type: ignore[method-assign]
    assert read(None) == 2  # the live handler is looked up at call time
    assert registry.version == version
    assert registry.snapshot().find("view:demo.panel.state")[0].available


def test_AS_VER_001_surface_ids_differ_per_registry(contract: ComponentContract) -> None:
    authority = CapabilityAuthority.from_manifest(compile_manifest([contract]))
    a = AgentSurfaceRegistry(authority=authority)
    b = AgentSurfaceRegistry(authority=authority)
    assert a.surface_id != b.surface_id
    assert a.surface_id.startswith("srf_")
    assert len(a.surface_id) == len("srf_") + 22


def test_AS_VER_001_snapshot_carries_the_surface_identity(
    registry: AgentSurfaceRegistry, contract: ComponentContract
) -> None:
    registry.register(bind_devices(contract))
    snapshot = registry.snapshot()
    assert (snapshot.surface_id, snapshot.surface_version) == (registry.surface_id, "1")


# ----------------------------------------------------------------------------- dispose


def test_dispose_is_idempotent_and_later_use_raises(
    registry: AgentSurfaceRegistry, contract: ComponentContract
) -> None:
    from agentsurface import CancelSignal

    handle = registry.register(bind_devices(contract))
    reg = registry.registration(handle.registration_id)
    assert reg is not None
    signal = CancelSignal()
    reg.inflight.add(signal)
    recorder = Recorder(registry)
    registry.close()
    registry.close()
    assert registry.closed
    assert signal.aborted
    assert signal.reason == "disposed"
    assert handle.status == "unregistered"
    assert registry.registrations() == []
    with pytest.raises(RegistryClosedError):
        registry.register(bind_devices(contract, "again"))
    with pytest.raises(RegistryClosedError):
        registry.snapshot()
    with pytest.raises(RegistryClosedError):
        registry.subscribe(lambda e: None)
    # Handles are inert after dispose; listeners were dropped.
    handle.update(enabled=False)
    handle.close()
    assert recorder.events == []


# ----------------------------------------------------------------------------- construction


class _Deny(Policy):
    name = "deny"


@pytest.mark.parametrize(
    ("options", "error", "fragment"),
    [
        ({"environment": "staging"}, ValueError, "environment must be"),
        ({"on_duplicate_instance": "merge"}, ValueError, "on_duplicate_instance"),
        ({"duplicate_suffix_policy": "loud"}, ValueError, "duplicate_suffix_policy"),
        ({"policies": [object()]}, TypeError, "policies: <object"),
        ({"policies": _Deny()}, TypeError, "policies must be a list"),
        ({"limits": {"tombstone_size": 1}}, TypeError, "limits must be a Limits"),
        ({"context": {"user": "u"}}, TypeError, "context must be callable"),
        ({"on_register": "accept"}, TypeError, "on_register must be callable"),
        ({"route": "/devices"}, TypeError, "route must be callable"),
        ({"clock": 5}, TypeError, "clock must be"),
        ({"authorty": None}, TypeError, "authorty"),
    ],
)
def test_registry_options_are_checked_by_name(
    contract: ComponentContract, options: dict[str, Any], error: type[Exception], fragment: str
) -> None:
    authority = CapabilityAuthority.from_manifest(compile_manifest([contract]))
    with pytest.raises(error, match=fragment):
        AgentSurfaceRegistry(authority=authority, **options)


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [({"tombstone_size": -1}, "tombstone_size"), ({"action_timeout": "10"}, "action_timeout"),
     ({"dedupe_cache_size": True}, "dedupe_cache_size")],
)
def test_limits_are_checked_by_name(kwargs: dict[str, Any], fragment: str) -> None:
    with pytest.raises(ValueError, match=fragment):
        Limits(**kwargs)
