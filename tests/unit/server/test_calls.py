"""The procedure server answers calls: accepted ones apply in one transaction with their audit
row; refused ones (forged, malformed, oversized, unauthorized) get a typed error and change
nothing in the app's data."""

from __future__ import annotations

import json
import logging
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.routing import Mount

from agentsurface import DefinitionError
from agentsurface.bridge import MANIFEST_PATH
from agentsurface.bridge.wire import parse_manifest, schema_hash
from agentsurface.server import ProcedureServer, ServerLimits, serve
from tests._shared.server.domain import DISABLE, NOTE, QUERY, RENAME, make_server, snapshot
from tests._shared.server.helpers import approved_now, call, error_of, new_id, post_raw


def audit_rows(path: Path) -> list[tuple[Any, ...]]:
    with sqlite3.connect(path) as db:
        return db.execute("SELECT procedure, caller, outcome, status, replayed FROM audit ORDER BY id").fetchall()


# ---------------------------------------------------------------- accepted calls


async def test_a_call_applies_and_its_audit_row_commits_with_it(client: httpx.AsyncClient, db_path: Path) -> None:
    response = await call(client, RENAME.id, {"deviceId": "acme-1", "name": "Main pump"})
    assert response.status_code == 200
    body = response.json()
    assert body["ok"] is True and body["output"] == {"id": "acme-1", "name": "Main pump"}
    assert ("acme-1", "acme", "Main pump", "online") in snapshot(db_path)["devices"]
    assert audit_rows(db_path) == [(RENAME.id, "alice", "ok", 200, 0)]


async def test_queries_are_scoped_to_the_callers_tenant(client: httpx.AsyncClient) -> None:
    acme = (await call(client, QUERY.id, {})).json()["output"]["devices"]
    globex = (await call(client, QUERY.id, {}, token="tok-bob")).json()["output"]["devices"]
    assert [d["id"] for d in acme] == ["acme-1", "acme-2", "acme-3"]
    assert [d["id"] for d in globex] == ["globex-1"]


async def test_the_backend_manifest_lists_ids_schema_hashes_and_effects(client: httpx.AsyncClient) -> None:
    response = await client.get(MANIFEST_PATH)
    assert response.status_code == 200
    served = parse_manifest(response.json())
    assert set(served) == {"domain:devices.disable", "domain:devices.rename", "domain:devices.query",
                           "domain:notes.add", "domain:devices.broken"}
    assert served[DISABLE.id].effect == "destructive"
    assert served[DISABLE.id].requires_confirmation is True
    assert served[RENAME.id].input_schema_hash == schema_hash(RENAME.input.json_schema)
    assert served[NOTE.id].output_schema_hash is None


async def test_the_server_mounts_inside_an_existing_starlette_app(server: ProcedureServer, db_path: Path) -> None:
    outer = Starlette(routes=[Mount("/api/agent", app=server)])
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=outer), base_url="http://app") as http:
        assert (await http.get("/api/agent" + MANIFEST_PATH)).status_code == 200
        response = await call(http, RENAME.id, {"deviceId": "acme-2", "name": "Mounted"}, base="/api/agent")
        assert response.status_code == 200, response.text
        missing = await http.get("/api/agent/nowhere")
        assert missing.status_code == 404 and error_of(missing)["code"] == "CAPABILITY_NOT_FOUND"


# ---------------------------------------------------------------- validation: the contract's own schema


@pytest.mark.parametrize(
    ("contract", "bad"),
    [
        (RENAME, {"deviceId": "acme-1", "name": ""}),
        (RENAME, {"deviceId": 7, "name": "x"}),  # strict: no coercion of 7 to "7"
        (RENAME, {"deviceId": "acme-1"}),
        (DISABLE, {"deviceIds": [], "extra": True}),
        (DISABLE, {"deviceIds": "acme-1"}),
    ],
)
async def test_input_is_revalidated_with_the_same_issues_as_the_page(
    client: httpx.AsyncClient, db_path: Path, contract: Any, bad: Any
) -> None:
    before = snapshot(db_path)
    response = await call(client, contract.id, bad, confirmation=approved_now())
    assert response.status_code == 400
    error = error_of(response)
    page = contract.input.validate(bad)  # what the page's registry reports for the same value
    expected = [{"path": i.path, "message": i.message} for i in page.issues]
    assert error["code"] == "INVALID_INPUT"
    assert error["details"]["issues"] == expected
    first = page.issues[0]
    assert error["message"] == f"The input is invalid at {first.path}: {first.message}. Fix it and retry."
    assert snapshot(db_path) == before


# ---------------------------------------------------------------- forged calls


async def test_forged_calls_are_refused_with_typed_errors_and_change_nothing(
    client: httpx.AsyncClient, db_path: Path
) -> None:
    before = snapshot(db_path)
    rename = {"deviceId": "acme-1", "name": "Hijacked"}
    cases: list[tuple[httpx.Response, int, str]] = [
        (await call(client, RENAME.id, rename, token=None), 401, "NOT_AUTHENTICATED"),
        (await call(client, RENAME.id, rename, token="tok-forged"), 401, "NOT_AUTHENTICATED"),
        (await call(client, RENAME.id, rename, token="tok-victor"), 403, "NOT_AUTHORIZED"),  # viewer role
        # Another tenant's device: indistinguishable from a nonexistent one.
        (await call(client, RENAME.id, rename, token="tok-bob"), 409, "PRECONDITION_FAILED"),
        (await call(client, RENAME.id, {"deviceId": "nope-9", "name": "x"}), 409, "PRECONDITION_FAILED"),
        (
            await call(client, DISABLE.id, {"deviceIds": ["acme-1", "globex-1"]}, confirmation=approved_now()),
            409,
            "PRECONDITION_FAILED",
        ),
        (await call(client, "domain:devices.wipe", {}), 404, "CAPABILITY_NOT_FOUND"),
        (await call(client, "domain:../../admin", {}), 404, "CAPABILITY_NOT_FOUND"),
    ]
    for response, status, code in cases:
        assert (response.status_code, error_of(response)["code"]) == (status, code), response.text
    assert error_of(cases[2][0])["details"] == {"origin": "server"}
    assert error_of(cases[3][0])["details"] == {"reason": "unknown-device"}
    assert snapshot(db_path) == before
    # Every refusal was audited, except that the second unknown caller from the same address
    # within a minute is counted, not written (refusals at wire speed are not a write each);
    # no refusal wrote anything else.
    codes = [code for _, _, code in cases]
    # The approved disable asked for the server's challenge first: refused with it, then applied.
    audited = codes[:1] + codes[2:5] + ["CONFIRMATION_REQUIRED"] + codes[5:]
    assert [row[2] for row in audit_rows(db_path)] == audited


async def test_an_unauthenticated_caller_learns_nothing_about_which_procedures_exist(
    client: httpx.AsyncClient,
) -> None:
    known = await call(client, RENAME.id, {}, token=None)
    unknown = await call(client, "domain:devices.wipe", {}, token=None)
    assert known.status_code == unknown.status_code == 401
    assert known.json()["error"] == unknown.json()["error"]


@pytest.mark.parametrize(
    ("body", "content_type", "status", "fragment"),
    [
        (b'{"invocationId": "i1", "input": {"deviceId": "acme-1", "name": "x"', "application/json", 400, "not valid JSON"),
        (b"\xff\xfe{}", "application/json", 400, "UTF-8"),
        (b'{"invocationId": "i1", "input": {"deviceId": "acme-1", "name": "\\ud800"}}', "application/json", 400, "surrogate"),
        (b'{"invocationId": "i1", "input": {"deviceId": "acme-1", "name": NaN}}', "application/json", 400, "NaN"),
        (b'{"invocationId": "i1", "invocationId": "i2", "input": {}}', "application/json", 400, "twice"),
        (b'{"invocationId": "i1", "input": {}}', "text/plain", 415, "application/json"),
        (b"[1, 2]", "application/json", 400, "object"),
        (b'{"invocationId": "i1", "input": {}, "tenant": "globex"}', "application/json", 400, "unknown field"),
        (b'{"invocationId": "has space", "input": {}}', "application/json", 400, "printable"),
        (b'{"input": {}}', "application/json", 400, "printable"),
        (b'{"invocationId": "i1"}', "application/json", 400, "required"),
    ],
)
async def test_malformed_bodies_get_a_typed_400(
    client: httpx.AsyncClient, db_path: Path, body: bytes, content_type: str, status: int, fragment: str
) -> None:
    before = snapshot(db_path)
    response = await post_raw(client, RENAME.id, body, content_type=content_type)
    assert response.status_code == status
    error = error_of(response)
    assert error["code"] == "INVALID_INPUT"
    assert any(fragment in issue["message"] for issue in error["details"]["issues"]), error
    assert snapshot(db_path) == before


@pytest.mark.parametrize("key", ["<b>x</b>", "tenantSecret", "x" * 200])
async def test_a_duplicated_key_is_refused_without_repeating_it(client: httpx.AsyncClient, key: str) -> None:
    body = json.dumps({"invocationId": "i1", "input": {}})[:-1] + f', "{key}": 1, "{key}": 2}}'
    response = await post_raw(client, RENAME.id, body.encode(), content_type="application/json")
    assert response.status_code == 400 and error_of(response)["code"] == "INVALID_INPUT"
    assert "twice" in response.text and key not in response.text


@pytest.mark.parametrize("route", ["procedures", "challenges"])
async def test_a_client_gone_mid_body_is_one_log_line(
    server: ProcedureServer, db_path: Path, route: str, caplog: pytest.LogCaptureFixture
) -> None:
    before = snapshot(db_path)
    messages: list[dict[str, Any]] = [
        {"type": "http.request", "body": b'{"invocationId": "i1", "inp', "more_body": True},
        {"type": "http.disconnect"},
    ]
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return messages.pop(0) if messages else {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    headers = [(b"authorization", b"Bearer tok-alice"), (b"content-type", b"application/json"),
               (b"content-length", b"500")]
    scope = {"type": "http", "http_version": "1.1", "method": "POST", "scheme": "http", "path":
             f"/{route}/{RENAME.id.removeprefix('domain:')}", "raw_path": b"", "query_string": b"",
             "headers": headers, "client": ("127.0.0.1", 5000), "server": ("app", 80), "root_path": ""}
    with caplog.at_level(logging.DEBUG):
        await server(scope, receive, send)  # no exception for the ASGI server to log again
    records = [r for r in caplog.records if r.name.startswith("agentsurface")]
    assert len(records) == 1 and records[0].exc_info is None, [r.getMessage() for r in records]
    assert "did not arrive" in records[0].getMessage()
    assert snapshot(db_path) == before


async def test_deep_nesting_is_refused_before_parsing(client: httpx.AsyncClient, db_path: Path) -> None:
    before = snapshot(db_path)
    for depth in (40, 30_000):  # 30,000 levels still fit the 64 KiB limit
        nested = b"[" * depth + b"]" * depth
        body = b'{"invocationId": "i1", "input": {"deviceId": ' + nested + b', "name": "x"}}'
        response = await post_raw(client, RENAME.id, body)
        assert response.status_code == 400
        assert "nesting deeper than 32" in error_of(response)["details"]["issues"][0]["message"]
    assert snapshot(db_path) == before


async def test_oversized_bodies_get_413_whatever_the_declared_length(db_path: Path) -> None:
    server = make_server(db_path, limits=ServerLimits(max_body_bytes=1024))
    before = snapshot(db_path)
    big = b'{"invocationId": "i1", "input": {"deviceId": "acme-1", "name": "' + b"x" * 4096 + b'"}}'

    async def chunks() -> Any:  # no Content-Length: the server must stop reading at its limit
        for start in range(0, len(big), 512):
            yield big[start : start + 512]

    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=server), base_url="http://app") as http:
        declared = await post_raw(http, RENAME.id, big)
        streamed = await http.post(
            "/procedures/devices.rename",
            content=chunks(),
            headers={"Authorization": "Bearer tok-alice", "Content-Type": "application/json"},
        )
    for response in (declared, streamed):
        assert response.status_code == 413
        assert error_of(response)["code"] == "INVALID_INPUT"
    assert snapshot(db_path) == before


async def test_wrong_methods_and_paths_get_typed_errors(client: httpx.AsyncClient) -> None:
    wrong_method = await client.get("/procedures/devices.rename")
    assert wrong_method.status_code == 405 and error_of(wrong_method)["code"] == "INVALID_INPUT"
    nowhere = await client.post("/elsewhere")
    assert nowhere.status_code == 404 and error_of(nowhere)["code"] == "CAPABILITY_NOT_FOUND"


# ---------------------------------------------------------------- failures never leak, never half-write


async def test_an_implementation_crash_is_sanitized_and_rolled_back(
    client: httpx.AsyncClient, db_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    before = snapshot(db_path)
    response = await call(client, "domain:devices.broken", {})
    assert response.status_code == 500
    error = error_of(response)
    assert error["code"] == "EXECUTION_FAILED" and error["details"]["reason"] == "server-error"
    assert "hunter2" not in response.text and "Traceback" not in response.text
    assert "hunter2" in caplog.text  # logged for the operator
    assert snapshot(db_path) == before  # the UPDATE before the crash was rolled back


async def test_an_output_the_contract_does_not_allow_is_not_sent(db_path: Path) -> None:
    def wrong(call: Any, value: Any) -> dict[str, Any]:
        call.db.execute("UPDATE devices SET status = 'disabled'")
        return {"disabled": "all of them"}

    server = make_server(db_path, procedures=[serve(DISABLE, wrong)])
    before = snapshot(db_path)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=server), base_url="http://app") as http:
        response = await call(http, DISABLE.id, {"deviceIds": ["acme-1"]})
    assert error_of(response)["code"] == "EXECUTION_FAILED"
    assert snapshot(db_path) == before


# ---------------------------------------------------------------- server-side approval


async def test_a_destructive_procedure_requires_the_pages_confirmation_evidence(
    client: httpx.AsyncClient, db_path: Path
) -> None:
    before = snapshot(db_path)
    missing = await call(client, DISABLE.id, {"deviceIds": ["acme-1"]})
    assert missing.status_code == 428
    error = error_of(missing)
    assert error["code"] == "CONFIRMATION_REQUIRED" and error["retry"] == "with-confirmation"
    assert error["details"] == {"origin": "server", "effect": "destructive"}

    stale = {"id": "cnf_1", "approvedAt": (datetime.now(UTC) - timedelta(hours=1)).isoformat()}
    expired = await call(client, DISABLE.id, {"deviceIds": ["acme-1"]}, confirmation=stale)
    assert error_of(expired)["code"] == "CONFIRMATION_INVALID"
    assert error_of(expired)["details"] == {"reason": "expired"}

    forged = await call(client, DISABLE.id, {"deviceIds": ["acme-1"]}, confirmation={"id": "x"})
    assert error_of(forged)["details"] == {"reason": "malformed"}
    assert snapshot(db_path) == before

    ok = await call(client, DISABLE.id, {"deviceIds": ["acme-1", "acme-3"]}, confirmation=approved_now())
    assert ok.json()["output"] == {"disabled": 1, "alreadyDisabled": 1}


async def test_the_apps_confirmation_hook_can_reject_evidence(db_path: Path) -> None:
    from agentsurface.server import SqliteInvocationStore
    from tests._shared.server.domain import audit, authenticate, served_procedures, setup

    seen: list[str] = []

    def verify(caller: Any, procedure_id: str, evidence: Any) -> bool:
        seen.append(f"{caller.id} {procedure_id} {evidence.id}")
        return bool(evidence.id == "cnf_ok")

    server = ProcedureServer(
        served_procedures(),
        authenticate=authenticate,
        store=SqliteInvocationStore(db_path, setup=setup),
        audit=audit,
        verify_confirmation=verify,
    )
    evidence = approved_now()
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=server), base_url="http://app") as http:
        rejected = await call(http, DISABLE.id, {"deviceIds": ["acme-1"]}, confirmation=evidence)
        accepted = await call(http, DISABLE.id, {"deviceIds": ["acme-1"]}, confirmation={**evidence, "id": "cnf_ok"})
    assert error_of(rejected)["details"] == {"reason": "rejected"}
    assert accepted.json()["ok"] is True
    assert seen == ["alice domain:devices.disable cnf_1", "alice domain:devices.disable cnf_ok"]


# ---------------------------------------------------------------- rate limits and definitions


async def test_rate_limited_callers_get_retry_after(db_path: Path) -> None:
    from agentsurface.server import RateLimit

    server = make_server(db_path, rate_limit=RateLimit(burst=2, per_second=0.5))
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=server), base_url="http://app") as http:
        codes = [(await call(http, QUERY.id, {})).status_code for _ in range(3)]
        other = await call(http, QUERY.id, {}, token="tok-bob")  # buckets are per caller
        limited = await call(http, QUERY.id, {})
    assert codes == [200, 200, 429]
    assert other.status_code == 200
    error = error_of(limited)
    assert error["code"] == "RATE_LIMITED" and error["details"]["retryAfterMs"] > 0
    assert limited.headers["retry-after"] == "2"


def test_definitions_are_checked_when_the_server_is_built(db_path: Path) -> None:
    async def not_sync(call: Any, value: Any) -> None:
        return None

    with pytest.raises(DefinitionError, match="synchronous"):
        serve(RENAME, not_sync)
    with pytest.raises(DefinitionError, match="served twice"):
        make_server(db_path, procedures=[serve(QUERY, lambda c, v: {}), serve(QUERY, lambda c, v: {})])
    with pytest.raises(DefinitionError, match="not a ProcedureContract"):
        serve("domain:x", lambda c, v: None)  # type: ignore[arg-type]


async def test_a_new_invocation_id_per_call_is_required(client: httpx.AsyncClient) -> None:
    # The id is the caller's, so the same id from two callers is two invocations.
    shared = new_id()
    a = await call(client, "domain:notes.add", {"text": "from alice"}, invocation_id=shared)
    b = await call(client, "domain:notes.add", {"text": "from bob"}, token="tok-bob", invocation_id=shared)
    assert a.json()["ok"] and b.json()["ok"]
    assert "replayed" not in b.json()


async def test_unknown_input_fields_are_refused_not_dropped(client: httpx.AsyncClient, db_path: Path) -> None:
    """Issue 43.8: a procedure's input refuses unknown fields, as a view action's does (a
    pydantic model's default extra="ignore" silently dropped them)."""
    assert RENAME.input.json_schema["additionalProperties"] is False
    before = snapshot(db_path)
    response = await call(client, RENAME.id, {"deviceId": "acme-1", "name": "Pump", "amount": 3})
    assert response.status_code == 400
    error = error_of(response)
    assert error["code"] == "INVALID_INPUT"
    assert error["details"]["issues"] == [{"path": "/amount", "message": "Extra inputs are not permitted"}]
    assert snapshot(db_path) == before


def test_a_serve_keyword_typo_says_did_you_mean() -> None:
    """Issue 43.9: serve() is authored like @action: a typo names the keyword it meant."""
    with pytest.raises(TypeError, match=r"serve\(\.\.\.\) got unknown keyword 'permission' \(did you mean 'permissions'\?\)"):
        serve(RENAME, lambda call, value: {}, permission={"devices.write"})  # type: ignore[call-arg]
