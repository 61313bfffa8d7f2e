"""A per-token rate limit answers RATE_LIMITED with retryAfterMs; other callers are unaffected."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from demo.server.backend import DemoServer, start_demo_server

from agentsurface.server import RateLimit
from agentsurface.server.ratelimit import RateLimiter

from .helpers import AGENT, FIXED_NOW, GLOBEX_OPERATOR, OPERATOR, VIEWER, Client, assert_error, audit_rows


@pytest.fixture
def tight() -> Iterator[DemoServer]:
    srv, _ = start_demo_server(rate_limit=RateLimit(burst=3, per_second=0.5), clock=lambda: FIXED_NOW)
    yield srv
    srv.shutdown()
    srv.server_close()


def test_burst_then_rate_limited(tight: DemoServer) -> None:
    client = Client(tight)
    for _ in range(3):
        assert client.call("devices.query", {}, token=OPERATOR).status == 200
    reply = client.call("devices.disable", {"deviceIds": ["dev-0003"]}, token=OPERATOR)
    error = assert_error(reply, 429, "RATE_LIMITED")
    assert error["details"]["reason"] == "server-rate-limit"
    assert 0 < error["details"]["retryAfterMs"] <= 2000
    assert int(reply.headers["Retry-After"]) >= 1
    assert tight.store.fetch_all("SELECT status FROM devices WHERE id = 'dev-0003'")[0][0] == "offline"
    assert audit_rows(tight)[-1]["outcome"] == "RATE_LIMITED"
    assert client.call("devices.query", {}, token=GLOBEX_OPERATOR).status == 200  # per user
    # the app's own reads are procedures: they spend the same budget (no second one beside it)
    error = assert_error(client.session(token=OPERATOR), 429, "RATE_LIMITED")
    assert 0 < error["details"]["retryAfterMs"] <= 2000
    assert client.session(token=VIEWER).status == 200


def test_anonymous_callers_are_limited_too(tight: DemoServer) -> None:
    client = Client(tight)
    for _ in range(3):
        assert_error(client.session(token="guess"), 401, "NOT_AUTHENTICATED")
    assert_error(client.session(token="guess"), 429, "RATE_LIMITED")
    assert_error(client.call("devices.query", {}, token="guess"), 429, "RATE_LIMITED")


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
        RateLimit(burst=0)
    with pytest.raises(ValueError):
        RateLimit(per_second=0)


def test_agent_calls_do_not_spend_the_persons_budget(tight: DemoServer) -> None:
    client = Client(tight)
    for _ in range(3):
        assert client.call("devices.query", {}, token=OPERATOR, headers=AGENT).status == 200
    assert_error(client.call("devices.query", {}, token=OPERATOR, headers=AGENT), 429, "RATE_LIMITED")
    assert client.call("devices.query", {}, token=OPERATOR).status == 200  # the person's own button
    assert client.session(token=OPERATOR).status == 200


def test_the_persons_calls_do_not_spend_the_agents_budget(tight: DemoServer) -> None:
    client = Client(tight)
    for _ in range(3):
        assert client.call("devices.query", {}, token=OPERATOR).status == 200
    assert_error(client.call("devices.query", {}, token=OPERATOR), 429, "RATE_LIMITED")
    assert client.call("devices.query", {}, token=OPERATOR, headers=AGENT).status == 200


def test_an_agent_refused_by_the_rate_limit_is_audited_as_the_users_agent(tight: DemoServer) -> None:
    client = Client(tight)
    for n in range(4):
        client.call("devices.query", {}, token=OPERATOR, invocation_id=f"inv-{n}", headers=AGENT)
    row = audit_rows(tight)[-1]
    # refused before the body (and its invocation id) was read
    assert (row["outcome"], row["user_id"], row["channel"]) == ("RATE_LIMITED", "u-acme-operator", "agent")


def test_a_channel_header_other_than_agent_spends_the_persons_budget(tight: DemoServer) -> None:
    client = Client(tight)
    for _ in range(3):
        client.call("devices.query", {}, token=OPERATOR, headers={"X-AgentSurface-Channel": "<not a channel>"})
    assert_error(client.call("devices.query", {}, token=OPERATOR), 429, "RATE_LIMITED")
    assert client.call("devices.query", {}, token=OPERATOR, headers=AGENT).status == 200
