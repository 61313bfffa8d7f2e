"""The server side of the procedure bridge (``pip install 'agentsurface[server]'``).

Serve the same :class:`~agentsurface.ProcedureContract` objects the page imports, with their
implementations, as an ASGI app on Starlette::

    server = ProcedureServer(
        [serve(DISABLE, disable_devices, permissions={"devices.write"}, require_confirmation=True)],
        authenticate=caller_from_bearer_token,
        store=open_store("sqlite:///app.sqlite3", setup=create_tables),   # or postgresql://...
    )
    uvicorn.run(server)                      # or Mount("/api/agent", server) in your app

An app's own routes beside the server (a session or listing endpoint) answer in the same typed
shape with :class:`Refusal`, the error constructors below, :func:`error_body` and a
:class:`RateLimiter` of their own.

The server re-validates every input, authenticates and authorizes every call, applies each
invocation id once (recorded in the app's database, in the call's own transaction) and
publishes a backend manifest the page's bridge checks its contracts against.
"""

from __future__ import annotations

from ..bridge.wire import error_body
from .app import READY_PATH, ProcedureServer
from .challenges import ApprovalLevel, Challenge, VerifyPresence
from .config import Audit, Authenticate, CallRecord, ServerLimits
from .errors import (
    Refusal,
    capability_error,
    execution_failed,
    invalid_input,
    not_authenticated,
    not_authorized,
    precondition_failed,
    rate_limited,
    refusal_response,
    retry_after_header,
)
from .evidence import VerifyConfirmation
from .procedures import (
    Approval,
    Caller,
    ConfirmationEvidence,
    Implementation,
    ProcedureCall,
    ServedProcedure,
    serve,
)
from .ratelimit import RateLimit, RateLimiter, SharedRateLimiter
from .running import run, server_config
from .stores import (
    SCHEMA_VERSION,
    InvocationKey,
    InvocationStore,
    Outcome,
    Settlement,
    SqliteInvocationStore,
    StoreConfigError,
    StoreMisuse,
    StoreUnavailable,
    StoreVersionError,
    describe_dsn,
    open_store,
    sqlite_path,
    store_kind,
)

__all__ = [
    "READY_PATH",
    "SCHEMA_VERSION",
    "Approval",
    "ApprovalLevel",
    "Audit",
    "Authenticate",
    "CallRecord",
    "Caller",
    "Challenge",
    "ConfirmationEvidence",
    "Implementation",
    "InvocationKey",
    "InvocationStore",
    "Outcome",
    "ProcedureCall",
    "ProcedureServer",
    "RateLimit",
    "RateLimiter",
    "Refusal",
    "ServedProcedure",
    "ServerLimits",
    "Settlement",
    "SharedRateLimiter",
    "SqliteInvocationStore",
    "StoreConfigError",
    "StoreMisuse",
    "StoreUnavailable",
    "StoreVersionError",
    "VerifyConfirmation",
    "VerifyPresence",
    "capability_error",
    "describe_dsn",
    "error_body",
    "execution_failed",
    "invalid_input",
    "not_authenticated",
    "not_authorized",
    "open_store",
    "precondition_failed",
    "rate_limited",
    "refusal_response",
    "retry_after_header",
    "run",
    "serve",
    "server_config",
    "sqlite_path",
    "store_kind",
]
