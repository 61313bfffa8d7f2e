"""The server side of the procedure bridge (``pip install 'agent-surface[server]'``).

Serve the same :class:`~agent_surface.ProcedureContract` objects the page imports, with their
implementations, as an ASGI app on Starlette::

    server = ProcedureServer(
        [serve(DISABLE, disable_devices, permissions={"devices.write"}, require_confirmation=True)],
        authenticate=caller_from_bearer_token,
        store=SqliteInvocationStore("app.sqlite3", setup=create_tables),
    )
    uvicorn.run(server)                      # or Mount("/api/agent", server) in your app

The server re-validates every input, authenticates and authorizes every call, applies each
invocation id once (recorded in the app's database, in the call's own transaction) and
publishes a backend manifest the page's bridge checks its contracts against.
"""

from __future__ import annotations

from .app import Audit, Authenticate, CallRecord, ProcedureServer, ServerLimits, VerifyConfirmation
from .errors import precondition_failed
from .procedures import Caller, ConfirmationEvidence, Implementation, ProcedureCall, ServedProcedure, serve
from .ratelimit import RateLimit
from .store import InvocationKey, InvocationStore, Outcome, Settlement, SqliteInvocationStore, StoreMisuse

__all__ = [
    "Audit",
    "Authenticate",
    "CallRecord",
    "Caller",
    "ConfirmationEvidence",
    "Implementation",
    "InvocationKey",
    "InvocationStore",
    "Outcome",
    "ProcedureCall",
    "ProcedureServer",
    "RateLimit",
    "ServedProcedure",
    "ServerLimits",
    "Settlement",
    "SqliteInvocationStore",
    "StoreMisuse",
    "VerifyConfirmation",
    "precondition_failed",
    "serve",
]
