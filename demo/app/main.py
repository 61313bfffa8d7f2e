"""The devices console, running in the page under PyScript.

Loads the session and devices from the backend, mounts the agent surface, exposes it over
WebMCP (whichever shape this browser has, or nothing), and renders the UI.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import js
from console_app.model import ConsoleState, Device
from console_app.surface import BackendExecutor, create_console_surface
from console_app.ui import ConsoleUI
from pyodide.http import pyfetch

from agent_surface import Consumer
from agent_surface.adapters.webmcp import create_webmcp_adapter
from agent_surface.browser.jsvalues import js_or_none
from agent_surface.compat import import_jsonschema

params = js.URLSearchParams.new(js.location.search)
TOKEN = js_or_none(params.get("token")) or "demo-acme-operator"  # get() answers JS null


async def fetch_json(path: str, body: Any = None, headers: dict[str, str] | None = None) -> tuple[int, Any]:
    options: dict[str, Any] = {"headers": {"Authorization": f"Bearer {TOKEN}", **(headers or {})}}
    if body is not None:
        options.update(method="POST", body=json.dumps(body))
        options["headers"]["Content-Type"] = "application/json"
    try:
        response = await pyfetch(path, **options)
        return response.status, await response.json()
    except Exception:  # network failure: typed as a transport error by the executor
        return 0, None


state = ConsoleState()


NOTICES = {
    "domain:devices.disable": lambda body: f"{body.get('disabled', 0)} device(s) disabled.",
    "domain:devices.enable": lambda body: f"{body.get('enabled', 0)} device(s) enabled.",
    "domain:devices.rename": lambda body: "Device renamed.",
}


def apply_result(procedure_id: str, body: Any) -> None:
    """Reflect a domain call's result in the view (the server's answer is the truth)."""
    rows = body.get("devices") or ([body["device"]] if body.get("device") else [])
    if procedure_id == "domain:devices.query" or not rows:
        return
    notice = NOTICES.get(procedure_id)
    state.upsert([Device.from_api(r) for r in rows], notice(body) if notice else None)


def refusal_message(status: int, body: Any) -> str:
    """What the person is told when the server refuses their own action: the server's
    agent-safe message when it sent one."""
    error = body.get("error") if isinstance(body, dict) else None
    message = error.get("message") if isinstance(error, dict) else None
    if status == 0:
        return "Could not reach the server; try again."
    return f"Refused: {message}" if isinstance(message, str) and message else f"Refused (HTTP {status})."


async def human_api(procedure: str, payload: dict[str, Any]) -> None:
    """The person's own buttons call the backend directly (not through the agent surface).
    Every refusal (rate limit, permission, conflict, network) is shown, never swallowed."""
    status, body = await fetch_json(f"/api/procedures/{procedure}", payload)
    if 0 < status < 400 and isinstance(body, dict) and "error" not in body:
        apply_result(f"domain:{procedure}", body)
    else:
        state.tell(refusal_message(status, body), "error")


async def main() -> None:
    status, session = await fetch_json("/api/session")
    if status >= 400:
        js.document.getElementById("app").textContent = "Could not open a session with the backend."
        return
    _, listing = await fetch_json("/api/devices")
    rows = listing.get("devices", []) if isinstance(listing, dict) else []
    state.set_devices([Device.from_api(row) for row in rows])
    # What the agent is offered follows the session (a viewer's agent never sees disable).
    surface = create_console_surface(
        state, BackendExecutor(fetch_json, TOKEN, apply_result), session=session
    )
    adapter = create_webmcp_adapter()
    await adapter.start(registry=surface.registry, consumer=Consumer("browser-agent", "webmcp"))
    ConsoleUI(state, surface, adapter, session, human_api)
    # Raw JSON Schemas are validated by jsonschema, imported on first use (~0.7 s in the page):
    # import it once the page is idle, not during the agent's first domain call.
    asyncio.get_running_loop().call_later(1.0, import_jsonschema)
    js.window.consoleReady = True
    js.document.body.dataset.ready = "true"
    js.document.dispatchEvent(js.CustomEvent.new("console:ready"))


await main()  # noqa: F704 (PyScript runs the main script with top-level await)
