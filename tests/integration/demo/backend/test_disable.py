"""devices.disable / devices.enable: all-or-nothing, exact, idempotent, audited."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from demo.server.backend import DemoServer

from .helpers import AGENT, FIXED_NOW, Client, assert_error, assert_issue, audit_rows, devices_table, evidence

MILAN_OFFLINE = ["dev-0003", "dev-0017", "dev-0026", "dev-0051", "dev-0079", "dev-0080", "dev-0112"]
PRE_DISABLED = "dev-0044"  # acme, Turin, disabled by the seed


def changed_rows(before: list[tuple[Any, ...]], after: list[tuple[Any, ...]]) -> dict[str, tuple[Any, ...]]:
    assert [r[0] for r in before] == [r[0] for r in after]
    return {b[0]: a for b, a in zip(before, after, strict=True) if a != b}


def test_seeded_milan_offline_ids(client: Client) -> None:
    reply = client.call("devices.query", {"city": "Milan", "status": "offline"})
    assert [d["id"] for d in reply.output["devices"]] == MILAN_OFFLINE


def test_disable_changes_exactly_the_named_rows_and_is_audited(client: Client, server: DemoServer) -> None:
    before = devices_table(server)
    reply = client.call(
        "devices.disable",
        {"deviceIds": MILAN_OFFLINE, "reason": "Offline for days; pending site visit"},
        invocation_id="inv-42", confirmation=evidence("cnf-7"), headers=AGENT,
    )
    assert reply.status == 200, reply.text
    assert reply.headers["Cache-Control"] == "no-store"
    assert reply.json["invocationId"] == "inv-42"
    body = reply.output
    assert body["disabled"] == 7 and body["alreadyDisabled"] == 0
    assert [d["id"] for d in body["devices"]] == MILAN_OFFLINE
    assert all(d["status"] == "disabled" for d in body["devices"])
    assert all(d["disabledReason"] == "Offline for days; pending site visit" for d in body["devices"])
    assert all(d["updatedAt"] == "2026-11-02T10:00:00Z" for d in body["devices"])

    changed = changed_rows(before, devices_table(server))
    assert sorted(changed) == MILAN_OFFLINE
    rows = {r["id"]: r for r in server.store.fetch_all("SELECT * FROM devices")}
    for device_id in MILAN_OFFLINE:
        assert rows[device_id]["status"] == "disabled"
        assert rows[device_id]["status_before_disable"] == "offline"

    entry = audit_rows(server)[-1]
    assert entry["operation"] == "devices.disable" and entry["outcome"] == "ok" and entry["http_status"] == 200
    assert (entry["user_id"], entry["tenant"]) == ("u-acme-operator", "acme")
    assert (entry["invocation_id"], entry["confirmation_id"], entry["channel"]) == ("inv-42", "cnf-7", "agent")
    assert entry["at"] == "2026-11-02T10:00:00Z"
    assert '"dev-0003"' in entry["input"] and "pending site visit" in entry["input"]


def test_one_unknown_id_refuses_the_whole_call(client: Client, server: DemoServer) -> None:
    before = devices_table(server)
    reply = client.call("devices.disable", {"deviceIds": [*MILAN_OFFLINE, "dev-0142"]})  # dev-0142: globex
    error = assert_error(reply, 409, "PRECONDITION_FAILED")
    assert error["details"] == {"reason": "unknown-device"}
    assert "dev-0142" in error["message"] and "dev-0003" not in error["message"]
    assert devices_table(server) == before
    entry = audit_rows(server)[-1]
    assert (entry["outcome"], entry["reason"], entry["http_status"]) == ("PRECONDITION_FAILED", "unknown-device", 409)


def test_already_disabled_ids_are_idempotent(client: Client, server: DemoServer) -> None:
    first = client.call("devices.disable", {"deviceIds": [PRE_DISABLED, "dev-0003"], "reason": "new reason"})
    assert first.status == 200
    assert (first.output["disabled"], first.output["alreadyDisabled"]) == (1, 1)
    kept = next(d for d in first.output["devices"] if d["id"] == PRE_DISABLED)
    assert kept["disabledReason"] != "new reason"  # untouched
    snapshot = devices_table(server)
    again = client.call("devices.disable", {"deviceIds": [PRE_DISABLED, "dev-0003"], "reason": "other"})
    assert (again.output["disabled"], again.output["alreadyDisabled"]) == (0, 2)
    assert devices_table(server) == snapshot


def test_duplicate_ids_collapse(client: Client) -> None:
    reply = client.call("devices.disable", {"deviceIds": ["dev-0003", "dev-0003"]})
    assert reply.status == 200
    assert reply.output["disabled"] == 1 and [d["id"] for d in reply.output["devices"]] == ["dev-0003"]


def test_enable_restores_the_previous_status(client: Client, server: DemoServer) -> None:
    before = devices_table(server)
    online = client.call("devices.query", {"city": "Milan", "status": "online", "limit": 2}).output["devices"]
    ids = [*MILAN_OFFLINE[:2], *(d["id"] for d in online)]
    assert client.call("devices.disable", {"deviceIds": ids, "reason": "test"}).status == 200
    reply = client.call("devices.enable", {"deviceIds": ids})
    assert reply.status == 200
    assert (reply.output["enabled"], reply.output["alreadyEnabled"]) == (4, 0)
    assert [d["status"] for d in reply.output["devices"]] == ["offline", "offline", "online", "online"]
    after = devices_table(server)
    changed = changed_rows(before, after)
    assert sorted(changed) == sorted(ids)
    columns = [c[1] for c in server.store.fetch_all("PRAGMA table_info(devices)")]
    for device_id, row in changed.items():  # only updated_at differs from the seed
        original = next(r for r in before if r[0] == device_id)
        diff = {columns[i] for i, (a, b) in enumerate(zip(original, row, strict=True)) if a != b}
        assert diff == {"updated_at"}


def test_enable_of_a_seeded_disabled_device(client: Client) -> None:
    reply = client.call("devices.enable", {"deviceIds": [PRE_DISABLED, "dev-0003"]})
    assert (reply.output["enabled"], reply.output["alreadyEnabled"]) == (1, 1)
    assert reply.output["devices"][0]["status"] == "online" and reply.output["devices"][0]["disabledReason"] is None


def test_at_most_100_ids(client: Client, server: DemoServer) -> None:
    before = devices_table(server)
    too_many = [f"dev-{n:04d}" for n in range(1, 102)]
    error = assert_error(client.call("devices.disable", {"deviceIds": too_many}), 400, "INVALID_INPUT")
    assert_issue(error, "/deviceIds")
    assert devices_table(server) == before
    reply = client.call("devices.disable", {"deviceIds": too_many[:100]})
    assert reply.status == 200 and reply.output["disabled"] + reply.output["alreadyDisabled"] == 100


def test_empty_id_list_and_long_reason_are_refused(client: Client, server: DemoServer) -> None:
    before = devices_table(server)
    assert_issue(assert_error(client.call("devices.disable", {"deviceIds": []}), 400, "INVALID_INPUT"), "/deviceIds")
    error = assert_error(client.call("devices.disable", {"deviceIds": ["dev-0003"], "reason": "x" * 201}),
                         400, "INVALID_INPUT")
    assert_issue(error, "/reason")
    assert client.call("devices.disable", {"deviceIds": ["dev-0003"], "reason": "x" * 200}).status == 200
    assert changed_rows(before, devices_table(server)).keys() == {"dev-0003"}


def test_failure_inside_the_transaction_changes_nothing(
    client: Client, server: DemoServer, monkeypatch: Any
) -> None:
    """An internal error after the UPDATE rolls it back and reports no internals."""
    from demo.server import db

    original = db.Tx.disable

    def explode(self: db.Tx, *args: Any) -> db.Change:
        original(self, *args)
        raise RuntimeError("SELECT secret FROM internals")

    monkeypatch.setattr(db.Tx, "disable", explode)
    before = devices_table(server)
    error = assert_error(client.call("devices.disable", {"deviceIds": MILAN_OFFLINE}), 500, "EXECUTION_FAILED")
    assert error["retry"] == "no" and error["details"] == {"reason": "server-error"}
    assert devices_table(server) == before
    assert audit_rows(server)[-1]["outcome"] == "EXECUTION_FAILED"


def test_busy_storage_is_a_transient_failure(client: Client, server: DemoServer, monkeypatch: Any) -> None:
    import sqlite3

    from demo.server import db

    def busy(self: db.Tx, *args: Any) -> db.Change:
        raise sqlite3.OperationalError("database is locked")

    monkeypatch.setattr(db.Tx, "disable", busy)
    reply = client.call("devices.disable", {"deviceIds": ["dev-0003"]})
    error = assert_error(reply, 503, "EXECUTION_FAILED")
    assert error["retry"] == "after-delay"
    assert error["details"] == {"reason": "server-busy", "transient": True, "retryAfterMs": 1000}
    assert reply.headers["Retry-After"] == "1"


def test_disable_needs_the_persons_confirmation_evidence(client: Client, server: DemoServer) -> None:
    """Server-side approval: a destructive call without the page's evidence applies nothing."""
    before = devices_table(server)
    error = assert_error(client.call("devices.disable", {"deviceIds": ["dev-0003"]}, confirm=False), 428,
                         "CONFIRMATION_REQUIRED")
    assert error["details"] == {"effect": "destructive", "origin": "server"}
    stale = evidence(at=FIXED_NOW - timedelta(hours=1))
    error = assert_error(client.call("devices.disable", {"deviceIds": ["dev-0003"]}, confirmation=stale), 403,
                         "CONFIRMATION_INVALID")
    assert error["details"] == {"reason": "expired"}
    assert devices_table(server) == before
    assert [r["outcome"] for r in audit_rows(server)[-2:]] == ["CONFIRMATION_REQUIRED", "CONFIRMATION_INVALID"]


def test_a_retried_invocation_applies_once(client: Client, server: DemoServer) -> None:
    first = client.call("devices.disable", {"deviceIds": ["dev-0003"]}, invocation_id="inv-retry", headers=AGENT)
    after = devices_table(server)
    again = client.call("devices.disable", {"deviceIds": ["dev-0003"]}, invocation_id="inv-retry", headers=AGENT)
    assert again.json == {**first.json, "replayed": True}
    assert devices_table(server) == after
    changed = client.call("devices.disable", {"deviceIds": ["dev-0017"]}, invocation_id="inv-retry", headers=AGENT)
    assert_error(changed, 409, "INVOCATION_CONFLICT")
    assert devices_table(server) == after
    rows = [r for r in audit_rows(server) if r["outcome"] != "CONFIRMATION_REQUIRED"][-3:]  # the asks for a challenge
    assert [(r["outcome"], r["reason"]) for r in rows] == [("ok", None), ("ok", "replayed"),
                                                           ("INVOCATION_CONFLICT", "input-mismatch")]
