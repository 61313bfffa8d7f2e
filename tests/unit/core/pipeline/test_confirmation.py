"""Confirmation evidence: bound to the exact request, single use, bounded, expiring.

AS-CONFIRM-001..006 (and the confirmation half of AS-IDENT-006, see test_identity).
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from agentsurface import CancelSignal, Limits, MemoryAuditSink, require_confirmation
from agentsurface._core.jsonvalue import canonical_json, digest
from agentsurface._core.pipeline import confirmation as confirmation_module
from agentsurface.lowlevel import ActionContract, ComponentContract

from .helpers import (
    A,
    B,
    DevicesState,
    Events,
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

DISABLE = "domain:devices.disable"


class Destructive:
    """A toolbar with a destructive procedure whose deviceIds are bound to the selection."""

    def __init__(self, **registry_options: Any) -> None:
        self.state = DevicesState()
        self.state.selected = ["d1"]
        self.proc = disable_procedure()
        self.tb = toolbar()
        self.sink = MemoryAuditSink()
        self.executions: list[Any] = []

        def executor(cid: str, value: Any, ctx: Any) -> Any:
            self.executions.append((value, ctx.confirmation))
            return {"disabled": len(value["deviceIds"])}

        self.registry = make_registry([self.tb, self.proc], audit=self.sink, **registry_options, procedure_executor=executor)
        self.handle = self.register()

    def register(self) -> Any:
        return self.registry.register(bind_toolbar(self.tb, self.state, self.proc))

    async def ask(self, consumer: Any = A, **request: Any) -> Any:
        return await self.registry.invoke(
            {"capabilityId": DISABLE, "input": {}, **request}, consumer=consumer
        )

    async def approved_id(self, consumer: Any = A, **request: Any) -> str:
        first = await self.ask(consumer, **request)
        assert first.code == "CONFIRMATION_REQUIRED"
        cid: str = details_of(first)["confirmationId"]
        assert self.registry.confirmations.resolve(cid, approved=True)
        return cid


# --------------------------------------------------------------------------- AS-CONFIRM-001


async def test_AS_CONFIRM_001_binding_changed_after_approval_is_a_mismatch_never_executed() -> None:
    d = Destructive()
    cid = await d.approved_id(invocationId="inv_1")
    d.state.selected = ["d2"]  # the UI moved after the user approved ["d1"]
    retry = await d.ask(invocationId="inv_1", confirmationId=cid)
    assert retry.code == "CONFIRMATION_INVALID"
    assert details_of(retry) == {"reason": "mismatch"}
    assert retry.error is not None and retry.error.retry == "no"
    assert d.executions == []


async def test_AS_CONFIRM_001_agent_input_changed_after_approval_is_a_mismatch() -> None:
    d = Destructive()
    cid = await d.approved_id(input={"reason": "cleanup"})
    swapped = await d.ask(input={"reason": "something else"}, confirmationId=cid)
    assert details_of(swapped) == {"reason": "mismatch"}
    # The approval was not spent by the mismatching attempt: the approved request still runs.
    done = await d.ask(input={"reason": "cleanup"}, confirmationId=cid)
    assert done.ok
    ((value, evidence),) = d.executions
    assert value == {"deviceIds": ["d1"], "reason": "cleanup"}
    assert evidence["id"] == cid and evidence["approvedAt"].endswith("Z")


# --------------------------------------------------------------------------- AS-CONFIRM-002


def test_AS_CONFIRM_002_canonical_json_ignores_key_order_and_normalizes_numbers() -> None:
    assert canonical_json({"b": 1, "a": {"d": [3, 2], "c": None}}) == '{"a":{"c":null,"d":[3,2]},"b":1}'
    assert canonical_json({"x": -0.0}) == canonical_json({"x": 0}) == '{"x":0}'
    assert canonical_json([1.0, 2.5]) == "[1,2.5]"
    assert canonical_json({"é": "ü"}) == '{"é":"ü"}'
    assert digest({"a": 1, "b": 2}) == digest({"b": 2, "a": 1})
    assert digest({"a": [1, 2]}) != digest({"a": [2, 1]})  # array order is significant
    assert digest({"a": 1}).startswith("sha256:") and len(digest({"a": 1})) == 7 + 64
    with pytest.raises(ValueError):
        canonical_json({"n": float("nan")})


async def test_AS_CONFIRM_002_same_values_in_another_key_order_validate() -> None:
    form = ComponentContract(
        type="conf.form",
        description="form",
        actions={
            "submit": ActionContract(
                "submit the draft",
                input={
                    "type": "object",
                    "properties": {"title": {"type": "string"}, "score": {"type": "number"}},
                    "required": ["title", "score"],
                    "additionalProperties": False,
                },
                confirmation="required",
            )
        },
    )
    registry = make_registry([form])
    runs: list[Any] = []
    registry.register(form.bind(actions={"submit": lambda value, ctx: runs.append(value)}))
    first = await registry.invoke(
        {
            "invocationId": "f1",
            "capabilityId": "view:conf.form.submit",
            "input": {"title": "t", "score": -0.0},
        }
    )
    cid = details_of(first)["confirmationId"]
    registry.confirmations.resolve(cid, approved=True)
    retry = await registry.invoke(
        {
            "invocationId": "f1",
            "capabilityId": "view:conf.form.submit",
            "input": {"score": 0, "title": "t"},
            "confirmationId": cid,
        }
    )
    assert retry.ok
    assert runs == [{"score": 0, "title": "t"}]


async def test_AS_CONFIRM_002_matching_is_by_exact_value_never_hash_only(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    d = Destructive()
    # Make every digest collide: only exact-value comparison can still tell requests apart.
    monkeypatch.setattr(confirmation_module, "digest", lambda value: "sha256:collision")
    cid = await d.approved_id()
    d.state.selected = ["d2"]  # same shape and length, different value
    retry = await d.ask(confirmationId=cid)
    assert details_of(retry) == {"reason": "mismatch"}
    assert d.executions == []
    d.state.selected = ["d1"]
    assert (await d.ask(confirmationId=cid)).ok


# --------------------------------------------------------------------------- AS-CONFIRM-003


async def test_AS_CONFIRM_003_evidence_is_single_use() -> None:
    d = Destructive()
    cid = await d.approved_id()
    assert (await d.ask(invocationId="once", confirmationId=cid)).ok
    replay = await d.ask(invocationId="twice", confirmationId=cid)
    assert replay.code == "CONFIRMATION_INVALID"
    assert details_of(replay) == {"reason": "consumed"}
    assert replay.error is not None and replay.error.retry == "no"
    assert len(d.executions) == 1
    types = [e.type for e in d.sink.events()]
    assert types.count("confirmation-consumed") == 1


async def test_AS_CONFIRM_003_concurrent_spends_execute_once() -> None:
    d = Destructive()
    cid = await d.approved_id()
    results = await asyncio.gather(
        d.ask(invocationId="c1", confirmationId=cid), d.ask(invocationId="c2", confirmationId=cid)
    )
    assert sorted(str(r.code) for r in results) == ["CONFIRMATION_INVALID", "None"]
    assert len(d.executions) == 1


# --------------------------------------------------------------------------- AS-CONFIRM-004


async def test_AS_CONFIRM_004_another_consumer_cannot_spend_the_approval() -> None:
    d = Destructive()
    cid = await d.approved_id(A)
    stolen = await d.ask(B, confirmationId=cid)
    assert stolen.code == "CONFIRMATION_INVALID"
    assert details_of(stolen) == {"reason": "mismatch"}
    assert d.executions == []
    assert (await d.ask(A, confirmationId=cid)).ok  # the rightful owner still can


async def test_AS_CONFIRM_004_a_replaced_registration_invalidates_the_approval() -> None:
    d = Destructive(on_duplicate_instance="replace")
    cid = await d.approved_id()
    d.register()  # remount: a new registrationId owns the reference
    retry = await d.ask(confirmationId=cid)
    assert retry.code == "CONFIRMATION_INVALID"
    assert details_of(retry) == {"reason": "mismatch"}
    assert d.executions == []


async def test_AS_CONFIRM_004_approval_does_not_transfer_to_another_capability_or_registry() -> None:
    contract = ComponentContract(
        type="conf.twin",
        description="two confirmed actions",
        actions={
            "wipe": ActionContract("wipe", input={"type": "object"}, confirmation="required"),
            "purge": ActionContract("purge", input={"type": "object"}, confirmation="required"),
        },
    )
    registry = make_registry([contract])
    runs: list[str] = []
    registry.register(
        contract.bind(
            actions={"wipe": lambda v, c: runs.append("wipe"), "purge": lambda v, c: runs.append("purge")}
        )
    )
    first = await registry.invoke({"capabilityId": "view:conf.twin.wipe", "input": {}})
    cid = details_of(first)["confirmationId"]
    registry.confirmations.resolve(cid, approved=True)
    other = await registry.invoke(
        {"capabilityId": "view:conf.twin.purge", "input": {}, "confirmationId": cid}
    )
    assert details_of(other) == {"reason": "mismatch"}

    elsewhere = make_registry([contract])
    elsewhere.register(
        contract.bind(actions={"wipe": lambda v, c: runs.append("x"), "purge": lambda v, c: None})
    )
    foreign = await elsewhere.invoke(
        {"capabilityId": "view:conf.twin.wipe", "input": {}, "confirmationId": cid}
    )
    assert foreign.code == "CONFIRMATION_INVALID" and details_of(foreign) == {"reason": "mismatch"}
    assert runs == []


async def test_AS_CONFIRM_004_staleness_beats_confirmation() -> None:
    d = Destructive()
    cid = await d.approved_id()
    d.handle.close()
    result = await d.ask(confirmationId=cid)
    assert result.code == "COMPONENT_UNMOUNTED"
    assert d.executions == []


# --------------------------------------------------------------------------- AS-CONFIRM-005


async def test_AS_CONFIRM_005_pending_store_is_bounded_and_overflow_creates_nothing() -> None:
    contract = devices_table(confirmation="required")
    registry = make_registry([contract], limits=Limits(max_pending_confirmations=2))
    events = Events(registry)
    registry.register(bind_table(contract, DevicesState()))

    async def ask(n: int) -> Any:
        return await registry.invoke(
            {"capabilityId": "view:devices.table.selectRows", "input": {"ids": [f"d{n}"]}}
        )

    assert (await ask(1)).code == "CONFIRMATION_REQUIRED"
    assert (await ask(2)).code == "CONFIRMATION_REQUIRED"
    third = await ask(3)
    assert third.code == "RATE_LIMITED"
    assert details_of(third)["reason"] == "queue-full"
    assert isinstance(details_of(third)["retryAfterMs"], int)
    assert len(registry.confirmations.pending()) == 2
    assert len(events.of("confirmation-requested")) == 2
    # Re-requesting an existing pending is not an overflow.
    assert (await ask(1)).code == "CONFIRMATION_REQUIRED"
    assert len(registry.confirmations.pending()) == 2
    # Resolving one frees a place.
    registry.confirmations.resolve(registry.confirmations.pending()[0].confirmation_id, approved=False)
    assert (await ask(3)).code == "CONFIRMATION_REQUIRED"


# --------------------------------------------------------------------------- AS-CONFIRM-006


async def test_AS_CONFIRM_006_pending_re_request_returns_the_same_confirmation() -> None:
    d = Destructive()
    events = Events(d.registry)
    first = await d.ask(invocationId="a1")
    again = await d.ask(invocationId="a2")
    cid = details_of(first)["confirmationId"]
    assert details_of(again)["confirmationId"] == cid
    assert details_of(again)["expiresAt"] == details_of(first)["expiresAt"]
    assert len(d.registry.confirmations.pending()) == 1
    assert len(events.of("confirmation-requested")) == 1
    # Presenting the still-pending evidence is the same protocol step, not a failure.
    early = await d.ask(confirmationId=cid)
    assert early.code == "CONFIRMATION_REQUIRED" and details_of(early)["confirmationId"] == cid
    assert d.executions == []


async def test_AS_CONFIRM_006_denial_is_final_for_that_evidence() -> None:
    d = Destructive()
    first = await d.ask()
    cid = details_of(first)["confirmationId"]
    assert d.registry.confirmations.resolve(cid, approved=False, reason="user declined")
    assert not d.registry.confirmations.resolve(cid, approved=True)  # no flipping afterwards
    denied = await d.ask(confirmationId=cid)
    assert denied.code == "CONFIRMATION_INVALID"
    assert details_of(denied) == {"reason": "denied", "personSaid": "user declined"}  # their words
    assert denied.error is not None and denied.error.retry == "no"
    assert "denied" in denied.error.message.lower()
    assert d.executions == []


async def test_AS_CONFIRM_006_expiry_restarts_the_cycle() -> None:
    d = Destructive()
    events = Events(d.registry)
    first = await d.ask()
    cid = details_of(first)["confirmationId"]
    await advance(d.registry, 119.999)
    assert [e["outcome"] for e in events.of("confirmation-resolved")] == []
    await advance(d.registry, 0.001)  # default TTL 120 s, fired by the clock's timer
    assert [e["outcome"] for e in events.of("confirmation-resolved")] == ["expired"]
    assert d.registry.confirmations.pending() == []
    assert not d.registry.confirmations.resolve(cid, approved=True)  # too late to approve
    late = await d.ask(confirmationId=cid)
    assert late.code == "CONFIRMATION_INVALID"
    assert details_of(late) == {"reason": "expired"}
    assert late.error is not None and late.error.retry == "with-confirmation"
    fresh = await d.ask()
    assert fresh.code == "CONFIRMATION_REQUIRED"
    assert details_of(fresh)["confirmationId"] != cid
    assert d.executions == []


async def test_AS_CONFIRM_006_approved_but_unused_evidence_still_expires() -> None:
    d = Destructive()
    cid = await d.approved_id()
    await advance(d.registry, 121.0)
    # Approval does not extend the record's lifetime (the evidence is time-bound).
    result = await d.ask(confirmationId=cid)
    assert result.code == "CONFIRMATION_INVALID", "approved evidence outlived its TTL"
    assert details_of(result) == {"reason": "expired"}
    assert result.error is not None and result.error.retry == "with-confirmation"
    assert d.executions == []


async def test_AS_CONFIRM_006_wait_for_resolves_on_approval_denial_expiry_and_cancels() -> None:
    d = Destructive()
    controller = d.registry.confirmations
    ids = []
    for n in range(4):
        d.state.selected = [f"d{n}"]
        ids.append(details_of(await d.ask())["confirmationId"])
    approved = asyncio.ensure_future(controller.wait_for(ids[0]))
    denied = asyncio.ensure_future(controller.wait_for(ids[1]))
    expired = asyncio.ensure_future(controller.wait_for(ids[2]))
    signal = CancelSignal()
    abandoned = asyncio.ensure_future(controller.wait_for(ids[3], signal=signal))
    await spin()
    controller.resolve(ids[0], approved=True)
    controller.resolve(ids[1], approved=False)
    signal.abort()
    await spin()
    assert await approved == "approved"
    assert await denied == "denied"
    assert abandoned.cancelled()
    await advance(d.registry, 120.0)
    assert await expired == "expired"
    assert await controller.wait_for("cnf_unknown") == "expired"


async def test_AS_CONFIRM_006_host_ui_subscription_sees_the_pending_set() -> None:
    d = Destructive()
    seen: list[list[str]] = []
    d.registry.confirmations.subscribe(lambda pending: seen.append([p.confirmation_id for p in pending]))
    cid = details_of(await d.ask())["confirmationId"]
    d.registry.confirmations.resolve(cid, approved=True)
    assert seen == [[cid], []]
    (pending_json,) = [p for p in [d.registry.confirmations.get(cid)] if p is not None]
    wire = pending_json.to_json()
    assert set(wire) == {
        "confirmationId",
        "capabilityId",
        "registrationId",
        "consumerKey",
        "effect",
        "summary",
        "input",
        "requestedAt",
        "expiresAt",
    }
    assert wire["input"] == {"deviceIds": ["d1"]}


async def test_confirmation_audit_trail() -> None:
    d = Destructive()
    cid = await d.approved_id()
    assert (await d.ask(confirmationId=cid)).ok
    second = details_of(await d.ask(input={"reason": "x"}))["confirmationId"]
    d.registry.confirmations.resolve(second, approved=False)
    third = details_of(await d.ask(input={"reason": "y"}))["confirmationId"]
    await advance(d.registry, 120.0)
    trail = [(e.type, e.capability_id) for e in d.sink.events() if e.type.startswith("confirmation-")]
    assert [t for t, _ in trail] == [
        "confirmation-requested",
        "confirmation-approved",
        "confirmation-consumed",
        "confirmation-requested",
        "confirmation-denied",
        "confirmation-requested",
        "confirmation-expired",
    ]
    assert {c for _, c in trail} == {DISABLE}
    assert third != second


async def test_optional_confirmation_does_not_gate_execution() -> None:
    proc = disable_procedure(effect="server-mutation")  # default confirmation: optional
    assert proc.confirmation == "optional"
    tb = toolbar()
    runs: list[Any] = []
    registry = make_registry([tb, proc], procedure_executor=lambda cid, value, ctx: runs.append(value))
    state = DevicesState()
    state.selected = ["d1"]
    registry.register(bind_toolbar(tb, state, proc))
    assert (await registry.invoke({"capabilityId": DISABLE, "input": {}})).ok
    assert registry.confirmations.pending() == []


async def test_require_confirmation_policy_escalates_conditionally_with_a_custom_summary() -> None:
    contract = devices_table()
    registry = make_registry([contract])
    state = DevicesState()

    def many(value: Any) -> int:
        return len(value["ids"])

    policy = require_confirmation(
        when=lambda ctx: many(ctx.effective_input) > 1,
        summary=lambda value: f"Select {many(value)} devices?",
    )
    registry.register(bind_table(contract, state, select_options={"policies": [policy]}))
    single = await registry.invoke(
        {"capabilityId": "view:devices.table.selectRows", "input": {"ids": ["d1"]}}
    )
    assert single.ok
    multi = await registry.invoke(
        {"capabilityId": "view:devices.table.selectRows", "input": {"ids": ["d1", "d2"]}}
    )
    assert multi.code == "CONFIRMATION_REQUIRED"
    assert details_of(multi)["summary"] == "Select 2 devices?"
    assert details_of(multi)["effect"] == "local-state"
    assert state.select_calls == [{"ids": ["d1"]}]


async def test_observations_are_never_confirmed() -> None:
    contract = devices_table()
    registry = make_registry([contract], policies=[require_confirmation()])
    state = DevicesState()
    registry.register(bind_table(contract, state))
    assert (await registry.invoke({"capabilityId": "view:devices.table.visibleRows"})).ok
    gated = await registry.invoke({"capabilityId": "view:devices.table.selectRows", "input": {"ids": ["d1"]}})
    assert gated.code == "CONFIRMATION_REQUIRED"


def test_a_late_approval_answers_expired_not_mismatch() -> None:
    """Issue 43.7: evidence presented long after its record was forgotten (the store keeps
    settled records one TTL past expiry) is ``expired``, as it was, not ``mismatch``."""
    from agentsurface import AgentComponent, action
    from agentsurface.testing import assert_fails_with, create_test_surface

    class Wiper(AgentComponent, type="late.wiper", description="Wipes"):
        @action("Wipe everything", confirmation="required")
        def wipe(self) -> int:
            return 1

    surface = create_test_surface(contracts=[Wiper])
    surface.mount(Wiper())
    first = surface.call("view:late.wiper.wipe")
    cid = first.error.details["confirmationId"] if first.error else ""
    surface.confirmations.approve()
    surface.clock.advance(600)
    late = surface.call("view:late.wiper.wipe", confirmation_id=cid)
    assert_fails_with(late, "CONFIRMATION_INVALID")
    assert late.error is not None and late.error.details["reason"] == "expired"
    assert late.error.retry == "with-confirmation"
    # a pending one the person never answered, also forgotten: expired too
    second = surface.call("view:late.wiper.wipe")
    cid2 = second.error.details["confirmationId"] if second.error else ""
    surface.clock.advance(600)
    assert surface.call("view:late.wiper.wipe", confirmation_id=cid2).error.details["reason"] == "expired"
    # an id the page never minted stays a mismatch
    made_up = surface.call("view:late.wiper.wipe", confirmation_id="made-up")
    assert made_up.error is not None and made_up.error.details["reason"] == "mismatch"
