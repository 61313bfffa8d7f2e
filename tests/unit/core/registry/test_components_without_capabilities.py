"""A component may declare no capability of its own: toolbars hosting only procedure references,
empty components and class-based ones with no members."""

from __future__ import annotations

from collections.abc import Sequence

from agentsurface import (
    AgentComponent,
    AgentSurfaceRegistry,
    CapabilityAuthority,
    ProcedureReference,
    compile_manifest,
)
from agentsurface.toolset import AgentToolset
from tests.support import CONSUMER, PING, echo_executor, toolbar_contract


def test_a_component_contract_may_declare_no_capability_of_its_own() -> None:
    contract = toolbar_contract()
    assert dict(contract.observations) == {} and dict(contract.actions) == {}
    assert dict(contract.capability_ids) == {}
    assert contract.hash.startswith("sha256:")


async def test_a_toolbar_hosting_only_procedure_references_is_listed_and_callable() -> None:
    contract = toolbar_contract()
    registry = AgentSurfaceRegistry(authority=CapabilityAuthority.from_manifest(compile_manifest([contract, PING])), procedure_executor=echo_executor)
    handle = registry.register(contract.bind(procedures=[PING.reference()]))
    assert handle.status == "active"

    snapshot = registry.snapshot(consumer=CONSUMER)
    assert [p.procedure_id for p in snapshot.procedures] == ["domain:app.ping"]
    assert [c.capability_id for c in snapshot.capabilities()] == ["domain:app.ping"]
    snapshot.to_json()  # serializable with an empty component

    toolset = AgentToolset(registry, consumer=CONSUMER, topology="embedded")
    assert [tool.name for tool in toolset.tools()] == ["domain_app__ping"]
    result = await registry.invoke({"capabilityId": "domain:app.ping"}, consumer=CONSUMER)
    assert result.ok and result.output == {"procedure": "domain:app.ping"}


def test_a_component_that_declares_nothing_yet_registers_with_an_empty_surface() -> None:
    contract = toolbar_contract()
    registry = AgentSurfaceRegistry(authority=CapabilityAuthority.from_manifest(compile_manifest([contract])))
    assert registry.register(contract.bind()).status == "active"
    snapshot = registry.snapshot(consumer=CONSUMER)
    assert list(snapshot.capabilities()) == []
    toolset = AgentToolset(registry, consumer=CONSUMER, topology="embedded")
    assert toolset.tools() == []
    meta = AgentToolset(registry, consumer=CONSUMER, topology="embedded", mode="meta")
    assert len(meta.tools()) == 3  # the three fixed meta tools, over an empty surface


class Toolbar(AgentComponent, type="app.toolbar", description="The toolbar"):
    def agent_procedures(self) -> Sequence[ProcedureReference]:
        return (PING.reference(),)


def test_a_class_based_component_may_host_only_procedure_references() -> None:
    assert dict(Toolbar.contract.observations) == {} and dict(Toolbar.contract.actions) == {}
    registry = AgentSurfaceRegistry(authority=CapabilityAuthority.from_manifest(compile_manifest([Toolbar, PING])), procedure_executor=echo_executor)
    assert registry.register(Toolbar()).status == "active"
    assert [c.capability_id for c in registry.snapshot().capabilities()] == ["domain:app.ping"]


def test_a_class_based_component_with_no_members_at_all_is_expressible() -> None:
    class Placeholder(AgentComponent, type="app.placeholder", description="Mounted before it has tools"):
        pass

    assert Placeholder.contract.type == "app.placeholder"
    assert not Placeholder.contract.capability_ids
