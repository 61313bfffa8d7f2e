"""One HTTP server for the demo: the devices API under ``/api/`` and the repository's static files
everywhere else, on one origin (so the page needs no CORS).

Static serving reuses ``scripts/serve.py``'s handler (MIME types, revalidation headers); this module
only adds the API routes and keeps private files (dot-directories, the database) off the wire.

    server, url = start_demo_server(ROOT, port=0)      # tests: in-memory database, background thread
    ...
    server.shutdown(); server.server_close()
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from datetime import datetime
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from io import BytesIO
from pathlib import Path
from typing import BinaryIO, Protocol

from scripts.serve import LISTEN_BACKLOG, server_url
from scripts.serve import Handler as StaticHandler

from .api import Api, ApiRequest, ApiResponse, RateLimit
from .db import MEMORY, canonical_json
from .errors import ApiError, Issue, invalid_input
from .seed import open_seeded_store

ROOT = Path(__file__).resolve().parent.parent
API_PREFIX = "/api/"
DRAIN_LIMIT = 1024 * 1024  # bodies up to this size are read and discarded after a refusal
PRIVATE_SUFFIXES = (".sqlite", ".sqlite3", ".db", "-wal", "-shm", "-journal")


class Readable(Protocol):
    def read(self, size: int, /) -> bytes: ...


class RequestBody:
    """The request body behind a Content-Length, read at most once, drained if left unread."""

    def __init__(self, stream: Readable, declared_length: int) -> None:
        self._stream = stream
        self._declared = declared_length
        self._remaining = declared_length

    @property
    def declared_length(self) -> int:
        return self._declared

    def read(self) -> bytes:
        data = self._stream.read(self._remaining) if self._remaining else b""
        self._remaining = 0
        return data

    def settle(self) -> bool:
        """Discard what was not read. False if it is too large to drain (close the connection)."""
        if self._remaining > DRAIN_LIMIT:
            return False
        while self._remaining:
            chunk = self._stream.read(min(self._remaining, 64 * 1024))
            if not chunk:
                return False
            self._remaining -= len(chunk)
        return True


class DemoServer(ThreadingHTTPServer):
    """A threaded HTTP server that owns the API (and through it the database)."""

    daemon_threads = True
    request_queue_size = LISTEN_BACKLOG

    def __init__(self, address: tuple[str, int], handler: Callable[..., DemoHandler], api: Api,
                 private_files: frozenset[Path] = frozenset()) -> None:
        self.api = api
        self.private_files = private_files
        super().__init__(address, handler)

    @property
    def url(self) -> str:
        return server_url(self)

    def server_close(self) -> None:
        super().server_close()
        self.api.store.close()


class DemoHandler(StaticHandler):
    """Static files from the repository plus the JSON API."""

    server: DemoServer
    timeout = 30  # seconds a client may stall mid-request
    _api_response = False

    # ---------------------------------------------------------------- dispatch
    def do_GET(self) -> None:
        if self._is_api():
            self._serve_api()
        else:
            super().do_GET()

    def do_HEAD(self) -> None:
        if self._is_api():
            self._serve_api()
        else:
            super().do_HEAD()

    def do_POST(self) -> None:
        self._api_only()

    def do_PUT(self) -> None:
        self._api_only()

    def do_PATCH(self) -> None:
        self._api_only()

    def do_DELETE(self) -> None:
        self._api_only()

    def _api_only(self) -> None:
        if self._is_api():
            self._serve_api()
        else:
            self.send_error(405, "Static files are read-only")

    def _is_api(self) -> bool:
        path = self.path.split("?", 1)[0]
        return path == API_PREFIX.rstrip("/") or path.startswith(API_PREFIX)

    # ---------------------------------------------------------------- API
    def _serve_api(self) -> None:
        body, framing_error = self._body()
        if framing_error is not None:
            self.close_connection = True
            self._send_json(ApiResponse(framing_error.status, framing_error.body(), framing_error.headers))
            return
        headers = {name.lower(): value for name, value in self.headers.items()}
        request = ApiRequest(self.command, self.path, headers, self.client_address[0], body)
        response = self.server.api.handle(request)
        if not body.settle():
            self.close_connection = True
        self._send_json(response)

    def _body(self) -> tuple[RequestBody, ApiError | None]:
        empty = RequestBody(BytesIO(), 0)
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            return empty, invalid_input([Issue("/", "send the body with a Content-Length header")], 411)
        raw = self.headers.get("Content-Length")
        if raw is None:
            return empty, None
        raw = raw.strip()
        if not (raw.isascii() and raw.isdigit() and len(raw) <= 18):
            return empty, invalid_input([Issue("/", "the Content-Length header is invalid")])
        return RequestBody(self.rfile, int(raw)), None

    def _send_json(self, response: ApiResponse) -> None:
        data = canonical_json(response.payload).encode("utf-8")
        self._api_response = True
        try:
            self.send_response(response.status)
            self.send_header("Content-Type", "application/json; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            self.send_header("Cache-Control", "no-store")
            self.send_header("X-Content-Type-Options", "nosniff")
            for name, value in response.headers.items():
                self.send_header(name, value)
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(data)
        finally:
            self._api_response = False

    def end_headers(self) -> None:
        if self._api_response:  # API responses say no-store; skip the static handler's no-cache
            SimpleHTTPRequestHandler.end_headers(self)
        else:
            super().end_headers()

    # ---------------------------------------------------------------- static files
    def send_head(self) -> BytesIO | BinaryIO | None:
        if self._is_private():
            self.send_error(404, "File not found")
            return None
        return super().send_head()

    def _is_private(self) -> bool:
        """Dot-files and dot-directories (.git, .venv, ...) and database files are never served,
        nor paths the file system cannot name (NUL bytes, unencodable escapes)."""
        target = Path(self.translate_path(self.path))
        try:
            parts = target.relative_to(self.directory).parts
            if any(part.startswith(".") for part in parts) or parts[:2] == ("demo", "data"):
                return True
            return target.name.endswith(PRIVATE_SUFFIXES) or target.resolve() in self.server.private_files
        except (ValueError, OSError):
            return True


def make_demo_server(
    root: Path | str = ROOT,
    port: int = 8000,
    host: str = "127.0.0.1",
    *,
    db: Path | str = MEMORY,
    reset: bool = False,
    quiet: bool = False,
    rate_limit: RateLimit | None = None,
    clock: Callable[[], datetime] | None = None,
) -> DemoServer:
    """Open (and seed on first use) the database and bind the server; call ``serve_forever()``.

    ``clock`` (default: the current time) also dates the seeded data.
    """
    store = open_seeded_store(db, reset=reset, now=None if clock is None else clock())
    api = Api(store, rate_limit=rate_limit) if clock is None else Api(store, rate_limit=rate_limit, clock=clock)
    handler = type("QuietDemoHandler" if quiet else "DemoHandler", (DemoHandler,), {"quiet": quiet})
    private = frozenset() if str(db) == MEMORY else frozenset({Path(db).resolve()})
    try:
        return DemoServer((host, port), functools.partial(handler, directory=str(root)), api, private)
    except BaseException:
        store.close()
        raise


def start_demo_server(
    root: Path | str = ROOT,
    port: int = 0,
    db: Path | str = MEMORY,
    host: str = "127.0.0.1",
    *,
    reset: bool = False,
    quiet: bool = True,
    rate_limit: RateLimit | None = None,
    clock: Callable[[], datetime] | None = None,
) -> tuple[DemoServer, str]:
    """Serve the API and ``root`` from a daemon thread. Returns the server and its base URL (no slash).

    The default database is a fresh, seeded in-memory one. Stop with ``server.shutdown()`` then
    ``server.server_close()`` (which also closes the database).
    """
    server = make_demo_server(root, port, host, db=db, reset=reset, quiet=quiet, rate_limit=rate_limit, clock=clock)
    # A short poll interval keeps shutdown() quick (tests start and stop one server per test).
    threading.Thread(target=server.serve_forever, args=(0.05,), name="demo-server", daemon=True).start()
    return server, server.url
