"""The invocation pipeline: ten phases in a fixed order; the first refusal wins.

 1 identity         well-formed envelope; dedupe by (consumer key, invocation id)
 2 resolution       capability, instance, registration, staleness tokens (hidden = not found)
 3 availability     enabled, pushed overrides, when(), discovery 'disable'
 4 authorization    pre-input policies (they cannot see agent input)
 5 effective input  locked fields, bindings, full-schema validation
 6 invoke policy    input-aware policies and confirmation over the validated effective input
 7 precondition     author's state check against live state
 8 admission        action queue / observation pool
 9 execution        handler or procedure executor with signal and timeout; a call given up on
                    stops its handler's task (signal, cancel, short grace) before settling
10 settlement       output checks, result, events, audit, policy hooks, identity cache

``start`` is the whole story: identity admits the call, ``PHASES`` run in order over one
per-call context, settlement always closes it. It runs synchronously until a phase must wait,
and hands back the rest as an awaitable only then; ``invoke`` awaits it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from ..consumer import ANONYMOUS, Consumer
from ..contracts.context import CancelSignal
from ..errors import ErrorPayload
from ..events import make_event
from . import (
    admission,
    authorization,
    availability,
    effective_input,
    execution,
    failures,
    identity,
    invoke_policy,
    precondition,
    resolution,
    settlement,
)
from .call import Admitted, Call, Wait
from .execution import HANDLER_STOP_GRACE
from .failures import PhaseRefusal
from .invocation import Invocation, InvocationResult
from .runtime import Pipeline, ProcedureExecutor

__all__ = ["HANDLER_STOP_GRACE", "PHASES", "Pipeline", "ProcedureExecutor", "invoke", "start"]

log = logging.getLogger("agentsurface")

Phase = Callable[[Call], Wait]

#: Phases 2 to 9, in order. Identity (1) admits a call before it has a context; settlement
#: (10) closes every call that entered, whatever phase refused it.
PHASES: tuple[Phase, ...] = (
    resolution.resolve,  # 2
    availability.check,  # 3
    authorization.authorize,  # 4
    effective_input.build,  # 5
    invoke_policy.decide,  # 6
    precondition.check,  # 7
    admission.admit,  # 8
    execution.execute,  # 9
)


def start(
    pipeline: Pipeline,
    request: Invocation | Mapping[str, Any],
    consumer: Consumer | None,
    signal: CancelSignal | None,
    timeout: float | None,
) -> InvocationResult | Awaitable[InvocationResult]:
    """Run one invocation as far as it goes without waiting: its result, or (when a phase must
    wait: a queue, a policy, an async handler) an awaitable of it that must be awaited for the
    call to settle, and that has not started anything yet. Never raises for anything an agent did.

    Most calls never wait, and answer here with no coroutine made and no loop turn taken."""
    req = request if isinstance(request, Invocation) else Invocation.from_json(request)
    who = consumer or ANONYMOUS
    entered = identity.enter(pipeline, req, who)  # 1
    if isinstance(entered, InvocationResult):
        return entered
    if isinstance(entered, asyncio.Future):
        return asyncio.shield(entered)
    registry = pipeline.registry
    call = Call(  # positional (a third cheaper than by keyword): the fields in Call's order
        pipeline,
        req,
        entered.invocation_id,
        who,
        registry.host_context(),  # host
        timeout,
        signal is not None and signal.aborted,  # cancelled_before_start
        registry.now(),  # started
        registry.revision,  # start_version
        entered.plain_input,
    )
    try:
        if call.pipeline.events.wants("invocation-started"):
            _announce(call)
        outcome = _run_now(call)
    except BaseException:
        _close(call, entered, None, None)
        raise
    if isinstance(outcome, InvocationResult):
        return _close(call, entered, outcome, None)
    # The caller's signal can fire only while the call waits (nothing else runs until then):
    # it is heard from here on (at once if it already fired).
    remove_external = (
        signal.add_listener(lambda _r: call.settle.abort("cancelled")) if signal is not None else None
    )
    return _finish(call, entered, remove_external, *outcome)


async def invoke(
    pipeline: Pipeline,
    request: Invocation | Mapping[str, Any],
    consumer: Consumer | None,
    signal: CancelSignal | None,
    timeout: float | None,
) -> InvocationResult:
    """Run one invocation. Returns a result value; never raises for anything an agent did."""
    outcome = start(pipeline, request, consumer, signal, timeout)
    return outcome if isinstance(outcome, InvocationResult) else await outcome


def _announce(call: Call) -> None:
    call.pipeline.emit(
        make_event(
            "invocation-started",
            invocationId=call.invocation_id,
            capabilityId=str(call.request.capability_id),
            consumerId=call.consumer.id,
        )
    )


def _close(
    call: Call, entered: Admitted, result: InvocationResult | None, remove_external: Callable[[], None] | None
) -> InvocationResult:
    """Every call that entered ends here, settled or not (the caller's task was cancelled)."""
    if remove_external is not None:
        remove_external()
    if result is None:  # the caller's task itself was cancelled mid-pipeline
        call.settle.abort("cancelled")
        result = settlement.settle(call, failures.cancelled())  # 10
    settlement.remember(call.pipeline, entered, result, keep_lazy=call.small_input, at=call.settled_at)
    return result


def _run_now(call: Call) -> InvocationResult | tuple[int, Awaitable[None]]:
    """Phases 2 to 10 up to the first that must wait: the settled result, or that phase's
    index and awaitable (the admission slot, if taken, is then still held)."""
    waiting = False
    try:
        try:
            for index, phase in enumerate(PHASES):
                pending = phase(call)
                if pending is not None:
                    waiting = True
                    return index, pending
        finally:
            if not waiting and call.release is not None:
                call.release()
        output = settlement.check_output(call)  # 10
    except Exception as exc:
        return settlement.settle(call, _error_of(call, exc))  # 10
    return settlement.settle(call, None, output)


async def _finish(
    call: Call,
    entered: Admitted,
    remove_external: Callable[[], None] | None,
    index: int,
    pending: Awaitable[None],
) -> InvocationResult:
    """The rest of a call that had to wait at phase ``PHASES[index]``."""
    result: InvocationResult | None = None
    try:
        result = await _run_rest(call, index, pending)
    finally:
        result = _close(call, entered, result, remove_external)
    return result


async def _run_rest(call: Call, index: int, pending: Awaitable[None]) -> InvocationResult:
    try:
        try:
            await pending
            for phase in PHASES[index + 1 :]:
                later = phase(call)
                if later is not None:
                    await later
        finally:
            if call.release is not None:
                call.release()
        output = settlement.check_output(call)  # 10
    except Exception as exc:
        return settlement.settle(call, _error_of(call, exc))  # 10
    return settlement.settle(call, None, output)


def _error_of(call: Call, exc: Exception) -> ErrorPayload:
    """A phase's refusal, or (from inside the handler of ``exc``) a defect in a validator,
    policy plumbing or the library itself: the caller still gets a typed result and the
    registry keeps serving."""
    if isinstance(exc, PhaseRefusal):
        return exc.err
    log.exception("invocation %s failed unexpectedly", call.invocation_id)
    return failures.internal_failure()
