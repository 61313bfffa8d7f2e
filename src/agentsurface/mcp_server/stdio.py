"""``agentsurface mcp URL``: the bridge over stdio (what Claude Code, Cursor, VS Code and Gemini
CLI start as a subprocess)."""

from __future__ import annotations

import anyio
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage

from .bridge import Bridge
from .guard import guard


async def serve_stdio(bridge: Bridge) -> None:
    try:
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(bridge.open_page, tasks.cancel_scope.cancel)
            tasks.start_soon(bridge.watch_changes)
            async with stdio_server() as (incoming, outgoing):
                to_server, from_guard = anyio.create_memory_object_stream[SessionMessage | Exception](16)
                tasks.start_soon(guard, incoming, to_server, outgoing)
                await bridge.server.run(from_guard, outgoing, bridge.initialization_options())
            tasks.cancel_scope.cancel()
    finally:
        with anyio.CancelScope(shield=True):
            await bridge.link.close()
