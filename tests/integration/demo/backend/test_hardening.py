"""The demo inherits the library server's hardening: control characters in API paths get the typed
JSON 404 (never Starlette's plain-text one), and no path is redirected to a Location built from
the request's Host header. Checked with raw HTTP (no client-side normalisation or redirects)."""

from __future__ import annotations

import http.client
import json
from urllib.parse import urlsplit

import pytest
from demo.server.backend import DemoServer

from .helpers import OPERATOR


def raw(server: DemoServer, method: str, path: str, body: bytes | None = None,
        host: str | None = None) -> tuple[int, dict[str, str], bytes]:
    conn = http.client.HTTPConnection(urlsplit(server.url).netloc, timeout=10)
    try:
        conn.putrequest(method, path, skip_host=host is not None)
        if host is not None:
            conn.putheader("Host", host)
        conn.putheader("Authorization", f"Bearer {OPERATOR}")
        conn.putheader("Content-Type", "application/json")
        conn.putheader("Content-Length", str(len(body or b"")))
        conn.endheaders(body)
        response = conn.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        conn.close()


CALL = json.dumps({"invocationId": "inv-odd", "input": {}}).encode()


@pytest.mark.parametrize("path", ["/api/agent/procedures/devices%0Aquery", "/api/agent/procedures/%0D%0Aevil",
                                  "/api/dev%0Aices", "/api/%0A"])
def test_control_characters_in_api_paths_get_the_typed_json_404(server: DemoServer, path: str) -> None:
    status, headers, body = raw(server, "POST" if "procedures" in path else "GET", path, CALL)
    assert status == 404 and headers["content-type"] == "application/json", body
    assert json.loads(body)["error"]["code"] in ("CAPABILITY_NOT_FOUND", "NOT_FOUND")


@pytest.mark.parametrize(("method", "path"), [("POST", "/api/agent/procedures/devices.query/"),
                                              ("GET", "/api/agent/.well-known/agentsurface/procedures/"),
                                              ("GET", "/api/devices/"), ("GET", "/web/dist/")])
def test_no_redirect_builds_its_location_from_the_host_header(server: DemoServer, method: str, path: str) -> None:
    status, headers, _ = raw(server, method, path, CALL if method == "POST" else None, host="evil.example")
    assert not 300 <= status < 400 and "location" not in headers
