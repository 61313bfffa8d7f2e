"""The devices console, running in the page under Pyodide (``main.py``, run by agentsurface.js,
sends the first requests with ``opening.open_session()``, then awaits ``main()`` with them).
Nothing on its way to the first tool imports pydantic: the procedures come from the reviewed
contract.json, the view's hints are simple (``surface.py``).

Opens the session and lists the devices with the backend's own procedures (``session.describe``,
``devices.query``, called like the person's buttons with ``person_bridge.call``), builds the agent surface, exposes it over WebMCP
(whichever shape this browser has, or nothing) with the library's confirmation dialog and
surface inspector, and renders the UI, whose elements carry the surface's components.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import js

from agentsurface import (
    CapabilityFailure,
    Consumer,
    PendingConfirmation,
)
from agentsurface.adapters.webmcp import WebMCPAdapter
from agentsurface.bridge import BackendContractError, BackendUnavailableError
from agentsurface.browser.jsvalues import js_or_none
from agentsurface.page import ConfirmationDialog, SurfaceInspector, dependencies_ready, preload_validators

from ..shared.values import DEVICES_QUERY
from .model import ConsoleState, Device
from .opening import PROCEDURES_URL, Opening, agent_bridge, bearer, person_bridge
from .passkey import offer_passkey
from .surface import contracts, create_console_surface, reflecting
from .ui import ConsoleUI

state = ConsoleState()


NOTICES: dict[str, Callable[[Any], str]] = {
    "domain:devices.disable": lambda body: f"{body.get('disabled', 0)} device(s) disabled.",
    "domain:devices.enable": lambda body: f"{body.get('enabled', 0)} device(s) enabled.",
    "domain:devices.rename": lambda body: "Device renamed.",
}


def apply_result(procedure_id: str, body: Any) -> None:
    """Reflect a domain call's result in the view (the server's answer is the truth)."""
    rows = body.get("devices") or ([body["device"]] if body.get("device") else [])
    if procedure_id == DEVICES_QUERY or not rows:
        return
    notice = NOTICES.get(procedure_id)
    state.upsert([Device.from_api(r) for r in rows], notice(body) if notice else None)


async def human_api(procedure: str, payload: dict[str, Any]) -> None:
    """The person's own buttons call the same procedures (not through the agent surface), with
    an invocation id of their own. Every refusal (rate limit, permission, conflict, network) is
    shown, never swallowed."""
    procedure_id = f"domain:{procedure}"
    try:
        output = await person_bridge.call(procedure_id, payload, invocation_id=f"ui-{js.crypto.randomUUID()}")
    except CapabilityFailure as refusal:  # already agent-safe: the bridge keeps only typed fields
        state.tell(f"Refused: {refusal.error.message}", "error")
        return
    apply_result(procedure_id, output)


background: set[asyncio.Future[None]] = set()


async def _preload() -> None:
    await dependencies_ready()
    preload_validators()
    import demo.shared.contracts  # noqa: F401  (the procedures' own pydantic contracts)


async def main(opening: Opening) -> None:
    """Build the console over ``opening``'s answers (``opening.open_session()``): the session,
    the devices, and the backend's manifest for the contract check below."""
    try:
        session, listing, served = await opening
    except CapabilityFailure as refusal:
        js.document.getElementById("app").textContent = f"Could not open a session: {refusal.error.message}"
        return
    assert isinstance(session, dict) and isinstance(listing, dict)
    rows = listing.get("devices")
    listed = rows if isinstance(rows, list) else []
    state.set_devices([Device.from_api(row) for row in listed if isinstance(row, dict)])
    # The exposure ceiling: the page's procedure contracts must be the ones the backend serves,
    # checked before anything is registered (fail closed).
    try:
        if isinstance(served, BackendUnavailableError):
            raise served
        agent_bridge.ceiling(contracts())
    except (BackendContractError, BackendUnavailableError) as exc:
        js.document.getElementById("app").textContent = f"The backend does not match this page: {exc}"
        raise
    if agent_bridge.unserved:  # the reviewed contract names them: a deployment error, fail closed
        unserved = ", ".join(d.procedure_id for d in agent_bridge.unserved)
        js.document.getElementById("app").textContent = f"The backend does not serve {unserved}."
        return
    # What the agent is offered follows the session (a viewer's agent never sees disable).
    surface = create_console_surface(state, reflecting(agent_bridge, apply_result), session=session)
    ui: ConsoleUI | None = None

    def decided(approved: bool, pending: PendingConfirmation) -> None:
        if ui is not None:
            ui.on_decided(approved, pending)

    def outdated(pending: PendingConfirmation) -> None:
        if ui is not None:
            ui.on_outdated(pending)

    # One dialog for both paths: the host's own wait, and the draft shape's requestUserInteraction.
    dialog = ConfirmationDialog(surface.registry, on_decided=decided, on_outdated=outdated)
    adapter = WebMCPAdapter(confirm=dialog.confirm)
    await adapter.start(registry=surface.registry, consumer=Consumer("browser-agent", "webmcp"))
    ui = ConsoleUI(
        state,
        surface,
        lambda panel: SurfaceInspector(surface.registry, panel, adapter=adapter),
        session,
        human_api,
    )
    await adapter.settled()  # ready means the attached components' tools are in the browser
    ui.render()  # then the rows drawn (the first render: ConsoleUI asks for none before)
    # The person's passkeys, or the offer of one (destructive approvals then ask for it).
    await offer_passkey(js_or_none(js.document.getElementById("passkey-slot")), PROCEDURES_URL, bearer, state)
    # What the compiled check cannot prove valid goes to jsonschema or the server's pydantic
    # contracts (~0.7 s to import in the page): import them once the page is idle and the loader's
    # background load is done, not during the agent's first call that needs them.
    asyncio.get_running_loop().call_later(1.0, lambda: background.add(asyncio.ensure_future(_preload())))
    js.window.consoleReady = True
    js.document.body.dataset.ready = "true"
    js.document.dispatchEvent(js.CustomEvent.new("console:ready"))
