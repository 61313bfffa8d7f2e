"""Hostile approvals from outside, over HTTP with httpx, against the running demo server and its
operator token (what a script in the page, an extension or an agent with script evaluation
holds): made-up evidence, replays, reuse under a new invocation id or by another caller, and a
substituted input are all refused, and the devices table does not change."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from demo.server.backend import DemoServer

from .helpers import ADMIN, FIXED_NOW, GLOBEX_OPERATOR, OPERATOR, PROCEDURES, audit_rows, devices_table

APPROVED_AT = FIXED_NOW.isoformat().replace("+00:00", "Z")
TARGET = {"deviceIds": ["dev-0003"]}
_ids = iter(range(1, 10_000))


@pytest.fixture
def http(server: DemoServer) -> Any:
    with httpx.Client(base_url=server.url, timeout=10) as client:
        yield client


def post(http: httpx.Client, input: Any, evidence: dict[str, Any] | None = None, *, token: str = OPERATOR,
         invocation_id: str | None = None) -> httpx.Response:
    envelope: dict[str, Any] = {"invocationId": invocation_id or f"inv-hostile-{next(_ids)}", "input": input}
    if evidence is not None:
        envelope["confirmation"] = evidence
    return http.post(PROCEDURES + "devices.disable", content=json.dumps(envelope),
                     headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"})


def challenge_for(http: httpx.Client, input: Any, *, token: str = OPERATOR) -> str:
    asked = post(http, input, token=token)
    assert asked.status_code == 428, asked.text
    body = asked.json()
    assert body["error"]["code"] == "CONFIRMATION_REQUIRED" and body["error"]["details"]["origin"] == "server"
    assert body["challenge"]["id"] not in json.dumps(body["error"])
    return str(body["challenge"]["id"])


def refused(response: httpx.Response, reason: str) -> None:
    assert response.status_code == 403, response.text
    body = response.json()
    assert set(body) <= {"ok", "error", "invocationId"}
    assert body["error"]["code"] == "CONFIRMATION_INVALID" and body["error"]["details"] == {"reason": reason}


def test_made_up_evidence_is_never_applied(http: httpx.Client, server: DemoServer) -> None:
    before = devices_table(server)
    # The page's old evidence shape: the server answers with a challenge of its own instead.
    forged = post(http, TARGET, {"id": "forged-1", "approvedAt": APPROVED_AT})
    assert forged.status_code == 428 and "challenge" in forged.json()
    refused(post(http, TARGET, {"challenge": "ch_forged0000000000000000", "approvedAt": APPROVED_AT}), "unknown")
    refused(post(http, TARGET, {"challenge": "ch_forged", "approvedAt": APPROVED_AT, "id": "cnf-1"}), "unknown")
    assert devices_table(server) == before


def test_replayed_and_reused_evidence_applies_once(http: httpx.Client, server: DemoServer) -> None:
    before = devices_table(server)
    challenge = challenge_for(http, TARGET)
    evidence = {"challenge": challenge, "approvedAt": APPROVED_AT}
    applied = post(http, TARGET, evidence, invocation_id="inv-hostile-once")
    assert applied.status_code == 200, applied.text
    after = devices_table(server)
    assert after != before

    # The same request again replays the recorded answer, applying nothing.
    again = post(http, TARGET, evidence, invocation_id="inv-hostile-once")
    assert again.json() == {**applied.json(), "replayed": True}
    # The same evidence with a new invocation id: spent.
    refused(post(http, TARGET, evidence), "used")
    # Re-enable the device, then try to disable it again with the spent evidence: still spent.
    assert enable(http).status_code == 200
    restored = devices_table(server)
    assert [r[5] for r in restored] == [r[5] for r in before]  # every status as it was
    refused(post(http, TARGET, evidence), "used")
    refused(post(http, TARGET, evidence, invocation_id="inv-hostile-fresh"), "used")
    assert devices_table(server) == restored


def enable(http: httpx.Client) -> httpx.Response:
    envelope = {"invocationId": f"inv-hostile-{next(_ids)}", "input": TARGET}
    return http.post(PROCEDURES + "devices.enable", content=json.dumps(envelope),
                     headers={"Authorization": f"Bearer {OPERATOR}", "Content-Type": "application/json"})


def test_evidence_reused_by_another_caller_is_refused(http: httpx.Client, server: DemoServer) -> None:
    before = devices_table(server)
    challenge = challenge_for(http, TARGET)
    evidence = {"challenge": challenge, "approvedAt": APPROVED_AT}
    refused(post(http, TARGET, evidence, token=ADMIN), "mismatch")  # same tenant, another person
    other_tenant = post(http, {"deviceIds": ["dev-0142"]}, evidence, token=GLOBEX_OPERATOR)
    refused(other_tenant, "mismatch")
    assert devices_table(server) == before
    # It stays the operator's own, for exactly that request.
    assert post(http, TARGET, evidence).status_code == 200


def test_a_substituted_input_is_refused(http: httpx.Client, server: DemoServer) -> None:
    before = devices_table(server)
    challenge = challenge_for(http, TARGET)  # the person saw (and approved) one device
    evidence = {"challenge": challenge, "approvedAt": APPROVED_AT}
    refused(post(http, {"deviceIds": ["dev-0003", "dev-0017", "dev-0026"]}, evidence), "mismatch")
    refused(post(http, {"deviceIds": ["dev-0003"], "reason": "changed"}, evidence), "mismatch")
    assert devices_table(server) == before


def test_refused_approvals_are_audited_with_their_reason(http: httpx.Client, server: DemoServer) -> None:
    refused(post(http, TARGET, {"challenge": "ch_made_up", "approvedAt": APPROVED_AT}), "unknown")
    row = audit_rows(server)[-1]
    assert (row["operation"], row["outcome"], row["reason"]) == ("devices.disable", "CONFIRMATION_INVALID", "unknown")
