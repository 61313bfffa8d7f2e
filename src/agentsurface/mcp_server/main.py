"""The ``mcp`` command: options in, the bridge served over stdio or HTTP until the client (or
Ctrl-C) ends it."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
import sys
from collections.abc import Iterator
from types import FrameType
from typing import TYPE_CHECKING

import anyio

from .chromium import OwnChromium, launches_early
from .options import BridgeOptions, OptionsError, add_arguments, from_namespace

if TYPE_CHECKING:
    from .bridge import Bridge


async def run(options: BridgeOptions, chromium: OwnChromium | None = None) -> Bridge:
    # Imported here, after Chromium has started on the page: the MCP SDK and Playwright take
    # about a second to import, which the page spends booting.
    from .bridge import Bridge

    bridge = Bridge(options, chromium)
    with _ends_on_sigterm(bridge):
        if options.http_port is not None:
            from .http import serve_http

            await serve_http(bridge, options.http_port)
        else:
            from .stdio import serve_stdio

            await serve_stdio(bridge)
    return bridge


@contextlib.contextmanager
def _ends_on_sigterm(bridge: Bridge) -> Iterator[None]:
    """While the bridge serves, SIGTERM (how an MCP client ends a server when closing stdin did
    not) cancels its work, which then ends through its own cleanup: the page link closed,
    Chromium stopped. Raising from the handler instead would land in whatever the event loop
    was running at that moment, inside the SDK's task groups."""
    loop = asyncio.get_running_loop()
    scope = anyio.CancelScope()

    def leave(signum: int, _frame: FrameType | None) -> None:
        bridge.ended_by = signum
        loop.call_soon_threadsafe(scope.cancel)

    previous = signal.signal(signal.SIGTERM, leave)
    try:
        with scope:
            yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def parser(prog: str = "agentsurface mcp") -> argparse.ArgumentParser:
    made = argparse.ArgumentParser(prog=prog, description="Serve a page's WebMCP tools as MCP tools.")
    add_arguments(made)
    return made


def main(argv: list[str] | None = None) -> int:
    return serve_command(parser().parse_args(argv))


def serve_command(args: argparse.Namespace) -> int:
    try:
        options = from_namespace(args)
    except OptionsError as exc:
        print(f"agentsurface mcp: {exc}", file=sys.stderr)
        return 2
    # Before the bridge serves (and after), SIGTERM leaves through the finally below, which
    # stops Chromium and removes its profile; while it serves, see _ends_on_sigterm.
    signal.signal(signal.SIGTERM, _leave)
    chromium = OwnChromium(options) if launches_early(options) else None
    try:
        bridge = anyio.run(run, options, chromium)
    except KeyboardInterrupt:
        return 0
    finally:
        if chromium is not None:
            chromium.close()  # the bridge closed it already, unless it never got that far
    if bridge.ended_by is not None:
        return 128 + bridge.ended_by
    return 1 if bridge.failed is not None else 0


def _leave(signum: int, _frame: FrameType | None) -> None:
    raise SystemExit(128 + signum)
