"""Every API call, accepted or refused, leaves exactly one audit row; agent headers are recorded
for information only."""

from __future__ import annotations

from collections.abc import Callable

from demo.backend import DemoServer

from .helpers import VIEWER, Client, Reply, audit_rows


def test_every_call_is_audited(client: Client, server: DemoServer) -> None:
    calls: list[Callable[[], Reply]] = [
        lambda: client.get("/api/session"),
        lambda: client.get("/api/devices?city=Rome"),
        lambda: client.call("devices.query", {"status": "offline"}),
        lambda: client.call("devices.disable", {"deviceIds": ["dev-0003"]}),
        lambda: client.call("devices.disable", {"deviceIds": ["dev-0999"]}),
        lambda: client.call("devices.disable", {"deviceIds": ["dev-0003"]}, token=VIEWER),
        lambda: client.call("devices.disable", {"deviceIds": ["dev-0003"]}, token=None),
        lambda: client.call("devices.rename", raw=b"{"),
        lambda: client.get("/api/nothing-here"),
    ]
    for call in calls:
        call()
    rows = audit_rows(server)
    assert [(r["operation"], r["outcome"]) for r in rows] == [
        ("session", "ok"),
        ("devices.list", "ok"),
        ("devices.query", "ok"),
        ("devices.disable", "ok"),
        ("devices.disable", "PRECONDITION_FAILED"),
        ("devices.disable", "NOT_AUTHORIZED"),
        ("devices.disable", "NOT_AUTHENTICATED"),
        ("devices.rename", "INVALID_INPUT"),
        ("GET /api/nothing-here", "CAPABILITY_NOT_FOUND"),
    ]
    assert rows[1]["input"] == '{"city":"Rome"}'
    assert rows[5]["input"] == '{"deviceIds":["dev-0003"]}'  # what the viewer tried, never acted upon
    assert rows[6]["user_id"] is None and rows[6]["input"] is None  # anonymous bodies are not read
    assert rows[7]["input"] is None  # it did not parse


def test_correlation_headers_are_recorded_only_if_they_look_like_ids(client: Client, server: DemoServer) -> None:
    client.call("devices.query", {}, headers={"X-Agent-Invocation-Id": "inv-1",
                                              "X-Agent-Confirmation-Id": "<script>"})
    row = audit_rows(server)[-1]
    assert (row["invocation_id"], row["confirmation_id"]) == ("inv-1", None)


def test_tokens_never_reach_the_audit(client: Client, server: DemoServer) -> None:
    client.get("/api/session")
    client.get("/api/session", token="demo-wrong-token")
    text = repr(audit_rows(server))
    assert "demo-acme-operator" not in text and "demo-wrong-token" not in text
