"""Every API call, accepted or refused, leaves exactly one audit row; agent headers are recorded
for information only."""

from __future__ import annotations

from collections.abc import Callable

from demo.server.backend import DemoServer

from .helpers import AGENT, VIEWER, Client, Reply, audit_rows


def test_every_call_is_audited(client: Client, server: DemoServer) -> None:
    calls: list[Callable[[], Reply]] = [
        lambda: client.session(),
        lambda: client.call("devices.query", {"city": "Rome", "limit": 200}),
        lambda: client.call("devices.query", {"status": "offline"}),
        lambda: client.call("devices.disable", {"deviceIds": ["dev-0003"]}),
        lambda: client.call("devices.disable", {"deviceIds": ["dev-0999"]}),
        lambda: client.call("devices.disable", {"deviceIds": ["dev-0003"]}, token=VIEWER),
        lambda: client.call("devices.disable", {"deviceIds": ["dev-0003"]}, token=None),
        lambda: client.call("devices.rename", raw=b"{"),
        lambda: client.call("devices.disable", {"deviceIds": ["dev-0003"]}, invocation_id="inv-ok"),
        lambda: client.call("nothing.here", {}),
    ]
    for call in calls:
        call()
    every = audit_rows(server)
    # Each approved disable that reached the approval step first asked for the server's
    # challenge (one refused call, audited), then sent the approval answering it.
    asked = [r for r in every if r["outcome"] == "CONFIRMATION_REQUIRED"]
    assert len(asked) == 3 and all(r["operation"] == "devices.disable" for r in asked)
    rows = [r for r in every if r["outcome"] != "CONFIRMATION_REQUIRED"]
    assert [(r["operation"], r["outcome"]) for r in rows] == [
        ("session.describe", "ok"),
        ("devices.query", "ok"),
        ("devices.query", "ok"),
        ("devices.disable", "ok"),
        ("devices.disable", "PRECONDITION_FAILED"),
        ("devices.disable", "NOT_AUTHORIZED"),
        ("devices.disable", "NOT_AUTHENTICATED"),
        ("devices.rename", "INVALID_INPUT"),
        ("devices.disable", "ok"),  # already disabled above: idempotent, still audited
        ("nothing.here", "CAPABILITY_NOT_FOUND"),
    ]
    assert rows[0]["input"] == "{}"
    assert rows[1]["input"] == '{"city":"Rome","limit":200}'
    assert rows[3]["input"] == '{"deviceIds":["dev-0003"]}' and rows[3]["confirmation_id"] == "cnf-test"
    assert rows[5]["input"] is None  # refused by role before the body was read, never acted upon
    assert rows[6]["user_id"] is None and rows[6]["input"] is None  # anonymous bodies are not read
    assert rows[7]["input"] is None  # it did not parse
    assert rows[8]["invocation_id"] == "inv-ok"
    assert {r["channel"] for r in rows if r["user_id"]} == {"person"}


def test_agent_calls_are_audited_as_the_agents(client: Client, server: DemoServer) -> None:
    """The bridge's channel header names who acted: the person or their agent (same user)."""
    client.call("devices.query", {}, invocation_id="inv-1", headers=AGENT)
    client.call("devices.query", {}, invocation_id="inv-2")
    rows = audit_rows(server)[-2:]
    assert [(r["invocation_id"], r["channel"], r["user_id"]) for r in rows] == [
        ("inv-1", "agent", "u-acme-operator"), ("inv-2", "person", "u-acme-operator")]


def test_tokens_never_reach_the_audit(client: Client, server: DemoServer) -> None:
    client.session()
    client.session(token="demo-wrong-token")
    text = repr(audit_rows(server))
    assert "demo-acme-operator" not in text and "demo-wrong-token" not in text
