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

``invoke`` is the whole story: identity admits the call, ``PHASES`` run in order over one
per-call context, settlement always closes it.
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
from ..jsonvalue import JsonValue
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
from .call import Call
from .execution import HANDLER_STOP_GRACE
from .failures import PhaseRefusal
from .invocation import Invocation, InvocationResult
from .runtime import Pipeline, ProcedureExecutor

__all__ = ["HANDLER_STOP_GRACE", "PHASES", "Pipeline", "ProcedureExecutor", "invoke"]

log = logging.getLogger("agent_surface")

Phase = Callable[[Call], Awaitable[None] | None]

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


async def invoke(
    pipeline: Pipeline,
    request: Invocation | Mapping[str, Any],
    consumer: Consumer | None,
    signal: CancelSignal | None,
    timeout: float | None,
) -> InvocationResult:
    """Run one invocation. Returns a result value; never raises for anything an agent did."""
    req = request if isinstance(request, Invocation) else Invocation.from_json(request)
    who = consumer or ANONYMOUS
    entered = identity.enter(pipeline, req, who)  # 1
    if isinstance(entered, InvocationResult):
        return entered
    if isinstance(entered, asyncio.Future):
        return await asyncio.shield(entered)
    registry = pipeline.registry
    call = Call(
        pipeline,
        req,
        entered.invocation_id,
        who,
        host=registry.host_context(),
        timeout=timeout,
        cancelled_before_start=signal is not None and signal.aborted,
        started=registry.now(),
        start_version=registry.revision,
        plain_input=entered.plain_input,
    )
    remove_external = (
        signal.add_listener(lambda _r: call.settle.abort("cancelled")) if signal is not None else None
    )
    result: InvocationResult | None = None
    try:
        result = await _run(call)
    finally:
        if remove_external is not None:
            remove_external()
        if result is None:  # the caller's task itself was cancelled mid-pipeline
            call.settle.abort("cancelled")
            result = settlement.settle(call, failures.cancelled())  # 10
        settlement.remember(pipeline, entered, result, keep_lazy=call.small_input)
    return result


async def _run(call: Call) -> InvocationResult:
    if call.pipeline.events.wants("invocation-started"):
        call.pipeline.emit(
            make_event(
                "invocation-started",
                invocationId=call.invocation_id,
                capabilityId=str(call.request.capability_id),
                consumerId=call.consumer.id,
            )
        )
    output: JsonValue = None
    err: ErrorPayload | None = None
    try:
        try:
            for phase in PHASES:
                pending = phase(call)
                if pending is not None:
                    await pending
        finally:
            if call.release is not None:
                call.release()
        output = settlement.check_output(call)  # 10
    except PhaseRefusal as refusal:
        err = refusal.err
    except Exception:
        # A defect in a validator, policy plumbing or the library itself: the caller still
        # gets a typed result and the registry keeps serving.
        log.exception("invocation %s failed unexpectedly", call.invocation_id)
        err = failures.internal_failure()
    return settlement.settle(call, err, output)  # 10
