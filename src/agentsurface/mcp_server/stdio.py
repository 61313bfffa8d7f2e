"""``agentsurface mcp URL``: the bridge over stdio (what Claude Code, Cursor, VS Code and Gemini
CLI start as a subprocess)."""

from __future__ import annotations

import anyio
from mcp.server.stdio import stdio_server

from .bridge import Bridge
from .stdin_lines import StdinLines


async def serve_stdio(bridge: Bridge) -> None:
    try:
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(bridge.open_page, tasks.cancel_scope.cancel)
            tasks.start_soon(bridge.watch_changes)
            async with stdio_server(StdinLines()) as (incoming, outgoing):
                # The argument guard sits in bridge.server.run, for stdio and HTTP alike.
                await bridge.server.run(incoming, outgoing, bridge.initialization_options())
            tasks.cancel_scope.cancel()
    finally:
        with anyio.CancelScope(shield=True):
            await bridge.link.aclose()
