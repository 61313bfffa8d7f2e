"""The demo's server: one Starlette app on uvicorn, one origin (so the page needs no CORS).

- ``/api/agent/...``: the library's :class:`~agentsurface.server.ProcedureServer` serving every
  procedure (``demo.server.procedures``: the devices operations and the app's own reads, such as
  ``session.describe``) and their backend manifest, with the demo's hooks (``demo.server.api``);
- any other ``/api/...``: a typed 404 (``demo.server.errors``), whatever the method;
- everything else: the page's public files only (``index.html``, ``demo/page/``, ``demo/shared/``,
  ``web/dist/``, the stylesheets and scripts directly in ``web/``), never the rest of the
  repository (this server's sources, tests, the seed with its tokens), dot-files or the database.

::

    server, url = start_demo_server(ROOT, port=0)   # tests: in-memory database, background thread
    ...
    server.shutdown(); server.server_close()
"""

from __future__ import annotations

import logging
import os
import re
import socket
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import uvicorn
from scripts.serve import LISTEN_BACKLOG, MIME_TYPES
from starlette.applications import Starlette
from starlette.datastructures import MutableHeaders
from starlette.exceptions import HTTPException
from starlette.responses import Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from agentsurface.server import ProcedureServer, RateLimit, ServerLimits, refusal_response, server_config

from .api import DEFAULT_RATE_LIMIT, AuditLog, Authenticator
from .db import MEMORY, Store, is_postgres
from .errors import route_not_found
from .passkeys import demo_passkeys, with_passkey_approvals
from .procedures import SERVED
from .seed import open_seeded_store

ROOT = Path(__file__).resolve().parents[2]
PROCEDURES_BASE = "/api/agent"
MAX_BODY_BYTES = 16 * 1024
PRIVATE_SUFFIXES = (".sqlite", ".sqlite3", ".db", "-wal", "-shm", "-journal")
# What the page loads, and nothing else: files, folders (with everything below), and the file
# suffixes allowed directly in ``web/``.
PUBLIC_FILES = frozenset({"index.html", "demo/__init__.py"})
PUBLIC_FOLDERS = (("demo", "page"), ("demo", "shared"), ("web", "dist"))
PUBLIC_WEB_SUFFIXES = (".css", ".js")

log = logging.getLogger("demo.server.backend")


def _utc_now() -> datetime:
    return datetime.now(UTC)


class SiteFiles(StaticFiles):
    """The page's public files of the repository, read-only, revalidated on every load (edits
    show up on reload); dot-files, dot-directories, ``demo/data`` and database files never."""

    def __init__(self, directory: Path, private: frozenset[Path]) -> None:
        super().__init__(directory=directory)
        self._root = directory.resolve()
        self._private = private

    async def get_response(self, path: str, scope: Scope) -> Response:
        if self._is_private(path):
            raise HTTPException(status_code=404)
        return await super().get_response(path, scope)

    def _is_private(self, path: str) -> bool:
        parts = tuple(part for part in Path(path).parts if part != ".")
        if len(parts) >= 2 and parts[-2] == "__pycache__" and parts[-1].endswith(".pyc"):
            # Bytecode (`agentsurface precompile`) is as public as the source it was compiled from.
            source = "/".join((*parts[:-2], parts[-1].split(".", 1)[0] + ".py"))
            return self._is_private(source) or not (self._root / source).is_file()
        if any(part.startswith(".") for part in parts) or parts[:2] == ("demo", "data"):
            return True
        public = (
            "/".join(parts) in PUBLIC_FILES
            or any(parts[: len(folder)] == folder and len(parts) > len(folder) for folder in PUBLIC_FOLDERS)
            or (len(parts) == 2 and parts[0] == "web" and parts[1].endswith(PUBLIC_WEB_SUFFIXES))
        )
        if not public:
            return True
        if path.endswith(PRIVATE_SUFFIXES):
            return True
        try:
            return (self._root / path).resolve() in self._private
        except (ValueError, OSError):  # a path the file system cannot name
            return True

    def file_response(self, full_path: str | os.PathLike[str], stat_result: os.stat_result, scope: Scope,
                      status_code: int = 200) -> Response:
        response = super().file_response(full_path, stat_result, scope, status_code)
        media = MIME_TYPES.get(Path(full_path).suffix.lower())
        if media is not None:
            response.headers["Content-Type"] = media
        response.headers["Cache-Control"] = "no-cache"
        return response


class UnknownApi:
    """Any ``/api/...`` path the procedure server does not own: a typed 404, whatever the method
    (an ASGI app, not a function, so its route takes every method: TRACE and PROPFIND too).
    Nothing is served there, so nothing is authenticated, counted or audited (an unknown
    procedure under ``/api/agent`` is, by the procedure server)."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await refusal_response(route_not_found())(scope, receive, send)


class ApiHeaders:
    """``/api`` answers are never cached or sniffed; a 401 names the scheme to use."""

    def __init__(self, app: ASGIApp, flush: Callable[[], None] | None = None) -> None:
        self.app = app
        self._flush = flush

    def flush_audit(self) -> None:
        """Write the counts of folded refusals now (tests, shutdown)."""
        if self._flush is not None:
            self._flush()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not str(scope.get("path", "")).startswith("/api/"):
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                headers["Cache-Control"] = "no-store"
                headers["X-Content-Type-Options"] = "nosniff"
                if message["status"] == 401:
                    headers["WWW-Authenticate"] = 'Bearer realm="devices"'
            await send(message)

        await self.app(scope, receive, send_with_headers)


def create_app(
    store: Store,
    root: Path = ROOT,
    *,
    rate_limit: RateLimit = DEFAULT_RATE_LIMIT,
    clock: Callable[[], datetime] | None = None,
    monotonic: Callable[[], float] = time.monotonic,
) -> ApiHeaders:
    """The whole demo as one ASGI app over ``store`` (already seeded)."""
    authenticate = Authenticator(store)
    audit = AuditLog(monotonic)
    now = clock if clock is not None else _utc_now
    passkeys = demo_passkeys(store.invocations)  # the passkey tables, created or migrated here
    procedures = ProcedureServer(
        # Approvals of devices.disable: a passkey assertion from every person who registered one,
        # a server-minted challenge from the others (the server decides per person).
        [*with_passkey_approvals(SERVED, passkeys), *passkeys.procedures()],
        authenticate=authenticate,
        store=store.invocations,
        rate_limit=rate_limit,
        limits=ServerLimits(max_body_bytes=MAX_BODY_BYTES),
        audit=audit.procedure_call,
        verify_presence=passkeys.verify_presence,
        clock=now,
    )
    private = frozenset() if store.path == MEMORY or is_postgres(store.path) else frozenset({Path(store.path).resolve()})
    other_api = Route("/api/{rest:path}", UnknownApi())
    other_api.path_regex = re.compile(other_api.path_regex.pattern, re.DOTALL)  # %0A too: typed 404
    app = Starlette(
        routes=[
            procedures.mount(PROCEDURES_BASE),
            other_api,
            Mount("/", SiteFiles(Path(root), private)),
        ]
    )
    app.router.redirect_slashes = False  # a redirect would build its Location from the Host header

    def flush() -> None:
        procedures.flush_refusals()
        store.run(audit.flush)

    return ApiHeaders(app, flush)


class DemoServer:
    """uvicorn serving the demo app on a socket bound (and listening) at construction."""

    def __init__(self, app: ASGIApp, store: Store, host: str, port: int, *, quiet: bool) -> None:
        self.store = store
        self.app = app
        self._socket = socket.create_server((host, port), backlog=LISTEN_BACKLOG)
        self.server_address: tuple[str, int] = self._socket.getsockname()[:2]
        # The library's safe defaults: read deadlines, a bound on connections, no proxy headers.
        config = server_config(
            app,
            log_level="warning" if quiet else "info",
            access_log=not quiet,
            lifespan="off",
            timeout_graceful_shutdown=2,
        )
        self._server = uvicorn.Server(config)
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host, port = self.server_address
        return f"http://{host}:{port}"

    def serve_forever(self) -> None:
        """Serve until interrupted (Ctrl+C in the main thread) or :meth:`shutdown`."""
        self._server.run(sockets=[self._socket])

    def start(self, timeout: float = 10.0) -> None:
        """Serve from a daemon thread; returns once uvicorn accepts connections."""
        self._thread = threading.Thread(target=self.serve_forever, name="demo-server", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + timeout
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the demo server did not start")
            time.sleep(0.01)

    def shutdown(self) -> None:
        self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=10)
            self._thread = None

    def server_close(self) -> None:
        self._socket.close()
        self.store.close()


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
    try:
        app = create_app(store, Path(root), rate_limit=rate_limit or DEFAULT_RATE_LIMIT, clock=clock)
        return DemoServer(app, store, host, port, quiet=quiet)
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
    try:
        server.start()
    except BaseException:
        server.server_close()
        raise
    return server, server.url
