"""The relay as the bridge's page link: ``Bridge`` lists and calls through it exactly as it does
through a Chromium page (``mcp_server.page.PageLink``), so the MCP side (tools/list,
tools/call, list_changed, results and typed errors) is the bridge's own."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

from ...testing.webmcp_results import Tool
from ..options import BridgeOptions
from .listener import RelayGate, RelayListener
from .pairing import PairingDesk, PairingStore, default_store_path
from .sources import SourceRegistry, UnknownTool


class RelayLink:
    def __init__(
        self, options: BridgeOptions, on_change: Callable[[], None], *, log: TextIO = sys.stderr
    ) -> None:
        self.options = options
        self.sources = SourceRegistry(on_change)
        store = PairingStore(Path(options.pairings) if options.pairings else default_store_path())
        self.gate = RelayGate(store, PairingDesk(), frozenset(options.allow_origins), log)
        self.listener = RelayListener(self.gate, self.sources)

    async def open(self) -> None:
        await self.listener.start(self.options.relay_port)
        paired = ", ".join(self.gate.store.origins) or "none yet"
        allowed = ", ".join(sorted(self.gate.allowed)) or "none"
        self.gate.say(f"listening on ws://127.0.0.1:{self.listener.port} for pages that opt in")
        self.gate.say(f"paired origins: {paired}; allowed without pairing (--allow-origin): {allowed}")

    async def aclose(self) -> None:
        await self.listener.aclose()

    async def list_tools(self) -> list[Tool]:
        return self.sources.tools()

    async def call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        try:
            return await self.sources.call(name, arguments)
        except UnknownTool:
            return {"rejected": "NotFoundError", "message": f"no connected tab offers {name!r} any more"}
