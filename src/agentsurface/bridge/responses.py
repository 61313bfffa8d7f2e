"""What a server's answer means for the agent: the output, or a typed, agent-safe error.

A typed error from the server keeps its code (if it is one a server may send), a retry the
matrix allows, its message (control characters removed, bounded) and only the matrix's detail
keys with well-shaped values. Anything else (a proxy's HTML 502, a stack trace, an unknown
code) becomes a sanitized error that never repeats what the server said.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, TypeAlias

from .. import CapabilityFailure, ErrorPayload
from .._core.errors import ERROR_MATRIX, ErrorCode, error
from .._core.jsonvalue import JsonValue, NotJsonError, to_json_value
from .._core.records import record
from .transport import TransportResponse
from .wire import SERVER_CODES, allowed_retry

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]+")
MAX_TEXT = 200
MAX_ISSUES = 20
MAX_RETRY_AFTER_MS = 86_400_000
SERVER_ORIGIN_CODES = frozenset({"NOT_AUTHORIZED", "CONFIRMATION_REQUIRED"})


def failure(
    code: ErrorCode, message: str, retry: str | None = None, **details: JsonValue
) -> CapabilityFailure:
    return CapabilityFailure(error(code, message, allowed_retry(code, retry), **details))


def transport_failed() -> CapabilityFailure:
    return failure(
        "EXECUTION_FAILED",
        "The server could not be reached or did not answer. Retry later.",
        "after-delay",
        reason="transport",
        transient=True,
        retryAfterMs=1000,
    )


def _text(value: Any) -> str | None:
    if not isinstance(value, str):
        return None
    clean = _CONTROL.sub(" ", value).strip()
    return clean[:MAX_TEXT] if clean else None


def _issues(value: Any) -> list[JsonValue] | None:
    if not isinstance(value, list):
        return None
    out: list[JsonValue] = []
    for item in value[:MAX_ISSUES]:
        if isinstance(item, Mapping):
            path, message = _text(item.get("path")), _text(item.get("message"))
            if path is not None and message is not None:
                out.append({"path": path, "message": message})
    return out or None


def _detail(key: str, value: Any) -> JsonValue:
    if key == "issues":
        return _issues(value)
    if key in ("lockedFields", "instances"):
        if isinstance(value, list):
            texts = [_text(v) for v in value[:MAX_ISSUES]]
            kept: list[JsonValue] = [t for t in texts if t is not None]
            return kept or None
        return None
    if key in ("transient", "idempotent"):
        return value if isinstance(value, bool) else None
    if key in ("retryAfterMs", "timeoutMs"):
        ok = isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_RETRY_AFTER_MS
        return value if ok else None
    return _text(value)


def typed_error(error: Any) -> CapabilityFailure | None:
    """The agent-safe error for a server's ``error`` object, or None if it is not typed."""
    if not isinstance(error, Mapping) or error.get("code") not in SERVER_CODES:
        return None
    code: ErrorCode = error["code"]
    spec = ERROR_MATRIX[code]
    raw = error.get("details")
    details: dict[str, JsonValue] = {}
    if isinstance(raw, Mapping):
        for key in spec.details:
            if key in raw:
                value = _detail(key, raw[key])
                if value is not None:
                    details[key] = value
    if code in SERVER_ORIGIN_CODES:
        details["origin"] = "server"  # the server refused, whatever it called itself
    message = _text(error.get("message")) or "The server refused the call."
    return CapabilityFailure(ErrorPayload(code, message, allowed_retry(code, error.get("retry")), details or None))


def _retry_after_ms(headers: Mapping[str, str]) -> int:
    value = headers.get("retry-after", "")
    return min(int(value) * 1000, MAX_RETRY_AFTER_MS) if value.isdigit() else 1000


def untyped_error(response: TransportResponse) -> CapabilityFailure:
    """An answer without a typed error: judged by its status alone, nothing of it repeated."""
    status = response.status
    if status == 401:
        return failure("NOT_AUTHENTICATED", "The server did not recognize the caller. Ask the user to sign in.")
    if status == 403:
        return failure("NOT_AUTHORIZED", "The server rejected this call as not authorized.", origin="server")
    if status == 429:
        wait = _retry_after_ms(response.headers)
        return failure(
            "RATE_LIMITED",
            "The server is limiting calls; wait before the next one.",
            reason="server-rate-limit",
            retryAfterMs=wait,
        )
    if status >= 500 or status == 408:
        return failure(
            "EXECUTION_FAILED",
            "The server could not complete the call. Retry later.",
            "after-delay",
            reason="transport",
            transient=True,
            retryAfterMs=_retry_after_ms(response.headers),
        )
    return failure("EXECUTION_FAILED", "The server could not complete the call.", reason="transport")


def _body(response: TransportResponse) -> Any:
    try:
        return json.loads(response.body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None


def output_of(response: TransportResponse) -> JsonValue:
    """The call's output from a server answer, or raise CapabilityFailure for a refusal."""
    body = _body(response)
    if isinstance(body, Mapping) and body.get("ok") is True and "output" in body and 200 <= response.status < 300:
        try:
            return to_json_value(body.get("output"))
        except NotJsonError:
            pass
    elif isinstance(body, Mapping) and body.get("ok") is False:
        typed = typed_error(body.get("error"))
        if typed is not None:
            raise typed
    if 200 <= response.status < 300:
        raise failure("EXECUTION_FAILED", "The server answered in an unexpected form.", reason="transport")
    raise untyped_error(response)


@record
class ServerChallenge:
    """A challenge the server minted for one call (read from a CONFIRMATION_REQUIRED refusal's
    top-level ``challenge`` field; only the bridge and the page's presence hook see it)."""

    id: str
    procedure: str
    level: str  # "confirm" or "webauthn"
    expires_at: str
    nonce: str  # base64url of the bytes a passkey assertion signs


Presence: TypeAlias = Callable[[str, JsonValue, ServerChallenge], Awaitable[dict[str, Any]]]
"""``presence(procedure_id, input, challenge) -> webauthn payload`` for a ``webauthn`` challenge."""

_CHALLENGE_ID = re.compile(r"[\x21-\x7e]{1,256}")
_NONCE = re.compile(r"[A-Za-z0-9_-]{16,200}")


def server_challenge(response: TransportResponse) -> ServerChallenge | None:
    """The challenge of a server's CONFIRMATION_REQUIRED refusal, or None (any other answer,
    or a challenge not well formed)."""
    if response.status != 428:
        return None
    body = _body(response)
    if not isinstance(body, Mapping) or body.get("ok") is not False:
        return None
    error = body.get("error")
    if not isinstance(error, Mapping) or error.get("code") != "CONFIRMATION_REQUIRED":
        return None
    return _challenge(body.get("challenge"))


def minted_challenge(response: TransportResponse) -> ServerChallenge | None:
    """The challenge of the server's answer to ``POST <base>/challenges/<path>``; None when it
    minted none (the call then meets the server's own refusal, typed as usual)."""
    body = _body(response) if response.status == 200 else None
    if not isinstance(body, Mapping) or body.get("ok") is not True:
        return None
    return _challenge(body.get("challenge"))


def _challenge(raw: Any) -> ServerChallenge | None:
    if not isinstance(raw, Mapping):
        return None
    ident, procedure, level = raw.get("id"), raw.get("procedure"), raw.get("level")
    expires, nonce = raw.get("expiresAt"), raw.get("nonce")
    if not (
        isinstance(ident, str)
        and _CHALLENGE_ID.fullmatch(ident)
        and isinstance(procedure, str)
        and level in ("confirm", "webauthn")
        and isinstance(expires, str)
        and isinstance(nonce, str)
        and _NONCE.fullmatch(nonce)
    ):
        return None
    assert isinstance(level, str)
    return ServerChallenge(ident, procedure[:MAX_TEXT], level, expires[:64], nonce)
