"""Authentication, authorization and tenant isolation, checked by the server on forged calls."""

from __future__ import annotations

import pytest
from demo.server.backend import DemoServer

from .helpers import (
    ADMIN,
    GLOBEX_OPERATOR,
    OPERATOR,
    VIEWER,
    Client,
    assert_error,
    assert_issue,
    audit_rows,
    devices_table,
    evidence,
)

ROUTES = [
    ("POST", "/api/agent/procedures/session.describe", {"invocationId": "i", "input": {}}),
    ("POST", "/api/agent/procedures/devices.query", {"invocationId": "i", "input": {}}),
    ("POST", "/api/agent/procedures/devices.rename", {"invocationId": "i", "input": {"deviceId": "dev-0001", "name": "x"}}),
    ("POST", "/api/agent/procedures/devices.disable", {"invocationId": "i", "input": {"deviceIds": ["dev-0001"]}}),
    ("POST", "/api/agent/procedures/devices.enable", {"invocationId": "i", "input": {"deviceIds": ["dev-0044"]}}),
    ("POST", "/api/agent/procedures/devices.delete", {"invocationId": "i", "input": {}}),
    ("POST", "/api/agent/procedures/no.such-procedure", {"invocationId": "i", "input": {}}),
]


@pytest.mark.parametrize(("method", "path", "body"), ROUTES)
@pytest.mark.parametrize("token", [None, "not-a-demo-token", ""])
def test_missing_or_unknown_token_is_refused(
    client: Client, server: DemoServer, method: str, path: str, body: object, token: str | None
) -> None:
    before = devices_table(server)
    reply = client.request(method, path, body, token=token)
    assert_error(reply, 401, "NOT_AUTHENTICATED")
    assert reply.headers["WWW-Authenticate"].startswith("Bearer")
    assert devices_table(server) == before


@pytest.mark.parametrize("header", ["Basic ZGVtbzpkZW1v", "Bearer", "demo-acme-operator", "Bearer a b c",
                                    "Bearer demo-acme-operator\u00e9"])
def test_malformed_authorization_header_is_refused(client: Client, header: str) -> None:
    reply = client.call("session.describe", {}, confirm=False, token=None,
                        headers={"Authorization": header.encode("utf-8").decode("latin-1")})
    assert_error(reply, 401, "NOT_AUTHENTICATED")


def test_session_describes_the_caller(client: Client, server: DemoServer) -> None:
    reply = client.session(token=VIEWER, invocation_id="inv-session")
    assert reply.status == 200
    assert reply.headers["Cache-Control"] == "no-store"
    assert reply.output == {
        "user": {"id": "u-acme-viewer", "name": "Giulia Conti", "role": "viewer"},
        "tenant": "acme",
        "tenantName": "Acme Air Monitoring",
        "allowedProcedures": ["devices.query"],
    }
    assert client.session(token=OPERATOR).output["allowedProcedures"] == [
        "devices.query", "devices.rename", "devices.disable", "devices.enable"]
    row = audit_rows(server)[0]  # a procedure like the rest: audited by the server's hook
    assert (row["operation"], row["outcome"], row["user_id"], row["invocation_id"]) == (
        "session.describe", "ok", "u-acme-viewer", "inv-session")


def test_the_session_is_the_callers_whatever_the_input(client: Client) -> None:
    """Its input is empty: a caller cannot ask for someone else's session."""
    reply = client.call("session.describe", {"user": "u-acme-admin"}, confirm=False, token=VIEWER)
    assert_issue(assert_error(reply, 400, "INVALID_INPUT"), "/user")


@pytest.mark.parametrize(("procedure", "body"), [
    ("devices.disable", {"deviceIds": ["dev-0003", "dev-0017"]}),
    ("devices.enable", {"deviceIds": ["dev-0044"]}),
    ("devices.rename", {"deviceId": "dev-0003", "name": "Hijacked"}),
])
def test_viewer_may_not_change_anything(client: Client, server: DemoServer, procedure: str, body: object) -> None:
    before = devices_table(server)
    reply = client.call(procedure, body, token=VIEWER,
                        confirmation=evidence("cnf-123"))  # evidence is never authorization
    error = assert_error(reply, 403, "NOT_AUTHORIZED")
    assert error["details"] == {"origin": "server"}
    assert devices_table(server) == before
    row = audit_rows(server)[-1]
    assert (row["operation"], row["outcome"], row["user_id"]) == (procedure, "NOT_AUTHORIZED", "u-acme-viewer")
    assert row["input"] is None  # refused before the body was read


def test_viewer_may_query(client: Client) -> None:
    assert client.call("devices.query", {"city": "Milan"}, token=VIEWER).status == 200
    assert client.call("devices.query", {"limit": 200}, token=VIEWER).status == 200  # the page's listing


def test_authorization_is_checked_before_the_input(client: Client) -> None:
    """A viewer learns nothing about the input contract of what it may not call."""
    reply = client.call("devices.disable", {"bogus": 1}, token=VIEWER)
    assert_error(reply, 403, "NOT_AUTHORIZED")


def test_the_tenant_comes_from_the_token_never_the_page(client: Client, server: DemoServer) -> None:
    before = devices_table(server)
    reply = client.call("devices.disable", {"deviceIds": ["dev-0130"], "tenant": "globex"},
                        token=OPERATOR)
    assert_issue(assert_error(reply, 400, "INVALID_INPUT"), "/tenant")
    assert devices_table(server) == before


def test_admin_may_change(client: Client) -> None:
    reply = client.call("devices.disable", {"deviceIds": ["dev-0003"]}, token=ADMIN)
    assert reply.status == 200 and reply.output["disabled"] == 1


def test_listing_is_tenant_scoped(client: Client) -> None:
    acme = client.call("devices.query", {"limit": 200}).output
    globex = client.call("devices.query", {"limit": 200}, token=GLOBEX_OPERATOR).output
    assert acme["total"] == len(acme["devices"]) == 120
    assert globex["total"] == len(globex["devices"]) == 30
    assert not {d["id"] for d in acme["devices"]} & {d["id"] for d in globex["devices"]}
    assert all("tenant" not in d for d in acme["devices"])


def test_another_tenants_ids_are_refused_like_nonexistent_ones(client: Client, server: DemoServer) -> None:
    """dev-0130 exists (globex); dev-0999 does not. acme cannot tell them apart."""
    before = devices_table(server)
    foreign = client.call("devices.disable", {"deviceIds": ["dev-0130"]})
    missing = client.call("devices.disable", {"deviceIds": ["dev-0999"]})
    for reply in (foreign, missing):
        error = assert_error(reply, 409, "PRECONDITION_FAILED")
        assert error["details"] == {"reason": "unknown-device"}
    assert foreign.json["error"]["message"].replace("dev-0130", "ID") == missing.json["error"][
        "message"].replace("dev-0999", "ID")
    assert foreign.status == missing.status
    assert devices_table(server) == before


@pytest.mark.parametrize(("procedure", "body"), [
    ("devices.rename", {"deviceId": "dev-0130", "name": "Mine now"}),
    ("devices.enable", {"deviceIds": ["dev-0138"]}),  # globex's disabled device
])
def test_other_mutations_refuse_another_tenants_ids(
    client: Client, server: DemoServer, procedure: str, body: object
) -> None:
    before = devices_table(server)
    error = assert_error(client.call(procedure, body), 409, "PRECONDITION_FAILED")
    assert error["details"] == {"reason": "unknown-device"}
    assert devices_table(server) == before
