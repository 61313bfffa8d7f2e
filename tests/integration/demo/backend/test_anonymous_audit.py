"""Refused anonymous calls cannot grow the audit table at will: they are folded into one counted row
per outcome and operation per window, while authenticated refusals keep one row each."""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterator
from urllib.parse import urlsplit

import pytest
from demo.server.api import AnonymousRefusals, AuditLog
from demo.server.backend import DemoServer, start_demo_server
from demo.server.db import AuditEntry
from demo.server.seed import open_seeded_store

from agentsurface.server import RateLimit

from .helpers import FIXED_NOW, OPERATOR, VIEWER, Client, audit_rows

ANONYMOUS_CALLS = 1_000


@pytest.fixture
def limited() -> Iterator[DemoServer]:
    """The default-sized budget: anonymous callers run into 429s well before a thousand calls."""
    srv, _ = start_demo_server(rate_limit=RateLimit(burst=60, per_second=1.0), clock=lambda: FIXED_NOW)
    yield srv
    srv.shutdown()
    srv.server_close()


def test_a_thousand_anonymous_requests_add_a_bounded_number_of_rows(limited: DemoServer) -> None:
    conn = http.client.HTTPConnection(urlsplit(limited.url).netloc, timeout=10)
    targets = ["/api/agent/procedures/session.describe", "/api/agent/procedures/devices.query",
               "/api/agent/procedures/devices.disable", "/api/agent/procedures/x.%s"]
    statuses: set[int] = set()
    body = json.dumps({"invocationId": "inv-1", "input": {"deviceIds": ["dev-0003"]}})
    try:
        for n in range(ANONYMOUS_CALLS):
            target = targets[n % len(targets)].replace("%s", str(n))  # distinct unknown routes too
            headers = {"Authorization": f"Bearer guess-{n}", "Content-Type": "application/json"}
            conn.request("POST", target, body=body, headers=headers)
            response = conn.getresponse()
            response.read()
            statuses.add(response.status)
    finally:
        conn.close()
    assert statuses == {401, 429}
    rows = audit_rows(limited)
    # at most: 2 outcomes x 4 operations (session.describe, devices.query, devices.disable, unknown-route),
    # and a second window
    assert len(rows) <= 16, [(r["operation"], r["outcome"], r["attempts"]) for r in rows]
    assert sum(r["attempts"] for r in rows) == ANONYMOUS_CALLS
    assert {r["operation"] for r in rows} <= {"session.describe", "devices.query", "devices.disable",
                                               AnonymousRefusals.UNKNOWN_ROUTE}
    assert all(r["user_id"] is None and r["input"] is None for r in rows)


def test_authenticated_refusals_are_still_audited_one_row_each(client: Client, server: DemoServer) -> None:
    for _ in range(20):
        client.call("devices.disable", {"deviceIds": ["dev-0003"]}, token=VIEWER)
        client.call("devices.disable", {"deviceIds": ["dev-0999"]}, token=OPERATOR)
    rows = audit_rows(server)
    assert len(rows) == 60  # each operator call first asked for the server's approval challenge
    assert all(r["attempts"] == 1 for r in rows)
    assert [r["outcome"] for r in rows] == ["NOT_AUTHORIZED", "CONFIRMATION_REQUIRED", "PRECONDITION_FAILED"] * 20


def test_a_users_rate_limit_refusals_are_counted_in_one_row_not_written_each(limited: DemoServer) -> None:
    client = Client(limited)
    for _ in range(70):
        client.session(token=OPERATOR)
    before = [(r["outcome"], r["attempts"]) for r in audit_rows(limited)]
    for _ in range(30):  # at wire speed: no write each (counted in memory until the flush)
        client.session(token=OPERATOR)
    assert [(r["outcome"], r["attempts"]) for r in limited.store.fetch_all("SELECT * FROM audit ORDER BY id")] == before
    rows = audit_rows(limited)
    assert len(rows) == 61
    assert [(r["outcome"], r["attempts"]) for r in rows if r["outcome"] == "RATE_LIMITED"] == [("RATE_LIMITED", 40)]
    assert {r["user_id"] for r in rows} == {"u-acme-operator"}


def test_a_new_window_starts_a_new_counted_row() -> None:
    seconds = [0.0]
    store = open_seeded_store(":memory:", now=FIXED_NOW)
    audit = AuditLog(monotonic=lambda: seconds[0])
    refused = AuditEntry(at="2026-11-02T10:00:00Z", operation="session.describe", outcome="NOT_AUTHENTICATED",
                         http_status=401, input='{"ignored":true}')

    def anonymous() -> None:
        store.run(lambda tx: audit.write(tx, refused, authenticated=False, known_route=True))

    try:
        for _ in range(5):
            anonymous()
        seconds[0] = AnonymousRefusals.WINDOW_SECONDS - 1
        anonymous()
        seconds[0] = AnonymousRefusals.WINDOW_SECONDS + 1
        for _ in range(3):
            anonymous()
        store.run(audit.flush)
        rows = [dict(r) for r in store.fetch_all("SELECT operation, outcome, attempts, input FROM audit ORDER BY id")]
    finally:
        store.close()
    assert rows == [
        {"operation": "session.describe", "outcome": "NOT_AUTHENTICATED", "attempts": 6, "input": None},
        {"operation": "session.describe", "outcome": "NOT_AUTHENTICATED", "attempts": 3, "input": None},
    ]
