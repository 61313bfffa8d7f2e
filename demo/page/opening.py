"""The console's first requests, sent before the rest of the console is imported.

``main.py`` calls ``open_session()`` first: the session, the devices listing and the backend's
manifest travel while the console's own modules import (their component classes, dataclasses and
view: about a hundred milliseconds of a cold page), instead of after them. This module imports
only what the requests need (the library's bridge, already in the runtime's memory snapshot).
"""

from __future__ import annotations

import asyncio
from typing import Any

import js

from agentsurface.bridge import CHANNEL_HEADER, BackendBridge, BackendUnavailableError
from agentsurface.browser.jsvalues import js_or_none
from agentsurface.browser.passkeys import passkey_presence

from ..shared.values import DEVICES_QUERY, SESSION_DESCRIBE

params = js.URLSearchParams.new(js.location.search)
TOKEN = js_or_none(params.get("token")) or "demo-acme-operator"  # get() answers JS null
PROCEDURES_URL = "/api/agent"  # the library's procedure server, mounted by the demo backend
LISTING_LIMIT = 200  # the whole tenant's list on screen (devices.query's largest page)
# Event-loop turns a call takes to reach fetch(): the call's own task, then the request's (the
# bridge sends it from a task of its own, so that the registry can cancel it).
TURNS_TO_SEND = 2


def bearer() -> dict[str, str]:
    return {"Authorization": f"Bearer {TOKEN}"}


# The agent's calls and the person's own buttons reach the same procedures; the agent's are
# marked so the server gives them their own rate-limit budget (it never starves the person).
# A destructive approval of a person with a passkey is signed by it: after the dialog's Approve,
# the bridge answers the server's challenge with navigator.credentials.get().
presence = passkey_presence(PROCEDURES_URL, headers=bearer)
agent_bridge = BackendBridge(
    PROCEDURES_URL, headers=lambda: {**bearer(), CHANNEL_HEADER: "agent"}, presence=presence
)
person_bridge = BackendBridge(PROCEDURES_URL, headers=bearer, presence=presence)

# session.describe's answer, devices.query's, and the manifest's failure (None when it loaded).
Opening = asyncio.Future[tuple[Any, Any, BackendUnavailableError | None]]


async def _manifest() -> BackendUnavailableError | None:
    """The agent bridge's ``load_manifest()``, its failure answered instead of raised: a
    session that cannot open is told first (``console.main``), whichever request fails first."""
    try:
        await agent_bridge.load_manifest()
    except BackendUnavailableError as exc:
        return exc
    return None


async def open_session() -> Opening:
    """Send the console's three first requests (the app's own reads are procedures: the same
    server, checks and audit as every call) and return once they have left, with their answers
    to come (``console.main`` awaits them). A refusal is raised there, as ``CapabilityFailure``."""
    opening = asyncio.gather(
        person_bridge.call(SESSION_DESCRIBE, {}),
        person_bridge.call(DEVICES_QUERY, {"limit": LISTING_LIMIT}),
        _manifest(),
    )
    for _ in range(TURNS_TO_SEND):
        await asyncio.sleep(0)
    return opening


__all__ = ["LISTING_LIMIT", "PROCEDURES_URL", "Opening", "agent_bridge", "bearer", "open_session", "person_bridge"]
