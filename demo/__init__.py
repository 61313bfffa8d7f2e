"""The devices console demo, split by where its code runs.

- ``demo.page``: the console that runs in the page under Pyodide (its state, agent surface and UI).
- ``demo.server``: the real backend (Starlette on uvicorn, SQLite in WAL mode or PostgreSQL),
  built on the library's procedure server; it serves the page and is the authority for every
  domain operation.
- ``demo.shared``: what both sides import, the procedures' contracts and the names they spell the
  same way.

``python -m demo`` (or ``python scripts/demo.py``) runs the demo. Importing this package imports
nothing else, so the page never pulls in the server (``lint-imports`` holds the split).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .server.backend import start_demo_server as start_demo_server

__all__ = ["start_demo_server"]


def __getattr__(name: str) -> object:
    if name == "start_demo_server":
        from .server.backend import start_demo_server

        return start_demo_server
    raise AttributeError(f"module 'demo' has no attribute {name!r}")
