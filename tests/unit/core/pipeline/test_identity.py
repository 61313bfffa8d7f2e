"""Invocation identity: consumer-scoped, request-bound dedupe with a bounded window.

AS-IDENT-001..006, AS-BOUND-002.
"""

from __future__ import annotations

import asyncio
from typing import Any

from agentsurface import Limits
from agentsurface.lowlevel import ActionContract, ComponentContract, ObservationContract

from .helpers import (
    A,
    B,
    DevicesState,
    Events,
    Gate,
    advance,
    bind_table,
    bind_toolbar,
    details_of,
    devices_table,
    disable_procedure,
    make_registry,
    spin,
    toolbar,
)

BUMP_INPUT = {
    "type": "object",
    "properties": {"by": {"type": "number"}},
    "required": ["by"],
    "additionalProperties": False,
}
COUNT_OUTPUT = {"type": "object", "properties": {"count": {"type": "number"}}, "required": ["count"]}


class Counter:
    def __init__(self, *, gated: bool = True) -> None:
        self.executions = 0
        self.gate = Gate()
        self.gated = gated
        self.contract = ComponentContract(
            type="conf.counter",
            description="counts executions",
            observations={"peek": ObservationContract("the count", output=COUNT_OUTPUT)},
            actions={"bump": ActionContract("bump the counter", input=BUMP_INPUT, output=COUNT_OUTPUT)},
        )

    def binding(self) -> Any:
        async def bump(value: Any, ctx: Any) -> Any:
            self.executions += 1
            if self.gated:
                await self.gate.run()
            return {"count": self.executions * value["by"]}

        return self.contract.bind(
            observations={"peek": lambda ctx: {"count": self.executions}}, actions={"bump": bump}
        )


def counter_registry(*, gated: bool = True, **options: Any) -> tuple[Any, Counter]:
    counter = Counter(gated=gated)
    registry = make_registry([counter.contract], **options)
    registry.register(counter.binding())
    return registry, counter


BUMP = {"invocationId": "call_1", "capabilityId": "view:conf.counter.bump", "input": {"by": 10}}


async def test_AS_IDENT_001_duplicate_call_joins_in_flight_and_replays_terminal() -> None:
    registry, counter = counter_registry()
    events = Events(registry)
    first = asyncio.ensure_future(registry.invoke(BUMP, consumer=A))
    second = asyncio.ensure_future(registry.invoke(dict(BUMP), consumer=A))
    await spin()
    assert counter.executions == 1
    counter.gate.release_all()
    r1, r2 = await asyncio.gather(first, second)
    assert r1 == r2
    assert r1.ok and r1.output == {"count": 10}
    assert counter.executions == 1
    # One pipeline ran: one started/settled pair for the joined pair.
    assert events.types.count("invocation-started") == 1
    assert events.types.count("invocation-settled") == 1

    replay = await registry.invoke(BUMP, consumer=A)
    assert replay == r1
    assert counter.executions == 1
    assert events.types.count("invocation-started") == 1  # the cache answers without a pipeline


async def test_AS_IDENT_001_a_callers_fresh_id_is_digested_only_when_the_id_comes_again(monkeypatch: Any) -> None:
    """An id no call holds is admitted with its request's digest deferred (over a private copy
    of the input): a call alone is never digested; a second caller with the id, while the first
    runs or after, gets it digested and compared, so joining, replaying and conflicting are as
    before, whatever the first caller did to its input objects since."""
    import agentsurface._core.pipeline.dedupe as dedupe
    import agentsurface._core.pipeline.identity as identity

    digested: list[Any] = []

    def counted(value: Any) -> str:
        digested.append(value)
        return real_digest(value)

    real_digest = dedupe.digest
    monkeypatch.setattr(dedupe, "digest", counted)
    monkeypatch.setattr(identity, "digest", counted)
    registry, counter = counter_registry()
    sent: dict[str, Any] = {"by": 10}
    first = asyncio.ensure_future(registry.invoke({**BUMP, "input": sent}, consumer=A))
    await spin()
    assert counter.executions == 1 and digested == []
    sent["by"] = 99  # the caller reuses its dict while its call runs
    conflicting = await registry.invoke({**BUMP, "input": {"by": 99}}, consumer=A)
    assert conflicting.code == "INVOCATION_CONFLICT" and len(digested) == 2  # the deferred one, then this
    joining = asyncio.ensure_future(registry.invoke({**BUMP, "input": {"by": 10.0}}, consumer=A))
    await spin()
    counter.gate.release_all()
    result, joined = await asyncio.gather(first, joining)
    assert result.ok and result.output == {"count": 10} and joined == result and counter.executions == 1
    assert (await registry.invoke({**BUMP, "input": {"by": 10}}, consumer=A)) == result
    # Alone, an id is never digested: its call ran, and its small input waits in the cache.
    digested.clear()
    alone = {**BUMP, "invocationId": "call_2", "input": {"by": 1}}
    running = asyncio.ensure_future(registry.invoke(alone, consumer=A))
    await spin()
    counter.gate.release_all()
    assert (await running).ok and digested == []
    assert (await registry.invoke({**alone, "input": {"by": 2}}, consumer=A)).code == "INVOCATION_CONFLICT"
    assert counter.executions == 2


async def test_AS_IDENT_001_key_order_of_the_input_does_not_change_the_request() -> None:
    registry, counter = counter_registry(gated=False)
    request = {
        "invocationId": "k1",
        "capabilityId": "view:conf.counter.bump",
        "input": {"by": 2},
        "instanceId": "default",
    }
    first = await registry.invoke(request, consumer=A)
    reordered = {"instanceId": "default", "input": {"by": 2.0}, "capabilityId": request["capabilityId"]}
    reordered["invocationId"] = "k1"
    again = await registry.invoke(reordered, consumer=A)
    assert again == first
    assert counter.executions == 1


async def test_AS_IDENT_002_same_id_different_input_conflicts_and_leaves_the_record() -> None:
    registry, counter = counter_registry(gated=False)
    original = await registry.invoke(BUMP, consumer=A)
    assert original.ok
    conflict = await registry.invoke({**BUMP, "input": {"by": 99}}, consumer=A)
    assert conflict.code == "INVOCATION_CONFLICT"
    assert conflict.error.retry == "with-changes"
    assert details_of(conflict) == {"reason": "id-reused-with-different-request"}
    assert "99" not in str(conflict.to_json()) and "10" not in str(conflict.error.to_json())
    assert counter.executions == 1
    # Not cached: the conflict repeats, and the original record still replays.
    assert (await registry.invoke({**BUMP, "input": {"by": 99}}, consumer=A)).code == "INVOCATION_CONFLICT"
    assert await registry.invoke(BUMP, consumer=A) == original
    assert counter.executions == 1


async def test_AS_IDENT_002_conflicts_fail_closed_against_in_flight_records() -> None:
    registry, counter = counter_registry()
    pending = asyncio.ensure_future(registry.invoke({**BUMP, "invocationId": "call_y"}, consumer=A))
    await spin()
    conflict = await registry.invoke({**BUMP, "invocationId": "call_y", "input": {"by": 2}}, consumer=A)
    assert conflict.code == "INVOCATION_CONFLICT"
    counter.gate.release_all()
    assert (await pending).ok
    assert counter.executions == 1


async def test_AS_IDENT_002_other_request_fields_are_part_of_the_fingerprint() -> None:
    registry, counter = counter_registry(gated=False)
    assert (await registry.invoke(BUMP, consumer=A)).ok
    for changed in (
        {"instanceId": "default"},
        {"registrationId": "reg_x"},
        {"surfaceVersion": "0"},
        {"confirmationId": "cnf_x"},
    ):
        result = await registry.invoke({**BUMP, **changed}, consumer=A)
        assert result.code == "INVOCATION_CONFLICT", changed
    assert counter.executions == 1


async def test_AS_IDENT_003_same_id_different_capability_conflicts() -> None:
    registry, counter = counter_registry(gated=False)
    assert (await registry.invoke(BUMP, consumer=A)).ok
    conflict = await registry.invoke(
        {"invocationId": "call_1", "capabilityId": "view:conf.counter.peek"}, consumer=A
    )
    assert conflict.code == "INVOCATION_CONFLICT"
    assert conflict.capability_id == "view:conf.counter.peek"
    assert counter.executions == 1


async def test_AS_IDENT_004_consumers_are_independent_id_namespaces() -> None:
    contract = devices_table()
    registry = make_registry([contract])
    state = DevicesState()
    registry.register(bind_table(contract, state))
    first = await registry.invoke(
        {
            "invocationId": "toolcall_1",
            "capabilityId": "view:devices.table.selectRows",
            "input": {"ids": ["d1"]},
        },
        consumer=A,
    )
    second = await registry.invoke(
        {
            "invocationId": "toolcall_1",
            "capabilityId": "view:devices.table.selectRows",
            "input": {"ids": ["d2"]},
        },
        consumer=B,
    )
    anonymous = await registry.invoke(
        {
            "invocationId": "toolcall_1",
            "capabilityId": "view:devices.table.selectRows",
            "input": {"ids": ["d3"]},
        }
    )
    assert first.ok and second.ok and anonymous.ok
    assert state.select_calls == [{"ids": ["d1"]}, {"ids": ["d2"]}, {"ids": ["d3"]}]
    # Each consumer's own record replays for that consumer only.
    again_b = await registry.invoke(
        {
            "invocationId": "toolcall_1",
            "capabilityId": "view:devices.table.selectRows",
            "input": {"ids": ["d2"]},
        },
        consumer=B,
    )
    assert again_b == second and len(state.select_calls) == 3


async def test_AS_IDENT_005_expired_key_is_a_new_attempt_under_the_manual_clock() -> None:
    registry, counter = counter_registry(gated=False, limits=Limits(dedupe_cache_ttl=1.0))
    assert (await registry.invoke(BUMP, consumer=A)).ok
    await advance(registry, 0.5)
    assert (await registry.invoke(BUMP, consumer=A)).ok
    assert counter.executions == 1  # inside the window: cached
    await advance(registry, 0.501)
    fresh = await registry.invoke(BUMP, consumer=A)
    assert fresh.ok and fresh.output == {"count": 20}
    assert counter.executions == 2
    # ...and an expired id may now carry a different request without conflict.
    await advance(registry, 1.0)
    other = await registry.invoke({**BUMP, "input": {"by": 1}}, consumer=A)
    assert other.ok and counter.executions == 3


async def test_AS_IDENT_006_confirmation_retry_executes_once_and_protocol_steps_are_not_cached() -> None:
    state = DevicesState()
    state.selected = ["d1"]
    proc = disable_procedure()  # destructive: confirmation required
    tb = toolbar()
    executions: list[Any] = []

    def executor(cid: str, value: Any, ctx: Any) -> Any:
        executions.append(value)
        return {"disabled": 1}

    registry = make_registry([tb, proc], procedure_executor=executor)
    registry.register(bind_toolbar(tb, state, proc))
    request = {"invocationId": "call_c", "capabilityId": "domain:devices.disable", "input": {}}

    first = await registry.invoke(request, consumer=A)
    assert first.code == "CONFIRMATION_REQUIRED"
    cid = details_of(first)["confirmationId"]
    # Not cached as terminal: asking again re-runs the pipeline and returns the same pending id.
    again = await registry.invoke(request, consumer=A)
    assert again.code == "CONFIRMATION_REQUIRED" and details_of(again)["confirmationId"] == cid

    registry.confirmations.resolve(cid, approved=True)
    approved = await registry.invoke({**request, "confirmationId": cid}, consumer=A)
    assert approved.ok and len(executions) == 1
    replay = await registry.invoke({**request, "confirmationId": cid}, consumer=A)
    assert replay == approved and len(executions) == 1  # cached terminal, no second execution
    stolen = await registry.invoke({**request, "invocationId": "call_c2", "confirmationId": cid}, consumer=A)
    assert stolen.code == "CONFIRMATION_INVALID"
    assert details_of(stolen) == {"reason": "consumed"}
    assert len(executions) == 1


async def test_AS_IDENT_006_rate_limited_is_never_cached() -> None:
    gate = Gate()
    contract = ComponentContract(
        type="conf.slow",
        description="slow",
        actions={"go": ActionContract("go", input={"type": "object"})},
    )
    registry = make_registry([contract], limits=Limits(action_queue_depth=0))

    async def go(value: Any, ctx: Any) -> None:
        await gate.run()

    registry.register(contract.bind(actions={"go": go}))
    running = asyncio.ensure_future(registry.invoke({"capabilityId": "view:conf.slow.go", "input": {}}))
    await spin()
    limited = await registry.invoke({"invocationId": "r1", "capabilityId": "view:conf.slow.go", "input": {}})
    assert limited.code == "RATE_LIMITED"
    gate.release_all()
    assert (await running).ok
    # The same id retried after the delay executes: RATE_LIMITED was not stored as terminal.
    retried = asyncio.ensure_future(
        registry.invoke({"invocationId": "r1", "capabilityId": "view:conf.slow.go", "input": {}})
    )
    await spin()
    gate.release_all()
    assert (await retried).ok
    assert gate.entered == 2


async def test_AS_IDENT_006_terminal_errors_are_cached() -> None:
    contract = devices_table()
    registry = make_registry([contract])
    state = DevicesState()
    registry.register(bind_table(contract, state))
    bad = {"invocationId": "bad-1", "capabilityId": "view:devices.table.selectRows", "input": {"ids": []}}
    first = await registry.invoke(bad)
    assert first.code == "INVALID_INPUT"
    assert await registry.invoke(bad) == first
    assert len(registry._invoker.dedupe) == 1


# --------------------------------------------------------------------------- AS-BOUND-002


async def test_AS_BOUND_002_dedupe_evicts_oldest_terminal_first_at_the_size_cap() -> None:
    registry, counter = counter_registry(gated=False, limits=Limits(dedupe_cache_size=2))

    async def bump(call_id: str) -> None:
        assert (await registry.invoke({**BUMP, "invocationId": call_id}, consumer=A)).ok

    await bump("i1")
    await bump("i2")
    await bump("i3")  # evicts i1
    assert counter.executions == 3
    assert len(registry._invoker.dedupe) == 2
    await bump("i1")  # a new attempt
    assert counter.executions == 4
    await bump("i3")  # still cached
    assert counter.executions == 4


async def test_AS_BOUND_002_replay_refreshes_recency_lru() -> None:
    registry, counter = counter_registry(gated=False, limits=Limits(dedupe_cache_size=2))
    for call_id in ("i1", "i2", "i1", "i3"):  # replaying i1 makes i2 the oldest
        assert (await registry.invoke({**BUMP, "invocationId": call_id}, consumer=A)).ok
    assert counter.executions == 3
    await registry.invoke({**BUMP, "invocationId": "i1"}, consumer=A)
    assert counter.executions == 3  # i1 survived
    await registry.invoke({**BUMP, "invocationId": "i2"}, consumer=A)
    assert counter.executions == 4  # i2 was evicted


async def test_AS_BOUND_002_ttl_eviction_is_deterministic() -> None:
    registry, counter = counter_registry(gated=False, limits=Limits(dedupe_cache_ttl=10.0))
    await registry.invoke({**BUMP, "invocationId": "old"}, consumer=A)
    await advance(registry, 6)
    await registry.invoke({**BUMP, "invocationId": "young"}, consumer=A)
    await advance(registry, 4)  # "old" is exactly 10 s old: expired; "young" is 4 s old
    await registry.invoke({**BUMP, "invocationId": "young"}, consumer=A)
    assert counter.executions == 2
    await registry.invoke({**BUMP, "invocationId": "old"}, consumer=A)
    assert counter.executions == 3


async def test_AS_IDENT_001_a_minted_id_replays_for_the_same_request_whatever_happened_to_the_input() -> None:
    """A call without an id gets one minted; a caller retrying with it gets the cached result,
    and with another request a conflict, even after the caller and the handler changed the
    objects of the first call's input (the request is kept as it arrived)."""
    registry, counter = counter_registry(gated=False)
    first_input: dict[str, Any] = {"by": 3}
    contract = counter.contract
    seen: list[Any] = []

    def bump(value: Any, ctx: Any) -> Any:
        counter.executions += 1
        seen.append(value)
        value["by"] = 1000  # a handler that scribbles on what it got
        return {"count": counter.executions}

    registry.register(
        contract.bind(instance_id="mutable", observations={"peek": lambda ctx: {"count": 0}}, actions={"bump": bump})
    )
    request = {"capabilityId": "view:conf.counter.bump", "instanceId": "mutable", "input": first_input}
    first = await registry.invoke(request, consumer=A)
    assert first.ok and first.invocation_id.startswith("inv_")
    first_input["by"] = 4  # the caller reuses its dict
    assert counter.executions == 1 and seen[0] is not first_input
    retry = {
        "capabilityId": "view:conf.counter.bump",
        "instanceId": "mutable",
        "input": {"by": 3.0},
        "invocationId": first.invocation_id,
    }
    assert await registry.invoke(retry, consumer=A) == first
    assert counter.executions == 1
    changed = await registry.invoke({**retry, "input": {"by": 4}}, consumer=A)
    assert changed.code == "INVOCATION_CONFLICT"
    # Another consumer's call with that id is its own (and runs).
    assert (await registry.invoke(retry, consumer=B)).ok
    assert counter.executions == 2


async def test_AS_IDENT_001_a_minted_id_replays_for_a_null_or_absent_input() -> None:
    """A null input is no input to the fingerprint, on the minted path as on the careful one:
    a retry with the minted id and the same (null or absent) input replays, it does not conflict."""
    registry, _counter = counter_registry(gated=False)
    for sent in ({"input": None}, {}):
        request = {"capabilityId": "view:conf.counter.peek", **sent}
        first = await registry.invoke(request, consumer=A)
        assert first.ok and first.invocation_id.startswith("inv_")
        for again in ({"input": None}, {}):
            retry = {"capabilityId": "view:conf.counter.peek", "invocationId": first.invocation_id, **again}
            assert await registry.invoke(retry, consumer=A) == first
    assert (await registry.invoke({**BUMP, "invocationId": None}, consumer=A)).ok


async def test_AS_BOUND_002_a_cached_result_never_keeps_a_large_input_for_its_fingerprint() -> None:
    """A minted id's fingerprint is digested lazily over a copy of the input; a large input
    (or one refused before it was sized) is digested when the call settles, so 200 cached
    results cannot pin 200 large inputs."""
    from agentsurface._core.pipeline.dedupe import LazyFingerprint

    registry, _counter = counter_registry(gated=False)
    small = await registry.invoke({"capabilityId": "view:conf.counter.bump", "input": {"by": 1}}, consumer=A)
    large = await registry.invoke(
        {"capabilityId": "view:conf.counter.bump", "input": {"by": 1, "pad": "x" * 10_000}}, consumer=A
    )
    absent = await registry.invoke(
        {"capabilityId": "view:conf.nothing.here", "input": {"pad": "y" * 10_000}}, consumer=A
    )
    assert small.ok and large.code == "INVALID_INPUT" and absent.code == "CAPABILITY_NOT_FOUND"
    kept = {key.split(" ")[-1]: record.fingerprint for key, record in registry._pipeline.dedupe._terminal.items()}
    assert isinstance(kept[small.invocation_id], LazyFingerprint) and kept[small.invocation_id]._copied
    for refused in (large, absent):
        assert refused.invocation_id in kept  # terminal errors are cached too
        fingerprint = kept[refused.invocation_id]
        assert isinstance(fingerprint, LazyFingerprint)
        assert fingerprint._request is None and fingerprint._copied is None  # input let go
    # The large one still replays, and conflicts on another request, through its digest.
    retry = {"capabilityId": "view:conf.counter.bump", "input": {"by": 1, "pad": "x" * 10_000}}
    assert await registry.invoke({**retry, "invocationId": large.invocation_id}, consumer=A) == large
    changed = {**retry, "input": {"by": 2, "pad": "x"}, "invocationId": large.invocation_id}
    assert (await registry.invoke(changed, consumer=A)).code == "INVOCATION_CONFLICT"
