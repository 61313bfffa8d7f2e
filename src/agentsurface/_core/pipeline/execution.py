"""Phase 9, execution: the handler (or the host's procedure executor) with signal and timeout.

A call given up on (timeout, cancel, unmount, disposal) stops its handler's task (signal, then
cancel, then a short grace) before it settles, and says whether the handler stopped.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Awaitable
from typing import Any, Literal

from ..clock import iso
from ..contracts.context import ActionContext, ReadContext
from ..errors import AgentSurfaceError, CapabilityFailure, ErrorPayload
from ..registrations.entries import ActionEntry, ObservationEntry, ProcedureEntry
from . import failures, previews
from .call import Call, Wait
from .failures import PhaseRefusal

log = logging.getLogger("agentsurface")

# Seconds a handler whose call was given up on (timeout, cancel, unmount, disposal) has to unwind
# after its task is cancelled, before the call settles saying whether it stopped.
HANDLER_STOP_GRACE = 0.25
HandlerFate = Literal["stopped", "unknown"]


class _HandlerCancelled(AgentSurfaceError):
    """The handler's own task ended cancelled without the pipeline asking."""


def execute(call: Call) -> Wait:
    """Run the handler. A synchronous handler's result settles here, without a coroutine or a
    timer (nothing can interrupt it); an awaitable one runs under the call's timeout."""
    pipeline = call.pipeline
    registry = pipeline.registry
    pipeline.active.add(call.settle)
    begun = registry.now()
    try:
        if call.signal.aborted:
            raise PhaseRefusal(abort_error(call, call.signal.reason or "cancelled", during_execution=False))
        if call.confirmation is not None:
            # An approved preview is checked in the same step as the handler's start: nothing
            # can change the state between the check and the write.
            previews.verify(call)
        try:
            outcome = _start(call)
        except PhaseRefusal:
            raise
        except BaseException as exc:  # the handler's failures settle as typed refusals
            refusal = _refusal(call, exc)
            if refusal is None:
                raise
            raise refusal from None
    except BaseException:
        _finished(call, begun)
        raise
    if outcome is None or type(outcome) is dict or not inspect.isawaitable(outcome):  # the common results first
        call.raw_output = outcome
        _finished(call, begun)
        return None
    return _execute_awaitable(call, outcome, begun)


async def _execute_awaitable(call: Call, outcome: Awaitable[Any], begun: float) -> None:
    timeout = call.timeout or call.target.entry.timeout(call.pipeline.registry.limits)
    cancel_timer = call.pipeline.registry.clock.call_later(timeout, lambda: call.settle.abort("timeout"))
    try:
        call.raw_output = await _guarded_async(call, outcome)
    finally:
        cancel_timer()
        _finished(call, begun)


def _finished(call: Call, begun: float) -> None:
    call.pipeline.active.discard(call.settle)
    call.untrack()
    ended = call.ended_at = call.pipeline.registry.now()
    call.execution = ended - begun


def _start(call: Call) -> Any:
    """Call the handler; its result, or an awaitable of it."""
    target = call.target
    reg, entry = target.reg, target.entry
    if isinstance(entry, ObservationEntry):
        return entry.binding.read(ReadContext(entry.capability_id, reg.registration_id, call.consumer, call.host))
    confirmation = None
    record = call.confirmation
    if record is not None and record.approved_at is not None:
        confirmation = {"id": record.id, "approvedAt": iso(record.approved_at)}
    still = None if record is None or record.freshness is None else (lambda: previews.still_approved(call))
    ctx = ActionContext(
        entry.capability_id,
        reg.registration_id,
        call.consumer,
        call.invocation_id,
        call.signal,
        call.host,
        confirmation,
        still,
    )
    match entry:
        case ActionEntry():
            return entry.binding.execute(call.value, ctx)
        case ProcedureEntry():
            executor = call.pipeline.executor
            if executor is None:
                raise PhaseRefusal(failures.no_executor())
            return executor(entry.capability_id, call.effective, ctx)


async def _guarded_async(call: Call, outcome: Awaitable[Any]) -> Any:
    """Await the handler's awaitable, its failures settled as in :func:`execute`."""
    try:
        return await _await_or_abort(call, outcome)
    except PhaseRefusal:
        raise
    except BaseException as exc:
        refusal = _refusal(call, exc)
        if refusal is None:
            raise
        raise refusal from None


def _refusal(call: Call, exc: BaseException) -> PhaseRefusal | None:
    """The refusal a handler's exception settles as; ``None``: let it propagate."""
    if isinstance(exc, CapabilityFailure):
        return PhaseRefusal(exc.error)
    if isinstance(exc, asyncio.CancelledError):
        current = asyncio.current_task()
        if current is not None and current.cancelling():  # our caller was cancelled
            return None
        return PhaseRefusal(_handler_failed(call))  # the handler cancelled itself
    if isinstance(exc, Exception):
        return PhaseRefusal(_handler_failed(call))
    return None


def _handler_failed(call: Call) -> ErrorPayload:
    """A handler raised: CANCELLED if it was told to stop, else a sanitized failure."""
    entry = call.target.entry
    if call.signal.aborted:
        log.info("handler of %s stopped after its signal aborted", entry.capability_id)
        return failures.cancelled()
    log.exception("handler of %s raised", entry.capability_id)
    return failures.handler_failed(procedure=isinstance(entry, ProcedureEntry))


async def _await_or_abort(call: Call, outcome: Awaitable[Any]) -> Any:
    # Only a coroutine runs in a task we own: cancelling it stops it at its next await. Any
    # other awaitable (a JS promise, a future from elsewhere) keeps running if we cancel ours.
    stoppable = inspect.iscoroutine(outcome)
    task = asyncio.ensure_future(outcome)
    if call.settle.aborted:
        reason = call.settle.reason or "cancelled"
    else:
        aborted: asyncio.Future[str] = asyncio.get_running_loop().create_future()

        def on_abort(why: str) -> None:
            # A handler that had already settled when the abort came wins, even if this
            # coroutine has not resumed yet; an abort that came first wins over a later
            # settlement in the same loop turn.
            if not task.done() and not aborted.done():
                aborted.set_result(why)

        remove = call.settle.add_listener(on_abort)
        try:
            await asyncio.wait({task, aborted}, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            call.settle.abort("cancelled")
            task.cancel()  # our caller is gone: stop the handler too, without waiting
            task.add_done_callback(lambda t: _late(call, t, "cancelled"))
            raise
        finally:
            remove()
        if not aborted.done():
            if task.cancelled():  # the handler cancelled itself (e.g. raise_if_aborted())
                raise _HandlerCancelled()
            return task.result()
        reason = aborted.result()
    handler = await _stop_handler(call, task, stoppable)
    task.add_done_callback(lambda t: _late(call, t, reason))
    raise PhaseRefusal(abort_error(call, reason, during_execution=True, handler=handler))


async def _stop_handler(call: Call, task: asyncio.Future[Any], stoppable: bool) -> HandlerFate:
    """Stop a handler the call has given up on, so that its effect cannot land after the
    agent was told the call ended. Its signal has already fired; now its task is cancelled
    and given ``HANDLER_STOP_GRACE`` seconds (registry clock) to unwind. "stopped": it is
    no longer running; "unknown": it may still be running (it ignored the cancellation, or
    it is not a coroutine this loop can stop)."""
    if task.done():
        return "stopped"
    task.cancel()
    if not stoppable:
        return "unknown"
    grace: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def grace_over() -> None:
        if not grace.done():
            grace.set_result(None)

    cancel_timer = call.pipeline.registry.clock.call_later(HANDLER_STOP_GRACE, grace_over)
    try:
        await asyncio.wait({task, grace}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        cancel_timer()
        grace.cancel()
    return "stopped" if task.done() else "unknown"


def _late(call: Call, task: asyncio.Future[Any], reason: str) -> None:
    status = "cancelled" if task.cancelled() else ("error" if task.exception() is not None else "ok")
    log.info("late settlement of %s after %s (%s)", call.invocation_id, reason, status)
    call.pipeline.audit(
        "late-settlement",
        capability_id=str(call.request.capability_id),
        invocation_id=call.invocation_id,
        consumer_id=call.consumer.id,
        status=status,
        detail=reason,
    )


def abort_error(call: Call, reason: str, *, during_execution: bool, handler: HandlerFate | None = None) -> ErrorPayload:
    """The answer for a call given up on: why (timeout, disposal, unmount, cancel) and whether
    its handler was stopped."""
    entry = call.target.entry
    if reason == "timeout":
        seconds = call.timeout or entry.timeout(call.pipeline.registry.limits)
        return failures.timed_out(seconds, idempotent=entry.idempotent, handler=handler)
    if reason == "disposed":
        return failures.shut_down()
    if reason == "unmounted":
        return failures.unmounted_mid_flight() if during_execution else failures.unmounted_before_run()
    if handler == "unknown":
        return failures.cancelled_unstoppable()
    return failures.cancelled()

