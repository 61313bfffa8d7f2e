"""The bridge carries the server's approval challenge: the person approves once in the page, the
bridge asks the server for its challenge for that exact call and answers it with the approval;
the agent sees neither the challenge nor any refusal on the way."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx

from agentsurface.bridge import BackendBridge, ServerChallenge
from agentsurface.bridge.transport import TransportResponse
from agentsurface.bridge.wire import challenge_url
from tests._shared.server.domain import DISABLE, NOTE, make_server, served_procedures
from tests._shared.server.live import serving

from .test_executor import invoke, page, rows


class Recording:
    """A transport that records what the bridge sends (and answers through a real httpx)."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, Any]] = []
        self.statuses: list[int] = []
        self._http = httpx.AsyncClient(timeout=10)

    async def request(self, method: str, url: str, *, headers: Any, body: bytes | None,
                      max_response_bytes: int) -> TransportResponse:
        self.sent.append((url, None if body is None else json.loads(body)))
        answer = await self._http.request(method, url, headers=dict(headers), content=body)
        self.statuses.append(answer.status_code)
        return TransportResponse(answer.status_code, answer.content, {k.lower(): v for k, v in answer.headers.items()})

    async def aclose(self) -> None:
        await self._http.aclose()


async def test_an_approved_call_answers_the_servers_challenge_without_a_refusal(backend: str, db_path: Path) -> None:
    transport = Recording()
    bridge = BackendBridge(backend, headers={"Authorization": "Bearer tok-alice"}, transport=transport)
    registry = await page(bridge)
    asked = await invoke(registry, DISABLE.id, invocationId="inv_d")
    assert asked.code == "CONFIRMATION_REQUIRED"  # the page asks the person first
    assert asked.error is not None and asked.error.details is not None
    confirmation_id = str(asked.error.details["confirmationId"])
    assert registry.confirmations.resolve(confirmation_id, approved=True)
    done = await invoke(registry, DISABLE.id, invocationId="inv_d", confirmationId=confirmation_id)
    assert done.ok, done.to_json()
    assert "ch_" not in json.dumps(done.to_json())
    await bridge.aclose()

    calls = [(url, body) for url, body in transport.sent if body is not None]
    assert [url for url, _ in calls] == [challenge_url(backend, DISABLE.id), calls[1][0]]
    assert transport.statuses[-2:] == [200, 200]  # no refusal on the way: nothing for the console
    evidence = calls[1][1]["confirmation"]
    assert set(evidence) == {"challenge", "approvedAt", "id"} and evidence["id"] == confirmation_id
    assert calls[0][1]["input"] == calls[1][1]["input"]  # the challenge is for the input that is sent
    assert rows(db_path, "SELECT outcome FROM audit WHERE procedure = 'domain:devices.disable'") == [("ok",)]


async def test_a_webauthn_challenge_goes_to_the_pages_presence_hook(tmp_path: Path) -> None:
    seen: list[ServerChallenge] = []

    async def presence(procedure_id: str, input: Any, challenge: ServerChallenge) -> dict[str, Any]:
        seen.append(challenge)
        return {"signed": challenge.nonce}

    def verify(caller: Any, challenge: Any, payload: Any) -> str | None:
        return None if payload == {"signed": challenge.nonce_b64} else "presence-rejected"

    from agentsurface.server import ProcedureServer, SqliteInvocationStore, serve
    from tests._shared.server.domain import audit, authenticate, setup

    procedures = [serve(p.contract, p.implementation, permissions=p.permissions, approval="webauthn")
                  if p.id == DISABLE.id else p for p in served_procedures()]
    db_path = tmp_path / "webauthn.sqlite3"
    server = ProcedureServer(procedures, authenticate=authenticate, store=SqliteInvocationStore(db_path, setup=setup),
                             audit=audit, verify_presence=verify)
    with serving(server) as base:
        without = BackendBridge(base, headers={"Authorization": "Bearer tok-alice"})
        registry = await page(without)
        refused = await approved_disable(registry)
        assert refused.code == "CONFIRMATION_REQUIRED" and refused.error is not None
        assert refused.error.details == {"origin": "server"}
        await without.aclose()

        hooked = BackendBridge(base, headers={"Authorization": "Bearer tok-alice"}, presence=presence)
        registry = await page(hooked)
        done = await approved_disable(registry)
        assert done.ok, done.to_json()
        await hooked.aclose()
    assert [c.level for c in seen] == ["webauthn"] and seen[0].procedure == DISABLE.id
    assert rows(db_path, "SELECT status FROM devices WHERE id IN ('acme-1', 'acme-2')") == [("disabled",)] * 2


async def test_a_preview_gone_stale_during_the_passkey_ceremony_never_reaches_the_server(tmp_path: Path) -> None:
    """Issue 39.3: the bridge asks the page again after the server's challenge and the person's
    passkey took their time; the page's state changed meanwhile, so the write never leaves."""
    from agentsurface import AgentSurfaceRegistry, CapabilityAuthority, Change
    from agentsurface.server import ProcedureServer, SqliteInvocationStore, serve
    from tests._shared.server.domain import audit, authenticate, setup

    from .page import PAGE_CONTRACTS, DevicesPage

    status = {"acme-1": "online", "acme-2": "online"}

    async def presence(procedure_id: str, input: Any, challenge: ServerChallenge) -> dict[str, Any]:
        status["acme-2"] = "offline"  # while the person touches their key, the row changes
        return {"signed": challenge.nonce}

    def verify(caller: Any, challenge: Any, payload: Any) -> str | None:
        return None

    procedures = [serve(p.contract, p.implementation, permissions=p.permissions, approval="webauthn")
                  if p.id == DISABLE.id else p for p in served_procedures()]
    db_path = tmp_path / "stale.sqlite3"
    server = ProcedureServer(procedures, authenticate=authenticate, store=SqliteInvocationStore(db_path, setup=setup),
                             audit=audit, verify_presence=verify)
    with serving(server) as base:
        transport = Recording()
        bridge = BackendBridge(base, headers={"Authorization": "Bearer tok-alice"}, presence=presence,
                               transport=transport)
        registry = AgentSurfaceRegistry(authority=CapabilityAuthority.from_manifest(await bridge.connect(PAGE_CONTRACTS)), procedure_executor=bridge)
        registry.register(DevicesPage(["acme-1", "acme-2"], preview=lambda effective: [
            Change(i, "status", status[i], "disabled") for i in effective["deviceIds"]]))
        result = await approved_disable(registry)
        await bridge.aclose()
    assert result.code == "CONFIRMATION_INVALID" and result.error is not None
    assert result.error.details == {"reason": "stale"}
    posted = [url for url, body in transport.sent if body is not None]
    assert posted == [challenge_url(base, DISABLE.id)]  # the write itself was never sent
    assert rows(db_path, "SELECT status FROM devices WHERE id IN ('acme-1', 'acme-2')") == [("online",)] * 2


async def approved_disable(registry: Any) -> Any:
    asked = await invoke(registry, DISABLE.id)
    confirmation_id = str(asked.error.details["confirmationId"])
    assert registry.confirmations.resolve(confirmation_id, approved=True)
    return await invoke(registry, DISABLE.id, confirmationId=confirmation_id)


async def test_the_challenge_endpoint_runs_the_calls_own_checks(tmp_path: Path) -> None:
    db_path = tmp_path / "asks.sqlite3"
    with serving(make_server(db_path)) as base:
        async with httpx.AsyncClient(timeout=10) as http:
            def ask(procedure: str, input: Any, token: str | None = "tok-alice") -> Any:
                headers = {"Content-Type": "application/json"}
                if token:
                    headers["Authorization"] = f"Bearer {token}"
                return http.post(challenge_url(base, procedure), headers=headers,
                                 content=json.dumps({"invocationId": "inv_1", "input": input}))

            minted = await ask(DISABLE.id, {"deviceIds": ["acme-1"]})
            assert minted.status_code == 200 and minted.json()["challenge"]["procedure"] == DISABLE.id
            assert (await ask(NOTE.id, {"text": "x"})).json() == {"ok": True, "challenge": None}
            assert (await ask(DISABLE.id, {"deviceIds": ["acme-1"]}, token=None)).status_code == 401
            assert (await ask(DISABLE.id, {"deviceIds": ["acme-1"]}, token="tok-victor")).status_code == 403
            assert (await ask(DISABLE.id, {"deviceIds": "acme-1"})).status_code == 400
            assert (await ask("domain:devices.wipe", {})).status_code == 404
    assert rows(db_path, "SELECT count(*) FROM agentsurface_challenges") == [(1,)]
    assert rows(db_path, "SELECT status FROM devices WHERE id = 'acme-1'") != [("disabled",)]
