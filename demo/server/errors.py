"""The one refusal the demo answers itself: an ``/api/...`` path that is not the procedure
server's, in the server's typed shape (``{"ok": false, "error": {...}}``) on its closed code set.

Everything else under ``/api`` (the app's reads included) is the procedure server's, with its
own refusals (:mod:`agentsurface.server`).
"""

from __future__ import annotations

from agentsurface.server import Refusal, capability_error

ROUTES_HINT = "POST /api/agent/procedures/<name>, GET /api/agent/.well-known/agentsurface/procedures"


def route_not_found() -> Refusal:
    return Refusal(
        capability_error(
            "CAPABILITY_NOT_FOUND", f"There is no such API route. Routes: {ROUTES_HINT}.", "after-refresh"
        )
    )
