"""The bridge as the registry's procedure executor, over HTTP to a real uvicorn: the invocation
id and confirmation evidence travel with the call; server errors map onto our codes keeping only
agent-safe details; unknown failures are sanitized; timeouts and cancellation stop the request."""

from __future__ import annotations

import asyncio
import sqlite3
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from agentsurface import (
    ActionContext,
    AgentSurfaceRegistry,
    CancelSignal,
    CapabilityAuthority,
    CapabilityFailure,
    Consumer,
    InvocationResult,
)
from agentsurface.bridge import BackendBridge
from agentsurface.server import serve
from tests._shared.server.domain import DISABLE, NOTE, RENAME, make_server, served_procedures
from tests._shared.server.live import serving

from .page import PAGE_CONTRACTS, DevicesPage

AGENT = Consumer("agent", "embedded")


async def page(bridge: BackendBridge, *, confirm_disable: bool = True) -> AgentSurfaceRegistry:
    registry = AgentSurfaceRegistry(authority=CapabilityAuthority.from_manifest(await bridge.connect(PAGE_CONTRACTS)), procedure_executor=bridge)
    registry.register(DevicesPage(["acme-1", "acme-2"], confirm_disable=confirm_disable))
    return registry


async def invoke(registry: AgentSurfaceRegistry, capability: str, input: Any = None, **extra: Any) -> InvocationResult:
    request: dict[str, Any] = {"capabilityId": capability, "input": {} if input is None else input, **extra}
    return await registry.invoke(request, consumer=AGENT)


def rows(path: Path, sql: str) -> list[tuple[Any, ...]]:
    with sqlite3.connect(path) as db:
        return db.execute(sql).fetchall()


# ---------------------------------------------------------------- the full stack


async def test_a_call_from_the_page_applies_once_under_the_pages_invocation_id(
    bridge: BackendBridge, db_path: Path
) -> None:
    registry = await page(bridge)
    first = await invoke(registry, NOTE.id, {"text": "from the page"}, invocationId="inv_page_1")
    assert first.ok, first.to_json()
    assert rows(db_path, "SELECT text, invocation_id FROM notes") == [("from the page", "inv_page_1")]
    # The page's own dedupe answers a repeat; the server never sees it twice either way.
    again = await invoke(registry, NOTE.id, {"text": "from the page"}, invocationId="inv_page_1")
    assert again.output == first.output
    assert rows(db_path, "SELECT count(*) FROM notes") == [(1,)]


async def test_the_apps_own_buttons_call_a_procedure_with_bridge_call(backend: str, db_path: Path) -> None:
    """``bridge.call``: the person's own calls, outside the agent surface, on the same wire."""
    alice = BackendBridge(backend, headers={"Authorization": "Bearer tok-alice"})
    renamed = await alice.call(RENAME.id, {"deviceId": "acme-1", "name": "by hand"}, invocation_id="ui-1")
    assert renamed == {"id": "acme-1", "name": "by hand"}
    assert await alice.call(RENAME.id, {"deviceId": "acme-1", "name": "by hand"}, invocation_id="ui-1") == renamed
    with pytest.raises(CapabilityFailure) as refused:
        await alice.call(RENAME.id, {"deviceId": "globex-1", "name": "x"})  # a fresh id each call
    assert refused.value.error.code == "PRECONDITION_FAILED"
    with pytest.raises(CapabilityFailure) as conflict:
        await alice.call(RENAME.id, {"deviceId": "acme-1", "name": "other"}, invocation_id="ui-1")
    assert conflict.value.error.code == "INVOCATION_CONFLICT"
    await alice.aclose()


async def test_the_pages_confirmation_evidence_reaches_the_server(bridge: BackendBridge, db_path: Path) -> None:
    registry = await page(bridge)
    asked = await invoke(registry, DISABLE.id, invocationId="inv_disable")
    assert asked.code == "CONFIRMATION_REQUIRED"
    assert asked.error is not None and asked.error.details is not None
    assert asked.error.details.get("origin") != "server"  # the page asked first
    confirmation_id = str(asked.error.details["confirmationId"])
    assert registry.confirmations.resolve(confirmation_id, approved=True)
    done = await invoke(registry, DISABLE.id, invocationId="inv_disable", confirmationId=confirmation_id)
    assert done.ok, done.to_json()
    assert done.output == {"disabled": 2, "alreadyDisabled": 0}
    assert rows(db_path, "SELECT status FROM devices WHERE id IN ('acme-1', 'acme-2')") == [("disabled",)] * 2


async def test_a_page_that_does_not_ask_meets_the_servers_approval(tmp_path: Path) -> None:
    # The server requires approval for notes; the page's contract does not ask for it.
    procedures = [
        serve(p.contract, p.implementation, permissions=p.permissions, require_confirmation=True)
        if p.id == NOTE.id
        else p
        for p in served_procedures()
    ]
    db_path = tmp_path / "approval.sqlite3"
    with serving(make_server(db_path, procedures=procedures)) as base:
        bridge = BackendBridge(base, headers={"Authorization": "Bearer tok-alice"})
        registry = await page(bridge)
        result = await invoke(registry, NOTE.id, {"text": "unapproved"})
        await bridge.aclose()
    assert result.code == "CONFIRMATION_REQUIRED"
    assert result.error is not None and result.error.retry == "with-confirmation"
    assert result.error.details == {"origin": "server", "effect": "server-mutation"}
    assert rows(db_path, "SELECT count(*) FROM notes") == [(0,)]


async def test_typed_server_refusals_map_onto_our_codes(backend: str) -> None:
    viewer = BackendBridge(backend, headers={"Authorization": "Bearer tok-victor"})
    registry = await page(viewer)
    refused = await invoke(registry, RENAME.id, {"deviceId": "acme-1", "name": "x"})
    assert refused.code == "NOT_AUTHORIZED" and refused.error is not None
    assert refused.error.details == {"origin": "server"}
    await viewer.aclose()

    alice = BackendBridge(backend, headers=lambda: {"Authorization": "Bearer tok-alice"})
    registry = await page(alice)
    unknown = await invoke(registry, RENAME.id, {"deviceId": "globex-1", "name": "x"})
    assert unknown.code == "PRECONDITION_FAILED" and unknown.error is not None
    assert unknown.error.details == {"reason": "unknown-device"}
    renamed = await invoke(registry, RENAME.id, {"deviceId": "acme-1", "name": "ok"})
    assert renamed.ok and renamed.output == {"id": "acme-1", "name": "ok"}
    await alice.aclose()

    anonymous = BackendBridge(backend)
    registry = await page(anonymous)
    assert (await invoke(registry, NOTE.id, {"text": "x"})).code == "NOT_AUTHENTICATED"
    await anonymous.aclose()


# ---------------------------------------------------------------- a misbehaving backend


def hostile_backend(seen: dict[str, Any]) -> Starlette:
    """A real HTTP backend that answers each procedure in a way a careless bridge would repeat."""
    manifest = make_server(":memory:", procedures=served_procedures()).manifest

    async def answer(request: Request) -> Response:
        path = request.path_params["path"]
        if path == "notes.add":  # a proxy's HTML error page
            return Response("<html>502 Bad Gateway nginx/1.2 at 10.0.0.3</html>", 502, media_type="text/html")
        if path == "devices.rename":  # a code only the page may produce, with a secret in its message
            return JSONResponse({"ok": False, "error": {"code": "STALE_CAPABILITY", "message": "db at 10.0.0.3"}}, 409)
        if path == "devices.broken":  # a typed error with extra details and control characters
            return JSONResponse(
                {
                    "ok": False,
                    "error": {
                        "code": "PRECONDITION_FAILED",
                        "message": "Device\nbusy\u2028now",
                        "retry": "whenever",
                        "details": {"reason": "busy", "sql": "SELECT secret", "stack": ["frame"]},
                    },
                },
                409,
            )
        if path == "devices.query":  # never answers; records when the client gives up
            seen["query-started"] = time.monotonic()
            while not await request.is_disconnected():
                await asyncio.sleep(0.02)
            seen["query-disconnected"] = time.monotonic()
            return Response(status_code=499)
        return JSONResponse({"ok": True, "result": "no output field"}, 200)

    async def manifest_route(request: Request) -> Response:
        return JSONResponse(manifest)

    return Starlette(
        routes=[
            Route("/.well-known/agentsurface/procedures", manifest_route),
            Route("/procedures/{path:path}", answer, methods=["POST"]),
        ]
    )


@pytest.fixture
async def hostile() -> AsyncIterator[tuple[BackendBridge, dict[str, Any]]]:
    seen: dict[str, Any] = {}
    with serving(hostile_backend(seen)) as base:
        bridge = BackendBridge(base, timeout=5)
        await bridge.load_manifest()
        yield bridge, seen
        await bridge.aclose()


def context(capability: str, signal: CancelSignal | None = None) -> ActionContext:
    return ActionContext(capability, "reg_1", AGENT, "inv_1", signal or CancelSignal())


async def failure_of(bridge: BackendBridge, capability: str, input: Any) -> Any:
    with pytest.raises(CapabilityFailure) as caught:
        await bridge(capability, input, context(capability))
    return caught.value.error


async def test_unknown_failures_are_sanitized(hostile: tuple[BackendBridge, dict[str, Any]]) -> None:
    bridge, _ = hostile
    gateway = await failure_of(bridge, NOTE.id, {"text": "x"})
    assert (gateway.code, gateway.retry) == ("EXECUTION_FAILED", "after-delay")
    assert gateway.details == {"reason": "transport", "transient": True, "retryAfterMs": 1000}
    foreign = await failure_of(bridge, RENAME.id, {"deviceId": "a", "name": "b"})
    assert foreign.code == "EXECUTION_FAILED" and foreign.details == {"reason": "transport"}
    for error in (gateway, foreign):
        assert "10.0.0.3" not in error.message and "nginx" not in error.message


async def test_typed_errors_keep_only_agent_safe_details(hostile: tuple[BackendBridge, dict[str, Any]]) -> None:
    bridge, _ = hostile
    error = await failure_of(bridge, "domain:devices.broken", {})
    assert error.code == "PRECONDITION_FAILED"
    assert error.retry == "with-changes"  # "whenever" is not a retry the matrix allows
    assert error.details == {"reason": "busy"}
    assert error.message == "Device busy now"


async def test_an_answer_in_an_unexpected_shape_is_a_sanitized_failure(
    hostile: tuple[BackendBridge, dict[str, Any]],
) -> None:
    bridge, _ = hostile
    error = await failure_of(bridge, DISABLE.id, {"deviceIds": ["a"]})
    assert error.code == "EXECUTION_FAILED" and error.details == {"reason": "transport"}


async def test_cancellation_aborts_the_request(hostile: tuple[BackendBridge, dict[str, Any]]) -> None:
    bridge, seen = hostile
    signal = CancelSignal()
    task = asyncio.ensure_future(bridge("domain:devices.query", {}, context("domain:devices.query", signal)))
    while "query-started" not in seen:
        await asyncio.sleep(0.01)
    signal.abort("cancelled")
    with pytest.raises(CapabilityFailure) as caught:
        await asyncio.wait_for(task, 2)
    assert caught.value.error.code == "CANCELLED"
    for _ in range(200):  # the server sees the client go away
        if "query-disconnected" in seen:
            break
        await asyncio.sleep(0.01)
    assert seen["query-disconnected"] - seen["query-started"] < 2


async def test_the_bridges_own_deadline_gives_a_timeout(hostile: tuple[BackendBridge, dict[str, Any]]) -> None:
    bridge, _ = hostile
    bridge.timeout = 0.3
    started = time.monotonic()
    error = await failure_of(bridge, "domain:devices.query", {})
    assert time.monotonic() - started < 2
    assert error.code == "TIMEOUT" and error.retry == "no"
    assert error.details == {"timeoutMs": 300, "idempotent": False}


async def test_the_registrys_timeout_stops_the_request_too(hostile: tuple[BackendBridge, dict[str, Any]]) -> None:
    bridge, seen = hostile
    registry = AgentSurfaceRegistry(authority=CapabilityAuthority.from_manifest(bridge.ceiling(PAGE_CONTRACTS)), procedure_executor=bridge)
    from .page import SearchBox

    registry.register(SearchBox())
    result = await registry.invoke({"capabilityId": "domain:devices.query", "input": {}}, consumer=AGENT, timeout=0.3)
    assert result.code == "TIMEOUT"
    for _ in range(200):
        if "query-disconnected" in seen:
            break
        await asyncio.sleep(0.01)
    assert "query-disconnected" in seen


async def test_an_unreachable_backend_is_a_transient_failure() -> None:
    with serving(make_server(":memory:")) as base:
        bridge = BackendBridge(base)
        await bridge.load_manifest()
    error = await failure_of(bridge, NOTE.id, {"text": "x"})  # the server is gone now
    assert (error.code, error.retry) == ("EXECUTION_FAILED", "after-delay")
    assert error.details == {"reason": "transport", "transient": True, "retryAfterMs": 1000}
    await bridge.aclose()
