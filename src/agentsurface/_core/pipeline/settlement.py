"""Phase 10, settlement: output checks, the result, events, audit, policy hooks and the
identity cache, in that order and in this one place."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from ..audit import MemoryAuditSink, Settled, ms
from ..clock import iso
from ..errors import ErrorPayload
from ..events import make_event
from ..jsonvalue import JsonValue, NotJsonError, json_size_at_most, to_json_value
from ..registrations.entries import CapabilityEntry
from ..schemas.accept import UNPROVEN
from ..schemas.schema import JsonSchemaSchema, Valid, validate_output
from . import failures
from .call import Admitted, Call
from .dedupe import LazyFingerprint
from .failures import PhaseRefusal
from .invocation import Invocation, InvocationResult

if TYPE_CHECKING:
    from .runtime import Pipeline

log = logging.getLogger("agentsurface")


def check_output(call: Call) -> JsonValue:
    """The handler's result as JSON, checked against the output schema and the size limit."""
    value = _output_json(call.target.entry, call.raw_output)
    max_bytes = call.pipeline.registry.limits.max_output_bytes
    if value is not None and not json_size_at_most(value, max_bytes):
        raise PhaseRefusal(failures.output_too_large(max_bytes))
    return value


def _output_json(entry: CapabilityEntry, raw: Any) -> JsonValue:
    schema = entry.output
    if type(schema) is JsonSchemaSchema:  # the common valid output, proven without a result built
        proven = schema.proven(raw)
        if proven is not UNPROVEN:
            return proven  # type: ignore[no-any-return]
    if schema is not None:
        outcome = validate_output(schema, raw)
        if not isinstance(outcome, Valid):
            log.error("output of %s failed its schema: %s", entry.capability_id, outcome.issues)
            raise PhaseRefusal(failures.output_invalid())
        return outcome.json
    try:
        return to_json_value(raw)
    except NotJsonError as exc:
        log.error("output of %s is not JSON: %s", entry.capability_id, exc)
        raise PhaseRefusal(failures.output_invalid()) from None


def result(
    pipeline: Pipeline,
    request: Invocation,
    invocation_id: str,
    err: ErrorPayload | None,
    output: JsonValue = None,
    start_version: int | None = None,
) -> InvocationResult:
    version = pipeline.registry.revision
    return InvocationResult(  # status, invocation id, capability id, version, output, error, changed
        "ok" if err is None else "error",
        invocation_id,
        str(request.capability_id),
        str(version),
        output,
        err,
        start_version is not None and version != start_version,
    )


def _confirmation_of(request: Invocation, err: ErrorPayload | None) -> str | None:
    """The confirmation a call asked for or carried: joins a confirmed call's two rounds."""
    if err is not None and err.code == "CONFIRMATION_REQUIRED" and err.details is not None:
        cid = err.details.get("confirmationId")
        return cid if isinstance(cid, str) else None
    return request.confirmation_id if isinstance(request.confirmation_id, str) else None


def settle(call: Call, err: ErrorPayload | None, output: JsonValue = None) -> InvocationResult:
    """Settle a call that entered the pipeline: its result, then what observes it."""
    pipeline = call.pipeline
    settled_result = result(pipeline, call.request, call.invocation_id, err, output, call.start_version)
    code = settled_result.code
    call.settled = True
    # Settlement follows the handler's end with nothing to wait for: that clock read serves.
    now = call.ended_at
    if now is None:
        now = pipeline.registry.now()
    call.settled_at = now
    if pipeline.events.wants("invocation-settled"):
        pipeline.emit(
            make_event(
                "invocation-settled",
                invocationId=call.invocation_id,
                capabilityId=settled_result.capability_id,
                status=settled_result.status,
                code=code,
                durationMs=round((now - call.started) * 1000, 3),
                confirmationId=_confirmation_of(call.request, err),
                # "read" for an observation: nothing of the app's state can have changed.
                effect=None if call.resolved is None else call.resolved.entry.effect,
            )
        )
    entry = None if call.resolved is None else call.resolved.entry
    level = "metadata" if entry is None else entry.audit
    if level == "none" and not call.settling_policies:
        return settled_result
    registration_id = None if call.resolved is None else call.resolved.reg.registration_id
    record: Settled | None = None
    if call.invoke_ctx is not None and call.settling_policies:
        record = _settled(call, settled_result, registration_id, now)
        for policy in call.settling_policies:
            try:
                policy.on_settled(call.invoke_ctx, record)
            except Exception:
                log.exception("policy %s failed hearing a settlement", policy.name)
    if level == "none":
        return settled_result
    sink = pipeline.audit_sink
    if type(sink) is MemoryAuditSink:  # the default sink: the record is built when read
        full = level == "full"  # below it the record drops input and output: the ring must not hold them
        sink.note_settled(
            (
                now,
                level,
                settled_result.capability_id,
                registration_id,
                call.invocation_id,
                call.consumer.id,
                settled_result.status,
                code,
                now - call.started,
                call.queue_wait,
                call.execution,
                call.effective if full else None,
                settled_result.output if full else None,
            )
        )
    else:
        if record is None:
            record = _settled(call, settled_result, registration_id, now)
        pipeline.record(record.audit_event(level))
    return settled_result


def _settled(call: Call, settled_result: InvocationResult, registration_id: str | None, now: float) -> Settled:
    return Settled(  # positional, in Settled's order: made for every call that policies hear
        iso(now),
        settled_result.capability_id,
        registration_id,
        call.invocation_id,
        call.consumer.id,
        settled_result.status,
        settled_result.code,
        round((now - call.started) * 1000, 3),
        ms(call.queue_wait),
        ms(call.execution),
        call.effective,
        settled_result.output,
    )


def remember(
    pipeline: Pipeline,
    admitted: Admitted,
    settled_result: InvocationResult,
    *,
    keep_lazy: bool,
    at: float | None = None,
) -> None:
    """Cache the terminal result for its (consumer, invocation id) and answer joined callers.

    A lazy fingerprint keeps its request only when phase 5 found the input small (``keep_lazy``):
    otherwise it is digested now, so a cached result never holds a large input. ``at``: when it
    settled (default: now)."""
    error = settled_result.error
    cacheable = error is None or error.cacheable
    if cacheable and not keep_lazy and isinstance(admitted.fingerprint, LazyFingerprint):
        str(admitted.fingerprint)  # digests it and lets the input go
    joined = pipeline.dedupe.finish(admitted.key, admitted.fingerprint, settled_result, cacheable, at)
    if joined is not None and not joined.done():
        joined.set_result(settled_result)
