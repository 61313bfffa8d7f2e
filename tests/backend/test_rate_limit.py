"""A per-token rate limit answers RATE_LIMITED with retryAfterMs; other callers are unaffected."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from demo.api import RateLimit, RateLimiter
from demo.backend import DemoServer, start_demo_server

from .helpers import GLOBEX_OPERATOR, OPERATOR, Client, assert_error, audit_rows


@pytest.fixture
def tight() -> Iterator[DemoServer]:
    srv, _ = start_demo_server(rate_limit=RateLimit(burst=3, per_second=0.5))
    yield srv
    srv.shutdown()
    srv.server_close()


def test_burst_then_rate_limited(tight: DemoServer) -> None:
    client = Client(tight)
    for _ in range(3):
        assert client.get("/api/session", token=OPERATOR).status == 200
    reply = client.call("devices.disable", {"deviceIds": ["dev-0003"]}, token=OPERATOR)
    error = assert_error(reply, 429, "RATE_LIMITED")
    assert error["details"]["reason"] == "rate-limit"
    assert 0 < error["details"]["retryAfterMs"] <= 2000
    assert int(reply.headers["Retry-After"]) >= 1
    assert tight.api.store.fetch_all("SELECT status FROM devices WHERE id = 'dev-0003'")[0][0] == "offline"
    assert audit_rows(tight)[-1]["outcome"] == "RATE_LIMITED"
    assert client.get("/api/session", token=GLOBEX_OPERATOR).status == 200  # per token


def test_anonymous_callers_are_limited_too(tight: DemoServer) -> None:
    client = Client(tight)
    for _ in range(3):
        assert_error(client.get("/api/session", token="guess"), 401, "NOT_AUTHENTICATED")
    assert_error(client.get("/api/session", token="guess"), 429, "RATE_LIMITED")


def test_bucket_refills() -> None:
    now = [0.0]
    limiter = RateLimiter(RateLimit(burst=2, per_second=1.0), clock=lambda: now[0])
    assert limiter.take("a") is None and limiter.take("a") is None
    assert limiter.take("a") == 1000
    now[0] = 0.5
    assert limiter.take("a") == 500
    now[0] = 1.5
    assert limiter.take("a") is None
    assert limiter.take("b") is None


def test_invalid_limits_are_rejected() -> None:
    with pytest.raises(ValueError):
        RateLimiter(RateLimit(burst=0))
    with pytest.raises(ValueError):
        RateLimiter(RateLimit(per_second=0))


AGENT = {"X-Agent-Invocation-Id": "inv-1"}


def test_agent_calls_do_not_spend_the_persons_budget(tight: DemoServer) -> None:
    client = Client(tight)
    for _ in range(3):
        assert client.call("devices.query", {}, token=OPERATOR, headers=AGENT).status == 200
    assert_error(client.call("devices.query", {}, token=OPERATOR, headers=AGENT), 429, "RATE_LIMITED")
    assert client.call("devices.query", {}, token=OPERATOR).status == 200  # the person's own button
    assert client.get("/api/session", token=OPERATOR).status == 200


def test_the_persons_calls_do_not_spend_the_agents_budget(tight: DemoServer) -> None:
    client = Client(tight)
    for _ in range(3):
        assert client.get("/api/devices", token=OPERATOR).status == 200
    assert_error(client.get("/api/devices", token=OPERATOR), 429, "RATE_LIMITED")
    assert client.call("devices.query", {}, token=OPERATOR, headers=AGENT).status == 200


def test_an_agent_refused_by_the_rate_limit_is_audited_with_its_invocation(tight: DemoServer) -> None:
    client = Client(tight)
    for n in range(4):
        client.call("devices.query", {}, token=OPERATOR, headers={"X-Agent-Invocation-Id": f"inv-{n}"})
    row = audit_rows(tight)[-1]
    assert (row["outcome"], row["user_id"], row["invocation_id"]) == ("RATE_LIMITED", "u-acme-operator", "inv-3")


def test_an_agent_invocation_header_that_is_not_an_id_still_uses_the_agents_budget(tight: DemoServer) -> None:
    client = Client(tight)
    for _ in range(4):
        client.call("devices.query", {}, token=OPERATOR, headers={"X-Agent-Invocation-Id": "<not an id>"})
    assert client.call("devices.query", {}, token=OPERATOR).status == 200
