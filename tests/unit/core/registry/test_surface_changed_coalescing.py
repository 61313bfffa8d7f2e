"""``surface_changed`` is coalesced to one event per event-loop turn with the latest version, is
not dispatched after close, and a toolset hears one change for a burst of registrations."""

from __future__ import annotations

import asyncio
from typing import Any

from agentsurface import AgentSurfaceRegistry, CapabilityAuthority, compile_manifest
from agentsurface.lowlevel import ActionContract, ComponentContract
from agentsurface.toolset import AgentToolset
from tests.support import CONSUMER


def _panel_registry() -> tuple[Any, ComponentContract, list[tuple[str, Any]]]:
    contract = ComponentContract(
        type="app.panel", description="A panel", actions={"close": ActionContract("Close the panel")}
    )
    registry = AgentSurfaceRegistry(authority=CapabilityAuthority.from_manifest(compile_manifest([contract])))
    seen: list[tuple[str, Any]] = []
    registry.subscribe(lambda e: seen.append((e.type, e.data.get("surfaceVersion", e.data.get("instanceId")))))
    return registry, contract, seen


def _mount(registry: Any, contract: ComponentContract, instance_id: str) -> Any:
    return registry.register(contract.bind(instance_id=instance_id, actions={"close": lambda value, ctx: None}))


async def test_surface_changed_is_coalesced_to_one_event_per_loop_turn_with_the_latest_version() -> None:
    registry, contract, seen = _panel_registry()
    for name in ("a", "b", "c"):
        _mount(registry, contract, name)
    # The registrations themselves are reported at once; the surface change waits for the turn.
    assert seen == [("component-registered", "a"), ("component-registered", "b"), ("component-registered", "c")]
    await asyncio.sleep(0)
    assert [s for s in seen if s[0] == "surface-changed"] == [("surface-changed", "3")]
    _mount(registry, contract, "d")
    await asyncio.sleep(0)
    assert [s for s in seen if s[0] == "surface-changed"] == [("surface-changed", "3"), ("surface-changed", "4")]


async def test_a_coalesced_surface_changed_is_not_dispatched_after_close() -> None:
    registry, contract, seen = _panel_registry()
    _mount(registry, contract, "a")
    registry.close()
    await asyncio.sleep(0)
    assert [s for s in seen if s[0] == "surface-changed"] == []


def test_without_a_running_loop_each_change_dispatches_its_own_surface_changed_at_once() -> None:
    registry, contract, seen = _panel_registry()
    _mount(registry, contract, "a")
    _mount(registry, contract, "b")
    assert seen == [
        ("component-registered", "a"),
        ("surface-changed", "1"),
        ("component-registered", "b"),
        ("surface-changed", "2"),
    ]


async def test_a_direct_toolset_hears_one_change_for_a_burst_of_registrations() -> None:
    registry, contract, _seen = _panel_registry()
    toolset = AgentToolset(registry, consumer=CONSUMER, topology="embedded")
    toolset.tools()
    heard: list[int] = []
    toolset.subscribe(lambda tools: heard.append(len(tools)))
    for name in ("a", "b", "c"):
        _mount(registry, contract, name)
    await asyncio.sleep(0)
    assert heard == [3]
