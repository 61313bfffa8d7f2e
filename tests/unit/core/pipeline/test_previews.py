"""Previews and stale writes (issue 39, item 3): a confirmed call's preview is shown with its
request and bound to its approval; if the state it was computed from changes before the call
applies (at the person's Approve, when the call returns with the approval, or while it waits
for its turn), the call is refused as stale and nothing applies."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import itertools
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from agentsurface import (
    AgentComponent,
    CapabilityFailure,
    Change,
    PendingConfirmation,
    Preview,
    action,
    error,
    require_confirmation,
)
from agentsurface._core.pipeline.confirmation import request_material
from agentsurface._core.preview import MAX_PREVIEW_BYTES, PREVIEW_ROWS_KEPT, PreviewRefused, make_preview
from agentsurface.testing import create_test_surface
from agentsurface.testing.harness import TestSurface

from .helpers import DevicesState, bind_toolbar, details_of, disable_procedure, make_registry, spin, toolbar

DISABLE = "view:fleet.table.disable"


class Fleet(AgentComponent, type="fleet.table", description="The devices"):
    """Devices with a status; ``disable`` previews status before → after."""

    def __init__(self) -> None:
        self.status = {"d1": "online", "d2": "offline", "d3": "online"}
        self.applied: list[list[str]] = []
        self.preview_calls = 0
        self.preview_override: Callable[[list[str]], Any] | None = None
        self.gate: asyncio.Event | None = None

    @action("Disable devices", confirmation="required")
    def disable(self, ids: list[str]) -> int:
        self.applied.append(list(ids))
        for i in ids:
            self.status[i] = "disabled"
        return len(ids)

    @disable.preview
    def what_disable_changes(self, ids: list[str]) -> Any:
        self.preview_calls += 1
        if self.preview_override is not None:
            return self.preview_override(ids)
        return [Change(i, "status", self.status[i], "disabled") for i in ids]

    @action("Hold the queue until released")
    async def hold(self) -> None:
        assert self.gate is not None
        await self.gate.wait()


@pytest.fixture
def fleet() -> Fleet:
    return Fleet()


@pytest.fixture
def surface(fleet: Fleet) -> TestSurface:
    surface = create_test_surface(contracts=[Fleet])
    surface.mount(fleet)
    return surface


async def ask(surface: TestSurface, ids: list[str], **options: Any) -> Any:
    return await surface.invoke(DISABLE, {"ids": ids}, **options)


async def pending_id(surface: TestSurface, ids: list[str], invocation_id: str = "inv-1") -> str:
    first = await ask(surface, ids, invocation_id=invocation_id)
    assert first.code == "CONFIRMATION_REQUIRED", first
    cid = details_of(first)["confirmationId"]
    assert isinstance(cid, str)
    return cid


def only_pending(surface: TestSurface) -> PendingConfirmation:
    (pending,) = surface.confirmations.pending()
    return pending


def audited(surface: TestSurface, type_: str) -> list[Any]:
    return [e for e in surface.audit_log() if e.type == type_]


# --------------------------------------------------------------------------- shown and bound


async def test_the_preview_is_shown_with_the_request_and_bound_to_its_approval(surface: TestSurface, fleet: Fleet) -> None:
    cid = await pending_id(surface, ["d1", "d2"])
    pending = only_pending(surface)
    assert pending.preview is not None
    assert pending.preview.changes == (
        Change("d1", "status", "online", "disabled"),
        Change("d2", "status", "offline", "disabled"),
    )
    assert pending.preview.total == 2 and pending.preview.not_shown == 0
    shown = pending.to_json()["preview"]
    assert isinstance(shown, dict) and shown["total"] == 2 and shown["digest"] == pending.preview.digest
    assert shown["changes"] == [
        {"row": "d1", "field": "status", "before": "online", "after": "disabled"},
        {"row": "d2", "field": "status", "before": "offline", "after": "disabled"},
    ]
    # The approval is bound to the preview's digest beside the exact input.
    record = surface.registry.confirmations._records[cid]
    assert record.request["preview"] == pending.preview.digest
    assert fleet.applied == []

    surface.confirmations.approve(cid)
    done = await ask(surface, ["d1", "d2"], invocation_id="inv-1", confirmation_id=cid)
    assert done.ok and done.output == 2
    assert fleet.applied == [["d1", "d2"]]
    assert audited(surface, "confirmation-stale") == []


async def test_a_capability_without_a_preview_binds_no_preview_key() -> None:
    material = request_material("s", "r", "c", "k", {"a": 1}, "local-state")
    assert "preview" not in material
    assert request_material("s", "r", "c", "k", {"a": 1}, "local-state", "sha256:x")["preview"] == "sha256:x"


async def test_the_same_request_in_another_state_is_another_pending_request(surface: TestSurface, fleet: Fleet) -> None:
    first = await pending_id(surface, ["d1"])
    again = await pending_id(surface, ["d1"], invocation_id="inv-2")
    assert again == first  # same request, same state: the same pending record
    fleet.status["d1"] = "offline"
    other = await pending_id(surface, ["d1"], invocation_id="inv-3")
    assert other != first  # the person is shown what would happen now


# --------------------------------------------------------------------------- stale


async def test_state_changed_before_approve_refuses_as_stale_and_never_applies(surface: TestSurface, fleet: Fleet) -> None:
    cid = await pending_id(surface, ["d1", "d2"])
    fleet.status["d2"] = "online"  # the state the person is looking at changed under the dialog
    surface.confirmations.approve(cid)  # the person presses Approve on what they saw
    assert surface.registry.confirmations.status(cid) == "stale"
    assert surface.confirmations.pending() == []  # the dialog closes
    assert not surface.registry.confirmations.resolve(cid, approved=True)  # nothing to approve any more
    assert await surface.registry.confirmations.wait_for(cid) == "stale"

    retry = await ask(surface, ["d1", "d2"], invocation_id="inv-1", confirmation_id=cid)
    assert retry.code == "CONFIRMATION_INVALID"
    assert details_of(retry) == {"reason": "stale"}
    assert retry.error is not None and retry.error.retry == "with-confirmation"
    assert "Nothing was applied" in retry.error.message
    assert fleet.applied == [] and fleet.status["d1"] == "online"
    stale = audited(surface, "confirmation-stale")
    assert [(e.capability_id, e.type) for e in stale] == [(DISABLE, "confirmation-stale")]
    resolved = [e for e in surface.events() if e.type == "confirmation-resolved"]
    assert [e["outcome"] for e in resolved] == ["stale"]


async def test_state_changed_after_approval_is_stale_even_if_it_changes_back(surface: TestSurface, fleet: Fleet) -> None:
    cid = await pending_id(surface, ["d1"])
    surface.confirmations.approve(cid)
    fleet.status["d1"] = "offline"
    first = await ask(surface, ["d1"], invocation_id="inv-1", confirmation_id=cid)
    assert details_of(first) == {"reason": "stale"}
    fleet.status["d1"] = "online"  # back to what the person saw: the approval stays spoiled
    second = await ask(surface, ["d1"], invocation_id="inv-9", confirmation_id=cid)
    assert second.code == "CONFIRMATION_INVALID" and details_of(second) == {"reason": "stale"}
    assert fleet.applied == []
    # Asking again shows the person the current state.
    fresh = await pending_id(surface, ["d1"], invocation_id="inv-10")
    assert fresh != cid and only_pending(surface).preview is not None


async def test_an_agent_polling_with_the_id_after_a_change_closes_the_pending_request(
    surface: TestSurface, fleet: Fleet
) -> None:
    cid = await pending_id(surface, ["d3"])
    fleet.status["d3"] = "offline"
    polled = await ask(surface, ["d3"], invocation_id="inv-1", confirmation_id=cid)
    assert details_of(polled) == {"reason": "stale"}
    assert surface.confirmations.pending() == []
    assert not surface.registry.confirmations.resolve(cid, approved=True)
    assert fleet.applied == []


async def test_a_denied_or_used_request_stays_so_in_another_state(surface: TestSurface, fleet: Fleet) -> None:
    denied = await pending_id(surface, ["d1"])
    surface.confirmations.deny(denied, reason="not now")
    fleet.status["d1"] = "offline"
    again = await ask(surface, ["d1"], invocation_id="inv-1", confirmation_id=denied)
    assert details_of(again) == {"reason": "denied", "personSaid": "not now"}
    used = await pending_id(surface, ["d3"], invocation_id="inv-2")
    surface.confirmations.approve(used)
    assert (await ask(surface, ["d3"], invocation_id="inv-2", confirmation_id=used)).ok
    fleet.status["d3"] = "online"  # disabled by the call; set back by someone else
    replay = await ask(surface, ["d3"], invocation_id="inv-3", confirmation_id=used)
    assert details_of(replay) == {"reason": "consumed"} and fleet.applied == [["d3"]]


async def test_another_input_with_the_approval_is_still_a_mismatch(surface: TestSurface, fleet: Fleet) -> None:
    cid = await pending_id(surface, ["d1"])
    surface.confirmations.approve(cid)
    moved = await ask(surface, ["d2"], invocation_id="inv-2", confirmation_id=cid)
    assert details_of(moved) == {"reason": "mismatch"}  # AS-CONFIRM-001: never "stale"
    done = await ask(surface, ["d1"], invocation_id="inv-1", confirmation_id=cid)
    assert done.ok and fleet.applied == [["d1"]]


async def test_a_change_while_the_approved_call_waits_its_turn_is_refused_before_the_handler(
    surface: TestSurface, fleet: Fleet
) -> None:
    """The check is in the same step as the handler's start: a change between the approval's
    check (phase 6) and the handler (phase 9), here while the call queues behind another action
    of the same component, still refuses it."""
    cid = await pending_id(surface, ["d1"])
    surface.confirmations.approve(cid)
    fleet.gate = asyncio.Event()
    holding = asyncio.ensure_future(surface.invoke("view:fleet.table.hold", {}))
    await spin()
    waiting = asyncio.ensure_future(ask(surface, ["d1"], invocation_id="inv-1", confirmation_id=cid))
    await spin()
    assert not waiting.done()  # approved (phase 6 passed), queued behind hold
    assert surface.registry.confirmations.status(cid) == "consumed"
    fleet.status["d1"] = "offline"
    fleet.gate.set()
    assert (await holding).ok
    result = await waiting
    assert result.code == "CONFIRMATION_INVALID" and details_of(result) == {"reason": "stale"}
    assert fleet.applied == []
    assert surface.registry.confirmations.status(cid) == "stale"
    (event,) = audited(surface, "confirmation-stale")
    assert event.invocation_id == result.invocation_id


# --------------------------------------------------------------------------- the app's function failing


async def test_a_raising_preview_refuses_the_call_shows_nothing_and_is_audited(surface: TestSurface, fleet: Fleet) -> None:
    result = await ask(surface, ["nope"])  # the preview's lookup raises KeyError
    assert result.code == "PRECONDITION_FAILED"
    assert details_of(result) == {"reason": "preview-error"}
    assert result.error is not None and result.error.retry == "after-refresh"
    assert "nope" not in result.error.message  # the exception's text never reaches the agent
    assert surface.confirmations.pending() == [] and fleet.applied == []
    (failed,) = audited(surface, "preview-failed")
    assert failed.capability_id == DISABLE and failed.detail == "preview-error"
    settled = audited(surface, "invocation-settled")
    assert settled[-1].code == "PRECONDITION_FAILED"


async def test_a_preview_raising_capability_failure_settles_with_its_payload(surface: TestSurface, fleet: Fleet) -> None:
    def refuse(ids: list[str]) -> Any:
        raise CapabilityFailure(error("PRECONDITION_FAILED", "Those devices are locked.", reason="locked"))

    fleet.preview_override = refuse
    result = await ask(surface, ["d1"])
    assert result.code == "PRECONDITION_FAILED" and details_of(result) == {"reason": "locked"}
    assert surface.confirmations.pending() == []


async def test_a_preview_that_raises_at_approve_approves_nothing(surface: TestSurface, fleet: Fleet) -> None:
    cid = await pending_id(surface, ["d1"])
    fleet.preview_override = lambda ids: 1 / 0
    surface.confirmations.approve(cid)
    assert surface.registry.confirmations.status(cid) == "stale"
    fleet.preview_override = None
    retry = await ask(surface, ["d1"], invocation_id="inv-1", confirmation_id=cid)
    assert details_of(retry) == {"reason": "stale"} and fleet.applied == []


async def test_a_preview_that_raises_just_before_the_write_refuses_it(surface: TestSurface, fleet: Fleet) -> None:
    cid = await pending_id(surface, ["d1"])
    surface.confirmations.approve(cid)
    calls = itertools.count()

    def flaky(ids: list[str]) -> Any:
        if next(calls) >= 1:  # fine at phase 6, raises when recomputed before the handler
            raise RuntimeError("the table went away")
        return [Change("d1", "status", "online", "disabled")]

    fleet.preview_override = flaky
    result = await ask(surface, ["d1"], invocation_id="inv-1", confirmation_id=cid)
    assert result.code == "PRECONDITION_FAILED" and details_of(result) == {"reason": "preview-error"}
    assert fleet.applied == []
    assert [e.detail for e in audited(surface, "preview-failed")] == ["preview-error"]


@pytest.mark.parametrize(
    ("returned", "problem"),
    [
        ({"row": "d1", "field": "status", "before": 1, "after": 2}, "preview-invalid"),  # one change, not a list
        ("d1 goes offline", "preview-invalid"),
        (None, "preview-invalid"),
        (42, "preview-invalid"),
        ([("d1", "status", "online", "disabled")], "preview-invalid"),
        ({Change("d1", "status", "online", "disabled")}, "preview-invalid"),  # unordered
        ([{"row": "d1", "field": "status", "before": "a"}], "preview-invalid"),
        ([{"row": "d1", "field": "status", "before": "a", "after": "b", "html": "<b>"}], "preview-invalid"),
        ([Change("", "status", "a", "b")], "preview-invalid"),
        ([Change("d1", "x" * 201, "a", "b")], "preview-invalid"),
        ([Change("d1", "status", object(), "b")], "preview-invalid"),
        ([Change("d1", "status", float("nan"), "b")], "preview-invalid"),
        ([Change("d1", "status", [[[[[[[[[[1]]]]]]]]]], "b")], "preview-invalid"),
        ([Change("d1", "blob", "a", "x" * MAX_PREVIEW_BYTES)], "preview-too-large"),
    ],
)
async def test_what_is_not_a_preview_is_refused_and_shows_nothing(
    surface: TestSurface, fleet: Fleet, returned: Any, problem: str
) -> None:
    fleet.preview_override = lambda ids: returned
    result = await ask(surface, ["d1"])
    assert result.code == "PRECONDITION_FAILED" and details_of(result) == {"reason": problem}
    assert surface.confirmations.pending() == [] and fleet.applied == []
    assert [e.detail for e in audited(surface, "preview-failed")] == [problem]


async def test_an_endless_preview_is_cut_off_at_the_size_bound(surface: TestSurface, fleet: Fleet) -> None:
    produced = itertools.count()

    def endless(ids: list[str]) -> Any:
        return (Change(f"row-{next(produced)}", "status", "online", "disabled") for _ in itertools.count())

    fleet.preview_override = endless
    result = await ask(surface, ["d1"])
    assert details_of(result) == {"reason": "preview-too-large"}
    assert next(produced) < MAX_PREVIEW_BYTES // 40  # stopped once past the bound


async def test_an_async_preview_is_refused_without_an_unawaited_coroutine(surface: TestSurface, fleet: Fleet) -> None:
    async def later(ids: list[str]) -> list[Change]:
        return []

    fleet.preview_override = later
    with _no_warning():
        result = await ask(surface, ["d1"])
    assert details_of(result) == {"reason": "preview-invalid"}


@contextlib.contextmanager
def _no_warning() -> Iterator[None]:
    """Fails the test on a 'coroutine was never awaited' warning."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield
        gc.collect()
    assert [str(w.message) for w in caught if "never awaited" in str(w.message)] == []


# --------------------------------------------------------------------------- large previews


async def test_a_long_preview_keeps_the_first_rows_and_stales_on_any_row(surface: TestSurface, fleet: Fleet) -> None:
    fleet.status.update({f"x{i:03d}": "online" for i in range(120)})
    ids = [f"x{i:03d}" for i in range(120)]
    cid = await pending_id(surface, ids)
    preview = only_pending(surface).preview
    assert preview is not None
    assert len(preview.changes) == PREVIEW_ROWS_KEPT and preview.total == 120 and preview.not_shown == 70
    fleet.status["x119"] = "offline"  # a row the dialog does not show: the digest covers it
    surface.confirmations.approve(cid)
    assert surface.registry.confirmations.status(cid) == "stale"


def test_make_preview_accepts_mappings_and_changes_alike() -> None:
    a = make_preview([Change("d1", "status", "online", "disabled")])
    b = make_preview(({"row": "d1", "field": "status", "before": "online", "after": "disabled"},))
    assert a == b and isinstance(a, Preview)
    assert make_preview([]).total == 0
    with pytest.raises(PreviewRefused) as refused:
        make_preview({"d1": "x"})
    assert refused.value.problem == "preview-invalid"


# --------------------------------------------------------------------------- procedure references


class Toolbar:
    """A destructive procedure bound to the selection, previewing each selected device."""

    def __init__(self, preview: Callable[[Any], Any] | None = None, executor: Any = None) -> None:
        self.state = DevicesState()
        self.state.selected = ["d1", "d2"]
        self.status = {"d1": "online", "d2": "offline", "d3": "online"}
        self.proc = disable_procedure()
        self.tb = toolbar()
        self.sent: list[Any] = []
        self.seen: list[Any] = []

        def sending(cid: str, value: Any, ctx: Any) -> Any:
            self.sent.append(value)
            return {"disabled": len(value["deviceIds"])}

        def default_preview(effective: Any) -> list[Change]:
            self.seen.append(effective)
            effective["deviceIds"].append("d3")  # a misbehaving preview cannot change the call
            return [Change(i, "status", self.status[i], "disabled") for i in effective["deviceIds"][:-1]]

        self.registry = make_registry([self.tb, self.proc], procedure_executor=executor or sending)
        self.registry.register(
            bind_toolbar(self.tb, self.state, self.proc, reference_options={"preview": preview or default_preview})
        )

    async def ask(self, **request: Any) -> Any:
        return await self.registry.invoke({"capabilityId": "domain:devices.disable", "input": {}, **request})


async def test_a_procedure_reference_previews_from_the_effective_input_and_applies() -> None:
    t = Toolbar()
    first = await t.ask(invocationId="inv-1")
    cid = details_of(first)["confirmationId"]
    (pending,) = t.registry.confirmations.pending()
    assert pending.preview is not None
    assert [(c.row, c.before, c.after) for c in pending.preview.changes] == [
        ("d1", "online", "disabled"),
        ("d2", "offline", "disabled"),
    ]
    assert t.registry.confirmations.resolve(cid, approved=True)
    done = await t.ask(invocationId="inv-1", confirmationId=cid)
    assert done.ok
    assert t.sent == [{"deviceIds": ["d1", "d2"]}]  # the preview's copy was changed, not the input


async def test_a_changed_selection_before_approve_is_stale() -> None:
    t = Toolbar()
    first = await t.ask(invocationId="inv-1")
    cid = details_of(first)["confirmationId"]
    t.state.selected = ["d1"]  # the rows the preview was computed from changed
    assert t.registry.confirmations.resolve(cid, approved=True)
    assert t.registry.confirmations.status(cid) == "stale"
    retry = await t.ask(invocationId="inv-1", confirmationId=cid)
    assert retry.code == "CONFIRMATION_INVALID"
    assert t.sent == []


async def test_a_changed_status_of_a_selected_device_before_approve_is_stale() -> None:
    t = Toolbar()
    first = await t.ask(invocationId="inv-1")
    cid = details_of(first)["confirmationId"]
    t.status["d2"] = "disabled"
    t.registry.confirmations.resolve(cid, approved=True)
    retry = await t.ask(invocationId="inv-1", confirmationId=cid)
    assert details_of(retry) == {"reason": "stale"} and t.sent == []


async def test_a_changed_selection_after_approval_stays_a_mismatch() -> None:
    """AS-CONFIRM-001 holds with a preview: the input changed after approval is a mismatch."""
    t = Toolbar()
    first = await t.ask(invocationId="inv-1")
    cid = details_of(first)["confirmationId"]
    t.registry.confirmations.resolve(cid, approved=True)
    t.state.selected = ["d1"]
    retry = await t.ask(invocationId="inv-1", confirmationId=cid)
    assert details_of(retry) == {"reason": "mismatch"} and t.sent == []


async def test_an_executor_that_waits_asks_again_before_it_writes() -> None:
    """``ctx.still_approved()``: what the bridge asks after the server's challenge (and a
    passkey) took time, before the write leaves the page."""
    gate = asyncio.Event()
    answers: list[bool] = []

    async def executor(cid: str, value: Any, ctx: Any) -> Any:
        assert ctx.still_approved is not None and ctx.still_approved() is True
        await gate.wait()  # the challenge round trip, the passkey ceremony
        answers.append(ctx.still_approved())
        if not answers[-1]:
            raise CapabilityFailure(error("CONFIRMATION_INVALID", "stale", "with-confirmation", reason="stale"))
        t.sent.append(value)
        return {"disabled": len(value["deviceIds"])}

    t = Toolbar(executor=executor)
    first = await t.ask(invocationId="inv-1")
    cid = details_of(first)["confirmationId"]
    t.registry.confirmations.resolve(cid, approved=True)
    running = asyncio.ensure_future(t.ask(invocationId="inv-1", confirmationId=cid))
    await spin()
    t.status["d1"] = "offline"
    gate.set()
    result = await running
    assert answers == [False] and details_of(result) == {"reason": "stale"} and t.sent == []
    assert t.registry.confirmations.status(cid) == "stale"


async def test_an_approval_without_a_preview_has_no_still_approved_check() -> None:
    seen: list[Any] = []
    t = Toolbar(executor=lambda cid, value, ctx: seen.append(ctx.still_approved) or {"disabled": 1})
    t.registry.register(
        bind_toolbar(t.tb, t.state, t.proc, instance_id="plain", policies=[require_confirmation()])
    )
    first = await t.registry.invoke(
        {"capabilityId": "domain:devices.disable", "input": {}, "instanceId": "plain", "invocationId": "p1"}
    )
    cid = details_of(first)["confirmationId"]
    assert t.registry.confirmations.get(cid) is not None and t.registry.confirmations.get(cid).preview is None  # type: ignore[union-attr]
    t.registry.confirmations.resolve(cid, approved=True)
    done = await t.registry.invoke(
        {"capabilityId": "domain:devices.disable", "input": {}, "instanceId": "plain", "invocationId": "p1",
         "confirmationId": cid}
    )
    assert done.ok and seen == [None]


def test_a_non_callable_preview_is_refused_at_definition() -> None:
    from agentsurface import DefinitionError

    with pytest.raises(DefinitionError, match="preview must be callable"):
        disable_procedure().reference(preview="rows")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="did you mean 'preview'"):
        disable_procedure().reference(preveiw=lambda e: [])  # type: ignore[call-arg]


def test_a_preview_method_may_not_shadow_its_action() -> None:
    from agentsurface import DefinitionError

    with pytest.raises(DefinitionError, match="must not be named 'go'"):

        class Bad(AgentComponent, type="bad.thing", description="x"):
            @action("Go", confirmation="required")
            def go(self) -> None: ...

            @go.preview  # type: ignore[no-redef]
            def go(self) -> list[Change]:
                return []
