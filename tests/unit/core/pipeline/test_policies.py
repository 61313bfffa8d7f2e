"""Policies at discovery and invocation. AS-POLICY-001..004."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from agentsurface import (
    CapabilityFailure,
    Consumer,
    Decision,
    MemoryAuditSink,
    Policy,
    PolicyContext,
    audit,
    authenticated,
    environment,
    has_permission,
    rate_limit,
    tenant_boundary,
)
from agentsurface._core.errors import error

from .helpers import (
    A,
    B,
    DevicesState,
    advance,
    bind_table,
    details_of,
    devices_table,
    make_registry,
    manual,
)

SELECT = "view:devices.table.selectRows"
READ = "view:devices.table.visibleRows"
WEB = Consumer("browser", "webmcp")


class Vote(Policy):
    """A discovery-only policy with a fixed (or computed) vote."""

    def __init__(self, name: str, vote: Any) -> None:
        self.name = name
        self.vote = vote

    def on_discovery(self, ctx: PolicyContext) -> Any:
        return self.vote(ctx) if callable(self.vote) else self.vote


def host_registry(
    host: dict[str, Any], registry_policies: list[Policy], **bind_options: Any
) -> tuple[Any, dict[str, Any], DevicesState]:
    box = {"host": host}
    contract = devices_table()
    registry = make_registry([contract], context=lambda: box["host"], policies=registry_policies)
    state = DevicesState()
    registry.register(bind_table(contract, state, **bind_options))
    return registry, box, state


def ids(registry: Any, consumer: Any = None) -> list[str]:
    return [c.capability_id for c in registry.snapshot(consumer=consumer).capabilities()]


async def select(registry: Any, consumer: Any = None, n: str = "d1") -> Any:
    return await registry.invoke({"capabilityId": SELECT, "input": {"ids": [n]}}, consumer=consumer)


# --------------------------------------------------------------------------- AS-POLICY-001


async def test_AS_POLICY_001_policy_context_exposes_the_injected_clock() -> None:
    seen: list[float] = []

    class Stamp(Policy):
        name = "stamp"

        def on_authorize(self, ctx: PolicyContext) -> None:
            seen.append(ctx.now())

        def on_invoke(self, ctx: PolicyContext) -> None:
            seen.append(ctx.now())

    registry, _box, _state = host_registry({}, [Stamp()])
    start = manual(registry).now()
    assert (await select(registry)).ok
    await advance(registry, 42.5)
    assert (await select(registry, n="d2")).ok
    assert seen == [start, start, start + 42.5, start + 42.5]


async def test_AS_POLICY_001_rate_limit_windows_move_only_with_the_injected_clock() -> None:
    registry, _box, state = host_registry(
        {}, [], select_options={"policies": [rate_limit(limit=1, window=10.0)]}
    )
    assert (await select(registry, A)).ok
    second = await select(registry, A, "d2")
    assert second.code == "RATE_LIMITED"
    assert second.error is not None and second.error.retry == "after-delay"
    assert details_of(second) == {"reason": "rate", "retryAfterMs": 10_000}
    await advance(registry, 4.0)
    assert details_of(await select(registry, A, "d3"))["retryAfterMs"] == 6_000
    await advance(registry, 6.0)
    assert (await select(registry, A, "d4")).ok
    assert [c["ids"] for c in state.select_calls] == [["d1"], ["d4"]]


# --------------------------------------------------------------------------- AS-POLICY-002


def test_AS_POLICY_002_most_restrictive_wins_across_registry_component_capability() -> None:
    registry, _box, _state = host_registry(
        {},
        [Vote("reg", None)],
        policies=[Vote("comp", Decision("disable", "component says later"))],
        select_options={"policies": [Vote("cap", "hide")]},
    )
    snap = registry.snapshot()
    assert snap.find(SELECT) == []  # capability-level hide beats component disable
    (read,) = snap.find(READ)
    assert (read.available, read.unavailable_reason) == (False, "component says later")


@pytest.mark.parametrize(
    ("votes", "expected"),
    [
        ([None, None], ("expose", None)),
        ([Decision("disable", "first"), Decision("disable", "second")], ("disable", "first")),
        ([Decision("disable", "d"), "hide"], ("hide", None)),
        (["hide", Decision("disable", "d")], ("hide", None)),
        ([None, Decision("disable", "only")], ("disable", "only")),
        (["expose", "disable"], ("disable", "disabled by policy")),
    ],
)
def test_AS_POLICY_002_composition_is_order_independent_with_the_first_disable_reason(
    votes: list[Any], expected: tuple[str, str | None]
) -> None:
    registry, _box, _state = host_registry({}, [Vote(f"p{i}", v) for i, v in enumerate(votes)])
    found = registry.snapshot().find(SELECT)
    outcome, reason = expected
    if outcome == "hide":
        assert found == []
        assert registry.snapshot().components == ()  # every capability hidden: no component
    else:
        (descriptor,) = found
        assert descriptor.available is (outcome == "expose")
        assert descriptor.unavailable_reason == reason


async def test_AS_POLICY_002_a_throwing_discovery_policy_fails_closed() -> None:
    def explode(ctx: PolicyContext) -> Any:
        raise RuntimeError("flag service down")

    registry, _box, state = host_registry({}, [Vote("exploding", explode)])
    assert registry.snapshot().components == ()
    result = await select(registry)
    assert result.code == "CAPABILITY_NOT_FOUND"
    assert state.select_calls == []


# --------------------------------------------------------------------------- AS-POLICY-003


async def test_AS_POLICY_003_hidden_for_a_consumer_is_not_found_for_that_consumer() -> None:
    embedded_only = Vote("embedded-only", lambda ctx: None if ctx.consumer.kind == "embedded" else "hide")
    registry, _box, state = host_registry({}, [embedded_only])
    assert SELECT in ids(registry, A)
    assert ids(registry, WEB) == []
    denied = await select(registry, WEB)
    assert denied.code == "CAPABILITY_NOT_FOUND"
    assert denied.error is not None and denied.error.details is None
    # Even with the exact registration id from someone else's snapshot: indistinguishable.
    handle_id = registry.snapshot(consumer=A).components[0].registration_id
    with_id = await registry.invoke(
        {"capabilityId": SELECT, "input": {"ids": ["d1"]}, "registrationId": handle_id}, consumer=WEB
    )
    assert with_id.code == "CAPABILITY_NOT_FOUND"
    assert state.select_calls == []
    assert (await select(registry, A)).ok


async def test_AS_POLICY_003_visibility_is_re_evaluated_at_invocation() -> None:
    flags = {"beta": True}
    registry, _box, state = host_registry({}, [Vote("beta", lambda ctx: None if flags["beta"] else "hide")])
    snap = registry.snapshot()
    assert snap.find(SELECT)
    flags["beta"] = False  # the flag flipped after discovery
    result = await registry.invoke(
        {
            "capabilityId": SELECT,
            "input": {"ids": ["d1"]},
            "registrationId": snap.components[0].registration_id,
        }
    )
    assert result.code == "CAPABILITY_NOT_FOUND"
    assert (await select(registry)).code == "CAPABILITY_NOT_FOUND"
    assert state.select_calls == []


async def test_AS_POLICY_003_hidden_instances_are_not_offered_as_ambiguity() -> None:
    contract = devices_table()
    only_left = Vote("left-only", lambda ctx: None if ctx.instance_id == "left" else "hide")
    registry = make_registry([contract], policies=[only_left])
    state = DevicesState()
    registry.register(bind_table(contract, state, instance_id="left"))
    registry.register(bind_table(contract, state, instance_id="right"))
    result = await select(registry)
    assert result.ok  # the hidden "right" instance does not make the call ambiguous
    assert (
        await registry.invoke({"capabilityId": SELECT, "input": {"ids": ["d1"]}, "instanceId": "right"})
    ).code == ("CAPABILITY_NOT_FOUND")


# --------------------------------------------------------------------------- AS-POLICY-004


async def test_AS_POLICY_004_authenticated_hides_and_refuses_not_authenticated() -> None:
    registry, box, state = host_registry({}, [authenticated()])
    assert ids(registry) == []
    result = await select(registry)
    assert result.code == "NOT_AUTHENTICATED"
    assert result.error is not None and result.error.retry == "no"
    assert result.error.details is None
    assert state.select_calls == []
    box["host"] = {"user": {"id": "u1"}}
    assert SELECT in ids(registry)
    assert (await select(registry)).ok


async def test_AS_POLICY_004_authenticated_uses_a_configurable_key() -> None:
    registry, box, _state = host_registry({"user": {"id": "u"}}, [authenticated(key="session")])
    assert (await select(registry)).code == "NOT_AUTHENTICATED"
    box["host"] = {"session": "s1"}
    assert (await select(registry)).ok


async def test_AS_POLICY_004_has_permission_hides_and_refuses_without_naming_the_permission() -> None:
    def check(host: Mapping[str, Any], permission: str) -> bool:
        return permission in host.get("permissions", [])

    registry, box, _state = host_registry({"permissions": []}, [has_permission("devices:write", check)])
    assert ids(registry) == []
    result = await select(registry)
    assert result.code == "NOT_AUTHORIZED"
    assert details_of(result) == {"origin": "client"}
    assert "devices:write" not in str(result.to_json())
    box["host"] = {"permissions": ["devices:write"]}
    assert (await select(registry)).ok


async def test_AS_POLICY_004_has_permission_with_a_failing_checker_denies() -> None:
    def broken(host: Mapping[str, Any], permission: str) -> bool:
        raise RuntimeError("authz backend down")

    registry, _box, state = host_registry({}, [has_permission("x", broken)])
    assert ids(registry) == []
    assert (await select(registry)).code == "NOT_AUTHORIZED"
    assert state.select_calls == []


async def test_AS_POLICY_004_tenant_boundary_compares_host_and_internal_tenant() -> None:
    policy = tenant_boundary(
        current=lambda host: host.get("tenant"), expected=lambda ctx: ctx.internal.get("tenant")
    )
    registry, box, state = host_registry({"tenant": "acme"}, [policy], internal={"tenant": "acme"})
    assert SELECT in ids(registry)
    assert (await select(registry)).ok
    box["host"] = {"tenant": "globex"}
    assert ids(registry) == []
    refused = await select(registry, n="d2")
    assert refused.code == "NOT_AUTHORIZED" and details_of(refused) == {"origin": "client"}
    box["host"] = {}
    assert ids(registry) == []  # no tenant at all never matches
    assert len(state.select_calls) == 1


async def test_AS_POLICY_004_environment_restricts_to_the_registry_environment() -> None:
    def registry_in(env: str, host: dict[str, Any]) -> Any:
        contract = devices_table()
        registry = make_registry(
            [contract], environment=env, context=lambda: host, policies=[environment(["development", "test"])]
        )
        registry.register(bind_table(contract, DevicesState()))
        return registry

    production = registry_in("production", {"environment": "test"})  # the host has no say
    assert ids(production) == []
    result = await select(production)
    assert result.code == "CAPABILITY_NOT_FOUND"  # indistinguishable from absence
    testing = registry_in("test", {"environment": "production"})
    assert SELECT in ids(testing)
    assert (await select(testing)).ok


async def test_AS_POLICY_004_rate_limit_is_per_consumer_and_capability() -> None:
    registry, _box, _state = host_registry({}, [rate_limit(limit=2, window=60.0)])
    assert (await select(registry, A)).ok
    assert (await select(registry, A, "d2")).ok
    limited = await select(registry, A, "d3")
    assert limited.code == "RATE_LIMITED" and details_of(limited)["reason"] == "rate"
    assert (await select(registry, B)).ok  # another consumer has its own bucket
    assert (await registry.invoke({"capabilityId": READ}, consumer=A)).ok  # and another capability
    with pytest.raises(ValueError):
        rate_limit(limit=0, window=1.0)
    with pytest.raises(ValueError):
        rate_limit(limit=1, window=0)


async def test_AS_POLICY_004_audit_forwards_started_and_settled_with_the_effective_input() -> None:
    sink = MemoryAuditSink()
    registry, _box, _state = host_registry({}, [audit(sink, "full")])
    result = await select(registry, A)
    assert result.ok
    events = sink.events()
    assert [e.type for e in events] == ["invocation-started", "invocation-settled"]
    started, settled = events
    assert started.payload == {"input": {"ids": ["d1"]}}
    assert started.invocation_id == settled.invocation_id == result.invocation_id
    assert started.consumer_id == "adapter-a"
    assert (settled.status, settled.code, settled.capability_id) == ("ok", None, SELECT)
    assert settled.duration_ms is not None
    # A refused call is recorded with its code; metadata level carries no payload.
    sink2 = MemoryAuditSink()
    registry2, _b, _s = host_registry({}, [audit(sink2), rate_limit(limit=1, window=60.0)])
    await select(registry2)
    await select(registry2, n="d2")
    assert [(e.type, e.code) for e in sink2.events()] == [
        ("invocation-started", None),
        ("invocation-settled", None),
    ]
    assert all(e.payload is None for e in sink2.events())
    with pytest.raises(ValueError):
        audit(sink, "everything")


async def test_AS_POLICY_004_audit_records_failures_after_the_input_phase() -> None:
    sink = MemoryAuditSink()

    def boom(value: Any, ctx: Any) -> None:
        raise RuntimeError("kaput")

    registry, _box, _state = host_registry({}, [audit(sink)], select=boom)
    result = await select(registry)
    assert result.code == "EXECUTION_FAILED"
    assert [(e.type, e.status, e.code) for e in sink.events()] == [
        ("invocation-started", None, None),
        ("invocation-settled", "error", "EXECUTION_FAILED"),
    ]


async def test_policy_errors_raised_by_custom_gates_are_relayed() -> None:
    class Quota(Policy):
        name = "quota"

        def on_authorize(self, ctx: PolicyContext) -> None:
            raise CapabilityFailure(
                error("RATE_LIMITED", "Daily quota used up.", reason="rate", retryAfterMs=3_600_000)
            )

    registry, _box, state = host_registry({}, [Quota()])
    result = await select(registry)
    assert result.code == "RATE_LIMITED"
    assert details_of(result) == {"reason": "rate", "retryAfterMs": 3_600_000}
    assert state.select_calls == []
