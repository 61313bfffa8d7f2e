"""Confirmation within one WebMCP tool call, the confirm hook through requestUserInteraction, and
cancellation through the call's signal (seed "WebMCP adapter / Confirmation", "Through
requestUserInteraction"; DESIGN §5)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from agentsurface import CancelSignal, Change, PendingConfirmation
from agentsurface.adapters.model_context import Shape
from agentsurface.adapters.webmcp import WebMCPAdapter

from .conftest import Start
from .fakes import SHAPES, FakeClient, FakeModelContext, ToolResult, make_context
from .surface import CONSUMER, DETAIL, PROCEDURES, App, make_app, started_events, turn

WIPE = "view_devices__table__wipeFilters"
WAIT = "view_devices__table__wait"
DRAFT: tuple[Shape, ...] = ("incremental", "provide")


async def begin(
    fake: FakeModelContext, name: str = WIPE, input: Any = None, **options: Any
) -> asyncio.Future[ToolResult]:
    """Start a call and let it reach its confirmation wait (or prompt)."""
    task = asyncio.ensure_future(fake.agent.call(name, {} if input is None else input, **options))
    await turn()
    assert not task.done(), task.result().payload
    return task


async def finish(task: asyncio.Future[ToolResult]) -> ToolResult:
    """The call's result once it settles within a few loop turns (a hang fails, never blocks)."""
    for _ in range(50):
        if task.done():
            break
        await asyncio.sleep(0)
    assert task.done(), "the call did not settle"
    return task.result()


def only_pending(app: App) -> PendingConfirmation:
    pending = app.registry.confirmations.pending()
    assert len(pending) == 1, pending
    return pending[0]


def wipe_invocations(app: App) -> list[str]:
    return [e["invocationId"] for e in started_events(app) if e["capabilityId"].endswith("wipeFilters")]


# --------------------------------------------------------------------------- the table


@pytest.mark.parametrize("shape", SHAPES)
async def test_confirmation_approved_returns_the_output_and_runs_once(
    app: App, start: Start, shape: Shape
) -> None:
    app.mount_table()
    _adapter, fake = await start(shape)
    call = await begin(fake)
    pending = only_pending(app)
    assert pending.capability_id == "view:devices.table.wipeFilters"
    assert app.calls["wipeFilters"] == 0
    assert app.registry.confirmations.resolve(pending.confirmation_id, approved=True)
    result = await finish(call)
    assert not result.is_error, result.payload
    assert result.payload == {"wiped": True}
    assert app.calls["wipeFilters"] == 1
    ids = wipe_invocations(app)
    assert len(ids) == 2 and ids[0] == ids[1]  # retried once, same invocation id
    assert app.registry.confirmations.pending() == []


async def test_a_denial_gives_the_agent_the_persons_words_sanitized_and_audits_them(
    app: App, start: Start
) -> None:
    app.mount_table()
    _adapter, fake = await start("abortable")
    call = await begin(fake)
    said = "  Wrong\tcity,\n\u202eplease\u200b  " + "x" * 400 + "\x07"
    app.registry.confirmations.resolve(only_pending(app).confirmation_id, approved=False, reason=said)
    result = await finish(call)
    details = result.payload["details"]
    assert details["reason"] == "denied" and result.payload["retry"] == "no"
    # One line of plain text (no controls, no bidi override, no zero-width), at most 200 characters.
    assert details["personSaid"].startswith("Wrong city, please xxx")
    assert len(details["personSaid"]) == 200 and details["personSaid"].endswith("…")
    denied = [e for e in app.registry.audit_sink.events() if e.type == "confirmation-denied"]  # type: ignore[attr-defined]
    assert [e.detail for e in denied] == [details["personSaid"]]
    # Without words (or only blanks), no key at all.
    call = await begin(fake)
    app.registry.confirmations.resolve(only_pending(app).confirmation_id, approved=False, reason=" \u200b ")
    assert (await finish(call)).payload["details"] == {"reason": "denied"}


async def test_approve_on_an_outdated_preview_answers_stale_without_a_retry(app: App, start: Start) -> None:
    filters = {"city": "Milan"}
    app.mount_table(wipe_preview=lambda value, ctx: [Change("filters", "city", filters["city"], None)])
    _adapter, fake = await start("abortable")
    call = await begin(fake)
    pending = only_pending(app)
    assert pending.preview is not None and pending.preview.changes[0].before == "Milan"
    filters["city"] = "Rome"  # the state the preview was computed from changed
    assert app.registry.confirmations.resolve(pending.confirmation_id, approved=True)
    result = await finish(call)
    assert result.is_error and result.payload["code"] == "CONFIRMATION_INVALID"
    assert result.payload["details"] == {"reason": "stale"} and result.payload["retry"] == "with-confirmation"
    assert app.calls["wipeFilters"] == 0
    assert len(wipe_invocations(app)) == 1  # answered from the outcome: not retried
    stale = [e for e in app.registry.audit_sink.events() if e.type == "confirmation-stale"]  # type: ignore[attr-defined]
    assert len(stale) == 1


@pytest.mark.parametrize("shape", SHAPES)
async def test_confirmation_denied_is_confirmation_invalid_and_never_retried(
    app: App, start: Start, shape: Shape
) -> None:
    app.mount_table()
    _adapter, fake = await start(shape)
    call = await begin(fake)
    app.registry.confirmations.resolve(only_pending(app).confirmation_id, approved=False)
    result = await finish(call)
    assert result.code == "CONFIRMATION_INVALID"
    assert result.payload["details"] == {"reason": "denied"}
    assert result.payload["retry"] == "no"
    assert app.calls["wipeFilters"] == 0
    await turn()
    assert len(wipe_invocations(app)) == 1  # the first call only: a denial is not retried
    assert app.registry.confirmations.pending() == []  # no new confirmation was opened


@pytest.mark.parametrize("shape", SHAPES)
async def test_a_denial_after_the_surface_changed_is_still_a_denial(app: App, start: Start, shape: Shape) -> None:
    """Not STALE_CAPABILITY ("refresh and retry"), which would send the agent back to ask the
    person who just said no."""
    # A destructive procedure (so its call is bound to the surface version it was discovered
    # at), referenced with confirmation required.
    purge = PROCEDURES["domain:devices.purge"].reference(confirmation="required")
    app.registry.register(DETAIL.bind(observations={"summary": lambda ctx: "a device"}, procedures=[purge]))
    _adapter, fake = await start(shape)
    call = await begin(fake, "domain_devices__purge", {"ids": ["d1"]})
    app.mount_panel()  # the surface changes while the person is deciding
    await turn()
    app.registry.confirmations.resolve(only_pending(app).confirmation_id, approved=False)
    result = await finish(call)
    assert result.code == "CONFIRMATION_INVALID"
    assert result.payload["details"] == {"reason": "denied"}
    assert result.payload["retry"] == "no"
    assert app.calls["domain:devices.purge"] == 0


@pytest.mark.parametrize("shape", SHAPES)
async def test_no_decision_within_the_ttl_is_confirmation_invalid_expired(shape: Shape, start: Start) -> None:
    del start  # this test needs its own registry limits
    app = make_app(confirmation_ttl=30)
    app.mount_table()
    fake = make_context(shape)
    adapter = WebMCPAdapter(model_context=fake)
    await adapter.start(registry=app.registry, consumer=CONSUMER)
    try:
        call = await begin(fake)
        only_pending(app)
        app.clock.advance(29.9)
        await turn()
        assert not call.done()
        app.clock.advance(0.1)
        result = await finish(call)
        assert result.code == "CONFIRMATION_INVALID"
        assert result.payload["details"] == {"reason": "expired"}
        assert app.calls["wipeFilters"] == 0
    finally:
        await adapter.aclose()


@pytest.mark.parametrize("shape", SHAPES)
async def test_stop_while_waiting_returns_the_original_confirmation_required(
    app: App, start: Start, shape: Shape
) -> None:
    app.mount_table()
    adapter, fake = await start(shape)
    call = await begin(fake)
    pending = only_pending(app)
    await adapter.aclose()
    result = await finish(call)
    assert result.code == "CONFIRMATION_REQUIRED"
    assert result.payload["details"]["confirmationId"] == pending.confirmation_id
    assert result.payload["retry"] == "with-confirmation"
    # An approval arriving afterwards executes nothing: nobody retries with the evidence.
    app.registry.confirmations.resolve(pending.confirmation_id, approved=True)
    await turn()
    assert app.calls["wipeFilters"] == 0
    assert len(wipe_invocations(app)) == 1


# --------------------------------------------------------------------------- confirm hook


@pytest.mark.parametrize("shape", DRAFT)
async def test_confirm_hook_approves_through_request_user_interaction(
    app: App, start: Start, shape: Shape
) -> None:
    app.mount_table()
    seen: list[tuple[PendingConfirmation, Any]] = []

    def confirm(pending: PendingConfirmation, client: Any) -> bool:
        seen.append((pending, client))
        return True

    _adapter, fake = await start(shape, confirm=confirm)
    result = await fake.agent.call(WIPE, {})
    assert not result.is_error, result.payload
    assert result.payload == {"wiped": True}
    assert app.calls["wipeFilters"] == 1
    ((pending, client),) = seen
    assert pending.capability_id == "view:devices.table.wipeFilters"
    assert pending.summary.startswith("Reset every filter")
    assert isinstance(client, FakeClient) and client.prompts == 1
    assert app.registry.confirmations.pending() == []


@pytest.mark.parametrize("shape", DRAFT)
async def test_confirm_hook_denial_is_confirmation_invalid(app: App, start: Start, shape: Shape) -> None:
    app.mount_table()

    async def confirm(pending: PendingConfirmation, client: Any) -> bool:
        await asyncio.sleep(0)
        return False

    _adapter, fake = await start(shape, confirm=confirm)
    result = await fake.agent.call(WIPE, {})
    assert result.code == "CONFIRMATION_INVALID"
    assert result.payload["details"] == {"reason": "denied"}
    assert app.calls["wipeFilters"] == 0


@pytest.mark.parametrize("shape", DRAFT)
async def test_a_confirm_hook_that_raises_falls_back_to_the_host_ui(
    app: App, start: Start, shape: Shape
) -> None:
    app.mount_table()

    def confirm(pending: PendingConfirmation, client: Any) -> bool:
        raise RuntimeError("dialog failed to open")

    adapter, fake = await start(shape, confirm=confirm)
    call = await begin(fake)
    pending = only_pending(app)  # still pending: the host's UI decides now
    assert any("dialog failed to open" in d for d in adapter.diagnostics)
    app.registry.confirmations.resolve(pending.confirmation_id, approved=True)
    result = await finish(call)
    assert not result.is_error and result.payload == {"wiped": True}
    assert app.calls["wipeFilters"] == 1


@pytest.mark.parametrize("shape", DRAFT)
async def test_without_client_support_the_hook_is_skipped_and_the_host_ui_decides(
    app: App, start: Start, shape: Shape
) -> None:
    app.mount_table()
    asked: list[Any] = []

    def confirm(pending: PendingConfirmation, client: Any) -> bool:
        asked.append(pending)
        return True

    _adapter, fake = await start(shape, confirm=confirm)
    call = await begin(fake, request_user_interaction=None)
    app.registry.confirmations.resolve(only_pending(app).confirmation_id, approved=True)
    assert not (await finish(call)).is_error
    assert asked == []


async def test_on_the_abortable_shape_the_hook_is_unused_and_the_host_ui_decides(
    app: App, start: Start
) -> None:
    app.mount_table()
    asked: list[Any] = []

    def confirm(pending: PendingConfirmation, client: Any) -> bool:
        asked.append(pending)
        return True

    _adapter, fake = await start("abortable", confirm=confirm)
    call = await begin(fake)
    app.registry.confirmations.resolve(only_pending(app).confirmation_id, approved=True)
    assert (await finish(call)).payload == {"wiped": True}
    assert asked == []


@pytest.mark.parametrize("shape", DRAFT)
async def test_the_registry_stays_the_authority_over_the_hooks_answer(
    app: App, start: Start, shape: Shape
) -> None:
    app.mount_table()

    def confirm(pending: PendingConfirmation, client: Any) -> bool:
        # The host UI denied it first; the hook's late "yes" cannot overturn the record.
        app.registry.confirmations.resolve(pending.confirmation_id, approved=False)
        return True

    _adapter, fake = await start(shape, confirm=confirm)
    result = await fake.agent.call(WIPE, {})
    assert result.code == "CONFIRMATION_INVALID"
    assert result.payload["details"] == {"reason": "denied"}
    assert app.calls["wipeFilters"] == 0


@pytest.mark.parametrize("shape", DRAFT)
async def test_stop_during_the_prompt_returns_confirmation_required(
    app: App, start: Start, shape: Shape
) -> None:
    app.mount_table()
    answer = asyncio.Event()

    async def confirm(pending: PendingConfirmation, client: Any) -> bool:
        await answer.wait()  # the user is looking at the dialog
        return True

    adapter, fake = await start(shape, confirm=confirm)
    call = await begin(fake)
    pending = only_pending(app)
    await adapter.aclose()
    await turn()
    assert call.done(), "the call must settle when the adapter stops, dialog open or not"
    result = call.result()
    assert result.code == "CONFIRMATION_REQUIRED"
    assert result.payload["details"]["confirmationId"] == pending.confirmation_id
    answer.set()  # the dialog closes with a "yes" after the adapter stopped
    await turn()
    assert app.calls["wipeFilters"] == 0
    assert len(wipe_invocations(app)) == 1


@pytest.mark.parametrize(("approved", "shape"), [(True, "incremental"), (False, "provide")])
async def test_the_host_ui_deciding_while_the_prompt_is_open_settles_the_call(
    app: App, start: Start, approved: bool, shape: Shape
) -> None:
    """Found in the browser (e2e/test_webmcp_adapter.py): a hook that never answers kept the call
    pending after the host's own dialog had decided; the hook must be cancelled instead."""
    app.mount_table()
    never = asyncio.Event()
    hook: list[str] = []

    async def confirm(pending: PendingConfirmation, client: Any) -> bool:
        hook.append("open")
        try:
            await never.wait()
        except asyncio.CancelledError:
            hook.append("cancelled")
            raise
        return True

    _adapter, fake = await start(shape, confirm=confirm)
    call = await begin(fake)
    app.registry.confirmations.resolve(only_pending(app).confirmation_id, approved=approved)
    result = await finish(call)
    if approved:
        assert not result.is_error and result.payload == {"wiped": True}
    else:
        assert result.code == "CONFIRMATION_INVALID"
        assert result.payload["details"] == {"reason": "denied"}
    await turn()
    assert hook == ["open", "cancelled"]
    assert app.calls["wipeFilters"] == (1 if approved else 0)


async def test_expiry_while_the_prompt_is_open_is_confirmation_invalid_expired(
    app: App, start: Start
) -> None:
    app.mount_table()
    never = asyncio.Event()

    async def confirm(pending: PendingConfirmation, client: Any) -> bool:
        await never.wait()
        return True

    _adapter, fake = await start("incremental", confirm=confirm)
    call = await begin(fake)
    app.clock.advance(app.registry.limits.confirmation_ttl + 1)
    result = await finish(call)
    assert result.code == "CONFIRMATION_INVALID"
    assert result.payload["details"] == {"reason": "expired"}
    assert app.calls["wipeFilters"] == 0


# --------------------------------------------------------------------------- cancellation


async def test_a_cancelled_call_signal_cancels_the_invocation(app: App, start: Start) -> None:
    app.mount_table()
    _adapter, fake = await start("abortable")
    signal = CancelSignal()
    call = asyncio.ensure_future(fake.agent.call(WAIT, {}, signal=signal))
    await turn()
    assert app.calls["wait"] == 1 and not call.done()
    signal.abort("agent gave up")
    result = await finish(call)
    assert result.code == "CANCELLED"
    await turn()
    assert app.wait_cancelled == ["cancelled"]  # the handler's own signal was aborted


async def test_an_already_aborted_signal_runs_nothing(app: App, start: Start) -> None:
    app.mount_table()
    _adapter, fake = await start("abortable")
    signal = CancelSignal()
    signal.abort()
    result = await fake.agent.call(WAIT, {}, signal=signal)
    assert result.code == "CANCELLED"
    assert app.calls["wait"] == 0


async def test_cancelling_while_waiting_for_confirmation_settles_the_call(app: App, start: Start) -> None:
    app.mount_table()
    _adapter, fake = await start("abortable")
    signal = CancelSignal()
    call = await begin(fake, signal=signal)
    pending = only_pending(app)
    signal.abort()
    await turn()
    assert call.done(), "a cancelled call must not keep waiting for the user"
    assert call.result().code == "CANCELLED"
    # The request is withdrawn: the host's dialog has nothing to show, a late approval is refused.
    assert app.registry.confirmations.pending() == []
    assert not app.registry.confirmations.resolve(pending.confirmation_id, approved=True)
    await turn()
    assert app.calls["wipeFilters"] == 0



# --------------------------------------------------------------------------- meta mode


@pytest.mark.parametrize("approve", [True, False])
async def test_meta_mode_completes_confirmations_in_call_too(app: App, start: Start, approve: bool) -> None:
    app.mount_table()
    adapter, fake = await start("abortable", mode="meta")
    call = await begin(fake, "surface_act", {"capabilityId": "view:devices.table.wipeFilters", "input": {}})
    pending = only_pending(app)
    if approve:
        app.registry.confirmations.resolve(pending.confirmation_id, approved=True)
        assert (await finish(call)).payload == {"wiped": True}
        assert app.calls["wipeFilters"] == 1
    else:
        await adapter.aclose()
        result = await finish(call)
        assert result.code == "CONFIRMATION_REQUIRED"
        assert app.calls["wipeFilters"] == 0
