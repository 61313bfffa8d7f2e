"""A bridge whose page is a stand-in (no browser): one tool, ``echo``, that answers its
arguments; for the transport tests (stdio's server loop, the HTTP listener)."""

from __future__ import annotations

import json
from typing import Any

from agentsurface.mcp_server.bridge import Bridge
from agentsurface.mcp_server.options import BridgeOptions
from agentsurface.testing.webmcp_results import Tool

ECHO = Tool("echo", "Answers its arguments", {"type": "object", "properties": {"a": {"type": "integer"}}})


class FakeLink:
    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []

    async def open(self) -> None:
        pass

    async def aclose(self) -> None:
        pass

    async def list_tools(self) -> list[Tool]:
        return [ECHO]

    async def call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        self.calls.append((name, arguments))
        return {"text": json.dumps({"content": [{"type": "text", "text": json.dumps(arguments)}]})}


def fake_bridge() -> tuple[Bridge, FakeLink]:
    bridge = Bridge(BridgeOptions(url="http://127.0.0.1:9/index.html", cdp="http://127.0.0.1:9"))
    link = FakeLink()
    bridge.link = link  # type: ignore[assignment]
    return bridge, link


def initialize(request_id: int = 0) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}},
    }


INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def tools_call(request_id: int, arguments: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": {"name": "echo", "arguments": arguments}}
