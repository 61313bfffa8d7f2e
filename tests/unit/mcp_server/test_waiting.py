"""A call that waits for the person, through the bridge's MCP server (no browser, no socket):
progress on the client's token while it runs, the bound that answers TIMEOUT and cancels it in
the page, and an MCP cancellation that reaches the page's call."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from mcp import types
from mcp.shared.memory import create_connected_server_and_client_session

from agentsurface.mcp_server.bridge import Bridge
from agentsurface.mcp_server.options import BridgeOptions, OptionsError, add_arguments, from_namespace
from tests._shared.mcp_server.fake_page import ECHO, FakeLink


class SlowLink(FakeLink):
    """The page's call waits ``seconds`` (the person thinking), or until cancelled."""

    def __init__(self, seconds: float) -> None:
        super().__init__()
        self.seconds = seconds
        self.cancelled = asyncio.Event()

    async def call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        try:
            await asyncio.sleep(self.seconds)
        except asyncio.CancelledError:
            self.cancelled.set()  # PageLink/RelayLink abort the call in the page here
            raise
        return await super().call(name, arguments)


def slow_bridge(seconds: float, **options: Any) -> tuple[Bridge, SlowLink]:
    bridge = Bridge(BridgeOptions(url="http://127.0.0.1:9/index.html", cdp="http://127.0.0.1:9", **options))
    link = SlowLink(seconds)
    bridge.link = link  # type: ignore[assignment]
    return bridge, link


async def test_a_waiting_call_sends_progress_on_the_clients_token() -> None:
    bridge, _ = slow_bridge(0.5, progress_interval=0.1)
    heard: list[tuple[float, str | None]] = []

    async def progress(value: float, total: float | None, message: str | None) -> None:
        heard.append((value, message))

    async with create_connected_server_and_client_session(bridge.server) as client:
        result = await client.call_tool(ECHO.name, {"a": 1}, progress_callback=progress)
    assert not result.isError and json.loads(result.content[0].text) == {"a": 1}  # type: ignore[union-attr]
    assert len(heard) >= 3
    assert [value for value, _ in heard] == sorted(value for value, _ in heard)  # it only grows
    assert all(message and "waiting for the person" in message for _, message in heard)


async def test_no_progress_without_a_token_or_with_the_interval_off() -> None:
    notes: list[Any] = []

    async def on_message(message: Any) -> None:
        notes.append(message)

    for token, interval in ((False, 0.05), (True, 0.0)):
        bridge, _ = slow_bridge(0.3, progress_interval=interval)
        heard: list[float] = []

        async def progress(value: float, total: float | None, message: str | None, heard: list[float] = heard) -> None:
            heard.append(value)

        async with create_connected_server_and_client_session(bridge.server, message_handler=on_message) as client:
            await client.call_tool(ECHO.name, {"a": 1}, progress_callback=progress if token else None)
        assert heard == []
    assert not [n for n in notes if isinstance(n, types.ServerNotification) and n.root.method == "notifications/progress"]


async def test_past_the_bound_the_call_answers_timeout_and_is_cancelled_in_the_page() -> None:
    bridge, link = slow_bridge(60, wait_timeout=0.3, progress_interval=0.1)
    async with create_connected_server_and_client_session(bridge.server) as client:
        result = await client.call_tool(ECHO.name, {"a": 1})
    assert result.isError is True and result.structuredContent is not None
    assert result.structuredContent["code"] == "TIMEOUT"
    assert result.structuredContent["retry"] == "no"
    assert result.structuredContent["details"] == {"timeoutMs": 300, "handler": "unknown"}
    assert link.cancelled.is_set() and link.calls == []


def test_the_options_take_the_interval_and_the_bound() -> None:
    import argparse

    parser = argparse.ArgumentParser()
    add_arguments(parser)
    url = "http://127.0.0.1:8000/index.html"
    given = ["--cdp", "http://127.0.0.1:9222", url]
    defaults = from_namespace(parser.parse_args(given))
    assert (defaults.progress_interval, defaults.wait_timeout) == (5.0, 300.0)
    chosen = from_namespace(parser.parse_args([*given, "--progress-interval", "1.5", "--wait-timeout", "30"]))
    assert (chosen.progress_interval, chosen.wait_timeout) == (1.5, 30.0)
    relay = from_namespace(parser.parse_args(["--relay", "--wait-timeout", "60", "--progress-interval", "0"]))
    assert (relay.progress_interval, relay.wait_timeout) == (0.0, 60.0)
    for bad in (["--progress-interval", "-1"], ["--wait-timeout", "0"], ["--wait-timeout", "nan"]):
        with pytest.raises(OptionsError):
            from_namespace(parser.parse_args([*given, *bad]))
