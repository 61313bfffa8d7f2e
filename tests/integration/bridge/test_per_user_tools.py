"""Per-user tools (issue 43.4): the server says what this caller may call; the page offers its
agent only that, so a person without the permission is never offered the tool, nor asked to
approve a call the server would refuse with NOT_AUTHORIZED."""

from __future__ import annotations

import httpx
import pytest

from agentsurface import AgentSurfaceRegistry, CapabilityAuthority, Consumer, compile_manifest
from agentsurface.bridge import CALLABLE_PATH, BackendBridge, BackendUnavailableError
from tests._shared.server.domain import BROKEN, DISABLE, NOTE, QUERY, RENAME

from .page import PAGE_CONTRACTS, DevicesPage, SearchBox

AGENT = Consumer("agent", "embedded")


def test_the_server_lists_what_each_caller_may_call(backend: str) -> None:
    alice = httpx.get(backend + CALLABLE_PATH, headers={"Authorization": "Bearer tok-alice"})
    victor = httpx.get(backend + CALLABLE_PATH, headers={"Authorization": "Bearer tok-victor"})
    nobody = httpx.get(backend + CALLABLE_PATH)
    assert alice.json() == {"procedures": sorted([BROKEN.id, DISABLE.id, NOTE.id, QUERY.id, RENAME.id])}
    assert victor.json() == {"procedures": [QUERY.id]}  # devices.read only
    assert alice.headers["cache-control"] == "no-store"
    assert nobody.status_code == 401 and nobody.json()["error"]["code"] == "NOT_AUTHENTICATED"


async def registry_for(backend: str, token: str) -> tuple[AgentSurfaceRegistry, BackendBridge]:
    bridge = BackendBridge(backend, headers={"Authorization": f"Bearer {token}"}, timeout=10)
    authority = await bridge.authority(CapabilityAuthority.from_manifest(compile_manifest(PAGE_CONTRACTS)))
    await bridge.load_callable()
    registry = AgentSurfaceRegistry(authority=authority, policies=[bridge.callable_policy()], procedure_executor=bridge)
    registry.register(DevicesPage(["acme-1"]))
    registry.register(SearchBox())
    return registry, bridge


async def test_a_reader_is_offered_only_what_the_server_lets_them_call(backend: str) -> None:
    registry, bridge = await registry_for(backend, "tok-victor")
    try:
        offered = {p.procedure_id for p in registry.snapshot(consumer=AGENT).procedures}
        assert offered == {QUERY.id}  # no disable, rename or note: never offered, never approved
        refused = await registry.invoke({"capabilityId": DISABLE.id, "input": {}}, consumer=AGENT)
        assert refused.code in ("CAPABILITY_NOT_FOUND", "NOT_AUTHORIZED")
        assert registry.confirmations.pending() == []  # nobody is asked to approve it
        listed = await registry.invoke({"capabilityId": QUERY.id, "input": {}}, consumer=AGENT)
        assert listed.ok
    finally:
        registry.close()
        await bridge.aclose()


async def test_a_writer_is_offered_all(backend: str) -> None:
    registry, bridge = await registry_for(backend, "tok-alice")
    try:
        offered = {p.procedure_id for p in registry.snapshot(consumer=AGENT).procedures}
        assert offered == {DISABLE.id, RENAME.id, NOTE.id, QUERY.id}
    finally:
        registry.close()
        await bridge.aclose()


async def test_an_unauthenticated_page_offers_no_procedure(backend: str) -> None:
    registry, bridge = await registry_for(backend, "tok-nobody")
    try:
        assert bridge.callable == frozenset()
        assert registry.snapshot(consumer=AGENT).procedures == ()
    finally:
        registry.close()
        await bridge.aclose()


async def test_a_server_that_cannot_say_fails_loudly() -> None:
    bridge = BackendBridge("http://127.0.0.1:9", timeout=2)
    with pytest.raises(BackendUnavailableError, match="what this caller may call"):
        await bridge.load_callable()
    await bridge.aclose()
