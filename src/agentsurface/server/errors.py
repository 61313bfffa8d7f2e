"""Typed refusals the server answers with: the closed code set, agent-safe messages only.

Implementations refuse by raising ``CapabilityFailure`` (e.g. ``precondition_failed(...)``);
anything else they raise becomes a sanitized EXECUTION_FAILED and is logged, never sent.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from starlette.responses import JSONResponse

from .. import CapabilityFailure, ErrorPayload
from .._core.errors import ERROR_MATRIX, AgentSurfaceError, ErrorCode, error
from .._core.jsonvalue import JsonValue
from ..bridge.wire import SERVER_CODES, allowed_retry, error_body, http_status


class Refusal(AgentSurfaceError):
    """A refusal on its way to the HTTP response (``status`` overrides the code's default)."""

    def __init__(self, error: ErrorPayload, *, status: int | None = None) -> None:
        super().__init__(f"{error.code}: {error.message}")
        self.error = error
        self.status = status if status is not None else http_status(error)
        # Top-level fields of the refusal body beside ``error`` (a server-minted challenge, for
        # the page's bridge: the bridge strips them before anything reaches the agent).
        self.extra: dict[str, JsonValue] = {}


def capability_error(code: ErrorCode, message: str, retry: str | None = None, **details: JsonValue) -> ErrorPayload:
    return error(code, message, allowed_retry(code, retry), **details)


def invalid_input(message: str, issues: Sequence[tuple[str, str]]) -> ErrorPayload:
    listed: list[JsonValue] = [{"path": path, "message": text} for path, text in issues]
    return capability_error("INVALID_INPUT", message, issues=listed)


def not_found() -> ErrorPayload:
    return capability_error("CAPABILITY_NOT_FOUND", "This procedure is not served here. Refresh the tool list.")


def not_authenticated() -> ErrorPayload:
    return capability_error("NOT_AUTHENTICATED", "The server did not recognize the caller. Ask the user to sign in.")


def not_authorized() -> ErrorPayload:
    return capability_error(
        "NOT_AUTHORIZED", "The server does not permit this call for the current user.", origin="server"
    )


def precondition_failed(reason: str, message: str) -> CapabilityFailure:
    """For implementations: ``raise precondition_failed("unknown-device", "...")``."""
    return CapabilityFailure(capability_error("PRECONDITION_FAILED", message, reason=reason))


def rate_limited(retry_after_ms: int, *, reason: str = "server-rate-limit") -> ErrorPayload:
    message = (
        f"Too many approvals are waiting for this user; wait {retry_after_ms} ms, or finish one first."
        if reason == "challenge-cap"
        else f"Too many calls; wait {retry_after_ms} ms before the next one."
    )
    return capability_error("RATE_LIMITED", message, reason=reason, retryAfterMs=retry_after_ms)


def execution_failed(*, transient: bool) -> ErrorPayload:
    if transient:
        return capability_error(
            "EXECUTION_FAILED",
            "The server is busy and applied nothing; retry shortly.",
            "after-delay",
            reason="server-busy",
            transient=True,
            retryAfterMs=1000,
        )
    return capability_error(
        "EXECUTION_FAILED", "The server could not complete the call; nothing was applied.", reason="server-error"
    )


def sanitized(error: ErrorPayload) -> ErrorPayload:
    """What an implementation raised, kept only if it is a server code with matrix details."""
    if error.code not in SERVER_CODES:
        return execution_failed(transient=False)
    allowed = set(ERROR_MATRIX[error.code].details)
    details = {k: v for k, v in (error.details or {}).items() if k in allowed}
    if "origin" in allowed and error.code in ("NOT_AUTHORIZED", "CONFIRMATION_REQUIRED"):
        details["origin"] = "server"
    return ErrorPayload(error.code, error.message, error.retry, details or None)


def retry_after_header(error: ErrorPayload) -> dict[str, str] | None:
    """``{"Retry-After": seconds}`` for a rate-limited or transient refusal that says when to
    retry (``retryAfterMs``, rounded up to whole seconds), else None."""
    retry_after = (error.details or {}).get("retryAfterMs")
    if error.code in ("RATE_LIMITED", "EXECUTION_FAILED") and isinstance(retry_after, int):
        return {"Retry-After": str(max(1, -(-retry_after // 1000)))}
    return None


def refusal_response(refusal: Refusal, headers: Mapping[str, str] | None = None) -> JSONResponse:
    """A refusal as the procedure server answers it: the typed JSON body, its status, and
    ``Retry-After`` when it says when to retry (for an app's own routes beside the server)."""
    return JSONResponse(
        error_body(refusal.error), refusal.status, headers={**(retry_after_header(refusal.error) or {}), **(headers or {})}
    )
