"""The ``mcp`` command: options in, the bridge served over stdio or HTTP until the client (or
Ctrl-C) ends it."""

from __future__ import annotations

import argparse
import sys

import anyio

from .bridge import Bridge
from .options import BridgeOptions, OptionsError, add_arguments, from_namespace


async def run(options: BridgeOptions) -> Bridge:
    bridge = Bridge(options)
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
    try:
        bridge = anyio.run(run, options)
    except KeyboardInterrupt:
        return 0
    return 1 if bridge.failed is not None else 0
