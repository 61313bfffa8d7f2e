"""The closed set of agent-facing error codes, the error payload, and the exception tree.

Everything the library raises derives from ``AgentSurfaceError``::

    AgentSurfaceError
    ├── CapabilityFailure        raise in a policy, precondition or handler: settles with its payload
    ├── DefinitionError          a structural defect the author must fix (raised, never agent-facing)
    │   └── AuthorityError       a manifest, authority or binding that does not prove its identity
    │       └── bridge.BackendContractError
    ├── RegistryClosedError      the registry was used after close() (also a RuntimeError)
    ├── server.Refusal           a typed refusal on its way to the procedure server's response
    ├── adapters ModelContextError, bridge TransportError / BackendUnavailableError /
    │   ManifestFormatError, compiler CompileError / ContractFileError, server StoreMisuse /
    │   StoreUnavailable / StoreVersionError / StoreConfigError, server.passkeys PasskeyError /
    │   RegistrationRefused, browser.passkeys PasskeyError, cli BundleError / GitError,
    │   mcp_server PageGone / OptionsError, the runtime build's errors
    └── testing AgentClientError (also an AssertionError), InvocationFailed, ImpureObservation

Agent-facing outcomes are never exceptions: they are ``ErrorPayload`` values in results. The
library's internal control-flow exceptions derive from the root too (tests/unit/project/test_public_api.py
walks the package for any that does not).

``ERROR_MATRIX`` is the single source of truth for phases, retry categories, cacheability
and agent-safe details keys; a test cross-checks it against the reference error matrix.
"""

from __future__ import annotations

from typing import Any, Literal, TypeAlias

from .base_error import AgentSurfaceError as AgentSurfaceError
from .jsonvalue import JsonValue
from .records import record

ErrorCode: TypeAlias = Literal[
    "CAPABILITY_NOT_FOUND",
    "CAPABILITY_NOT_AVAILABLE",
    "AMBIGUOUS_INSTANCE",
    "COMPONENT_UNMOUNTED",
    "STALE_CAPABILITY",
    "INVOCATION_CONFLICT",
    "INVALID_INPUT",
    "NOT_AUTHENTICATED",
    "NOT_AUTHORIZED",
    "PRECONDITION_FAILED",
    "CONFIRMATION_REQUIRED",
    "CONFIRMATION_INVALID",
    "RATE_LIMITED",
    "TIMEOUT",
    "CANCELLED",
    "EXECUTION_FAILED",
]

Retry: TypeAlias = Literal["no", "yes", "after-refresh", "after-delay", "with-confirmation", "with-changes"]

DefinitionErrorCode: TypeAlias = Literal[
    "INVALID_ID",
    "INVALID_DEFINITION",
    "UNSUPPORTED_SCHEMA",
    "PLANE_VIOLATION",
    "DUPLICATE_CAPABILITY",
    "LIMIT_EXCEEDED",
    "AUTHORITY_VIOLATION",
]


@record
class ErrorSpec:
    phases: tuple[int, ...]
    retry: tuple[Retry, ...]
    cacheable: bool
    details: tuple[str, ...]  # every agent-safe details key: the reference's, then ``extensions``
    extensions: tuple[str, ...] = ()  # keys this library adds beyond the reference matrix
    # The HTTP status a procedure server answers it with; None: a code about the page's live
    # surface that no server may send (the page's bridge sanitizes one that arrives).
    http_status: int | None = None

    @property
    def reference_details(self) -> tuple[str, ...]:
        return tuple(key for key in self.details if key not in self.extensions)


ERROR_MATRIX: dict[ErrorCode, ErrorSpec] = {
    "CAPABILITY_NOT_FOUND": ErrorSpec((2, 4), ("after-refresh",), True, (), http_status=404),
    "CAPABILITY_NOT_AVAILABLE": ErrorSpec((3, 4), ("after-refresh",), True, ("reason",)),
    "AMBIGUOUS_INSTANCE": ErrorSpec((2,), ("with-changes",), True, ("instances",)),
    "COMPONENT_UNMOUNTED": ErrorSpec((2, 9), ("after-refresh",), True, ("phase",)),
    "STALE_CAPABILITY": ErrorSpec((2,), ("after-refresh",), True, ("reason", "liveRegistrationId")),
    "INVOCATION_CONFLICT": ErrorSpec((1,), ("with-changes",), False, ("reason",), http_status=409),
    "INVALID_INPUT": ErrorSpec((5,), ("with-changes",), True, ("issues", "lockedFields"), http_status=400),
    "NOT_AUTHENTICATED": ErrorSpec((4,), ("no",), True, (), http_status=401),
    "NOT_AUTHORIZED": ErrorSpec((4, 9), ("no",), True, ("origin",), http_status=403),
    # Also a preview that fails (reasons "preview-error", "preview-invalid", "preview-too-large":
    # the app's preview function raised, or returned no preview or too large a one; phase 6, or
    # 9 when recomputed before the write). Nothing is shown to the person, nothing applied.
    "PRECONDITION_FAILED": ErrorSpec((5, 7), ("with-changes", "after-refresh"), True, ("reason",), http_status=409),
    "CONFIRMATION_REQUIRED": ErrorSpec(
        (6,),
        ("with-confirmation",),
        False,
        ("confirmationId", "summary", "expiresAt", "effect", "origin"),
        http_status=428,
    ),
    # "personSaid": why the person denied, in their own words (the dialog's optional field:
    # plain text, one line, at most 200 characters); only with reason "denied".
    # Reason "stale" (this library's, beside the reference's denied/expired/consumed/mismatch):
    # the request's preview no longer holds, found at the person's Approve, at phase 6 when the
    # call returns with its approval, or just before the handler starts (phase 9, the same step
    # as the write); retry "with-confirmation": the person is asked again, with a new preview.
    "CONFIRMATION_INVALID": ErrorSpec(
        (6,), ("no", "with-confirmation"), True, ("reason", "personSaid"), ("personSaid",), http_status=403
    ),
    "RATE_LIMITED": ErrorSpec((4, 6, 8), ("after-delay",), False, ("reason", "retryAfterMs"), http_status=429),
    # "handler": whether the timed-out handler was stopped ("stopped") or may still be running
    # ("unknown"); the agent needs it to know whether an effect can still land.
    "TIMEOUT": ErrorSpec(
        (9,), ("no", "yes"), True, ("timeoutMs", "idempotent", "handler"), ("handler",), http_status=504
    ),
    "CANCELLED": ErrorSpec((8, 9), ("yes", "no"), True, ()),
    "EXECUTION_FAILED": ErrorSpec(
        (9, 10), ("no", "after-delay"), True, ("reason", "transient", "retryAfterMs"), http_status=500
    ),
}

MAX_ERROR_MESSAGE = 300


@record
class ErrorPayload:
    """The agent-safe error value a result carries: code, message, retry, details."""

    code: ErrorCode
    message: str
    retry: Retry
    details: dict[str, JsonValue] | None = None

    def __post_init__(self) -> None:
        spec = ERROR_MATRIX.get(self.code)
        if spec is None:
            raise ValueError(f"unknown error code {self.code!r}")
        if self.retry not in spec.retry:
            raise ValueError(f"retry {self.retry!r} is not allowed for {self.code}")
        if len(self.message) > MAX_ERROR_MESSAGE:
            object.__setattr__(self, "message", self.message[: MAX_ERROR_MESSAGE - 1] + "…")

    @property
    def cacheable(self) -> bool:
        return ERROR_MATRIX[self.code].cacheable

    def to_json(self) -> dict[str, JsonValue]:
        out: dict[str, JsonValue] = {"code": self.code, "message": self.message, "retry": self.retry}
        if self.details:
            out["details"] = dict(self.details)
        return out


class CapabilityFailure(AgentSurfaceError):
    """Raise inside a policy, precondition or handler to settle with a typed error."""

    def __init__(self, error: ErrorPayload) -> None:
        super().__init__(f"{error.code}: {error.message}")
        self.error = error


class DefinitionError(AgentSurfaceError):
    """A structural defect the author must fix. Always raised, never agent-facing."""

    def __init__(self, code: DefinitionErrorCode, message: str, *, path: str | None = None) -> None:
        self.code: DefinitionErrorCode = code
        self.path = path
        prefix = f"{path}: " if path else ""
        super().__init__(f"[{code}] {prefix}{message}")
        self.message = message

    def at(self, path: str) -> DefinitionError:
        """The same error, located under ``path`` (outermost first)."""
        joined = f"{path}.{self.path}" if self.path else path
        return DefinitionError(self.code, self.message, path=joined)


class AuthorityError(DefinitionError):
    """A manifest, authority or binding that does not prove its capability identity."""

    def __init__(self, message: str, *, path: str | None = None) -> None:
        super().__init__("AUTHORITY_VIOLATION", message, path=path)

    def at(self, path: str) -> AuthorityError:
        joined = f"{path}.{self.path}" if self.path else path
        return AuthorityError(self.message, path=joined)


class RegistryClosedError(AgentSurfaceError, RuntimeError):
    """Programmer misuse: the registry was used after ``close()``."""


def error(code: ErrorCode, message: str, retry: Retry | None = None, **details: Any) -> ErrorPayload:
    """Build a ErrorPayload; ``retry`` defaults to the code's first retry category."""
    spec = ERROR_MATRIX[code]
    clean = {k: v for k, v in details.items() if v is not None}
    return ErrorPayload(code, message, retry or spec.retry[0], clean or None)


def surface_shut_down() -> ErrorPayload:
    """The one answer for a call that meets a disposed registry or a stopped surface, from the
    pipeline and from every adapter alike: CANCELLED with retry "no", as the reference settles
    disposal (nothing is left to serve a retry)."""
    return ErrorPayload("CANCELLED", "The surface was shut down.", "no")
