"""A page that forgot ``ConfirmationDialog`` (issue 43.6): a consequential action, the
WebMCP adapter and the inspector, and nothing that shows the person a pending approval. The
inspector warns of it, and the first such call says so in the console."""

import js

from agentsurface import (
    AgentComponent,
    AgentSurfaceRegistry,
    CapabilityAuthority,
    Consumer,
    action,
    compile_manifest,
)
from agentsurface.adapters.webmcp import WebMCPAdapter
from agentsurface.page import SurfaceInspector


class Vault(AgentComponent, type="bank.vault", description="The bank vault."):
    @action("Open one drawer of the vault.", confirmation="required")
    def open_drawer(self, drawer: str) -> str:
        return drawer


registry = AgentSurfaceRegistry(authority=CapabilityAuthority.from_manifest(compile_manifest([Vault])))
registry.register(Vault())
adapter = WebMCPAdapter()
await adapter.start(registry=registry, consumer=Consumer("browser-agent", "webmcp"))  # noqa: F704
SurfaceInspector(registry, js.document.getElementById("inspector"), adapter=adapter)
