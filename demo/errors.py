"""Agent-facing refusals of the devices API.

Every refusal is an :class:`ApiError` whose body is ``{"error": {"code", "message", "retry",
"details"?}}``: codes, retry values and details keys come from the closed agent-facing error matrix
(``reference/error-matrix.json``); messages are written here, so they never carry SQL, stack traces
or the caller's input values.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, TypeAlias

from .db import Json, Role

Code: TypeAlias = Literal[
    "CAPABILITY_NOT_FOUND",
    "INVALID_INPUT",
    "NOT_AUTHENTICATED",
    "NOT_AUTHORIZED",
    "PRECONDITION_FAILED",
    "RATE_LIMITED",
    "EXECUTION_FAILED",
]
Retry: TypeAlias = Literal["no", "after-refresh", "after-delay", "with-changes"]
MAX_ISSUES = 20


@dataclass(frozen=True, slots=True)
class Issue:
    """Where (JSON pointer) and what; never the offending value."""

    path: str
    message: str

    def to_json(self) -> Json:
        return {"path": self.path, "message": self.message}


class ApiError(Exception):
    """A refusal, already in its agent-facing form."""

    def __init__(
        self,
        status: int,
        code: Code,
        message: str,
        retry: Retry,
        details: dict[str, Json] | None = None,
        *,
        headers: Mapping[str, str] | None = None,
        reason: str | None = None,
    ) -> None:
        super().__init__(f"{code}: {message}")
        self.status = status
        self.code = code
        self.message = message
        self.retry = retry
        self.details = details
        self.headers = dict(headers or {})
        self.reason = reason  # for the audit row

    def body(self) -> Json:
        error: dict[str, Json] = {"code": self.code, "message": self.message, "retry": self.retry}
        if self.details:
            error["details"] = self.details
        return {"error": error}


def invalid_input(issues: Sequence[Issue], status: int = 400, message: str | None = None) -> ApiError:
    listed: list[Json] = [i.to_json() for i in issues[:MAX_ISSUES]]
    return ApiError(
        status,
        "INVALID_INPUT",
        message or "The request input is invalid; see details.issues, fix the input and retry.",
        "with-changes",
        {"issues": listed},
        reason="invalid-input",
    )


def not_authenticated() -> ApiError:
    return ApiError(
        401,
        "NOT_AUTHENTICATED",
        "Authentication required: send a valid access token as 'Authorization: Bearer <token>'.",
        "no",
        headers={"WWW-Authenticate": 'Bearer realm="devices"'},
        reason="missing-or-unknown-token",
    )


def not_authorized(role: Role, operation: str, needed: Role) -> ApiError:
    return ApiError(
        403,
        "NOT_AUTHORIZED",
        f"Your role ({role}) may not call {operation}; it needs the {needed} role or higher.",
        "no",
        {"origin": "server"},
        reason="role",
    )


def unknown_devices(ids: Sequence[str]) -> ApiError:
    shown = ", ".join(ids[:10]) + (", ..." if len(ids) > 10 else "")  # ids matched DEVICE_ID already
    return ApiError(
        404,
        "PRECONDITION_FAILED",
        f"{len(ids)} requested device id(s) do not exist in your tenant ({shown}); nothing was changed. "
        "Query the devices again and retry with existing ids.",
        "with-changes",
        {"reason": "unknown-device"},
        reason="unknown-device",
    )


def rate_limited(retry_after_ms: int) -> ApiError:
    return ApiError(
        429,
        "RATE_LIMITED",
        f"Too many requests; retry after {retry_after_ms} ms.",
        "after-delay",
        {"reason": "rate-limit", "retryAfterMs": retry_after_ms},
        headers={"Retry-After": str(max(1, math.ceil(retry_after_ms / 1000)))},
        reason="rate-limit",
    )


def route_not_found(procedures: Sequence[str]) -> ApiError:
    return ApiError(
        404,
        "CAPABILITY_NOT_FOUND",
        "There is no such API route. Routes: GET /api/session, GET /api/devices, POST /api/procedures/<name> "
        f"with <name> one of {', '.join(procedures)}.",
        "after-refresh",
        reason="unknown-route",
    )


def method_not_allowed(allowed: str) -> ApiError:
    return ApiError(
        405,
        "INVALID_INPUT",
        f"This route only accepts {allowed}.",
        "with-changes",
        {"issues": [Issue("/", f"use {allowed}").to_json()]},
        headers={"Allow": allowed},
        reason="method",
    )


def execution_failed(*, transient: bool) -> ApiError:
    if transient:
        return ApiError(
            503,
            "EXECUTION_FAILED",
            "The server is busy and did not complete the operation; nothing was changed. Retry shortly.",
            "after-delay",
            {"reason": "storage-busy", "transient": True, "retryAfterMs": 1000},
            headers={"Retry-After": "1"},
            reason="storage-busy",
        )
    return ApiError(
        500,
        "EXECUTION_FAILED",
        "The server failed to complete the operation; nothing was changed.",
        "no",
        {"reason": "internal-error", "transient": False},
        reason="internal-error",
    )
