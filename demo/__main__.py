"""Run the devices console demo: build the browser runtime, then serve the page and the API (uvicorn).

    python -m demo [--port 8000] [--host 127.0.0.1] [--db PATH] [--reset] [--no-build]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

from .backend import ROOT, make_demo_server
from .db import DEFAULT_DB_PATH
from .seed import USERS

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
    db = ":memory:" if str(args.db) == ":memory:" else args.db
    try:
        server = make_demo_server(ROOT, args.port, args.host, db=db, reset=args.reset)
    except OSError as exc:
        print(f"error: cannot listen on {args.host}:{args.port}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    print(f"Devices console: {server.url}/index.html", flush=True)
    print(f"Database: {db}", flush=True)
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


if __name__ == "__main__":
    sys.exit(main())
