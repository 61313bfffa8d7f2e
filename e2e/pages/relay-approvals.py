"""The relay approvals e2e page (runs in the page under Pyodide), served by e2e/passkey_app.py at
``http://localhost:PORT``.

One component, the account open in this tab, references the server's ``domain:e2e.stamp``
(bound to the account, with ``require_confirmation``), called through the library's
``BackendBridge`` as alice's agent: the server answers with a challenge it minted, the person
approves in the page's own dialog, the bridge answers the challenge (signed by alice's passkey
through ``passkey_presence`` once she registered one, with the page's "Register a passkey"
button: the person's click, under her own token). ``?relay=PORT`` offers the tools to
``agentsurface mcp --relay`` (``connect_relay``); without it, to WebMCP (the same page on
Chromium's WebMCP, for comparison). ``window.relayPage.state()`` reports what the test checks.
"""

import asyncio
import json
from urllib.parse import parse_qs

import js
from pyodide.ffi import create_proxy

from agentsurface import (
    AgentComponent,
    AgentSurfaceRegistry,
    CapabilityAuthority,
    Consumer,
    ProcedureContract,
    ProcedureReference,
    observation,
    require_confirmation,
)
from agentsurface.adapters.webmcp import WebMCPAdapter
from agentsurface.bridge import BackendBridge
from agentsurface.browser.passkeys import PasskeyError, passkey_presence, register_passkey
from agentsurface.page.dialog import ConfirmationDialog
from agentsurface.page.relay import connect_relay

query = {k: v[0] for k, v in parse_qs(str(js.location.search)[1:]).items()}
BASE = "/api/agent"
AGENT = {"Authorization": "Bearer tok-alice-agent"}  # the agent's calls: alice's agent
PERSON = {"Authorization": "Bearer tok-alice"}  # the person's own act (registering her passkey)
ACCOUNT = "acct-7"

# As e2e/passkey_app.py serves it (the bridge checks the two agree before anything registers).
STAMP = ProcedureContract(
    id="domain:e2e.stamp",
    description="Stamp the account with a note (needs the person's approval, and their passkey once they have one).",
    effect="server-mutation",
    input={
        "type": "object",
        "properties": {"account": {"type": "string", "maxLength": 64}, "note": {"type": "string", "maxLength": 200}},
        "required": ["account", "note"],
        "additionalProperties": False,
    },
)


class Account(AgentComponent, type="e2e.account", description="The account open in this tab."):
    @observation("The account open in this tab.")
    def current(self) -> str:
        return ACCOUNT

    def agent_procedures(self) -> list[ProcedureReference]:
        return [
            STAMP.reference(
                bind=lambda: {"account": ACCOUNT},
                bound_fields=["account"],
                describe=lambda: f"Bound to account {ACCOUNT}.",
                policies=[require_confirmation(summary=lambda e: f"Stamp {e['account']}: {e['note']}")],
            )
        ]


bridge = BackendBridge(BASE, headers=AGENT, presence=passkey_presence(BASE, headers=AGENT))
registry = AgentSurfaceRegistry(authority=CapabilityAuthority.from_manifest(await bridge.connect([Account, STAMP])), procedure_executor=bridge)  # noqa: F704
registry.register(Account())
dialog = ConfirmationDialog(registry)
relay = None
if "relay" in query:
    relay = await connect_relay(registry, port=int(query["relay"]))  # noqa: F704
else:
    adapter = WebMCPAdapter(confirm=dialog.confirm)
    await adapter.start(registry=registry, consumer=Consumer("browser-agent", "webmcp"))  # noqa: F704

passkey = {"registered": False, "refused": None}
tasks = set()


async def register() -> None:
    try:
        await register_passkey(BASE, headers=PERSON)
    except PasskeyError as refused:
        passkey["refused"] = refused.reason or refused.name
        return
    passkey["registered"] = True
    js.document.getElementById("passkey").textContent = "Passkey registered"


def clicked(event) -> None:
    if not event.isTrusted:  # the person's act, never a script's
        return
    task = asyncio.ensure_future(register())
    tasks.add(task)
    task.add_done_callback(tasks.discard)


def state() -> str:
    return json.dumps(
        {
            "status": None if relay is None else relay.status,
            "refusal": None if relay is None else relay.refusal,
            "failures": 0 if relay is None else relay.socket.failures,
            "welcomes": 0 if relay is None else relay.socket.welcomes,
            "tools": [] if relay is None else relay.tool_names,
            "passkey": passkey,
        }
    )


proxies = [create_proxy(state), create_proxy(clicked)]
button = js.document.getElementById("register-passkey")
button.addEventListener("click", proxies[1])
button.disabled = False
js.window.relayPage = js.Object.new()
js.window.relayPage.state = proxies[0]
