"""A static file server for page tests: serves a folder (an ``agentsurface bundle`` output, or
any folder) on a free 127.0.0.1 port in a background thread, with the content types a page's
runtime needs (``.mjs``, ``.wasm``, ``.whl``). The pytest plugin's ``static_server`` fixture
starts one per folder and stops it after the test.

Internal module: use the fixture.
"""

from __future__ import annotations

import functools
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any


class _Handler(SimpleHTTPRequestHandler):
    # What any static host sends for these; older mimetypes tables lack .mjs.
    extensions_map = {
        **SimpleHTTPRequestHandler.extensions_map,
        ".mjs": "text/javascript",
        ".js": "text/javascript",
        ".wasm": "application/wasm",
        ".whl": "application/zip",
        ".json": "application/json",
    }

    def log_message(self, format: str, *args: Any) -> None:
        pass  # quiet: a test's output is its own


class StaticServer:
    """``folder`` served at ``url`` (``http://127.0.0.1:<free port>``) until :meth:`close`."""

    def __init__(self, folder: Path) -> None:
        if not folder.is_dir():
            raise FileNotFoundError(
                f"{folder} is not a folder to serve (for a bundle: run `agentsurface bundle --out {folder.name}/` first)"
            )
        self.folder = folder
        handler = functools.partial(_Handler, directory=str(folder))
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, name="agentsurface-static", daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)
