"""Tenant boundary and environment policies at their edges: no expected tenant, no host tenant,
the registry's environment rather than the host's, and a bare string refused."""

from __future__ import annotations

from typing import Any

import pytest

from agentsurface import (
    AgentSurfaceRegistry,
    CapabilityAuthority,
    compile_manifest,
    environment,
    tenant_boundary,
)
from agentsurface.lowlevel import ActionContract, ComponentContract


def _tenant_registry(host: dict[str, Any], policy: Any) -> Any:
    acme = ComponentContract(
        type="devices.table",
        description="The devices table",
        actions={"refresh": ActionContract("Reload the rows")},
    )
    navigation = ComponentContract(
        type="app.navigation", description="Navigation", actions={"goHome": ActionContract("Go home")}
    )
    registry = AgentSurfaceRegistry(
        authority=CapabilityAuthority.from_manifest(compile_manifest([acme, navigation])),
        context=lambda: host,
        policies=[policy],
    )
    registry.register(acme.bind(actions={"refresh": lambda value, ctx: None}, internal={"tenant": "acme"}))
    registry.register(navigation.bind(actions={"goHome": lambda value, ctx: None}))  # no tenant
    return registry


async def test_tenant_boundary_keeps_a_component_with_no_expected_tenant_visible() -> None:
    boundary = tenant_boundary(current=lambda host: host.get("tenant"), expected=lambda ctx: ctx.internal.get("tenant"))
    registry = _tenant_registry({"tenant": "globex"}, boundary)
    visible = [c.capability_id for c in registry.snapshot().capabilities()]
    assert visible == ["view:app.navigation.goHome"]  # acme's table is hidden, navigation stays
    assert (await registry.invoke({"capabilityId": "view:app.navigation.goHome"})).ok
    refused = await registry.invoke({"capabilityId": "view:devices.table.refresh"})
    assert refused.code == "NOT_AUTHORIZED"


def test_tenant_boundary_still_hides_a_tenanted_component_when_the_host_has_no_tenant() -> None:
    boundary = tenant_boundary(current=lambda host: host.get("tenant"), expected=lambda ctx: ctx.internal.get("tenant"))
    registry = _tenant_registry({}, boundary)
    assert [c.capability_id for c in registry.snapshot().capabilities()] == ["view:app.navigation.goHome"]


def _environment_registry(env: Any, host: dict[str, Any]) -> Any:
    contract = ComponentContract(
        type="debug.panel", description="Debug tools", actions={"dumpState": ActionContract("Dump state")}
    )
    registry = AgentSurfaceRegistry(
        authority=CapabilityAuthority.from_manifest(compile_manifest([contract])),
        environment=env,
        context=lambda: host,
        policies=[environment(["development"])],
    )
    registry.register(contract.bind(actions={"dumpState": lambda value, ctx: None}))
    return registry


async def test_environment_policy_reads_the_registry_environment_not_the_host() -> None:
    production = _environment_registry("production", {"environment": "development"})
    assert list(production.snapshot().capabilities()) == []
    refused = await production.invoke({"capabilityId": "view:debug.panel.dumpState"})
    assert refused.code == "CAPABILITY_NOT_FOUND"
    development = _environment_registry("development", {})  # no host entry needed
    assert [c.capability_id for c in development.snapshot().capabilities()] == ["view:debug.panel.dumpState"]
    assert (await development.invoke({"capabilityId": "view:debug.panel.dumpState"})).ok


def test_environment_policy_refuses_a_bare_string() -> None:
    with pytest.raises(TypeError, match="list of environment names"):
        environment("development")  # type: ignore[arg-type]
