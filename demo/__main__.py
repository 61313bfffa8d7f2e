"""Run the devices console demo: build the browser runtime, then serve the page and the API (uvicorn).

    python -m demo [--port 8000] [--host 127.0.0.1] [--db PATH | --database DSN] [--workers N]
                   [--rate-limit BURST/PER_SECOND] [--reset] [--no-build]

``--database postgresql://user@host/db`` serves from PostgreSQL (any number of workers, and
hosts); SQLite (``--db``, or ``--database sqlite:///path``) stays the zero-setup default.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

from agentsurface.server import StoreConfigError, StoreUnavailable, describe_dsn, sqlite_path, store_kind

from .server.api import DEFAULT_RATE_LIMIT
from .server.asgi import DATABASE_ENV, RATE_LIMIT_ENV, parse_rate_limit
from .server.backend import ROOT, make_demo_server
from .server.db import DEFAULT_DB_PATH, MEMORY
from .server.seed import USERS, open_seeded_store

BUILD_SCRIPT = ROOT / "scripts" / "build_web.py"


def build_web() -> int:
    """Run ``scripts/build_web.py`` (idempotent) if it exists. Returns its exit status."""
    if not BUILD_SCRIPT.exists():
        print(f"note: {BUILD_SCRIPT.relative_to(ROOT)} not found; serving without building", flush=True)
        return 0
    print("== building the offline browser runtime (web/dist)", flush=True)
    return subprocess.run([sys.executable, str(BUILD_SCRIPT)], cwd=ROOT, check=False).returncode


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="demo", description="Serve the devices console and its backend.")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--db", type=Path, default=DEFAULT_DB_PATH,
                        help=f"SQLite file, created and seeded on first run (default: {DEFAULT_DB_PATH}); "
                             "':memory:' for a throwaway one")
    parser.add_argument("--database", metavar="DSN",
                        help="the store as a DSN instead of --db: sqlite:///path or postgresql://user@host:5432/db")
    parser.add_argument("--workers", type=int, default=1,
                        help="worker processes (needs a file or PostgreSQL database; default 1)")
    parser.add_argument("--rate-limit", metavar="BURST/PER_SECOND",
                        help=f"each caller's budget (default {DEFAULT_RATE_LIMIT.burst}/{DEFAULT_RATE_LIMIT.per_second})")
    parser.add_argument("--reset", action="store_true", help="delete the database first and seed it again")
    parser.add_argument("--no-build", action="store_true", help="do not run scripts/build_web.py")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if not args.no_build:
        status = build_web()
        if status != 0:
            print(f"error: scripts/build_web.py failed (exit {status}); fix it or pass --no-build", file=sys.stderr)
            return status
    try:
        db = database_of(args)
        rate_limit = parse_rate_limit(args.rate_limit) if args.rate_limit else None
    except (StoreConfigError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.workers > 1:
        return serve_workers(args, db, rate_limit)
    try:
        server = make_demo_server(ROOT, args.port, args.host, db=db, reset=args.reset, rate_limit=rate_limit)
    except StoreUnavailable as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:
        print(f"error: cannot listen on {args.host}:{args.port}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    print(f"Devices console: {server.url}/index.html", flush=True)
    print(f"Database: {shown(db)}", flush=True)
    print("Demo tokens (add ?token=<token> to the page URL; default demo-acme-operator):", flush=True)
    for user in USERS:
        print(f"  {user.token:<24} {user.name} ({user.role}, tenant {user.tenant})", flush=True)
    print("Ctrl+C to stop.", flush=True)
    try:
        server.serve_forever()  # uvicorn stops cleanly on Ctrl+C
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


def database_of(args: argparse.Namespace) -> str | Path:
    if args.database:
        if store_kind(args.database) == "sqlite":
            return sqlite_path(args.database)
        return str(args.database)
    return MEMORY if str(args.db) == MEMORY else Path(args.db)


def shown(db: str | Path) -> str:
    """The database for the console: a DSN without its password."""
    text = str(db)
    return describe_dsn(text) if store_kind_or_none(text) == "postgresql" else text


def store_kind_or_none(text: str) -> str | None:
    try:
        return store_kind(text)
    except StoreConfigError:
        return None


def serve_workers(args: argparse.Namespace, db: str | Path, rate_limit: object) -> int:
    """Seed once here, then serve from ``args.workers`` processes sharing the database."""
    from uvicorn.supervisors import Multiprocess

    from agentsurface.server import server_config

    if str(db) == MEMORY:
        print("error: several workers need a database file or PostgreSQL, not :memory:", file=sys.stderr)
        return 2
    try:
        open_seeded_store(db, reset=args.reset).close()
    except StoreUnavailable as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    os.environ[DATABASE_ENV] = str(db)
    if args.rate_limit:
        os.environ[RATE_LIMIT_ENV] = args.rate_limit
    config = server_config("demo.server.asgi:create", factory=True, host=args.host, port=args.port, workers=args.workers,
                           lifespan="off", log_level="warning", timeout_graceful_shutdown=2)
    try:
        sock = config.bind_socket()
    except (OSError, SystemExit) as exc:
        print(f"error: cannot listen on {args.host}:{args.port}: {exc}", file=sys.stderr)
        return 1
    host, port = sock.getsockname()[:2]
    print(f"Devices console: http://{host}:{port}/index.html", flush=True)
    print(f"Database: {shown(db)} ({args.workers} workers)", flush=True)
    Multiprocess(config, sockets=[sock]).run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
