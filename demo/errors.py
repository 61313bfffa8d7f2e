"""Refusals of the demo's own routes (session, listing, unknown paths), in the same typed shape
as the procedure server's: ``{"ok": false, "error": {"code", "message", "retry", "details"?}}``
on the closed code set, with agent-safe messages that never repeat the caller's values.

The procedures' refusals are the library's (:mod:`agent_surface.server`); these reuse its
builders, so a client reads one error shape from the whole ``/api``.
"""

from __future__ import annotations

from agent_surface.server import Refusal, capability_error, invalid_input
from agent_surface.server import refusal_response as refusal_response  # re-exported for the routes

ROUTES_HINT = "GET /api/session, GET /api/devices, POST /api/agent/procedures/<name>"


def route_not_found() -> Refusal:
    return Refusal(
        capability_error(
            "CAPABILITY_NOT_FOUND", f"There is no such API route. Routes: {ROUTES_HINT}.", "after-refresh"
        )
    )


def method_not_allowed(allowed: str) -> Refusal:
    return Refusal(invalid_input(f"This route only accepts {allowed}.", [("/", f"use {allowed}")]), status=405)


