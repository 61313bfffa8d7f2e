"""The ``mcp`` command: options in, the bridge served over stdio or HTTP until the client (or
Ctrl-C) ends it."""

from __future__ import annotations

import argparse
import signal
import sys
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
    if options.http_port is not None:
        from .http import serve_http

        await serve_http(bridge, options.http_port)
        return bridge
    else:
        from .stdio import serve_stdio

        await serve_stdio(bridge)
    return bridge


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
    chromium = OwnChromium(options) if launches_early(options) else None
    if chromium is not None:
        # An MCP client ends a server with SIGTERM when closing stdin did not: leave through
        # the finally below, which stops Chromium and removes its profile.
        signal.signal(signal.SIGTERM, _leave)
    try:
        bridge = anyio.run(run, options, chromium)
    except KeyboardInterrupt:
        return 0
    finally:
        if chromium is not None:
            chromium.close()  # the bridge closed it already, unless it never got that far
    return 1 if bridge.failed is not None else 0


def _leave(signum: int, _frame: object) -> None:
    raise SystemExit(128 + signum)
