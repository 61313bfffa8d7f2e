"""Malformed, mistyped, oversized or over-specified input is refused with INVALID_INPUT issues
(a JSON pointer and a message, never the value), and nothing changes."""

from __future__ import annotations

import http.client
import json
from typing import Any
from urllib.parse import urlsplit

import pytest
from demo.server.backend import DemoServer

from .helpers import MARKER, Client, assert_error, assert_issue, audit_rows, devices_table, envelope

GOOD_IDS = ["dev-0003"]

FORGED_BODIES: list[tuple[str, str, Any, str]] = [
    # (id, procedure, body, pointer expected among the issues)
    ("not-an-object", "devices.disable", ["dev-0003"], "/"),
    ("string-body", "devices.disable", MARKER, "/"),
    ("null-body", "devices.disable", None, "/"),
    ("missing-ids", "devices.disable", {"reason": "x"}, "/deviceIds"),
    ("ids-not-a-list", "devices.disable", {"deviceIds": MARKER}, "/deviceIds"),
    ("id-not-a-string", "devices.disable", {"deviceIds": ["dev-0003", 17]}, "/deviceIds/1"),
    ("id-malformed", "devices.disable", {"deviceIds": ["dev-0003", MARKER]}, "/deviceIds/1"),
    ("id-sql-ish", "devices.disable", {"deviceIds": ["dev-0003' OR '1'='1"]}, "/deviceIds/0"),
    ("extra-key", "devices.disable", {"deviceIds": GOOD_IDS, "force": True}, "/force"),
    ("extra-key-odd-name", "devices.disable", {"deviceIds": GOOD_IDS, MARKER: 1}, "/"),
    ("tenant-smuggling", "devices.disable", {"deviceIds": GOOD_IDS, "tenant": "globex"}, "/tenant"),
    ("reason-not-string", "devices.disable", {"deviceIds": GOOD_IDS, "reason": 5}, "/reason"),
    ("reason-control-chars", "devices.disable", {"deviceIds": GOOD_IDS, "reason": "a\u0000b"}, "/reason"),
    ("enable-extra-reason", "devices.enable", {"deviceIds": ["dev-0044"], "reason": "x"}, "/reason"),
    ("rename-missing-name", "devices.rename", {"deviceId": "dev-0003"}, "/name"),
    ("rename-blank-name", "devices.rename", {"deviceId": "dev-0003", "name": "   "}, "/name"),
    ("rename-long-name", "devices.rename", {"deviceId": "dev-0003", "name": MARKER * 10}, "/name"),
    ("rename-name-not-string", "devices.rename", {"deviceId": "dev-0003", "name": ["a"]}, "/name"),
    ("rename-bidi-override", "devices.rename", {"deviceId": "dev-0003", "name": "abc\u202edef"}, "/name"),
    ("rename-id-list", "devices.rename", {"deviceId": ["dev-0003"], "name": "x"}, "/deviceId"),
    ("query-bad-status", "devices.query", {"status": MARKER}, "/status"),
    ("query-limit-bool", "devices.query", {"limit": True}, "/limit"),
    ("query-limit-string", "devices.query", {"limit": "5"}, "/limit"),
    ("query-limit-float", "devices.query", {"limit": 5.5}, "/limit"),
    ("query-limit-range", "devices.query", {"limit": 201}, "/limit"),
    ("query-extra", "devices.query", {"country": "IT"}, "/country"),
]


@pytest.mark.parametrize(("procedure", "body", "pointer"), [f[1:] for f in FORGED_BODIES],
                         ids=[f[0] for f in FORGED_BODIES])
def test_forged_body_is_refused(client: Client, server: DemoServer, procedure: str, body: Any, pointer: str) -> None:
    before = devices_table(server)
    reply = client.call(procedure, raw=envelope(json.dumps(body).encode()))
    error = assert_error(reply, 400, "INVALID_INPUT")
    assert_issue(error, pointer)
    assert devices_table(server) == before
    assert audit_rows(server)[-1]["outcome"] == "INVALID_INPUT"


RAW_BODIES: list[tuple[str, bytes]] = [
    ("empty", b""),
    ("truncated", b'{"deviceIds": ["dev-0003"'),
    ("trailing-garbage", b'{"deviceIds": ["dev-0003"]} xx'),
    ("duplicate-key", b'{"deviceIds": ["dev-0003"], "deviceIds": ["dev-0017"]}'),
    ("nan", b'{"deviceIds": ["dev-0003"], "reason": NaN}'),
    ("not-utf8", b'{"deviceIds": ["dev-0003"], "reason": "\xff\xfe"}'),
    ("deep-nesting", b"[" * 5000 + b"]" * 5000),
]


@pytest.mark.parametrize("raw", [r[1] for r in RAW_BODIES], ids=[r[0] for r in RAW_BODIES])
def test_malformed_json_is_refused(client: Client, server: DemoServer, raw: bytes) -> None:
    before = devices_table(server)
    error = assert_error(client.call("devices.disable", raw=envelope(raw)), 400, "INVALID_INPUT")
    assert error["details"]["issues"]
    assert devices_table(server) == before


def test_wrong_content_type_is_refused(client: Client, server: DemoServer) -> None:
    before = devices_table(server)
    reply = client.call("devices.disable", {"deviceIds": GOOD_IDS}, content_type="text/plain")
    assert_error(reply, 415, "INVALID_INPUT")
    assert devices_table(server) == before
    ok = client.call("devices.disable", {"deviceIds": GOOD_IDS}, content_type="application/json; charset=utf-8")
    assert ok.status == 200


def test_huge_body_is_refused_unread(client: Client, server: DemoServer) -> None:
    before = devices_table(server)
    body = {"deviceIds": GOOD_IDS, "reason": "x" * 200, "padding": "y" * 16 * 1024}
    error = assert_error(client.call("devices.disable", body), 413, "INVALID_INPUT")
    assert_issue(error, "/")
    assert devices_table(server) == before
    assert client.session().status == 200  # the server is still fine


def test_absurd_declared_length_is_refused_without_reading(server: DemoServer) -> None:
    before = devices_table(server)
    conn = http.client.HTTPConnection(urlsplit(server.url).netloc, timeout=10)
    conn.putrequest("POST", "/api/agent/procedures/devices.disable")
    conn.putheader("Authorization", "Bearer demo-acme-operator")
    conn.putheader("Content-Type", "application/json")
    conn.putheader("Content-Length", str(10**9))
    conn.endheaders()
    response = conn.getresponse()
    body = json.loads(response.read())
    conn.close()
    assert response.status == 413 and body["error"]["code"] == "INVALID_INPUT"
    assert devices_table(server) == before


def test_endless_chunked_body_is_cut_off_at_the_limit(server: DemoServer) -> None:
    """No Content-Length to trust: the server reads at most the limit, then refuses."""
    before = devices_table(server)
    conn = http.client.HTTPConnection(urlsplit(server.url).netloc, timeout=10)
    conn.putrequest("POST", "/api/agent/procedures/devices.disable")
    conn.putheader("Authorization", "Bearer demo-acme-operator")
    conn.putheader("Content-Type", "application/json")
    conn.putheader("Transfer-Encoding", "chunked")
    conn.endheaders()
    chunk = b"[" * 4096
    try:
        for _ in range(64):  # 256 KiB offered, far past the 16 KiB limit
            conn.send(b"%x\r\n%s\r\n" % (len(chunk), chunk))
    except OSError:
        pass  # the server may stop reading once it has answered
    response = conn.getresponse()
    body = json.loads(response.read())
    conn.close()
    assert response.status == 413 and body["error"]["code"] == "INVALID_INPUT"
    assert devices_table(server) == before


def test_unknown_procedure_and_wrong_method(client: Client) -> None:
    assert_error(client.call("devices.delete", {"deviceIds": GOOD_IDS}), 404, "CAPABILITY_NOT_FOUND")
    assert "devices.delete" not in client.get("/api/agent/.well-known/agentsurface/procedures").text
    reply = client.get("/api/agent/procedures/devices.disable")
    assert_error(reply, 405, "INVALID_INPUT")
    assert reply.headers["Allow"] == "POST"
    reply = client.request("DELETE", "/api/agent/procedures/session.describe")
    assert_error(reply, 405, "INVALID_INPUT")
    assert reply.headers["Allow"] == "POST"
    for method in ("GET", "DELETE"):  # the app has no routes of its own beside the procedures
        assert_error(client.request(method, "/api/devices"), 404, "CAPABILITY_NOT_FOUND")


EXOTIC_METHODS = ("TRACE", "PROPFIND", "PROPPATCH", "MKCOL", "COPY", "MOVE", "LOCK", "UNLOCK", "SEARCH",
                  "REPORT", "PURGE", "LINK", "UNLINK")


@pytest.mark.parametrize("method", EXOTIC_METHODS)
def test_every_method_gets_the_typed_answer_under_api(client: Client, method: str) -> None:
    # A path the app does not serve answers the typed 404 whatever the method (no plain-text
    # 404 from the static files), and the procedure server's own paths their typed 404 or 405.
    assert_error(client.request(method, "/api/devices"), 404, "CAPABILITY_NOT_FOUND")
    assert_error(client.request(method, "/api/devices/dev-0003/disable"), 404, "CAPABILITY_NOT_FOUND")
    assert_error(client.request(method, "/api/agent/nothing-here"), 404, "CAPABILITY_NOT_FOUND")
    assert_error(client.request(method, "/api/agent/procedures/devices.disable"), 405, "INVALID_INPUT")


def test_envelope_is_checked(client: Client, server: DemoServer) -> None:
    before = devices_table(server)
    for raw, pointer in [
        (b'{"deviceIds": ["dev-0003"]}', "/deviceIds"),  # an input without its envelope
        (b'{"invocationId": "", "input": {"deviceIds": ["dev-0003"]}}', "/invocationId"),
        (b'{"invocationId": "a b", "input": {"deviceIds": ["dev-0003"]}}', "/invocationId"),
        (b'{"invocationId": "inv-1"}', "/input"),
    ]:
        assert_issue(assert_error(client.call("devices.disable", raw=raw), 400, "INVALID_INPUT"), pointer)
    assert devices_table(server) == before


def test_bad_listing_input_is_refused(client: Client) -> None:
    for listing, pointer in [
        ({"colour": "red"}, "/colour"),
        ({"status": ["online", "offline"]}, "/status"),
        ({"status": "broken"}, "/status"),
        ({"limit": -1}, "/limit"),
        ({"limit": 201}, "/limit"),
    ]:
        assert_issue(assert_error(client.call("devices.query", listing), 400, "INVALID_INPUT"), pointer)
