"""Every agent-facing error the pipeline answers with: one named constructor per situation.

Messages tell the agent what to do next; details carry only the agent-safe keys of the error
matrix. Phases raise ``PhaseRefusal(...)`` with one of these; the first refusal settles the call.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..errors import AgentSurfaceError, ErrorPayload, Retry, error, surface_shut_down
from ..jsonvalue import JsonValue
from ..pointer import ROOT, json_pointer
from ..schemas.schema import Issue
from .confirmation import ConfirmationRecord
from .invocation import PreconditionFailure


class PhaseRefusal(AgentSurfaceError):
    """A phase stopped the call with this agent-facing error."""

    def __init__(self, err: ErrorPayload) -> None:
        self.err = err


# ---- phase 1: identity and the request envelope


def bad_invocation_id() -> ErrorPayload:
    return error("INVALID_INPUT", "invocationId must be a non-empty string of at most 256 characters")


def malformed_envelope(field: str) -> ErrorPayload:
    return error(
        "INVALID_INPUT",
        f"{field} must be a string. Fix the request and retry.",
        issues=[{"path": ROOT, "message": f"{field} must be a string"}],
    )


def not_plain_json() -> ErrorPayload:
    return error(
        "INVALID_INPUT",
        "The input is not plain JSON or is nested too deeply. Fix it and retry.",
        issues=[{"path": ROOT, "message": "value is not JSON or is nested too deeply"}],
    )


def invocation_conflict() -> ErrorPayload:
    return error(
        "INVOCATION_CONFLICT",
        "This invocationId was already used for a different request; use a fresh invocationId.",
        reason="id-reused-with-different-request",
    )


# ---- phase 2: resolution


def no_capability_id() -> ErrorPayload:
    return error("CAPABILITY_NOT_FOUND", "No capability id was given. Refresh the surface and pick one.")


def not_found(capability_id: str) -> ErrorPayload:
    return error("CAPABILITY_NOT_FOUND", f"{capability_id} is not on the current surface. Refresh the surface.")


def page_reloaded() -> ErrorPayload:
    return error(
        "STALE_CAPABILITY", "The page was reloaded since discovery. Refresh the surface.", reason="surface-reloaded"
    )


def registration_replaced(live_registration_id: str) -> ErrorPayload:
    return error(
        "STALE_CAPABILITY",
        "The component was re-mounted since discovery. Refresh the surface.",
        reason="registration-replaced",
        liveRegistrationId=live_registration_id,
    )


def registration_unknown(live_registration_id: str) -> ErrorPayload:
    return error(
        "STALE_CAPABILITY",
        "This registration is unknown here (was the page reloaded?). Refresh the surface.",
        reason="surface-reloaded",
        liveRegistrationId=live_registration_id,
    )


def surface_version_mismatch(live_registration_id: str) -> ErrorPayload:
    return error(
        "STALE_CAPABILITY",
        "The surface changed since discovery; refresh it before this irreversible call.",
        reason="surface-version-mismatch",
        liveRegistrationId=live_registration_id,
    )


def unmounted_before_run() -> ErrorPayload:
    return error(
        "COMPONENT_UNMOUNTED",
        "The component was unmounted before the call ran. Refresh the surface.",
        phase="resolve",
    )


def unmounted() -> ErrorPayload:
    return error("COMPONENT_UNMOUNTED", "The component was unmounted. Refresh the surface.", phase="resolve")


def ambiguous(instances: list[JsonValue]) -> ErrorPayload:
    return error(
        "AMBIGUOUS_INSTANCE",
        "Several instances match; retry with an instanceId or registrationId.",
        instances=instances,
    )


# ---- phase 3: availability


def not_available(capability_id: str, reason: str) -> ErrorPayload:
    return error(
        "CAPABILITY_NOT_AVAILABLE",
        f"{capability_id} is not available right now: {reason}. Do the enabling step, then retry.",
        reason=reason,
    )


# ---- phases 4 and 6: policies


def policy_failed() -> ErrorPayload:
    return error("NOT_AUTHORIZED", "This call is not permitted.", origin="client")


# ---- phase 5: effective input


def invalid_input(issues: Sequence[Issue]) -> ErrorPayload:
    first = issues[0] if issues else Issue(ROOT, "invalid")
    return error(
        "INVALID_INPUT",
        f"The input is invalid at {first.path}: {first.message}. Fix it and retry.",
        issues=[i.to_json() for i in issues],
    )


def locked_fields(locked: list[str]) -> ErrorPayload:
    return error(
        "INVALID_INPUT",
        "Some fields are bound to what the user has on screen; do not supply them.",
        issues=[{"path": json_pointer((f,)), "message": "bound to UI state; remove it"} for f in locked],
        lockedFields=list(locked),
    )


def binding_failed() -> ErrorPayload:
    return error(
        "PRECONDITION_FAILED",
        "The view's bound values could not be read; refresh and retry.",
        "after-refresh",
        reason="binding-failed",
    )


# ---- phase 6: confirmation

_CONFIRMATION_INVALID = {
    "denied": "The user denied this request. Do not retry it.",
    "expired": "The approval expired. Ask again if still wanted.",
    "consumed": "This approval was already used. Each approval allows one call.",
    "mismatch": "This approval does not match the request; it covers a different input or target.",
    "stale": (
        "Nothing was applied: what this call would change has changed since the user was shown it. "
        "Check the current state, then ask again if still wanted."
    ),
}


def confirmation_required(record: ConfirmationRecord) -> ErrorPayload:
    p = record.pending
    return error(
        "CONFIRMATION_REQUIRED",
        "The user must approve this call. Retry with the confirmationId once approved.",
        confirmationId=p.confirmation_id,
        summary=p.summary,
        expiresAt=p.expires_at,
        effect=p.effect,
        origin="client",
    )


def confirmation_invalid(status: str, person_said: str | None = None) -> ErrorPayload:
    """``person_said``: a denial's reason, in the person's own words (``personSaid``)."""
    retry: Retry = "with-confirmation" if status in ("expired", "stale") else "no"
    message = _CONFIRMATION_INVALID.get(status, _CONFIRMATION_INVALID["mismatch"])
    return error("CONFIRMATION_INVALID", message, retry, reason=status, personSaid=person_said)


def too_many_confirmations(ttl: float) -> ErrorPayload:
    return error(
        "RATE_LIMITED",
        "Too many confirmations are waiting for the user. Retry later.",
        reason="queue-full",
        retryAfterMs=int(ttl * 1000),
    )


def preview_error() -> ErrorPayload:
    """The capability's preview raised (or could not be recomputed before the write)."""
    return error(
        "PRECONDITION_FAILED",
        "What this call would change could not be worked out, so it was not applied. Refresh and retry.",
        "after-refresh",
        reason="preview-error",
    )


def preview_refused(problem: str) -> ErrorPayload:
    """The capability's preview was not one (``preview-invalid``) or too large (``preview-too-large``)."""
    return error(
        "PRECONDITION_FAILED",
        "What this call would change could not be shown to the user, so it was not applied.",
        "after-refresh",
        reason=problem,
    )


# ---- phase 7: precondition


def precondition_error() -> ErrorPayload:
    return error(
        "PRECONDITION_FAILED", "The capability's precondition could not be checked.", reason="precondition-error"
    )


def precondition_failed(outcome: PreconditionFailure) -> ErrorPayload:
    extra = dict(outcome.details or {})
    extra.setdefault("reason", "precondition")
    return ErrorPayload("PRECONDITION_FAILED", outcome.message, "with-changes", extra)


# ---- phase 8: admission


def queue_full(action_timeout: float) -> ErrorPayload:
    return error(
        "RATE_LIMITED",
        "Too many calls are queued for this target. Retry shortly.",
        reason="queue-full",
        retryAfterMs=int(action_timeout * 100),
    )


def cancelled_before_start() -> ErrorPayload:
    return error("CANCELLED", "The invocation was cancelled before it started.")


# ---- phase 9: execution


def cancelled() -> ErrorPayload:
    return error("CANCELLED", "The invocation was cancelled.", "yes")


def cancelled_unstoppable() -> ErrorPayload:
    # A retry could apply the effect twice.
    return error(
        "CANCELLED",
        "The invocation was cancelled but could not be stopped; its effect may still be "
        "applied. Verify state before repeating.",
        "no",
    )


def timed_out(seconds: float, *, idempotent: bool, handler: str | None) -> ErrorPayload:
    if idempotent:
        message = "The call timed out; it is safe to retry."
    elif handler == "unknown":
        message = (
            "The call timed out and could not be stopped; its effect may still be applied. "
            "Verify state before repeating."
        )
    else:
        message = (
            "The call timed out and was stopped; part of its effect may have been applied. "
            "Verify state before repeating."
        )
    return error(
        "TIMEOUT",
        message,
        "yes" if idempotent else "no",
        timeoutMs=int(seconds * 1000),
        idempotent=idempotent,
        handler=handler,
    )


def shut_down() -> ErrorPayload:
    return surface_shut_down()


def unmounted_mid_flight() -> ErrorPayload:
    return error(
        "COMPONENT_UNMOUNTED", "The view changed while acting; verify state before repeating.", phase="mid-flight"
    )


def no_executor() -> ErrorPayload:
    return error("EXECUTION_FAILED", "No procedure executor is installed for domain calls.", reason="transport")


def handler_failed(*, procedure: bool) -> ErrorPayload:
    return error(
        "EXECUTION_FAILED",
        "The call failed while running; its effect may or may not have been applied.",
        reason="transport" if procedure else "handler-error",
    )


def internal_failure() -> ErrorPayload:
    """A defect in a validator, policy plumbing or the library itself."""
    return error("EXECUTION_FAILED", "The call failed inside the page; it was not completed.", reason="handler-error")


# ---- phase 10: settlement


def output_invalid() -> ErrorPayload:
    return error("EXECUTION_FAILED", "The capability returned a malformed result.", reason="output-invalid")


def output_too_large(max_bytes: int) -> ErrorPayload:
    return error(
        "EXECUTION_FAILED",
        f"The result exceeded {max_bytes} bytes and was not returned.",
        reason="output-too-large",
    )
