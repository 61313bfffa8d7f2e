"""AS-EVT-001: total mutation order, post-mutation dispatch, listener isolation, and queued
(never re-entrant) events for mutations made from a listener (reference doc 02, "Concurrency
and ordering guarantees")."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

from agentsurface._core.events import EVENT_TYPES, EventBus, SurfaceEvent, make_event
from agentsurface._core.registry.registry import AgentSurfaceRegistry
from agentsurface.lowlevel import ComponentContract
from tests.support import Recorder, bind_devices, devices_contract, disable_procedure, registry_for


@pytest.fixture
def contract() -> ComponentContract:
    return devices_contract()


@pytest.fixture
def registry(contract: ComponentContract) -> AgentSurfaceRegistry:
    return registry_for([contract], environment="test")


def test_AS_EVT_001_events_follow_the_total_mutation_order(
    registry: AgentSurfaceRegistry, contract: ComponentContract
) -> None:
    recorder = Recorder(registry)
    a = registry.register(bind_devices(contract, "a"))
    b = registry.register(bind_devices(contract, "b"))
    a.update(availability={"selectRows": False})
    b.invalidate()
    a.close()
    assert recorder.types == [
        "component-registered",
        "surface-changed",
        "component-registered",
        "surface-changed",
        "availability-changed",
        "surface-changed",
        "surface-changed",
        "component-unregistered",
        "surface-changed",
    ]
    versions = [e["surfaceVersion"] for e in recorder.of("surface-changed")]
    assert versions == ["1", "2", "3", "4", "5"]
    registered = recorder.of("component-registered")
    assert [e["instanceId"] for e in registered] == ["a", "b"]
    assert registered[0].to_json() == {
        "type": "component-registered",
        "registrationId": a.registration_id,
        "componentType": "devices.table",
        "instanceId": "a",
    }


def test_AS_EVT_001_listeners_see_the_state_after_the_mutation(
    registry: AgentSurfaceRegistry, contract: ComponentContract
) -> None:
    seen: list[tuple[str, Any]] = []

    def listener(event: SurfaceEvent) -> None:
        snapshot = registry.snapshot()
        if event.type == "surface-changed":
            seen.append((event.type, (event["surfaceVersion"], registry.version)))
        elif event.type == "availability-changed":
            (descriptor,) = snapshot.find(event["capabilityId"])
            seen.append((event.type, (event["available"], descriptor.available)))
        else:
            seen.append((event.type, len(snapshot.components)))

    registry.subscribe(listener)
    handle = registry.register(bind_devices(contract))
    handle.update(availability={"selectRows": False})
    handle.close()
    assert seen == [
        ("component-registered", 1),
        ("surface-changed", ("1", "1")),
        ("availability-changed", (False, False)),
        ("surface-changed", ("2", "2")),
        ("component-unregistered", 0),
        ("surface-changed", ("3", "3")),
    ]


def test_AS_EVT_001_availability_changed_only_for_capabilities_that_flipped(
    registry: AgentSurfaceRegistry, contract: ComponentContract
) -> None:
    handle = registry.register(bind_devices(contract, when_clear=lambda: False))
    recorder = Recorder(registry)
    handle.update(enabled=False)
    flipped = {e["capabilityId"] for e in recorder.of("availability-changed")}
    # clearSelection was already unavailable (its when() is false): it did not flip.
    assert flipped == {"view:devices.table.visibleRows", "view:devices.table.selectRows"}
    assert all(e["available"] is False for e in recorder.of("availability-changed"))
    assert all(e["registrationId"] == handle.registration_id for e in recorder.of("availability-changed"))


def test_AS_EVT_001_a_fresh_registration_publishes_its_enabled_flag_or_its_when(
    registry: AgentSurfaceRegistry, contract: ComponentContract
) -> None:
    """What a registration publishes first is what later flips are measured from: ``enabled``
    everywhere without a when() (registered disabled: nothing flips until it is enabled), the
    when() where there is one."""
    plain = registry.register(bind_devices(contract, "plain", enabled=False))
    gated = registry.register(bind_devices(contract, "gated", when_clear=lambda: False))
    recorder = Recorder(registry)
    registry.sync_availability()
    assert recorder.of("availability-changed") == []
    plain.update(enabled=True)
    flipped = {(e["capabilityId"], e["available"]) for e in recorder.of("availability-changed")}
    assert flipped == {
        ("view:devices.table.visibleRows", True),
        ("view:devices.table.selectRows", True),
        ("view:devices.table.clearSelection", True),
    }
    assert {e["registrationId"] for e in recorder.of("availability-changed")} == {plain.registration_id}
    assert gated.registration_id != plain.registration_id


def test_AS_EVT_001_listener_exceptions_are_isolated(
    registry: AgentSurfaceRegistry, contract: ComponentContract, caplog: Any
) -> None:
    def broken(event: SurfaceEvent) -> None:
        raise RuntimeError("listener boom")

    registry.subscribe(broken)
    recorder = Recorder(registry)
    with caplog.at_level(logging.ERROR, logger="agentsurface"):
        handle = registry.register(bind_devices(contract))
        handle.close()
    assert recorder.types == ["component-registered", "surface-changed", "component-unregistered", "surface-changed"]
    assert handle.status == "unregistered"
    assert registry.version == "2"
    assert "listener boom" in caplog.text


def test_AS_EVT_001_mutations_from_listeners_are_queued_not_reentrant(
    registry: AgentSurfaceRegistry, contract: ComponentContract
) -> None:
    order: list[str] = []
    nested = {"done": False}

    def listener(event: SurfaceEvent) -> None:
        if event.type != "component-registered":
            return
        order.append(f"start:{event['instanceId']}")
        if not nested["done"]:
            nested["done"] = True
            registry.register(bind_devices(contract, "nested"))
            # The nested mutation happened already...
            order.append(f"live:{len(registry.registrations())}")
        order.append(f"end:{event['instanceId']}")

    registry.subscribe(listener)
    registry.register(bind_devices(contract, "outer"))
    # ...but its event is delivered only after the outer dispatch completed.
    assert order == ["start:outer", "live:2", "end:outer", "start:nested", "end:nested"]


def test_AS_EVT_001_nested_events_queue_behind_all_current_events(
    registry: AgentSurfaceRegistry, contract: ComponentContract
) -> None:
    received: list[str] = []
    fired = {"done": False}

    def mutating(event: SurfaceEvent) -> None:
        if event.type == "component-registered" and not fired["done"]:
            fired["done"] = True
            registry.register(bind_devices(contract, "nested"))

    registry.subscribe(mutating)
    registry.subscribe(lambda e: received.append(f"{e.type}:{e.data.get('instanceId', e.data.get('surfaceVersion'))}"))
    registry.register(bind_devices(contract, "outer"))
    assert received == [
        "component-registered:outer",
        "surface-changed:1",
        "component-registered:nested",
        "surface-changed:2",
    ]


def test_AS_EVT_001_collision_events_are_dispatched_after_the_registration() -> None:
    contract = devices_contract()
    registry = registry_for([contract, disable_procedure(id="domain:devices.table.selectRows")])
    seen: list[tuple[str, int]] = []
    registry.subscribe(lambda e: seen.append((e.type, len(registry.registrations()))))
    registry.register(bind_devices(contract))
    assert seen == [("collision-suspected", 1), ("component-registered", 1), ("surface-changed", 1)]


def test_AS_EVT_001_unsubscribe_stops_delivery(registry: AgentSurfaceRegistry, contract: ComponentContract) -> None:
    got: list[str] = []
    unsubscribe = registry.subscribe(lambda e: got.append(e.type))
    registry.register(bind_devices(contract, "a"))
    unsubscribe()
    unsubscribe()  # idempotent
    registry.register(bind_devices(contract, "b"))
    assert got == ["component-registered", "surface-changed"]


def test_AS_EVT_001_one_callable_subscribed_twice_is_two_subscriptions() -> None:
    bus = EventBus()
    got: list[str] = []
    first = bus.subscribe(got.append)  # type: ignore[arg-type]
    bus.subscribe(got.append)  # type: ignore[arg-type]
    bus.emit(make_event("surface-changed", surfaceVersion="1"))
    assert len(got) == 2
    first()
    bus.emit(make_event("surface-changed", surfaceVersion="2"))
    assert len(got) == 3


def test_AS_EVT_001_listener_added_during_dispatch_sees_only_later_events() -> None:
    bus = EventBus()
    late: list[str] = []

    def adder(event: SurfaceEvent) -> None:
        if event["n"] == 1:
            bus.subscribe(lambda e: late.append(e["n"]))

    bus.subscribe(adder)
    bus.emit(make_event("surface-changed", n=1), make_event("surface-changed", n=2))
    assert late == [2]


def test_events_are_immutable_json() -> None:
    event = make_event("component-rejected", componentType="devices.table", instanceId="x", reason="guard", extra=None)
    assert event.to_json() == {
        "type": "component-rejected",
        "componentType": "devices.table",
        "instanceId": "x",
        "reason": "guard",
    }
    with pytest.raises(TypeError):
        event.data["reason"] = "other"  # type: ignore[index]
    assert event.type in EVENT_TYPES


async def test_a_listener_of_some_types_gets_only_those_and_calls_build_no_event_for_it(
    registry: AgentSurfaceRegistry, contract: ComponentContract
) -> None:
    """A WebMCP adapter listens for surface changes only: its calls build no invocation events,
    and a listener of every type added later gets them again."""
    changes: list[str] = []
    unsubscribe = registry.subscribe(lambda e: changes.append(e.type), ("surface-changed",))
    registry.register(bind_devices(contract, "a"))
    await asyncio.sleep(0)  # surface-changed is coalesced to the end of the loop's turn
    assert changes == ["surface-changed"]
    bus = registry._events
    assert bus.wants("surface-changed")
    assert not bus.wants("invocation-started") and not bus.wants("invocation-settled")
    settled: list[str] = []
    registry.subscribe(lambda e: settled.append(e.type), ["invocation-settled"])
    assert bus.wants("invocation-settled") and not bus.wants("invocation-started")
    result = await registry.invoke({"capabilityId": "view:devices.table.visibleRows", "instanceId": "a"})
    assert result.ok, result
    assert settled == ["invocation-settled"]
    assert "invocation-settled" not in changes and "invocation-started" not in changes
    every: list[str] = []
    registry.subscribe(lambda e: every.append(e.type))
    assert bus.wants("invocation-started")
    await registry.invoke({"capabilityId": "view:devices.table.visibleRows", "instanceId": "a"})
    assert every == ["invocation-started", "invocation-settled"]
    unsubscribe()
    assert changes == ["surface-changed"]


def test_subscribing_to_an_unknown_event_type_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="unknown event types"):
        EventBus().subscribe(lambda e: None, ["surface-change"])
