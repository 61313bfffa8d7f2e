#!/usr/bin/env python3
"""Static file server for the repository (the demo, web/dist, e2e pages). Stdlib only.

    python scripts/serve.py [--port 8000] [--host 127.0.0.1] [--root .]

In tests: ``server, url = start_server(root, port=0)`` serves from a background thread on a free
port; call ``server.shutdown()`` when done.

No cross-origin isolation headers: Pyodide on the main thread does not need SharedArrayBuffer.
"""

from __future__ import annotations

import argparse
import functools
import sys
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from io import BytesIO
from pathlib import Path
from typing import Any, BinaryIO

ROOT = Path(__file__).resolve().parent.parent
LISTEN_BACKLOG = 128  # the stdlib's 5 drops connections when a page opens many at once

MIME_TYPES = {
    ".wasm": "application/wasm",  # required for WebAssembly.instantiateStreaming
    ".mjs": "text/javascript",
    ".js": "text/javascript",
    ".json": "application/json",
    ".map": "application/json",
    ".whl": "application/zip",
    ".zip": "application/zip",
    ".toml": "application/toml",
    ".py": "text/x-python; charset=utf-8",
    ".css": "text/css",
    ".html": "text/html; charset=utf-8",
    ".svg": "image/svg+xml",
}


class Handler(SimpleHTTPRequestHandler):
    extensions_map = {**SimpleHTTPRequestHandler.extensions_map, **MIME_TYPES}
    quiet = False

    def end_headers(self) -> None:
        # Revalidate every time (cheap 304s): edits to Python or wheels show up on reload.
        self.send_header("Cache-Control", "no-cache")
        super().end_headers()

    def send_head(self) -> BytesIO | BinaryIO | None:
        try:
            return super().send_head()
        except ValueError:  # a path the file system cannot name (%00, unencodable escapes)
            self.send_error(404, "File not found")
            return None

    def log_message(self, format: str, *args: object) -> None:
        if not self.quiet:
            super().log_message(format, *args)


class StaticServer(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = LISTEN_BACKLOG

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A page closed mid-transfer (a test or bench moving on) is not a server error.
        if isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            return
        super().handle_error(request, client_address)


def make_server(
    root: Path | str = ROOT, port: int = 8000, host: str = "127.0.0.1", quiet: bool = False
) -> ThreadingHTTPServer:
    handler = type("QuietHandler" if quiet else "Handler", (Handler,), {"quiet": quiet})
    return StaticServer((host, port), functools.partial(handler, directory=str(root)))


def server_url(server: ThreadingHTTPServer) -> str:
    host, port = server.server_address[:2]
    return f"http://{host!s}:{port}"


def start_server(
    root: Path | str = ROOT, port: int = 0, host: str = "127.0.0.1", quiet: bool = True
) -> tuple[ThreadingHTTPServer, str]:
    """Serve ``root`` from a daemon thread. Returns the server and its base URL (no slash)."""
    server = make_server(root, port, host, quiet)
    # A short poll interval keeps shutdown() quick (tests start and stop one server per test).
    threading.Thread(target=server.serve_forever, args=(0.05,), name="static-server", daemon=True).start()
    return server, server_url(server)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Serve the repository over HTTP.")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--root", type=Path, default=ROOT, help="directory to serve")
    args = parser.parse_args(argv)
    server = make_server(args.root, args.port, args.host)
    print(f"Serving {args.root} at {server_url(server)}/ (Ctrl+C to stop)", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
