"""What ``agentsurface mcp`` was asked to do, checked before anything starts."""

from __future__ import annotations

import argparse
import math
import shutil
from urllib.parse import urlsplit

from .._core.errors import AgentSurfaceError
from .._core.records import record
from ..adapters.relay_protocol import DEFAULT_PORT as DEFAULT_RELAY_PORT

# Chromium's WebMCP testing API (document.modelContext.getTools/executeTool) is what the bridge
# drives; without the flag, --polyfill injects the vendored polyfill instead.
WEBMCP_FEATURES = "WebMCP,WebMCPTesting"
DEFAULT_READY_TIMEOUT = 20.0

# While a call runs (a consequential one waits for the person's approval), a client that sent a
# progress token hears progress this often, which keeps clients that reset their timeout on
# progress waiting; past the bound the call answers TIMEOUT and is cancelled in the page.
PROGRESS_INTERVAL_S = 5.0
WAIT_TIMEOUT_S = 300.0


class OptionsError(AgentSurfaceError, ValueError):
    """A bad command line: said in one sentence, exit status 2."""


@record
class BridgeOptions:
    url: str
    browser: str | None = None
    cdp: str | None = None
    headless: bool = False
    polyfill: bool = False
    allow_origins: tuple[str, ...] = ()
    http_port: int | None = None
    host: str = "127.0.0.1"
    # --relay: tabs of the person's own browser connect to a loopback WebSocket (no browser here).
    relay: bool = False
    relay_port: int = DEFAULT_RELAY_PORT
    pairings: str | None = None  # the pairings file (default: the platform's config folder)
    # How long a client's first tools/list (or a call of a tool not listed yet) waits for the
    # page to list its first tool: a page boots Pyodide for seconds first.
    ready_timeout: float = DEFAULT_READY_TIMEOUT
    progress_interval: float = PROGRESS_INTERVAL_S  # 0: no progress notifications
    wait_timeout: float = WAIT_TIMEOUT_S  # the longest a call may run, waiting for the person

    @property
    def origin(self) -> str:
        return origin_of(self.url)

    @property
    def origins(self) -> frozenset[str]:
        """The origins whose tools are exposed: URL's and the ones --allow-origin names."""
        return frozenset({self.origin, *self.allow_origins})


def origin_of(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}".lower()


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "url", nargs="?", help="the page whose WebMCP tools to serve, e.g. http://127.0.0.1:8000/index.html"
    )
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--browser", metavar="PATH", help="the Chromium to launch (default: chromium on PATH)")
    where.add_argument(
        "--cdp", metavar="URL", help="attach to a running Chromium instead, e.g. http://127.0.0.1:9222"
    )
    parser.add_argument("--headless", action="store_true", help="launch Chromium without a window (CI)")
    parser.add_argument(
        "--polyfill",
        action="store_true",
        help="inject the vendored WebMCP polyfill (a Chromium without the WebMCP flag)",
    )
    parser.add_argument(
        "--ready-timeout",
        metavar="SECONDS",
        type=float,
        default=DEFAULT_READY_TIMEOUT,
        help="how long a client's first tools/list waits for the page to list its first tool while it "
        f"boots (default {DEFAULT_READY_TIMEOUT:g}; 0: answer at once)",
    )
    parser.add_argument(
        "--allow-origin",
        metavar="ORIGIN",
        action="append",
        default=[],
        help="also expose tools of this origin (repeatable); by default only URL's origin. With --relay: "
        "this origin's tabs connect without pairing",
    )
    relay = parser.add_argument_group("relay (tabs of your own browser, no CDP)")
    relay.add_argument(
        "--relay",
        action="store_true",
        help="instead of opening URL, serve the tools of tabs that opt in (connect_relay) over a loopback WebSocket",
    )
    relay.add_argument(
        "--relay-port",
        metavar="PORT",
        type=int,
        default=DEFAULT_RELAY_PORT,
        help=f"the relay's port on 127.0.0.1 (default {DEFAULT_RELAY_PORT})",
    )
    relay.add_argument(
        "--relay-pairings",
        metavar="FILE",
        help="the file of paired origins and their secrets (default: relay-pairings.json in your config folder)",
    )
    parser.add_argument(
        "--progress-interval",
        metavar="SECONDS",
        type=float,
        default=PROGRESS_INTERVAL_S,
        help="while a call runs (waiting for the person's approval), send MCP progress this often to a "
        f"client that asked for it (default {PROGRESS_INTERVAL_S:g}; 0: never)",
    )
    parser.add_argument(
        "--wait-timeout",
        metavar="SECONDS",
        type=float,
        default=WAIT_TIMEOUT_S,
        help="a call still running after this long answers TIMEOUT and is cancelled in the page, its "
        f"confirmation dialog closed (default {WAIT_TIMEOUT_S:g})",
    )
    parser.add_argument(
        "--http",
        metavar="PORT",
        type=int,
        help="serve Streamable HTTP on 127.0.0.1:PORT (0: any free port) with a bearer token, instead of stdio",
    )


def from_namespace(args: argparse.Namespace) -> BridgeOptions:
    if getattr(args, "relay", False):
        return _relay_options(args)
    if args.url is None:
        raise OptionsError("give the page's URL, or --relay to serve the tabs that connect to the relay")
    url = str(args.url)
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https", "file") or (parts.scheme != "file" and not parts.netloc):
        raise OptionsError(
            f"URL must be an http(s) address such as http://127.0.0.1:8000/index.html, not {url!r}"
        )
    allowed = _allowed_origins(args.allow_origin)
    interval, timeout = _waiting(args)
    if args.http is not None and not 0 <= args.http <= 65535:
        raise OptionsError(f"--http takes a port number (0-65535), not {args.http}")
    ready_timeout = float(getattr(args, "ready_timeout", DEFAULT_READY_TIMEOUT))
    if not 0 <= ready_timeout <= 600:
        raise OptionsError(f"--ready-timeout takes a number of seconds from 0 to 600, not {ready_timeout:g}")
    browser = args.browser
    if args.cdp is None:
        given = browser or "chromium"
        browser = shutil.which(given)
        if browser is None:
            raise OptionsError(
                f"no browser {given!r} (not a program on PATH nor an executable file): install Chromium, or give --browser PATH or --cdp URL"
            )
    elif urlsplit(args.cdp).scheme not in ("http", "https", "ws", "wss"):
        raise OptionsError(
            f"--cdp takes Chromium's DevTools address such as http://127.0.0.1:9222, not {args.cdp!r}"
        )
    return BridgeOptions(
        url=url,
        browser=browser,
        cdp=args.cdp,
        headless=bool(args.headless),
        polyfill=bool(args.polyfill),
        allow_origins=tuple(allowed),
        http_port=args.http,
        ready_timeout=ready_timeout,
        progress_interval=interval,
        wait_timeout=timeout,
    )


def _waiting(args: argparse.Namespace) -> tuple[float, float]:
    interval = float(getattr(args, "progress_interval", PROGRESS_INTERVAL_S))
    timeout = float(getattr(args, "wait_timeout", WAIT_TIMEOUT_S))
    if not (math.isfinite(interval) and 0 <= interval <= 3600):
        raise OptionsError(f"--progress-interval takes seconds between 0 (never) and 3600, not {interval:g}")
    if not (math.isfinite(timeout) and 1 <= timeout <= 86400):
        raise OptionsError(f"--wait-timeout takes seconds between 1 and 86400, not {timeout:g}")
    return interval, timeout


def _allowed_origins(given: list[str]) -> list[str]:
    allowed = []
    for value in given:
        parts = urlsplit(value)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise OptionsError(f"--allow-origin takes an origin such as https://example.com, not {value!r}")
        allowed.append(origin_of(value))
    return allowed


def _relay_options(args: argparse.Namespace) -> BridgeOptions:
    if args.url is not None:
        raise OptionsError("--relay serves the tabs that connect to it: give no URL")
    for name in ("browser", "cdp", "polyfill", "headless"):
        if getattr(args, name, None):
            raise OptionsError(f"--relay launches no browser: --{name} does not apply")
    if not 0 <= args.relay_port <= 65535:
        raise OptionsError(f"--relay-port takes a port number (0-65535), not {args.relay_port}")
    if args.http is not None and not 0 <= args.http <= 65535:
        raise OptionsError(f"--http takes a port number (0-65535), not {args.http}")
    interval, timeout = _waiting(args)
    return BridgeOptions(
        url="",
        allow_origins=tuple(_allowed_origins(args.allow_origin)),
        http_port=args.http,
        relay=True,
        relay_port=args.relay_port,
        pairings=args.relay_pairings,
        progress_interval=interval,
        wait_timeout=timeout,
    )
