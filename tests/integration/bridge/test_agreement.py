"""Contract agreement at page start: the backend manifest (fetched over HTTP from a real uvicorn)
is the exposure ceiling; drift is caught before anything is registered."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentsurface import (
    AgentSurfaceRegistry,
    AuthorityError,
    CapabilityAuthority,
    Consumer,
    ProcedureContract,
    compile_manifest,
)
from agentsurface.bridge import BackendBridge, BackendContractError, BackendUnavailableError
from tests._shared.server.domain import DISABLE, NOTE, QUERY, RENAME, make_server, served_procedures
from tests._shared.server.live import serving

from .page import PAGE_CONTRACTS, DevicesPage, SearchBox, variant

AGENT = Consumer("agent", "embedded")


async def test_agreeing_contracts_are_all_exposed(bridge: BackendBridge) -> None:
    manifest = await bridge.connect(PAGE_CONTRACTS)
    registry = AgentSurfaceRegistry(authority=CapabilityAuthority.from_manifest(manifest), procedure_executor=bridge)
    registry.register(DevicesPage(["acme-1"]))
    registry.register(SearchBox())
    exposed = {p.procedure_id for p in registry.snapshot(consumer=AGENT).procedures}
    assert exposed == {DISABLE.id, RENAME.id, NOTE.id, QUERY.id}
    assert bridge.unserved == ()
    assert all(bridge.serves(c) for c in (DISABLE, RENAME, NOTE, QUERY))


@pytest.mark.parametrize(
    ("drifted", "problem", "words"),
    [
        (variant(RENAME, input={**RENAME.input.json_schema, "required": ["deviceId"]}), "input-schema",
         "the input schema differs between the page"),
        (variant(NOTE, effect="destructive"), "effect",
         "declares effect 'destructive' but the backend serves it as 'server-mutation'"),
        (variant(QUERY, output={"type": "object"}), "output-schema", "the output schema differs"),
    ],
)
async def test_schema_or_effect_drift_is_caught_at_page_start(
    bridge: BackendBridge, drifted: ProcedureContract, problem: str, words: str
) -> None:
    others = [c for c in (DISABLE, RENAME, NOTE, QUERY) if c.id != drifted.id]
    with pytest.raises(BackendContractError) as caught:
        await bridge.connect([*others, drifted])
    error = caught.value
    assert isinstance(error, AuthorityError)  # a definition problem, raised, never agent-facing
    assert [(d.procedure_id, d.problem) for d in error.disagreements] == [(drifted.id, problem)]
    assert words in str(error) and drifted.id in str(error)


async def test_a_procedure_missing_on_the_server_is_not_exposed(db_path: Path) -> None:
    without_query = [p for p in served_procedures() if p.id != QUERY.id]
    with serving(make_server(db_path, procedures=without_query)) as base:
        bridge = BackendBridge(base, headers={"Authorization": "Bearer tok-alice"})
        manifest = await bridge.connect(PAGE_CONTRACTS)
        await bridge.aclose()
    assert [str(d) for d in bridge.unserved] == [
        "domain:devices.query is not served by the backend (absent from its manifest), so it is not exposed"
    ]
    assert not bridge.serves(QUERY)
    registry = AgentSurfaceRegistry(authority=CapabilityAuthority.from_manifest(manifest), procedure_executor=bridge)
    registry.register(DevicesPage(["acme-1"]))
    with pytest.raises(AuthorityError, match=r"domain:devices\.query"):
        registry.register(SearchBox())  # its only procedure is not served: refused at registration
    exposed = {p.procedure_id for p in registry.snapshot(consumer=AGENT).procedures}
    assert QUERY.id not in exposed and RENAME.id in exposed
    result = await registry.invoke({"capabilityId": QUERY.id, "input": {}}, consumer=AGENT)
    assert result.code == "CAPABILITY_NOT_FOUND"


async def test_the_executor_refuses_a_procedure_the_backend_does_not_serve(db_path: Path) -> None:
    from agentsurface import ActionContext, CancelSignal, CapabilityFailure

    without_query = [p for p in served_procedures() if p.id != QUERY.id]
    with serving(make_server(db_path, procedures=without_query)) as base:
        bridge = BackendBridge(base, headers={"Authorization": "Bearer tok-alice"})
        await bridge.load_manifest()
        ctx = ActionContext(QUERY.id, "reg_1", AGENT, "inv_1", CancelSignal())
        with pytest.raises(CapabilityFailure) as caught:
            await bridge(QUERY.id, {}, ctx)
        await bridge.aclose()
    assert caught.value.error.code == "CAPABILITY_NOT_FOUND"


async def test_an_unreachable_or_foreign_backend_fails_page_start_loudly(backend: str) -> None:
    with serving(make_server(":memory:")) as base:
        closed = base  # the port is free again once the block ends
    for url, words in ((closed, "could not fetch"), (backend + "/procedures", "answered HTTP")):
        bridge = BackendBridge(url, timeout=5)
        with pytest.raises(BackendUnavailableError, match=words):
            await bridge.load_manifest()
        await bridge.aclose()
    with pytest.raises(BackendUnavailableError, match="load the backend manifest first"):
        BackendBridge(backend).ceiling(PAGE_CONTRACTS)


# ---------------------------------------------------------------- issue 43.1: one way to the authority


def reviewed_authority() -> CapabilityAuthority:
    """What authority_from_bundle() gives a bundled page: the reviewed contract, components and
    procedures alike (compiled here, as `agentsurface snapshot` would write it)."""
    return CapabilityAuthority.from_manifest(compile_manifest(PAGE_CONTRACTS))


async def test_the_reviewed_authority_checked_by_the_bridge_registers_components(bridge: BackendBridge) -> None:
    authority = await bridge.authority(reviewed_authority())  # no connect() first
    registry = AgentSurfaceRegistry(authority=authority, procedure_executor=bridge)
    registry.register(DevicesPage(["acme-1"]))  # the component is in the reviewed contract
    registry.register(SearchBox())
    exposed = {p.procedure_id for p in registry.snapshot(consumer=AGENT).procedures}
    assert exposed == {DISABLE.id, RENAME.id, NOTE.id, QUERY.id}
    assert authority.withheld == {} and bridge.unserved == ()


async def test_a_manifest_of_procedures_alone_names_the_way_to_the_authority(bridge: BackendBridge) -> None:
    """The Full-stack snippet the issue followed: connect(procedures) makes an authority without
    the page's components; the refusal now says where the authority should come from."""
    manifest = await bridge.connect([DISABLE, RENAME, NOTE, QUERY])
    registry = AgentSurfaceRegistry(authority=CapabilityAuthority.from_manifest(manifest))
    with pytest.raises(AuthorityError, match=r"authority_from_bundle\(\)"):
        registry.register(SearchBox())


async def test_the_reviewed_authority_withholds_what_the_server_does_not_serve(db_path: Path) -> None:
    without_query = [p for p in served_procedures() if p.id != QUERY.id]
    with serving(make_server(db_path, procedures=without_query)) as base:
        bridge = BackendBridge(base, headers={"Authorization": "Bearer tok-alice"})
        authority = await bridge.authority(reviewed_authority())
        await bridge.aclose()
    assert list(authority.withheld) == [QUERY.id]
    registry = AgentSurfaceRegistry(authority=authority, procedure_executor=bridge)
    registry.register(DevicesPage(["acme-1"]))
    with pytest.raises(AuthorityError, match=r"withheld from this page: the backend at .* does not serve it"):
        registry.register(SearchBox())


async def test_the_reviewed_authority_refuses_drift(bridge: BackendBridge) -> None:
    drifted = variant(NOTE, effect="destructive")
    reviewed = CapabilityAuthority.from_manifest(compile_manifest([DISABLE, RENAME, QUERY, drifted]))
    with pytest.raises(BackendContractError) as caught:
        await bridge.authority(reviewed)
    assert [(d.procedure_id, d.problem) for d in caught.value.disagreements] == [(NOTE.id, "effect")]
