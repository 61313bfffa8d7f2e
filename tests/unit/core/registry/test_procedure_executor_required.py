"""A registry's procedure executor is given at construction: ``domain:`` calls run through it, and
procedure references need one at registration (function- and class-based components)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from agentsurface import (
    ActionContext,
    AgentComponent,
    AgentSurfaceRegistry,
    CapabilityAuthority,
    DefinitionError,
    ProcedureReference,
    compile_manifest,
)
from tests.support import PING, echo_executor, toolbar_contract


class Toolbar(AgentComponent, type="app.toolbar", description="The toolbar"):
    def agent_procedures(self) -> Sequence[ProcedureReference]:
        return (PING.reference(),)


def test_a_procedure_reference_without_an_executor_is_refused_at_registration() -> None:
    contract = toolbar_contract()
    registry = AgentSurfaceRegistry(authority=CapabilityAuthority.from_manifest(compile_manifest([contract, PING])))
    with pytest.raises(DefinitionError, match="no procedure executor") as info:
        registry.register(contract.bind(procedures=[PING.reference()]))
    assert info.value.code == "PLANE_VIOLATION"
    assert "domain:app.ping" in str(info.value) and "procedure_executor=" in str(info.value)
    assert registry.registrations() == [] and registry.version == "0"  # nothing registered


def test_a_class_based_component_with_references_and_no_executor_is_refused_too() -> None:
    authority = CapabilityAuthority.from_manifest(compile_manifest([Toolbar, PING]))
    with pytest.raises(DefinitionError, match="no procedure executor"):
        AgentSurfaceRegistry(authority=authority).register(Toolbar())
    registry = AgentSurfaceRegistry(authority=authority, procedure_executor=echo_executor)
    assert registry.register(Toolbar()).status == "active"


def test_a_component_without_references_needs_no_executor() -> None:
    contract = toolbar_contract()
    registry = AgentSurfaceRegistry(authority=CapabilityAuthority.from_manifest(compile_manifest([contract, PING])))
    assert registry.register(contract.bind()).status == "active"


def test_an_executor_that_is_not_callable_is_refused_at_construction() -> None:
    authority = CapabilityAuthority.from_manifest(compile_manifest([Toolbar, PING]))
    with pytest.raises(TypeError, match="procedure_executor must be callable"):
        AgentSurfaceRegistry(authority=authority, procedure_executor="http://backend")  # type: ignore[arg-type]


async def test_a_registry_built_with_an_executor_routes_domain_calls_to_it() -> None:
    authority = CapabilityAuthority.from_manifest(compile_manifest([Toolbar, PING]))
    calls: list[tuple[str, Any, str]] = []

    async def backend(procedure_id: str, value: Any, ctx: ActionContext) -> Any:
        calls.append((procedure_id, value, ctx.capability_id))
        return {"answered": "backend"}

    registry = AgentSurfaceRegistry(authority=authority, procedure_executor=backend)
    other = AgentSurfaceRegistry(authority=authority, procedure_executor=lambda cid, value, ctx: {"sync": cid})
    registry.register(Toolbar())
    other.register(Toolbar())
    result = await registry.invoke({"capabilityId": "domain:app.ping", "input": {}})
    assert result.ok and result.output == {"answered": "backend"}
    assert calls == [("domain:app.ping", {}, "domain:app.ping")]
    # Each registry keeps its own executor (a plain function answers too).
    answer = await other.invoke({"capabilityId": "domain:app.ping", "input": {}})
    assert answer.ok and answer.output == {"sync": "domain:app.ping"}
    assert len(calls) == 1


async def test_a_registry_built_without_an_executor_serves_no_domain_calls() -> None:
    contract = toolbar_contract()
    registry = AgentSurfaceRegistry(authority=CapabilityAuthority.from_manifest(compile_manifest([contract, PING])))
    with pytest.raises(DefinitionError, match="no procedure executor") as info:
        registry.register(contract.bind(procedures=[PING.reference()]))
    assert info.value.code == "PLANE_VIOLATION"
    registry.register(contract.bind())  # the component alone registers; the procedure is not served
    result = await registry.invoke({"capabilityId": "domain:app.ping", "input": {}})
    assert not result.ok and result.code == "CAPABILITY_NOT_FOUND"
    assert result.error is not None and result.error.retry == "after-refresh"
