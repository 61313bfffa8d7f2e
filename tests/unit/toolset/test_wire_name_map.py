"""``wire_name_map()`` answers for the catalog as it is now, whatever the host last listed."""

from __future__ import annotations

from agentsurface.toolset import AgentToolset

from .helpers import DevicesState, bind_devices, devices_contract, devices_surface, toolset_for


def listed(toolset: AgentToolset) -> dict[str, str | None]:
    return {t.name: t.capability_id for t in toolset.tools()}


def test_wire_name_map_drops_the_tools_of_an_unregistered_component() -> None:
    surface = devices_surface()
    toolset = toolset_for(surface.registry)
    assert any(v.startswith("view:devices.table.") for v in toolset.wire_name_map().values())
    surface.handle.close()
    assert toolset.wire_name_map() == {}


def test_wire_name_map_follows_every_surface_change_without_tools_being_listed() -> None:
    # Guard for the class: the map is never a cache of an older catalog. After each change it
    # equals the catalog tools() would list now (mount, second instance, unmount, remount).
    surface = devices_surface()
    toolset = toolset_for(surface.registry)
    assert toolset.wire_name_map() == listed(toolset)
    aux = surface.registry.register(bind_devices(devices_contract(), DevicesState(), "aux"))
    assert toolset.wire_name_map() == listed(toolset)
    assert any(name.endswith("_at_aux") for name in toolset.wire_name_map())
    aux.close()
    assert toolset.wire_name_map() == listed(toolset)
    assert not any(name.endswith("_at_aux") for name in toolset.wire_name_map())
    surface.handle.close()
    assert toolset.wire_name_map() == listed(toolset) == {}
