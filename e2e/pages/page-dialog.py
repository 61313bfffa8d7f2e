"""The drop-in confirmation dialog's e2e page: runs in the page under Pyodide.

A vault whose ``openDrawer`` needs the person's confirmation, exposed through
``WebMCPAdapter(confirm=dialog.confirm)`` to whatever WebMCP the browser has: on
Chromium's ``document.modelContext`` the adapter waits for the dialog's decision; on the polyfill's
``navigator.modelContext`` the same dialog runs inside ``client.requestUserInteraction``.
The whole confirmation UI is the one line ``ConfirmationDialog(registry)``.

``window.dialogPage.state()`` reports what the test checks; the agent side of every test is the
browser's own client, never this code.
"""

import json

import js
from pyodide.ffi import create_proxy, to_js

from agentsurface import (
    AgentComponent,
    AgentSurfaceRegistry,
    CapabilityAuthority,
    Change,
    Consumer,
    PendingConfirmation,
    action,
    compile_manifest,
    observation,
)
from agentsurface.adapters.webmcp import WebMCPAdapter
from agentsurface.browser import live_proxy_count
from agentsurface.page.dialog import ConfirmationDialog


class Vault(AgentComponent, type="bank.vault", description="The bank vault."):
    def __init__(self) -> None:
        self.opened: list[str] = []
        # What the drawers hold (hostile text included: the dialog shows it as text).
        self.contents: dict[str, list[str]] = {"gold": ["<img src=x onerror=window.pwned=1>", "ingot\u202egnp.exe"]}

    @observation("The drawers opened so far, oldest first.")
    def opened_drawers(self) -> list[str]:
        return list(self.opened)

    @action("Open one drawer of the vault.", confirmation="required")
    def open_drawer(self, drawer: str) -> str:
        self.opened.append(drawer)
        return drawer

    @action("Empty one drawer of the vault.", confirmation="required")
    def empty_drawer(self, drawer: str) -> int:
        emptied = len(self.contents.get(drawer, []))
        self.contents[drawer] = []
        return emptied

    @empty_drawer.preview
    def what_emptying_changes(self, drawer: str) -> list[Change]:
        return [Change(drawer, "contents", list(self.contents.get(drawer, [])), [])]


vault = Vault()
registry = AgentSurfaceRegistry(authority=CapabilityAuthority.from_manifest(compile_manifest([Vault])))
registry.register(vault)
decided: list[list[object]] = []


def on_decided(approved: bool, pending: PendingConfirmation) -> None:
    decided.append([approved, pending.input])


dialog = ConfirmationDialog(registry, on_decided=on_decided)
adapter = WebMCPAdapter(confirm=dialog.confirm)
await adapter.start(registry=registry, consumer=Consumer("browser-agent", "webmcp"))  # noqa: F704


def state() -> str:
    return json.dumps(
        {
            "shape": adapter.shape,
            "opened": vault.opened,
            "contents": vault.contents,
            "decided": decided,
            "verdicts": dialog.verdicts,
            "prompts": dialog.prompts,
            "shown": dialog.shown,
            "pending": [p.to_json() for p in registry.confirmations.pending()],
            "liveProxies": live_proxy_count(),
            "diagnostics": adapter.diagnostics,
        }
    )


def restock(drawer: str, item: str) -> None:
    """The page's own change (a live update): the drawer holds one more item."""
    vault.contents[drawer] = [*vault.contents.get(drawer, []), item]


proxies = [create_proxy(state), create_proxy(restock)]
page_api = to_js({"shape": adapter.shape}, dict_converter=js.Object.fromEntries)
page_api.state = proxies[0]
page_api.restock = proxies[1]
js.window.dialogPage = page_api
