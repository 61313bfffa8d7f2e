"""A small urllib client and assertions shared by the backend tests."""

from __future__ import annotations

import itertools
import json
import urllib.error
import urllib.request
from dataclasses import dataclass
from datetime import UTC, datetime
from email.message import Message
from typing import Any

from demo.server.backend import ApiHeaders, DemoServer

from agentsurface._core.errors import ERROR_MATRIX

FIXED_NOW = datetime(2026, 11, 2, 10, 0, 0, tzinfo=UTC)
OPERATOR = "demo-acme-operator"
VIEWER = "demo-acme-viewer"
ADMIN = "demo-acme-admin"
GLOBEX_OPERATOR = "demo-globex-operator"
MARKER = "MARKER<script>alert(1)</script>"  # planted in forged inputs; must never come back
PROCEDURES = "/api/agent/procedures/"
AGENT = {"X-AgentSurface-Channel": "agent"}  # what the page's agent bridge sends
_ids = itertools.count(1)


def evidence(confirmation_id: str = "cnf-test", at: datetime = FIXED_NOW) -> dict[str, str]:
    """The page's confirmation evidence, as the bridge sends it (the servers' clock is FIXED_NOW)."""
    return {"id": confirmation_id, "approvedAt": at.isoformat().replace("+00:00", "Z")}


@dataclass(frozen=True)
class Reply:
    status: int
    headers: Message
    text: str

    @property
    def json(self) -> Any:
        return json.loads(self.text)

    @property
    def output(self) -> Any:
        body = self.json
        assert body["ok"] is True, self.text
        return body["output"]


class Client:
    def __init__(self, server: DemoServer) -> None:
        self.server = server
        self.url = server.url

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        token: str | None = OPERATOR,
        raw: bytes | None = None,
        content_type: str | None = "application/json",
        headers: dict[str, str] | None = None,
    ) -> Reply:
        data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
        req = urllib.request.Request(self.url + path, data=data, method=method)
        if token is not None:
            req.add_header("Authorization", f"Bearer {token}")
        if data is not None and content_type is not None:
            req.add_header("Content-Type", content_type)
        for name, value in (headers or {}).items():
            req.add_header(name, value)
        try:
            with urllib.request.urlopen(req, timeout=10) as resp:
                return Reply(resp.status, resp.headers, resp.read().decode())
        except urllib.error.HTTPError as err:
            with err:
                return Reply(err.code, err.headers, err.read().decode())

    def call(
        self,
        procedure: str,
        input: Any = None,
        *,
        invocation_id: str | None = None,
        confirmation: dict[str, Any] | None = None,
        confirm: bool = True,
        raw: bytes | None = None,
        **kwargs: Any,
    ) -> Reply:
        """A procedure call in the bridge's envelope; with confirmation evidence unless ``confirm=False``
        (evidence naming no challenge answers the server's challenge, as the bridge does)."""
        if raw is None:
            envelope: dict[str, Any] = {"invocationId": invocation_id or f"inv-test-{next(_ids)}",
                                        "input": {} if input is None else input}
            if confirm:
                envelope["confirmation"] = confirmation or evidence()
            raw = json.dumps(envelope).encode()
            reply = self.request("POST", PROCEDURES + procedure, raw=raw, **kwargs)
            sent = envelope.get("confirmation")
            challenge = reply.json.get("challenge") if reply.status == 428 else None
            if isinstance(sent, dict) and "challenge" not in sent and isinstance(challenge, dict):
                # As the page's bridge does: the approval answers the server's challenge.
                envelope["confirmation"] = {**sent, "challenge": challenge["id"]}
                raw = json.dumps(envelope).encode()
            else:
                return reply
        return self.request("POST", PROCEDURES + procedure, raw=raw, **kwargs)

    def session(self, **kwargs: Any) -> Reply:
        """The page's first call: ``session.describe`` (who the caller is), a procedure like the rest."""
        return self.call("session.describe", {}, confirm=False, **kwargs)

    def get(self, path: str, **kwargs: Any) -> Reply:
        return self.request("GET", path, **kwargs)


def envelope(input_json: bytes, invocation_id: str = "inv-raw") -> bytes:
    """A raw input (bytes as sent) inside the call envelope, untouched."""
    return b'{"invocationId": "' + invocation_id.encode() + b'", "input": ' + input_json + b"}"


def devices_table(server: DemoServer) -> list[tuple[Any, ...]]:
    """Every device row, every column: compare before/after to prove nothing changed."""
    return [tuple(r) for r in server.store.fetch_all("SELECT * FROM devices ORDER BY id")]


def audit_rows(server: DemoServer) -> list[dict[str, Any]]:
    """The audit table, with the counts of folded refusals written first."""
    assert isinstance(server.app, ApiHeaders)
    server.app.flush_audit()
    return [dict(r) for r in server.store.fetch_all("SELECT * FROM audit ORDER BY id")]


def assert_error(reply: Reply, status: int, code: str) -> dict[str, Any]:
    """The reply is a typed error of the agent-facing matrix; returns its ``error`` object."""
    assert reply.status == status, reply.text
    assert reply.headers.get_content_type() == "application/json"
    assert reply.headers["Cache-Control"] == "no-store"
    body = reply.json
    assert body["ok"] is False and set(body) <= {"ok", "error", "invocationId", "challenge"}
    assert "challenge" not in body or code == "CONFIRMATION_REQUIRED"
    error = body["error"]
    assert error["code"] == code
    assert set(error) <= {"code", "message", "retry", "details"}
    spec = ERROR_MATRIX[error["code"]]
    assert error["retry"] in spec.retry
    assert set(error.get("details", {})) <= set(spec.details)
    assert isinstance(error["message"], str) and error["message"]
    for leak in ("Traceback", "sqlite", "SELECT ", "UPDATE ", MARKER):
        assert leak not in reply.text
    return dict(error)


def assert_issue(error: dict[str, Any], path: str) -> None:
    issues = error["details"]["issues"]
    assert all(set(i) == {"path", "message"} for i in issues)
    assert path in [i["path"] for i in issues], issues
